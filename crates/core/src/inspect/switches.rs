//! What the template's own variables and the clock change, by rendering a reference
//! conversation with different values.

use jiff::civil::DateTime;
use serde_json::json;

use super::capabilities::Decided;
use super::content::{ContentCaps, SECOND_USER_NEEDLE, USER_NEEDLE};
use super::probe::{Probe, Prober};
use super::roles::SYSTEM_NEEDLE;
use super::tools::tool_definition;
use super::variables::TemplateVariable;
use super::Cancelled;

const VALUE_NEEDLE: &str = "VariableNeedle7713";

/// What setting one variable does to the reference conversation's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableEffect {
    /// `true` and `false` render different prompts.
    pub toggles: bool,
    /// A string value shows up in the prompt.
    pub printed: bool,
    /// The prompt without a probe value equals the one with `true` (`Some(true)`) or
    /// `false` (`Some(false)`): the default the template behaves as.
    pub behaves_as: Option<bool>,
}

/// Conversations that render, richest first: user, assistant, user with tools and a
/// generation prompt, with and without a leading system message (some templates only
/// read a variable when there is no system message), else a single user message.
pub(crate) fn reference_probes(
    prober: &Prober,
    content: &ContentCaps,
) -> Result<Vec<Probe>, Cancelled> {
    let exchange = vec![
        content.user(USER_NEEDLE),
        content.message("assistant", "ReplyNeedle3390"),
        content.user(SECOND_USER_NEEDLE),
    ];
    let mut with_system = vec![content.message("system", SYSTEM_NEEDLE)];
    with_system.extend(exchange.clone());
    let tools = vec![tool_definition()];
    let candidates = [
        Probe::of(exchange.clone()).with_tools(tools.clone()),
        Probe::of(with_system.clone()).with_tools(tools),
        Probe::of(exchange),
        Probe::of(with_system),
        Probe::of(vec![content.user(USER_NEEDLE)]),
    ];
    let mut found = Vec::new();
    for candidate in candidates {
        let candidate = candidate.with_generation_prompt();
        if found.len() < 2 && prober.render(&candidate)?.is_ok() {
            found.push(candidate);
        }
    }
    if found.is_empty() {
        found.push(Probe::of(vec![content.user(USER_NEEDLE)]));
    }
    Ok(found)
}

/// Whether the reference prompt changes between two clocks.
pub(crate) fn uses_clock(prober: &Prober, reference: &Probe) -> Result<Decided<bool>, Cancelled> {
    let clocks = [
        DateTime::constant(2026, 1, 15, 0, 0, 0, 0),
        DateTime::constant(2027, 8, 30, 13, 45, 59, 0),
    ];
    let mut outputs = Vec::new();
    for clock in clocks {
        let mut probe = reference.clone();
        probe.clock = Some(clock);
        outputs.push(prober.render(&probe)?);
    }
    let observed = match (&outputs[0], &outputs[1]) {
        (Ok(a), Ok(b)) if a != b => {
            super::text::describe_difference(a, b, "2026-01-15", "2027-08-30 13:45:59")
        }
        (Ok(_), Ok(_)) => "the prompt is the same at both times".to_string(),
        _ => "the reference conversation does not render".to_string(),
    };
    let value = matches!((&outputs[0], &outputs[1]), (Ok(a), Ok(b)) if a != b);
    Ok(Decided::new(
        value,
        format!(
            "{}, at 2026-01-15T00:00:00 and 2027-08-30T13:45:59",
            reference.describe()
        ),
        observed,
    ))
}

/// Each variable set to true, false and a string, on each reference conversation; the
/// first reference where it makes a difference decides.
pub(crate) fn effects(
    prober: &Prober,
    references: &[Probe],
    variables: &[TemplateVariable],
) -> Result<Vec<Decided<VariableEffect>>, Cancelled> {
    let mut effects = Vec::with_capacity(variables.len());
    for variable in variables {
        let mut decided = None;
        for reference in references {
            let effect = effect(prober, reference, &variable.name)?;
            let differs = effect.value.toggles || effect.value.printed;
            if decided.is_none() || differs {
                decided = Some(effect);
            }
            if differs {
                break;
            }
        }
        effects.push(decided.expect("at least one reference"));
    }
    Ok(effects)
}

fn effect(
    prober: &Prober,
    reference: &Probe,
    name: &str,
) -> Result<Decided<VariableEffect>, Cancelled> {
    let unset = prober.render(reference)?;
    let with = |value| reference.clone().with_variable(name, value);
    let on = prober.render(&with(json!(true)))?;
    let off = prober.render(&with(json!(false)))?;
    let text = prober.render(&with(json!(VALUE_NEEDLE)))?;
    let effect = VariableEffect {
        toggles: on != off,
        printed: text.as_ref().is_ok_and(|t| t.contains(VALUE_NEEDLE)),
        behaves_as: match (&unset, &on, &off) {
            (Ok(u), Ok(t), Ok(f)) if t != f && u == t => Some(true),
            (Ok(u), Ok(t), Ok(f)) if t != f && u == f => Some(false),
            _ => None,
        },
    };
    let observed = describe(&effect, &on, &off);
    Ok(Decided::new(
        effect,
        format!(
            "{}, with {name}=true, =false and =\"{VALUE_NEEDLE}\"",
            reference.describe()
        ),
        observed,
    ))
}

fn describe(
    effect: &VariableEffect,
    on: &Result<String, chatplate_render::RenderError>,
    off: &Result<String, chatplate_render::RenderError>,
) -> String {
    let mut parts = Vec::new();
    match (on, off) {
        (Ok(on), Ok(off)) if on != off => {
            parts.push(super::text::describe_difference(off, on, "false", "true"));
        }
        (Err(err), _) => parts.push(format!("with true {}", super::probe::failure_text(err))),
        (_, Err(err)) => parts.push(format!("with false {}", super::probe::failure_text(err))),
        _ => parts.push("true and false render the same prompt".into()),
    }
    if effect.printed {
        parts.push("a string value is printed".into());
    }
    if let Some(value) = effect.behaves_as {
        parts.push(format!("unset, it renders as {value}"));
    }
    parts.join("; ")
}
