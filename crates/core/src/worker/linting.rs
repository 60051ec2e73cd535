//! Lint jobs on the worker: [`crate::lint::lint_template`] with the worker's cancel
//! token, so a render (or a newer lint request) stops it between two probe renders.

use std::sync::Arc;

use crate::lint::{lint_template, LintOptions};
use crate::TemplateSource;
use chatplate_render::{CancelToken, RenderError};

use super::Output;

/// Lints `template` with `options`.
pub(super) fn lint(
    template: &TemplateSource,
    options: &LintOptions,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let report = lint_template(template, options, token).map_err(|err| {
        RenderError::new(
            chatplate_render::RenderErrorKind::Cancelled,
            format!("cancelled: {err}"),
        )
    })?;
    Ok(Output::Lint(Arc::new(report)))
}
