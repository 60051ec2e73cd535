//! The narrow context a pane's action handler gets instead of the whole app.
//!
//! A pane owns its state and handles its own actions (`TemplatesPane::handle`, ...); so
//! do the components beside the panes (the workbench, the file work). What
//! it may touch besides its own state is here: the session to read and change, the shown
//! render and the screen to read, and the status line. What only the app can do (render
//! again, switch templates, move the focus, open a dialog, wait for the current render)
//! the pane asks for; the app carries the [`Requests`] out once the handler returns.

use chatplate_core::catalog::TemplateSource;

use crate::tui::action::CopyTarget;

use crate::tui::action::Pane;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk::Job;
use crate::tui::files::workspace::Workspace;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;

/// What a pane's handler sees of the app.
#[derive(Debug)]
pub struct PaneContext<'a> {
    /// The session and its files.
    pub workspace: &'a mut Workspace,
    /// The shown render (or error).
    pub preview: &'a Preview,
    /// Focus and terminal size.
    pub screen: Screen,
    status: &'a mut Option<Status>,
    requests: Requests,
}

/// What a pane asked the app to do.
#[derive(Debug, Default)]
pub struct Requests {
    /// Use this template for the session.
    pub template: Option<TemplateSource>,
    /// The session changed in a way the list edits did not record: mark it unsaved.
    pub touched: bool,
    /// The session changed: mark it unsaved and render it again.
    pub edited: bool,
    /// Only this message changed, in place (the cheap render path for typing).
    pub message_edited: Option<usize>,
    /// The prompt view goes back to following the selected message.
    pub follow: bool,
    /// The field editor opened: keys go to the messages pane.
    pub focus_editor: bool,
    /// Select this message in the message list.
    pub select_message: Option<usize>,
    /// Move the focus here.
    pub focus: Option<Pane>,
    /// Open this dialog.
    pub overlay: Option<Overlay>,
    /// Run this once the shown render is current.
    pub deferred: Option<Deferred>,
    /// Replace the session and everything shown of it with this one (opened, restored,
    /// imported).
    pub load: Option<Box<Workspace>>,
    /// The model whose named templates were open no longer applies.
    pub forget_template_set: bool,
    /// The session's template file changed on disk and the workspace took it in: show it.
    pub reloaded: Option<TemplateSource>,
    /// A status line shown once the rest is done, so that what carrying it out says
    /// does not cover it.
    pub report: Option<Status>,
    /// Show the prompt against this earlier one (label, text) in the compare view.
    pub compare_before: Option<(String, std::sync::Arc<str>)>,
}

impl<'a> PaneContext<'a> {
    /// A context on the app's parts.
    pub fn new(
        workspace: &'a mut Workspace,
        preview: &'a Preview,
        screen: Screen,
        status: &'a mut Option<Status>,
    ) -> Self {
        PaneContext {
            workspace,
            preview,
            screen,
            status,
            requests: Requests::default(),
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

    /// Asks for `template` to be used for the session (an unsaved change).
    pub fn use_template(&mut self, template: TemplateSource) {
        self.requests.template = Some(template);
        self.requests.touched = true;
    }

    /// Asks for the session, changed, to be marked unsaved and rendered again.
    pub fn edited(&mut self) {
        self.requests.edited = true;
    }

    /// Asks for message `index`, changed in place, to be rendered again.
    pub fn message_edited(&mut self, index: usize) {
        self.requests.message_edited = Some(index);
    }

    /// Asks for the prompt view to follow the selected message again.
    pub fn follow_selection(&mut self) {
        self.requests.follow = true;
    }

    /// Asks for the keys to go to the field editor that just opened.
    pub fn focus_editor(&mut self) {
        self.requests.focus_editor = true;
    }

    /// Asks for message `index` to be selected in the message list.
    pub fn select_message(&mut self, index: usize) {
        self.requests.select_message = Some(index);
    }

    /// Asks for the focus to move to `app::pane`.
    pub fn focus(&mut self, pane: Pane) {
        self.requests.focus = Some(pane);
    }

    /// Asks for `overlay` to open.
    pub fn open(&mut self, overlay: Overlay) {
        self.requests.overlay = Some(overlay);
    }

    /// Asks for `app::action` to run once the shown render is current.
    pub fn when_current(&mut self, action: Deferred) {
        self.requests.deferred = Some(action);
    }

    /// Asks for `workspace` to replace the session.
    pub fn load(&mut self, workspace: Workspace) {
        self.requests.load = Some(Box::new(workspace));
    }

    /// Asks for the open model's named templates to be forgotten.
    pub fn forget_template_set(&mut self) {
        self.requests.forget_template_set = true;
    }

    /// Asks for `template`, reloaded from disk into the workspace, to be shown.
    pub fn reloaded(&mut self, template: TemplateSource) {
        self.requests.reloaded = Some(template);
    }

    /// Shows `text` in the status line once the requests are carried out.
    pub fn report(&mut self, text: impl Into<String>) {
        self.requests.report = Some(Status::info(text));
    }

    /// Asks for the compare view to show the prompt against `text`, what it was before
    /// the change `label` names.
    pub fn compare_before(&mut self, label: String, text: std::sync::Arc<str>) {
        self.requests.compare_before = Some((label, text));
    }

    /// Whether the status line shows an error.
    pub fn showing_error(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.error)
    }

    /// What the pane asked for.
    pub fn into_requests(self) -> Requests {
        self.requests
    }
}

/// An action that needs the render of what the user sees, not an older one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferred {
    /// Take the render as the expected outcome.
    Expected,
    /// Copy part of the prompt.
    Copy(CopyTarget),
    /// Scroll the diff to its first difference.
    FirstDifference,
}

/// Work `update` hands back because it needs the real terminal or the disk.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave the app.
    Quit,
    /// Put `text` on the clipboard; `what` names it in the status line.
    Copy {
        /// The text.
        text: String,
        /// What it is ("the prompt", ...).
        what: &'static str,
    },
    /// Suspend the UI and edit `text` in an external editor; the file gets `suffix`.
    EditExternally {
        /// The starting text.
        text: String,
        /// File name suffix, so the editor picks a mode (`.json`, `.txt`).
        suffix: &'static str,
    },
    /// Suspend the UI and edit a file in place (the template); the file watch picks up
    /// the saved change.
    EditFile(std::path::PathBuf),
    /// File work: saving, opening, the recovery file, the template watch. The event loop
    /// does it ([`crate::tui::files::disk::perform`]) and gives `update` the outcome.
    Disk(Job),
}
