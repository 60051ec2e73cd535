//! `round-trip`: with the model's `response_template` (its `tokenizer_config.json`), the
//! template's own rendering of an assistant turn, cut out as the model would have
//! generated it, must parse back into the same message: a plain reply, one with
//! reasoning, one with a tool call (arguments as an object, transformers' form).

use serde_json::{json, Value as Json};

use super::lab::{Lab, CALL_NAME};
use super::scenarios::RESULT_TEXT;
use super::{Finding, Rule};
use crate::inspect::{tool_definition, Cancelled, ReasoningFormat};
use crate::inspect::{PROBE_REASONING, PROBE_REPLY, USER_NEEDLE};
use crate::parse::check_round_trip;
use chatplate_render::{Conversation, RenderControl};

/// The first assistant turn that does not survive the round trip.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let Some((parser, from)) = &lab.surroundings.response_template else {
        return Ok(Vec::new());
    };
    // Typed parts never come back from a parser as they went in: nothing to compare.
    if lab.caps.content.requires_typed_content.value {
        return Ok(Vec::new());
    }
    let control = RenderControl::new(lab.cancel.clone()).without_deadline();
    for (messages, tools) in conversations(lab) {
        let conversation = Conversation::new(messages)
            .with_tools(tools)
            .with_variables(lab.settings.variables.clone())
            .with_clock(Some(lab.settings.clock));
        let Err(failure) = check_round_trip(lab.template, &conversation, parser, &control) else {
            continue;
        };
        if lab.cancel.is_cancelled() {
            return Err(Cancelled);
        }
        // A conversation the template does not render is the crash rule's business.
        if failure.problem.starts_with("rendering failed") {
            continue;
        }
        let roles: Vec<&str> = (conversation.messages.iter())
            .filter_map(|m| m.get("role").and_then(Json::as_str))
            .collect();
        let mut finding = Finding::new(
            Rule::RoundTrip,
            format!(
                "the response_template from {from} does not give the assistant turn back: {}",
                failure.problem
            ),
        )
        .on(roles.join(" → "));
        if !failure.expected.is_empty() {
            finding = finding.showing(format!(
                "sent:   {}\nparsed: {}",
                compact(&failure.expected),
                compact(&failure.actual)
            ));
        }
        return Ok(vec![finding]);
    }
    Ok(Vec::new())
}

/// The messages a parser can give back exactly: no call ids, no empty content beside
/// tool calls, reasoning under `reasoning_content` (transformers aliases `thinking`).
fn conversations(lab: &Lab) -> Vec<(Vec<Json>, Option<Vec<Json>>)> {
    let user = lab.message("user", USER_NEEDLE);
    let reply = json!({"role": "assistant", "content": PROBE_REPLY});
    let mut found = vec![(vec![user.clone(), reply], None)];
    let caps = &lab.caps;
    let named_field = matches!(
        caps.reasoning.reasoning_format.value,
        ReasoningFormat::ReasoningContentField | ReasoningFormat::ThinkingField
    );
    if named_field && !caps.reasoning.reasoning_requires_tools.value {
        let thought = json!({"role": "assistant", "content": PROBE_REPLY,
            "reasoning_content": PROBE_REASONING});
        found.push((vec![user.clone(), thought], None));
    }
    if caps.tools.supports_tool_calls.value {
        let call = json!({"type": "function",
            "function": {"name": CALL_NAME, "arguments": {"arg": "ArgValue"}}});
        let message = json!({"role": "assistant", "tool_calls": [call]});
        let tools = Some(vec![tool_definition()]);
        found.push((vec![user.clone(), message.clone()], tools.clone()));
        if caps.tools.supports_tool_responses.value && named_field {
            // The answer after a tool's result, with the reasoning that led to it.
            let answer = json!({"role": "assistant", "content": PROBE_REPLY,
                "reasoning_content": PROBE_REASONING});
            let result = json!({"role": "tool", "content": RESULT_TEXT});
            found.push((vec![user, message, result, answer], tools));
        }
    }
    found
}

/// Pretty JSON on one line.
fn compact(pretty: &str) -> String {
    serde_json::from_str::<Json>(pretty)
        .map_or_else(|_| pretty.trim().to_string(), |v| v.to_string())
}
