//! `clock`: the prompt changes with the date (`strftime_now`), decided by rendering the
//! same conversation at two times. A fixture of such a template must pin its clock, or
//! its expected prompt is wrong the next day.

use super::lab::Lab;
use super::{Finding, Rule};

/// The finding, when two clocks give two prompts.
pub(crate) fn check(lab: &Lab) -> Vec<Finding> {
    let decided = &lab.caps.uses_clock;
    if !decided.value {
        return Vec::new();
    }
    let finding = Finding::new(
        Rule::Clock,
        format!("the prompt depends on the date: {}", decided.observed),
    )
    .at(lab.scan.first_ident("strftime_now"))
    .on(decided.probe.clone());
    vec![finding]
}
