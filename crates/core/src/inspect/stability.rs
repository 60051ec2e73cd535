//! Prefix stability (KV-cache safety): does the prompt keep its earlier bytes when the
//! conversation grows by one turn?
//!
//! A server that caches the prompt's tokens reuses them only if the next request starts
//! with exactly the same bytes. One turn is played out as a server sees it: the request
//! that asks for a reply (rendered with the generation prompt), the conversation with
//! that reply (without it), and the next request after one more message. Both earlier
//! prompts must be byte prefixes of the next request.
//!
//! The reply and the next message come from the conversation when it already ends with
//! an assistant reply; otherwise a probe reply is appended, with reasoning when the
//! conversation's own assistant messages carry some (a reasoning model's reply would).
//! After a reply with tool calls the next message is a tool result, after any other
//! reply a user message.

use chatplate_render::remedy::{means, Knob};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::attribution::Source;
use super::query::source_at;
use super::text::common_prefix_len;
use super::{Cancelled, InspectError};
use chatplate_render::{
    CancelToken, CompiledTemplate, ContinueFinal, Conversation, Limits, RenderErrorKind,
};

/// Content of the probe reply.
pub(crate) const PROBE_REPLY: &str = "Here is the answer.";
/// Reasoning of the probe reply.
pub(crate) const PROBE_REASONING: &str = "Let me think about it.";
/// Content of the probe user message or tool result that follows the reply.
pub(crate) const PROBE_NEXT: &str = "Thanks! One more question.";

/// Which earlier prompt a check compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlierPrompt {
    /// The conversation up to and including the assistant's reply, no generation prompt.
    WithoutGenerationPrompt,
    /// The request that produced the reply: up to the reply, with the generation prompt.
    WithGenerationPrompt,
}

impl EarlierPrompt {
    /// The JSON key / display name.
    pub fn name(self) -> &'static str {
        match self {
            EarlierPrompt::WithoutGenerationPrompt => "without_generation_prompt",
            EarlierPrompt::WithGenerationPrompt => "with_generation_prompt",
        }
    }
}

/// One earlier prompt compared with the next request.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixCheck {
    /// Which earlier prompt.
    pub earlier_prompt: EarlierPrompt,
    /// The earlier prompt.
    pub earlier: String,
    /// The next request.
    pub later: String,
    /// `None` when the earlier prompt is a prefix; else the first differing byte.
    pub differs_at: Option<usize>,
    /// The part of the earlier prompt that produced the first differing byte, when
    /// prefix renders prove it (an index into the earlier conversation).
    pub responsible: Option<Source>,
}

/// The outcome of playing out one more turn.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixStability {
    /// Messages appended to the conversation (the probe reply and/or the next message).
    pub appended: Vec<Json>,
    /// Number of messages of the user's conversation.
    pub original_len: usize,
    /// The two checks (the request check is missing when the conversation has no
    /// earlier request, i.e. it is a single assistant message).
    pub checks: Vec<PrefixCheck>,
}

impl PrefixStability {
    /// Whether every earlier prompt is a prefix of the next request.
    pub fn stable(&self) -> bool {
        self.checks.iter().all(|c| c.differs_at.is_none())
    }
}

/// Plays out one more turn of `conversation` and compares the prompts.
pub fn prefix_stability(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<PrefixStability, InspectError> {
    let base = conversation.clone().with_continue_final(ContinueFinal::Off);
    let mut replied = base.clone();
    let mut appended = Vec::new();
    if !ends_with_reply(&base.messages) {
        let reply = probe_reply(uses_reasoning(&base.messages));
        replied.messages.push(reply.clone());
        appended.push(reply);
    }
    let next = next_message(replied.messages.last());
    appended.push(next.clone());
    let mut grown = replied.clone();
    grown.messages.push(next);
    let later = render(template, &grown, true, cancel)?;
    let mut checks = vec![check(
        template,
        &replied,
        false,
        &later,
        EarlierPrompt::WithoutGenerationPrompt,
        cancel,
    )?];
    let mut request = replied.clone();
    request.messages.pop();
    if !request.messages.is_empty() {
        checks.push(check(
            template,
            &request,
            true,
            &later,
            EarlierPrompt::WithGenerationPrompt,
            cancel,
        )?);
    }
    Ok(PrefixStability {
        appended,
        original_len: conversation.messages.len(),
        checks,
    })
}

fn check(
    template: &CompiledTemplate,
    earlier_conversation: &Conversation,
    generation_prompt: bool,
    later: &str,
    which: EarlierPrompt,
    cancel: &CancelToken,
) -> Result<PrefixCheck, InspectError> {
    let earlier = render(template, earlier_conversation, generation_prompt, cancel)?;
    let differs_at = (!later.starts_with(&earlier)).then(|| common_prefix_len(&earlier, later));
    let responsible = match differs_at {
        Some(at) => {
            let mut conversation = earlier_conversation.clone();
            conversation.add_generation_prompt = generation_prompt;
            source_at(template, &conversation, &earlier, at, cancel)?
        }
        None => None,
    };
    Ok(PrefixCheck {
        earlier_prompt: which,
        earlier,
        later: later.to_string(),
        differs_at,
        responsible,
    })
}

fn render(
    template: &CompiledTemplate,
    conversation: &Conversation,
    generation_prompt: bool,
    cancel: &CancelToken,
) -> Result<String, InspectError> {
    let conversation = conversation
        .clone()
        .with_generation_prompt(generation_prompt);
    template
        .render_cancellable(conversation, cancel)
        .map_err(|err| match err.kind {
            RenderErrorKind::Cancelled => InspectError::Cancelled(Cancelled),
            _ => InspectError::Render(err),
        })
}

fn ends_with_reply(messages: &[Json]) -> bool {
    messages
        .last()
        .is_some_and(|m| m.get("role").and_then(Json::as_str) == Some("assistant"))
}

/// The probe reply: content, and reasoning when asked for.
pub(crate) fn probe_reply(with_reasoning: bool) -> Json {
    if with_reasoning {
        json!({"role": "assistant", "content": PROBE_REPLY, "reasoning_content": PROBE_REASONING})
    } else {
        json!({"role": "assistant", "content": PROBE_REPLY})
    }
}

/// Whether an assistant message carries reasoning under any of transformers' names.
fn uses_reasoning(messages: &[Json]) -> bool {
    messages.iter().any(|m| {
        m.get("role").and_then(Json::as_str) == Some("assistant")
            && ["reasoning_content", "thinking", "reasoning"]
                .iter()
                .any(|key| m.get(*key).is_some_and(|v| !v.is_null()))
    })
}

/// A tool result for the first call of a reply with tool calls, else a user message.
fn next_message(reply: Option<&Json>) -> Json {
    let first_call = reply
        .and_then(|r| r.get("tool_calls"))
        .and_then(Json::as_array)
        .and_then(|calls| calls.first());
    match first_call {
        Some(call) => {
            let mut result = json!({"role": "tool", "content": PROBE_NEXT});
            if let Some(id) = call.get("id") {
                result["tool_call_id"] = id.clone();
            }
            if let Some(name) = call.pointer("/function/name").or_else(|| call.get("name")) {
                result["name"] = name.clone();
            }
            result
        }
        None => json!({"role": "user", "content": PROBE_NEXT}),
    }
}

/// Renders [`prefix_stability`] makes (the next request and both earlier prompts), each
/// bounded like one render of the grown conversation by `chatplate check`.
const STABILITY_RENDERS: u32 = 3;

/// For `chatplate check`: `Err` with a report when one more turn of `conversation` does
/// not keep the earlier prompts as byte prefixes (or the check cannot run). Bounded
/// like the fixture's own render: compiled with `limits`, and given three times the
/// deadline for the grown conversation ([`Limits::deadline_for`]), at most
/// [`Limits::deadline_cap`] in all.
pub fn check_prefix_stable(
    source: &str,
    conversation: &Conversation,
    limits: Limits,
) -> Result<(), String> {
    let template = CompiledTemplate::compile(source, limits).map_err(|err| err.to_string())?;
    let allowed = limits.capped(
        limits
            .deadline_for(conversation.items() + 2)
            .saturating_mul(STABILITY_RENDERS),
    );
    let cancel = CancelToken::new();
    let stability = cancel_after(&cancel, allowed, || {
        prefix_stability(&template, conversation, &cancel)
    });
    let stability = stability.map_err(|err| match err {
        InspectError::Cancelled(_) => format!(
            "prefix stability could not be checked: its renders did not finish within {:.1} s \
             ({STABILITY_RENDERS} × the deadline for the grown conversation, at most {:.0} s \
             unless the deadline is longer; raise it with {})",
            allowed.as_secs_f64(),
            limits.deadline_cap().as_secs_f64(),
            means(Knob::Deadline)
        ),
        other => format!("prefix stability could not be checked: {other}"),
    })?;
    match describe_instability(&stability) {
        None => Ok(()),
        Some(report) => Err(report),
    }
}

/// Runs `work`, cancelling `cancel` once it has taken longer than `allowed`.
fn cancel_after<T>(cancel: &CancelToken, allowed: Duration, work: impl FnOnce() -> T) -> T {
    let (done, finished) = mpsc::channel::<()>();
    let timer = cancel.clone();
    // Without a timer thread the renders are still bounded by their step budget.
    let _ = std::thread::Builder::new()
        .name("chatplate-stability-deadline".into())
        .spawn(move || {
            if finished.recv_timeout(allowed) == Err(RecvTimeoutError::Timeout) {
                timer.cancel();
            }
        });
    let result = work();
    drop(done);
    result
}

/// A report of every failed check, `None` when the prompt is prefix-stable.
pub fn describe_instability(stability: &PrefixStability) -> Option<String> {
    let failed: Vec<String> = stability
        .checks
        .iter()
        .filter_map(|check| {
            let at = check.differs_at?;
            let who = check.responsible.map_or("not provable".to_string(), |s| {
                super::describe_source(s, stability.original_len)
            });
            Some(format!(
                "the earlier prompt {} is not a prefix of the next request: differs at byte {at} \
                 (produced by {who})\n  earlier: {}\n  later:   {}",
                check.earlier_prompt.name().replace('_', " "),
                super::text::excerpt(&check.earlier, at.saturating_sub(40), 160),
                super::text::excerpt(&check.later, at.saturating_sub(40), 160),
            ))
        })
        .collect();
    (!failed.is_empty()).then(|| failed.join("\n"))
}
