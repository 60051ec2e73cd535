//! The assistant mask in character mode: after each render the worker records where the
//! template's `{% generation %}` blocks land (one tracked render, nothing for a
//! template without the tag), and the prompt underlines those characters as token mode
//! underlines trained tokens.

use std::ops::Range;
use std::sync::Arc;

use chatplate_core::worker::generation_marks::GenerationMarks;
use chatplate_core::worker::{Job, Output, Reply};

use crate::tui::app::App;

/// The marks of the latest answer, and the request on its way.
#[derive(Debug, Default)]
pub struct GenerationMarksState {
    /// The generation last asked for.
    asked: Option<u64>,
    /// The latest answer and the generation it answers.
    shown: Option<(u64, Arc<GenerationMarks>)>,
}

impl App {
    /// After a render arrived: asks where its generation blocks are.
    pub(in crate::tui) fn request_generation_marks(&mut self) {
        let generation = self.preview.generation;
        let marks = &self.generation_marks;
        if self.is_stale() || marks.asked == Some(generation) {
            return;
        }
        let Some(template) = self.preview.template() else {
            return;
        };
        self.generation_marks.asked = Some(generation);
        self.submit_job(generation, Job::GenerationMarks { template });
    }

    /// The worker's answer; a cancelled one is asked for again after the next render.
    pub(in crate::tui) fn receive_generation_marks(&mut self, reply: Reply) -> bool {
        if self.generation_marks.asked != Some(reply.generation) {
            return false;
        }
        match reply.result {
            Ok(Output::GenerationMarks(marks)) => {
                self.generation_marks.shown = Some((reply.generation, marks));
                true
            }
            _ => {
                self.generation_marks.asked = None;
                false
            }
        }
    }

    /// Whether the marks for the shown render are on their way.
    pub(in crate::tui) fn generation_marks_pending(&self) -> bool {
        let marks = &self.generation_marks;
        let answered = marks.shown.as_ref().map(|(generation, _)| *generation);
        marks.asked == Some(self.preview.generation) && answered != marks.asked
    }

    /// The shown prompt's bytes inside generation blocks (empty until they are known
    /// for exactly this prompt).
    pub fn generation_spans(&self) -> &[Range<usize>] {
        match (&self.generation_marks.shown, &self.preview.output) {
            (Some((_, marks)), Ok(prompt)) if *marks.prompt == **prompt => &marks.spans,
            _ => &[],
        }
    }
}
