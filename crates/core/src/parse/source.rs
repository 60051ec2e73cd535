//! Where a session's `response_template` comes from: the session itself (the object, or
//! a path inside its tree), else the `response_template` of its model's
//! `tokenizer_config.json`, where transformers' tokenizer reads it; a bundled template
//! carries its own (`templates/NAME.response_template.json`, built into the binary).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::catalog::{NamedFile, OutsideError, TemplateAccess};
use crate::catalog::{Origin, TemplateSource};
use crate::files::{self, FileError};
use crate::session::Session;

/// Largest response_template file read (real ones are a few kilobytes).
const MAX_SCHEMA_BYTES: u64 = 1 << 20;

/// Why a session's `response_template` could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaSourceError {
    /// The session's path leads outside the folders it may read.
    #[error(transparent)]
    Outside(#[from] OutsideError),
    /// The file could not be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// The file is not JSON.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// serde_json's message, without its position.
        message: String,
    },
    /// `response_template` is neither an object nor a path.
    #[error(
        "\"response_template\" must be the template object or the path of a JSON file holding it"
    )]
    Shape,
}

/// A `response_template` and where it was found (for messages).
#[derive(Debug, Clone)]
pub struct SchemaFound {
    /// The template, not yet validated ([`super::ResponseTemplate::load`] does that).
    pub spec: Value,
    /// Where it came from: the session, a file, or the model's `tokenizer_config.json`.
    pub from: String,
}

/// The session's `response_template`, or its model's; `None` when neither has one.
/// `dir` is the session's folder; `access` is what the session may read.
pub fn session_schema(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: Option<&TemplateSource>,
) -> Result<Option<SchemaFound>, SchemaSourceError> {
    match &session.response_template {
        Some(Value::Object(_)) => Ok(Some(SchemaFound {
            spec: session.response_template.clone().unwrap_or_default(),
            from: "the session".into(),
        })),
        Some(Value::String(written)) => {
            let path = dir.join(written);
            access.check(NamedFile::ResponseTemplate, &path, written)?;
            Ok(Some(SchemaFound {
                spec: read_schema_file(&path)?,
                from: path.display().to_string(),
            }))
        }
        Some(_) => Err(SchemaSourceError::Shape),
        None => template.map_or(Ok(None), model_schema),
    }
}

/// The `response_template` of the model a template came from, or the one a bundled
/// template ships with, if it has one.
pub fn model_schema(template: &TemplateSource) -> Result<Option<SchemaFound>, SchemaSourceError> {
    if template.origin == Origin::Bundled {
        return bundled_schema(&template.name);
    }
    let Origin::Model(model) = &template.origin else {
        return Ok(None);
    };
    let config = model.place.dir().join("tokenizer_config.json");
    let Some(text) = files::read_optional_text(&config, 64 << 20)? else {
        return Ok(None);
    };
    let parsed = parse_json(&config, &text)?;
    Ok(parsed
        .get("response_template")
        .cloned()
        .map(|spec| SchemaFound {
            spec,
            from: config.display().to_string(),
        }))
}

/// The schema shipped with bundled template `name`.
fn bundled_schema(name: &str) -> Result<Option<SchemaFound>, SchemaSourceError> {
    let Some(text) = crate::catalog::bundled_schema(name) else {
        return Ok(None);
    };
    let path = PathBuf::from(format!("templates/{name}.response_template.json"));
    let spec = parse_json(&path, text)?;
    Ok(Some(SchemaFound {
        spec,
        from: format!("the bundled {}", path.display()),
    }))
}

/// A JSON file holding a `response_template` (for `chatplate parse --schema`).
pub fn read_schema_file(path: &Path) -> Result<Value, SchemaSourceError> {
    let text = files::read_text(path, MAX_SCHEMA_BYTES)?;
    parse_json(path, &text)
}

fn parse_json(path: &Path, text: &str) -> Result<Value, SchemaSourceError> {
    serde_json::from_str(text).map_err(|err| {
        let full = err.to_string();
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        SchemaSourceError::Json {
            path: path.to_path_buf(),
            line: err.line(),
            column: err.column(),
            message: message.to_string(),
        }
    })
}
