//! Which files a session's template paths may name (see [`TemplateAccess`]).

use std::fs;
use std::path::{Path, PathBuf};

use super::CatalogError;

/// Which files a session's `{"path": ...}` / `{"named": ...}` template may name.
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

impl TemplateAccess {
    /// Only inside `root` (the tree being checked, or the session's folder).
    pub fn within(root: &Path) -> Self {
        TemplateAccess::Within(vec![root.to_path_buf()])
    }

    pub(super) fn check(&self, path: &Path, written: &str) -> Result<(), CatalogError> {
        let TemplateAccess::Within(roots) = self else {
            return Ok(());
        };
        let real = fs::canonicalize(path).unwrap_or_else(|_| lexical_absolute(path));
        let inside = roots.iter().any(|root| {
            let root = fs::canonicalize(root).unwrap_or_else(|_| lexical_absolute(root));
            real.starts_with(root)
        });
        if inside {
            return Ok(());
        }
        Err(CatalogError::Outside {
            path: written.to_string(),
            allowed: roots.clone(),
        })
    }
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
pub(super) fn roots_text(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    match names.as_slice() {
        [] => "every allowed folder".into(),
        [one] => one.clone(),
        _ => names.join(" and "),
    }
}
