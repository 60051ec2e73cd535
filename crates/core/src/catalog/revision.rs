//! Another revision of the model a template came from (`compare --revision`, the app's
//! revision side). The model is known from its origin: a model id opened from the
//! Hugging Face cache or the Hub, or a path into a cached snapshot
//! (`.../models--ORG--NAME/snapshots/SHA/...`), as a session may name one directly.

use std::path::{Component, Path, PathBuf};

use super::hf_cache;
use super::{model, open_model, CatalogError, Fetch, ModelId, ModelPlace, Origin};
use super::{TemplateSet, TemplateSource};

/// A model of the Hugging Face cache, with the template entry a session uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedModel {
    /// `ORG/NAME`.
    pub repo: String,
    /// The cache the path pointed into (`None`: the configured cache, or the Hub).
    pub root: Option<PathBuf>,
    /// The named template, when it is not the default one.
    pub entry: Option<String>,
}

impl CachedModel {
    /// The cached model `template` comes from, when it comes from one.
    pub fn of(template: &TemplateSource) -> Option<CachedModel> {
        let entry = (template.entry())
            .filter(|entry| *entry != "default")
            .map(String::from);
        let (repo, root) = match &template.origin {
            Origin::Model(model) => match &model.place {
                ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => {
                    (snapshot.id.clone(), None)
                }
                ModelPlace::Folder(dir) => in_cache(dir)?,
            },
            Origin::File(path) => in_cache(path)?,
            _ => return None,
        };
        Some(CachedModel { repo, root, entry })
    }

    /// `ORG/NAME@REV` with `#ENTRY` when the entry is a named one.
    pub fn target(&self, revision: &str) -> String {
        let entry = (self.entry.as_ref()).map_or(String::new(), |entry| format!("#{entry}"));
        format!("{}@{revision}{entry}", self.repo)
    }

    /// The model's templates at `revision`, the same entry pinned: from the cache the
    /// path pointed into, else the configured cache, else `fetch` (the Hub).
    pub fn at(&self, revision: &str, fetch: &mut dyn Fetch) -> Result<TemplateSet, CatalogError> {
        let id = ModelId::new(&self.repo, Some(revision));
        let local = (self.root.as_deref()).and_then(|root| hf_cache::snapshot(root, &id).ok());
        let set = match local {
            Some(snapshot) => model::load(ModelPlace::Cache(snapshot))?,
            None => open_model(&id, fetch)?,
        };
        Ok(set.pin(self.entry.as_deref()))
    }
}

/// `(ORG/NAME, cache root)` for a path inside `<root>/models--ORG--NAME/snapshots/SHA`.
fn in_cache(path: &Path) -> Option<(String, Option<PathBuf>)> {
    let parts: Vec<Component> = path.components().collect();
    let at = parts.windows(2).position(|pair| {
        let repo = pair[0].as_os_str().to_string_lossy();
        repo.starts_with("models--") && pair[1].as_os_str() == "snapshots"
    })?;
    let folder = parts[at].as_os_str().to_string_lossy();
    // huggingface_hub names the folder `models--` + the id with `/` as `--`; the Hub
    // allows no `--` inside an org or a name, so the first one is the separator.
    let (org, name) = folder.strip_prefix("models--")?.split_once("--")?;
    let repo = format!("{org}/{name}");
    ModelId::parse(&repo)?;
    let root: PathBuf = parts[..at].iter().collect();
    Some((repo, Some(root)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_into_a_snapshot_names_its_model_and_cache() {
        let path = Path::new("/c/hub/models--acme--chat/snapshots/1111111/chat_template.jinja");
        let (repo, root) = in_cache(path).unwrap();
        assert_eq!(repo, "acme/chat");
        assert_eq!(root.unwrap(), Path::new("/c/hub"));
        assert_eq!(in_cache(Path::new("/c/models--acme/snapshots/1")), None);
        assert_eq!(in_cache(Path::new("/c/acme/chat/snapshots/1")), None);
    }

    #[test]
    fn the_target_keeps_a_named_entry() {
        let mut model = CachedModel {
            repo: "acme/chat".into(),
            root: None,
            entry: None,
        };
        assert_eq!(model.target("v1"), "acme/chat@v1");
        model.entry = Some("tool_use".into());
        assert_eq!(model.target("v1"), "acme/chat@v1#tool_use");
    }
}
