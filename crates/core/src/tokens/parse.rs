//! Turning `tokenizer.json` bytes into a `Tokenizer` without letting a malformed file
//! panic. The `tokenizers` crate (0.23) panics instead of failing on some files: a syntax
//! error inside `decoder` (`expect("Helper")`), a `Precompiled` normalizer whose
//! charsmap does not load (`expect("Precompiled")`). Those parts are checked here first,
//! so the user gets an error with a position; any panic left is caught and becomes an
//! error too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value as Json;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::Tokenizer;

use super::TokenizerError;

/// The parts of a `tokenizer.json` the crate panics on; reading them also checks the
/// whole file's syntax (the other keys are skipped, not kept).
#[derive(Deserialize)]
struct RiskyParts {
    #[serde(default)]
    normalizer: Option<Json>,
    #[serde(default)]
    decoder: Option<Json>,
}

/// The tokenizer in `bytes` (the file `path`).
pub(super) fn tokenizer(bytes: &[u8], path: &Path) -> Result<Tokenizer, TokenizerError> {
    let invalid = |message: String| TokenizerError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let parts: RiskyParts = serde_json::from_slice(bytes).map_err(|err| {
        let message = err.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(&*message, |(m, _)| m);
        invalid(format!(
            "{}:{}: not a tokenizer.json: {message}",
            err.line(),
            err.column()
        ))
    })?;
    drop(parts.decoder);
    if let Some(normalizer) = &parts.normalizer {
        check_precompiled(normalizer).map_err(invalid)?;
    }
    match catch_unwind(AssertUnwindSafe(|| Tokenizer::from_bytes(bytes))) {
        Ok(Ok(tokenizer)) => Ok(tokenizer),
        Ok(Err(err)) => Err(invalid(format!("not a tokenizer.json: {err}"))),
        Err(panic) => Err(invalid(format!(
            "the tokenizers library cannot read this file ({})",
            panic_text(panic.as_ref())
        ))),
    }
}

/// Loads every `Precompiled` normalizer (also inside a `Sequence`) the way the crate
/// would, so that one that does not load is an error rather than its panic.
fn check_precompiled(normalizer: &Json) -> Result<(), String> {
    match normalizer.get("type").and_then(Json::as_str) {
        // Through text, as the crate does: its charsmap is read as a borrowed string.
        Some("Precompiled") => serde_json::from_str::<Precompiled>(&normalizer.to_string())
            .map(drop)
            .map_err(|err| format!("its Precompiled normalizer does not load: {err}")),
        Some("Sequence") => {
            let inner = normalizer.get("normalizers").and_then(Json::as_array);
            inner.into_iter().flatten().try_for_each(check_precompiled)
        }
        _ => Ok(()),
    }
}

/// A caught panic's message.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => (*text).to_string(),
        (_, Some(text)) => text.clone(),
        _ => "a panic".into(),
    }
}
