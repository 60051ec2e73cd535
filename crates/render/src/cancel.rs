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

/// How a render may be stopped from outside: a cancel token and a wall-clock bound (a
/// render past it stops with a timeout error).
///
/// The bound is the template's own [`Limits::deadline`](super::Limits::deadline) unless
/// the control names another ([`RenderControl::with_deadline`]) or none
/// ([`RenderControl::without_deadline`]). It is the base: each render is allowed
/// [`Limits::deadline_for`](super::Limits::deadline_for) its input, this base plus
/// [`Limits::deadline_extension`](super::Limits::deadline_extension), counted from the
/// moment the render is asked for, as its step budget grows with the input. The
/// timeout error names that extended bound.
#[derive(Debug, Clone, Default)]
pub struct RenderControl {
    /// Cancelling it stops the render.
    pub cancel: CancelToken,
    /// The base wall-clock bound on each render, before its growth with the input, in
    /// place of the template's [`Limits::deadline`](super::Limits::deadline) (`None`:
    /// the template's).
    pub deadline: Option<Duration>,
    /// No wall-clock bound at all: only the token stops the render (the caller bounds
    /// it another way, as an inspection bounds all its renders together).
    pub(crate) unbounded: bool,
    /// A traced render's output length, published as it grows (see `traced`).
    pub(crate) written: Option<Arc<AtomicUsize>>,
}

impl RenderControl {
    /// A control with this token, each render bounded by the template's own deadline.
    pub fn new(cancel: CancelToken) -> Self {
        RenderControl {
            cancel,
            ..RenderControl::default()
        }
    }

    /// The same control, each render bounded by `deadline` instead of the template's
    /// (before its growth with the input, see the type's docs).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self.unbounded = false;
        self
    }

    /// The same control with no wall-clock bound: only its token stops a render.
    pub fn without_deadline(mut self) -> Self {
        self.deadline = None;
        self.unbounded = true;
        self
    }

    /// The base deadline a render of a template compiled with `limits` gets, if any.
    pub(crate) fn base_deadline(&self, limits: &super::Limits) -> Option<Duration> {
        if self.unbounded {
            None
        } else {
            Some(self.deadline.unwrap_or(limits.deadline))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::RenderControl;
    use crate::{CompiledTemplate, Conversation, Limits, RenderErrorKind};

    #[test]
    fn the_templates_own_deadline_applies_unless_the_control_names_another() {
        let limits = Limits::default().with_deadline(Duration::from_millis(300));
        let base = |control: RenderControl| control.base_deadline(&limits);
        assert_eq!(base(RenderControl::default()), Some(limits.deadline));
        let other = Duration::from_secs(9);
        assert_eq!(
            base(RenderControl::default().with_deadline(other)),
            Some(other)
        );
        assert_eq!(base(RenderControl::default().without_deadline()), None);
        let again = RenderControl::default()
            .without_deadline()
            .with_deadline(other);
        assert_eq!(base(again), Some(other));
    }

    #[test]
    fn a_deadline_set_on_limits_alone_stops_an_endless_render() {
        let limits = Limits::default()
            .with_deadline(Duration::from_millis(100))
            .with_fuel(u64::MAX / 128)
            .with_max_output_bytes(usize::MAX / 2);
        let endless =
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
        let template = CompiledTemplate::compile(endless, limits).unwrap();
        let conversation =
            Conversation::new(vec![serde_json::json!({"role": "user", "content": "x"})]);
        let err = template
            .render_controlled(&conversation, &RenderControl::default())
            .unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Timeout, "{err}");
        assert!(err.message.contains("within 0.1 s"), "{err}");
    }
}
