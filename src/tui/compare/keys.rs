//! The compare view's keys: picking a side (`C`, `c` in the Templates pane, `o`),
//! closing it, and, while it is shown, the prompt pane's scroll and difference keys.

use std::sync::Arc;

use chatplate_core::worker::comparing::Compared;

use crate::tui::action::Direction;

use crate::tui::action::Pane;

use crate::tui::action::PromptAction;

use crate::tui::action::CompareAction;
use crate::tui::action::Step;
use crate::tui::compare::next_difference;
use crate::tui::compare::rows;
use crate::tui::compare::rows::layout_for;
use crate::tui::compare::CompareContext;
use crate::tui::compare::OtherSide;
use crate::tui::compare::Shown;
use crate::tui::compare::SideChoice;
use crate::tui::compare::Sides;
use crate::tui::compare::CYCLE;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::dialogs::Overlay;

impl Sides {
    /// Carries out a compare-view action.
    pub fn handle(&mut self, action: CompareAction, ctx: &mut CompareContext) {
        match action {
            CompareAction::CycleSide => self.cycle_side(ctx),
            CompareAction::WithTemplate => self.compare_with_template(ctx),
            CompareAction::AskSource => {
                let input = InputDialog::new(InputKind::CompareWith, "");
                ctx.open(Overlay::Input(input));
            }
            CompareAction::Close => {
                if self.compare.take().is_some() {
                    ctx.notify("compare view closed");
                }
            }
            // The engine matrix's (`jobs::matrix`), which takes it first.
            CompareAction::Matrix => {}
        }
        ctx.ask();
    }

    fn cycle_side(&mut self, ctx: &mut CompareContext) {
        let current = self.compare.as_ref().map(|side| &side.choice);
        let next = match current.and_then(|c| CYCLE.iter().position(|s| s == c)) {
            Some(index) => CYCLE.get(index + 1).cloned(),
            None => Some(CYCLE[0].clone()),
        };
        match next {
            Some(choice) => ctx.notify(self.start_comparing(choice)),
            None => {
                self.compare = None;
                ctx.notify("compare view closed");
            }
        }
    }

    fn compare_with_template(&mut self, ctx: &mut CompareContext) {
        let Some(template) = ctx.cursor.cloned() else {
            return ctx.warn("no template matches the filter");
        };
        if ctx.is_session_template(&template) {
            return ctx.warn("that is the session's own template: move to another one first");
        }
        self.preview = None;
        ctx.notify(self.start_comparing(SideChoice::Template(Box::new(template))));
        ctx.focus(Pane::Prompt);
    }

    /// Shows the session's prompt against `text`, what it was before a change named by
    /// `label` (a knob flipped), in the compare view: the diff is what the change did.
    pub fn compare_before(&mut self, label: String, text: std::sync::Arc<str>) {
        self.preview = None;
        self.start_comparing(SideChoice::Before { label, text });
    }

    /// Shows `choice` in the compare view; returns the status line's notice, which
    /// says what keys the view takes.
    pub(super) fn start_comparing(&mut self, choice: SideChoice) -> String {
        let label = choice.label();
        self.compare = Some(OtherSide::new(choice));
        format!("comparing with {label} (C: next side, ]/[: differences, Esc: close)")
    }

    /// Shows `choice` in the compare view (the engine matrix's Enter) with `answer`, the
    /// comparison the matrix already has and the session generation it answers, so the
    /// diff is there at once (asked again when the session changed since); returns the
    /// status line's notice.
    pub fn show_answered(
        &mut self,
        choice: SideChoice,
        answer: Option<(Arc<Compared>, u64)>,
    ) -> String {
        self.preview = None;
        let notice = self.start_comparing(choice);
        if let (Some(side), Some((answer, generation))) = (self.compare.as_mut(), answer) {
            side.shown = Shown::Answer(answer);
            side.answered = generation;
        }
        notice
    }

    /// Closes the compare view (the engine matrix takes the Prompt pane).
    pub fn close_compare(&mut self) {
        self.compare = None;
    }

    /// The prompt pane's scroll and difference keys move the compare view while it is
    /// shown; returns whether it took `action`.
    pub fn took(&mut self, action: PromptAction, ctx: &mut CompareContext) -> bool {
        if self.compare.is_none() || self.preview.is_some() {
            return false;
        }
        match action {
            PromptAction::Scroll(step) => self.scroll_compare(step, ctx),
            PromptAction::NextChange(direction) => self.jump_difference(direction, ctx),
            _ => return false,
        }
        true
    }

    fn compare_rows(&self, ctx: &CompareContext) -> usize {
        let layout = layout_for(&ctx.screen, false);
        let side = self.compare.as_ref();
        side.and_then(OtherSide::answer)
            .map_or(0, |answer| rows(&answer.lines(), layout).len())
    }

    fn scroll_compare(&mut self, step: Step, ctx: &CompareContext) {
        let count = self.compare_rows(ctx);
        let height = crate::tui::layout::pane_height(&ctx.screen, Pane::Prompt)
            .saturating_sub(1)
            .max(1);
        let last = count.saturating_sub(height);
        if let Some(side) = self.compare.as_mut() {
            let top = side.top.min(last);
            side.top = crate::tui::dialogs::help::step(top, last + 1, height, step);
            side.current = None;
        }
    }

    fn jump_difference(&mut self, direction: Direction, ctx: &mut CompareContext) {
        let layout = layout_for(&ctx.screen, false);
        let Some(side) = self.compare.as_mut() else {
            return;
        };
        let Some(answer) = side.answer() else {
            return ctx.warn("the other side is still rendering");
        };
        let rows = rows(&answer.lines(), layout);
        let total = answer.hunks();
        match next_difference(&rows, side.top, side.current, direction) {
            Some((top, number)) => {
                side.top = top;
                side.current = Some(number);
                ctx.notify(format!("difference {} of {total}", number + 1));
            }
            None if total == 0 => ctx.warn("no differences"),
            None => ctx.warn(format!("no more differences ({total} in all)")),
        }
    }
}
