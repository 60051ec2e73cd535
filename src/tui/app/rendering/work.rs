//! The background work the status line names and `Ctrl+T` stops: what the worker is
//! on, seen from the app (a status read of [`Worker::busy`](chatplate_core::worker::Worker),
//! not a result), and the cut of an attribution's rest that runs too long.

use std::time::{Duration, Instant};

use chatplate_core::worker::JobKind;

use crate::tui::app::App;

/// The longest the whole attribution after a partial (on-screen) one may run before the
/// app cancels it and keeps the screen's exact attribution only: the worker's estimate
/// of it ([`crate::tui::jobs::attribution`]'s budget) missed by minutes on Qwen3.5 and
/// Step-3.5-Flash at 10,000 messages (20-35 s of both cores after every edit), and the
/// app is to be idle within 5 s of an edit.
const REST_BUDGET: Duration = Duration::from_secs(3);

/// How long a background job runs before the status line names it: shorter ones come and
/// go while typing and would only flicker.
const NAMED_AFTER: Duration = Duration::from_secs(1);

impl App {
    /// Whether the user stopped the background work of the current session state.
    pub(in crate::tui::app) fn work_stopped(&self) -> bool {
        self.pending.stopped == Some(self.pending.generation)
    }

    /// `Ctrl+T`: stops the background work until the next change, and says what it was.
    pub(in crate::tui::app) fn stop_work(&mut self) {
        let running = self.pending.worker.busy().map(|busy| busy.kind);
        self.pending.worker.stop_background();
        self.pending.stopped = Some(self.pending.generation);
        let what = running
            .filter(|&kind| kind != JobKind::Render)
            .map_or("the background work", JobKind::what);
        self.notify(format!(
            "stopped {what}; it starts again after the next change"
        ));
    }

    /// The background job the status line names (with the key that stops it) and its
    /// whole seconds so far: one the worker has been on for at least a second, as the
    /// event loop's last [`App::working_changed`] saw it (so a frame never depends on
    /// when it is drawn).
    pub fn working(&self) -> Option<(JobKind, u64)> {
        self.pending.shown_work
    }

    /// Looks at what the worker is on; returns whether [`App::working`] changed (a job
    /// started being named, its seconds went on, it ended).
    pub fn working_changed(&mut self, now: Instant) -> bool {
        let busy = self.pending.worker.busy();
        if let Some(busy) = busy.filter(|busy| busy.kind == JobKind::Attribute) {
            let ran = now.saturating_duration_since(busy.since);
            if ran >= REST_BUDGET && self.jobs.explanation.asking_rest() {
                // The rest of a partial attribution: the screen is exact already.
                self.pending.worker.cancel(JobKind::Attribute);
                let reason = self.jobs.explanation.rest_too_slow(ran);
                self.notify(reason);
                self.pending.shown_work = None;
                return true;
            }
        }
        let shown = busy.and_then(|busy| {
            let running = now.saturating_duration_since(busy.since);
            (busy.kind != JobKind::Render && running >= NAMED_AFTER)
                .then_some((busy.kind, running.as_secs()))
        });
        shown != std::mem::replace(&mut self.pending.shown_work, shown)
    }

    /// When the status line's note on a running background job next changes (its next
    /// whole second), if a job is running.
    pub fn next_work_tick(&self, now: Instant) -> Option<Instant> {
        let busy = self.pending.worker.busy()?;
        if busy.kind == JobKind::Render {
            return None;
        }
        let running = now.saturating_duration_since(busy.since);
        let next = Duration::from_secs(running.as_secs() + 1).max(NAMED_AFTER);
        Some(busy.since + next)
    }
}
