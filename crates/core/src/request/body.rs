//! A request body's text, checked before it is imported: its size (parsing takes
//! several times the text), its syntax with a position, and keys written twice (a
//! server keeps the last one without a word, so a second `messages` list would silently
//! replace the first).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::files::{FileError, MAX_REQUEST_BYTES};
use crate::session::{compact, scan};

/// Why a request body's text was refused before it was imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// Larger than [`MAX_REQUEST_BYTES`].
    #[error(transparent)]
    File(#[from] FileError),
    /// Not JSON; `line`/`column` are 1-based.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The body's file (`<stdin>` for standard input).
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A key written twice in one object: servers keep the last one without a word (a
    /// second `messages` list would silently replace the first).
    #[error("{}:{line}:{column}: {message}", path.display())]
    DuplicateKey {
        /// The body's file.
        path: PathBuf,
        /// 1-based line of the second key.
        line: usize,
        /// 1-based column of the second key.
        column: usize,
        /// What is wrong (names the key).
        message: String,
    },
}

/// Whether `json` is a request body rather than a session: an object with a `messages`
/// list and no session `version`.
pub fn looks_like_request(json: &Json) -> bool {
    json.get("messages").is_some_and(Json::is_array) && json.get("version").is_none()
}

/// Whether `text` may be a request body, decided without parsing it: a top-level
/// `messages` key and no `version` (a session). Only such text is worth
/// [`parse_body`]; anything else is read as a session.
pub fn may_be_request(text: &str) -> bool {
    scan::top_level_value(text, "messages").is_some()
        && scan::top_level_value(text, "version").is_none()
}

/// Parses a request body's text (the file `path`): at most [`MAX_REQUEST_BYTES`]
/// (checked before parsing, which takes several times the text's size), and each key
/// once per object, as sessions require.
pub fn parse_body(text: &str, path: &Path) -> Result<Json, BodyError> {
    if text.len() as u64 > MAX_REQUEST_BYTES {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: text.len() as u64,
            limit: MAX_REQUEST_BYTES,
        }
        .into());
    }
    let parsed = compact::bounded(text.len(), || compact::from_str(text));
    let body = parsed.map_err(|err| BodyError::Syntax {
        path: path.to_path_buf(),
        line: err.line(),
        column: err.column(),
        message: chatplate_render::visible::message(&scan::strip_position(&err.to_string())),
    })?;
    if let Some(duplicate) = scan::duplicate_key(text) {
        return Err(BodyError::DuplicateKey {
            path: path.to_path_buf(),
            line: duplicate.line,
            column: duplicate.column,
            message: duplicate.message(),
        });
    }
    Ok(body)
}
