//! Which files a session's paths may name (see [`TemplateAccess`]): its template and its
//! tokenizer follow one rule, with one message ([`OutsideError`]).

use std::fs;
use std::path::{Path, PathBuf};

/// Which files a session's `{"path": ...}` / `{"named": ...}` template and its
/// `tokenizer` may name.
///
/// Fixtures arrive in pull requests: a path such as `/proc/self/environ` or
/// `../../.ssh/id_rsa` would print a file the fixture's author should never see in
/// `check`'s diff (and `--bless` would store it). Paths are resolved (links included)
/// and must stay inside one of the allowed folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateAccess {
    /// Any path: for a file the user named themselves.
    Anywhere,
    /// Only paths inside one of these folders.
    Within(Vec<PathBuf>),
}

/// What a session names by a path, for [`OutsideError`]'s message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamedFile {
    /// Its template (`{"path": ...}`, `{"named": ...}`).
    Template,
    /// Its `tokenizer` (a folder, `tokenizer.json` or `tokenizer_config.json`, and the
    /// files found from it).
    Tokenizer,
}

impl NamedFile {
    fn noun(self) -> &'static str {
        match self {
            NamedFile::Template => "template",
            NamedFile::Tokenizer => "tokenizer",
        }
    }
}

/// A path a session names that leads outside the folders it may read from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} path {} leads outside {}; {}s named by a session must be inside it (allow more with --template-root DIR)", .what.noun(), chatplate_render::visible::quoted(.path), roots_text(.allowed), .what.noun())]
pub struct OutsideError {
    /// What the path names.
    pub what: NamedFile,
    /// The path as the session wrote it (or the file found from it).
    pub path: String,
    /// The folders it may read from.
    pub allowed: Vec<PathBuf>,
}

impl TemplateAccess {
    /// Only inside `root` (the tree being checked, or the session's folder).
    pub fn within(root: &Path) -> Self {
        TemplateAccess::Within(vec![root.to_path_buf()])
    }

    /// Whether the session may read `path` (a file or folder, links resolved); `written`
    /// is the path as the session wrote it, for the message.
    pub fn check(&self, what: NamedFile, path: &Path, written: &str) -> Result<(), OutsideError> {
        let TemplateAccess::Within(roots) = self else {
            return Ok(());
        };
        if is_inside(path, roots) {
            return Ok(());
        }
        Err(OutsideError {
            what,
            path: written.to_string(),
            allowed: roots.clone(),
        })
    }
}

/// Whether `path`, its links resolved, is inside one of `roots` (also resolved). A path
/// that does not exist (yet) is judged by its text, `..` removed.
pub(crate) fn is_inside(path: &Path, roots: &[PathBuf]) -> bool {
    let real = fs::canonicalize(path).unwrap_or_else(|_| lexical_absolute(path));
    roots.iter().any(|root| {
        let root = fs::canonicalize(root).unwrap_or_else(|_| lexical_absolute(root));
        real.starts_with(root)
    })
}

/// `path` made absolute with `..` removed, for paths that do not exist (yet).
fn lexical_absolute(path: &Path) -> PathBuf {
    let joined = std::env::current_dir().unwrap_or_default().join(path);
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The allowed folders, for a message.
fn roots_text(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    let text = match names.as_slice() {
        [] => "every allowed folder".into(),
        [one] => one.clone(),
        _ => names.join(" and "),
    };
    chatplate_render::visible::message(&text)
}
