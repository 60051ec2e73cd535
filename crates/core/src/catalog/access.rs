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
///
/// One rule for every reader, [`TemplateAccess::for_tree`]: the tree the session was
/// read from (for `check` the folder given, for everything else the session's own
/// folder) and the template roots the user allowed (`--template-root`, and the
/// `template_roots` of the user's config file, which no fixture can change). The app
/// saves a session only with a template reference this rule accepts.
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
    /// Its `response_template`, when it is a path.
    ResponseTemplate,
}

impl NamedFile {
    fn noun(self) -> &'static str {
        match self {
            NamedFile::Template => "template",
            NamedFile::Tokenizer => "tokenizer",
            NamedFile::ResponseTemplate => "response_template",
        }
    }
}

/// A path a session names that leads outside the folders it may read from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} path {} leads outside {}: a session's {} must be inside the session's folder (for `check`, the folder checked) or an allowed template root; allow {} with {}", .what.noun(), chatplate_render::visible::quoted(.path), roots_text(.allowed), .what.noun(), folder_text(.folder), chatplate_render::remedy::means(chatplate_render::remedy::Knob::TemplateRoot))]
pub struct OutsideError {
    /// What the path names.
    pub what: NamedFile,
    /// The path as the session wrote it (or the file found from it).
    pub path: String,
    /// The folders it may read from.
    pub allowed: Vec<PathBuf>,
    /// The folder that, allowed, would let it be read.
    pub folder: PathBuf,
}

impl TemplateAccess {
    /// Only inside `root` (the tree being checked, or the session's folder).
    pub fn within(root: &Path) -> Self {
        TemplateAccess::Within(vec![root.to_path_buf()])
    }

    /// The rule: inside `tree` (the folder the session was read from: the folder
    /// `check` was given, or the session's own folder) or one of the allowed template
    /// `roots`.
    pub fn for_tree(tree: &Path, roots: &[PathBuf]) -> Self {
        let mut allowed = vec![tree.to_path_buf()];
        allowed.extend(roots.iter().cloned());
        TemplateAccess::Within(allowed)
    }

    /// Whether the file or folder at `path` may be read (this looks at the disk: links
    /// are resolved).
    pub fn allows(&self, path: &Path) -> bool {
        match self {
            TemplateAccess::Anywhere => true,
            TemplateAccess::Within(roots) => is_inside(path, roots),
        }
    }

    /// Whether the session may read `path` (a file or folder, links resolved); `written`
    /// is the path as the session wrote it, for the message.
    pub fn check(&self, what: NamedFile, path: &Path, written: &str) -> Result<(), OutsideError> {
        match self {
            TemplateAccess::Within(roots) if !self.allows(path) => Err(OutsideError {
                what,
                path: written.to_string(),
                allowed: roots.clone(),
                folder: folder_to_allow(path),
            }),
            _ => Ok(()),
        }
    }
}

/// Whether `path`, its links resolved, is inside one of `roots` (also resolved). A path
/// that does not exist (yet) is judged by its text, `..` removed.
pub(crate) fn is_inside(path: &Path, roots: &[PathBuf]) -> bool {
    let real = real_path(path);
    roots.iter().any(|root| real.starts_with(real_path(root)))
}

/// `path` with links resolved, or made absolute by hand when it does not exist.
fn real_path(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| lexical_absolute(path))
}

/// The folder that, allowed, would let `path` be read: a model folder itself, else the
/// file's folder.
pub fn folder_to_allow(path: &Path) -> PathBuf {
    let real = real_path(path);
    if real.is_dir() {
        return real;
    }
    real.parent().map_or(real.clone(), Path::to_path_buf)
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

/// A folder, for a message (control characters escaped).
fn folder_text(folder: &Path) -> String {
    chatplate_render::visible::for_terminal(&folder.display().to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_and_the_roots_are_allowed_and_nothing_else() {
        let (tree, root, other) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let access = TemplateAccess::for_tree(tree.path(), &[root.path().to_path_buf()]);
        assert!(access.allows(&tree.path().join("a/t.jinja")));
        assert!(access.allows(&root.path().join("t.jinja")));
        let outside = tree
            .path()
            .join("../")
            .join(other.path().file_name().unwrap());
        assert!(!access.allows(&outside.join("t.jinja")));
        let err = (access.check(NamedFile::Template, &outside.join("t.jinja"), "x")).unwrap_err();
        let real = fs::canonicalize(other.path()).unwrap();
        assert!(
            err.to_string()
                .contains(&format!("allow {}", real.display())),
            "{err}"
        );
    }
}
