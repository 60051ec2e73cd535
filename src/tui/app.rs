//! The app state and its single entry point for change, [`App::update`].
//!
//! State is grouped per pane; `update` dispatches each [`Action`] to the handler of the
//! pane it concerns (in that pane's module) and re-renders the cached prompt after any
//! change to the session, so drawing never has to call the engine.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;

use crate::catalog::TemplateSource;
use crate::session::Expected;

use super::action::{Action, Effect, Pane};
use super::dialog::{Confirm, Overlay};
use super::editor::FieldEditor;
use super::keymap::{self, Scope};
use super::messages_pane::MessagesPane;
use super::preview::Preview;
use super::prompt_pane::PromptPane;
use super::templates_pane::TemplatesPane;
use super::theme::Theme;
use super::workspace::Workspace;

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
}

impl App {
    /// An app on `workspace`, with `catalog` in the template pane. Offers to restore the
    /// recovery file when one exists.
    pub fn new(workspace: Workspace, catalog: Vec<TemplateSource>) -> Self {
        let mut app = App {
            preview: Preview::new(&workspace.template.source),
            templates: TemplatesPane::new(catalog, &workspace.template),
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
            },
            status: None,
            theme: Theme { color: true },
            last_watch: None,
        };
        app.preview.refresh(&app.workspace.session);
        app.offer_recovery();
        app
    }

    /// The scope the keymap uses right now.
    pub fn scope(&self) -> Scope {
        match (&self.overlay, self.screen.focus) {
            (Some(overlay), _) => overlay.scope(),
            (None, Pane::Templates) => Scope::Templates,
            (None, Pane::Prompt) => Scope::Prompt,
            (None, Pane::Messages) if self.editor.is_some() => Scope::Editor,
            (None, Pane::Messages) if self.messages.in_fields => Scope::Fields,
            (None, Pane::Messages) => Scope::Messages,
        }
    }

    /// Resolves a key through the keymap and applies it.
    pub fn handle_key(&mut self, event: KeyEvent) -> Option<Effect> {
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
            Action::Help => self.overlay = Some(Overlay::Help { scroll: 0 }),
            Action::Quit => return self.request_quit(),
            Action::Save => return self.save(None),
            Action::OpenPicker => self.open_picker(),
            Action::SaveExpected => self.save_expected(),
            Action::ExternalEdit => return self.external_edit(),
            Action::ExternalEdited(text) => self.external_edited(&text),
            Action::Paste(text) => self.paste(&text),
            Action::Resize(width, height) => {
                (self.screen.width, self.screen.height) = (width, height)
            }
            Action::Message(action) => self.update_messages(action),
            Action::Editor(action) => self.update_editor(action),
            Action::Prompt(action) => return self.update_prompt(action),
            Action::Template(action) => self.update_templates(action),
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

    fn focus(&mut self, pane: Pane) {
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

    /// After any change to the session: mark it dirty and re-render.
    pub fn edited(&mut self) {
        self.workspace.touch();
        self.rerender();
    }

    /// Re-renders the prompt and keeps selections in range.
    pub fn rerender(&mut self) {
        self.preview.refresh(&self.workspace.session);
        self.messages.clamp(&self.workspace.session);
        self.prompt.after_render(&self.preview);
    }

    /// Uses a (new or reloaded) template.
    pub fn use_template(&mut self, template: TemplateSource) {
        self.preview = Preview::new(&template.source);
        self.templates.remember(&template);
        self.workspace.set_template(template);
        self.rerender();
    }

    fn request_quit(&mut self) -> Option<Effect> {
        if !self.workspace.dirty {
            return Some(Effect::Quit);
        }
        self.overlay = Some(Overlay::Confirm(Confirm::Quit));
        None
    }

    /// Saves to `path` (or the current file); asks for a name the first time.
    pub fn save(&mut self, path: Option<PathBuf>) -> Option<Effect> {
        if path.is_none() && self.workspace.path.is_none() {
            self.overlay = Some(Overlay::save_as(&self.workspace.sessions_dir, false));
            return None;
        }
        match self.workspace.save(path) {
            Ok(path) => self.notify(format!("saved {}", path.display())),
            Err(err) => self.warn(format!("not saved: {err}")),
        }
        None
    }

    fn save_expected(&mut self) {
        let expected = match &self.preview.output {
            Ok(prompt) => Expected::Prompt(prompt.clone()),
            Err(err) => Expected::Error(err.summary()),
        };
        let what = match expected {
            Expected::Prompt(_) => "prompt",
            Expected::Error(_) => "error",
        };
        self.workspace.session.expected = Some(expected);
        self.workspace.touch();
        self.notify(format!(
            "expected {what} set from the current render (Ctrl+S to save)"
        ));
    }

    fn paste(&mut self, text: &str) {
        let scope = self.scope();
        match (&mut self.overlay, scope) {
            (Some(overlay), _) => overlay.paste(text),
            (None, Scope::Editor) => {
                if let Some(editor) = &mut self.editor {
                    editor.textarea.insert_str(text);
                }
                self.apply_editor();
            }
            (None, Scope::Templates) => self.templates.filter_paste(text),
            _ => {}
        }
    }

    /// Periodic work: the template file watch and the recovery autosave.
    pub fn tick(&mut self, now: Instant) {
        if self
            .last_watch
            .is_none_or(|last| now.duration_since(last) >= WATCH_INTERVAL)
        {
            self.last_watch = Some(now);
            self.reload_template_if_changed();
        }
        if let Err(err) = self.workspace.autosave(now) {
            self.warn(format!("recovery file not written: {err}"));
        }
    }

    fn reload_template_if_changed(&mut self) {
        match self.workspace.poll_template() {
            Some(Ok(template)) => {
                let name = template.name.clone();
                self.preview = Preview::new(&template.source);
                self.templates.remember(&template);
                self.rerender();
                self.notify(format!("reloaded {name} from disk"));
            }
            Some(Err(err)) => self.warn(format!("template reload failed: {err}")),
            None => {}
        }
    }

    /// On a signal: keep unsaved changes in the recovery file.
    pub fn emergency_save(&mut self) {
        let _ = self.workspace.write_recovery();
    }

    /// Replaces the workspace (after opening or restoring a session).
    pub fn load(&mut self, workspace: Workspace) {
        self.preview = Preview::new(&workspace.template.source);
        self.templates.remember(&workspace.template);
        self.workspace = workspace;
        self.editor = None;
        self.messages = MessagesPane::default();
        self.prompt = PromptPane::default();
        self.rerender();
    }

    fn offer_recovery(&mut self) {
        if self.workspace.recovery_path().is_file() {
            self.overlay = Some(Overlay::Confirm(Confirm::Restore));
        }
    }

    /// The focused session file's name with a `*` when there are unsaved changes.
    pub fn title(&self) -> String {
        let star = if self.workspace.dirty { "*" } else { "" };
        format!("{}{star}", self.workspace.name())
    }
}
