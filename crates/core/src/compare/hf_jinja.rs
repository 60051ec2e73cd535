//! Where the `hf-jinja` engine's package, @huggingface/jinja, is found: only in folders
//! the user chose, and then loaded by its absolute path. Node's own search starts at the
//! working directory and climbs its `node_modules` folders, which would find one that a
//! fixture's tree carries; chatplate never lets Node search.
//!
//! The folders, in order: NODE_PATH's, then Node's global folders (`$HOME/.node_modules`,
//! `$HOME/.node_libraries`, `PREFIX/lib/node`) and npm's global one
//! (`PREFIX/lib/node_modules`, where `npm install -g` puts packages), PREFIX being the
//! folder above the one Node's executable is in.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The package's name, a folder below a `node_modules` folder.
pub(super) const PACKAGE: &str = "@huggingface/jinja";

/// The folders `node_path` (NODE_PATH's value) names; an empty entry names nothing and a
/// relative one is taken from the current directory, as Node takes it.
pub(super) fn node_path_folders(node_path: Option<&OsStr>) -> Vec<PathBuf> {
    let Some(node_path) = node_path else {
        return Vec::new();
    };
    std::env::split_paths(node_path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .filter_map(|dir| std::path::absolute(dir).ok())
        .collect()
}

/// The folders searched: `chosen` (NODE_PATH's), then the global folders of the Node at
/// `node` (an absolute path) for a user whose home is `home`.
pub(super) fn search_folders(chosen: &[PathBuf], node: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut folders = chosen.to_vec();
    if let Some(home) = home {
        folders.push(home.join(".node_modules"));
        folders.push(home.join(".node_libraries"));
    }
    let real = std::fs::canonicalize(node).unwrap_or_else(|_| node.to_path_buf());
    if let Some(prefix) = real.parent().and_then(Path::parent) {
        folders.push(prefix.join("lib/node"));
        folders.push(prefix.join("lib/node_modules"));
    }
    folders
}

/// The package's folder in the first of `folders` that has it.
pub(super) fn find(folders: &[PathBuf]) -> Option<PathBuf> {
    folders
        .iter()
        .map(|folder| folder.join(PACKAGE))
        .find(|package| package.join("package.json").is_file())
}

/// Why the package was not found, naming where it was looked for.
pub(super) fn not_found(folders: &[PathBuf]) -> String {
    let shown: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
    format!("no {PACKAGE} in {}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_path_entries_are_absolute_and_empty_ones_dropped() {
        let joined = std::env::join_paths(["/a", "", "rel"]).unwrap();
        let folders = node_path_folders(Some(&joined));
        let here = std::env::current_dir().unwrap();
        assert_eq!(folders, [PathBuf::from("/a"), here.join("rel")]);
        assert!(node_path_folders(None).is_empty());
    }

    #[test]
    fn the_global_folders_follow_the_chosen_ones() {
        let folders = search_folders(
            &[PathBuf::from("/chosen")],
            Path::new("/opt/node/bin/node"),
            Some(Path::new("/home/u")),
        );
        let want = [
            "/chosen",
            "/home/u/.node_modules",
            "/home/u/.node_libraries",
            "/opt/node/lib/node",
            "/opt/node/lib/node_modules",
        ]
        .map(PathBuf::from);
        assert_eq!(folders, want);
    }

    #[test]
    fn the_package_is_found_in_the_first_folder_that_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let (empty, full) = (dir.path().join("empty"), dir.path().join("full"));
        std::fs::create_dir_all(full.join(PACKAGE)).unwrap();
        std::fs::write(full.join(PACKAGE).join("package.json"), "{}").unwrap();
        assert_eq!(
            find(&[empty.clone(), full.clone()]),
            Some(full.join(PACKAGE))
        );
        assert_eq!(find(std::slice::from_ref(&empty)), None);
        assert!(not_found(&[empty]).starts_with("no @huggingface/jinja in /"));
    }
}
