//! The editable fields of a message and of the session settings, as text.
//!
//! Every field reads as the text the editor shows and writes back from edited text.
//! Writing validates first: a JSON field whose text does not parse (or has the wrong
//! shape) returns a [`FieldError`] and leaves the session untouched, so invalid input
//! never replaces the last good value.

use serde_json::Value as Json;

use chatplate_core::session::{ContinueSetting, Message, Session};

/// A row of the message list: a message, or the session settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// The message at this index.
    Message(usize),
    /// Tools, documents, special tokens, flags, clock and extra variables.
    Settings,
}

/// One editable field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The message role.
    Role,
    /// The message content (text, or JSON when it is a list of parts or another value).
    Content,
    /// `reasoning_content`.
    Reasoning,
    /// `tool_call_id` of a tool result.
    ToolCallId,
    /// `name` of a tool result.
    Name,
    /// The function name of tool call N.
    CallName(usize),
    /// The id of tool call N.
    CallId(usize),
    /// The arguments of tool call N (JSON object or JSON string).
    CallArguments(usize),
    /// A command row: add a tool call.
    NewToolCall,
    /// The whole message as JSON (for any other key).
    Raw,
    /// Tool definitions (JSON list or null).
    Tools,
    /// Retrieval documents (JSON list or null).
    Documents,
    /// `bos_token` (empty means unset).
    BosToken,
    /// `eos_token` (empty means unset).
    EosToken,
    /// `add_generation_prompt`.
    AddGenerationPrompt,
    /// `continue_final_message`: `false`, `true` or a field name.
    ContinueFinal,
    /// The fixed clock, `YYYY-MM-DDTHH:MM:SS` (empty means the real clock).
    Clock,
    /// Extra template variables (a JSON object).
    Variables,
    /// Knob N of the template (the Knobs section: `Enter` flips a boolean one).
    Knob(usize),
}

/// How a field is edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Free text.
    Text,
    /// JSON, validated on every change.
    Json,
    /// A boolean, toggled in place.
    Toggle,
    /// Not a value: activating it runs a command.
    Command,
}

/// Why edited text was not accepted; `line`/`column` are 1-based when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    /// What is wrong.
    pub message: String,
    /// Line of the problem in the edited text.
    pub line: Option<usize>,
    /// Column of the problem.
    pub column: Option<usize>,
}

impl FieldError {
    pub(in crate::tui) fn plain(message: impl Into<String>) -> Self {
        FieldError {
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub(in crate::tui) fn json(err: &serde_json::Error) -> Self {
        let text = err.to_string();
        let message = match text.rfind(" at line ") {
            Some(at) => text[..at].to_string(),
            None => text,
        };
        FieldError {
            message,
            line: Some(err.line()),
            column: Some(err.column()),
        }
    }
}

impl Field {
    /// The label in the field list.
    pub fn label(self) -> String {
        match self {
            Field::Role => "role".into(),
            Field::Content => "content".into(),
            Field::Reasoning => "reasoning".into(),
            Field::ToolCallId => "tool_call_id".into(),
            Field::Name => "name".into(),
            Field::CallName(i) => format!("call {} name", i + 1),
            Field::CallId(i) => format!("call {} id", i + 1),
            Field::CallArguments(i) => format!("call {} args", i + 1),
            Field::NewToolCall => "+ tool call".into(),
            Field::Raw => "raw JSON".into(),
            Field::Tools => "tools".into(),
            Field::Documents => "documents".into(),
            Field::BosToken => "bos_token".into(),
            Field::EosToken => "eos_token".into(),
            Field::AddGenerationPrompt => "add_gen_prompt".into(),
            Field::ContinueFinal => "continue_final".into(),
            Field::Clock => "clock".into(),
            Field::Variables => "variables".into(),
            Field::Knob(_) => "knob".into(),
        }
    }

    /// How this field is edited, given its current value.
    pub fn kind(self, session: &Session, row: Row) -> FieldKind {
        match self {
            Field::Content => match message(session, row).and_then(|m| m.0.get("content")) {
                // Parts, an object, a number: edited as the JSON they are, so saving
                // keeps their type (transformers renders them as they are).
                Some(Json::String(_) | Json::Null) | None => FieldKind::Text,
                Some(_) => FieldKind::Json,
            },
            Field::CallArguments(_) | Field::Raw | Field::Tools | Field::Documents => {
                FieldKind::Json
            }
            Field::Variables => FieldKind::Json,
            Field::AddGenerationPrompt | Field::Knob(_) => FieldKind::Toggle,
            Field::NewToolCall => FieldKind::Command,
            _ => FieldKind::Text,
        }
    }
}

/// The fields shown for a row, in display order.
pub fn fields(session: &Session, row: Row) -> Vec<Field> {
    let Some(msg) = message(session, row) else {
        return settings_fields(row);
    };
    let mut list = vec![Field::Role, Field::Content];
    match msg.role() {
        "assistant" => {
            list.push(Field::Reasoning);
            for i in 0..tool_calls(msg).len() {
                list.extend([
                    Field::CallName(i),
                    Field::CallId(i),
                    Field::CallArguments(i),
                ]);
            }
            list.push(Field::NewToolCall);
        }
        "tool" => list.extend([Field::ToolCallId, Field::Name]),
        _ => {}
    }
    list.push(Field::Raw);
    list
}

fn settings_fields(row: Row) -> Vec<Field> {
    match row {
        // The ones most sessions set first.
        Row::Settings => vec![
            Field::Tools,
            Field::AddGenerationPrompt,
            Field::Variables,
            Field::ContinueFinal,
            Field::Clock,
            Field::BosToken,
            Field::EosToken,
            Field::Documents,
            // All of them as one JSON object (`e` on the settings row edits it).
            Field::Raw,
        ],
        Row::Message(_) => Vec::new(),
    }
}

/// The message a row points at, if it exists.
pub fn message(session: &Session, row: Row) -> Option<&Message> {
    match row {
        Row::Message(index) => session.messages.get(index),
        Row::Settings => None,
    }
}

/// The tool calls of a message (empty when absent or malformed).
pub fn tool_calls(msg: &Message) -> &[Json] {
    msg.0
        .get("tool_calls")
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The editor text of a field.
pub fn read(session: &Session, row: Row, field: Field) -> String {
    match message(session, row) {
        Some(msg) => read_message(msg, field),
        None => read_setting(session, field),
    }
}

fn read_message(msg: &Message, field: Field) -> String {
    let text_of = |key: &str| match msg.0.get(key) {
        Some(Json::String(text)) => text.clone(),
        Some(Json::Null) | None => String::new(),
        Some(other) => pretty(other),
    };
    match field {
        Field::Role => msg.role().to_string(),
        Field::Content => text_of("content"),
        Field::Reasoning => text_of("reasoning_content"),
        Field::ToolCallId => text_of("tool_call_id"),
        Field::Name => text_of("name"),
        Field::CallName(i) => call_text(msg, i, &["function", "name"]),
        Field::CallId(i) => call_text(msg, i, &["id"]),
        Field::CallArguments(i) => match call_value(msg, i, &["function", "arguments"]) {
            Some(Json::String(text)) => text.clone(),
            Some(value) => pretty(value),
            None => "{}".into(),
        },
        Field::Raw => pretty(&Json::Object(msg.0.clone())),
        _ => String::new(),
    }
}

fn read_setting(session: &Session, field: Field) -> String {
    let list = |value: &Option<Vec<Json>>| match value {
        Some(items) => pretty(&Json::Array(items.clone())),
        None => "null".into(),
    };
    match field {
        Field::Tools => list(&session.tools),
        Field::Documents => list(&session.documents),
        Field::BosToken => session.bos_token.clone().unwrap_or_default(),
        Field::EosToken => session.eos_token.clone().unwrap_or_default(),
        Field::AddGenerationPrompt => session.add_generation_prompt.to_string(),
        Field::ContinueFinal => match &session.continue_final_message {
            ContinueSetting::Flag(flag) => flag.to_string(),
            ContinueSetting::Field(name) => name.clone(),
        },
        Field::Clock => session.clock.clone().unwrap_or_default(),
        Field::Variables => pretty(&Json::Object(session.variables.clone())),
        Field::Raw => pretty(&crate::tui::panes::messages::settings_json::read(session)),
        _ => String::new(),
    }
}

/// A one-line summary for the field list.
pub fn summary(session: &Session, row: Row, field: Field) -> String {
    let text = read(session, row, field);
    match field {
        Field::Tools | Field::Documents => match serde_json::from_str::<Json>(&text) {
            Ok(Json::Array(items)) => format!("{} entries", items.len()),
            _ => "none".into(),
        },
        Field::CallArguments(i) => {
            let form = match message(session, row)
                .and_then(|m| call_value(m, i, &["function", "arguments"]))
            {
                Some(Json::String(_)) => "string",
                _ => "object",
            };
            format!("({form}) {}", one_line(&text))
        }
        Field::NewToolCall => String::new(),
        Field::Content => {
            match message(session, row).map(crate::tui::workbench::ContentState::of) {
                Some(state) if state.mark().is_some() => state.mark().unwrap_or_default().into(),
                _ => one_line(&text),
            }
        }
        _ if text.is_empty() => "-".into(),
        _ => one_line(&text),
    }
}

/// The start of `text` on one line (whitespace runs become one space). Only the first
/// few hundred characters are looked at: no pane is wider, and a field can be megabytes.
pub(in crate::tui) fn one_line(text: &str) -> String {
    let head = text
        .char_indices()
        .nth(500)
        .map_or(text, |(end, _)| &text[..end]);
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(in crate::tui) fn pretty(value: &Json) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn call_value<'m>(msg: &'m Message, index: usize, path: &[&str]) -> Option<&'m Json> {
    let mut value = tool_calls(msg).get(index)?;
    for key in path {
        value = value.get(key)?;
    }
    Some(value)
}

fn call_text(msg: &Message, index: usize, path: &[&str]) -> String {
    match call_value(msg, index, path) {
        Some(Json::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}
