//! Dialogs drawn over the panes: help, yes/no questions, one-line inputs and the session
//! picker. Their state lives here with their update handler; `dialogs::view` draws them.

pub mod help;
pub mod help_keys;
pub mod open;
pub mod opener;
pub mod opener_paths;
pub mod paste;
pub mod paste_view;
pub mod picker_filter;
pub mod recovery_diff;
pub mod tool_skeleton;
pub mod view;

use std::path::{Path, PathBuf};

use crate::tui::action::DialogAction;

use crate::tui::action::Effect;
use crate::tui::app::App;
use crate::tui::files::disk::Job;
use crate::tui::files::disk::Outside;
use crate::tui::files::disk::Outsider;
use crate::tui::files::disk::Save;
use crate::tui::files::recovery::Found;
use crate::tui::files::FileRequest;
use crate::tui::keymap::Scope;

/// A yes / no / cancel question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// Unsaved changes on quit: save, discard or stay.
    Quit,
    /// A recovery file from an earlier run exists: restore it, discard it, or decide
    /// later (it is kept, and this run's changes go to a file of their own).
    Restore(Found),
    /// Unsaved changes before opening another session.
    OpenDiscard(PathBuf),
    /// Another program changed the session file since it was read or saved.
    Changed,
    /// Saving held back: the session may not name its template's file from where it
    /// goes. Allow the folder as a template root, or write the template's text instead.
    TemplateOutside(Outsider),
    /// `E` took the render as the expected outcome: save the session now?
    SaveExpected,
}

/// What a text input is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// The file name for the first save; quit afterwards when `then_quit`.
    SavePath {
        /// Quit once saved.
        then_quit: bool,
    },
    /// A custom role.
    Role,
    /// A prompt search term.
    Search,
    /// Something to open: a path, a model folder, a model id, a `.gguf`.
    Open,
    /// A message number to go to.
    GoTo,
    /// Text to find in the message list.
    FindMessage,
    /// A tool to add: `NAME PARAM description`, or a JSON file's path.
    Tool,
    /// The compare view's other side: a template source, `@REV` or a llama-server URL.
    CompareWith,
}

/// A one-line text input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputDialog {
    /// What it is for.
    pub kind: InputKind,
    /// The text so far.
    pub text: String,
    /// For the searches that run as you type: how many matches the text has (shown in
    /// the title); `None` before anything is typed.
    pub matches: Option<usize>,
    /// Where the message find started (the selected row), which it returns to on Esc
    /// and searches from as the text changes; in the opener, the selected match.
    pub origin: usize,
    /// The opener's matches for the text, best first (see `dialogs::opener`).
    pub choices: Vec<String>,
}

impl InputDialog {
    /// An input for `kind`, starting with `text`.
    pub fn new(kind: InputKind, text: impl Into<String>) -> Self {
        InputDialog {
            kind,
            text: text.into(),
            matches: None,
            origin: 0,
            choices: Vec::new(),
        }
    }
}

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
    /// A question.
    Confirm(Confirm),
    /// A text input.
    Input(InputDialog),
    /// The session picker.
    Picker(Picker),
    /// A model's raw output to parse into a new message (see `dialogs::paste`).
    Paste(crate::tui::dialogs::paste::PasteDialog),
}

impl Overlay {
    /// The keymap scope while this dialog is open.
    pub fn scope(&self) -> Scope {
        match self {
            Overlay::Help { .. } => Scope::Help,
            Overlay::Confirm(Confirm::Changed) => Scope::Conflict,
            Overlay::Confirm(_) => Scope::Confirm,
            Overlay::Input(_) | Overlay::Paste(_) => Scope::Input,
            Overlay::Picker(_) => Scope::Picker,
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

    /// Pasted text goes into a text input (first line only).
    pub fn paste(&mut self, text: &str) {
        if let Overlay::Input(input) = self {
            input.text.push_str(text.lines().next().unwrap_or_default());
        }
        if let Overlay::Paste(dialog) = self {
            dialog.add(text);
        }
    }
}

impl App {
    /// Opens the session picker on the sessions folder (once the event loop listed it).
    pub(in crate::tui) fn open_picker(&mut self) -> Option<Effect> {
        let dir = self.workspace.sessions_dir.clone();
        Some(Effect::Disk(Job::ListSessions(dir)))
    }

    /// Handles a dialog action.
    pub(in crate::tui) fn update_dialog(&mut self, action: DialogAction) -> Option<Effect> {
        let overlay = self.overlay.take()?;
        match overlay {
            Overlay::Help {
                scroll,
                from,
                filter,
                cursor,
            } => self.help_action(scroll, from, filter, cursor, action),
            Overlay::Confirm(question) => self.answer(question, action),
            Overlay::Input(input) => self.input_action(input, action),
            Overlay::Picker(picker) => self.picker_action(picker, action),
            Overlay::Paste(dialog) => {
                self.paste_action(dialog, action);
                None
            }
        }
    }

    fn answer(&mut self, question: Confirm, action: DialogAction) -> Option<Effect> {
        match (question, action) {
            (Confirm::Restore(found), DialogAction::Cancel) => {
                let path = found.path.display();
                self.notify(format!("kept {path}; it is offered again next time"));
            }
            (_, DialogAction::Cancel) => {}
            (Confirm::Quit, DialogAction::Accept) => {
                return self.file(FileRequest::Save {
                    path: None,
                    then_quit: true,
                })
            }
            (Confirm::Quit, DialogAction::Discard) => {
                return Some(match self.workspace.discard_recovery() {
                    Some(removal) => Effect::Disk(Job::DiscardAndQuit(removal)),
                    None => Effect::Quit,
                });
            }
            (Confirm::Restore(found), DialogAction::Accept) => {
                let place = self.workspace.place();
                return Some(Effect::Disk(Job::Restore {
                    recovery: found.path,
                    place,
                }));
            }
            (Confirm::Restore(found), DialogAction::Discard) => {
                let removal = self.workspace.removal(found.path);
                let lookup = self.workspace.recovery_lookup();
                return Some(Effect::Disk(Job::DiscardFound { removal, lookup }));
            }
            (Confirm::OpenDiscard(path), DialogAction::Accept | DialogAction::Discard) => {
                let discard = true;
                return self.file(FileRequest::Open { path, discard });
            }
            (Confirm::SaveExpected, DialogAction::Accept) => return self.save(None),
            (Confirm::SaveExpected, DialogAction::Discard) => {}
            (Confirm::Changed, DialogAction::Overwrite) => {
                return self.file(FileRequest::Overwrite)
            }
            (Confirm::Changed, DialogAction::Reload) => {
                let path = self.workspace.path.clone()?;
                let discard = true;
                return self.file(FileRequest::Open { path, discard });
            }
            (Confirm::Changed, DialogAction::SaveAs) => {
                self.overlay = Some(Overlay::save_as(&self.workspace.sessions_dir, false));
            }
            (Confirm::TemplateOutside(outsider), DialogAction::Accept) => {
                let save = self.outsider_save(&outsider, Outside::Keep);
                return Some(Effect::Disk(Job::AllowRoot {
                    folder: outsider.folder,
                    save: Box::new(save),
                }));
            }
            (Confirm::TemplateOutside(outsider), DialogAction::Discard) => {
                let save = self.outsider_save(&outsider, Outside::Inline);
                return Some(Effect::Disk(Job::Save(save)));
            }
            (question, _) => self.overlay = Some(Overlay::Confirm(question)),
        }
        None
    }

    /// The save the template question held back, going ahead as `outside` says.
    fn outsider_save(&self, outsider: &Outsider, outside: Outside) -> Save {
        let target = Some(outsider.target.clone());
        (self.workspace).save_job(target, outsider.guard, outsider.then_quit, outside)
    }

    fn input_action(&mut self, mut input: InputDialog, action: DialogAction) -> Option<Effect> {
        match action {
            DialogAction::Type(c) => {
                input.text.push(c);
                self.search_as_typed(&mut input);
            }
            DialogAction::Backspace => {
                input.text.pop();
                self.search_as_typed(&mut input);
            }
            DialogAction::Select(step) if input.kind == InputKind::Open => {
                let count = input.choices.len();
                input.origin = crate::tui::dialogs::help::step(input.origin, count, 1, step);
            }
            DialogAction::Complete if input.kind == InputKind::Open => {
                let selected = input.choices.get(input.origin).map(String::as_str);
                let candidates = self.opener_candidates(&input.text);
                if let Some(text) = opener::complete(&input.text, &candidates, selected) {
                    input.text = text;
                    self.refresh_choices(&mut input);
                }
            }
            DialogAction::Accept => return self.submit(input),
            DialogAction::Cancel => return self.cancel_search(&input),
            _ => {}
        }
        let listing = (input.kind == InputKind::Open)
            .then(|| self.list_typed_folder(&input.text))
            .flatten();
        self.overlay = Some(Overlay::Input(input));
        listing
    }

    fn submit(&mut self, input: InputDialog) -> Option<Effect> {
        match input.kind {
            InputKind::SavePath { then_quit } => return self.save_to(&input.text, then_quit),
            InputKind::Role => self.as_one_step(|app| {
                app.in_messages(|pane, ctx, _| {
                    pane.set_role(ctx, &input.text);
                    None
                });
            }),
            InputKind::Search => {
                let term = input.text;
                return self.in_prompt(|pane, ctx, _| {
                    pane.start_search(term, ctx);
                    None
                });
            }
            InputKind::Open => {
                let target = opener_paths::expand_home(opener::target(&input));
                self.open_target(&target)
            }
            InputKind::GoTo => {
                self.in_workbench(|bench, ctx, list| bench.go_to(&input.text, ctx, list))
            }
            InputKind::Tool => return self.add_tool_from(&input.text),
            InputKind::CompareWith => {
                self.in_compare(|sides, ctx| sides.compare_source(&input.text, ctx))
            }
            InputKind::FindMessage => {
                self.in_workbench(|bench, ctx, list| bench.find_from_origin(&input, ctx, list));
            }
        }
        None
    }

    fn save_to(&mut self, text: &str, then_quit: bool) -> Option<Effect> {
        let text = text.trim();
        if text.is_empty() || text.ends_with('/') {
            let kind = InputKind::SavePath { then_quit };
            self.overlay = Some(Overlay::Input(InputDialog::new(kind, text)));
            self.warn("type a file name");
            return None;
        }
        let mut path = PathBuf::from(text);
        if path.extension().is_none_or(|e| e != "json") {
            path.set_extension("json");
        }
        self.file(FileRequest::SaveAs { path, then_quit })
    }

    fn picker_action(&mut self, mut picker: Picker, action: DialogAction) -> Option<Effect> {
        match action {
            DialogAction::Select(step) => {
                let page = usize::from(self.screen.height.saturating_sub(2)).max(1);
                let count = picker.shown().len();
                picker.cursor = crate::tui::dialogs::help::step(picker.cursor, count, page, step)
            }
            DialogAction::Type(c) => picker.type_char(c),
            DialogAction::Backspace => picker.backspace(),
            DialogAction::Accept => return self.pick(picker),
            DialogAction::Cancel => return None,
            _ => {}
        }
        self.overlay = Some(Overlay::Picker(picker));
        None
    }

    fn pick(&mut self, picker: Picker) -> Option<Effect> {
        let path = picker.shown().get(picker.cursor).map(|p| (*p).clone())?;
        if self.workspace.dirty {
            self.overlay = Some(Overlay::Confirm(Confirm::OpenDiscard(path)));
            return None;
        }
        let discard = false;
        self.file(FileRequest::Open { path, discard })
    }
}
