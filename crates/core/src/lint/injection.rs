//! `injection`: user or tool text that becomes special tokens in the prompt. With the
//! model's tokenizer at hand, one of the template's own special tokens (the
//! end-of-sequence token when the prompt has it, else the first one) is typed into a
//! user message and a tool result; if the tokenizer turns the typed text into the
//! special token, a user can end their turn and write the assistant's. A template that
//! strips or escapes the token, or a tokenizer with `split_special_tokens: true`,
//! passes.

use super::lab::Lab;
use super::scenarios::RESULT_TEXT;
use super::{Finding, Rule};
use crate::inspect::{Cancelled, Probe, PROBE_REPLY, SECOND_USER_NEEDLE, USER_NEEDLE};
use crate::tokens::injection::{find_in_spans, ContentSpan, TextSource};
use crate::tokens::ModelTokenizer;

/// The finding, when typed text becomes a special token.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let Some(tokenizer) = &lab.surroundings.tokenizer else {
        return Ok(Vec::new());
    };
    let Some(marker) = marker(lab, tokenizer)? else {
        return Ok(Vec::new());
    };
    let typed = format!("{USER_NEEDLE} {marker} typed");
    let mut probes = vec![(
        "user",
        Probe::of(vec![lab.message("user", &typed)]).with_generation_prompt(),
    )];
    let tools = &lab.caps.tools;
    if tools.supports_tool_calls.value && tools.supports_tool_responses.value {
        let result = lab.tool_result(&format!("{RESULT_TEXT} {marker} typed"));
        let messages = vec![lab.message("user", USER_NEEDLE), lab.calls(1), result];
        probes.push(("tool", Probe::of(messages).with_generation_prompt()));
    }
    for (role, probe) in probes {
        let Ok(prompt) = lab.render(&probe)? else {
            continue;
        };
        let Some(injected) = injected(tokenizer, &prompt, marker.as_str(), role) else {
            continue;
        };
        let finding = Finding::new(
            Rule::Injection,
            format!(
                "{role} text {} becomes the special token {injected}: whoever writes that \
                 text can close the turn and write the model's part",
                serde_json::to_string(&marker).unwrap_or_default()
            ),
        )
        .on(probe.describe());
        return Ok(vec![finding]);
    }
    Ok(Vec::new())
}

/// A special token the template itself writes into a plain exchange.
fn marker(lab: &Lab, tokenizer: &ModelTokenizer) -> Result<Option<String>, Cancelled> {
    let probe = Probe::of(vec![
        lab.message("user", USER_NEEDLE),
        lab.message("assistant", PROBE_REPLY),
        lab.message("user", SECOND_USER_NEEDLE),
    ])
    .with_generation_prompt();
    let Ok(prompt) = lab.render(&probe)? else {
        return Ok(None);
    };
    let Ok(tokens) = tokenizer.tokenize_split(&prompt, false) else {
        return Ok(None);
    };
    let specials: Vec<&str> = (tokens.tokens.iter())
        .filter(|t| t.special)
        .filter_map(|t| prompt.get(t.start..t.end))
        .map(str::trim)
        .filter(|t| !t.is_empty() && Some(*t) != lab.bos())
        .collect();
    let chosen = specials
        .iter()
        .find(|t| Some(**t) == lab.eos())
        .or(specials.first());
    Ok(chosen.map(|t| (*t).to_string()))
}

/// The special token the typed marker became, as `"<|im_end|>" (id 151645)`.
fn injected(tokenizer: &ModelTokenizer, prompt: &str, marker: &str, role: &str) -> Option<String> {
    let start = prompt.find(&format!(" {marker} typed"))? + 1;
    let span = ContentSpan {
        source: TextSource::Message {
            index: 0,
            role: role.to_string(),
        },
        range: start..start + marker.len(),
    };
    let tokens = tokenizer.tokenize(prompt).ok()?;
    let found = find_in_spans(tokenizer, prompt, &tokens, &[span]).ok()?;
    let hit = found.iter().find(|i| i.special && i.active)?;
    Some(format!(
        "{} (id {})",
        serde_json::to_string(&hit.token).unwrap_or_default(),
        hit.id
    ))
}
