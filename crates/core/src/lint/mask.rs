//! The assistant mask assistant-only training learns from (transformers'
//! `return_assistant_tokens_mask`, built from `{% generation %}` blocks):
//!
//! * `zero-mask`: no `{% generation %}` block at all (the mask is all zero; `info`, since
//!   an inference template does not need one), or an assistant reply rendered outside
//!   every block (`warning`: training silently skips it).
//! * `mask-untrained-prefix`: the mask covers text the generation prompt supplies at
//!   inference (the turn header, an empty `<think></think>` when thinking is off), so
//!   the model is trained to write what it is never asked to write. Checked with the
//!   template's defaults and with `enable_thinking` off and on when it honours it.

use std::ops::Range;

use serde_json::json;

use super::lab::Lab;
use super::scenarios::RESULT_TEXT;
use super::{Finding, Rule, Severity};
use crate::inspect::{text_excerpt, Cancelled, Probe, PROBE_REPLY, USER_NEEDLE};
use crate::training::masked_bytes;

const CLOSING_REPLY: &str = "ClosingReplyNeedle4407";

/// The findings of both rules.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    if !lab.template.has_generation_tag() {
        let finding = Finding::new(
            Rule::ZeroMask,
            "no {% generation %} block: transformers' assistant mask is all zero, so \
             assistant-only training on this template learns nothing (inference is not \
             affected)",
        );
        return Ok(vec![finding]);
    }
    let mut findings = outside(lab)?;
    findings.extend(untrained_prefix(lab)?);
    Ok(findings)
}

/// Assistant replies rendered outside every block.
fn outside(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let user = lab.message("user", USER_NEEDLE);
    let mut probes = vec![Probe::of(vec![
        user.clone(),
        lab.message("assistant", PROBE_REPLY),
    ])];
    let tools = &lab.caps.tools;
    if tools.supports_tool_calls.value && tools.supports_tool_responses.value {
        probes.push(Probe::of(vec![
            user,
            lab.calls(1),
            lab.tool_result(RESULT_TEXT),
            lab.message("assistant", CLOSING_REPLY),
        ]));
    }
    for probe in probes {
        let Ok(tracked) = lab.tracked(&probe)? else {
            continue;
        };
        let masked = masked_bytes(&tracked.prompt, &tracked.spans);
        for needle in [PROBE_REPLY, CLOSING_REPLY] {
            let Some(at) = tracked.prompt.find(needle) else {
                continue;
            };
            if covered(&masked, &(at..at + needle.len())) {
                continue;
            }
            let finding = Finding::new(
                Rule::ZeroMask,
                format!(
                    "the assistant's reply at byte {at} is outside every {{% generation %}} \
                     block: assistant-only training skips it"
                ),
            )
            .with_severity(Severity::Warning)
            .at(lab.scan.first_ident("generation"))
            .on(probe.describe())
            .showing(format!(
                "render: {}",
                text_excerpt(&tracked.prompt, at.saturating_sub(40), 100)
            ));
            return Ok(vec![finding]);
        }
    }
    Ok(Vec::new())
}

/// Masked text that the generation prompt supplies.
fn untrained_prefix(lab: &Lab) -> Result<Option<Finding>, Cancelled> {
    let mut variants = vec![None];
    if lab.caps.reasoning.honours_enable_thinking.value {
        variants.extend([Some(false), Some(true)]);
    }
    let user = lab.message("user", USER_NEEDLE);
    for thinking in variants {
        let set = |probe: Probe| match thinking {
            Some(value) => probe.with_variable("enable_thinking", json!(value)),
            None => probe,
        };
        let asked = set(Probe::of(vec![user.clone()])).with_generation_prompt();
        let turn = set(Probe::of(vec![
            user.clone(),
            lab.message("assistant", PROBE_REPLY),
        ]));
        let (Ok(prompt), Ok(tracked)) = (lab.render(&asked)?, lab.tracked(&turn)?) else {
            continue;
        };
        let shared = crate::inspect::text::common_prefix_len(&prompt, &tracked.prompt);
        let supplied = 0..shared;
        let masked = masked_bytes(&tracked.prompt, &tracked.spans);
        let Some(overlap) = masked.iter().find_map(|range| intersect(range, &supplied)) else {
            continue;
        };
        let text = &tracked.prompt[overlap.clone()];
        let setting = thinking.map_or(String::new(), |v| format!(" with enable_thinking={v}"));
        let message = format!(
            "the mask covers {} that the generation prompt already supplies at inference{setting} \
             (bytes {}..{}): the model is trained to write what it is given",
            serde_json::to_string(text).unwrap_or_default(),
            overlap.start,
            overlap.end
        );
        let finding = Finding::new(Rule::MaskUntrainedPrefix, message)
            .at(lab.scan.first_ident("generation"))
            .on(format!("{} / {}", asked.describe(), turn.describe()))
            .showing(format!(
                "generation prompt: {}",
                text_excerpt(&prompt, overlap.start.saturating_sub(40), 100)
            ));
        return Ok(Some(finding));
    }
    Ok(None)
}

fn covered(masked: &[Range<usize>], needle: &Range<usize>) -> bool {
    masked
        .iter()
        .any(|range| range.start <= needle.start && needle.end <= range.end)
}

fn intersect(a: &Range<usize>, b: &Range<usize>) -> Option<Range<usize>> {
    let range = a.start.max(b.start)..a.end.min(b.end);
    (range.start < range.end).then_some(range)
}
