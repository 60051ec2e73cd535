//! Writing edited text back into a field: validation first, then the change, so text
//! that does not validate never reaches the session.

use serde_json::{Map, Value as Json};

use chatplate_core::session::{ContinueSetting, Message, Session};

use crate::tui::panes::messages::fields::Field;

use crate::tui::panes::messages::fields::FieldError;

use crate::tui::panes::messages::fields::FieldKind;

use crate::tui::panes::messages::fields::Row;

/// Validates `text` and stores it; on error the session is unchanged.
pub fn write(session: &mut Session, row: Row, field: Field, text: &str) -> Result<(), FieldError> {
    match row {
        Row::Message(index) => {
            let kind = field.kind(session, row);
            let msg = session
                .messages
                .get_mut(index)
                .ok_or_else(|| FieldError::plain("no such message"))?;
            write_message(msg, field, kind, text)
        }
        Row::Settings => write_setting(session, field, text),
    }
}

fn write_message(
    msg: &mut Message,
    field: Field,
    kind: FieldKind,
    text: &str,
) -> Result<(), FieldError> {
    match field {
        Field::Role => set_string(&mut msg.0, "role", text),
        // Any JSON value, as a fixture may hold it.
        Field::Content if kind == FieldKind::Json => {
            msg.0.insert("content".into(), parse_json(text)?);
        }
        Field::Content => write_content(msg, text),
        Field::Reasoning => set_optional(&mut msg.0, "reasoning_content", text),
        Field::ToolCallId => set_optional(&mut msg.0, "tool_call_id", text),
        Field::Name => set_optional(&mut msg.0, "name", text),
        Field::CallName(i) => *call_slot(msg, i, &["function", "name"])? = Json::from(text),
        Field::CallId(i) => *call_slot(msg, i, &["id"])? = Json::from(text),
        Field::CallArguments(i) => write_arguments(msg, i, text)?,
        Field::Raw => *msg = parse_message(text)?,
        _ => return Err(FieldError::plain("not a message field")),
    }
    Ok(())
}

/// Empty text keeps a missing or null content as it was: templates treat the two
/// differently from `""`.
fn write_content(msg: &mut Message, text: &str) {
    let keeps_null = matches!(msg.0.get("content"), None | Some(Json::Null));
    if !(text.is_empty() && keeps_null) {
        msg.0.insert("content".into(), Json::from(text));
    }
}

fn write_arguments(msg: &mut Message, index: usize, text: &str) -> Result<(), FieldError> {
    let value = parse_json(text)?;
    let slot = call_slot(msg, index, &["function", "arguments"])?;
    if slot.is_string() {
        *slot = Json::from(text);
        return Ok(());
    }
    if !value.is_object() {
        return Err(FieldError::plain(
            "arguments must be a JSON object (press o for string form)",
        ));
    }
    *slot = value;
    Ok(())
}

/// Argument strings as the user wrote them, by the compact JSON of the object they
/// parse to: switching back to a string gives the user's text again, spacing and all.
pub type ArgumentTexts = std::collections::HashMap<String, String>;

/// Switches call `index`'s arguments between object and string form. A string becomes
/// the object it holds (and is remembered in `texts`); an object becomes the string it
/// was made from, or its compact JSON.
pub fn toggle_arguments_form(
    msg: &mut Message,
    index: usize,
    texts: &mut ArgumentTexts,
) -> Result<(), FieldError> {
    let slot = call_slot(msg, index, &["function", "arguments"])?;
    let next = match &*slot {
        Json::String(text) => match parse_json(text)? {
            object @ Json::Object(_) => {
                texts.insert(compact(&object), text.clone());
                object
            }
            _ => return Err(FieldError::plain("the string does not hold a JSON object")),
        },
        other => {
            let key = compact(other);
            Json::from(texts.get(&key).cloned().unwrap_or(key))
        }
    };
    *slot = next;
    Ok(())
}

/// Remembers `text` as the string form of call `index`'s arguments when they are an
/// object (as typed in the arguments editor), for [`toggle_arguments_form`].
pub fn remember_arguments(msg: &Message, index: usize, text: String, texts: &mut ArgumentTexts) {
    let arguments = (msg.0.get("tool_calls").and_then(|calls| calls.get(index)))
        .and_then(|call| call.get("function"))
        .and_then(|function| function.get("arguments"));
    if let Some(object @ Json::Object(_)) = arguments {
        texts.insert(compact(object), text);
    }
}

fn compact(value: &Json) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn write_setting(session: &mut Session, field: Field, text: &str) -> Result<(), FieldError> {
    let optional = |text: &str| (!text.is_empty()).then(|| text.to_string());
    match field {
        Field::Tools => session.tools = parse_list(text)?,
        Field::Documents => session.documents = parse_list(text)?,
        Field::BosToken => session.bos_token = optional(text),
        Field::EosToken => session.eos_token = optional(text),
        Field::AddGenerationPrompt => session.add_generation_prompt = text.trim() == "true",
        Field::ContinueFinal => session.continue_final_message = parse_continue(text.trim()),
        Field::Clock => session.clock = parse_clock(text.trim())?,
        Field::Variables => match parse_json(text)? {
            Json::Object(map) => session.variables = map,
            _ => return Err(FieldError::plain("variables must be a JSON object")),
        },
        Field::Raw => {
            crate::tui::panes::messages::settings_json::write(session, parse_json(text)?)?
        }
        _ => return Err(FieldError::plain("not a settings field")),
    }
    Ok(())
}

fn parse_continue(text: &str) -> ContinueSetting {
    match text {
        "" | "false" => ContinueSetting::Flag(false),
        "true" => ContinueSetting::Flag(true),
        field => ContinueSetting::Field(field.to_string()),
    }
}

fn parse_clock(text: &str) -> Result<Option<String>, FieldError> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<jiff::civil::DateTime>()
        .map(|_| Some(text.to_string()))
        .map_err(|_| FieldError::plain("clock must look like 2026-01-15T09:30:00"))
}

fn parse_list(text: &str) -> Result<Option<Vec<Json>>, FieldError> {
    match parse_json(text)? {
        Json::Array(items) => Ok(Some(items)),
        Json::Null => Ok(None),
        _ => Err(FieldError::plain("expected a JSON list or null")),
    }
}

fn parse_json(text: &str) -> Result<Json, FieldError> {
    serde_json::from_str(text).map_err(|err| FieldError::json(&err))
}

fn parse_message(text: &str) -> Result<Message, FieldError> {
    serde_json::from_str(text).map_err(|err| FieldError::json(&err))
}

fn set_string(map: &mut Map<String, Json>, key: &str, text: &str) {
    map.insert(key.into(), Json::from(text));
}

fn set_optional(map: &mut Map<String, Json>, key: &str, text: &str) {
    if text.is_empty() {
        map.remove(key);
    } else {
        set_string(map, key, text);
    }
}

/// The value at `path` inside call `index`, created (as `{}` objects) when missing.
fn call_slot<'m>(
    msg: &'m mut Message,
    index: usize,
    path: &[&str],
) -> Result<&'m mut Json, FieldError> {
    let call = msg
        .0
        .get_mut("tool_calls")
        .and_then(Json::as_array_mut)
        .and_then(|calls| calls.get_mut(index))
        .ok_or_else(|| FieldError::plain("no such tool call"))?;
    let mut value = call;
    for key in path {
        let object = value
            .as_object_mut()
            .ok_or_else(|| FieldError::plain("the tool call is not a JSON object"))?;
        value = object
            .entry(key.to_string())
            .or_insert_with(|| Json::Object(Map::new()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of one user message whose content is `content`.
    fn session(content: Json) -> Session {
        let text = serde_json::json!({
            "version": 1,
            "template": {"source": "{{ messages[0].content }}"},
            "messages": [{"role": "user", "content": content}],
        });
        Session::parse(&text.to_string(), std::path::Path::new("s.json")).unwrap()
    }

    /// transformers renders an object content as a dict: editing it keeps it an object.
    #[test]
    fn an_object_content_is_edited_as_json_and_stays_an_object() {
        let mut edited = session(serde_json::json!({"text": "hi"}));
        let row = Row::Message(0);
        assert_eq!(Field::Content.kind(&edited, row), FieldKind::Json);
        write(
            &mut edited,
            row,
            Field::Content,
            "{\"text\": \"bye\", \"n\": 2}",
        )
        .unwrap();
        assert_eq!(
            edited.messages[0].0["content"],
            serde_json::json!({"text": "bye", "n": 2})
        );
        let text = session(Json::from("hi"));
        assert_eq!(Field::Content.kind(&text, row), FieldKind::Text);
    }
}
