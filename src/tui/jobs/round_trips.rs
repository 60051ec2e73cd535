//! Round-trip badges: for a session with a `response_template`, the worker parses each
//! assistant message back after every render (coalesced, cancelled by the next render,
//! so typing never waits for it), and the message list marks each ✓ or ✗ with the
//! difference in the selected message's detail. With a tokenizer at hand (the session's
//! `tokenizer`, or one beside its template) ✓ also means the tokens survive: the message
//! rendered again from its parse gives the same tokens as the render it was cut from.

use std::sync::Arc;

use chatplate_core::catalog::Origin;
use chatplate_core::diff::{diff_lines, DiffLine};
use chatplate_core::worker::parsing::SchemaLookup;
use chatplate_core::worker::round_trips::RoundTrips;
use chatplate_core::worker::{Job, JobKind, Output, Reply};

use crate::tui::jobs::per_render::PerRender;
use crate::tui::jobs::Background;

use crate::tui::jobs::JobView;

use crate::tui::jobs::Said;

#[derive(Debug, Default)]
pub struct RoundTripBadges {
    /// What was asked and the latest answer, kept while the next one is computed, so
    /// the badges do not blink while typing.
    answers: PerRender<Arc<RoundTrips>>,
}

/// The mark of a message that parses back into itself.
pub const PASSED: &str = "✓";
/// The mark of one that does not.
pub const FAILED: &str = "✗";

impl Background for RoundTripBadges {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::RoundTrips
    }

    /// After each render, when the session may have a schema: the round trips.
    fn after_render(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let generation = view.preview.generation;
        let workspace = view.workspace;
        // A bundled template may ship one (templates/NAME.response_template.json).
        let may_have = workspace.session.response_template.is_some()
            || matches!(workspace.template.origin, Origin::Model(_))
            || (workspace.template.origin == Origin::Bundled
                && chatplate_core::catalog::bundled_schema(&workspace.template.name).is_some());
        if !may_have || view.stale() || self.answers.asked(generation) {
            return None;
        }
        let template = view.preview.template()?;
        let dir = workspace.session_dir();
        let lookup = Box::new(SchemaLookup {
            session: workspace.session.clone(),
            access: crate::tui::files::startup::template_access(&dir),
            dir,
            template: workspace.current_template().cloned(),
        });
        self.answers.ask(generation);
        Some((generation, Job::RoundTrips { template, lookup }))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        let answer = match reply.result {
            Ok(Output::RoundTrips(trips)) => Some(trips),
            _ => None,
        };
        self.answers.take(reply.generation, answer)
    }

    fn pending(&self, view: &JobView) -> bool {
        self.answers.pending(view.preview.generation)
    }
}

impl RoundTripBadges {
    /// Whether assistant message `index` survives its round trip, its tokens too when a
    /// tokenizer was at hand (`None`: no badge).
    pub fn of(&self, index: usize) -> Option<bool> {
        let shown = self.answers.latest()?;
        let text = shown.messages.get(&index).map(Option::is_none)?;
        let tokens = shown.tokens.get(&index).is_none_or(Option::is_none);
        Some(text && tokens)
    }

    /// The failed round trip of message `index`, in one line, for its detail.
    pub fn note(&self, index: usize) -> Vec<String> {
        let Some(shown) = self.answers.latest() else {
            return Vec::new();
        };
        if let Some(tokens) = shown.tokens.get(&index) {
            return vec![match tokens {
                None => format!("{PASSED} round trip: text and tokens"),
                Some(why) => format!("{FAILED} round trip: {why}"),
            }];
        }
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
