//! Finding the fixtures to check: `.json` files under the folders given (link cycles
//! and links out of the folder are not followed; each file once), or the files given.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::files;

/// One fixture to check (also what a checking child process is sent, one per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fixture {
    /// The fixture file.
    pub path: PathBuf,
    /// The tree it belongs to: its template paths must stay inside (the folder named on
    /// the command line, or the file's own folder).
    pub root: PathBuf,
    /// Found by searching a folder (a JSON file there that is not a fixture is skipped),
    /// rather than named directly (where it must be a fixture).
    pub found_in_folder: bool,
    /// The fixture's text, when it was not read from `path` (`chatplate check -` reads
    /// it from standard input); `path` then only names it (`<stdin>`), its template paths
    /// start at `root`, and it cannot be blessed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Fixture {
    /// A fixture given as text, named `name`, whose template paths start at (and must
    /// stay inside) `root`.
    pub fn from_text(name: impl Into<PathBuf>, text: String, root: impl Into<PathBuf>) -> Self {
        Fixture {
            path: name.into(),
            root: root.into(),
            found_in_folder: false,
            text: Some(text),
        }
    }

    /// The folder its relative template paths start at: its own, or `root` for a
    /// fixture given as text.
    pub(crate) fn dir(&self) -> &Path {
        match (&self.text, self.path.parent()) {
            (None, Some(dir)) => dir,
            _ => &self.root,
        }
    }
}

/// What searching the paths found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The fixtures, in path order.
    pub fixtures: Vec<Fixture>,
    /// Things worth telling the user (links not followed, unreadable folders).
    pub notes: Vec<String>,
}

/// Every `.json` fixture under `paths` (files are taken as given), sorted per directory.
/// Dot-files and `*.recovery.json` (the app's autosaves) are left out.
pub fn collect_fixtures(paths: &[PathBuf]) -> Discovery {
    let mut found = Discovery::default();
    for path in paths {
        if !path.is_dir() {
            found.fixtures.push(Fixture {
                path: path.clone(),
                root: parent_dir(path),
                found_in_folder: false,
                text: None,
            });
            continue;
        }
        let walked = files::walk(path, |dir| !is_hidden(dir), is_candidate);
        found
            .fixtures
            .extend(walked.files.into_iter().map(|file| Fixture {
                path: file,
                root: path.clone(),
                found_in_folder: true,
                text: None,
            }));
        for (skipped, why) in walked.skipped {
            found
                .notes
                .push(format!("skipped {}: {why}", skipped.display()));
        }
    }
    found
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

fn is_candidate(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.ends_with(".json") && !name.starts_with('.') && !name.ends_with(".recovery.json")
}

/// Why a JSON file that failed to load as a fixture is not meant to be one, if it is
/// not: valid JSON that is not an object with `version` or `template` (a
/// `tokenizer_config.json`, a list of messages, a `{"messages": ...}` input file).
/// A file that is not even JSON, or that looks like a fixture, is a broken fixture.
pub(crate) fn not_a_fixture(path: &Path) -> Option<String> {
    let bytes = files::read_bytes(path, files::MAX_SESSION_BYTES).ok()?;
    let json: Json = serde_json::from_slice(&bytes).ok()?;
    if is_fixture_shaped(&json) {
        return None;
    }
    let what = match &json {
        Json::Object(fields) if fields.contains_key("chat_template") => "a tokenizer config",
        Json::Object(_) => "a JSON object without \"version\" or \"template\"",
        Json::Array(_) => "a JSON list",
        _ => "a JSON value that is not an object",
    };
    Some(format!("not a fixture ({what})"))
}

/// Whether parsed JSON is meant as a fixture: an object with `version` or `template`.
pub fn is_fixture_shaped(json: &Json) -> bool {
    json.as_object()
        .is_some_and(|o| o.contains_key("version") || o.contains_key("template"))
}
