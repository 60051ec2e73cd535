//! `generation-prompt`: the generation prompt must be exactly the text the template
//! writes before an assistant message's content, so that what the model generated
//! after it is the assistant message the next request shows. Checked with the
//! template's defaults and, when it honours `enable_thinking`, with it on and off;
//! a reply with reasoning counts too (a reasoning model's turn carries some).

use serde_json::json;

use super::lab::Lab;
use super::{Finding, Rule};
use crate::inspect::text::common_prefix_len;
use crate::inspect::{text_excerpt, Cancelled, Probe, PROBE_REASONING, PROBE_REPLY, USER_NEEDLE};

/// The first setting under which the generation prompt is not a prefix of the turn.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let mut variants = vec![None];
    if lab.caps.reasoning.honours_enable_thinking.value {
        variants.extend([Some(false), Some(true)]);
    }
    for thinking in variants {
        if let Some(finding) = variant(lab, thinking)? {
            return Ok(vec![finding]);
        }
    }
    Ok(Vec::new())
}

fn variant(lab: &Lab, thinking: Option<bool>) -> Result<Option<Finding>, Cancelled> {
    let set = |probe: Probe| match thinking {
        Some(value) => probe.with_variable("enable_thinking", json!(value)),
        None => probe,
    };
    let user = lab.message("user", USER_NEEDLE);
    let asked = set(Probe::of(vec![user.clone()])).with_generation_prompt();
    let Ok(prompt) = lab.render(&asked)? else {
        return Ok(None);
    };
    // A format without a generation prompt ([INST]...[/INST], then the reply) is
    // fine: the empty prompt is a prefix of every turn.
    let place = lab.scan.first_ident("add_generation_prompt");
    let mut replies = vec![lab.message("assistant", PROBE_REPLY)];
    let maker = lab.maker();
    if lab.caps.reasoning.supports_reasoning.value && maker.after_reply().is_empty() {
        replies.push(maker.reply(PROBE_REASONING, PROBE_REPLY));
    }
    let mut first = None;
    for reply in replies {
        let turn = set(Probe::of(vec![user.clone(), reply]));
        let Ok(rendered) = lab.render(&turn)? else {
            return Ok(None);
        };
        if rendered.starts_with(&prompt) {
            return Ok(None);
        }
        first.get_or_insert((turn, rendered));
    }
    let Some((turn, rendered)) = first else {
        return Ok(None);
    };
    let at = common_prefix_len(&prompt, &rendered);
    let evidence = format!(
        "generation prompt: {}\nassistant turn:    {}",
        text_excerpt(&prompt, at.saturating_sub(40), 100),
        text_excerpt(&rendered, at.saturating_sub(40), 100)
    );
    let message = format!(
        "the generation prompt is not a prefix of the assistant turn it asks for: they \
         differ at byte {at}, so what the model generates is not the message the next \
         request shows"
    );
    Ok(Some(
        Finding::new(Rule::GenerationPrompt, message)
            .at(place)
            .on(format!("{} / {}", asked.describe(), turn.describe()))
            .showing(evidence),
    ))
}
