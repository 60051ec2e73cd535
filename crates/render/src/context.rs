//! The template's variables: a conversation checked and turned into the context a
//! template renders with (`messages`, `tools`, `documents`, `add_generation_prompt` and
//! the extra variables).

use std::sync::{Arc, Weak};

use jiff::civil::DateTime;
use minijinja::value::Value;
use serde_json::{Map, Value as Json};

use crate::data::{self, json_to_value};
use crate::none::python_none;
use crate::{
    continuation, conversation, effective_messages, CompiledTemplate, Conversation, RenderError,
};

/// A conversation turned into what the template is rendered with.
pub(crate) struct Input {
    pub(crate) context: Value,
    pub(crate) clock: DateTime,
    /// The text being continued (`continue_final_message`), to cut the prompt at.
    pub(crate) continued: Option<String>,
}

/// Where a render's messages come from: the conversation's own, objects borrowed from
/// their owner (a session's messages, see [`ConversationInput`](crate::ConversationInput)),
/// or the conversation's own taken from it, each freed once converted.
pub(crate) enum MessageSource<'a> {
    /// Borrowed JSON messages.
    Json(&'a [Json]),
    /// Borrowed message objects.
    Objects(&'a [&'a Map<String, Json>]),
    /// Messages owned by nothing else.
    Owned(Vec<Json>),
}

impl MessageSource<'_> {
    fn len(&self) -> usize {
        match self {
            MessageSource::Json(messages) => messages.len(),
            MessageSource::Objects(messages) => messages.len(),
            MessageSource::Owned(messages) => messages.len(),
        }
    }

    /// Every message as a template value (owned messages are freed as they go).
    fn values_all(self) -> Vec<Value> {
        match self {
            MessageSource::Json(messages) => {
                messages.iter().map(conversation::message_value).collect()
            }
            MessageSource::Objects(messages) => messages
                .iter()
                .map(|fields| conversation::object_value(fields))
                .collect(),
            MessageSource::Owned(messages) => messages
                .into_iter()
                .map(|message| conversation::message_value(&message))
                .collect(),
        }
    }

    /// Every message but the final one as a template value, and the final one as JSON
    /// (to be tagged for `continue_final_message`). There is at least one message.
    fn values_but_last(self) -> (Vec<Value>, Json) {
        match self {
            MessageSource::Json(messages) => {
                let (last, rest) = messages.split_last().expect("not empty");
                (MessageSource::Json(rest).values_all(), last.clone())
            }
            MessageSource::Objects(messages) => {
                let (last, rest) = messages.split_last().expect("not empty");
                let last = Json::Object((*last).clone());
                (MessageSource::Objects(rest).values_all(), last)
            }
            MessageSource::Owned(mut messages) => {
                let last = messages.pop().expect("not empty");
                (MessageSource::Owned(messages).values_all(), last)
            }
        }
    }
}

/// The template values of the last shared conversation a template rendered, kept for
/// its next render of the same conversation (see [`CompiledTemplate::shared_input`]).
pub(crate) struct Converted {
    /// Which conversation: held weakly, which also keeps it from changing (see
    /// [`CompiledTemplate::shared_input`]).
    conversation: Weak<Conversation>,
    context: Value,
    continued: Option<String>,
}

impl CompiledTemplate {
    /// [`CompiledTemplate::input`] of a conversation shared with the caller, whose
    /// template values are kept for the next render of the same conversation: a
    /// caller that renders one conversation again and again (`bench`, a fixture's
    /// repeated checks) converts its messages once, as the app converts each message
    /// once and only the edited one again.
    ///
    /// Why reuse is safe: the values are immutable (a template cannot change a dict or
    /// a list), they depend only on the conversation and this template, and the
    /// conversation cannot change while they are kept: the kept `Weak` makes
    /// `Arc::get_mut` refuse and `Arc::make_mut` copy, so any changed conversation is
    /// another allocation, and the allocation cannot be reused by another conversation
    /// while the `Weak` holds it. The clock is not kept: without a fixed clock each
    /// render reads the time, as before.
    pub(crate) fn shared_input(
        &self,
        conversation: &Arc<Conversation>,
    ) -> Result<Input, RenderError> {
        let mut kept = self.inner.converted.lock().ok();
        if let Some(Some(converted)) = kept.as_deref() {
            if std::ptr::eq(converted.conversation.as_ptr(), Arc::as_ptr(conversation)) {
                return Ok(Input {
                    context: converted.context.clone(),
                    clock: render_clock(conversation),
                    continued: converted.continued.clone(),
                });
            }
        }
        let input = self.input(conversation)?;
        if let Some(kept) = kept.as_deref_mut() {
            *kept = Some(Converted {
                conversation: Arc::downgrade(conversation),
                context: input.context.clone(),
                continued: input.continued.clone(),
            });
        }
        Ok(input)
    }

    /// Validates the conversation and builds the template's variables.
    pub(crate) fn input(&self, conversation: &Conversation) -> Result<Input, RenderError> {
        self.input_from(conversation, MessageSource::Json(&conversation.messages))
    }

    /// [`CompiledTemplate::input`] with `conversation`'s settings and the messages of
    /// `messages` (the conversation's own are not read).
    pub(crate) fn input_from(
        &self,
        conversation: &Conversation,
        messages: MessageSource<'_>,
    ) -> Result<Input, RenderError> {
        // In `apply_chat_template`'s order, with its words.
        if messages.len() == 0 {
            return Err(RenderError::input(
                "Cannot apply chat template to an empty conversation. Provide at least one message.",
            ));
        }
        let continuing = conversation.continue_final_message.field();
        if continuing.is_some() && conversation.add_generation_prompt {
            return Err(RenderError::input(
                "continue_final_message and add_generation_prompt are not compatible. Use \
                 continue_final_message when you want the model to continue the final message, \
                 and add_generation_prompt when you want to add a header that will prompt it to \
                 start a new assistant message instead.",
            ));
        }
        let clock = render_clock(conversation);
        let Some(field) = continuing else {
            let values = Value::from(messages.values_all());
            let context = build_context(conversation, values, conversation.add_generation_prompt)?;
            return Ok(Input {
                context,
                clock,
                continued: None,
            });
        };
        let (mut values, last) = messages.values_but_last();
        // Only the final message is tagged: it alone is copied.
        let mut last = effective_messages(std::slice::from_ref(&last));
        let continued = continuation::tag_final_message(&mut last, field, &self.inner.source)?;
        values.push(conversation::message_value(&last[0]));
        let values = Value::from(values);
        Ok(Input {
            context: build_context(conversation, values, conversation.add_generation_prompt)?,
            clock,
            continued: Some(continued),
        })
    }
}

/// A render's "now": the conversation's fixed clock, else the local time when the
/// render starts.
pub(crate) fn render_clock(conversation: &Conversation) -> DateTime {
    conversation
        .clock
        .unwrap_or_else(|| jiff::Zoned::now().datetime())
}

/// The variables the template sees: `messages`, `tools`, `documents`,
/// `add_generation_prompt`, then every extra variable (bos/eos tokens included).
pub(crate) fn build_context(
    conversation: &Conversation,
    messages: Value,
    add_generation_prompt: bool,
) -> Result<Value, RenderError> {
    let reserved = ["messages", "tools", "documents", "add_generation_prompt"];
    if let Some(clash) = conversation
        .variables
        .keys()
        .find(|key| reserved.contains(&key.as_str()))
    {
        return Err(RenderError::input(format!(
            "variable {clash:?} is set by chatplate itself; edit it in the conversation instead"
        )));
    }
    let optional_list = |list: &Option<Vec<serde_json::Value>>| match list {
        Some(items) => items.iter().map(json_to_value).collect(),
        None => python_none(),
    };
    let mut pairs: Vec<(Value, Value)> = vec![
        ("messages".into(), messages),
        ("tools".into(), optional_list(&conversation.tools)),
        ("documents".into(), optional_list(&conversation.documents)),
        (
            "add_generation_prompt".into(),
            Value::from(add_generation_prompt),
        ),
    ];
    for (key, value) in &conversation.variables {
        pairs.push((Value::from(key.as_str()), json_to_value(value)));
    }
    Ok(data::dict(pairs))
}
