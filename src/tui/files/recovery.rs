//! Recovery files: where unsaved changes are kept, one name per thing opened, and what a
//! file holds (for the restore question).
//!
//! A session `dir/NAME.json` keeps its changes in `dir/NAME.recovery.json`. An untitled
//! session keeps them in the sessions folder under a name derived from what was opened
//! (`.untitled-mine-1a2b3c4d.recovery.json` for `mine.jinja`, `.untitled-bundled-NAME…`
//! for a bundled template), so opening another template never offers its changes. When
//! the user keeps an earlier recovery file for later, this run writes `NAME~2.recovery.json`
//! (and so on) instead of overwriting it. Every name ends in `.recovery.json`, which the
//! session picker and `chatplate check` skip.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chatplate_core::catalog::{Origin, TemplateSource};
use chatplate_core::session::{Session, TemplateRef};

const SUFFIX: &str = ".recovery.json";

/// What an earlier run left behind, as the restore question shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file.
    pub path: PathBuf,
    /// When it was written (local time), if known.
    pub saved: Option<String>,
    /// Its message count and template, or why it cannot be read.
    pub contents: Result<(usize, String), String>,
    /// How many other recovery files for the same thing remain after this one.
    pub others: usize,
    /// What differs from the saved session file, as `- ` / `+ ` lines (see
    /// `dialogs::recovery_diff`); empty for an untitled session or when nothing differs.
    pub diff: Vec<String>,
}

/// The key that names an untitled session's recovery file after what was opened.
pub fn untitled_key(opened: &TemplateSource) -> String {
    let key = match &opened.origin {
        Origin::Bundled => format!("bundled-{}", opened.name),
        Origin::File(path) => format!("{}-{:08x}", stem(path), path_hash(path)),
        Origin::Model(model) => format!(
            "{}-{}{:08x}",
            opened.name.replace('/', "-"),
            model
                .entry
                .as_deref()
                .map_or(String::new(), |n| format!("{n}-")),
            path_hash(&model.file)
        ),
        Origin::Gguf { path, entry } => format!(
            "{}-{}{:08x}",
            stem(path),
            entry.as_deref().map_or(String::new(), |n| format!("{n}-")),
            path_hash(path)
        ),
        Origin::Request(path) => format!("request-{}-{:08x}", stem(path), path_hash(path)),
        Origin::Inline => format!("inline-{:08x}", fnv1a(opened.source.as_bytes())),
    };
    key.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect()
}

/// The first-choice recovery file for a session at `path`, or for an untitled one.
pub fn base_path(path: Option<&Path>, sessions_dir: &Path, key: &str) -> PathBuf {
    match path {
        Some(path) => path.with_file_name(format!("{}{SUFFIX}", stem(path))),
        None => sessions_dir.join(format!(".untitled-{key}{SUFFIX}")),
    }
}

/// The `n`th name for `base` (1 is `base` itself).
fn numbered(base: &Path, n: usize) -> PathBuf {
    if n <= 1 {
        return base.to_path_buf();
    }
    let name = file_name(base);
    let stem = name.strip_suffix(SUFFIX).unwrap_or(&name);
    base.with_file_name(format!("{stem}~{n}{SUFFIX}"))
}

/// Recovery files for `base` that exist now, newest first.
pub fn existing(base: &Path) -> Vec<PathBuf> {
    let name = file_name(base);
    let stem = name.strip_suffix(SUFFIX).unwrap_or(&name).to_string();
    let dir = base.parent().filter(|d| !d.as_os_str().is_empty());
    let entries = fs::read_dir(dir.unwrap_or(Path::new(".")))
        .into_iter()
        .flatten();
    let mut found: Vec<(Option<SystemTime>, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|entry| belongs(&entry.file_name().to_string_lossy(), &stem))
        .map(|entry| {
            (
                modified(&entry.path()),
                base.with_file_name(entry.file_name()),
            )
        })
        .collect();
    found.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    found.into_iter().map(|(_, path)| path).collect()
}

/// `STEM.recovery.json` or `STEM~N.recovery.json`.
fn belongs(name: &str, stem: &str) -> bool {
    let Some(middle) = name.strip_prefix(stem).and_then(|n| n.strip_suffix(SUFFIX)) else {
        return false;
    };
    middle.is_empty()
        || middle
            .strip_prefix('~')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The first name for `base` that no file uses.
pub fn free_path(base: &Path) -> PathBuf {
    (1..)
        .map(|n| numbered(base, n))
        .find(|path| fs::symlink_metadata(path).is_err())
        .unwrap_or_else(|| base.to_path_buf())
}

/// The untitled sessions' recovery files beside `base` (in the sessions folder) that
/// are not `base`'s own (they belong to other templates), newest first: what a plain
/// `chatplate` offers when its own template has none.
pub fn untitled_others(base: &Path) -> Vec<PathBuf> {
    let offered = existing(base);
    let dir = base.parent().filter(|d| !d.as_os_str().is_empty());
    let entries = fs::read_dir(dir.unwrap_or(Path::new(".")))
        .into_iter()
        .flatten();
    let mut found: Vec<(Option<SystemTime>, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|entry| base.with_file_name(entry.file_name()))
        .filter(|path| {
            let name = file_name(path);
            name.starts_with(".untitled-") && name.ends_with(SUFFIX) && !offered.contains(path)
        })
        .map(|path| (modified(&path), path))
        .collect();
    found.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    found.into_iter().map(|(_, path)| path).collect()
}

/// Whether recovery file `path` holds the session saved at `saved` as it is (the
/// template's fingerprint aside, which a save records and an autosave does not):
/// restoring it would change nothing.
pub fn holds_saved(path: &Path, saved: &Path) -> bool {
    let (Ok(mut recovered), Ok(mut session)) = (Session::load(path), Session::load(saved)) else {
        return false;
    };
    recovered.template_sha256 = None;
    session.template_sha256 = None;
    recovered == session
}

/// Reads what `path` holds for the restore question.
pub fn describe(path: &Path, others: usize) -> Found {
    let contents = Session::load(path)
        .map(|session| (session.messages.len(), template_label(&session.template)))
        .map_err(|err| err.to_string());
    Found {
        path: path.to_path_buf(),
        saved: modified(path).and_then(local_time),
        contents,
        others,
        diff: Vec::new(),
    }
}

/// The recovered session's template, as the dialog's "messages on ..." names it.
fn template_label(template: &TemplateRef) -> String {
    let named = match template {
        TemplateRef::Bundled(name) => name.clone(),
        TemplateRef::Path(path) => path.clone(),
        TemplateRef::Named { path, name } => format!("{path} ({name})"),
        TemplateRef::Model {
            id, revision, name, ..
        } => {
            let revision = revision
                .as_deref()
                .map_or(String::new(), |r| format!("@{r}"));
            let name = name.as_deref().map_or(String::new(), |n| format!(" ({n})"));
            format!("{id}{revision}{name}")
        }
        TemplateRef::Source(_) => return "the template written into the session".into(),
    };
    format!("template {named}")
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn local_time(time: SystemTime) -> Option<String> {
    let stamp = jiff::Timestamp::try_from(time).ok()?;
    let zoned = stamp.to_zoned(jiff::tz::TimeZone::system());
    Some(zoned.strftime("%Y-%m-%d %H:%M").to_string())
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Stable across runs and builds (unlike the standard hasher): the name must not change.
fn path_hash(path: &Path) -> u32 {
    let absolute = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    fnv1a(absolute.to_string_lossy().as_bytes())
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_variants() {
        let base = base_path(Some(Path::new("s/w.json")), Path::new("s"), "");
        assert_eq!(base, Path::new("s/w.recovery.json"));
        assert_eq!(numbered(&base, 2), Path::new("s/w~2.recovery.json"));
        assert!(belongs("w~2.recovery.json", "w"));
        assert!(belongs("w.recovery.json", "w"));
        assert!(!belongs("w~x.recovery.json", "w"));
        assert!(!belongs("wx.recovery.json", "w"));
        let untitled = base_path(None, Path::new("s"), "bundled-x");
        assert_eq!(untitled, Path::new("s/.untitled-bundled-x.recovery.json"));
    }

    #[test]
    fn keys_differ_per_template_file() {
        let file = |p: &str| TemplateSource::new("t", "", Origin::File(PathBuf::from(p)));
        let (a, b) = (
            untitled_key(&file("/x/a.jinja")),
            untitled_key(&file("/x/b.jinja")),
        );
        assert!(a.starts_with("a-") && b.starts_with("b-"), "{a} {b}");
        assert_ne!(a, b);
    }
}
