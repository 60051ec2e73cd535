//! Plug-in engines named in the user's config file: `"engines": {"dsv4": "cmd:python3
//! encode.py"}`, so `--engine dsv4` runs that command. Only the user's config file (which
//! lives outside every project) names programs; a fixture never does.

use std::path::PathBuf;

use serde_json::Value;

use crate::template_roots;

/// The config file's key.
pub const KEY: &str = "engines";

/// A plug-in the config file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Its command, `cmd:PROGRAM [ARGS]`.
    pub command: String,
    /// The config file's folder, where its relative paths start.
    pub base: PathBuf,
}

/// The command the config file's `"engines"` gives `name`, if any.
///
/// # Errors
/// When the config file cannot be read or its `"engines"` is not an object of strings.
pub fn named(name: &str) -> Result<Option<Named>, String> {
    let Some(path) = template_roots::config_path() else {
        return Ok(None);
    };
    let Some(config) = template_roots::read_config(&path)? else {
        return Ok(None);
    };
    let Some(engines) = config.get(KEY) else {
        return Ok(None);
    };
    if !is_table(engines) {
        return Err(format!(
            "{}: \"{KEY}\" must be an object of names and `cmd:` commands",
            path.display()
        ));
    }
    let Some(command) = engines.get(name).and_then(Value::as_str) else {
        return Ok(None);
    };
    let base = path
        .parent()
        .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
    Ok(Some(Named {
        command: command.to_string(),
        base,
    }))
}

/// Whether `value` is what `"engines"` must be: an object whose values are strings.
pub fn is_table(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|engines| engines.values().all(Value::is_string))
}
