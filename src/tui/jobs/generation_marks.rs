//! The assistant mask in character mode: after each render the worker records where the
//! template's `{% generation %}` blocks land (one tracked render, nothing for a
//! template without the tag), and the prompt underlines those characters as token mode
//! underlines trained tokens.

use std::ops::Range;
use std::sync::Arc;

use chatplate_core::worker::generation_marks::GenerationMarks;
use chatplate_core::worker::{Job, JobKind, Output, Reply};

use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::preview::Preview;

#[derive(Debug, Default)]
pub struct GenerationMarksState {
    /// The generation last asked for.
    asked: Option<u64>,
    /// The latest answer and the generation it answers.
    shown: Option<(u64, Arc<GenerationMarks>)>,
}

impl Background for GenerationMarksState {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::GenerationMarks
    }

    /// After each render of the current session: where its blocks land.
    fn after_render(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let generation = view.preview.generation;
        if view.stale() || self.asked == Some(generation) {
            return None;
        }
        let template = view.preview.template()?;
        self.asked = Some(generation);
        Some((generation, Job::GenerationMarks { template }))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        if self.asked != Some(reply.generation) {
            return false;
        }
        match reply.result {
            Ok(Output::GenerationMarks(marks)) => {
                self.shown = Some((reply.generation, marks));
                true
            }
            _ => {
                self.asked = None;
                false
            }
        }
    }

    fn pending(&self, view: &JobView) -> bool {
        let answered = self.shown.as_ref().map(|(generation, _)| *generation);
        self.asked == Some(view.preview.generation) && answered != self.asked
    }
}

impl GenerationMarksState {
    /// The byte ranges of the shown prompt inside `{% generation %}` blocks (none until
    /// the marks of this very prompt arrived).
    pub fn spans<'a>(&'a self, preview: &Preview) -> &'a [Range<usize>] {
        match (&self.shown, &preview.output) {
            (Some((_, marks)), Ok(prompt)) if *marks.prompt == **prompt => &marks.spans,
            _ => &[],
        }
    }
}
