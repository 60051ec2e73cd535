//! Renders for the inspector, which renders one conversation hundreds of times: its
//! prefixes (the first `k` messages, with its tools and variables but without
//! generation prompt or continuation) and copies with one value changed. The messages
//! can be converted to template values once ([`PreparedMessages`]) instead of once per
//! render; conversion is about a fifth of a render's time on 1,000 messages.

use minijinja::value::Value;

use super::{conversation, CancelToken, CompiledTemplate, Conversation, RenderError};

/// A conversation's messages converted to template values once, for many prefix
/// renders.
#[derive(Debug, Clone)]
pub struct PreparedMessages {
    values: Vec<Value>,
}

impl PreparedMessages {
    /// Converts `conversation`'s messages (as transformers prepares them).
    pub fn new(conversation: &Conversation) -> Self {
        PreparedMessages {
            values: conversation
                .messages
                .iter()
                .map(conversation::message_value)
                .collect(),
        }
    }

    /// Converts `messages` (as transformers prepares them).
    pub fn of_messages<'m>(messages: impl IntoIterator<Item = &'m serde_json::Value>) -> Self {
        PreparedMessages {
            values: messages
                .into_iter()
                .map(conversation::message_value)
                .collect(),
        }
    }

    /// The same messages with message `index` replaced by `message` (converted anew;
    /// the others are shared).
    pub fn replaced(&self, index: usize, message: &serde_json::Value) -> Self {
        let mut values = self.values.clone();
        if let Some(slot) = values.get_mut(index) {
            *slot = conversation::message_value(message);
        }
        PreparedMessages { values }
    }

    /// Replaces message `index` by `message`, converted (no change when there is no
    /// such message): the worker's way of taking in one edited message.
    pub fn set(&mut self, index: usize, message: &serde_json::Value) {
        if let Some(slot) = self.values.get_mut(index) {
            *slot = conversation::message_value(message);
        }
    }

    /// The number of messages.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl CompiledTemplate {
    /// Renders the first `count` messages of `conversation` (none at all is allowed,
    /// unlike in transformers) with its tools and variables, without generation prompt
    /// or continuation.
    pub fn render_prefix(
        &self,
        conversation: &Conversation,
        count: usize,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        let count = count.min(conversation.messages.len());
        let messages = conversation.messages[..count]
            .iter()
            .map(conversation::message_value)
            .collect();
        self.render_values(conversation, (messages, count), false, cancel)
    }

    /// [`CompiledTemplate::render_prefix`] with the messages converted beforehand;
    /// `prepared` must come from `conversation`.
    pub fn render_prepared_prefix(
        &self,
        conversation: &Conversation,
        prepared: &PreparedMessages,
        count: usize,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        let count = count.min(prepared.values.len());
        let messages = Value::from(prepared.values[..count].to_vec());
        self.render_values(conversation, (messages, count), false, cancel)
    }

    /// [`CompiledTemplate::render_cancellable`] with the messages converted beforehand
    /// (`prepared` may differ from `conversation`'s messages: the inspector renders
    /// changed copies). A conversation that continues its final message is rendered
    /// from its own messages, which the continuation tags.
    pub fn render_prepared(
        &self,
        conversation: &Conversation,
        prepared: &PreparedMessages,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        if conversation.continue_final_message.field().is_some() || prepared.is_empty() {
            return self.render_cancellable(conversation, cancel);
        }
        let messages = Value::from(prepared.values.clone());
        let count = prepared.values.len();
        self.render_values(
            conversation,
            (messages, count),
            conversation.add_generation_prompt,
            cancel,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use serde_json::json;

    #[test]
    fn prepared_and_plain_prefixes_render_the_same() {
        let template = CompiledTemplate::compile(
            "{{ messages | length }}{% for m in messages %}<{{ m.role }}>{{ m.thinking }}{{ m.content }}{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let conversation = Conversation {
            messages: vec![
                json!({"role": "user", "content": "a"}),
                json!({"role": "assistant", "content": "b", "reasoning_content": "r"}),
            ],
            ..Conversation::default()
        };
        let prepared = PreparedMessages::new(&conversation);
        let cancel = CancelToken::new();
        for count in 0..=2 {
            let plain = template
                .render_prefix(&conversation, count, &cancel)
                .unwrap();
            let fast = template
                .render_prepared_prefix(&conversation, &prepared, count, &cancel)
                .unwrap();
            assert_eq!(plain, fast);
        }
        assert_eq!(
            template.render_prefix(&conversation, 2, &cancel).unwrap(),
            "2<user>a<assistant>rb"
        );
        let changed = prepared.replaced(0, &json!({"role": "user", "content": "z"}));
        assert_eq!(
            template
                .render_prepared(&conversation, &changed, &cancel)
                .unwrap(),
            "2<user>z<assistant>rb"
        );
    }
}
