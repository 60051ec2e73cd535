//! Round-trip badges: for a session with a `response_template`, the worker parses each
//! assistant message back after every render (coalesced, cancelled by the next render,
//! so typing never waits for it), and the message list marks each ✓ or ✗ with the
//! difference in the selected message's detail.

use std::sync::Arc;

use chatplate_core::catalog::Origin;
use chatplate_core::diff::{diff_lines, DiffLine};
use chatplate_core::worker::parsing::SchemaLookup;
use chatplate_core::worker::round_trips::RoundTrips;
use chatplate_core::worker::{Job, Output, Reply};

use crate::tui::app::App;

/// The badges of the shown render, and the request on its way.
#[derive(Debug, Default)]
pub struct RoundTripBadges {
    /// The generation last asked for.
    asked: Option<u64>,
    /// The latest answer and the generation it answers; kept while the next one is
    /// computed, so the badges do not blink while typing.
    shown: Option<(u64, Arc<RoundTrips>)>,
}

/// The mark of a message that parses back into itself.
pub const PASSED: &str = "✓";
/// The mark of one that does not.
pub const FAILED: &str = "✗";

impl App {
    /// After a render arrived: asks for the badges when the session may have a schema
    /// (its own, or its model folder's).
    pub(in crate::tui) fn request_round_trips(&mut self) {
        let generation = self.preview.generation;
        let workspace = &self.workspace;
        let may_have = workspace.session.response_template.is_some()
            || matches!(workspace.template.origin, Origin::Model(_));
        if !may_have || self.is_stale() || self.round_trips.asked == Some(generation) {
            return;
        }
        let Some(template) = self.preview.template() else {
            return;
        };
        let dir = workspace.session_dir();
        let lookup = Box::new(SchemaLookup {
            session: workspace.session.clone(),
            access: crate::tui::files::startup::template_access(&dir),
            dir,
            template: crate::tui::app::current_template(workspace).cloned(),
        });
        self.round_trips.asked = Some(generation);
        self.submit_job(generation, Job::RoundTrips { template, lookup });
    }

    /// The worker's answer; a cancelled one is asked for again after the next render.
    pub(in crate::tui) fn receive_round_trips(&mut self, reply: Reply) -> bool {
        if self.round_trips.asked != Some(reply.generation) {
            return false;
        }
        match reply.result {
            Ok(Output::RoundTrips(trips)) => {
                self.round_trips.shown = Some((reply.generation, trips));
                true
            }
            _ => {
                self.round_trips.asked = None;
                false
            }
        }
    }

    /// Whether badges for the shown render are on their way.
    pub(in crate::tui) fn round_trips_pending(&self) -> bool {
        let asked = self.round_trips.asked;
        let answered = self
            .round_trips
            .shown
            .as_ref()
            .map(|(generation, _)| *generation);
        asked == Some(self.preview.generation) && answered != asked
    }

    /// Message `index`'s badge: `Some(true)` when it parses back into itself.
    pub fn round_trip_of(&self, index: usize) -> Option<bool> {
        let (_, shown) = self.round_trips.shown.as_ref()?;
        shown.messages.get(&index).map(Option::is_none)
    }

    /// Why message `index` does not parse back, with the difference, for its detail
    /// (one warning: the detail marks each with ⚠).
    pub fn round_trip_note(&self, index: usize) -> Vec<String> {
        let Some((_, shown)) = self.round_trips.shown.as_ref() else {
            return Vec::new();
        };
        let Some(Some(failure)) = shown.messages.get(&index) else {
            return Vec::new();
        };
        let mut lines = vec![format!("{FAILED} round trip: {}", failure.problem)];
        for line in diff_lines(&failure.expected, &failure.actual) {
            match line {
                DiffLine::Removed(text) => lines.push(format!("- {}", text.trim())),
                DiffLine::Added(text) => lines.push(format!("+ {}", text.trim())),
                DiffLine::Same(_) => {}
            }
        }
        vec![lines.join(" ")]
    }
}
