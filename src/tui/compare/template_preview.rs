//! The live template preview: while the Templates pane has the focus, the template
//! under its cursor renders the session's conversation on the worker and the prompt
//! pane shows it (`preview: NAME`, its differences from the session's render marked).
//! Each move replaces the previous preview (its job is cancelled or its answer
//! dropped). The session does not change: Enter adopts the template, Esc (or leaving
//! the pane) goes back to the session's own render.

use crate::tui::app::action::{Pane, TemplateAction};
use crate::tui::app::App;
use crate::tui::compare::{OtherSide, SideChoice};

impl App {
    /// After a Templates-pane action: previews the template under the cursor, or
    /// stops previewing (Esc puts the cursor back on the session's template).
    pub(in crate::tui) fn follow_template_cursor(&mut self, action: &TemplateAction) {
        let selected = self.templates.selected().cloned();
        let elsewhere = selected.is_some_and(|t| !self.is_session_template(&t));
        if *action == TemplateAction::FilterClear && (self.sides.preview.is_some() || elsewhere) {
            self.end_preview();
            return;
        }
        let selected = self.templates.selected().cloned();
        let wanted = match selected {
            Some(template)
                if self.screen.focus == Pane::Templates && !self.is_session_template(&template) =>
            {
                template
            }
            _ => {
                self.sides.preview = None;
                return;
            }
        };
        let same = |side: &OtherSide| side.choice == SideChoice::Template(Box::new(wanted.clone()));
        if !self.sides.preview.as_ref().is_some_and(same) {
            self.sides.preview = Some(OtherSide::new(SideChoice::Template(Box::new(wanted))));
            self.request_sides();
        }
    }

    /// Back to the session's render, the cursor on the session's template.
    pub(in crate::tui) fn end_preview(&mut self) {
        if self.sides.preview.take().is_some() {
            self.notify("back to the session's render");
        }
        if self.workspace.missing_template.is_none() {
            let own = self.workspace.template.clone();
            self.templates.remember(&own);
        }
        self.request_sides();
    }

    /// The focus left the Templates pane: the preview ends.
    pub(in crate::tui) fn focus_left_templates(&mut self) {
        if self.screen.focus != Pane::Templates {
            self.sides.preview = None;
        }
    }
}
