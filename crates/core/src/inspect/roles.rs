//! Role probes: the system role, strict alternation, and roles a template may reject.

use super::capabilities::{Decided, Entry, RoleHandling, RoleSupport, SystemRole};
use super::content::{ContentCaps, SECOND_USER_NEEDLE, USER_NEEDLE};
use super::probe::{Probe, Prober, Shown};
use super::Cancelled;
use chatplate_render::RenderErrorKind;

/// Text of the probe system message.
pub(crate) const SYSTEM_NEEDLE: &str = "SystemNeedle2267";
const ASSISTANT_NEEDLE: &str = "AssistantNeedle7340";
const SECOND_ASSISTANT_NEEDLE: &str = "AssistantNeedle8151";
const DEVELOPER_NEEDLE: &str = "DeveloperNeedle3318";
const CUSTOM_NEEDLE: &str = "NarratorNeedle6024";
/// A role no chat format defines, to see whether unknown roles are rejected.
pub(crate) const CUSTOM_ROLE: &str = "narrator";

/// What the role probes found.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleCaps {
    /// minja's `supports_system_role`: a system message's text appears in the prompt.
    pub supports_system_role: Decided<bool>,
    /// How the system message is rendered.
    pub system_role: Decided<SystemRole>,
    /// Two user (or two assistant) messages in a row are rejected.
    pub requires_alternation: Decided<bool>,
    /// Per role: rendered, dropped or rejected.
    pub roles: Vec<RoleSupport>,
}

impl RoleCaps {
    /// The report lines minja has no name for.
    pub fn entries(&self) -> Vec<Entry> {
        let mut entries = vec![
            Entry::named(
                "system_role",
                &self.system_role,
                self.system_role.value.name(),
            ),
            Entry::flag("requires_alternation", &self.requires_alternation),
        ];
        for role in &self.roles {
            entries.push(Entry::named(
                &format!("roles.{}", role.role),
                &role.handling,
                role.handling.value.name(),
            ));
        }
        entries
    }
}

/// Runs the role probes.
pub(crate) fn detect(prober: &Prober, content: &ContentCaps) -> Result<RoleCaps, Cancelled> {
    let user = content.user(USER_NEEDLE);
    let with_system = Probe::of(vec![content.message("system", SYSTEM_NEEDLE), user.clone()]);
    let shown = prober.shows(&with_system, &[SYSTEM_NEEDLE])?;
    let supports_system_role = Decided::new(
        shown.yes(),
        with_system.describe(),
        shown.verdict("the system text"),
    );
    let system_role = system_role(prober, content, &with_system, &shown)?;
    let requires_alternation = alternation(prober, content)?;
    let mut roles = vec![RoleSupport {
        role: "system".into(),
        handling: Decided::new(
            handling(&shown),
            with_system.describe(),
            shown.verdict("the system text"),
        ),
    }];
    let assistant = Probe::of(vec![
        user.clone(),
        content.message("assistant", ASSISTANT_NEEDLE),
    ]);
    roles.push(role_support(
        prober,
        "assistant",
        &assistant,
        ASSISTANT_NEEDLE,
    )?);
    let developer = Probe::of(vec![
        content.message("developer", DEVELOPER_NEEDLE),
        user.clone(),
    ]);
    roles.push(role_support(
        prober,
        "developer",
        &developer,
        DEVELOPER_NEEDLE,
    )?);
    let custom = Probe::of(vec![user, content.message(CUSTOM_ROLE, CUSTOM_NEEDLE)]);
    roles.push(role_support(prober, CUSTOM_ROLE, &custom, CUSTOM_NEEDLE)?);
    Ok(RoleCaps {
        supports_system_role,
        system_role,
        requires_alternation,
        roles,
    })
}

/// Own turn when a system-only conversation shows the text, merged when only a
/// following user turn brings it out.
fn system_role(
    prober: &Prober,
    content: &ContentCaps,
    with_system: &Probe,
    shown: &Shown,
) -> Result<Decided<SystemRole>, Cancelled> {
    let value = match shown {
        Shown::Failed(err) if err.kind == RenderErrorKind::Raised => SystemRole::Raises,
        Shown::Failed(_) => SystemRole::Fails,
        Shown::No(_) => SystemRole::Dropped,
        Shown::Yes(_) => {
            let alone = Probe::of(vec![content.message("system", SYSTEM_NEEDLE)]);
            let alone_shown = prober.shows(&alone, &[SYSTEM_NEEDLE])?;
            let value = match alone_shown {
                Shown::Yes(_) => SystemRole::OwnTurn,
                Shown::No(_) => SystemRole::Merged,
                Shown::Failed(_) => SystemRole::Shown,
            };
            return Ok(Decided::new(
                value,
                format!("{} / {}", with_system.describe(), alone.describe()),
                format!(
                    "with a user turn the system text appears; alone, {}",
                    alone_shown.verdict("it")
                ),
            ));
        }
    };
    Ok(Decided::new(
        value,
        with_system.describe(),
        shown.verdict("the system text"),
    ))
}

/// Two user messages in a row, and two assistant messages in a row.
fn alternation(prober: &Prober, content: &ContentCaps) -> Result<Decided<bool>, Cancelled> {
    let user = content.user(USER_NEEDLE);
    let users = Probe::of(vec![user.clone(), content.user(SECOND_USER_NEEDLE)]);
    let assistants = Probe::of(vec![
        user,
        content.message("assistant", ASSISTANT_NEEDLE),
        content.message("assistant", SECOND_ASSISTANT_NEEDLE),
    ]);
    for probe in [&users, &assistants] {
        if let Err(err) = prober.render(probe)? {
            if err.kind == RenderErrorKind::Raised {
                return Ok(Decided::new(
                    true,
                    probe.describe(),
                    format!("the template raises: {}", err.message),
                ));
            }
        }
    }
    Ok(Decided::new(
        false,
        format!("{} / {}", users.describe(), assistants.describe()),
        "both render without an error",
    ))
}

fn role_support(
    prober: &Prober,
    role: &str,
    probe: &Probe,
    needle: &str,
) -> Result<RoleSupport, Cancelled> {
    let shown = prober.shows(probe, &[needle])?;
    Ok(RoleSupport {
        role: role.to_string(),
        handling: Decided::new(
            handling(&shown),
            probe.describe(),
            shown.verdict(&format!("the {role} text")),
        ),
    })
}

/// The handling a probe's outcome shows.
pub(crate) fn handling(shown: &Shown) -> RoleHandling {
    match shown {
        Shown::Yes(_) => RoleHandling::Renders,
        Shown::No(_) => RoleHandling::Dropped,
        Shown::Failed(err) if err.kind == RenderErrorKind::Raised => RoleHandling::Raises,
        Shown::Failed(_) => RoleHandling::Fails,
    }
}
