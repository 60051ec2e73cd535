//! The live template preview: while the Templates pane has the focus, the template
//! under its cursor renders the session's conversation on the worker and the prompt
//! pane shows it (`preview: NAME`, its differences from the session's render marked).
//! Each move replaces the previous preview (its job is cancelled or its answer
//! dropped). The session does not change: Enter adopts the template, Esc (or leaving
//! the pane) goes back to the session's own render.
//!
//! The app core tells [`Sides`] after each Templates-pane action and each move of the
//! focus; the template under the cursor comes in its [`CompareContext`].

use chatplate_core::catalog::TemplateSource;

use crate::tui::action::Pane;

use crate::tui::action::TemplateAction;
use crate::tui::compare::CompareContext;
use crate::tui::compare::OtherSide;
use crate::tui::compare::SideChoice;
use crate::tui::compare::Sides;

impl Sides {
    /// After a Templates-pane action: previews the template under the cursor, or
    /// stops previewing (Esc puts the cursor back on the session's template).
    pub fn follow_cursor(&mut self, action: &TemplateAction, ctx: &mut CompareContext) {
        let elsewhere = ctx.cursor.is_some_and(|t| !ctx.is_session_template(t));
        if *action == TemplateAction::FilterClear && (self.preview.is_some() || elsewhere) {
            return self.end_preview(ctx);
        }
        let Some(wanted) = previewed(ctx) else {
            self.preview = None;
            return;
        };
        let same =
            |side: &OtherSide| matches!(&side.choice, SideChoice::Template(t) if **t == *wanted);
        if !self.preview.as_ref().is_some_and(same) {
            let choice = SideChoice::Template(Box::new(wanted.clone()));
            self.preview = Some(OtherSide::new(choice));
            ctx.ask();
        }
    }

    /// Back to the session's render, the cursor on the session's template.
    fn end_preview(&mut self, ctx: &mut CompareContext) {
        if self.preview.take().is_some() {
            ctx.notify("back to the session's render");
        }
        if ctx.workspace.missing_template.is_none() {
            ctx.cursor_home();
        }
        ctx.ask();
    }

    /// The focus moved to `focus`: away from the Templates pane, the preview ends.
    pub fn focus_moved(&mut self, focus: Pane) {
        if focus != Pane::Templates {
            self.preview = None;
        }
    }
}

/// The template to preview: the one under the cursor while the Templates pane has the
/// focus, unless it is the session's own.
fn previewed<'a>(ctx: &CompareContext<'a>) -> Option<&'a TemplateSource> {
    let template = ctx.cursor?;
    let shown = ctx.screen.focus == Pane::Templates && !ctx.is_session_template(template);
    shown.then_some(template)
}
