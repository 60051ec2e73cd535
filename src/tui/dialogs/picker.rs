//! The session picker (`Ctrl+O`): the session files of the sessions folder, filtered as
//! you type (see `dialogs::picker_filter`); Enter opens the selected one, asking first
//! when there are unsaved changes.

use std::path::PathBuf;

use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::action::DialogAction;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::help;
use crate::tui::dialogs::view;
use crate::tui::dialogs::Confirm;
use crate::tui::dialogs::Dialog;
use crate::tui::dialogs::Overlay;
use crate::tui::keymap::Scope;
use crate::tui::theme::Theme;

/// The session picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// Session files found.
    pub entries: Vec<PathBuf>,
    /// The selected entry among those the filter shows.
    pub cursor: usize,
    /// What was typed to filter the list (see `dialogs::picker_filter`).
    pub filter: String,
    /// The folder listed: entries are shown and filtered by their path inside it.
    pub root: PathBuf,
}

impl Picker {
    /// Enter: opens the selected session, or asks first about unsaved changes.
    fn pick(&self, ctx: &mut DialogContext) {
        let Some(path) = self.shown().get(self.cursor).map(|p| (*p).clone()) else {
            return;
        };
        if ctx.workspace.dirty {
            return ctx.show(Overlay::Confirm(Confirm::OpenDiscard(path)));
        }
        ctx.ask(DialogRequest::OpenSession {
            path,
            discard: false,
        });
    }
}

impl Dialog for Picker {
    fn scope(&self) -> Scope {
        Scope::Picker
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        match action {
            DialogAction::Select(step) => {
                let page = usize::from(ctx.screen.height.saturating_sub(2)).max(1);
                let count = self.shown().len();
                self.cursor = help::step(self.cursor, count, page, step);
            }
            DialogAction::Type(c) => self.type_char(c),
            DialogAction::Backspace => self.backspace(),
            DialogAction::Accept => {
                self.pick(ctx);
                return false;
            }
            DialogAction::Cancel => return false,
            _ => {}
        }
        true
    }

    fn draw(&self, frame: &mut Frame, area: Rect, _name: &str, theme: Theme) {
        view::draw_picker(frame, area, self, theme);
    }
}
