//! A fixture argument: a session file, or an OpenAI request body read as one.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use super::fetching::with_hub;
use crate::catalog;
use crate::request;
use crate::session::Session;
use crate::target::{self, Opened};

/// The session in `path`; a request body is imported (its notes on stderr).
pub(super) fn load_session(path: &Path) -> Result<Session> {
    if !is_request_body(path) {
        return Ok(Session::load(path)?);
    }
    let target = path.to_string_lossy();
    match with_hub(|fetch| target::open(&target, fetch))? {
        Opened::Request { imported, .. } => {
            for note in &imported.notes {
                eprintln!("chatplate: {}: {note}", path.display());
            }
            Ok(imported.session)
        }
        _ => Ok(Session::load(path)?),
    }
}

/// Whether `path` holds a request body rather than a session.
pub(super) fn is_request_body(path: &Path) -> bool {
    let Ok(text) = catalog::read_text(path) else {
        return false;
    };
    serde_json::from_str::<Json>(&text).is_ok_and(|json| request::looks_like_request(&json))
}

/// A JSON file, with the position of a syntax error.
pub(super) fn read_json(path: &Path) -> Result<Json> {
    let text = catalog::read_text(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).map_err(|err| {
        // serde_json's message ends in " at line L column C": the position goes first.
        let full = err.to_string();
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        anyhow::anyhow!(
            "{}:{}:{}: {message}",
            path.display(),
            err.line(),
            err.column()
        )
    })
}
