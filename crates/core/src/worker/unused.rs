//! Unused-value jobs on the worker: which values of the selected message and of the
//! settings the template ignores ([`crate::inspect::check_values`], by perturbation).
//!
//! Bounded for long sessions: only the selected message's values and the settings'
//! tools, documents and variables are probed (one or two renders each, at most
//! [`MAX_VALUES`]), not every message; the app asks again when the selection moves.
//! The job is low priority: a render request cancels it when running and drops it
//! when still queued, since it answers an older conversation.

use std::sync::Arc;

use crate::inspect::{check_values, message_fields, settings_fields, DroppedFields};
use chatplate_render::{CancelToken, Conversation, PreparedMessages, RenderError};

use super::inspection::inspect_error;
use super::{Output, Template};

/// Most values probed by one job (a message with hundreds of tool calls is cut here).
pub(crate) const MAX_VALUES: usize = 64;

/// The verdicts for one message's values and the settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueChecks {
    /// The message probed, if any.
    pub message: Option<usize>,
    /// Values left out because of [`MAX_VALUES`].
    pub skipped: usize,
    /// The verdicts, message values first.
    pub checks: DroppedFields,
}

/// Probes message `message`'s values (when given) and the settings' values; `rendered`
/// is the conversation's prompt when the latest render made it.
pub(super) fn probe(
    template: &Template,
    message: Option<usize>,
    conversation: &Conversation,
    prepared: &PreparedMessages,
    rendered: Option<&str>,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let mut fields = message.map_or_else(Vec::new, |i| message_fields(conversation, i));
    fields.extend(settings_fields(conversation));
    let skipped = fields.len().saturating_sub(MAX_VALUES);
    fields.truncate(MAX_VALUES);
    let checks = check_values(compiled, conversation, prepared, rendered, fields, token)
        .map_err(inspect_error)?;
    Ok(Output::Values(Arc::new(ValueChecks {
        message,
        skipped,
        checks,
    })))
}
