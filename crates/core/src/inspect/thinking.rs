//! Thinking switches: variables that change what follows the user's text (the
//! generation prompt), or
//! whether an assistant turn's reasoning shows, when set to true rather than false.
//!
//! `enable_thinking` counts when it changes anything (Apertus prints "Deliberation:
//! enabled" in its developer block). For other variables only what follows the user's
//! text is compared (the generation prompt, or what a
//! template like Command R7B appends after the last turn even without one), not the
//! whole prompt, so a variable that changes a system block (R7B's `developer_preamble`)
//! is not taken for a thinking switch; and only renders that succeed count, so a list
//! variable that fails as a boolean is not either.

use serde_json::{json, Value as Json};

use super::capabilities::Decided;
use super::probe::{Probe, Prober};
use super::text::{describe_difference, excerpt};
use super::Cancelled;

/// The switches found, each with how it changes the prompt.
pub(crate) struct Switches {
    switches: Vec<(String, String)>,
    probes: String,
}

impl Switches {
    /// Toggles `enable_thinking` and every template variable on `[user]` (whose text is
    /// `user_text`) with the generation prompt and, when the template renders
    /// reasoning, on `history` (an exchange whose reasoning is `needle`).
    pub(crate) fn probe(
        prober: &Prober,
        user: Json,
        user_text: &str,
        history: Option<(Probe, &str)>,
        variables: &[String],
    ) -> Result<Self, Cancelled> {
        let opening = Probe::of(vec![user]);
        let mut candidates: Vec<String> = variables.to_vec();
        if !candidates.iter().any(|v| v == "enable_thinking") {
            candidates.insert(0, "enable_thinking".into());
        }
        let mut switches = Vec::new();
        for name in candidates {
            let anywhere = name == "enable_thinking";
            let found = match opening_difference(prober, &opening, user_text, &name, anywhere)? {
                Some(found) => Some(found),
                None => match &history {
                    Some((probe, needle)) => reasoning_difference(prober, probe, needle, &name)?,
                    None => None,
                },
            };
            if let Some(difference) = found {
                switches.push((name, difference));
            }
        }
        let mut probes = format!("{} + generation prompt", opening.describe());
        if let Some((probe, _)) = &history {
            probes.push_str(&format!(" / {}", probe.describe()));
        }
        Ok(Switches { switches, probes })
    }

    /// Whether `enable_thinking` is one of the switches.
    pub(crate) fn honours_enable_thinking(&self) -> Decided<bool> {
        let found = self
            .switches
            .iter()
            .find(|(name, _)| name == "enable_thinking");
        let observed = match found {
            Some((_, difference)) => difference.clone(),
            None => "enable_thinking=true and =false render the same after the user's text and \
                     show the same reasoning"
                .to_string(),
        };
        Decided::new(
            found.is_some(),
            format!("{}, with enable_thinking=true and =false", self.probes),
            observed,
        )
    }

    /// Every switch.
    pub(crate) fn decided(&self) -> Decided<Vec<String>> {
        let names: Vec<String> = self.switches.iter().map(|(n, _)| n.clone()).collect();
        let observed = if self.switches.is_empty() {
            "no variable changes what follows the user's text or the reasoning shown".to_string()
        } else {
            self.switches
                .iter()
                .map(|(name, difference)| format!("{name}: {difference}"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        Decided::new(
            names,
            format!("{}, each template variable =true and =false", self.probes),
            observed,
        )
    }
}

/// What follows the user's text (with `anywhere`, the whole prompt) with `name` false
/// and true, when both render and differ.
fn opening_difference(
    prober: &Prober,
    opening: &Probe,
    user_text: &str,
    name: &str,
    anywhere: bool,
) -> Result<Option<String>, Cancelled> {
    if anywhere {
        let render = |value: bool| -> Result<Option<String>, Cancelled> {
            let probe = opening.clone().with_variable(name, json!(value));
            Ok(prober.render(&probe.with_generation_prompt())?.ok())
        };
        if let (Some(off), Some(on)) = (render(false)?, render(true)?) {
            if off != on {
                return Ok(Some(describe_difference(&off, &on, "false", "true")));
            }
        }
    }
    let off = after_user(prober, opening, user_text, name, false)?;
    let on = after_user(prober, opening, user_text, name, true)?;
    Ok(match (off, on) {
        (Some(off), Some(on)) if off != on => Some(format!(
            "after the user's text, {} with false, {} with true",
            excerpt(&off, 0, 60),
            excerpt(&on, 0, 60)
        )),
        _ => None,
    })
}

/// The prompt after the user's text, with the generation prompt and `name` = `value`.
fn after_user(
    prober: &Prober,
    opening: &Probe,
    user_text: &str,
    name: &str,
    value: bool,
) -> Result<Option<String>, Cancelled> {
    let probe = opening
        .clone()
        .with_variable(name, json!(value))
        .with_generation_prompt();
    Ok(prober.render(&probe)?.ok().and_then(|text| {
        let end = text.rfind(user_text)? + user_text.len();
        Some(text[end..].to_string())
    }))
}

/// Whether the reasoning `needle` shows with `name` true but not false, or the reverse.
fn reasoning_difference(
    prober: &Prober,
    history: &Probe,
    needle: &str,
    name: &str,
) -> Result<Option<String>, Cancelled> {
    let shows = |value: bool| -> Result<Option<bool>, Cancelled> {
        let probe = history.clone().with_variable(name, json!(value));
        Ok(prober
            .render(&probe)?
            .ok()
            .map(|text| text.contains(needle)))
    };
    Ok(match (shows(false)?, shows(true)?) {
        (Some(off), Some(on)) if off != on => Some(format!(
            "the assistant's reasoning shows with {} only",
            if on { "true" } else { "false" }
        )),
        _ => None,
    })
}
