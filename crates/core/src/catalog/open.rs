//! One resolution for everything a user can name as a template: a path (a `.jinja`, a
//! model folder or any file in one, a `.gguf`, a folder of templates), a bundled
//! template's name, or a Hugging Face model id (`ORG/NAME[@REVISION]`) from the local
//! cache, else from the Hub. `#NAME` at the end picks a named template.

use std::path::Path;

use crate::session::TemplateRef;

use super::hf_cache;
use super::{
    find_bundled, load_set, model, CatalogError, ModelId, ModelPlace, Snapshot, TemplateSet,
};

/// Who named a model that is fetched: what the user typed (a command-line argument, the
/// app's opener) or a file (a session, a fixture, a request body), which may be a
/// stranger's. The Hub's token goes only with what the user named, unless they allow
/// more (see [`super::hub::HubSettings::token_for_files`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamedBy {
    /// The user named the model.
    User,
    /// A file named it.
    File,
}

/// How a model that is not in the local cache is obtained.
pub trait Fetch {
    /// Fetches `id`'s template files into the cache and returns their snapshot; `None`
    /// when this fetcher does not fetch (offline). `named_by` says who named the model.
    fn fetch(&mut self, id: &ModelId, named_by: NamedBy) -> Option<Result<Snapshot, CatalogError>>;
}

/// Never fetches: the local cache only.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFetch;

impl Fetch for NoFetch {
    fn fetch(&mut self, _id: &ModelId, _: NamedBy) -> Option<Result<Snapshot, CatalogError>> {
        None
    }
}

/// Another fetcher, for models a file named even where the call says the user did: a
/// revision of a session's model (`compare --revision`) is the session's model.
pub struct NamedByFile<'a>(pub &'a mut dyn Fetch);

impl Fetch for NamedByFile<'_> {
    fn fetch(&mut self, id: &ModelId, _: NamedBy) -> Option<Result<Snapshot, CatalogError>> {
        self.0.fetch(id, NamedBy::File)
    }
}

/// `TARGET#NAME` split into the target and the entry name.
pub fn split_entry(target: &str) -> (&str, Option<&str>) {
    match target.rsplit_once('#') {
        Some((base, name)) if !base.is_empty() && !name.is_empty() => (base, Some(name)),
        _ => (target, None),
    }
}

/// The templates `target` names: an existing path first (as transformers prefers a local
/// folder over a model id), then a bundled template (a name without `/`), then a model id
/// `ORG/NAME` (one ending in `.jinja`, `.json` or `.gguf` is taken for a missing file).
pub fn open_templates(target: &str, fetch: &mut dyn Fetch) -> Result<TemplateSet, CatalogError> {
    let path = Path::new(target);
    if path.exists() {
        return load_set(path);
    }
    let (base, entry) = split_entry(target);
    if Path::new(base).exists() {
        return Ok(load_set(Path::new(base))?.pin(entry));
    }
    let looks_like_file = [".jinja", ".json", ".gguf"]
        .iter()
        .any(|e| base.ends_with(e));
    if looks_like_file {
        return Err(CatalogError::NotFound(target.to_string()));
    }
    if !base.contains('/') {
        return Ok(TemplateSet::single(find_bundled(base)?).pin(entry));
    }
    match ModelId::parse(base) {
        Some(id) => Ok(open_model(&id, fetch)?.pin(entry)),
        None => Err(CatalogError::NotFound(target.to_string())),
    }
}

/// A model id the user named, from the cache; when it is not there (or its snapshot has
/// no template files yet), from `fetch`.
pub fn open_model(id: &ModelId, fetch: &mut dyn Fetch) -> Result<TemplateSet, CatalogError> {
    let root = hf_cache::cache_root();
    let cached = hf_cache::snapshot(&root, id);
    if let Ok(snapshot) = &cached {
        if model::is_model_folder(&snapshot.dir) {
            return model::load(ModelPlace::Cache(snapshot.clone()));
        }
    }
    match (fetch.fetch(id, NamedBy::User), cached) {
        (Some(fetched), _) => model::load(ModelPlace::Hub(fetched?)),
        (None, Ok(snapshot)) => model::load(ModelPlace::Cache(snapshot)),
        (None, Err(err)) => Err(err.into()),
    }
}

/// Makes sure a session's model reference is in the cache, fetching it when it is not
/// (and `fetch` fetches), so resolving it offline afterwards works. The session named
/// the model ([`NamedBy::File`]).
pub fn prefetch(reference: &TemplateRef, fetch: &mut dyn Fetch) -> Result<(), CatalogError> {
    let TemplateRef::Model { id, revision, .. } = reference else {
        return Ok(());
    };
    let id = ModelId::new(id, revision.as_deref());
    let cached = hf_cache::snapshot(&hf_cache::cache_root(), &id);
    if cached.is_ok_and(|s| model::is_model_folder(&s.dir)) {
        return Ok(());
    }
    match fetch.fetch(&id, NamedBy::File) {
        Some(Err(err)) => Err(err),
        _ => Ok(()),
    }
}
