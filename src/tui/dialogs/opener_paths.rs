//! The opener's path completion, as fzf's and lazygit's pickers complete paths: text
//! that starts with `./`, `../`, `~/` or `/` names a folder up to its last `/`, and the
//! opener lists that folder's entries (as file work, bounded by [`MAX_ENTRIES`]) and
//! matches the rest of the text against their names with the shared matcher. Folders
//! end with `/`; entries starting with `.` show only once the rest starts with `.`.

use std::path::{Path, PathBuf};

use crate::tui::matcher;

/// The most entries listed from one folder.
pub const MAX_ENTRIES: usize = 5_000;

/// The entries of the folder the opener's text names, as listed by file work.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folder {
    /// The folder as typed (`./`, `~/models/`, `/abs/`), ending with `/`.
    pub typed: String,
    /// Its entries' names in name order, folders with a `/` after them.
    pub entries: Vec<String>,
}

impl Folder {
    /// The entries matching `rest` (what follows the folder), best first, each with the
    /// folder as typed in front; none unless `typed` is the folder listed.
    pub fn matches(&self, typed: &str, rest: &str) -> Vec<String> {
        if typed != self.typed {
            return Vec::new();
        }
        let shown: Vec<&String> = (self.entries.iter())
            .filter(|name| !name.starts_with('.') || rest.starts_with('.'))
            .collect();
        (matcher::rank(rest, &shown).into_iter())
            .map(|r| format!("{typed}{}", shown[r.index]))
            .collect()
    }

    /// Every entry with the folder as typed in front (what `Tab` completes among).
    pub fn candidates(&self) -> Vec<String> {
        (self.entries.iter())
            .map(|name| format!("{}{name}", self.typed))
            .collect()
    }
}

/// The folder `text` names and the rest after it, when `text` is a path from the
/// current, a parent, the home or the root folder: `./m_` is `./` and `m_`.
pub fn typed_folder(text: &str) -> Option<(&str, &str)> {
    let rooted = ["./", "../", "~/", "/"].iter().any(|p| text.starts_with(p));
    let cut = text.rfind('/').filter(|_| rooted)? + 1;
    Some(text.split_at(cut))
}

/// `text` with a leading `~` made the home folder (the worker opens paths as given).
pub fn expand_home(text: &str) -> String {
    let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
    match (text.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", home.display())
        }
        _ => text.to_string(),
    }
}

/// The names in the folder typed as `typed` (file work: never in `update`), in name
/// order, at most [`MAX_ENTRIES`]. A link to a folder is shown as a folder; only one
/// folder is read, so links are never followed further (no cycles).
pub fn list_folder(typed: &str) -> Vec<String> {
    let dir = PathBuf::from(expand_home(typed));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = (entries.filter_map(Result::ok))
        .take(MAX_ENTRIES)
        .map(|e| e.path())
        .collect();
    paths.sort();
    paths.iter().filter_map(|path| entry_name(path)).collect()
}

/// How an entry is listed: its name, with a `/` after a folder.
fn entry_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    Some(if path.is_dir() {
        format!("{name}/")
    } else {
        name.into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rooted_path_names_its_folder() {
        assert_eq!(typed_folder("./m_"), Some(("./", "m_")));
        assert_eq!(typed_folder("../x/"), Some(("../x/", "")));
        assert_eq!(typed_folder("/abs/path/se"), Some(("/abs/path/", "se")));
        assert_eq!(typed_folder("~/"), Some(("~/", "")));
        assert_eq!(typed_folder("sessions/a"), None, "below the working folder");
        assert_eq!(typed_folder("~"), None);
        assert_eq!(typed_folder("gemma"), None);
    }

    #[test]
    fn the_home_folder_is_expanded() {
        let home = directories::BaseDirs::new().unwrap();
        let home = home.home_dir().display().to_string();
        assert_eq!(expand_home("~/x.json"), format!("{home}/x.json"));
        assert_eq!(expand_home("~"), home);
        assert_eq!(expand_home("~x/y"), "~x/y", "another user's is not");
        assert_eq!(expand_home("./~/a"), "./~/a");
    }

    #[test]
    fn a_folder_is_listed_in_name_order_folders_marked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("models")).unwrap();
        std::fs::write(dir.path().join("m_b.json"), "{}").unwrap();
        std::fs::write(dir.path().join("m_a.jinja"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        let typed = format!("{}/", dir.path().display());
        let entries = list_folder(&typed);
        assert_eq!(entries, [".hidden", "m_a.jinja", "m_b.json", "models/"]);
        assert!(list_folder("/no/such/folder/").is_empty());
    }

    #[test]
    fn the_rest_is_matched_against_the_names() {
        let folder = Folder {
            typed: "./".into(),
            entries: [".git/", "m_a.jinja", "m_b.json", "models/", "xm_y"]
                .map(String::from)
                .to_vec(),
        };
        let found = folder.matches("./", "m_");
        assert_eq!(
            found,
            ["./m_b.json", "./m_a.jinja", "./xm_y"],
            "starts first"
        );
        assert!(!found.contains(&"./.git/".to_string()));
        assert_eq!(folder.matches("./", ".g"), ["./.git/"]);
        assert_eq!(
            folder.matches("../", "m_"),
            Vec::<String>::new(),
            "not listed"
        );
        assert_eq!(folder.matches("./", "").len(), 4);
    }
}
