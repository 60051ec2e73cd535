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
    let _ = TEMPLATE_ROOTS.set(options.template_dirs.clone());
    let sessions_dir = PathBuf::from(SESSIONS_DIR);
    let mut catalog = catalog::bundled();
    let mut notices = Vec::new();
    for dir in &options.template_dirs {
        // A folder keeps its good templates; each unusable file is a warning.
        let loaded = catalog::load_all(dir);
        catalog.extend(loaded.templates);
        notices.extend(loaded.problems.iter().map(|p| p.to_string()));
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

/// Loads a session file and its template; a template that cannot be found falls back
/// to the default one, with a notice.
pub fn open_session(
    path: &Path,
    sessions_dir: &Path,
) -> anyhow::Result<(Workspace, Option<String>)> {
    let session = Session::load(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (template, notice) = template_for(&session, dir);
    let workspace = Workspace::new(
        session,
        Some(path.to_path_buf()),
        template,
        sessions_dir.to_path_buf(),
    );
    Ok((workspace, notice))
}

/// The `--templates` folders, where sessions' template paths may also lead.
static TEMPLATE_ROOTS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();

/// Folders the user allowed with `--template-root`.
static EXTRA_ROOTS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();

/// Allows sessions' template paths to lead into these folders too (the command line's
/// `--template-root`); call once, before the app starts.
pub fn allow_template_roots(roots: Vec<PathBuf>) {
    let _ = EXTRA_ROOTS.set(roots);
}

/// Where a session's template path may lead: its own folder, the folder the app was
/// started in, the `--templates` folders and any `--template-root` (see
/// [`catalog::TemplateAccess`]).
fn template_access(session_dir: &Path) -> catalog::TemplateAccess {
    let mut roots = vec![session_dir.to_path_buf(), PathBuf::from(".")];
    roots.extend(TEMPLATE_ROOTS.get().into_iter().flatten().cloned());
    roots.extend(EXTRA_ROOTS.get().into_iter().flatten().cloned());
    catalog::TemplateAccess::Within(roots)
}

fn template_for(session: &Session, dir: &Path) -> (TemplateSource, Option<String>) {
    match catalog::resolve(&session.template, dir, &template_access(dir)) {
        Ok(template) => (template, None),
        Err(err) => (
            catalog::default_template(),
            Some(format!(
                "{err}; using the default template (saving will switch to it)"
            )),
        ),
    }
}

/// The workspace with the recovery file's session in place of the saved one.
pub fn restore(workspace: &Workspace) -> anyhow::Result<Workspace> {
    let session = Session::load(&workspace.recovery_path())?;
    let (template, _) = template_for(&session, &workspace.session_dir());
    let mut restored = Workspace::new(
        session,
        workspace.path.clone(),
        template,
        workspace.sessions_dir.clone(),
    );
    restored.dirty = true;
    Ok(restored)
}
