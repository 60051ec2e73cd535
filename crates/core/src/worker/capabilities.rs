//! Capability jobs on the worker: what a template can render, decided by probe renders
//! ([`crate::inspect::inspect_template`]), flattened into report rows so the app's info
//! view only formats them. The probes do not read the conversation, so a render never
//! cancels this job; only a newer capability request does (the user moved on).

use std::sync::Arc;

use crate::inspect::{inspect_template, Entry, ProbeSettings};
use chatplate_render::{CancelToken, RenderError, RenderErrorKind};

use super::{Output, Template};

/// A template's capabilities as report rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateInfo {
    /// Every answer, in the order `chatplate inspect` prints them.
    pub entries: Vec<Entry>,
    /// Variables beyond the standard ones, with what setting them changes.
    pub variables: Vec<(String, String)>,
    /// Probes the template rejected, as `probe: error`.
    pub failures: Vec<String>,
}

/// Probes `template` with `settings`.
pub(super) fn probe(
    template: &Template,
    settings: &ProbeSettings,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let report = inspect_template(compiled, settings, token).map_err(|_| {
        RenderError::new(
            RenderErrorKind::Cancelled,
            "cancelled: a newer request replaced it",
        )
    })?;
    let capabilities = &report.capabilities;
    Ok(Output::Capabilities(Arc::new(TemplateInfo {
        entries: capabilities.entries(),
        variables: (report.variables.iter())
            .map(|v| (v.variable.name.clone(), v.effect.observed.clone()))
            .collect(),
        failures: (capabilities.failures.iter())
            .map(|f| format!("{}: {}", f.probe, f.error.message))
            .collect(),
    })))
}
