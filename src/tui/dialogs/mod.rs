//! Dialogs drawn over the panes: help, yes/no questions, one-line inputs, the session
//! picker and the paste dialog. Each owns its state and handles its own keys through a
//! [`DialogContext`], asking the app for what it cannot do itself with
//! [`DialogRequest`]s (see [`context`]); the app core lends the context and carries the
//! requests out.
//!
//! A new dialog is a file with its state and its [`Dialog`] impl, plus one line in
//! [`overlays!`] below.

pub mod code;
pub mod confirm;
pub mod context;
pub mod copy_code;
pub mod help;
pub mod help_keys;
pub mod input;
pub mod log;
pub mod open;
pub mod opener;
pub mod opener_paths;
pub mod paste;
pub mod paste_view;
pub mod picker;
pub mod picker_filter;
pub mod recovery_diff;
pub mod tool_skeleton;
pub mod view;

use std::path::Path;

use chatplate_core::worker::{Job, Reply};
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::action::Action;

use crate::tui::action::DialogAction;

use crate::tui::context::Effect;
use crate::tui::files::disk;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::keymap::Scope;
use crate::tui::theme::Theme;

pub use confirm::Confirm;
pub use context::{DialogContext, DialogRequest};
pub use input::{InputDialog, InputKind};
pub use picker::Picker;

/// A dialog: its keymap scope, its keys, its drawing.
pub trait Dialog {
    /// The keymap scope while it is open.
    fn scope(&self) -> Scope;

    /// Handles one action on its own state; returns whether it stays open.
    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool;

    /// Takes pasted text (most dialogs ignore it).
    fn paste(&mut self, _text: &str) {}

    /// Draws it over `area`; `name` is the session's (questions name it).
    fn draw(&self, frame: &mut Frame, area: Rect, name: &str, theme: Theme);

    /// The dialog's background job, when the worker feeds it.
    fn background(&mut self) -> Option<&mut dyn Background> {
        None
    }

    /// [`Dialog::background`], read only.
    fn background_ref(&self) -> Option<&dyn Background> {
        None
    }
}

/// Declares [`Overlay`]: the help (whose fields tests match on) and one variant per
/// [`Dialog`], each delegating to its state.
macro_rules! overlays {
    ($($(#[$doc:meta])* $variant:ident($state:ty),)*) => {
        /// The dialog on top of the panes.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Overlay {
            /// The key help, scrolled by `scroll` lines (see `dialogs::help_keys`).
            Help {
                /// Lines scrolled.
                scroll: u16,
                /// The scope it was opened from: its keys come first.
                from: Scope,
                /// The text typed to filter the rows.
                filter: String,
                /// The selected row among those that can be selected (not headings).
                cursor: usize,
            },
            $($(#[$doc])* $variant($state),)*
        }

        impl Overlay {
            /// The open dialog, unless it is the help.
            fn dialog(&self) -> Option<&dyn Dialog> {
                match self {
                    Overlay::Help { .. } => None,
                    $(Overlay::$variant(state) => Some(state),)*
                }
            }

            /// [`Overlay::dialog`], to change.
            fn dialog_mut(&mut self) -> Option<&mut dyn Dialog> {
                match self {
                    Overlay::Help { .. } => None,
                    $(Overlay::$variant(state) => Some(state),)*
                }
            }
        }
    };
}

overlays! {
    /// A question.
    Confirm(Confirm),
    /// A text input.
    Input(InputDialog),
    /// The session picker.
    Picker(Picker),
    /// A model's raw output to parse into a new message (see `dialogs::paste`).
    Paste(paste::PasteDialog),
    /// What the status line said this run (see `dialogs::log`).
    Log(log::LogDialog),
    /// Copy as code: Python, the render command or a request body (see `dialogs::copy_code`).
    CopyCode(copy_code::CopyCode),
}

impl Overlay {
    /// The keymap scope while this dialog is open.
    pub fn scope(&self) -> Scope {
        self.dialog().map_or(Scope::Help, Dialog::scope)
    }

    /// Handles a dialog action; returns whether the dialog stays open.
    pub fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        match self {
            Overlay::Help {
                scroll,
                from,
                filter,
                cursor,
            } => {
                let state = help_keys::HelpState {
                    scroll,
                    from: *from,
                    filter,
                    cursor,
                };
                help_keys::handle(state, action, ctx)
            }
            _ => self.dialog_mut().is_some_and(|d| d.handle(action, ctx)),
        }
    }

    /// Draws the dialog over `area`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, name: &str, theme: Theme) {
        match self {
            Overlay::Help {
                scroll,
                from,
                filter,
                cursor,
            } => {
                let shown = help::HelpShown {
                    from: *from,
                    filter,
                    scroll: *scroll,
                    cursor: *cursor,
                };
                help::draw(frame, area, shown, theme)
            }
            _ => {
                if let Some(dialog) = self.dialog() {
                    dialog.draw(frame, area, name, theme);
                }
            }
        }
    }

    /// Asks for a file name under `dir`.
    pub fn save_as(dir: &Path, then_quit: bool) -> Self {
        let text = format!("{}/", dir.display());
        Overlay::Input(InputDialog::new(InputKind::SavePath { then_quit }, text))
    }

    /// Asks for a role, starting from `current`.
    pub fn role(current: &str) -> Self {
        Overlay::Input(InputDialog::new(InputKind::Role, current))
    }

    /// Asks for a search term.
    pub fn search() -> Self {
        Overlay::Input(InputDialog::new(InputKind::Search, ""))
    }

    /// Pasted text goes to the dialog (a text input keeps the first line only).
    pub fn paste(&mut self, text: &str) {
        if let Some(dialog) = self.dialog_mut() {
            dialog.paste(text);
        }
    }
}

/// The worker answers a dialog that waits for it (the paste dialog's parser).
impl Background for Overlay {
    fn takes(&self, reply: &Reply, view: &JobView) -> bool {
        let job = self.dialog().and_then(Dialog::background_ref);
        job.is_some_and(|job| job.takes(reply, view))
    }

    fn request(&mut self, view: &JobView, said: &mut Said) -> Option<(u64, Job)> {
        let job = self.dialog_mut().and_then(Dialog::background)?;
        job.request(view, said)
    }

    fn receive(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool {
        let job = self.dialog_mut().and_then(Dialog::background);
        job.is_some_and(|job| job.receive(reply, view, said))
    }

    fn pending(&self, view: &JobView) -> bool {
        let job = self.dialog().and_then(Dialog::background_ref);
        job.is_some_and(|job| job.pending(view))
    }
}

/// The actions that open a dialog (or ask for the file work one needs first): `Ctrl+O`,
/// `Ctrl+N`, `Ctrl+P`, `+`, the paste and save-as keys. Other actions do nothing here.
pub fn start(action: &Action, ctx: &mut DialogContext) {
    match action {
        Action::OpenPicker => {
            let dir = ctx.workspace.sessions_dir.clone();
            ctx.effect(Effect::Disk(disk::Job::ListSessions(dir)));
        }
        Action::NewSession => open::new_session(ctx),
        Action::OpenTarget => open::ask_open(ctx),
        Action::AddTool => ctx.show(Overlay::Input(InputDialog::new(InputKind::Tool, ""))),
        Action::PasteOutput => ctx.show(Overlay::Paste(paste::PasteDialog::default())),
        Action::CopyAsCode => ctx.show(Overlay::CopyCode(copy_code::CopyCode::new(ctx.workspace))),
        Action::SaveAs => ctx.show(Overlay::save_as(&ctx.workspace.sessions_dir, false)),
        _ => {}
    }
}
