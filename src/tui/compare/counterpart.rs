//! The app's side of comparisons: asking the worker for the shown side (the template
//! preview or the compare view), taking its answers in, and the compare view's keys
//! (picking a side, scrolling, jumping between differences).
//!
//! A side is asked for once the session's own render is current, so the worker's
//! conversation is the one the session's prompt came from and the diff is made against
//! that prompt. One request per side is in flight at a time: an external engine takes
//! seconds, and its answer (or its bounded failure) comes before the next request, so
//! typing never starts more than one child process; a newer render cancels an
//! in-process one, and it is asked again for the new render.

use chatplate_core::worker::{Job, Output, Reply};
use chatplate_render::RenderErrorKind;

use crate::tui::app::action::{Direction, Pane, PromptAction, Step};
use crate::tui::app::App;
use crate::tui::compare::view::layout_for;
use crate::tui::compare::{
    next_difference, rows, CompareAction, OtherSide, Shown, SideChoice, CYCLE,
};

impl App {
    /// Asks the worker for the shown side when it answers an older session than the
    /// shown render, and nothing is in flight for it.
    pub(in crate::tui) fn request_sides(&mut self) {
        if self.is_stale() {
            return;
        }
        let generation = self.generation();
        let session = &self.workspace.session;
        let Some(side) = self.sides.shown() else {
            return;
        };
        if side.asked.is_some() || !side.outdated(generation, session) {
            return;
        }
        let engine = side.choice.renders_own_template();
        if let (true, Some(why)) = (engine, self.workspace.missing_template.clone()) {
            // No template for the engine to render: say so on its side.
            if let Some(side) = self.sides.shown_mut() {
                side.shown = Shown::Failed(why);
                side.answered = generation;
            }
            return;
        }
        let source = &self.workspace.template.source;
        let counterpart = side.counterpart(source, session, &self.sides.setup);
        let against = match &self.preview.output {
            Ok(prompt) => prompt.clone(),
            Err(_) => "".into(),
        };
        let id = self.sides.next_id();
        if let Some(side) = self.sides.shown_mut() {
            side.asked = Some((id, generation));
        }
        self.submit_job(
            id,
            Job::Compare {
                counterpart,
                against,
            },
        );
    }

    /// Where the compare view finds the external engines (`python`, `hf-jinja`) and
    /// their bounds; by default `$CHATPLATE_PYTHON` and `node` on the PATH.
    pub fn set_engines(&mut self, setup: chatplate_core::compare::EngineSetup) {
        self.sides.setup = std::sync::Arc::new(setup);
    }

    /// The side shown beside the session's render (the preview, else the compare view).
    pub fn other_side(&self) -> Option<&crate::tui::compare::OtherSide> {
        self.sides.shown()
    }

    /// Takes a comparison in; returns whether the screen changed.
    pub(in crate::tui) fn receive_compared(&mut self, reply: Reply) -> bool {
        let Some(side) = self.sides.asking(reply.generation) else {
            return false;
        };
        let Some((_, generation)) = side.asked.take() else {
            return false;
        };
        let changed = match reply.result {
            Ok(Output::Compared(answer)) => {
                side.shown = Shown::Answer(answer);
                side.answered = generation;
                true
            }
            // A newer render replaced it: asked again below.
            Err(err) if err.kind == RenderErrorKind::Cancelled => false,
            Err(err) => {
                side.shown = Shown::Failed(err.message);
                side.answered = generation;
                true
            }
            Ok(_) => false,
        };
        self.request_sides();
        changed
    }

    /// Carries out a compare-view action.
    pub(in crate::tui) fn compare(&mut self, action: CompareAction) {
        match action {
            CompareAction::CycleSide => self.cycle_side(),
            CompareAction::WithTemplate => self.compare_with_template(),
            CompareAction::AskSource => self.ask_compare_source(),
            CompareAction::Close => {
                if self.sides.compare.take().is_some() {
                    self.notify("compare view closed");
                }
            }
        }
        self.request_sides();
    }

    fn cycle_side(&mut self) {
        let current = self.sides.compare.as_ref().map(|side| &side.choice);
        let next = match current.and_then(|c| CYCLE.iter().position(|s| s == c)) {
            Some(index) => CYCLE.get(index + 1).cloned(),
            None => Some(CYCLE[0].clone()),
        };
        match next {
            Some(choice) => self.start_comparing(choice),
            None => {
                self.sides.compare = None;
                self.notify("compare view closed");
            }
        }
    }

    fn compare_with_template(&mut self) {
        let Some(template) = self.templates.selected().cloned() else {
            return self.warn("no template matches the filter");
        };
        if self.is_session_template(&template) {
            return self.warn("that is the session's own template: move to another one first");
        }
        self.sides.preview = None;
        self.start_comparing(SideChoice::Template(Box::new(template)));
        self.focus(Pane::Prompt);
    }

    pub(in crate::tui) fn start_comparing(&mut self, choice: SideChoice) {
        let label = choice.label();
        self.sides.compare = Some(OtherSide::new(choice));
        self.notify(format!(
            "comparing with {label} (C: next side, ]/[: differences, Esc: close)"
        ));
    }

    /// The prompt pane's scroll and difference keys move the compare view while it is
    /// shown; returns whether it took `app::action`.
    pub(in crate::tui) fn compare_took(&mut self, action: PromptAction) -> bool {
        if self.sides.compare.is_none() || self.sides.preview.is_some() {
            return false;
        }
        match action {
            PromptAction::Scroll(step) => self.scroll_compare(step),
            PromptAction::NextChange(direction) => self.jump_difference(direction),
            _ => return false,
        }
        true
    }

    fn compare_rows(&self) -> usize {
        let layout = layout_for(self, false);
        let side = self.sides.compare.as_ref();
        side.and_then(OtherSide::answer)
            .map_or(0, |answer| rows(&answer.lines(), layout).len())
    }

    fn scroll_compare(&mut self, step: Step) {
        let count = self.compare_rows();
        let height = crate::tui::ui::pane_height(&self.screen, Pane::Prompt)
            .saturating_sub(1)
            .max(1);
        let last = count.saturating_sub(height);
        if let Some(side) = self.sides.compare.as_mut() {
            let top = side.top.min(last);
            side.top = crate::tui::dialogs::help::step(top, last + 1, height, step);
            side.current = None;
        }
    }

    fn jump_difference(&mut self, direction: Direction) {
        let layout = layout_for(self, false);
        let Some(side) = self.sides.compare.as_mut() else {
            return;
        };
        let Some(answer) = side.answer() else {
            return self.warn("the other side is still rendering");
        };
        let rows = rows(&answer.lines(), layout);
        let total = answer.hunks();
        match next_difference(&rows, side.top, side.current, direction) {
            Some((top, number)) => {
                side.top = top;
                side.current = Some(number);
                self.notify(format!("difference {} of {total}", number + 1));
            }
            None if total == 0 => self.warn("no differences"),
            None => self.warn(format!("no more differences ({total} in all)")),
        }
    }

    /// Whether `template` is the one the session uses.
    pub(in crate::tui) fn is_session_template(
        &self,
        template: &chatplate_core::catalog::TemplateSource,
    ) -> bool {
        let own = &self.workspace.template;
        self.workspace.missing_template.is_none()
            && template.name == own.name
            && template.origin == own.origin
    }
}
