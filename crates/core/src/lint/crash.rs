//! `crash`: the template raises or hits a bound on a conversation it claims to support.
//!
//! Each claimed scenario is rendered as the request a server makes (with the generation
//! prompt) and as the finished conversation training renders (closed by an assistant
//! reply). A template that cannot render a single user message at all is one finding;
//! one that does not compile is another (see [`compile_error`]).

use super::lab::Lab;
use super::scenarios::{ends_with_reply, Scenario};
use super::{Finding, Location, Rule};
use crate::inspect::{failure_text, Cancelled};
use chatplate_render::{RenderError, RenderErrorKind};

/// The reply that closes a scenario.
pub(crate) const FINAL_REPLY: &str = "FinalReplyNeedle6613";

/// The findings on every claimed scenario (one per distinct error).
pub(crate) fn check(lab: &Lab, scenarios: &[Scenario]) -> Result<Vec<Finding>, Cancelled> {
    let mut findings: Vec<Finding> = Vec::new();
    for scenario in scenarios {
        let mut probes = vec![scenario.request()];
        if !ends_with_reply(&scenario.messages) {
            probes.push(scenario.closed(lab.message("assistant", FINAL_REPLY)));
        }
        for probe in probes {
            let Err(err) = lab.render(&probe)? else {
                continue;
            };
            let finding = failed(&err, scenario.claim).on(probe.describe());
            if !findings.iter().any(|f| f.message == finding.message) {
                findings.push(finding);
            }
            break;
        }
    }
    Ok(findings)
}

/// The finding for a template that cannot render one user message: every other rule
/// would only repeat it.
pub(crate) fn no_render(lab: &Lab) -> Finding {
    let decided = &lab.caps.content.renders_user_message;
    let error = lab.caps.failures.first().map(|f| &f.error);
    Finding::new(
        Rule::Crash,
        format!(
            "the template cannot render a single user message: {}",
            decided.observed
        ),
    )
    .at(error.and_then(location_of))
    .on(decided.probe.clone())
}

/// The finding for a template that does not compile.
pub(crate) fn compile_error(err: &RenderError) -> Finding {
    Finding::new(
        Rule::Crash,
        format!("the template does not compile: {}", err.message),
    )
    .at(location_of(err))
}

fn failed(err: &RenderError, claim: &str) -> Finding {
    let what = match err.kind {
        RenderErrorKind::Limit | RenderErrorKind::Timeout => {
            format!("the render hits a bound: {}", err.message)
        }
        _ => failure_text(err),
    };
    Finding::new(
        Rule::Crash,
        format!("{what} (its probes show it renders {claim})"),
    )
    .at(location_of(err))
}

/// Where in the template an error happened, when it says.
pub(crate) fn location_of(err: &RenderError) -> Option<Location> {
    err.position.map(|position| Location {
        line: position.line,
        column: position.column,
    })
}
