//! The local Hugging Face cache, read offline exactly where `huggingface_hub` keeps it.
//!
//! The root is `$HF_HUB_CACHE` (or its older name `$HUGGINGFACE_HUB_CACHE`), else
//! `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
//! `~/.cache/huggingface/hub`. A model `ORG/NAME` lives in `models--ORG--NAME/`;
//! `refs/<revision>` holds the commit a branch or tag points at, and
//! `snapshots/<commit>/` the files (symlinks into `blobs/`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::access::is_inside;
use super::template::Snapshot;
use super::{model, read, ModelPlace, TemplateSet};
use crate::files::MAX_TEMPLATE_BYTES;

/// The revision used when none is given.
pub(crate) const DEFAULT_REVISION: &str = "main";

/// A model id with an optional revision: `ORG/NAME` or `ORG/NAME@REVISION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelId {
    /// `ORG/NAME` (bare `NAME`s, which the Hub still redirects, are not accepted: they
    /// would be taken for bundled template names).
    pub repo: String,
    /// Branch, tag or commit; `None` means `main`.
    pub revision: Option<String>,
}

impl ModelId {
    /// A model id from its parts.
    pub fn new(repo: &str, revision: Option<&str>) -> Self {
        ModelId {
            repo: repo.to_string(),
            revision: revision.map(String::from),
        }
    }

    /// Parses `ORG/NAME[@REVISION]`; `None` when the text cannot be a Hub repository id
    /// (the rules of `huggingface_hub.validate_repo_id`, with the organisation required).
    pub fn parse(text: &str) -> Option<ModelId> {
        let (repo, revision) = match text.split_once('@') {
            Some((repo, revision)) => (repo, Some(revision)),
            None => (text, None),
        };
        if revision.is_some_and(|r| !safe_revision(r)) {
            return None;
        }
        valid_repo_id(repo).then(|| ModelId::new(repo, revision))
    }

    /// Whether the id and revision are safe to use as cache paths (what [`ModelId::parse`]
    /// checks; ids built with [`ModelId::new`] from a fixture are checked here).
    pub(crate) fn is_valid(&self) -> bool {
        valid_repo_id(&self.repo) && safe_revision(self.revision())
    }

    /// The revision to resolve (`main` when none was given).
    pub(crate) fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or(DEFAULT_REVISION)
    }
}

impl std::fmt::Display for ModelId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.repo, self.revision())
    }
}

/// A revision usable as a path under `refs/`: no whitespace, no `..`, not absolute.
fn safe_revision(revision: &str) -> bool {
    !revision.is_empty()
        && !revision.contains(char::is_whitespace)
        && !revision.starts_with('/')
        && !revision.contains('\\')
        && revision
            .split('/')
            .all(|part| !part.is_empty() && part != "..")
}

fn valid_repo_id(repo: &str) -> bool {
    let parts: Vec<&str> = repo.split('/').collect();
    let part_ok = |part: &&str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !part.starts_with(['-', '.'])
            && !part.ends_with(['-', '.'])
    };
    parts.len() == 2
        && parts.iter().all(part_ok)
        && repo.len() <= 96
        && !repo.contains("--")
        && !repo.contains("..")
        && !repo.ends_with(".git")
}

/// Why a model id could not be resolved from the cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Neither the revision nor the model is cached.
    #[error("{id} is not in the local Hugging Face cache ({root})")]
    NotCached {
        /// The model asked for.
        id: ModelId,
        /// The cache searched.
        root: PathBuf,
    },
    /// A file of the cache is a link to somewhere outside it (its files link into its own
    /// `blobs/`).
    #[error("{}: a link that leads outside the Hugging Face cache {} (not followed)", path.display(), root.display())]
    Outside {
        /// The link.
        path: PathBuf,
        /// The cache.
        root: PathBuf,
    },
    /// The revision resolves to a commit whose snapshot is missing.
    #[error("{id} points at commit {commit}, which has no snapshot in {root}")]
    NoSnapshot {
        /// The model asked for.
        id: ModelId,
        /// The commit `refs/` names.
        commit: String,
        /// The cache searched.
        root: PathBuf,
    },
}

/// The cache root from the process environment.
pub fn cache_root() -> PathBuf {
    cache_root_from(|key| std::env::var_os(key))
}

/// The cache root from an environment lookup (`HF_HUB_CACHE`, `HF_HOME`, ...).
pub(crate) fn cache_root_from(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |key: &str| env(key).filter(|v| !v.is_empty());
    if let Some(dir) = set("HF_HUB_CACHE").or_else(|| set("HUGGINGFACE_HUB_CACHE")) {
        return expand_home(PathBuf::from(dir), &env);
    }
    hf_home_from(&env).join("hub")
}

/// `$HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
pub(crate) fn hf_home_from(env: &impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |key: &str| env(key).filter(|v| !v.is_empty());
    if let Some(home) = set("HF_HOME") {
        return expand_home(PathBuf::from(home), env);
    }
    let cache = set("XDG_CACHE_HOME").map_or_else(|| PathBuf::from("~/.cache"), PathBuf::from);
    expand_home(cache.join("huggingface"), env)
}

/// `~` at the start of a path is the home folder, as Python's `expanduser` has it.
fn expand_home(path: PathBuf, env: &impl Fn(&str) -> Option<OsString>) -> PathBuf {
    match (path.strip_prefix("~"), env("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path,
    }
}

/// `<root>/models--ORG--NAME`.
pub(crate) fn repo_dir(root: &Path, repo: &str) -> PathBuf {
    root.join(format!("models--{}", repo.replace('/', "--")))
}

/// The snapshot `id` resolves to in the cache at `root`: `refs/<revision>` names the
/// commit; a revision that is itself a cached commit is taken as is.
pub fn snapshot(root: &Path, id: &ModelId) -> Result<Snapshot, CacheError> {
    let repo = repo_dir(root, &id.repo);
    let not_cached = || CacheError::NotCached {
        id: id.clone(),
        root: root.to_path_buf(),
    };
    if !id.is_valid() {
        return Err(not_cached());
    }
    let ref_file = repo.join("refs").join(id.revision());
    if ref_file.exists() {
        inside_cache(&ref_file, root)?;
    }
    let commit = match read(&ref_file, MAX_TEMPLATE_BYTES) {
        Ok(text) => text.trim().to_string(),
        Err(_) if is_commit(id.revision()) => id.revision().to_string(),
        Err(_) => return Err(not_cached()),
    };
    if !is_commit(&commit) {
        return Err(CacheError::NoSnapshot {
            id: id.clone(),
            commit,
            root: root.to_path_buf(),
        });
    }
    let dir = repo.join("snapshots").join(&commit);
    if !dir.is_dir() {
        if !ref_file.is_file() {
            return Err(not_cached());
        }
        return Err(CacheError::NoSnapshot {
            id: id.clone(),
            commit,
            root: root.to_path_buf(),
        });
    }
    Ok(Snapshot {
        id: id.repo.clone(),
        revision: id.revision().to_string(),
        commit,
        dir,
    })
}

/// Refuses a snapshot whose template files (or tokenizer files) link outside the cache:
/// `huggingface_hub` links them into the model's `blobs/`, so a link elsewhere (a cache
/// unpacked from someone else's archive) could name any file on the machine.
pub(crate) fn check_links(snapshot: &Snapshot) -> Result<(), CacheError> {
    let Some(root) = snapshot.dir.ancestors().nth(3) else {
        return Ok(());
    };
    let named = model::MODEL_FILES
        .iter()
        .map(|name| snapshot.dir.join(name));
    let folder = snapshot.dir.join(model::TEMPLATE_DIR);
    let templates = list_dir(&folder);
    let files = named.chain([folder]).chain(templates);
    for file in files.filter(|f| f.symlink_metadata().is_ok()) {
        inside_cache(&file, root)?;
    }
    Ok(())
}

fn inside_cache(path: &Path, root: &Path) -> Result<(), CacheError> {
    if is_inside(path, &[root.to_path_buf()]) {
        Ok(())
    } else {
        Err(CacheError::Outside {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
        })
    }
}

/// A full 40-character hexadecimal commit hash.
pub(crate) fn is_commit(revision: &str) -> bool {
    revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every cached model snapshot that has a chat template, one set per model and revision
/// (`refs/` entries first, then snapshots no ref points at, named by their commit),
/// sorted by model id. Unreadable entries, folders whose name is not a Hub id and
/// snapshots with links out of the cache are skipped; nothing is followed outside the
/// fixed `models--*/refs|snapshots` layout.
pub fn cached_models(root: &Path) -> Vec<TemplateSet> {
    let mut repos: Vec<(String, PathBuf)> = list_dir(root)
        .into_iter()
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.strip_prefix("models--")?;
            let id = name.replace("--", "/");
            // A folder no Hub id could have made (control characters, `..`) is not a model.
            valid_repo_id(&id).then_some((id, path))
        })
        .collect();
    repos.sort();
    repos
        .iter()
        .flat_map(|(id, dir)| cached_revisions(root, id, dir))
        .filter_map(|snapshot| model::load(ModelPlace::Cache(snapshot)).ok())
        .collect()
}

/// The snapshots of one cached model: each ref, then unreferenced snapshots.
fn cached_revisions(root: &Path, id: &str, repo: &Path) -> Vec<Snapshot> {
    let mut found: Vec<Snapshot> = ref_names(&repo.join("refs"))
        .iter()
        .filter_map(|revision| snapshot(root, &ModelId::new(id, Some(revision))).ok())
        .collect();
    let mut orphans: Vec<PathBuf> = list_dir(&repo.join("snapshots"));
    orphans.sort();
    for dir in orphans {
        let Some(commit) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if dir.is_dir() && !found.iter().any(|s| s.commit == commit) {
            found.push(Snapshot {
                id: id.to_string(),
                revision: commit.to_string(),
                commit: commit.to_string(),
                dir: dir.clone(),
            });
        }
    }
    found
}

/// Ref names under `refs/` (`main`, tags, `refs/pr/1` two levels down), `main` first.
fn ref_names(refs: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending = vec![(refs.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for path in list_dir(&dir) {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let full = format!("{prefix}{name}");
            let is_link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
            if path.is_dir() && !is_link && prefix.matches('/').count() < 3 {
                pending.push((path.clone(), format!("{full}/")));
            } else if path.is_file() {
                names.push(full);
            }
        }
    }
    names.sort_by_key(|name| (name != DEFAULT_REVISION, name.clone()));
    names
}

fn list_dir(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|listing| listing.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_follow_the_hub_rules() {
        let id = ModelId::parse("Qwen/Qwen3-8B@v1.0").unwrap();
        assert_eq!((id.repo.as_str(), id.revision()), ("Qwen/Qwen3-8B", "v1.0"));
        assert_eq!(ModelId::parse("o/gpt2").unwrap().revision(), "main");
        for bad in [
            "gpt2", "a/b/c", "./x", "a--b/c", "-a/b", "a/b.", "", "a/b@", "a b/c", "a/b@../x",
        ] {
            assert!(ModelId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn cache_root_follows_huggingface_hub() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |key: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let root = |pairs| cache_root_from(env(pairs));
        assert_eq!(
            root(&[("HF_HUB_CACHE", "/c"), ("HF_HOME", "/h")]),
            Path::new("/c")
        );
        assert_eq!(root(&[("HF_HOME", "/h")]), Path::new("/h/hub"));
        assert_eq!(
            root(&[("HOME", "/u")]),
            Path::new("/u/.cache/huggingface/hub")
        );
        assert_eq!(
            root(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/u")]),
            Path::new("/x/huggingface/hub")
        );
        assert_eq!(
            root(&[("HF_HOME", "~/hf"), ("HOME", "/u")]),
            Path::new("/u/hf/hub")
        );
    }
}
