//! The narrow context a dialog's handler gets instead of the whole app, and the typed
//! requests it hands back.
//!
//! A dialog owns its state and handles its own [`DialogAction`]s
//! ([`Dialog::handle`](crate::tui::dialogs::Dialog::handle)). Besides its own state it may
//! read the session, the shown render, the screen and what the opener offers, and set the
//! status line. Everything else (saving, opening, searching, editing the session) belongs
//! to another part of the app: the dialog asks for it with a [`DialogRequest`], and the
//! app core carries the requests out, in order, once the handler returns.
//!
//! [`DialogAction`]: crate::tui::action::DialogAction

use std::path::PathBuf;

use chatplate_core::catalog::TemplateSource;
use serde_json::Value as Json;

use crate::tui::action::Action;

use crate::tui::context::Effect;

use crate::tui::action::Pane;
use crate::tui::dialogs::open::Opening;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::Overlay;
use crate::tui::files::workspace::Workspace;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;

/// What a dialog asks the app to do; carried out in the order asked.
#[derive(Debug)]
pub enum DialogRequest {
    /// Open this dialog (in place of the one that asked, which closes).
    Show(Overlay),
    /// Run `action` as if its key had been pressed, focusing `focus` first.
    Run {
        /// The pane to focus before.
        focus: Option<Pane>,
        /// What to run.
        action: Action,
    },
    /// Save the session to its file (asking for a name the first time).
    Save {
        /// Quit once saved.
        then_quit: bool,
    },
    /// Save the session under a new name, which must not be another file's.
    SaveTo {
        /// The file typed.
        path: PathBuf,
        /// Quit once saved.
        then_quit: bool,
    },
    /// Save over a file another program changed.
    Overwrite,
    /// Open the session file at `path`, giving up this run's recovery file when `discard`.
    OpenSession {
        /// The session file.
        path: PathBuf,
        /// The unsaved changes were given up.
        discard: bool,
    },
    /// Quit without saving, removing this run's recovery file.
    DiscardAndQuit,
    /// Save the session (asking for a name the first time), then do this (open another
    /// session, start a new one); nothing if the save does not happen.
    SaveThen(Box<Effect>),
    /// File work (or any other effect) to hand to the event loop.
    Effect(Effect),
    /// Set the selected message's role (one undo step).
    SetRole(String),
    /// Search the prompt for this term.
    Search(String),
    /// The open input's text changed: its search as you type runs again and counts.
    SearchAsTyped,
    /// A search input closed with Esc: go back to where it started.
    CancelSearch(InputDialog),
    /// The message find closed with Enter: select its match from where it started.
    Find(InputDialog),
    /// Resolve this text (a path, a model folder or id, a `.gguf`) and open it.
    Open(String),
    /// List the folder the opener's text names, unless it is listed already.
    ListFolder(String),
    /// Forget the folder listed for the opener (it may have changed since).
    ForgetFolder,
    /// Select this message number.
    GoTo(String),
    /// Compare the session's render with this side.
    CompareWith(String),
    /// Add these tools to the session's, as one undo step; `what` starts the note.
    AddTools {
        /// The tool definitions.
        tools: Vec<Json>,
        /// How the status line introduces their names.
        what: String,
    },
    /// Append this message, as one undo step, and select it.
    AppendMessage(Json),
}

/// What a dialog's handler sees of the app.
#[derive(Debug)]
pub struct DialogContext<'a> {
    /// The session and its files (changes are requests).
    pub workspace: &'a Workspace,
    /// The shown render (or error).
    pub preview: &'a Preview,
    /// Focus and terminal size.
    pub screen: Screen,
    opening: &'a Opening,
    catalog: &'a [TemplateSource],
    status: &'a mut Option<Status>,
    requests: Vec<DialogRequest>,
}

/// The parts of the app a [`DialogContext`] reads.
#[derive(Debug, Clone, Copy)]
pub struct DialogParts<'a> {
    /// The session and its files.
    pub workspace: &'a Workspace,
    /// The shown render (or error).
    pub preview: &'a Preview,
    /// Focus and terminal size.
    pub screen: Screen,
    /// What was opened, for the opener's candidates.
    pub opening: &'a Opening,
    /// The Templates pane's list, for the opener's candidates.
    pub catalog: &'a [TemplateSource],
}

impl<'a> DialogContext<'a> {
    /// A context on the app's parts.
    pub fn new(parts: DialogParts<'a>, status: &'a mut Option<Status>) -> Self {
        DialogContext {
            workspace: parts.workspace,
            preview: parts.preview,
            screen: parts.screen,
            opening: parts.opening,
            catalog: parts.catalog,
            status,
            requests: Vec::new(),
        }
    }

    /// Everything the opener offers for `text` (see [`Opening::candidates`]).
    pub fn candidates(&self, text: &str) -> Vec<String> {
        self.opening.candidates(self.catalog, text)
    }

    /// The opener's matches for `text` (see [`Opening::choices`]).
    pub fn choices(&self, text: &str) -> Vec<String> {
        self.opening.choices(self.catalog, text)
    }

    /// Shows `text` in the status line.
    pub fn notify(&mut self, text: impl Into<String>) {
        *self.status = Some(Status::info(text));
    }

    /// Shows `text` in the status line as an error.
    pub fn warn(&mut self, text: impl Into<String>) {
        *self.status = Some(Status::error(text));
    }

    /// Asks the app for `request`.
    pub fn ask(&mut self, request: DialogRequest) {
        self.requests.push(request);
    }

    /// Asks for `effect` to reach the event loop.
    pub fn effect(&mut self, effect: Effect) {
        self.ask(DialogRequest::Effect(effect));
    }

    /// Asks for `overlay` to open.
    pub fn show(&mut self, overlay: Overlay) {
        self.ask(DialogRequest::Show(overlay));
    }

    /// What the dialog asked for.
    pub fn into_requests(self) -> Vec<DialogRequest> {
        self.requests
    }
}
