//! `system-dropped`: a system message renders without its text and nothing raised. A
//! template that does not support the role should say so (raise); one that silently
//! loses it gives the model a conversation without its instructions. Checked alone,
//! with tool definitions (templates that build their own system block for tools drop
//! the user's there) and in a multi-turn chat.

use super::lab::Lab;
use super::{Finding, Rule};
use crate::inspect::{tool_definition, Cancelled, Probe, PROBE_REPLY, SECOND_USER_NEEDLE};
use crate::inspect::{SYSTEM_NEEDLE, USER_NEEDLE};

/// The first conversation whose prompt lacks the system text.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    let system = lab.message("system", SYSTEM_NEEDLE);
    let user = lab.message("user", USER_NEEDLE);
    let alone = Probe::of(vec![system.clone(), user.clone()]).with_generation_prompt();
    let mut probes = vec![alone.clone()];
    if lab.caps.tools.supports_tools.value {
        probes.push(alone.with_tools(vec![tool_definition()]));
    }
    probes.push(
        Probe::of(vec![
            system,
            user,
            lab.message("assistant", PROBE_REPLY),
            lab.message("user", SECOND_USER_NEEDLE),
        ])
        .with_generation_prompt(),
    );
    for probe in probes {
        let Ok(prompt) = lab.render(&probe)? else {
            continue;
        };
        if prompt.contains(SYSTEM_NEEDLE) {
            continue;
        }
        let finding = Finding::new(
            Rule::SystemDropped,
            format!(
                "the system message's text ({SYSTEM_NEEDLE}) is not in the prompt, and the \
                 template raised no error"
            ),
        )
        .on(probe.describe());
        return Ok(vec![finding]);
    }
    Ok(Vec::new())
}
