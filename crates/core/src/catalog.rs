//! Where templates come from: the bundled set, `.jinja` files, folders of them, Hugging
//! Face model folders (as transformers reads them), the local Hugging Face cache, the Hub,
//! and GGUF files. Nothing here renders; it only finds and reads sources.
//!
//! Every file is read through [`read`] (text) or [`open_file`] (a GGUF header), so limits
//! on what may be read apply in one place.

mod access;
mod choice;
mod gguf_model;
pub mod hf_cache;
pub mod hub;
pub mod model;
mod open;
mod revision;
mod template;
pub(crate) mod tokens;

use std::fs;
use std::path::{Path, PathBuf};

use crate::files::{self, FileError, MAX_SESSION_BYTES, MAX_TEMPLATE_BYTES};
use crate::session::{Session, SessionError, TemplateRef};
use chatplate_render::Conversation;

pub use access::{folder_to_allow, NamedFile, OutsideError, TemplateAccess};
pub use choice::TemplateSet;
pub(crate) use gguf_model::read as read_gguf;
pub use hf_cache::{cached_models, ModelId};
pub use open::{
    open_model, open_templates, prefetch, split_entry, Fetch, NamedBy, NamedByFile, NoFetch,
};
pub use revision::CachedModel;
pub use template::{
    folder_name, short, ModelOrigin, ModelPlace, Origin, Snapshot, TemplateMetadata, TemplateSource,
};

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled_templates.rs"));
}

/// Why a template could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Reading failed.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (shown in the message, so not chained as a `source` too).
        cause: std::io::Error,
    },
    /// A config file without a usable template, or malformed.
    #[error("{path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No bundled template has this name.
    #[error("no bundled template named {} (see `chatplate templates`)", chatplate_render::visible::quoted(.0))]
    UnknownBundled(String),
    /// A name was asked for that the model does not have.
    #[error("{label} has no chat template named {name:?} (it has: {available})")]
    UnknownEntry {
        /// The model or file.
        label: String,
        /// The name asked for.
        name: String,
        /// The names it has.
        available: String,
    },
    /// Several templates, none called `default`, and none asked for.
    #[error("{label} has multiple chat templates with no default specified; name one (it has: {available})")]
    NoDefault {
        /// The model or file.
        label: String,
        /// The names it has.
        available: String,
    },
    /// A GGUF file that cannot be read.
    #[error("{path}: {error}")]
    Gguf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: crate::gguf::GgufError,
    },
    /// A model id that the local cache cannot resolve.
    #[error(transparent)]
    Cache(#[from] hf_cache::CacheError),
    /// Fetching from the Hub failed.
    #[error(transparent)]
    Hub(#[from] hub::HubError),
    /// Nothing of that name: no file, bundled template or model id.
    #[error("{0}: no such file, bundled template or model id")]
    NotFound(String),
    /// The file is not one chatplate will read (a FIFO, too large, not UTF-8, ...).
    #[error(transparent)]
    File(#[from] FileError),
    /// A session names a template file outside the folders it may read from (see
    /// [`TemplateAccess`]).
    #[error(transparent)]
    Outside(#[from] OutsideError),
}

/// Every bundled template, sorted by name.
pub fn bundled() -> Vec<TemplateSource> {
    bundled::BUNDLED
        .iter()
        .map(|(name, source)| TemplateSource::new(*name, *source, Origin::Bundled))
        .collect()
}

/// The `response_template` shipped with bundled template `name` (its
/// `templates/NAME.response_template.json`), as JSON text; `None` when it has none.
pub fn bundled_schema(name: &str) -> Option<&'static str> {
    bundled::BUNDLED_SCHEMAS
        .iter()
        .find(|(stem, _)| *stem == name)
        .map(|(_, text)| *text)
}

/// The bundled template the app opens by default.
pub fn default_template() -> TemplateSource {
    let all = bundled();
    all.iter()
        .find(|t| t.name == DEFAULT_TEMPLATE)
        .or(all.first())
        .cloned()
        .unwrap_or_else(|| TemplateSource::new("minimal", MINIMAL_TEMPLATE, Origin::Inline))
}

/// The template shown when nothing else is chosen.
pub const DEFAULT_TEMPLATE: &str = "qwen2.5-reasoning-tools";

/// Used only if the binary was built without any bundled template.
const MINIMAL_TEMPLATE: &str = "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

/// A bundled template by name.
pub(crate) fn find_bundled(name: &str) -> Result<TemplateSource, CatalogError> {
    bundled()
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(|| CatalogError::UnknownBundled(name.to_string()))
}

/// Loads every template a path offers: a `.jinja` file gives one, a model folder (or any
/// file of one) each of the model's templates, a `.gguf` file each of its templates, a
/// folder everything inside it (recursively, a model folder counting as one model). A
/// folder with some unusable files still gives the good ones; it fails only when it
/// offers none and something was wrong (see [`load_all`] for the problems).
pub fn load_path(path: &Path) -> Result<Vec<TemplateSource>, CatalogError> {
    Ok(load_set(path)?.entries)
}

/// Templates found under a path, and the files that could not be used.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every usable template, in path order.
    pub templates: Vec<TemplateSource>,
    /// Files that were skipped, with why (worth a warning, not a failure).
    pub problems: Vec<CatalogError>,
}

/// Like [`load_path`], but a folder keeps its good templates and lists the problems.
pub fn load_all(path: &Path) -> Loaded {
    if path.is_dir() && !model::is_model_folder(path) {
        return load_dir(path);
    }
    match load_set(path) {
        Ok(set) => Loaded {
            templates: set.entries,
            problems: Vec::new(),
        },
        Err(err) => Loaded {
            templates: Vec::new(),
            problems: vec![err],
        },
    }
}

/// The templates a path offers, as a set to choose from (see [`TemplateSet::choose`]).
/// Opening `chat_template.jinja` or `additional_chat_templates/NAME.jinja` pins that
/// entry: the file's own template, with the model's special tokens.
pub fn load_set(path: &Path) -> Result<TemplateSet, CatalogError> {
    if path.is_dir() {
        if model::is_model_folder(path) {
            return model::load(ModelPlace::Folder(path.to_path_buf()));
        }
        let mut loaded = load_dir(path);
        if loaded.templates.is_empty() && !loaded.problems.is_empty() {
            return Err(loaded.problems.remove(0));
        }
        return Ok(TemplateSet {
            label: path.display().to_string(),
            entries: loaded.templates,
            pinned: None,
        });
    }
    if path.extension().is_some_and(|e| e == "gguf") {
        return gguf_model::load(path);
    }
    if let Some((folder, entry)) = model::folder_of(path) {
        let set = model::load(ModelPlace::Folder(folder))?;
        // A lone chat_template.jinja is the model's single template, not an entry.
        let named = entry.filter(|e| set.names().contains(e));
        return Ok(set.pin(named.as_deref()));
    }
    if path.extension().is_some_and(|e| e == "json") {
        return model::load_config_file(path);
    }
    let source = read(path, MAX_TEMPLATE_BYTES)?;
    let template = TemplateSource::new(file_label(path), source, Origin::File(path.to_path_buf()));
    Ok(TemplateSet::single(template))
}

/// Everything under a folder that is not a model folder itself: loose templates, GGUFs,
/// tokenizer configs and model folders (one model each, however deep). Link cycles and
/// links out of the folder are skipped (see [`files::walk`]).
fn load_dir(dir: &Path) -> Loaded {
    let is_template = |path: &Path| {
        path.extension()
            .is_some_and(|e| e == "jinja" || e == "gguf")
            || path
                .file_name()
                .is_some_and(|n| n == model::TOKENIZER_CONFIG)
    };
    let walked = files::walk(dir, |_| true, is_template);
    let mut loaded = Loaded::default();
    let mut models = std::collections::HashSet::new();
    for file in walked.files {
        // A model folder's files all open the same model: load it once.
        let key = model::folder_of(&file).map_or_else(|| file.clone(), |(folder, _)| folder);
        if !models.insert(key.clone()) {
            continue;
        }
        let found = match model::folder_of(&file) {
            Some(_) => model::load(ModelPlace::Folder(key)).map(|set| set.entries),
            None => load_set(&file).map(|set| set.entries),
        };
        match found {
            Ok(found) => loaded.templates.extend(found),
            Err(err) => loaded.problems.push(err),
        }
    }
    for (skipped, why) in walked.skipped {
        loaded.problems.push(CatalogError::Config {
            path: skipped,
            message: why,
        });
    }
    loaded
}

/// Resolves a session's template reference to the template a conversation without tools
/// renders with; relative paths start at `session_dir`. Prefer [`resolve_for`] when there
/// is a session: with tools, a model's `tool_use` template is the one transformers uses.
pub fn resolve(
    reference: &TemplateRef,
    session_dir: &Path,
    access: &TemplateAccess,
) -> Result<TemplateSource, CatalogError> {
    resolve_set(reference, session_dir, access)?.choose(false)
}

/// The template `session` renders with: its reference resolved, and among a model's
/// named templates the one transformers would choose for its tools.
pub fn resolve_for(
    session: &Session,
    session_dir: &Path,
    access: &TemplateAccess,
) -> Result<TemplateSource, CatalogError> {
    resolve_set(&session.template, session_dir, access)?.choose(session.tools.is_some())
}

/// Every template a session's reference offers, with the pinned name, if any. Relative
/// paths start at `session_dir` and must stay where `access` allows (fixtures arrive in
/// pull requests; see [`TemplateAccess`]).
pub fn resolve_set(
    reference: &TemplateRef,
    session_dir: &Path,
    access: &TemplateAccess,
) -> Result<TemplateSet, CatalogError> {
    match reference {
        TemplateRef::Bundled(name) => find_bundled(name).map(TemplateSet::single),
        TemplateRef::Source(source) => Ok(TemplateSet::single(TemplateSource::new(
            "inline",
            source.clone(),
            Origin::Inline,
        ))),
        TemplateRef::Path(relative) => {
            let path = session_dir.join(relative);
            access.check(NamedFile::Template, &path, relative)?;
            let set = load_set(&path)?;
            match set.entries.len() {
                0 => Err(CatalogError::Config {
                    path,
                    message: "no template found here".into(),
                }),
                1 => Ok(set),
                _ if set.names().is_empty() => Err(CatalogError::Config {
                    path,
                    message:
                        "several templates here; name one with {\"named\": {\"path\", \"name\"}}"
                            .into(),
                }),
                _ => Ok(set),
            }
        }
        TemplateRef::Named {
            path: written,
            name,
        } => {
            let path = session_dir.join(written);
            access.check(NamedFile::Template, &path, written)?;
            Ok(load_set(&path)?.pin(Some(name)))
        }
        TemplateRef::Model {
            id, revision, name, ..
        } => {
            let id = ModelId::new(id, revision.as_deref());
            let snapshot = hf_cache::snapshot(&hf_cache::cache_root(), &id)?;
            Ok(model::load(ModelPlace::Cache(snapshot))?.pin(name.as_deref()))
        }
    }
}

/// The render input for `session` on `template`: the template's special tokens (bos, eos,
/// unk, pad, `image_token`, ...) as transformers passes them, under the session's own
/// bos/eos and variables, which win.
pub fn conversation_for(
    session: &Session,
    template: &TemplateSource,
) -> Result<Conversation, SessionError> {
    let mut conversation = session.conversation()?;
    add_token_variables(&mut conversation, template);
    Ok(conversation)
}

/// [`conversation_for`], taking the session's messages instead of copying them (for a
/// caller that needs the session no longer: a large conversation is then held once).
pub fn into_conversation_for(
    session: Session,
    template: &TemplateSource,
) -> Result<Conversation, SessionError> {
    let mut conversation = session.into_conversation()?;
    add_token_variables(&mut conversation, template);
    Ok(conversation)
}

/// The template's special tokens, under the conversation's own variables.
pub(crate) fn add_token_variables(conversation: &mut Conversation, template: &TemplateSource) {
    for (key, value) in template.token_variables() {
        conversation.variables.entry(key).or_insert(value);
    }
}

/// Reads a text file of at most `limit` bytes: regular files only, never blocking on a
/// FIFO. Every template, config and request body goes through here.
pub(crate) fn read(path: &Path, limit: u64) -> Result<String, CatalogError> {
    Ok(files::read_text(path, limit)?)
}

/// Reads a text file (a request body, a JSON input) the way templates are read, for the
/// command line and the app.
pub fn read_text(path: &Path) -> Result<String, CatalogError> {
    read(path, MAX_SESSION_BYTES)
}

/// Opens a file to read part of it (a GGUF header), for files too large to [`read`].
pub(crate) fn open_file(path: &Path) -> Result<fs::File, CatalogError> {
    Ok(files::open_regular(path)?.0)
}

/// Loose templates are named after their file; a `chat_template.jinja` outside a model
/// folder after its folder.
fn file_label(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let generic = matches!(stem.as_str(), "chat_template" | "tokenizer_config");
    match path.parent().and_then(Path::file_name) {
        Some(folder) if generic => format!("{}/{stem}", folder.to_string_lossy()),
        _ => stem,
    }
}

/// `path` relative to `base` when both are under a common folder; absolute when they share
/// only the file-system root (`/tmp/s.json` naming `/work/t.jinja` as `../../work/t.jinja`
/// would break as soon as the session moved).
pub(crate) fn relative_to(path: &Path, base: &Path) -> String {
    let absolute = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (path_abs, base_abs) = (absolute(path), absolute(base));
    let path_parts: Vec<_> = path_abs.components().collect();
    let base_parts: Vec<_> = base_abs.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let shared_folder = path_parts[..common]
        .iter()
        .any(|part| matches!(part, std::path::Component::Normal(_)));
    if !shared_folder {
        return path_abs.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in common..base_parts.len() {
        relative.push("..");
    }
    for part in &path_parts[common..] {
        relative.push(part);
    }
    if relative.as_os_str().is_empty() {
        return ".".into();
    }
    relative.display().to_string()
}

#[cfg(test)]
mod relative_tests {
    use super::relative_to;
    use std::path::Path;

    #[test]
    fn paths_sharing_a_folder_are_relative_and_others_stay_absolute() {
        let (template, session) = (Path::new("/nowhere/a/t.jinja"), Path::new("/nowhere/b"));
        assert_eq!(relative_to(template, session), "../a/t.jinja");
        let elsewhere = Path::new("/elsewhere/t.jinja");
        assert_eq!(relative_to(elsewhere, session), "/elsewhere/t.jinja");
    }
}
