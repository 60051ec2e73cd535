//! The assistant mask in character mode: after each render the worker records where the
//! template's `{% generation %}` blocks land (one tracked render, nothing for a
//! template without the tag), and the prompt underlines those characters as token mode
//! underlines trained tokens.

use std::ops::Range;
use std::sync::Arc;

use chatplate_core::worker::generation_marks::GenerationMarks;
use chatplate_core::worker::{Job, JobKind, Output, Reply};

use crate::tui::jobs::per_render::PerRender;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::preview::Preview;

#[derive(Debug, Default)]
pub struct GenerationMarksState {
    /// What was asked and the latest answer.
    answers: PerRender<Arc<GenerationMarks>>,
}

impl Background for GenerationMarksState {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::GenerationMarks
    }

    /// After each render of the current session: where its blocks land.
    fn after_render(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let generation = view.preview.generation;
        if view.stale() || self.answers.asked(generation) {
            return None;
        }
        let template = view.preview.template()?;
        self.answers.ask(generation);
        Some((generation, Job::GenerationMarks { template }))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        let answer = match reply.result {
            Ok(Output::GenerationMarks(marks)) => Some(marks),
            _ => None,
        };
        self.answers.take(reply.generation, answer)
    }

    fn pending(&self, view: &JobView) -> bool {
        self.answers.pending(view.preview.generation)
    }
}

impl GenerationMarksState {
    /// The byte ranges of the shown prompt inside `{% generation %}` blocks (none until
    /// the marks of this very prompt arrived).
    pub fn spans<'a>(&'a self, preview: &Preview) -> &'a [Range<usize>] {
        match (self.answers.latest(), &preview.output) {
            (Some(marks), Ok(prompt)) if *marks.prompt == **prompt => &marks.spans,
            _ => &[],
        }
    }
}
