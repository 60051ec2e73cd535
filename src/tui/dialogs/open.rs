//! New and open-anything while the app runs. `Ctrl+P` asks for a path, a model folder,
//! a model id (Hugging Face cache or Hub) or a `.gguf`; the worker resolves it with
//! [`chatplate_core::target::open`] and the reply switches the session or the template,
//! so nothing is read on the UI thread and no restart is needed.
//!
//! Templates from a model join the picker and the current conversation moves to the
//! chosen one (like transformers: the `tool_use` entry while the conversation has tools,
//! unless a name was pinned). Sessions and request bodies replace the session: with
//! unsaved changes, a session asks to save, discard or stay (as `Ctrl+N` and the picker
//! do) and a request body is refused. The local cache is scanned on the worker
//! at start for the picker's "Hugging Face cache" section.
//!
//! [`Opening`] is a [`Background`] job: it asks the worker for what was typed and for the
//! cache scan, and turns the answers into [`JobRequest`]s and file work.

use std::path::PathBuf;

use chatplate_core::catalog::{ModelPlace, Origin, TemplateSet, TemplateSource};
use chatplate_core::target::Opened;
use chatplate_core::worker::{Job, JobKind, Output, Reply};

use crate::tui::context::Effect;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::Confirm;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk;
use crate::tui::files::workspace::Workspace;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobRequest;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::panes::messages::conversation::example_session;

/// What the status line says when a new session is ready.
pub const NEW_SESSION: &str = "new session (press a to add a message)";

/// What was opened last that can choose again when the conversation changes, and what
/// the worker is asked to open.
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
    /// What to ask the worker to open with the next batch.
    queued: Option<String>,
    /// The cache scan is to be asked for.
    scan: bool,
}

/// "could not open TEXT: WHY", without TEXT twice when WHY already starts with it (most
/// errors name the path), so the reason fits a narrow status line.
pub(in crate::tui) fn could_not_open(text: &str, why: &str) -> String {
    let why = why.strip_prefix(text).map_or(why, |rest| {
        rest.trim_start_matches(|c: char| c == ':' || c.is_whitespace())
    });
    format!("could not open {text}: {why}")
}

/// A new, empty, untitled session on the current template (the event loop makes its
/// workspace: naming its recovery file looks at the template file's path).
pub fn new_session(ctx: &mut DialogContext) {
    if ctx.workspace.dirty {
        return ctx.show(Overlay::Confirm(Confirm::NewDiscard));
    }
    ctx.effect(start_new(ctx.workspace));
}

/// The file work that starts a new, empty session on `workspace`'s template.
pub fn start_new(workspace: &Workspace) -> Effect {
    // The job refers to the template from the sessions folder (that reads the disk).
    let mut session = example_session(workspace.session.template.clone());
    session.messages.clear();
    session.tools = None;
    Effect::Disk(disk::Job::NewSession {
        session: Box::new(session),
        template: Box::new(workspace.template.clone()),
        sessions_dir: workspace.sessions_dir.clone(),
    })
}

/// Asks for something to open, and lists the files below the working directory for
/// the opener's matches (see `dialogs::opener`).
pub fn ask_open(ctx: &mut DialogContext) {
    let mut input = InputDialog::new(InputKind::Open, "");
    input.set_choices(ctx.choices(""));
    // A folder may have changed since it was listed: list it again when typed.
    ctx.ask(DialogRequest::ForgetFolder);
    ctx.show(Overlay::Input(input));
    ctx.effect(Effect::Disk(disk::Job::ListOpenable(PathBuf::from("."))));
}

fn has_tools(workspace: &Workspace) -> bool {
    (workspace.session.tools.as_ref()).is_some_and(|t| !t.is_empty())
}

impl Opening {
    /// Asks the worker to resolve `text` (with the next batch).
    pub fn open(&mut self, text: &str, said: &mut Said) {
        self.queued = Some(text.to_string());
        self.recent.retain(|r| r != text);
        self.recent.push(text.to_string());
        said.notify(format!("opening {text}…"));
    }

    /// Asks the worker to scan the Hugging Face cache for the picker.
    pub fn scan(&mut self) {
        self.scan = true;
    }

    /// Whether an open is still on its way (tests wait for it).
    pub fn opening(&self) -> bool {
        self.waiting.is_some() || self.queued.is_some()
    }

    /// Everything the opener offers: this run's earlier opens first, then the files
    /// listed, the `--templates` folders' templates and the cached model ids of
    /// `catalog`.
    pub fn candidates(&self, catalog: &[TemplateSource], text: &str) -> Vec<String> {
        if crate::tui::dialogs::opener_paths::typed_folder(text).is_some() {
            return self.folder.candidates();
        }
        let mut all: Vec<String> = self.recent.iter().rev().cloned().collect();
        all.extend(self.files.iter().cloned());
        all.extend(catalog.iter().filter_map(|t| match &t.origin {
            Origin::File(path) => Some(path.display().to_string()),
            Origin::Model(model) => match &model.place {
                ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => {
                    Some(snapshot.id.clone())
                }
                ModelPlace::Folder(_) => None,
            },
            _ => None,
        }));
        let mut seen = std::collections::HashSet::new();
        all.retain(|c| seen.insert(c.clone()));
        all
    }

    /// The opener's matches for `text`, best first: for a path from `./`, `../`, `~/`
    /// or `/`, its folder's entries; else among [`Opening::candidates`].
    pub fn choices(&self, catalog: &[TemplateSource], text: &str) -> Vec<String> {
        match crate::tui::dialogs::opener_paths::typed_folder(text) {
            Some((folder, rest)) => self.folder.matches(folder, rest),
            None => {
                let candidates = self.candidates(catalog, text);
                let found = crate::tui::dialogs::opener::matches(text, &candidates);
                found.into_iter().map(str::to_string).collect()
            }
        }
    }

    /// With tools added or removed, a model's named templates are chosen again (its
    /// `tool_use` entry while there are tools), unless a name was pinned: the template
    /// to use and the note saying so.
    pub fn rechoose(&self, workspace: &Workspace) -> Option<(TemplateSource, String)> {
        let set = self.set.as_ref()?;
        let current = &workspace.template;
        let from_set =
            (set.entries.iter()).any(|t| t.name == current.name && t.origin == current.origin);
        if !from_set || set.pinned.is_some() {
            return None;
        }
        let chosen = set.choose(has_tools(workspace)).ok()?;
        if chosen.name == current.name && chosen.origin == current.origin {
            return None;
        }
        let name = chosen.entry().unwrap_or(&chosen.name).to_string();
        Some((
            chosen,
            format!("template {name} chosen for this conversation"),
        ))
    }

    /// The answer to what was typed: a session or a request body to read becomes file
    /// work, a model's templates requests.
    fn opened(&mut self, text: &str, opened: Opened, view: &JobView, said: &mut Said) {
        let workspace = view.workspace;
        let sessions_dir = workspace.sessions_dir.clone();
        said.effect = match opened {
            Opened::Templates(set) => return self.use_set(text, set, workspace, said),
            // Save, discard or stay, as the session picker asks.
            Opened::Session(path) if workspace.dirty => {
                let question = Overlay::Confirm(Confirm::OpenDiscard(path));
                return said.ask(JobRequest::Ask(Box::new(question)));
            }
            _ if workspace.dirty => {
                return said.warn("unsaved changes: save (Ctrl+S) before importing a request body")
            }
            Opened::Session(path) => Some(disk::Job::Open(disk::Open {
                path,
                sessions_dir,
                discard: None,
            })),
            Opened::Request { path, imported } => Some(disk::Job::Import {
                path,
                imported,
                sessions_dir,
            }),
        }
        .map(Effect::Disk);
    }

    /// A model's (or a file's) templates: all join the picker; the conversation moves to
    /// the one transformers would choose for it.
    fn use_set(&mut self, text: &str, set: TemplateSet, workspace: &Workspace, said: &mut Said) {
        let chosen = match set.choose(has_tools(workspace)) {
            Ok(chosen) => chosen,
            Err(err) => return said.warn(could_not_open(text, &err.to_string())),
        };
        for entry in &set.entries {
            said.ask(JobRequest::Remember(entry.clone()));
        }
        let notes = chosen.metadata.notes.join("; ");
        let label = chosen.origin_label();
        // A file's label names its path already: said twice, the kind (`GGUF`) fell past
        // the edge of an 80-column status line whenever the path was long.
        let opened = match chosen.origin {
            Origin::File(_) | Origin::Gguf { .. } | Origin::Request(_) => format!("opened {label}"),
            _ => format!("opened {text}: {label}"),
        };
        said.ask(JobRequest::UseTemplate(chosen));
        self.set = (set.entries.len() > 1).then_some(set);
        if notes.is_empty() {
            said.notify(opened);
        } else {
            said.warn(notes);
        }
    }
}

/// The worker resolves what was typed and scans the cache.
impl Background for Opening {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        match reply.kind {
            JobKind::Open => self.waiting.is_some(),
            JobKind::ScanCache => true,
            _ => false,
        }
    }

    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        if let Some(target) = self.queued.take() {
            self.waiting = Some(target.clone());
            return Some((view.generation, Job::Open { target }));
        }
        std::mem::take(&mut self.scan).then_some((0, Job::ScanCache))
    }

    fn receive(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool {
        if reply.kind == JobKind::ScanCache {
            let Ok(Output::Cached(sets)) = reply.result else {
                return false;
            };
            let templates = sets.into_iter().flat_map(|s| s.entries).collect();
            said.ask(JobRequest::AddTemplates(templates));
            return true;
        }
        let Some(text) = self.waiting.take() else {
            return false;
        };
        match reply.result {
            Ok(Output::Opened(opened)) => self.opened(&text, *opened, view, said),
            Ok(_) => {}
            Err(err) => said.warn(could_not_open(&text, &err.message)),
        }
        // Not from a key, so the event loop would not send the new render until its next
        // wake-up: send it now.
        said.ask(JobRequest::Render);
        true
    }

    fn pending(&self, _view: &JobView) -> bool {
        self.opening()
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
