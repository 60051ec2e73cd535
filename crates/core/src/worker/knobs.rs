//! The app's Knobs section, on the worker: the template's variables with their value
//! and what flipping each boolean one does to the session's own prompt
//! ([`crate::inspect::knobs`]).

use std::sync::Arc;

use chatplate_render::{CancelToken, RenderError};

use crate::inspect::Knob;

use super::snapshot::Snapshot;
use super::{Output, Template};

/// The knobs of `template` on the worker's conversation.
pub(super) fn find(
    template: &Template,
    conversation: &Snapshot,
    cancel: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let knobs: Vec<Knob> = crate::inspect::knobs(compiled, &conversation.conversation(), cancel)
        .map_err(|_| RenderError::cancelled())?;
    Ok(Output::Knobs(Arc::new(knobs)))
}
