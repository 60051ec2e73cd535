//! The template roots the user allowed: folders, besides the one a session was read
//! from, where its template path may lead (see [`TemplateAccess`]). They come from
//! `--template-root DIR` and from `"template_roots"` in the user's config file, which the
//! app adds a folder to when the user allows it while saving. The config file lives
//! outside every project, so no fixture in a pull request can allow itself more.
//!
//! The app, `check`, `render` and every other command build their rule here, so they
//! accept the same sessions with the same message.

use std::path::{Path, PathBuf};

use crate::config_file;
use chatplate_core::catalog::TemplateAccess;
use chatplate_core::files;
use serde_json::{Map, Value};

/// Points at another config file (tests, or several setups).
pub const CONFIG_ENV: &str = "CHATPLATE_CONFIG";

/// The config file's key that lists the allowed template roots.
pub const KEY: &str = "template_roots";

/// The config file: `$CHATPLATE_CONFIG`, else `config.json` in the platform's config
/// directory (`~/.config/chatplate` on Linux, `~/Library/Application Support/chatplate`
/// on macOS, `%APPDATA%\chatplate\config` on Windows).
pub fn config_path() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_ENV) {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => directories::ProjectDirs::from("", "", "chatplate")
            .map(|dirs| dirs.config_dir().join("config.json")),
    }
}

/// The user's allowed roots: `flags` (`--template-root`) and the config file's, and
/// what was wrong with the config file, if anything (its roots are then left out).
pub fn allowed(flags: &[PathBuf]) -> (Vec<PathBuf>, Option<String>) {
    let mut roots = flags.to_vec();
    match config_path().map(|path| configured(&path)) {
        Some(Ok(found)) => roots.extend(found),
        Some(Err(problem)) => return (roots, Some(problem)),
        None => {}
    }
    (roots, None)
}

/// The rule for a session read from `tree`, with the user's roots `roots`.
pub fn access(tree: &Path, roots: &[PathBuf]) -> TemplateAccess {
    TemplateAccess::for_tree(tree, roots)
}

/// The roots listed in the config file at `path` (none when there is no file). A
/// relative root is relative to the config file's folder. A problem is
/// `FILE:LINE:COL: message` (see [`crate::config_file`]).
pub fn configured(path: &Path) -> Result<Vec<PathBuf>, String> {
    let Some(config) = read(path)? else {
        return Ok(Vec::new());
    };
    roots_in(&config.text, &config.entries, path)
}

/// The roots the config file's `text` (already read as `config`) lists.
fn roots_in(text: &str, config: &Map<String, Value>, path: &Path) -> Result<Vec<PathBuf>, String> {
    let Some(listed) = config.get(KEY) else {
        return Ok(Vec::new());
    };
    let folder = path.parent().unwrap_or(Path::new(""));
    if !is_list(listed) {
        let message = format!("\"{KEY}\" must be a list of folders");
        return Err(config_file::problem(path, text, &[KEY], &message));
    }
    let listed = listed.as_array().into_iter().flatten();
    Ok(listed
        .filter_map(Value::as_str)
        .map(|root| folder.join(root))
        .collect())
}

/// Whether `value` is what `"template_roots"` must be: a list of folder names.
pub fn is_list(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|roots| roots.iter().all(Value::is_string))
}

/// Adds `folder` to the config file's roots (creating the file when there is none) and
/// returns the file. Everything else in the file is kept.
pub fn remember(folder: &Path) -> Result<PathBuf, String> {
    let path = config_path().ok_or("no config folder on this system")?;
    add_root(&path, folder)?;
    Ok(path)
}

/// Adds `folder` to the roots of the config file at `path`.
fn add_root(path: &Path, folder: &Path) -> Result<(), String> {
    let Config { text, mut entries } = read(path)?.unwrap_or_default();
    let listed = entries
        .entry(KEY)
        .or_insert_with(|| Value::Array(Vec::new()));
    let bad = || config_file::problem(path, &text, &[KEY], &format!("\"{KEY}\" is not a list"));
    let listed = listed.as_array_mut().ok_or_else(bad)?;
    let root = folder.to_string_lossy().into_owned();
    if !listed.iter().any(|listed| listed.as_str() == Some(&root)) {
        listed.push(Value::String(root));
    }
    let mut json =
        chatplate_core::machine_output::to_json_pretty(&entries).map_err(|err| err.to_string())?;
    json.push('\n');
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    }
    chatplate_core::session::write_atomically(path, json.as_bytes())
        .map_err(|err| format!("{}: {err}", path.display()))
}

/// The config file as a JSON object; `None` when there is no file.
pub fn read_config(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    Ok(read(path)?.map(|config| config.entries))
}

/// The config file as read.
#[derive(Default)]
struct Config {
    /// Its text, where problems are placed.
    text: String,
    /// Its JSON object.
    entries: Map<String, Value>,
}

/// The config file; `None` when there is no file.
fn read(path: &Path) -> Result<Option<Config>, String> {
    let text = match files::read_optional_text(path, files::MAX_APP_CONFIG_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(err) => return Err(err.to_string()),
    };
    let entries = config_file::parse(&text, path)?;
    Ok(Some(Config { text, entries }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_read_relative_to_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        assert_eq!(configured(&path), Ok(Vec::new()), "no file");
        std::fs::write(&path, r#"{"keys": {}, "template_roots": ["/t", "rel"]}"#).unwrap();
        let roots = configured(&path).unwrap();
        assert_eq!(roots, [PathBuf::from("/t"), dir.path().join("rel")]);
        std::fs::write(&path, r#"{"template_roots": "/t"}"#).unwrap();
        let err = configured(&path).unwrap_err();
        assert!(
            err.ends_with("config.json:1:20: \"template_roots\" must be a list of folders"),
            "{err}"
        );
        std::fs::write(&path, "{\n  \"template_roots\": [\"/t\",]\n}").unwrap();
        let err = configured(&path).unwrap_err();
        assert!(err.ends_with("config.json:2:27: trailing comma"), "{err}");
    }

    #[test]
    fn a_root_is_added_once_and_the_rest_of_the_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/config.json");
        add_root(&path, Path::new("/a")).unwrap();
        assert_eq!(configured(&path), Ok(vec![PathBuf::from("/a")]));
        std::fs::write(
            &path,
            r#"{"colors": {"user": "red"}, "template_roots": ["/a"]}"#,
        )
        .unwrap();
        add_root(&path, Path::new("/b")).unwrap();
        add_root(&path, Path::new("/b")).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let want = serde_json::json!({"colors": {"user": "red"}, "template_roots": ["/a", "/b"]});
        assert_eq!(written, want);
        std::fs::write(&path, "{oops").unwrap();
        assert!(
            add_root(&path, Path::new("/c")).is_err(),
            "a broken file is left alone"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{oops");
    }
}
