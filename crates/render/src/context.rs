//! The template's variables: a conversation checked and turned into the context a
//! template renders with (`messages`, `tools`, `documents`, `add_generation_prompt` and
//! the extra variables).

use jiff::civil::DateTime;
use minijinja::value::Value;

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

impl CompiledTemplate {
    /// Validates the conversation and builds the template's variables.
    pub(crate) fn input(&self, conversation: &Conversation) -> Result<Input, RenderError> {
        // In `apply_chat_template`'s order, with its words.
        if conversation.messages.is_empty() {
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
        let clock = conversation
            .clock
            .unwrap_or_else(|| jiff::Zoned::now().datetime());
        let Some(field) = continuing else {
            let context = build_context(
                conversation,
                message_values(&conversation.messages),
                conversation.add_generation_prompt,
            )?;
            return Ok(Input {
                context,
                clock,
                continued: None,
            });
        };
        let mut messages = effective_messages(&conversation.messages);
        let continued = continuation::tag_final_message(&mut messages, field, &self.inner.source)?;
        Ok(Input {
            context: build_context(
                conversation,
                message_values(&messages),
                conversation.add_generation_prompt,
            )?,
            clock,
            continued: Some(continued),
        })
    }
}

/// Messages as transformers hands them to the template, as template values.
fn message_values(messages: &[serde_json::Value]) -> Value {
    messages.iter().map(conversation::message_value).collect()
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
