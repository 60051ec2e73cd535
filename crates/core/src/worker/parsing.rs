//! Pasting a model's raw output into the conversation: on the worker, the session's
//! `response_template` is found (the session's own or its model's, which may mean reading
//! a file), the conversation renders with the generation prompt as the prefix, and the
//! output parses into the assistant message it stands for.

use std::path::PathBuf;

use serde_json::Value as Json;

use chatplate_render::{CancelToken, ContinueFinal, RenderError};

use crate::catalog::{TemplateAccess, TemplateSource};
use crate::parse::{self, ParseLimits, ResponseTemplate};
use crate::session::Session;

use super::snapshot::Snapshot;
use super::{Output, Template};

/// Where the session's `response_template` may be found.
#[derive(Debug, Clone)]
pub struct SchemaLookup {
    /// The session (only its `response_template` is read).
    pub session: Session,
    /// The session's folder: a `response_template` path is relative to it.
    pub dir: PathBuf,
    /// What the session may read.
    pub access: TemplateAccess,
    /// The session's template: its model folder's `tokenizer_config.json` may hold one.
    pub template: Option<TemplateSource>,
}

/// What came of a paste.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pasted {
    /// The message, and the non-blank stretches of the output that none of its values
    /// holds (text the schema has no region for), in order.
    Message {
        /// The assistant message.
        message: Json,
        /// Text the parser did not place.
        unplaced: Vec<String>,
    },
    /// The output does not parse: transformers' error, worded as it words it.
    Failed(String),
    /// The session has no `response_template` and neither has its model.
    NoSchema,
    /// The `response_template` could not be read.
    Unreadable(String),
}

/// Parses `output` as the answer to the worker's conversation.
pub(super) fn parse_pasted(
    template: &Template,
    lookup: &SchemaLookup,
    output: &str,
    conversation: &Snapshot,
    cancel: &CancelToken,
) -> Result<Output, RenderError> {
    let found = parse::session_schema(
        &lookup.session,
        &lookup.dir,
        &lookup.access,
        lookup.template.as_ref(),
    );
    let spec = match found {
        Ok(Some(found)) => found.spec,
        Ok(None) => return Ok(Output::Pasted(Pasted::NoSchema)),
        Err(err) => return Ok(Output::Pasted(Pasted::Unreadable(err.to_string()))),
    };
    let mut answered = conversation.conversation();
    // The output answers the conversation: the prompt ends with the assistant's opening
    // (unless the session continues its final message), as `chatplate parse` has it.
    answered.add_generation_prompt |= answered.continue_final_message == ContinueFinal::Off;
    let compiled = template.compiled()?;
    let prefix = compiled.render_cancellable(&answered, cancel)?;
    let tools = answered.tools.unwrap_or_default();
    let limits = ParseLimits::new(compiled.limits().deadline).with_cancel(cancel.clone());
    let pasted = parse_with(&spec, output, &prefix, &tools, &limits);
    // A cancelled parse says nothing about the output.
    if cancel.is_cancelled() {
        return Err(RenderError::cancelled());
    }
    Ok(Output::Pasted(pasted))
}

/// The outcome of parsing `output` after `prefix` with the template `spec`, within
/// `limits` (the deadline bounds the parse and the search for unplaced text each).
pub fn parse_with(
    spec: &Json,
    output: &str,
    prefix: &str,
    tools: &[Json],
    limits: &ParseLimits,
) -> Pasted {
    let parsed = ResponseTemplate::load(spec).and_then(|template| {
        parse::parse_response_within(output, &template, prefix, tools, limits)
    });
    match parsed {
        Ok(message) => Pasted::Message {
            unplaced: unplaced(output, &message, limits),
            message,
        },
        Err(err) => Pasted::Failed(err.to_string()),
    }
}

/// Most unplaced lines listed; more are counted in one last line.
const MAX_UNPLACED: usize = 50;

/// The lines of `output` whose text appears in none of the message's strings (after
/// stripping the markup a schema's anchors consume): what a schema without a region
/// for it drops. Lines that are only markup (`<tool_call>`, `</think>`) count as placed.
/// Each line is looked for in every string, so a long output is read only until the
/// parse's deadline; the last line says what was left out.
fn unplaced(output: &str, message: &Json, limits: &ParseLimits) -> Vec<String> {
    let started = std::time::Instant::now();
    let mut strings = Vec::new();
    collect_strings(message, &mut strings);
    let strings: Vec<String> = strings.iter().map(|s| squeezed(s)).collect();
    let mut found = Vec::new();
    let mut more = 0usize;
    for (index, line) in output.lines().enumerate() {
        if started.elapsed() > limits.deadline || limits.cancel.is_cancelled() {
            found.push(format!(
                "… (lines from {} on not checked: the output is long)",
                index + 1
            ));
            return found;
        }
        let line = line.trim();
        if is_markup(line) {
            continue;
        }
        // Each stretch between tags on its own: a one-line output (`Checking.<|tool_start|>
        // [...]<|tool_end|>`) puts its stretches in different fields.
        let placed = between_tags(line).all(|stretch| {
            let text = squeezed(stretch);
            text.is_empty() || strings.iter().any(|s| s.contains(&text))
        });
        if placed {
            continue;
        }
        if found.len() < MAX_UNPLACED {
            found.push(line.to_string());
        } else {
            more += 1;
        }
    }
    if more > 0 {
        found.push(format!("… and {more} more lines"));
    }
    found
}

/// `text` without whitespace and double quotes: JSON comes back formatted differently
/// than written, and arguments cast with the tool's schema lose their quotes (`"3"`).
fn squeezed(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '"')
        .collect()
}

/// The stretches of `line` between its `<...>` tags and special tokens.
fn between_tags(line: &str) -> impl Iterator<Item = &str> {
    let mut stretches = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('<') {
        let Some(end) = rest[start..].find('>') else {
            break;
        };
        stretches.push(&rest[..start]);
        rest = &rest[start + end + 1..];
    }
    stretches.push(rest);
    stretches.into_iter()
}

/// A line that is only special tokens or tags, which anchors consume.
fn is_markup(line: &str) -> bool {
    let mut rest = line;
    while let Some(stripped) = rest.strip_prefix('<') {
        match stripped.find('>') {
            Some(end) => rest = stripped[end + 1..].trim_start(),
            None => return false,
        }
    }
    rest.is_empty()
}

/// Every string in `value`, and each object's and list's JSON text (tool-call arguments
/// were written as JSON and come back as objects; a list of calls as one JSON list).
fn collect_strings(value: &Json, into: &mut Vec<String>) {
    match value {
        Json::String(text) => into.push(text.clone()),
        Json::Array(items) => {
            into.push(value.to_string());
            items.iter().for_each(|item| collect_strings(item, into));
        }
        Json::Object(map) => {
            into.push(value.to_string());
            map.values().for_each(|item| collect_strings(item, into));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn qwen_schema() -> Json {
        json!({
            "defaults": {"role": "assistant"},
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "reasoning_content": {"open": "<think>", "close_pattern": "</think>\\s*"},
                "tool_calls": {"open_pattern": "\\s*<tool_call>", "close_pattern": "</tool_call>",
                               "repeats": true, "content": "json",
                               "transform": {"type": "function", "function": "{content}"}},
                "content": {"close_pattern": "\\s*<\\|im_end\\|>"}
            }
        })
    }

    #[test]
    fn reasoning_and_two_calls_become_one_message_with_nothing_left_over() {
        let output = "<think>\nTwo cities.\n</think>\n\nChecking both.\n<tool_call>\n\
            {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>\n\
            <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n\
            </tool_call><|im_end|>";
        let Pasted::Message { message, unplaced } =
            parse_with(&qwen_schema(), output, "", &[], &ParseLimits::default())
        else {
            panic!("expected a message");
        };
        assert_eq!(message["reasoning_content"], "Two cities.");
        assert_eq!(message["tool_calls"].as_array().map(Vec::len), Some(2));
        assert!(unplaced.is_empty(), "{unplaced:?}");
    }

    #[test]
    fn a_one_line_output_whose_stretches_went_to_different_fields_is_placed() {
        // The bundled chatml-with-headers-tools format: text, then the calls as one list.
        let schema = json!({
            "defaults": {"role": "assistant"},
            "start_anchor": "<|start_header_id|>assistant<|end_header_id|>",
            "fields": {
                "tool_calls": {"open": "<|tool_start|>", "close": "<|tool_end|>", "content": "json"},
                "content": {"close_pattern": "<\\|eot_id\\|>|</s>"}
            }
        });
        let output = "Checking.<|tool_start|>[{\"type\": \"function\", \"function\": {\"name\": \
            \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}]<|tool_end|><|eot_id|>";
        let Pasted::Message { message, unplaced } =
            parse_with(&schema, output, "", &[], &ParseLimits::default())
        else {
            panic!("expected a message");
        };
        assert_eq!(message["content"], "Checking.");
        assert!(unplaced.is_empty(), "{unplaced:?}");
        // A stretch that went nowhere is still reported.
        let output = "Checking.<|eot_id|>lost";
        let Pasted::Message { unplaced, .. } =
            parse_with(&schema, output, "", &[], &ParseLimits::default())
        else {
            panic!("expected a message");
        };
        assert_eq!(unplaced, vec!["Checking.<|eot_id|>lost"]);
    }

    #[test]
    fn text_the_message_lost_is_reported() {
        let output = "Hi!<|im_end|>\nafter the end";
        let outcome = parse_with(&qwen_schema(), output, "", &[], &ParseLimits::default());
        let Pasted::Message { unplaced, message } = outcome else {
            panic!("expected a message: {outcome:?}");
        };
        // The content region ends at the first close, and the implicit region restarts
        // after it: transformers keeps the text after the end and drops "Hi!".
        assert_eq!(message["content"], "after the end");
        assert_eq!(unplaced, ["Hi!<|im_end|>"]);
    }

    #[test]
    fn a_schema_that_backtracks_without_end_fails_at_the_deadline() {
        let schema = json!({"start_anchor": "A",
            "fields": {"content": {"close_pattern": "(?:(?=a)a|a)*b(?!d)"}}});
        let output = format!("{}bd", "a".repeat(40));
        let limits = ParseLimits::new(std::time::Duration::from_millis(100));
        let outcome = parse_with(&schema, &output, "", &[], &limits);
        assert!(
            matches!(outcome, Pasted::Failed(ref why) if why.contains("deadline")),
            "{outcome:?}"
        );
    }

    #[test]
    fn unplaced_lines_of_a_long_output_are_counted_past_the_first() {
        let schema =
            json!({"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>"}}});
        let output = format!("<t>kept</t>\n{}", "lost line\n".repeat(200));
        let Pasted::Message { unplaced, .. } =
            parse_with(&schema, &output, "", &[], &ParseLimits::default())
        else {
            panic!("expected a message");
        };
        assert_eq!(unplaced.len(), MAX_UNPLACED + 1);
        assert_eq!(
            unplaced.last().map(String::as_str),
            Some("… and 150 more lines")
        );
    }

    #[test]
    fn an_output_that_does_not_parse_keeps_its_error() {
        let schema = json!({"fields": {"tool_calls": {"open": "<c>", "close": "</c>",
            "content": "json", "optional": false}}});
        let outcome = parse_with(&schema, "<c>{broken</c>", "", &[], &ParseLimits::default());
        assert!(
            matches!(outcome, Pasted::Failed(ref why) if !why.is_empty()),
            "{outcome:?}"
        );
    }
}
