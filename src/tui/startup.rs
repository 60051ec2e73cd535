//! Turning what the user asked to open into a workspace: a session file, a template
//! (`.jinja`, `chat_template.jinja`, `tokenizer_config.json`, a folder of them) or
//! nothing (the example session on the default template).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value as Json;

use crate::catalog::{self, TemplateSource};
use crate::session::Session;

use super::conversation::example_session;
use super::workspace::Workspace;
use super::TuiOptions;

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

/// Opens what `options` names.
pub fn open(options: &TuiOptions) -> anyhow::Result<Opened> {
    let sessions_dir = PathBuf::from(SESSIONS_DIR);
    let mut catalog = catalog::bundled();
    let mut notices = Vec::new();
    for dir in &options.template_dirs {
        match catalog::load_path(dir) {
            Ok(found) => catalog.extend(found),
            Err(err) => notices.push(err.to_string()),
        }
    }
    if let Some(path) = &options.file {
        refuse_special_file(path)?;
    }
    let example = sessions_dir.join("example.json");
    let target = options
        .file
        .clone()
        .or_else(|| example.is_file().then_some(example));
    let workspace = match target {
        Some(path) if is_session(&path) => {
            let (workspace, notice) = open_session(&path, &sessions_dir)?;
            notices.extend(notice);
            workspace
        }
        Some(path) => {
            let found =
                catalog::load_path(&path).with_context(|| format!("opening {}", path.display()))?;
            let chosen = pick_default(&found)
                .with_context(|| format!("{}: no template found", path.display()))?;
            catalog.extend(found);
            untitled(chosen, sessions_dir)
        }
        None => untitled(catalog::default_template(), sessions_dir),
    };
    Ok(Opened {
        workspace,
        catalog,
        notice: (!notices.is_empty()).then(|| notices.join("; ")),
    })
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

/// A JSON file that is not a tokenizer config is a session.
fn is_session(path: &Path) -> bool {
    if path.is_dir() || path.extension().is_none_or(|e| e != "json") {
        return false;
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let json: Json = serde_json::from_str(&text).unwrap_or(Json::Null);
    json.get("chat_template").is_none()
        && path
            .file_name()
            .is_none_or(|n| n != "tokenizer_config.json")
}

/// The entry named `default` of a list, else the first.
fn pick_default(found: &[TemplateSource]) -> Option<TemplateSource> {
    let named_default = |t: &&TemplateSource| matches!(&t.origin, catalog::Origin::TokenizerConfig { name: Some(n), .. } if n == "default");
    found.iter().find(named_default).or(found.first()).cloned()
}

fn untitled(template: TemplateSource, sessions_dir: PathBuf) -> Workspace {
    let session = example_session(template.reference(&sessions_dir));
    let mut workspace = Workspace::new(session, None, template.clone(), sessions_dir);
    workspace.set_template(template);
    workspace
}

/// Loads a session file and its template. A template that cannot be found leaves the
/// workspace in a visible error state (nothing renders, the notice names the file) and
/// the session keeps its reference, so saving never switches it silently.
pub fn open_session(
    path: &Path,
    sessions_dir: &Path,
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
    ))
}

fn workspace_for(
    session: Session,
    path: Option<PathBuf>,
    dir: &Path,
    sessions_dir: PathBuf,
) -> (Workspace, Option<String>) {
    match catalog::resolve(&session.template, dir) {
        Ok(template) => (Workspace::new(session, path, template, sessions_dir), None),
        Err(err) => {
            let placeholder = TemplateSource {
                name: "✗ template not found".into(),
                source: String::new(),
                origin: catalog::Origin::Inline,
                bos_token: None,
                eos_token: None,
            };
            let why = format!(
                "{err}. The session keeps this template reference; pick a template in the \
                 Templates pane to switch, or create the file"
            );
            let mut workspace = Workspace::new(session, path, placeholder, sessions_dir);
            workspace.template_missing(why.clone());
            (workspace, Some(why))
        }
    }
}

/// The workspace with the session from recovery file `path` in place of the saved one;
/// that file becomes the one this run's autosave writes.
pub fn restore(workspace: &Workspace, path: &Path) -> anyhow::Result<Workspace> {
    let session = Session::load(path)?;
    let (mut restored, _) = workspace_for(
        session,
        workspace.path.clone(),
        &workspace.session_dir(),
        workspace.sessions_dir.clone(),
    );
    restored.keep_recovery_key(workspace);
    restored.adopt_recovery(path.to_path_buf());
    restored.dirty = true;
    Ok(restored)
}
