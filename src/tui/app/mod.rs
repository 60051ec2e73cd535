//! The app state and its single entry point for change, [`App::update`].
//!
//! State is grouped per pane; `update` dispatches each [`Action`] to the handler of the
//! pane it concerns (in that pane's module). A change to the session only marks the
//! render as wanted; the event loop sends one request to the render worker per batch of
//! input (see [`crate::tui::app::rendering`]), so neither `update` nor drawing waits on the engine.

pub mod autosave;
pub mod driver;
pub mod rendering;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use chatplate_core::catalog::TemplateSource;
use chatplate_render::RenderError;

use crate::tui::action::Action;
use crate::tui::action::MessageAction;

use crate::tui::context::Effect;

use crate::tui::action::Pane;

use crate::tui::action::PromptAction;
use crate::tui::app::rendering::Pending;
use crate::tui::context::Deferred;
use crate::tui::dialogs::log::{LogDialog, MessageLog};
use crate::tui::dialogs::open::Opening;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk::Done;
use crate::tui::files::workspace::Workspace;
use crate::tui::files::FileRequest;
use crate::tui::jobs::Jobs;
use crate::tui::keymap;
use crate::tui::keymap::Scope;
use crate::tui::panes::messages::editor::FieldEditor;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;
use crate::tui::theme::Theme;
use chatplate_core::worker::Reply;
use chatplate_core::worker::Worker;

mod panes;
mod read;

/// What [`crate::tui::app::App::update`] applies: an intent, what came of file work
/// the event loop did for one, or the render worker's answer.
#[derive(Debug)]
pub enum Message {
    /// What the user asked for.
    Action(Action),
    /// The outcome of an [`Effect::Disk`].
    Disk(Done),
    /// A render or a background job's answer from the worker.
    Worker(Reply),
}

impl From<Reply> for Message {
    fn from(reply: Reply) -> Self {
        Message::Worker(reply)
    }
}

impl From<Action> for Message {
    fn from(action: Action) -> Self {
        Message::Action(action)
    }
}

impl From<Done> for Message {
    fn from(done: Done) -> Self {
        Message::Disk(done)
    }
}

/// The whole app. Its state changes only through [`App::update`]; tests and views read
/// it through the accessors in `app/read.rs`.
#[derive(Debug)]
pub struct App {
    /// The session and its files.
    workspace: Workspace,
    /// The cached render.
    preview: Preview,
    /// The open field editor, if any.
    editor: Option<FieldEditor>,
    /// Template pane state.
    templates: TemplatesPane,
    /// Message pane state.
    messages: MessagesPane,
    /// Prompt pane state.
    prompt: PromptPane,
    /// The dialog on top, if any.
    overlay: Option<Overlay>,
    /// Focus and size.
    screen: Screen,
    /// The status line.
    status: Option<Status>,
    /// Everything the status line said this run (see `dialogs::log`).
    log: MessageLog,
    /// Colours or modifiers only.
    theme: Theme,
    /// Saving, opening, the recovery autosave and the template watch.
    file_work: crate::tui::files::FileWork,
    /// The render worker and what the app is waiting for from it.
    pending: Pending,
    /// What the open dialog opened or is waiting for.
    opening: Opening,
    /// Undo / redo of list edits, go-to and find in the message list.
    workbench: crate::tui::workbench::Workbench,
    /// The background jobs' states (from the worker).
    jobs: Jobs,
    /// A worker reply changed what is shown since the last [`App::collect`].
    redraw: bool,
    /// What to do once the save under way is done (save, then open another session).
    after_save: Option<Effect>,
}

impl App {
    /// An app on `files::workspace`, with `catalog` in the template pane and a render worker of
    /// its own. Its first [`App::tick`] looks for a recovery file an earlier run left, to
    /// offer to restore it.
    ///
    /// # Panics
    /// When the operating system refuses to start the worker thread; the terminal app
    /// uses [`App::with_worker`] to report that as an error instead.
    pub fn new(workspace: Workspace, catalog: Vec<TemplateSource>) -> Self {
        let worker = Worker::spawn(crate::tui::preview::app_limits().deadline)
            .expect("start the render worker thread");
        Self::with_worker(workspace, catalog, worker)
    }

    /// Like [`App::new`], with a worker started by the caller.
    pub fn with_worker(workspace: Workspace, catalog: Vec<TemplateSource>, worker: Worker) -> Self {
        let mut app = App {
            preview: preview_for(&workspace),
            templates: TemplatesPane::new(catalog, workspace.current_template()),
            workspace,
            messages: MessagesPane::default(),
            editor: None,
            prompt: PromptPane::default(),
            overlay: None,
            screen: Screen {
                focus: Pane::Messages,
                left: Pane::Messages,
                width: 80,
                height: 24,
                zoom: false,
            },
            status: None,
            log: MessageLog::default(),
            theme: Theme::colored(),
            file_work: Default::default(),
            pending: Pending::new(worker),
            opening: Opening::default(),
            workbench: Default::default(),
            jobs: Jobs::default(),
            redraw: false,
            after_save: None,
        };
        app.invalidate();
        app
    }

    /// The scope the keymap uses right now.
    pub fn scope(&self) -> Scope {
        match (&self.overlay, self.screen.focus) {
            (Some(overlay), _) => overlay.scope(),
            (None, Pane::Templates) if self.templates.filtering => Scope::Filter,
            (None, Pane::Templates) => Scope::Templates,
            (None, Pane::Prompt) => Scope::Prompt,
            (None, Pane::Messages) if self.editor.is_some() => Scope::Editor,
            (None, Pane::Messages) if self.messages.in_fields => Scope::Fields,
            (None, Pane::Messages) if self.messages.anchor.is_some() => Scope::Range,
            (None, Pane::Messages) => Scope::Messages,
        }
    }

    /// Resolves a key through the keymap and applies it.
    ///
    /// `Esc` and a key that arrive in one read (fast typing, a slow link) reach the app
    /// as Alt+key. When the key without Alt is a command here (Ctrl+S after closing the
    /// editor), it is taken as the two keys; Alt+letter in the editor stays text editing.
    pub fn handle_key(&mut self, event: KeyEvent) -> Option<Effect> {
        if let Some(key) = keymap::split_escape(self.scope(), &event) {
            let escape = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
            if let Some(effect) = self.handle_key(escape) {
                return Some(effect);
            }
            return self.handle_key(key);
        }
        let action = keymap::resolve(self.scope(), &event)?;
        self.update(action)
    }

    /// Applies one action, or what came of file work; returns work that needs the
    /// terminal or the disk. What the status line shows after it is kept in the message
    /// log (progress excepted: see [`MessageLog::record`]).
    pub fn update(&mut self, message: impl Into<Message>) -> Option<Effect> {
        let message = message.into();
        // A key clears the status line first, so anything it shows after is new.
        let clears = matches!(&message, Message::Action(a) if !matches!(a, Action::Resize(..)));
        let before = if clears { None } else { self.status.clone() };
        let effect = self.dispatch(message);
        if let Some(status) = &self.status {
            if before.as_ref() != Some(status) {
                self.log.record_now(status);
            }
        }
        effect
    }

    /// [`App::update`] without keeping what it says (for actions that repeat others).
    pub(in crate::tui) fn dispatch(&mut self, message: Message) -> Option<Effect> {
        match message {
            Message::Action(action) => self.act(action),
            Message::Disk(done) => self.take_in(done),
            Message::Worker(reply) => self.receive(reply),
        }
    }

    fn act(&mut self, action: Action) -> Option<Effect> {
        if !matches!(action, Action::Resize(..)) {
            self.status = None;
        }
        // Back at the panes without having saved (the save-as input cancelled): what the
        // save was for is off.
        if !matches!(
            action,
            Action::Dialog(_) | Action::Resize(..) | Action::Paste(_)
        ) {
            self.after_save = None;
        }
        match action {
            Action::FocusNext => self.cycle_focus(1),
            Action::FocusPrev => self.cycle_focus(Pane::ALL.len() - 1),
            Action::Focus(pane) => self.focus(pane),
            Action::Help => {
                let from = self.scope();
                self.overlay = Some(Overlay::help(from));
            }
            Action::MessageLog => {
                self.overlay = Some(Overlay::Log(LogDialog::new(&self.log)));
            }
            Action::Zoom => self.screen.zoom = !self.screen.zoom,
            Action::Quit => return self.file(FileRequest::Quit),
            Action::Save => return self.save(None),
            Action::StopWork => self.stop_work(),
            Action::OpenPicker
            | Action::NewSession
            | Action::OpenTarget
            | Action::AddTool
            | Action::PasteOutput
            | Action::CopyAsCode
            | Action::SaveAs => {
                return self.in_dialogs(|ctx| {
                    crate::tui::dialogs::start(&action, ctx);
                    None
                });
            }
            Action::Mouse(input) => return self.mouse(input),
            Action::SaveExpected => return self.when_current(Deferred::Expected),
            Action::ExternalEdit => {
                return self.in_messages(|pane, ctx, editor| pane.external_edit(ctx, editor));
            }
            Action::ExternalEdited(text) => {
                return self.in_messages(|_, ctx, editor| {
                    MessagesPane::external_edited(&text, ctx, editor);
                    None
                });
            }
            Action::Paste(text) => return self.paste(&text),
            Action::Resize(width, height) => {
                (self.screen.width, self.screen.height) = (width, height)
            }
            Action::Message(MessageAction::ToggleTurnCost) => {
                self.jobs.turn_cost.toggle();
                self.ask_jobs(false);
            }
            Action::Message(action) => return self.in_messages_recorded(action),
            Action::Editor(action) => {
                let effect = self.in_messages(|pane, ctx, editor| {
                    pane.handle_editor(action, ctx, editor);
                    None
                });
                let editing = self.editor.is_some();
                (self.workbench).editor_closed(editing, &mut self.workspace.session);
                return effect;
            }
            Action::Prompt(PromptAction::ToggleTokens) => {
                self.jobs.token_mode.toggle();
                self.ask_jobs(false);
            }
            Action::Compare(action) => {
                if !self.in_matrix(|matrix, sides, ctx| matrix.took_compare(action, sides, ctx)) {
                    self.in_compare(|sides, ctx| sides.handle(action, ctx));
                }
            }
            Action::Prompt(action) => {
                if self.in_compare(|sides, ctx| sides.took(action, ctx)) {
                    return None;
                }
                if self.in_matrix(|matrix, sides, ctx| matrix.took_prompt(action, sides, ctx)) {
                    return None;
                }
                return self.in_prompt(|pane, ctx, facts| pane.handle(action, ctx, facts));
            }
            Action::Template(action) => {
                let effect = self.in_templates(|pane, ctx| pane.handle(action.clone(), ctx));
                self.ask_jobs(false);
                self.in_compare(|sides, ctx| sides.follow_cursor(&action, ctx));
                return effect;
            }
            Action::Dialog(action) => return self.update_dialog(action),
        }
        None
    }

    fn cycle_focus(&mut self, by: usize) {
        let index = Pane::ALL
            .iter()
            .position(|p| *p == self.screen.focus)
            .unwrap_or(0);
        self.focus(Pane::ALL[(index + by) % Pane::ALL.len()]);
    }

    pub(in crate::tui) fn focus(&mut self, pane: Pane) {
        if pane == Pane::Templates && self.screen.focus != Pane::Templates {
            self.templates.came_from = self.screen.focus;
        }
        self.screen.focus = pane;
        if pane != Pane::Prompt {
            self.screen.left = pane;
        }
        self.jobs.sides.focus_moved(pane);
    }

    /// Sets an informational status message.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.status = Some(Status::info(text));
    }

    /// Sets an error status message.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.status = Some(Status::error(text));
    }

    /// Shows `status` and keeps it in the message log: for what the event loop did
    /// outside [`App::update`] (a copy, an external editor).
    pub fn tell(&mut self, status: Status) {
        self.log.record_now(&status);
        self.status = Some(status);
    }

    /// After any change to the session: mark it dirty and ask for a new render.
    pub fn edited(&mut self) {
        self.workspace.touch();
        self.rechoose_for_tools();
        self.invalidate();
    }

    /// With tools added or removed, the opened model's template for them (see
    /// [`Opening::rechoose`]).
    fn rechoose_for_tools(&mut self) {
        if let Some((template, note)) = self.opening.rechoose(&self.workspace) {
            self.use_template(template);
            self.workspace.touch();
            self.notify(note);
        }
    }

    /// Uses a (new or reloaded) template.
    pub fn use_template(&mut self, template: TemplateSource) {
        self.preview = Preview::new(&template.source);
        self.templates.remember(&template);
        self.workspace.set_template(template);
        self.invalidate();
    }

    fn paste(&mut self, text: &str) -> Option<Effect> {
        // Terminals send pasted line breaks as CR (what the Enter key sends).
        let text = &text.replace("\r\n", "\n").replace('\r', "\n");
        let scope = self.scope();
        match (&mut self.overlay, scope) {
            (Some(overlay), _) => overlay.paste(text),
            (None, Scope::Editor) => {
                return self.in_messages(|_, ctx, editor| {
                    MessagesPane::paste(text, ctx, editor);
                    None
                });
            }
            (None, Scope::Filter) => self.templates.filter_paste(text),
            (None, Scope::Messages | Scope::Range) => {
                return self.as_one_step(|app| {
                    app.in_messages(|pane, ctx, _| {
                        pane.paste_messages(text, ctx);
                        None
                    })
                });
            }
            _ => {}
        }
        None
    }

    /// The session file's name with a `*` when there are unsaved changes.
    pub fn title(&self) -> String {
        let star = if self.workspace.dirty { "*" } else { "" };
        format!("{}{star}", self.workspace.name())
    }
}

/// The preview for a workspace: its template, or the missing-template error.
pub(in crate::tui) fn preview_for(workspace: &Workspace) -> Preview {
    match &workspace.missing_template {
        Some(why) => Preview::unavailable(RenderError::input(why.clone())),
        None => Preview::new(&workspace.template.source),
    }
}
