//! One-line text inputs: the file name to save as, a role, the prompt search, the
//! opener, go-to, the message find, a tool to add, the compare view's other side. The
//! searches run as you type (the app does it: [`DialogRequest::SearchAsTyped`]); the
//! opener matches and completes on its own state (see `dialogs::opener`).

use std::path::PathBuf;

use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::action::DialogAction;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::help;
use crate::tui::dialogs::opener;
use crate::tui::dialogs::tool_skeleton;
use crate::tui::dialogs::view;
use crate::tui::dialogs::Dialog;
use crate::tui::keymap::Scope;
use crate::tui::theme::Theme;

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

    /// The opener's matches for its text, `found`, the cursor back on the best one.
    pub fn set_choices(&mut self, found: Vec<String>) {
        self.choices = found.into_iter().take(opener::SHOWN).collect();
        self.origin = 0;
    }

    /// The text changed: the opener matches again, a search runs again.
    fn changed(&mut self, ctx: &mut DialogContext) {
        match self.kind {
            InputKind::Open => {
                self.set_choices(ctx.choices(&self.text));
                ctx.ask(DialogRequest::ListFolder(self.text.clone()));
            }
            InputKind::FindMessage | InputKind::Search => ctx.ask(DialogRequest::SearchAsTyped),
            _ => {}
        }
    }

    /// `Tab` in the opener: completes the typed path.
    fn complete(&mut self, ctx: &mut DialogContext) {
        let selected = self.choices.get(self.origin).map(String::as_str);
        let candidates = ctx.candidates(&self.text);
        if let Some(text) = opener::complete(&self.text, &candidates, selected) {
            self.text = text;
            self.set_choices(ctx.choices(&self.text));
            ctx.ask(DialogRequest::ListFolder(self.text.clone()));
        }
    }

    /// Enter: asks for what the input is for; returns whether it stays open (asked
    /// again, with why).
    fn submit(&mut self, ctx: &mut DialogContext) -> bool {
        let text = self.text.clone();
        let request = match self.kind {
            InputKind::SavePath { then_quit } => return self.save_to(then_quit, ctx),
            InputKind::Role => DialogRequest::SetRole(text),
            InputKind::Search => DialogRequest::Search(text),
            InputKind::Open => {
                let target = crate::tui::dialogs::opener_paths::expand_home(opener::target(self));
                return open_target(&target, ctx);
            }
            InputKind::GoTo => DialogRequest::GoTo(text),
            InputKind::Tool => match tool_skeleton::answer(&text) {
                Ok(request) => request,
                Err(why) => return self.again(text.trim(), why, ctx),
            },
            InputKind::CompareWith => DialogRequest::CompareWith(text),
            InputKind::FindMessage => DialogRequest::Find(self.clone()),
        };
        ctx.ask(request);
        false
    }

    /// The save-as name: a file (`.json` added when missing), not a folder.
    fn save_to(&mut self, then_quit: bool, ctx: &mut DialogContext) -> bool {
        let text = self.text.trim().to_string();
        if text.is_empty() || text.ends_with('/') {
            return self.again(&text, "type a file name".into(), ctx);
        }
        let mut path = PathBuf::from(text);
        if path.extension().is_none_or(|e| e != "json") {
            path.set_extension("json");
        }
        ctx.ask(DialogRequest::SaveTo { path, then_quit });
        false
    }

    /// Asks again with `text`, saying `why`.
    fn again(&mut self, text: &str, why: String, ctx: &mut DialogContext) -> bool {
        *self = InputDialog::new(self.kind, text);
        ctx.warn(why);
        true
    }
}

/// Enter in the opener: `text` to the worker, unless there is nothing to open.
fn open_target(text: &str, ctx: &mut DialogContext) -> bool {
    let text = text.trim();
    if text.is_empty() {
        ctx.warn("type a path, a model folder, a model id or a .gguf");
    } else {
        ctx.ask(DialogRequest::Open(text.to_string()));
    }
    false
}

impl Dialog for InputDialog {
    fn scope(&self) -> Scope {
        Scope::Input
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        let opener = self.kind == InputKind::Open;
        match action {
            DialogAction::Type(c) => {
                self.text.push(c);
                self.changed(ctx);
            }
            DialogAction::Backspace => {
                self.text.pop();
                self.changed(ctx);
            }
            DialogAction::Select(step) if opener => {
                let count = self.choices.len();
                self.origin = help::step(self.origin, count, 1, step);
            }
            DialogAction::Complete if opener => self.complete(ctx),
            DialogAction::Accept => return self.submit(ctx),
            DialogAction::Cancel => {
                ctx.ask(DialogRequest::CancelSearch(self.clone()));
                return false;
            }
            _ => {}
        }
        true
    }

    fn paste(&mut self, text: &str) {
        self.text.push_str(text.lines().next().unwrap_or_default());
    }

    fn draw(&self, frame: &mut Frame, area: Rect, _name: &str, theme: Theme) {
        view::draw_input(frame, area, self, theme);
    }
}
