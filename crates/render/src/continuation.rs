//! `continue_final_message`: leave the last message open so the model continues it.
//!
//! transformers appends [`CONTINUE_TAG`] to the final message, renders, and cuts the
//! prompt where the tag appears, so whatever the template would have closed the
//! message with is dropped. The checks and error texts follow
//! `render_jinja_template` in transformers 5.23.

use serde_json::Value as Json;

use super::conversation::{is_reasoning_field, CONTINUE_TAG, REASONING_FIELDS};
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
    if let Json::Array(blocks) = last.get_mut(field).expect("checked above") {
        return tag_last_text_block(blocks);
    }
    let Json::String(final_text) = final_value else {
        return Err(RenderError::input(format!(
            "continue_final_message: \"{field}\" of the final message must be text"
        )));
    };
    for name in fields {
        if let Some(Json::String(text)) = last.get_mut(name) {
            text.push_str(CONTINUE_TAG);
        }
    }
    Ok(final_text)
}

fn tag_last_text_block(blocks: &mut [Json]) -> Result<String, RenderError> {
    for block in blocks.iter_mut().rev() {
        if let Some(Json::String(text)) = block.get_mut("text") {
            let original = text.clone();
            text.push_str(CONTINUE_TAG);
            return Ok(original);
        }
    }
    Err(RenderError::input(
        "continue_final_message is set but we could not find any text to continue in the final message!",
    ))
}

/// Cuts the rendered prompt at the tag, as transformers does.
pub fn cut_at_tag(rendered: String, final_text: &str) -> Result<String, RenderError> {
    let bare_tag = CONTINUE_TAG.trim();
    if !rendered.contains(final_text.trim()) || !rendered.contains(bare_tag) {
        return Err(RenderError::input(format!(
            "continue_final_message is set but the final message does not appear in the chat after \
             applying the chat template! Final message to continue: {}",
            final_text.trim()
        )));
    }
    let at = rendered.rfind(bare_tag).expect("checked above");
    if rendered[at..].starts_with(CONTINUE_TAG) {
        Ok(rendered[..at].to_string())
    } else {
        Ok(rendered[..at].trim_end().to_string())
    }
}
