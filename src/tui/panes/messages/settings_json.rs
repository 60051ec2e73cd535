//! The settings as one JSON object (the settings row's `raw JSON` field, and what `e`
//! on the settings row edits): tools, `add_generation_prompt`, variables, and the
//! optional ones that are set. Pasting one object sets what it names at once: the authoring
//! route's tools and `enable_thinking` in one edit.

use serde_json::{Map, Value as Json};

use chatplate_core::session::{ContinueSetting, Session};

use crate::tui::panes::messages::fields::FieldError;

/// The keys the object may have, in the order it is shown.
pub const KEYS: [&str; 8] = [
    "tools",
    "add_generation_prompt",
    "variables",
    "continue_final_message",
    "clock",
    "bos_token",
    "eos_token",
    "documents",
];

/// The settings as a JSON object: the first three always, the others when set.
pub fn read(session: &Session) -> Json {
    let mut object = Map::new();
    let list = |items: &Option<Vec<Json>>| items.clone().map_or(Json::Null, Json::Array);
    object.insert("tools".into(), list(&session.tools));
    object.insert(
        "add_generation_prompt".into(),
        session.add_generation_prompt.into(),
    );
    object.insert("variables".into(), Json::Object(session.variables.clone()));
    match &session.continue_final_message {
        ContinueSetting::Flag(false) => {}
        ContinueSetting::Flag(true) => {
            object.insert("continue_final_message".into(), true.into());
        }
        ContinueSetting::Field(name) => {
            object.insert("continue_final_message".into(), name.as_str().into());
        }
    }
    let text = |value: &Option<String>| value.as_deref().map(Json::from);
    let optional = [
        ("clock", text(&session.clock)),
        ("bos_token", text(&session.bos_token)),
        ("eos_token", text(&session.eos_token)),
        ("documents", session.documents.clone().map(Json::Array)),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            object.insert(key.into(), value);
        }
    }
    Json::Object(object)
}

/// Sets the settings `value` names, an object with some of [`KEYS`]: a key left out
/// keeps its value (a pasted `{"tools": [...]}` leaves the clock alone), `null` unsets
/// it. Nothing changes when any key is wrong.
pub fn write(session: &mut Session, value: Json) -> Result<(), FieldError> {
    let Json::Object(object) = value else {
        return Err(FieldError::plain("the settings must be a JSON object"));
    };
    if let Some(key) = object.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(FieldError::plain(format!(
            "unknown setting {key:?} (known: {})",
            KEYS.join(", ")
        )));
    }
    let mut next = session.clone();
    for (key, value) in &object {
        set(&mut next, key, value)?;
    }
    *session = next;
    Ok(())
}

/// Sets setting `key` to `value` (`null`: unset, off, none).
fn set(session: &mut Session, key: &str, value: &Json) -> Result<(), FieldError> {
    match key {
        "tools" => session.tools = list(key, value)?,
        "documents" => session.documents = list(key, value)?,
        "add_generation_prompt" => {
            session.add_generation_prompt = match value {
                Json::Null => false,
                Json::Bool(flag) => *flag,
                _ => {
                    return Err(FieldError::plain(
                        "add_generation_prompt must be true or false",
                    ))
                }
            }
        }
        "variables" => {
            session.variables = match value {
                Json::Null => Map::new(),
                Json::Object(map) => map.clone(),
                _ => return Err(FieldError::plain("variables must be a JSON object")),
            }
        }
        "continue_final_message" => {
            session.continue_final_message = match value {
                Json::Null => ContinueSetting::Flag(false),
                Json::Bool(flag) => ContinueSetting::Flag(*flag),
                Json::String(name) => ContinueSetting::Field(name.clone()),
                _ => {
                    return Err(FieldError::plain(
                        "continue_final_message must be true, false or a field name",
                    ))
                }
            }
        }
        "clock" => {
            session.clock = text(key, value)?;
            let valid = (session.clock.as_deref())
                .is_none_or(|c| c.parse::<jiff::civil::DateTime>().is_ok());
            if !valid {
                return Err(FieldError::plain(
                    "clock must look like 2026-01-15T09:30:00",
                ));
            }
        }
        "bos_token" => session.bos_token = text(key, value)?,
        _ => session.eos_token = text(key, value)?,
    }
    Ok(())
}

/// A list setting: a JSON list, or null for none.
fn list(key: &str, value: &Json) -> Result<Option<Vec<Json>>, FieldError> {
    match value {
        Json::Null => Ok(None),
        Json::Array(items) => Ok(Some(items.clone())),
        _ => Err(FieldError::plain(format!(
            "{key} must be a JSON list or null"
        ))),
    }
}

/// A text setting: a string, or null (or empty) for unset.
fn text(key: &str, value: &Json) -> Result<Option<String>, FieldError> {
    match value {
        Json::Null => Ok(None),
        Json::String(text) if text.is_empty() => Ok(None),
        Json::String(text) => Ok(Some(text.clone())),
        _ => Err(FieldError::plain(format!("{key} must be a string or null"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_settings_read_back_as_they_were_written() {
        let template = chatplate_core::catalog::default_template();
        let mut session = crate::tui::panes::messages::conversation::example_session(
            template.reference(&std::env::temp_dir()),
        );
        let value = json!({
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "add_generation_prompt": true,
            "variables": {"enable_thinking": false},
            "clock": "2026-01-15T09:30:00",
        });
        write(&mut session, value.clone()).unwrap();
        assert_eq!(read(&session), value);
        assert_eq!(session.variables["enable_thinking"], json!(false));
        // A key left out keeps its value; null unsets it.
        write(&mut session, json!({"tools": null})).unwrap();
        assert_eq!(
            (session.tools.clone(), session.clock.as_deref()),
            (None, Some("2026-01-15T09:30:00"))
        );
        write(&mut session, json!({"clock": null})).unwrap();
        assert_eq!(session.clock, None);
    }

    #[test]
    fn a_wrong_key_or_value_changes_nothing() {
        let template = chatplate_core::catalog::default_template();
        let mut session = crate::tui::panes::messages::conversation::example_session(
            template.reference(&std::env::temp_dir()),
        );
        let before = session.clone();
        let err = write(&mut session, json!({"tool": []})).unwrap_err();
        assert!(err.message.starts_with("unknown setting \"tool\""), "{err}");
        let err = write(&mut session, json!({"tools": [], "clock": "soon"})).unwrap_err();
        assert!(err.message.starts_with("clock must"), "{err}");
        assert_eq!(session, before);
    }
}
