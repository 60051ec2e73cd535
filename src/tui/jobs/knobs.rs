//! The Knobs section of the settings: the template's variables, each with its value
//! and what flipping it does to this session's prompt, found on the worker
//! ([`chatplate_core::worker::Job::Knobs`]). Asked only while the settings row is
//! selected (three renders per variable), once per render of the session; the answer
//! goes to the messages pane as [`KnobRow`]s, where `Enter` flips a boolean one.

use std::sync::Arc;

use chatplate_core::inspect::Knob;
use chatplate_core::worker::{Job, JobKind, Output, Reply};

use crate::tui::jobs::per_render::PerRender;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobRequest;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::panes::messages::fields::Row;

/// One knob as the settings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobRow {
    /// The variable's name.
    pub name: String,
    /// Its value: the one set, else `unset` with what it behaves as.
    pub value: String,
    /// The value `Enter` sets (boolean knobs only).
    pub flip_to: Option<bool>,
    /// What that flip does to the prompt (`+36 −0 bytes at byte 412`), or why it
    /// cannot be flipped.
    pub effect: String,
    /// What the flip changes, quoted (`"" → "<think>..."`).
    pub excerpt: String,
    /// How many of the conversation's reasoning texts the prompt shows now and
    /// flipped, when the flip changes that (a reasoning-retention knob).
    pub retention: Option<(usize, usize)>,
}

impl KnobRow {
    /// The row of `knob`.
    pub fn of(knob: &Knob) -> Self {
        let (effect, excerpt, retention) = match knob.flip.as_ref().map(|f| &f.change) {
            Some(Ok(change)) => (
                change.summary(),
                change.shown(),
                change.retains_reasoning().then_some(change.reasoning_shown),
            ),
            Some(Err(error)) => (format!("fails: {error}"), String::new(), None),
            None => (
                "not a boolean: edit it in variables".into(),
                String::new(),
                None,
            ),
        };
        KnobRow {
            name: knob.name.clone(),
            value: knob.shown_value(),
            flip_to: knob.flip.as_ref().map(|f| f.to),
            effect,
            excerpt,
            retention,
        }
    }
}

/// The latest knobs of the session's template.
#[derive(Debug, Default)]
pub struct KnobsState {
    answers: PerRender<Arc<Vec<Knob>>>,
}

impl Background for KnobsState {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Knobs
    }

    /// While the settings row is selected, once per render of the current session.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let generation = view.preview.generation;
        if view.row != Row::Settings || view.stale() || self.answers.asked(generation) {
            return None;
        }
        let template = view.preview.template()?;
        self.answers.ask(generation);
        Some((generation, Job::Knobs { template }))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, said: &mut Said) -> bool {
        let answer = match reply.result {
            Ok(Output::Knobs(knobs)) => Some(knobs),
            _ => None,
        };
        let rows = answer
            .as_ref()
            .map(|knobs| knobs.iter().map(KnobRow::of).collect());
        let changed = self.answers.take(reply.generation, answer);
        if let (true, Some(rows)) = (changed, rows) {
            said.ask(JobRequest::Knobs(rows));
        }
        changed
    }

    fn pending(&self, view: &JobView) -> bool {
        view.row == Row::Settings && self.answers.pending(view.preview.generation)
    }
}
