//! The compare side as a background job: asking the worker for the shown side (the
//! template preview or the compare view) and taking its answers in, and the typed
//! side's opened template (see [`source`](crate::tui::compare::source)).
//!
//! A side is asked for once the session's own render is current, so the worker's
//! conversation is the one the session's prompt came from and the diff is made against
//! that prompt. One request per side is in flight at a time: an external engine takes
//! seconds, and its answer (or its bounded failure) comes before the next request, so
//! typing never starts more than one child process; a newer render cancels an
//! in-process one, and it is asked again for the new render.

use chatplate_core::worker::{Job, JobKind, Output, Reply};
use chatplate_render::RenderErrorKind;

use crate::tui::compare::Shown;

use crate::tui::compare::Sides;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;

impl Background for Sides {
    /// Every comparison (an answer no side waits for any more is dropped), and an
    /// opened template while a typed side waits for one (the opener gets the others).
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        match reply.kind {
            JobKind::Compare => true,
            JobKind::Open => self.typed.is_some(),
            _ => false,
        }
    }

    /// After a render: the shown side, before the other jobs, since it is what the
    /// user looks at.
    fn after_render(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        self.ask_shown(view)
    }

    /// A typed side to open first (the user just asked for it), else the shown side.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        if let Some(job) = self.opening.take() {
            return Some((view.generation, job));
        }
        self.ask_shown(view)
    }

    fn receive(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool {
        match reply.kind {
            JobKind::Open => self.receive_opened(reply, view, said),
            _ => self.receive_compared(reply),
        }
    }

    fn pending(&self, _view: &JobView) -> bool {
        self.typed.is_some() || self.shown().is_some_and(|side| side.asked.is_some())
    }
}

impl Sides {
    /// The job for the shown side when it answers an older session than the shown
    /// render, and nothing is in flight for it.
    fn ask_shown(&mut self, view: &JobView) -> Option<(u64, Job)> {
        if view.stale() {
            return None;
        }
        let (generation, workspace) = (view.generation, view.workspace);
        let side = self.shown()?;
        if side.asked.is_some() || !side.outdated(generation, &workspace.session) {
            return None;
        }
        if let Some(why) = workspace.missing_template.clone() {
            if side.choice.renders_own_template() {
                // No template for the engine to render: say so on its side.
                let side = self.shown_mut()?;
                side.shown = Shown::Failed(why);
                side.answered = generation;
                return None;
            }
        }
        let source = &workspace.template.source;
        let counterpart = side.counterpart(source, &workspace.session, &self.setup);
        let against = match &view.preview.output {
            Ok(prompt) => prompt.clone(),
            Err(_) => "".into(),
        };
        let id = self.next_id();
        self.shown_mut()?.asked = Some((id, generation));
        let job = Job::Compare {
            counterpart,
            against,
        };
        Some((id, job))
    }

    /// Takes a comparison in; returns whether the screen changed. The app asks the
    /// jobs again afterwards, so a cancelled side is asked for the new render.
    fn receive_compared(&mut self, reply: Reply) -> bool {
        let Some(side) = self.asking(reply.generation) else {
            return false;
        };
        let Some((_, generation)) = side.asked.take() else {
            return false;
        };
        match reply.result {
            Ok(Output::Compared(answer)) => {
                side.shown = Shown::Answer(answer);
                side.answered = generation;
                true
            }
            // A newer render replaced it: asked again.
            Err(err) if err.kind == RenderErrorKind::Cancelled => false,
            Err(err) => {
                side.shown = Shown::Failed(err.message);
                side.answered = generation;
                true
            }
            Ok(_) => false,
        }
    }
}
