//! Template drift: the template a fixture was saved or blessed with (its
//! `template.sha256`) against the one its reference resolves to now.
//!
//! A fixture that fails because its model's template was updated needs another fix than
//! one that fails because the render changed, so `check` tells them apart and, when the
//! old text can still be found, shows the template's own diff. Only the Hugging Face
//! cache keeps old texts: the other snapshots of the same model, and its blobs.

use chatplate_render::remedy::{means, Knob};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Outcome;
use crate::catalog::{model, short, ModelPlace, Origin, Snapshot, TemplateSource};
use crate::files;
use crate::session::{template_sha256, Session};

/// At most this many snapshots and blobs of one model are looked through for the old text.
const MAX_CANDIDATES: usize = 512;
/// Blobs larger than this are not templates (a `.jinja` file is read up to 1 MiB).
const MAX_BLOB_BYTES: u64 = 1 << 20;

/// The template changed since the fixture was saved or blessed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Drift {
    /// The `template.sha256` the fixture recorded.
    pub blessed: String,
    /// The SHA-256 of the template text now.
    pub current: String,
    /// The template text now.
    pub template: String,
    /// The text it was blessed with, or why it could not be found.
    pub previous: Result<PreviousTemplate, String>,
}

/// The text a fixture was blessed with, found again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PreviousTemplate {
    /// Where it was found (`ORG/NAME at commit 0123abcd`, a blob's path).
    pub found_in: String,
    /// Its text.
    pub text: String,
}

impl Drift {
    /// The headline and where the old text is: what `check` prints above the diffs.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "template changed since the fixture was blessed (sha256 {} then, {} now)",
            short_hash(&self.blessed),
            short_hash(&self.current)
        );
        match &self.previous {
            Ok(previous) => text.push_str(&format!("; the blessed text is {}", previous.found_in)),
            Err(why) => text.push_str(&format!("; {why}")),
        }
        text
    }
}

fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// The drift of `session`'s template, if it recorded a fingerprint that the text of
/// `template` (the one it resolves to now) no longer has.
pub(crate) fn detect(session: &Session, template: &TemplateSource) -> Option<Drift> {
    let blessed = session.template_sha256.as_ref()?;
    let current = template_sha256(&template.source);
    if *blessed == current {
        return None;
    }
    Some(Drift {
        previous: previous_text(template, blessed),
        blessed: blessed.clone(),
        current,
        template: template.source.clone(),
    })
}

/// A failing `outcome` of a drifted template becomes [`Outcome::TemplateChanged`]; a
/// passing one stays, with the drift in `notes` (the template changed, its render did not).
pub(crate) fn attach(drift: Option<Drift>, outcome: Outcome, notes: &mut Vec<String>) -> Outcome {
    let Some(drift) = drift else {
        return outcome;
    };
    if !outcome.failed() {
        notes.push(format!(
            "{}; the prompt is the same ({} records the new one)",
            drift.summary(),
            means(Knob::Bless)
        ));
        return outcome;
    }
    Outcome::TemplateChanged {
        drift: Box::new(drift),
        outcome: Box::new(outcome),
    }
}

/// The old text with hash `blessed`, looked for where the cache keeps old revisions.
fn previous_text(template: &TemplateSource, blessed: &str) -> Result<PreviousTemplate, String> {
    let Some(repo) = cached_repo(template) else {
        return Err(format!(
            "the blessed text is not available: only the Hugging Face cache keeps old templates, and this one is {}",
            template.origin_label()
        ));
    };
    in_snapshots(&repo, blessed)
        .or_else(|| in_blobs(&repo, blessed))
        .ok_or_else(|| {
            format!(
                "the blessed text is not available: no snapshot or blob of {} in the cache has it",
                repo.display()
            )
        })
}

/// `<cache>/models--ORG--NAME` when the template came from one of its snapshots.
fn cached_repo(template: &TemplateSource) -> Option<PathBuf> {
    let Origin::Model(origin) = &template.origin else {
        return None;
    };
    let dir = match &origin.place {
        ModelPlace::Folder(dir) => dir.as_path(),
        ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => snapshot.dir.as_path(),
    };
    let snapshots = dir.parent()?;
    let repo = snapshots.parent()?;
    let is_repo = repo
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("models--"));
    (snapshots.file_name()? == "snapshots" && is_repo).then(|| repo.to_path_buf())
}

/// A template of another snapshot of the model whose text has hash `blessed`.
fn in_snapshots(repo: &Path, blessed: &str) -> Option<PreviousTemplate> {
    let id = repo_id(repo);
    let snapshots = sorted_entries(&repo.join("snapshots"));
    snapshots.into_iter().take(MAX_CANDIDATES).find_map(|dir| {
        let commit = dir.file_name()?.to_str()?.to_string();
        let snapshot = Snapshot {
            id: id.clone(),
            revision: commit.clone(),
            commit: commit.clone(),
            dir,
        };
        let set = model::load(ModelPlace::Cache(snapshot)).ok()?;
        let found = set
            .entries
            .into_iter()
            .find(|entry| template_sha256(&entry.source) == blessed)?;
        Some(PreviousTemplate {
            found_in: format!("{id} at commit {}", short(&commit)),
            text: found.source,
        })
    })
}

/// A blob of the model (a `.jinja` file of a revision whose snapshot is gone) whose
/// text has hash `blessed`.
fn in_blobs(repo: &Path, blessed: &str) -> Option<PreviousTemplate> {
    let blobs = sorted_entries(&repo.join("blobs"));
    blobs.into_iter().take(MAX_CANDIDATES).find_map(|blob| {
        let bytes = files::read_bytes(&blob, MAX_BLOB_BYTES).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        (template_sha256(&text) == blessed).then(|| PreviousTemplate {
            found_in: format!("the cached blob {}", blob.display()),
            text,
        })
    })
}

/// `ORG/NAME` from `models--ORG--NAME`.
fn repo_id(repo: &Path) -> String {
    let name = repo
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.trim_start_matches("models--").replacen("--", "/", 1)
}

/// The entries of `dir`, sorted so the search is the same on every run.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::session::TemplateRef;

    fn cached_model(root: &Path, commit: &str, template: &str) {
        let repo = root.join("models--org--tiny");
        let dir = repo.join("snapshots").join(commit);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(dir.join("chat_template.jinja"), template).unwrap();
        std::fs::write(dir.join("tokenizer_config.json"), "{}").unwrap();
        std::fs::write(repo.join("refs").join("main"), commit).unwrap();
    }

    #[test]
    fn an_unchanged_template_or_no_fingerprint_is_no_drift() {
        let template = catalog::default_template();
        let mut session = Session::new(TemplateRef::Bundled(template.name.clone()));
        assert_eq!(detect(&session, &template), None);
        session.record_template(&template.source);
        assert_eq!(detect(&session, &template), None);
    }

    #[test]
    fn a_bundled_template_that_changed_has_no_old_text() {
        let template = catalog::default_template();
        let mut session = Session::new(TemplateRef::Bundled(template.name.clone()));
        session.record_template("{{ 'older' }}");
        let drift = detect(&session, &template).expect("drift");
        assert_eq!(drift.blessed, template_sha256("{{ 'older' }}"));
        let why = drift.previous.expect_err("no old text");
        assert!(why.contains("only the Hugging Face cache"), "{why}");
    }

    #[test]
    fn the_old_text_is_found_in_another_snapshot_of_the_model() {
        let root = tempfile::tempdir().unwrap();
        let (old, new) = ("a".repeat(40), "b".repeat(40));
        cached_model(root.path(), &old, "{{ 'old' }}");
        cached_model(root.path(), &new, "{{ 'new' }}");
        let dir = root.path().join("models--org--tiny/snapshots").join(&new);
        let template = catalog::load_set(&dir).unwrap().entries.remove(0);
        let mut session = Session::new(TemplateRef::Path(dir.display().to_string()));
        session.record_template("{{ 'old' }}");
        let drift = detect(&session, &template).expect("drift");
        let previous = drift.previous.expect("old text found");
        assert_eq!(previous.text, "{{ 'old' }}");
        assert_eq!(previous.found_in, "org/tiny at commit aaaaaaa");
    }
}
