//! The narrow context the compare view and the template preview get instead of the
//! whole app, as the panes get their [`PaneContext`](crate::tui::context::PaneContext).
//!
//! [`Sides`](crate::tui::compare::Sides) reads the session, the shown render, the
//! screen and the Templates pane's cursor, and writes the status line. What only the
//! app can do (move the focus, open a dialog, put the Templates cursor back, ask the
//! worker now) it asks for; the app carries the [`CompareRequests`] out once the
//! handler returns.

use chatplate_core::catalog::TemplateSource;

use crate::tui::action::Pane;
use crate::tui::dialogs::Overlay;
use crate::tui::files::workspace::Workspace;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;

/// What the compare side's handlers see of the app.
#[derive(Debug)]
pub struct CompareContext<'a> {
    /// The session and its files.
    pub workspace: &'a Workspace,
    /// The shown render (or error).
    pub preview: &'a Preview,
    /// Focus and terminal size.
    pub screen: Screen,
    /// The template under the Templates pane's cursor, if any matches its filter.
    pub cursor: Option<&'a TemplateSource>,
    status: &'a mut Option<Status>,
    requests: CompareRequests,
}

/// What the compare side asked the app to do.
#[derive(Debug, Default)]
pub struct CompareRequests {
    /// Move the focus here.
    pub focus: Option<Pane>,
    /// Open this dialog.
    pub overlay: Option<Overlay>,
    /// Put the Templates cursor back on the session's template.
    pub cursor_home: bool,
    /// The shown side changed: ask the background jobs now, not after the batch.
    pub ask: bool,
}

impl<'a> CompareContext<'a> {
    /// A context on the app's parts.
    pub fn new(
        workspace: &'a Workspace,
        preview: &'a Preview,
        screen: Screen,
        cursor: Option<&'a TemplateSource>,
        status: &'a mut Option<Status>,
    ) -> Self {
        CompareContext {
            workspace,
            preview,
            screen,
            cursor,
            status,
            requests: CompareRequests::default(),
        }
    }

    /// Shows `text` in the status line.
    pub fn notify(&mut self, text: impl Into<String>) {
        *self.status = Some(Status::info(text));
    }

    /// Shows `text` in the status line as an error.
    pub fn warn(&mut self, text: impl Into<String>) {
        *self.status = Some(Status::error(text));
    }

    /// Whether `template` is the one the session uses.
    pub fn is_session_template(&self, template: &TemplateSource) -> bool {
        let own = &self.workspace.template;
        self.workspace.missing_template.is_none()
            && template.name == own.name
            && template.origin == own.origin
    }

    /// Asks for the focus to move to `pane`.
    pub fn focus(&mut self, pane: Pane) {
        self.requests.focus = Some(pane);
    }

    /// Asks for `overlay` to open.
    pub fn open(&mut self, overlay: Overlay) {
        self.requests.overlay = Some(overlay);
    }

    /// Asks for the Templates cursor to go back to the session's template.
    pub fn cursor_home(&mut self) {
        self.requests.cursor_home = true;
    }

    /// Asks for the worker to be asked for the shown side at once.
    pub fn ask(&mut self) {
        self.requests.ask = true;
    }

    /// What the handler asked for.
    pub fn into_requests(self) -> CompareRequests {
        self.requests
    }
}
