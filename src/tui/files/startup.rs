//! Turning what the user asked to open into a workspace: a session file, a request body
//! (a new session), anything that offers templates (a `.jinja`, a model folder or any file
//! in one, a `.gguf`, a model id from the Hugging Face cache or the Hub, a folder of
//! templates), or nothing (the example session on the default template). The resolution
//! itself is the engine's [`chatplate_core::target::open`].

use std::path::{Path, PathBuf};

use anyhow::Context;

use chatplate_core::catalog::hub::{FetchEvent, HubFetch, HubSettings};
use chatplate_core::catalog::{self, Fetch, NoFetch, Origin, TemplateSource};
use chatplate_core::request::Imported;
use chatplate_core::session::Session;
use chatplate_core::target::{self, Opened as Target};

use crate::tui::files::workspace::Place;

use crate::tui::files::workspace::Workspace;
use crate::tui::panes::messages::conversation::example_session;
use crate::tui::TuiOptions;

/// Where sessions are saved and listed by default.
pub const SESSIONS_DIR: &str = "sessions";

/// The opened workspace, the template catalog and anything worth telling the user.
#[derive(Debug)]
pub struct Opened {
    /// The session to edit.
    pub workspace: Workspace,
    /// Templates for the picker.
    pub catalog: Vec<TemplateSource>,
    /// Problems that did not stop the app (an unreadable template folder, ...).
    pub notice: Option<String>,
}

/// Opens what `options` names. Runs before the terminal is taken over, so fetching a
/// model from the Hub reports its progress on stderr.
pub fn open(options: &TuiOptions) -> anyhow::Result<Opened> {
    // The example session has tools, so a model's `tool_use` template applies.
    open_for(options, true)
}

/// [`open`], for a session that will (`has_tools`) or will not have tools: on a model
/// with several templates, that picks `tool_use` or `default`, as transformers would.
pub fn open_for(options: &TuiOptions, has_tools: bool) -> anyhow::Result<Opened> {
    let sessions_dir = PathBuf::from(SESSIONS_DIR);
    let mut catalog = catalog::bundled();
    let mut notices = Vec::new();
    for dir in &options.template_dirs {
        // A folder keeps its good templates; each unusable file is a warning.
        let loaded = catalog::load_all(dir);
        catalog.extend(loaded.templates);
        notices.extend(loaded.problems.iter().map(|p| p.to_string()));
    }
    if let Some(path) = &options.file {
        refuse_special_file(path)?;
    }
    let example = sessions_dir.join("example.json");
    let target = options
        .file
        .clone()
        .or_else(|| example.is_file().then_some(example));
    let Some(path) = target else {
        let mut workspace = untitled(catalog::default_template(), sessions_dir);
        workspace.offer_elsewhere = true;
        return Ok(finish(workspace, catalog, notices));
    };
    let text = path.to_string_lossy().into_owned();
    // Before the terminal is taken over, so a fetch can report on stderr.
    let mut progress = |event: &FetchEvent| eprintln!("chatplate: {event}");
    let mut fetch = HubFetch {
        settings: HubSettings::from_env(),
        progress: &mut progress,
    };
    // Every error names the file, model or template it is about.
    let opened = target::open(&text, &mut fetch)?;
    let mut workspace = match opened {
        Target::Session(path) => {
            let (workspace, notice) = load_session(&path, &sessions_dir, &mut fetch)?;
            notices.extend(notice);
            workspace
        }
        Target::Request { path, imported } => {
            from_request(&path, *imported, sessions_dir, &mut notices, &mut fetch)
        }
        Target::Templates(set) => {
            let set = set.pin(options.template_name.as_deref());
            let chosen = set
                .choose(has_tools)
                .with_context(|| format!("opening {text}"))?;
            notices.extend(chosen.metadata.notes.iter().cloned());
            add_new(&mut catalog, set.entries);
            untitled(chosen, sessions_dir)
        }
    };
    // A plain `chatplate`: the restore question also offers an untitled session's
    // recovery file of another template, which would otherwise go unnoticed.
    workspace.offer_elsewhere = options.file.is_none();
    Ok(finish(workspace, catalog, notices))
}

/// Adds the templates the catalog does not list yet (a bundled name opened is listed
/// already).
fn add_new(catalog: &mut Vec<TemplateSource>, entries: Vec<TemplateSource>) {
    for entry in entries {
        let same = |t: &TemplateSource| t.name == entry.name && t.origin == entry.origin;
        if !catalog.iter().any(same) {
            catalog.push(entry);
        }
    }
}

/// Only regular files and folders are opened: reading a FIFO or a device would wait for
/// a writer before the app even starts.
fn refuse_special_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => anyhow::bail!(
            "{}: not a regular file (a pipe or a device cannot be opened)",
            path.display()
        ),
        _ => Ok(()),
    }
}

fn finish(workspace: Workspace, catalog: Vec<TemplateSource>, notices: Vec<String>) -> Opened {
    Opened {
        workspace,
        catalog,
        notice: (!notices.is_empty()).then(|| notices.join("; ")),
    }
}

fn untitled(template: TemplateSource, sessions_dir: PathBuf) -> Workspace {
    let session = example_session(template.reference(&sessions_dir));
    let mut workspace = Workspace::new(session, None, template.clone(), sessions_dir);
    workspace.set_template(template);
    workspace
}

/// A request body as a new, unsaved session on the template it names.
fn from_request(
    path: &Path,
    imported: Imported,
    sessions_dir: PathBuf,
    notices: &mut Vec<String>,
    fetch: &mut dyn Fetch,
) -> Workspace {
    notices.extend(imported.notes);
    if !imported.kept.is_empty() {
        notices.push(format!(
            "kept from the request: {}",
            imported.kept.join(", ")
        ));
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    let mut template = match template_for(&imported.session, dir, fetch) {
        Ok(template) => template,
        Err(err) => {
            notices.push(format!("{err}; using the default template"));
            catalog::default_template()
        }
    };
    if template.origin == Origin::Inline {
        template.origin = Origin::Request(path.to_path_buf());
        template.name = format!("{} chat_template", file_name(path));
    }
    let mut workspace = Workspace::new(imported.session, None, template.clone(), sessions_dir);
    workspace.set_template(template);
    workspace.unsaved();
    workspace
}

/// A request body opened while the app runs: the workspace and what to tell the user
/// (no model is fetched: nothing may print over the screen).
pub(crate) fn request_workspace(
    path: &Path,
    imported: Imported,
    sessions_dir: PathBuf,
) -> (Workspace, Option<String>) {
    let mut notices = Vec::new();
    let workspace = from_request(path, imported, sessions_dir, &mut notices, &mut NoFetch);
    (workspace, (!notices.is_empty()).then(|| notices.join("; ")))
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Loads a session file and its template. A template that cannot be found leaves the
/// workspace in a visible error state (nothing renders, the notice names the file) and
/// the session keeps its reference, so saving never switches it silently. Used while the
/// app runs, so a model missing from the local cache is not fetched (nothing may print
/// over the screen).
pub fn open_session(
    path: &Path,
    sessions_dir: &Path,
) -> anyhow::Result<(Workspace, Option<String>)> {
    load_session(path, sessions_dir, &mut NoFetch)
}

fn load_session(
    path: &Path,
    sessions_dir: &Path,
    fetch: &mut dyn Fetch,
) -> anyhow::Result<(Workspace, Option<String>)> {
    let session = Session::load(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(workspace_for(
        session,
        Some(path.to_path_buf()),
        dir,
        sessions_dir.to_path_buf(),
        fetch,
    ))
}

/// The template roots the user allowed: `--template-root` and the config file's, and
/// those allowed while the app runs.
static ROOTS: std::sync::RwLock<Vec<PathBuf>> = std::sync::RwLock::new(Vec::new());

/// Allows sessions' template paths to lead into these folders too (`--template-root`
/// and the config file's `template_roots`, see [`crate::template_roots`]); call before
/// the app starts.
pub fn allow_template_roots(roots: Vec<PathBuf>) {
    if let Ok(mut allowed) = ROOTS.write() {
        *allowed = roots;
    }
}

/// Allows one more template root for the rest of the run.
pub fn allow_template_root(root: PathBuf) {
    if let Ok(mut allowed) = ROOTS.write() {
        allowed.push(root);
    }
}

/// Where a session's template path may lead: the rule `check` and `render` apply, with
/// the session's folder as the tree (see [`crate::template_roots`]).
pub(in crate::tui) fn template_access(session_dir: &Path) -> catalog::TemplateAccess {
    let roots = ROOTS.read().map(|roots| roots.clone()).unwrap_or_default();
    crate::template_roots::access(session_dir, &roots)
}

/// The session's template, fetched from the Hub first when `fetch` allows it.
fn template_for(
    session: &Session,
    dir: &Path,
    fetch: &mut dyn Fetch,
) -> Result<TemplateSource, catalog::CatalogError> {
    catalog::prefetch(&session.template, fetch)
        .and_then(|()| catalog::resolve_for(session, dir, &template_access(dir)))
}

fn workspace_for(
    session: Session,
    path: Option<PathBuf>,
    dir: &Path,
    sessions_dir: PathBuf,
    fetch: &mut dyn Fetch,
) -> (Workspace, Option<String>) {
    match template_for(&session, dir, fetch) {
        Ok(template) => (Workspace::new(session, path, template, sessions_dir), None),
        Err(err) => {
            let (label, remedy) = match err {
                catalog::CatalogError::Outside { .. } => ("✗ template not allowed", ""),
                _ => ("✗ template not found", ", or create the file"),
            };
            let placeholder = TemplateSource::new(label, "", Origin::Inline);
            let why = format!(
                "{err}. The session keeps this template reference; pick a template in the \
                 Templates pane to switch{remedy}"
            );
            let mut workspace = Workspace::new(session, path, placeholder, sessions_dir);
            workspace.template_missing(why.clone());
            (workspace, Some(why))
        }
    }
}

/// The workspace with the session from recovery file `path` in place of the saved one
/// at `place`; that file becomes the one this run's autosave writes.
pub fn restore(place: &Place, path: &Path) -> anyhow::Result<Workspace> {
    let session = Session::load(path)?;
    let (mut restored, _) = workspace_for(
        session,
        place.path.clone(),
        &place.session_dir,
        place.sessions_dir.clone(),
        &mut NoFetch,
    );
    restored.keep_recovery_key(&place.untitled_key);
    restored.adopt_recovery(path.to_path_buf());
    restored.unsaved();
    Ok(restored)
}
