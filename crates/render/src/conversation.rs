//! What a template is rendered with, and transformers' preprocessing of it.
//!
//! `apply_chat_template` does three things to the conversation before the template sees
//! it, and chatplate mirrors each (see `transformers.utils.chat_template_utils`):
//! top-level message keys whose value is `None` are dropped; reasoning given as
//! `reasoning_content`, `thinking` or `reasoning` is aliased under `thinking` and
//! `reasoning_content`; and `continue_final_message` tags the final message so the
//! rendered prompt can be cut where that message ends.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

/// The reasoning field names, in the order transformers looks for them.
pub(super) const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// The marker transformers appends to the message being continued.
pub const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// Everything a chat template is rendered with. More settings may be added: build one
/// with [`Conversation::new`] and the `with_` methods.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Conversation {
    /// The messages, in OpenAI/Hugging Face form.
    pub messages: Vec<Json>,
    /// Tool definitions; `None` renders as Python's `tools=None`.
    pub tools: Option<Vec<Json>>,
    /// Retrieval documents; `None` renders as `documents=None`.
    pub documents: Option<Vec<Json>>,
    /// Whether the template should open an assistant turn at the end.
    pub add_generation_prompt: bool,
    /// Continue the final message instead of closing it.
    pub continue_final_message: ContinueFinal,
    /// Extra template variables (`bos_token`, `enable_thinking`, ...).
    pub variables: Map<String, Json>,
    /// The fixed "now" for `strftime_now`; `None` uses the local clock.
    pub clock: Option<jiff::civil::DateTime>,
}

impl Conversation {
    /// A conversation of `messages`: no tools or documents, no generation prompt, the
    /// final message closed, no extra variables, the local clock.
    pub fn new(messages: Vec<Json>) -> Self {
        Conversation {
            messages,
            ..Conversation::default()
        }
    }

    /// With tool definitions (`None`: Python's `tools=None`).
    pub fn with_tools(mut self, tools: Option<Vec<Json>>) -> Self {
        self.tools = tools;
        self
    }

    /// With retrieval documents (`None`: `documents=None`).
    pub fn with_documents(mut self, documents: Option<Vec<Json>>) -> Self {
        self.documents = documents;
        self
    }

    /// With or without the assistant turn opened at the end.
    pub fn with_generation_prompt(mut self, add_generation_prompt: bool) -> Self {
        self.add_generation_prompt = add_generation_prompt;
        self
    }

    /// Continuing the final message (or not).
    pub fn with_continue_final(mut self, continue_final_message: ContinueFinal) -> Self {
        self.continue_final_message = continue_final_message;
        self
    }

    /// With extra template variables (`bos_token`, `enable_thinking`, ...).
    pub fn with_variables(mut self, variables: Map<String, Json>) -> Self {
        self.variables = variables;
        self
    }

    /// With a fixed "now" for `strftime_now` (`None`: the local clock).
    pub fn with_clock(mut self, clock: Option<jiff::civil::DateTime>) -> Self {
        self.clock = clock;
        self
    }

    /// The same settings (tools, documents, variables, clock, ...) without messages: for
    /// rendering converted messages ([`PreparedMessages`](super::PreparedMessages)) with
    /// changed settings, without copying the messages too.
    pub fn settings_only(&self) -> Self {
        Conversation {
            messages: Vec::new(),
            tools: self.tools.clone(),
            documents: self.documents.clone(),
            add_generation_prompt: self.add_generation_prompt,
            continue_final_message: self.continue_final_message.clone(),
            variables: self.variables.clone(),
            clock: self.clock,
        }
    }

    /// Its input items: messages, tools and documents, what a render's step budget
    /// and deadline grow with ([`Limits::step_budget`](super::Limits::step_budget),
    /// [`Limits::deadline_for`](super::Limits::deadline_for)).
    pub fn items(&self) -> usize {
        self.messages.len()
            + self.tools.as_ref().map_or(0, Vec::len)
            + self.documents.as_ref().map_or(0, Vec::len)
    }
}

/// A conversation handed to a render on a render thread
/// ([`CompiledTemplate::render_controlled`](super::CompiledTemplate::render_controlled)
/// and its kin): borrowed, the caller turns it into template values and the render
/// thread reads them; owned or shared, the render thread builds the values itself, in
/// the cache of the core that reads them (about 5% of a 1,000-message render). Pass an
/// owned conversation you no longer need (its messages are freed as they are
/// converted), an `Arc` to render one several times, or a reference rather than copy
/// one; a conversation whose messages live elsewhere (a session's) goes in parts, with
/// no copy of them at all.
#[derive(Debug, Clone)]
pub enum ConversationInput<'a> {
    /// The caller's conversation, turned into values on the caller's thread.
    Borrowed(&'a Conversation),
    /// A conversation the render thread turns into values.
    Shared(Arc<Conversation>),
    /// The settings of a conversation (its own `messages` are not read) and its
    /// messages, borrowed where they are kept, turned into values on the caller's
    /// thread.
    Parts {
        /// Tools, documents, variables and the other settings.
        settings: &'a Conversation,
        /// The messages, as JSON objects.
        messages: Vec<&'a Map<String, Json>>,
    },
}

impl ConversationInput<'_> {
    /// The conversation's settings (and, unless given in parts, its messages).
    pub fn conversation(&self) -> &Conversation {
        match self {
            ConversationInput::Borrowed(conversation) => conversation,
            ConversationInput::Shared(conversation) => conversation,
            ConversationInput::Parts { settings, .. } => settings,
        }
    }

    /// Its input items: messages, tools and documents (see [`Conversation::items`]).
    pub fn items(&self) -> usize {
        match self {
            ConversationInput::Parts { settings, messages } => {
                settings.items() - settings.messages.len() + messages.len()
            }
            other => other.conversation().items(),
        }
    }
}

impl<'a> From<&'a Conversation> for ConversationInput<'a> {
    fn from(conversation: &'a Conversation) -> Self {
        ConversationInput::Borrowed(conversation)
    }
}

impl From<Conversation> for ConversationInput<'_> {
    fn from(conversation: Conversation) -> Self {
        ConversationInput::Shared(Arc::new(conversation))
    }
}

impl From<Arc<Conversation>> for ConversationInput<'_> {
    fn from(conversation: Arc<Conversation>) -> Self {
        ConversationInput::Shared(conversation)
    }
}

/// transformers' `continue_final_message`: off, on for `content`, or a named field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ContinueFinal {
    /// Render the final message closed, as usual.
    #[default]
    Off,
    /// Continue the final message's given field (transformers' `True` means `content`).
    Field(String),
}

impl ContinueFinal {
    /// `continue_final_message=True`.
    pub fn content() -> Self {
        ContinueFinal::Field("content".into())
    }

    /// The field being continued, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            ContinueFinal::Off => None,
            ContinueFinal::Field(name) => Some(name),
        }
    }
}

/// Messages exactly as the template will see them: `None` keys dropped and reasoning aliased.
pub fn effective_messages(messages: &[Json]) -> Vec<Json> {
    messages.iter().map(effective_message).collect()
}

fn effective_message(message: &Json) -> Json {
    let Json::Object(fields) = message else {
        return message.clone();
    };
    let fields: Map<String, Json> = fields
        .iter()
        .filter(|(_, value)| !value.is_null())
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Json::Object(alias_reasoning(fields))
}

/// `{"thinking": r, **message, "reasoning_content": r}` when the message has reasoning.
fn alias_reasoning(fields: Map<String, Json>) -> Map<String, Json> {
    let reasoning = REASONING_FIELDS
        .iter()
        .find_map(|key| fields.get(*key).filter(|v| !v.is_null()).cloned());
    let Some(reasoning) = reasoning else {
        return fields;
    };
    let mut aliased = Map::new();
    aliased.insert("thinking".into(), reasoning.clone());
    for (key, value) in fields {
        aliased.insert(key, value);
    }
    aliased.insert("reasoning_content".into(), reasoning);
    aliased
}

/// A message as the template sees it, converted straight to a template value: the same
/// result as [`effective_messages`] followed by conversion, without the intermediate
/// JSON copy (this runs for every message on every render).
pub(crate) fn message_value(message: &Json) -> minijinja::Value {
    match message {
        Json::Object(fields) => object_value(fields),
        other => super::data::json_to_value(other),
    }
}

/// [`message_value`] of a message object.
pub(crate) fn object_value(fields: &Map<String, Json>) -> minijinja::Value {
    super::data::dict(object_entries(fields))
}

/// The entries of a message's dict as transformers prepares them; a message that is
/// not an object, converted as it is (`Err`).
pub(crate) fn message_entries(
    message: &Json,
) -> Result<Vec<(minijinja::Value, minijinja::Value)>, minijinja::Value> {
    match message {
        Json::Object(fields) => Ok(object_entries(fields)),
        other => Err(super::data::json_to_value(other)),
    }
}

/// The entries of a message object's dict as transformers prepares them, in a list of
/// exactly their number (a long conversation holds one per message).
fn object_entries(fields: &Map<String, Json>) -> Vec<(minijinja::Value, minijinja::Value)> {
    use super::data::json_to_value;
    use minijinja::Value;
    let reasoning = first_reasoning(fields).map(json_to_value);
    let kept = fields.values().filter(|v| !v.is_null()).count();
    let aliases = if reasoning.is_some() { 2 } else { 0 };
    let mut entries: Vec<(Value, Value)> = Vec::with_capacity(kept + aliases);
    if let Some(reasoning) = &reasoning {
        entries.push((Value::from("thinking"), reasoning.clone()));
    }
    let mut has_reasoning_content = false;
    for (key, value) in fields.iter().filter(|(_, v)| !v.is_null()) {
        match (key.as_str(), &reasoning) {
            // `{"thinking": r, **message, ...}`: the message's own value replaces r, in
            // the first position.
            ("thinking", Some(_)) => entries[0].1 = json_to_value(value),
            // `{..., **message, "reasoning_content": r}`: the key keeps the message's
            // position, the value becomes r.
            ("reasoning_content", Some(r)) => {
                has_reasoning_content = true;
                entries.push((Value::from(key.as_str()), r.clone()));
            }
            _ => entries.push((Value::from(key.as_str()), json_to_value(value))),
        }
    }
    if let (Some(r), false) = (reasoning, has_reasoning_content) {
        entries.push((Value::from("reasoning_content"), r));
    }
    entries
}

/// The message's reasoning: the first non-null of `reasoning_content`, `thinking`,
/// `reasoning`, found in one pass over the keys.
fn first_reasoning(fields: &Map<String, Json>) -> Option<&Json> {
    let mut found: [Option<&Json>; 3] = [None; 3];
    for (key, value) in fields {
        if let Some(rank) = REASONING_FIELDS.iter().position(|name| name == key) {
            found[rank] = Some(value).filter(|v| !v.is_null());
        }
    }
    found.into_iter().flatten().next()
}

/// Whether `field` is one of the names reasoning travels under.
pub(crate) fn is_reasoning_field(field: &str) -> bool {
    REASONING_FIELDS.contains(&field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_top_level_nulls_only() {
        let messages = [json!({"role": "assistant", "content": null, "tool_calls": [{"x": null}]})];
        assert_eq!(
            effective_messages(&messages),
            [json!({"role": "assistant", "tool_calls": [{"x": null}]})]
        );
    }

    #[test]
    fn aliases_reasoning_first_then_last() {
        let messages = [json!({"role": "assistant", "content": "a", "reasoning": "r"})];
        let effective = effective_messages(&messages);
        let keys: Vec<&str> = effective[0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "thinking",
                "role",
                "content",
                "reasoning",
                "reasoning_content"
            ]
        );
        assert_eq!(effective[0]["thinking"], "r");
    }
}
