//! `reasoning-dropped` and `prefix-unstable`: one more turn played out as a server sees
//! it. The conversation with the assistant's reply is what a server has cached (the
//! request and the tokens it generated); the next request must start with exactly
//! those bytes, or the cache is lost and the whole prompt is processed again, every
//! turn.
//!
//! Played with a plain reply, after a system message, after a tool call (the next
//! message is its result) and with reasoning. When the reasoning case breaks the prefix
//! and the reasoning text is gone from the next request, the template drops reasoning
//! from history (`reasoning-dropped`); any other break is `prefix-unstable`.

use serde_json::Value as Json;

use super::lab::Lab;
use super::scenarios::RESULT_TEXT;
use super::{Finding, Rule};
use crate::inspect::text::common_prefix_len;
use crate::inspect::{text_excerpt, tool_definition, Cancelled, Probe};
use crate::inspect::{PROBE_NEXT, PROBE_REASONING, PROBE_REPLY, SYSTEM_NEEDLE, USER_NEEDLE};

/// One turn to play: the cached conversation (ending with the reply) and what follows.
struct Case {
    cached: Vec<Json>,
    next: Json,
    tools: Option<Vec<Json>>,
    reasoning: bool,
}

/// The findings of both rules.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let mut findings: Vec<Finding> = Vec::new();
    for case in cases(lab) {
        let Some(finding) = play(lab, &case)? else {
            continue;
        };
        if !findings.iter().any(|f| f.rule == finding.rule) {
            findings.push(finding);
        }
    }
    Ok(findings)
}

fn cases(lab: &Lab) -> Vec<Case> {
    let caps = &lab.caps;
    let user = lab.message("user", USER_NEEDLE);
    let reply = lab.message("assistant", PROBE_REPLY);
    let next = lab.message("user", PROBE_NEXT);
    let case = |cached: Vec<Json>, next: &Json| Case {
        cached,
        next: next.clone(),
        tools: None,
        reasoning: false,
    };
    let mut found = vec![case(vec![user.clone(), reply.clone()], &next)];
    if caps.roles.supports_system_role.value {
        let system = lab.message("system", SYSTEM_NEEDLE);
        found.push(case(vec![system, user.clone(), reply], &next));
    }
    if caps.tools.supports_tool_calls.value && caps.tools.supports_tool_responses.value {
        let mut calls = case(
            vec![user.clone(), lab.calls(1)],
            &lab.tool_result(RESULT_TEXT),
        );
        calls.tools = caps
            .tools
            .supports_tools
            .value
            .then(|| vec![tool_definition()]);
        found.push(calls);
    }
    if caps.reasoning.supports_reasoning.value {
        let maker = lab.maker();
        let after = maker.after_reply();
        let follows = after.first().cloned().unwrap_or(next);
        let mut thinking = case(
            vec![user, maker.reply(PROBE_REASONING, PROBE_REPLY)],
            &follows,
        );
        thinking.reasoning = true;
        found.push(thinking);
    }
    found
}

/// The finding when the cached prompt is not a prefix of the next request.
fn play(lab: &Lab, case: &Case) -> Result<Option<Finding>, Cancelled> {
    let with_tools = |probe: Probe| match &case.tools {
        Some(tools) => probe.with_tools(tools.clone()),
        None => probe,
    };
    let cached = with_tools(Probe::of(case.cached.clone()));
    let mut grown = case.cached.clone();
    grown.push(case.next.clone());
    let request = with_tools(Probe::of(grown)).with_generation_prompt();
    let (Ok(earlier), Ok(later)) = (lab.render(&cached)?, lab.render(&request)?) else {
        return Ok(None);
    };
    if later.starts_with(&earlier) {
        return Ok(None);
    }
    let at = common_prefix_len(&earlier, &later);
    let dropped =
        case.reasoning && earlier.contains(PROBE_REASONING) && !later.contains(PROBE_REASONING);
    let (rule, what) = if dropped {
        (
            Rule::ReasoningDropped,
            "the next request drops the earlier turn's reasoning",
        )
    } else {
        (
            Rule::PrefixUnstable,
            "the next request rewrites the earlier prompt",
        )
    };
    let message = format!(
        "{what}: it differs from the cached prompt at byte {at} of {}, so a server's KV \
         cache is lost and {} processed again every turn",
        earlier.len(),
        cost(lab, &earlier, at)
    );
    let evidence = format!(
        "cached: {}\nnext:   {}",
        text_excerpt(&earlier, at.saturating_sub(40), 120),
        text_excerpt(&later, at.saturating_sub(40), 120)
    );
    let scenario = format!("{} (then {})", cached.describe(), role(&case.next));
    Ok(Some(
        Finding::new(rule, message).on(scenario).showing(evidence),
    ))
}

fn role(message: &Json) -> String {
    let role = message.get("role").and_then(Json::as_str).unwrap_or("?");
    format!("a {role} message")
}

/// What is processed again from byte `at`: tokens when the model's tokenizer is at
/// hand, else bytes.
fn cost(lab: &Lab, earlier: &str, at: usize) -> String {
    #[cfg(feature = "tokens")]
    if let Some(tokenizer) = &lab.surroundings.tokenizer {
        if let Ok(tokens) = tokenizer.tokenize(earlier) {
            let from = (tokens.tokens.iter())
                .position(|t| t.end > at)
                .unwrap_or(tokens.len());
            return format!("{} of its {} tokens are", tokens.len() - from, tokens.len());
        }
    }
    let _ = lab;
    format!("its last {} bytes are", earlier.len() - at)
}
