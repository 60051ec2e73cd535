//! `continue_final_message`: leave the last message open so the model continues it.
//!
//! transformers appends [`CONTINUE_TAG`] to the final message, renders, and cuts the
//! prompt where the tag appears, so whatever the template would have closed the
//! message with is dropped. The checks, their order and their error texts follow
//! `render_jinja_template` in transformers 5.23, including the `TypeError`s Python
//! raises when the value being continued is not text (`dict + str`, `"text" in 3`).

use serde_json::Value as Json;

use super::conversation::{is_reasoning_field, CONTINUE_TAG, REASONING_FIELDS};
use super::strmethods::is_space;
use super::RenderError;

/// Tags the final message's `field`; returns the text being continued.
pub fn tag_final_message(
    messages: &mut [Json],
    field: &str,
    template_source: &str,
) -> Result<String, RenderError> {
    let last = messages
        .last_mut()
        .and_then(Json::as_object_mut)
        .ok_or_else(|| {
            RenderError::input("continue_final_message is set but the conversation is empty!")
        })?;
    let final_value = last
        .get(field)
        .filter(|v| !v.is_null())
        .cloned()
        .ok_or_else(|| {
            RenderError::input(format!(
            "continue_final_message is set but the final message has no \"{field}\" to continue!"
        ))
        })?;
    let fields: Vec<&str> = if is_reasoning_field(field) {
        REASONING_FIELDS
            .into_iter()
            .filter(|name| last.get(*name) == Some(&final_value))
            .collect()
    } else {
        vec![field]
    };
    if !fields.iter().any(|name| template_source.contains(name)) {
        return Err(RenderError::input(format!(
            "continue_final_message is set to \"{field}\" but this is not an accepted field in the chat_template"
        )));
    }
    if let Some(Json::Array(blocks)) = last.get_mut(field) {
        return tag_last_text_block(blocks);
    }
    // `chat[-1][field] + tag` for each field, as Python adds them.
    for name in fields {
        match last.get_mut(name) {
            Some(Json::String(text)) => text.push_str(CONTINUE_TAG),
            Some(other) => return Err(concatenation_error(other)),
            None => {}
        }
    }
    match final_value {
        Json::String(final_text) => Ok(final_text),
        other => Err(concatenation_error(&other)),
    }
}

/// The last block that has a `"text"` (Python's `"text" in block`: a key of a dict, an
/// item of a list, a substring of a string), tagged.
fn tag_last_text_block(blocks: &mut [Json]) -> Result<String, RenderError> {
    for block in blocks.iter_mut().rev() {
        let text = match block {
            Json::Object(fields) => match fields.get_mut("text") {
                Some(text) => text,
                None => continue,
            },
            Json::String(text) if text.contains("text") => {
                return Err(type_error("string indices must be integers, not 'str'"));
            }
            Json::Array(items) if items.iter().any(|item| item == "text") => {
                return Err(type_error(
                    "list indices must be integers or slices, not str",
                ));
            }
            Json::String(_) | Json::Array(_) => continue,
            other => {
                return Err(type_error(format!(
                    "argument of type '{}' is not iterable",
                    python_type(other)
                )));
            }
        };
        let Json::String(text) = text else {
            return Err(concatenation_error(text));
        };
        let original = text.clone();
        text.push_str(CONTINUE_TAG);
        return Ok(original);
    }
    Err(RenderError::input(
        "continue_final_message is set but we could not find any text to continue in the final message!",
    ))
}

/// Cuts the rendered prompt at the tag, as transformers does.
pub fn cut_at_tag(rendered: String, final_text: &str) -> Result<String, RenderError> {
    let bare_tag = CONTINUE_TAG.trim();
    let final_text = final_text.trim_matches(is_space);
    if !rendered.contains(final_text) || !rendered.contains(bare_tag) {
        // transformers' text, its missing space before "Final" included.
        return Err(RenderError::input(format!(
            "continue_final_message is set but the final message does not appear in the chat after \
             applying the chat template! This can happen if the chat template deletes portions of \
             the final message. Please verify the chat template and final message in your chat to \
             ensure they are compatible.Final message to continue: {final_text}\nRendered chat:\n{rendered}"
        )));
    }
    let at = rendered.rfind(bare_tag).expect("checked above");
    if rendered[at..].starts_with(CONTINUE_TAG) {
        Ok(rendered[..at].to_string())
    } else {
        Ok(rendered[..at].trim_end_matches(is_space).to_string())
    }
}

/// Python's `value + "CONTINUE_FINAL_MESSAGE_TAG "` for a value that is not a string.
fn concatenation_error(value: &Json) -> RenderError {
    match value {
        Json::Array(_) => type_error("can only concatenate list (not \"str\") to list"),
        other => type_error(format!(
            "unsupported operand type(s) for +: '{}' and 'str'",
            python_type(other)
        )),
    }
}

/// The type `json.loads` gives `value`.
fn python_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "NoneType",
        Json::Bool(_) => "bool",
        // A fraction or an exponent makes a float (`arbitrary_precision` keeps the text).
        Json::Number(n) if n.to_string().contains(['.', 'e', 'E']) => "float",
        Json::Number(_) => "int",
        Json::String(_) => "str",
        Json::Array(_) => "list",
        Json::Object(_) => "dict",
    }
}

/// A `TypeError` transformers raises while preparing the input.
fn type_error(message: impl Into<String>) -> RenderError {
    RenderError {
        exception: Some("TypeError"),
        ..RenderError::input(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The error `continue_final_message` gives for a final assistant `content`.
    fn tagging(content: Json) -> String {
        let mut messages = vec![json!({"role": "assistant", "content": content})];
        let err = tag_final_message(&mut messages, "content", "{{ m.content }}").unwrap_err();
        format!("{}: {}", err.exception.unwrap_or("?"), err.message)
    }

    // Expectations: transformers 5.23.0 `render_jinja_template(..., continue_final_message=True)`.
    #[test]
    fn a_final_value_that_is_not_text_raises_python_s_type_error() {
        for (content, python) in [
            (
                json!({"a": 1}),
                "TypeError: unsupported operand type(s) for +: 'dict' and 'str'",
            ),
            (
                json!(42),
                "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            ),
            (
                json!(1.5),
                "TypeError: unsupported operand type(s) for +: 'float' and 'str'",
            ),
            (
                json!([1]),
                "TypeError: argument of type 'int' is not iterable",
            ),
            (
                json!([{"text": null}]),
                "TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'",
            ),
            (
                json!([{"text": [1]}]),
                "TypeError: can only concatenate list (not \"str\") to list",
            ),
            (
                json!(["context"]),
                "TypeError: string indices must be integers, not 'str'",
            ),
            (
                json!([["text"]]),
                "TypeError: list indices must be integers or slices, not str",
            ),
            (
                json!(["abc", {"type": "image"}]),
                "ValueError: continue_final_message is set but we could not find any text \
                 to continue in the final message!",
            ),
        ] {
            assert_eq!(tagging(content.clone()), python, "{content}");
        }
    }

    #[test]
    fn a_final_message_the_template_changed_is_reported_with_the_rendered_chat() {
        let rendered = "<user>hi</user>\n<assistant>ab CONTINUE_FINAL_MESSAGE_TAG </assistant>\n";
        let err = cut_at_tag(rendered.into(), "axb ").unwrap_err();
        assert_eq!(err.exception, Some("ValueError"));
        assert_eq!(
            err.message,
            "continue_final_message is set but the final message does not appear in the chat \
             after applying the chat template! This can happen if the chat template deletes \
             portions of the final message. Please verify the chat template and final message \
             in your chat to ensure they are compatible.Final message to continue: axb\n\
             Rendered chat:\n<user>hi</user>\n<assistant>ab CONTINUE_FINAL_MESSAGE_TAG \
             </assistant>\n"
        );
    }
}
