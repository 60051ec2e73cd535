//! Stopping a render from another thread.
//!
//! A [`CancelToken`] is shared between whoever started a render (the app's render worker,
//! `check`'s deadline) and the render itself, which gives up with
//! [`RenderErrorKind::Cancelled`](super::RenderErrorKind::Cancelled) once the token is
//! cancelled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A shared flag asking a render to stop; clones share the flag.
///
/// A render stopped through it (or past its deadline) answers its caller at once, and
/// its thread ends at its next checkpoint. A caller that keeps its own account of the
/// renders still running (the app's worker keeps at most one stopped render running)
/// makes its tokens [`CancelToken::waiting`]: its calls then return only once the stopped
/// render's thread has ended.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    waits: bool,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// The same token (clones share its flag), whose stopped renders return only once
    /// their thread has ended, at its next checkpoint. A thread the memory meter parked
    /// for good (see the crate's memory limit) is not waited for.
    pub fn waiting(mut self) -> Self {
        self.waits = true;
        self
    }

    /// Whether stopped renders wait for their thread (see [`CancelToken::waiting`]).
    pub fn waits(&self) -> bool {
        self.waits
    }

    /// Asks every render holding this token (or a clone) to stop.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

/// How a render may be stopped from outside: a cancel token and, optionally, a
/// wall-clock bound (a render past it stops with a timeout error).
///
/// The bound is the base: each render is allowed
/// [`Limits::deadline_for`](super::Limits::deadline_for) its input, this base plus
/// [`Limits::deadline_extension`](super::Limits::deadline_extension), counted from the
/// moment the render is asked for, as its step budget grows with the input. The
/// timeout error names that extended bound.
#[derive(Debug, Clone, Default)]
pub struct RenderControl {
    /// Cancelling it stops the render.
    pub cancel: CancelToken,
    /// The base wall-clock bound on each render, before its growth with the input.
    pub deadline: Option<Duration>,
    /// A traced render's output length, published as it grows (see `traced`).
    pub(crate) written: Option<Arc<AtomicUsize>>,
}

impl RenderControl {
    /// A control with this token and no deadline.
    pub fn new(cancel: CancelToken) -> Self {
        RenderControl {
            cancel,
            deadline: None,
            written: None,
        }
    }

    /// The same control, each render bounded by `deadline` (before its growth with the
    /// input, see the type's docs).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }
}
