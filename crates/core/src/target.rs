//! What a user can open, resolved in one place for the app and the command line: a
//! session file, a request body (imported as a new session), or anything that offers
//! templates (a `.jinja`, a model folder or any file in one, a `.gguf`, a bundled name,
//! a model id from the cache or the Hub, each with an optional `#NAME`).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::catalog::{
    self, model, open_templates, CatalogError, Fetch, ModelId, NamedBy, TemplateSet,
};
use crate::request::{self, BodyError, ImportOptions, Imported, RequestError};

/// What a target turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    /// A session file (load it with [`crate::session::Session::load`]).
    Session(PathBuf),
    /// A request body, imported as a new, unsaved session.
    Request {
        /// The body's file.
        path: PathBuf,
        /// The session and the import's report.
        imported: Box<Imported>,
    },
    /// Templates to start a new session on (choose with [`TemplateSet::choose`]).
    Templates(TemplateSet),
}

/// Why a target could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Finding or reading the templates failed.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A request body refused before importing it (too large, a key written twice).
    #[error(transparent)]
    Body(#[from] BodyError),
    /// A request body that cannot be imported.
    #[error("{path}: {error}")]
    Request {
        /// The body's file.
        path: PathBuf,
        /// What is wrong.
        error: RequestError,
    },
}

/// Opens `target`; `fetch` gets model ids the local cache lacks.
pub fn open(target: &str, fetch: &mut dyn Fetch) -> Result<Opened, OpenError> {
    let path = Path::new(target);
    if path.is_file() && path.extension().is_some_and(|e| e == "json") {
        if let Some(opened) = open_json(path, fetch)? {
            return Ok(opened);
        }
    }
    Ok(Opened::Templates(open_templates(target, fetch)?))
}

/// A `.json` file: a model's own file (templates, `None`), a request body, or a session.
fn open_json(path: &Path, fetch: &mut dyn Fetch) -> Result<Option<Opened>, OpenError> {
    if model::folder_of(path).is_some() {
        return Ok(None);
    }
    let text = catalog::read_text(path)?;
    if request::may_be_request(&text) {
        match request::parse_body(&text, path) {
            Ok(body) if request::looks_like_request(&body) => {
                let imported = import_request(body, path, fetch)?;
                return Ok(Some(Opened::Request {
                    path: path.to_path_buf(),
                    imported: Box::new(imported),
                }));
            }
            // Not JSON at all: the session loader reports where.
            Ok(_) | Err(BodyError::Syntax { .. }) => {}
            Err(err) => return Err(err.into()),
        }
    }
    let Ok(json) = serde_json::from_str::<Json>(&text) else {
        return Ok(Some(Opened::Session(path.to_path_buf())));
    };
    if json.get("version").is_none() && json.get("chat_template").is_some() {
        return Ok(None);
    }
    Ok(Some(Opened::Session(path.to_path_buf())))
}

/// A request body (see [`request::looks_like_request`]) imported as a new session, its
/// `model` fetched first when the cache lacks it; errors name `path`.
pub fn import_request(
    body: Json,
    path: &Path,
    fetch: &mut dyn Fetch,
) -> Result<Imported, OpenError> {
    prefetch_model(&body, fetch);
    request::import(body, &ImportOptions::default()).map_err(|error| OpenError::Request {
        path: path.to_path_buf(),
        error,
    })
}

/// Gets a body's `model` into the cache when it is not there, so the import can use its
/// template; a failure only means the import falls back (and says so).
fn prefetch_model(body: &Json, fetch: &mut dyn Fetch) {
    if body.get("chat_template").is_some() {
        return;
    }
    let Some(id) = body
        .get("model")
        .and_then(Json::as_str)
        .and_then(ModelId::parse)
    else {
        return;
    };
    let cached = catalog::hf_cache::snapshot(&catalog::hf_cache::cache_root(), &id);
    if cached.is_err() {
        let _ = fetch.fetch(&id, NamedBy::File);
    }
}
