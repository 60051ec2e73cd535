//! New, save-as and open-anything while the app runs (issue 8). `Ctrl+P` asks for a
//! path, a model folder, a model id (Hugging Face cache or Hub) or a `.gguf`; the worker
//! resolves it with [`chatplate_core::target::open`] and the reply switches the session or the
//! template, so nothing is read on the UI thread and no restart is needed.
//!
//! Templates from a model join the picker and the current conversation moves to the
//! chosen one (like transformers: the `tool_use` entry while the conversation has tools,
//! unless a name was pinned). Sessions and request bodies replace the session, which is
//! refused while there are unsaved changes. The local cache is scanned on the worker
//! at start for the picker's "Hugging Face cache" section.

use std::path::PathBuf;

use chatplate_core::catalog::TemplateSet;
use chatplate_core::target::Opened;
use chatplate_core::worker::{Job, Output, Reply};

use crate::tui::action::Effect;
use crate::tui::app::App;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk;
use crate::tui::files::workspace::Workspace;
use crate::tui::panes::messages::conversation::example_session;

/// What was opened last that can choose again when the conversation changes.
#[derive(Debug, Clone, Default)]
pub struct Opening {
    /// The model's templates, when the session's template came from one.
    pub set: Option<TemplateSet>,
    /// What the open dialog is waiting for.
    pub waiting: Option<String>,
    /// The openable files below the working directory (listed when the opener opens).
    pub files: Vec<String>,
    /// What was opened in this run, oldest first.
    pub recent: Vec<String>,
    /// The folder a typed path names and its entries (see `dialogs::opener_paths`).
    pub folder: crate::tui::dialogs::opener_paths::Folder,
}

/// "could not open TEXT: WHY", without TEXT twice when WHY already starts with it (most
/// errors name the path), so the reason fits a narrow status line.
pub(in crate::tui) fn could_not_open(text: &str, why: &str) -> String {
    let why = why.strip_prefix(text).map_or(why, |rest| {
        rest.trim_start_matches(|c: char| c == ':' || c.is_whitespace())
    });
    format!("could not open {text}: {why}")
}

impl App {
    /// A new, empty, untitled session on the current template (the event loop makes its
    /// workspace: naming its recovery file looks at the template file's path).
    pub(in crate::tui) fn new_session(&mut self) -> Option<Effect> {
        if self.workspace.dirty {
            self.warn("unsaved changes: save (Ctrl+S) before starting a new session");
            return None;
        }
        let template = self.workspace.template.clone();
        let sessions_dir = self.workspace.sessions_dir.clone();
        // The job refers to the template from the sessions folder (that reads the disk).
        let mut session = example_session(self.workspace.session.template.clone());
        session.messages.clear();
        session.tools = None;
        Some(Effect::Disk(disk::Job::NewSession {
            session: Box::new(session),
            template: Box::new(template),
            sessions_dir,
        }))
    }

    /// The new session's workspace is ready.
    pub(in crate::tui) fn new_session_made(&mut self, workspace: Workspace) {
        self.load(workspace);
        self.notify("new session (press a to add a message)");
    }

    /// Asks for something to open, and lists the files below the working directory for
    /// the opener's matches (see `dialogs::opener`).
    pub(in crate::tui) fn ask_open(&mut self) -> Option<Effect> {
        let mut input = InputDialog::new(InputKind::Open, "");
        // A folder may have changed since it was listed: list it again when typed.
        self.opening.folder = Default::default();
        self.refresh_choices(&mut input);
        self.overlay = Some(Overlay::Input(input));
        Some(Effect::Disk(disk::Job::ListOpenable(PathBuf::from("."))))
    }

    /// Asks for a new file name for the session.
    pub(in crate::tui) fn ask_save_as(&mut self) {
        self.overlay = Some(Overlay::save_as(&self.workspace.sessions_dir, false));
    }

    /// Hands `text` to the worker to resolve.
    pub(in crate::tui) fn open_target(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return self.warn("type a path, a model folder, a model id or a .gguf");
        }
        self.opening.waiting = Some(text.to_string());
        self.opening.recent.retain(|r| r != text);
        self.opening.recent.push(text.to_string());
        let generation = self.generation();
        self.submit_job(
            generation,
            Job::Open {
                target: text.to_string(),
            },
        );
        self.notify(format!("opening {text}…"));
    }

    /// Starts the cache scan for the picker.
    pub fn scan_cache(&self) {
        self.submit_job(0, Job::ScanCache);
    }

    /// Whether an open is still on its way (tests wait for it).
    pub fn open_pending(&self) -> bool {
        self.opening.waiting.is_some()
    }

    /// Takes the answer to an open request in; a session or a request body to read
    /// goes to the event loop in `effects`.
    pub(in crate::tui) fn receive_opened(
        &mut self,
        reply: Reply,
        effects: &mut Vec<Effect>,
    ) -> bool {
        let Some(text) = self.opening.waiting.take() else {
            return false;
        };
        match reply.result {
            Ok(Output::Opened(opened)) => effects.extend(self.opened(&text, *opened)),
            Ok(_) => {}
            Err(err) => self.warn(could_not_open(&text, &err.message)),
        }
        // Not from a key, so the event loop would not send the new render until its next
        // wake-up: send it now.
        self.request_render();
        true
    }

    fn opened(&mut self, text: &str, opened: Opened) -> Option<Effect> {
        match opened {
            Opened::Templates(set) => self.use_set(text, set),
            _ if self.workspace.dirty => {
                self.warn("unsaved changes: save (Ctrl+S) before opening another session")
            }
            Opened::Session(path) => {
                let discard = false;
                return self.file(crate::tui::files::FileRequest::Open { path, discard });
            }
            Opened::Request { path, imported } => {
                let sessions_dir = self.workspace.sessions_dir.clone();
                return Some(Effect::Disk(disk::Job::Import {
                    path,
                    imported,
                    sessions_dir,
                }));
            }
        }
        None
    }

    /// A model's (or a file's) templates: all join the picker; the conversation moves to
    /// the one transformers would choose for it.
    fn use_set(&mut self, text: &str, set: TemplateSet) {
        match set.choose(self.has_tools()) {
            Ok(chosen) => {
                for entry in &set.entries {
                    self.templates.remember(entry);
                }
                let notes = chosen.metadata.notes.join("; ");
                let label = chosen.origin_label();
                self.use_template(chosen);
                // The session now names another template: an unsaved change.
                self.workspace.touch();
                self.opening.set = (set.entries.len() > 1).then_some(set);
                if notes.is_empty() {
                    self.notify(format!("opened {text}: {label}"));
                } else {
                    self.warn(notes);
                }
            }
            Err(err) => self.warn(could_not_open(text, &err.to_string())),
        }
    }

    fn has_tools(&self) -> bool {
        self.workspace
            .session
            .tools
            .as_ref()
            .is_some_and(|t| !t.is_empty())
    }

    /// With tools added or removed, a model's named templates are chosen again (its
    /// `tool_use` entry while there are tools), unless a name was pinned.
    pub(in crate::tui) fn rechoose_for_tools(&mut self) {
        let Some(set) = &self.opening.set else {
            return;
        };
        let current = &self.workspace.template;
        let from_set = set
            .entries
            .iter()
            .any(|t| t.name == current.name && t.origin == current.origin);
        if !from_set || set.pinned.is_some() {
            return;
        }
        let Ok(chosen) = set.choose(self.has_tools()) else {
            return;
        };
        if chosen.name != current.name || chosen.origin != current.origin {
            let name = chosen.entry().unwrap_or(&chosen.name).to_string();
            self.use_template(chosen);
            self.workspace.touch();
            self.notify(format!("template {name} chosen for this conversation"));
        }
    }

    /// Adds the cached models' templates to the picker.
    pub(in crate::tui) fn receive_cached(&mut self, reply: Reply) -> bool {
        let Ok(Output::Cached(sets)) = reply.result else {
            return false;
        };
        let cursor = self.templates.cursor;
        for template in sets.into_iter().flat_map(|s| s.entries) {
            let known = self
                .templates
                .catalog
                .iter()
                .any(|t| t.name == template.name && t.origin == template.origin);
            if !known {
                self.templates.catalog.push(template);
            }
        }
        self.templates.cursor = cursor;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::could_not_open;

    #[test]
    fn the_path_is_named_once() {
        assert_eq!(
            could_not_open("/nope/x.jinja", "/nope/x.jinja: no such file"),
            "could not open /nope/x.jinja: no such file"
        );
        assert_eq!(
            could_not_open("@v9", "no such revision"),
            "could not open @v9: no such revision"
        );
    }
}
