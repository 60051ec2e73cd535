//! The opener (`Ctrl+P`) as a fuzzy finder: what was typed is ranked by the shared
//! matcher (`tui::matcher`: words in any order, each a subsequence) against the files below the working directory that can be opened
//! (sessions and request bodies `.json`, templates `.jinja`, `.gguf`, model folders),
//! the templates of the `--templates` folders, the model ids of the Hugging Face cache
//! and what was opened earlier in this run. The files are listed as file work when the
//! opener opens (bounded: [`MAX_FILES`] entries, [`MAX_DEPTH`] folders deep, dot-folders,
//! `target` and `node_modules` left out). The arrows pick a match, `Tab` completes the
//! typed path (the matches' common start, else the selected match), `Enter` opens the
//! selected match, or the text as typed when nothing matches. Text starting with `./`,
//! `../`, `~/` or `/` completes paths instead (see `dialogs::opener_paths`).

use std::path::{Path, PathBuf};

use crate::tui::dialogs::InputDialog;
use crate::tui::matcher;

/// The most files listed below the working directory.
pub const MAX_FILES: usize = 5_000;

/// The deepest folder looked into, below the working directory.
pub const MAX_DEPTH: usize = 6;

/// The most matches shown.
pub const SHOWN: usize = 8;

/// Folders never worth listing (build output, dependencies).
const SKIPPED: [&str; 2] = ["target", "node_modules"];

/// The openable files and model folders below `root`, as paths relative to it, in
/// name order (file work: runs on the event loop's side, never in `update`).
pub fn list_openable(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    walk(root, root, 0, &mut found);
    found
}

fn walk(root: &Path, dir: &Path, depth: usize, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if found.len() >= MAX_FILES {
            return;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        if name.starts_with('.') || name.ends_with(".recovery.json") {
            continue;
        }
        let shown = || {
            path.strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string()
        };
        // `symlink_metadata`: a link to a folder is not followed (no cycles).
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if is_model_folder(&path) {
                found.push(format!("{}/", shown()));
            }
            if depth < MAX_DEPTH && !SKIPPED.contains(&name.as_str()) {
                walk(root, &path, depth + 1, found);
            }
        } else if [".json", ".jinja", ".j2", ".gguf"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            found.push(shown());
        }
    }
}

fn is_model_folder(dir: &Path) -> bool {
    [
        "tokenizer_config.json",
        "chat_template.jinja",
        "chat_template.json",
    ]
    .iter()
    .any(|file| dir.join(file).is_file())
}

/// The candidates matching `query` with the shared matcher (see `tui::matcher`), best
/// first (all of them, in order, for no query).
pub fn matches<'a>(query: &str, candidates: &'a [String]) -> Vec<&'a str> {
    (matcher::rank(query, candidates).into_iter())
        .map(|r| candidates[r.index].as_str())
        .collect()
}

/// `Tab` on `text`: the longest common start of the candidates that start with it,
/// when longer than the text; else the `selected` match.
pub fn complete(text: &str, candidates: &[String], selected: Option<&str>) -> Option<String> {
    let starting: Vec<&String> = candidates.iter().filter(|c| c.starts_with(text)).collect();
    let common = starting.split_first().map(|(first, rest)| {
        (rest.iter()).fold(first.as_str(), |common, c| {
            &common[..common_start(common, c)]
        })
    });
    match common {
        Some(common) if common.len() > text.len() => Some(common.to_string()),
        _ => selected.filter(|s| *s != text).map(str::to_string),
    }
}

/// What Enter opens: the text as typed when it is exactly one of the matches (a path
/// typed in full is never swapped for a look-alike), else the selected match, else the
/// text (a model id to look up, a path not listed). An absolute path's matches are
/// its folder's entries only (see `dialogs::opener_paths`).
pub fn target(input: &InputDialog) -> &str {
    let typed = input.text.trim();
    let exact = input.choices.iter().any(|c| c == typed);
    match input.choices.get(input.origin) {
        Some(selected) if !exact => selected,
        _ => typed,
    }
}

/// The length in bytes of the start `a` and `b` share.
fn common_start(a: &str, b: &str) -> usize {
    (a.char_indices().zip(b.chars()))
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, x), _)| i + x.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_matches_as_a_subsequence_closest_first() {
        let all: Vec<String> = [
            "sessions/gemma.json",
            "templates/qwen.jinja",
            "sessions/qwen.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // No characters skipped in either: the shorter first.
        assert_eq!(
            matches("qwen", &all),
            ["sessions/qwen.json", "templates/qwen.jinja"]
        );
        assert_eq!(matches("gmjs", &all), ["sessions/gemma.json"]);
        assert!(matches("zz", &all).is_empty());
        assert_eq!(matches("", &all).len(), 3);
    }

    #[test]
    fn tab_completes_the_common_start_then_the_selection() {
        let all: Vec<String> = ["sessions/a.json", "sessions/b.json", "templates/t.jinja"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(complete("se", &all, None).as_deref(), Some("sessions/"));
        let picked = complete("sessions/", &all, Some("sessions/b.json"));
        assert_eq!(picked.as_deref(), Some("sessions/b.json"));
        assert_eq!(complete("x", &all, None), None);
    }

    #[test]
    fn the_listing_is_bounded_and_skips_build_output() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("target/debug")).unwrap();
        std::fs::write(dir.path().join("target/debug/x.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.path().join("m")).unwrap();
        std::fs::write(dir.path().join("m/tokenizer_config.json"), "{}").unwrap();
        std::fs::write(dir.path().join("a.jinja"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        let found = list_openable(dir.path());
        assert_eq!(found, ["a.jinja", "m/", "m/tokenizer_config.json"]);
    }
}
