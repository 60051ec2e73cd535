//! What `chatplate check --watch` polls: the size and modification time of every file
//! under the paths being checked (fixtures and the templates beside them), so a run
//! starts again when any of them changes.
//!
//! Polling, not file-system events: it works the same on every platform and over
//! network mounts, and a few thousand `stat` calls every half second cost nothing. It
//! is bounded: at most [`MAX_WATCHED_FILES`] files are looked at per poll.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::files;

/// The most files one poll looks at; a tree larger than this is watched in part (the
/// first files in name order), and [`Snapshot::truncated`] says so.
pub const MAX_WATCHED_FILES: usize = 10_000;

/// The state of the watched files at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Each file with its size and modification time, in walk order.
    files: Vec<(PathBuf, u64, Option<SystemTime>)>,
    /// Files left out because the tree holds more than the bound.
    truncated: bool,
}

impl Snapshot {
    /// Looks at every file under `paths` (a file given is watched itself; a folder's
    /// dot-folders are left out, as `check` leaves them out), at most `limit` files.
    pub fn take(paths: &[PathBuf], limit: usize) -> Self {
        let mut snapshot = Snapshot::default();
        for path in paths {
            let found = if path.is_dir() {
                files::walk(path, |dir| !is_hidden(dir), |_| true).files
            } else {
                vec![path.clone()]
            };
            for file in found {
                if snapshot.files.len() == limit {
                    snapshot.truncated = true;
                    return snapshot;
                }
                snapshot.files.push(stat(file));
            }
        }
        snapshot
    }

    /// Whether the tree held more files than the bound (the rest are not watched).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// How many files are watched.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is watched.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The first file that differs between `self` and `later` (changed, added or
    /// removed), to name in the "re-checking" line.
    pub fn first_change<'a>(&'a self, later: &'a Snapshot) -> Option<&'a Path> {
        let before: HashMap<&PathBuf, _> = self.files.iter().map(|(p, s, t)| (p, (s, t))).collect();
        let after: HashMap<&PathBuf, _> = later.files.iter().map(|(p, s, t)| (p, (s, t))).collect();
        let changed = later
            .files
            .iter()
            .find(|(path, size, time)| before.get(path) != Some(&(size, time)));
        let removed = || {
            self.files
                .iter()
                .find(|(path, ..)| !after.contains_key(path))
        };
        changed.or_else(removed).map(|(path, ..)| path.as_path())
    }
}

fn stat(file: PathBuf) -> (PathBuf, u64, Option<SystemTime>) {
    // A file removed between the walk and here reads as empty with no time, which
    // differs from what it was: the next poll sees it gone.
    let meta = std::fs::metadata(&file).ok();
    let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
    let modified = meta.and_then(|m| m.modified().ok());
    (file, size, modified)
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("t.jinja"), "x").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/index"), "i").unwrap();
        dir
    }

    #[test]
    fn an_unchanged_tree_gives_the_same_snapshot() {
        let dir = tree();
        let paths = [dir.path().to_path_buf()];
        let first = Snapshot::take(&paths, MAX_WATCHED_FILES);
        assert_eq!(first.len(), 2, "dot-folders are not watched");
        assert_eq!(first, Snapshot::take(&paths, MAX_WATCHED_FILES));
    }

    #[test]
    fn a_changed_added_or_removed_file_is_named() {
        let dir = tree();
        let paths = [dir.path().to_path_buf()];
        let first = Snapshot::take(&paths, MAX_WATCHED_FILES);
        std::fs::write(dir.path().join("t.jinja"), "longer").unwrap();
        let second = Snapshot::take(&paths, MAX_WATCHED_FILES);
        assert_eq!(
            first.first_change(&second),
            Some(&*dir.path().join("t.jinja"))
        );
        std::fs::write(dir.path().join("b.json"), "{}").unwrap();
        let third = Snapshot::take(&paths, MAX_WATCHED_FILES);
        assert_eq!(
            second.first_change(&third),
            Some(&*dir.path().join("b.json"))
        );
        std::fs::remove_file(dir.path().join("a.json")).unwrap();
        let fourth = Snapshot::take(&paths, MAX_WATCHED_FILES);
        assert_eq!(
            third.first_change(&fourth),
            Some(&*dir.path().join("a.json"))
        );
    }

    #[test]
    fn a_tree_larger_than_the_bound_is_watched_in_part() {
        let dir = tree();
        let snapshot = Snapshot::take(&[dir.path().to_path_buf()], 1);
        assert_eq!(snapshot.len(), 1);
        assert!(snapshot.truncated());
    }
}
