//! Stopping a render from another thread.
//!
//! A [`CancelToken`] is shared between whoever started a render (the app's render worker,
//! `check`'s deadline) and the render itself, which gives up with
//! [`RenderErrorKind::Cancelled`](super::RenderErrorKind::Cancelled) once the token is
//! cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared flag asking a render to stop; clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Asks every render holding this token (or a clone) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How a render may be stopped from outside: a cancel token and, optionally, a
/// deadline (a render past it stops with a timeout error). The render extends the
/// deadline by [`Limits::deadline_extension`](super::Limits::deadline_extension) for
/// its input, as its step budget grows with the input.
#[derive(Debug, Clone, Default)]
pub struct RenderControl {
    /// Cancelling it stops the render.
    pub cancel: CancelToken,
    /// When the render must have finished.
    pub deadline: Option<std::time::Instant>,
}

impl RenderControl {
    /// A control with this token and no deadline.
    pub fn new(cancel: CancelToken) -> Self {
        RenderControl {
            cancel,
            deadline: None,
        }
    }

    /// The same control, ending at `deadline` from now.
    pub fn with_deadline(mut self, deadline: std::time::Duration) -> Self {
        self.deadline = std::time::Instant::now().checked_add(deadline);
        self
    }
}
