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
