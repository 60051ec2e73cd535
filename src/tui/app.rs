//! The app state and its single entry point for change, [`App::update`].
//!
//! State is grouped per pane; `update` dispatches each [`Action`] to the handler of the
//! pane it concerns (in that pane's module). A change to the session only marks the
//! render as wanted; the event loop sends one request to the render worker per batch of
//! input (see [`super::rendering`]), so neither `update` nor drawing waits on the engine.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use chatplate_core::catalog::TemplateSource;
use chatplate_core::session::Expected;
use chatplate_render::RenderError;

use super::action::{Action, Effect, Pane};
use super::attribution::Explanation;
use super::dialog::{Confirm, Overlay};
use super::editor::FieldEditor;
use super::keymap::{self, Scope};
use super::messages_pane::MessagesPane;
use super::open_dialog::Opening;
use super::preview::Preview;
use super::prompt_cursor::PromptCursor;
use super::prompt_pane::PromptPane;
use super::rendering::{Deferred, Pending};
use super::templates_pane::TemplatesPane;
use super::theme::Theme;
use super::workspace::Workspace;
use chatplate_core::worker::Worker;

/// How often the template file is checked for changes.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// Focus and terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// The pane that gets the keys.
    pub focus: Pane,
    /// The pane shown beside the prompt when only two fit.
    pub left: Pane,
    /// Terminal width.
    pub width: u16,
    /// Terminal height.
    pub height: u16,
    /// The focused pane alone on the whole screen.
    pub zoom: bool,
}

/// A one-line message in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The text.
    pub text: String,
    /// Shown as an error.
    pub error: bool,
}

/// The whole app.
#[derive(Debug)]
pub struct App {
    /// The session and its files.
    pub workspace: Workspace,
    /// The cached render.
    pub preview: Preview,
    /// Template pane state.
    pub templates: TemplatesPane,
    /// Message pane state.
    pub messages: MessagesPane,
    /// The open field editor, if any.
    pub editor: Option<FieldEditor>,
    /// Prompt pane state.
    pub prompt: PromptPane,
    /// The dialog on top, if any.
    pub overlay: Option<Overlay>,
    /// Focus and size.
    pub screen: Screen,
    /// The status line.
    pub status: Option<Status>,
    /// Colours or modifiers only.
    pub theme: Theme,
    last_watch: Option<Instant>,
    /// The render worker and what the app is waiting for from it.
    pub(super) pending: Pending,
    /// Exact attribution of the prompt (from the worker).
    pub explanation: Explanation,
    /// The prompt pane's cursor.
    pub prompt_cursor: PromptCursor,
    /// Token mode in the prompt pane (tokens from the worker).
    pub token_mode: super::token_mode::TokenMode,
    /// The templates pane's capability view and its per-template cache.
    pub info: super::info_view::InfoView,
    /// What the open dialog opened or is waiting for.
    pub opening: Opening,
    /// Undo / redo of list edits, go-to and find in the message list.
    pub workbench: super::workbench::Workbench,
    /// Values the template ignores (from the worker).
    pub ignored: super::ignored::IgnoredValues,
    /// Capability badges in the template list (from the worker).
    pub badges: super::badges::TemplateBadges,
}

impl App {
    /// An app on `workspace`, with `catalog` in the template pane and a render worker of
    /// its own. Offers to restore the recovery file when one exists.
    ///
    /// # Panics
    /// When the operating system refuses to start the worker thread; the terminal app
    /// uses [`App::with_worker`] to report that as an error instead.
    pub fn new(workspace: Workspace, catalog: Vec<TemplateSource>) -> Self {
        let worker = Worker::spawn(super::preview::app_limits().deadline)
            .expect("start the render worker thread");
        Self::with_worker(workspace, catalog, worker)
    }

    /// Like [`App::new`], with a worker started by the caller.
    pub fn with_worker(workspace: Workspace, catalog: Vec<TemplateSource>, worker: Worker) -> Self {
        let mut app = App {
            preview: preview_for(&workspace),
            templates: TemplatesPane::new(catalog, current_template(&workspace)),
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
            theme: Theme::colored(),
            last_watch: None,
            pending: Pending::new(worker),
            explanation: Explanation::default(),
            prompt_cursor: PromptCursor::default(),
            token_mode: Default::default(),
            info: Default::default(),
            opening: Opening::default(),
            workbench: Default::default(),
            ignored: Default::default(),
            badges: Default::default(),
        };
        app.invalidate();
        app.offer_recovery();
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

    /// Applies one action; returns work that needs the terminal.
    pub fn update(&mut self, action: Action) -> Option<Effect> {
        if !matches!(action, Action::Resize(..)) {
            self.status = None;
        }
        match action {
            Action::FocusNext => self.cycle_focus(1),
            Action::FocusPrev => self.cycle_focus(Pane::ALL.len() - 1),
            Action::Focus(pane) => self.focus(pane),
            Action::Help => self.open_help(),
            Action::Zoom => self.screen.zoom = !self.screen.zoom,
            Action::Quit => return self.request_quit(),
            Action::Save => return self.save(None),
            Action::OpenPicker => self.open_picker(),
            Action::NewSession => self.new_session(),
            Action::OpenTarget => self.ask_open(),
            Action::SaveAs => self.ask_save_as(),
            Action::SaveExpected => return self.when_current(Deferred::Expected),
            Action::ExternalEdit => return self.external_edit(),
            Action::ExternalEdited(text) => self.external_edited(&text),
            Action::Paste(text) => self.paste(&text),
            Action::Resize(width, height) => {
                (self.screen.width, self.screen.height) = (width, height)
            }
            Action::Message(action) => self.update_messages_recorded(action),
            Action::Editor(action) => {
                self.update_editor(action);
                self.editor_closed();
            }
            Action::Prompt(action) => return self.update_prompt(action),
            Action::Template(action) => return self.update_templates(action),
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

    /// Focuses `pane` (as the focus keys do).
    pub(super) fn focus_pane(&mut self, pane: Pane) {
        self.focus(pane);
    }

    fn focus(&mut self, pane: Pane) {
        if pane == Pane::Templates && self.screen.focus != Pane::Templates {
            self.templates.came_from = self.screen.focus;
        }
        self.screen.focus = pane;
        if pane != Pane::Prompt {
            self.screen.left = pane;
        }
    }

    /// Sets an informational status message.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: false,
        });
    }

    /// Sets an error status message.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: true,
        });
    }

    /// After any change to the session: mark it dirty and ask for a new render.
    pub fn edited(&mut self) {
        self.workspace.touch();
        self.rechoose_for_tools();
        self.invalidate();
    }

    /// Uses a (new or reloaded) template.
    pub fn use_template(&mut self, template: TemplateSource) {
        self.preview = Preview::new(&template.source);
        self.templates.remember(&template);
        self.workspace.set_template(template);
        self.invalidate();
    }

    fn request_quit(&mut self) -> Option<Effect> {
        if !self.workspace.dirty {
            return Some(Effect::Quit);
        }
        self.overlay = Some(Overlay::Confirm(Confirm::Quit));
        None
    }

    /// Saves to `path` (or the current file); asks for a name the first time, and what
    /// to do when another program changed the file since it was read.
    pub fn save(&mut self, path: Option<PathBuf>) -> Option<Effect> {
        if path.is_none() && self.workspace.path.is_none() {
            self.overlay = Some(Overlay::save_as(&self.workspace.sessions_dir, false));
            return None;
        }
        let same_file = path.is_none() || path == self.workspace.path;
        if same_file && self.workspace.changed_on_disk() {
            self.overlay = Some(Overlay::Confirm(Confirm::Changed));
            return None;
        }
        self.write_session(path);
        None
    }

    /// Writes the session file, whatever is on disk.
    pub(super) fn write_session(&mut self, path: Option<PathBuf>) {
        match self.workspace.save(path) {
            Ok(path) => self.notify(format!("saved {}", path.display())),
            Err(err) => self.warn(format!("not saved: {err}")),
        }
    }

    /// Stores the shown render (or error) as the session's expected outcome.
    pub(super) fn take_expected(&mut self) {
        let expected = match &self.preview.output {
            Ok(prompt) => Expected::Prompt(prompt.to_string()),
            Err(err) => Expected::Error(err.summary()),
        };
        let what = match expected {
            Expected::Prompt(_) => "prompt",
            Expected::Error(_) | Expected::Exception(_) => "error",
        };
        self.workspace.session.expected = Some(expected);
        self.workspace.touch();
        self.notify(format!(
            "expected {what} set from the current render (Ctrl+S to save)"
        ));
    }

    fn paste(&mut self, text: &str) {
        // Terminals send pasted line breaks as CR (what the Enter key sends).
        let text = &text.replace("\r\n", "\n").replace('\r', "\n");
        let scope = self.scope();
        match (&mut self.overlay, scope) {
            (Some(overlay), _) => overlay.paste(text),
            (None, Scope::Editor) => {
                if let Some(editor) = &mut self.editor {
                    editor.textarea.insert_str(text);
                }
                self.apply_editor();
            }
            (None, Scope::Filter) => self.templates.filter_paste(text),
            _ => {}
        }
    }

    /// Periodic work: the template file watch and the recovery autosave. Returns whether
    /// anything on screen changed (an idle app draws nothing).
    pub fn tick(&mut self, now: Instant) -> bool {
        let mut changed = false;
        if self
            .last_watch
            .is_none_or(|last| now.duration_since(last) >= WATCH_INTERVAL)
        {
            self.last_watch = Some(now);
            changed |= self.reload_template_if_changed();
        }
        if let Err(err) = self.workspace.autosave(now) {
            // An error already on show (a failed save, most likely for the same reason:
            // a full disk) stays; it is the one the user must not miss.
            if !self.status.as_ref().is_some_and(|s| s.error) {
                changed = true;
                self.warn(format!("recovery file not written: {err}"));
            }
        }
        changed
    }

    /// When [`App::tick`] next has work to do.
    pub fn next_tick(&self, now: Instant) -> Instant {
        let watch = self.last_watch.map_or(now, |last| last + WATCH_INTERVAL);
        self.workspace
            .autosave_due()
            .map_or(watch, |due| due.min(watch))
    }

    fn reload_template_if_changed(&mut self) -> bool {
        match self.workspace.poll_template() {
            Some(Ok(template)) => {
                let name = template.name.clone();
                self.preview = preview_for(&self.workspace);
                self.templates.remember(&template);
                self.invalidate();
                self.notify(format!("reloaded {name} from disk"));
                true
            }
            Some(Err(err)) => {
                self.warn(format!("template reload failed: {err}"));
                true
            }
            None => false,
        }
    }

    /// When the app is ending abnormally: keeps unsaved changes in the recovery file,
    /// synchronously. Returns the file written (`None`: nothing unsaved) or the error.
    pub fn emergency_save(&mut self) -> Result<Option<String>, String> {
        if !self.workspace.dirty {
            return Ok(None);
        }
        self.workspace
            .write_recovery()
            .map(|()| Some(self.workspace.recovery_path().display().to_string()))
            .map_err(|err| err.to_string())
    }

    /// Replaces the workspace (after opening or restoring a session).
    pub fn load(&mut self, workspace: Workspace) {
        self.preview = preview_for(&workspace);
        if let Some(template) = current_template(&workspace) {
            self.templates.remember(template);
        }
        self.workspace = workspace;
        // Steps recorded in the old session would splice its messages into this one.
        self.workbench.forget_history();
        self.editor = None;
        self.messages = MessagesPane::default();
        self.prompt = PromptPane::default();
        self.invalidate();
    }

    /// The session file's name with a `*` when there are unsaved changes.
    pub fn title(&self) -> String {
        let star = if self.workspace.dirty { "*" } else { "" };
        format!("{}{star}", self.workspace.name())
    }
}

/// The preview for a workspace: its template, or the missing-template error.
fn preview_for(workspace: &Workspace) -> Preview {
    match &workspace.missing_template {
        Some(why) => Preview::unavailable(RenderError::input(why.clone())),
        None => Preview::new(&workspace.template.source),
    }
}

/// The template to select in the template pane (none while it is missing).
fn current_template(workspace: &Workspace) -> Option<&TemplateSource> {
    workspace
        .missing_template
        .is_none()
        .then_some(&workspace.template)
}
