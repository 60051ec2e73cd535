//! A loaded template and where it came from: the origin tells the places apart (bundled,
//! file, model folder, Hugging Face cache, Hub, GGUF, request body) for display, for file
//! watching and for writing the session's reference back.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use super::relative_to;
use crate::session::{Session, TemplateRef};

/// Where a loaded template came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into chatplate.
    Bundled,
    /// A template file on disk that belongs to no model.
    File(PathBuf),
    /// A Hugging Face model: a folder, a cached snapshot or one just fetched from the Hub.
    Model(ModelOrigin),
    /// The metadata of a GGUF file (llama.cpp, Ollama, LM Studio).
    Gguf {
        /// The `.gguf` file.
        path: PathBuf,
        /// The named template (`tokenizer.chat_template.<name>`), or `default`, when the
        /// file has several; `None` when it has one.
        entry: Option<String>,
    },
    /// The `chat_template` override of a request body.
    Request(PathBuf),
    /// Source written into the session itself.
    Inline,
}

/// Which template of a Hugging Face model, and where that model is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOrigin {
    /// The model's folder, or its cached snapshot.
    pub place: ModelPlace,
    /// The file the template text came from (`chat_template.jinja`,
    /// `additional_chat_templates/NAME.jinja`, `tokenizer_config.json`, `chat_template.json`).
    pub file: PathBuf,
    /// The entry name (`default`, `tool_use`, ...) when the model has several templates.
    pub entry: Option<String>,
}

/// Where a Hugging Face model lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelPlace {
    /// A folder on disk (`save_pretrained` output, a git clone, ...).
    Folder(PathBuf),
    /// A snapshot in the local Hugging Face cache.
    Cache(Snapshot),
    /// A snapshot fetched from the Hub by this run (now in the local cache too).
    Hub(Snapshot),
}

/// A model id resolved to a snapshot of the Hugging Face cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `ORG/NAME`.
    pub id: String,
    /// The branch, tag or commit asked for (`main` when none was).
    pub revision: String,
    /// The commit hash the revision resolved to (the snapshot folder's name).
    pub commit: String,
    /// `<cache>/models--ORG--NAME/snapshots/<commit>`.
    pub dir: PathBuf,
}

impl ModelPlace {
    /// The folder holding the model's files.
    pub(crate) fn dir(&self) -> &Path {
        match self {
            ModelPlace::Folder(dir) => dir,
            ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => &snapshot.dir,
        }
    }

    /// The model's display name: the folder name, or the model id.
    pub(crate) fn model_name(&self) -> String {
        match self {
            ModelPlace::Folder(dir) => folder_name(dir),
            ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => snapshot.id.clone(),
        }
    }

    /// The cached snapshot, if the model came from the cache or the Hub.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        match self {
            ModelPlace::Folder(_) => None,
            ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => Some(snapshot),
        }
    }
}

/// What a template's metadata says besides its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateMetadata {
    /// Named special tokens other than bos/eos (`unk_token`, `pad_token`, model-specific
    /// ones such as `image_token`), passed to the template as transformers passes its
    /// `special_tokens_map`.
    pub(crate) other_tokens: Vec<(String, String)>,
    /// GGUF `tokenizer.ggml.add_bos_token`, or a model folder's `add_bos_token` in
    /// `tokenizer_config.json`: whether the tokenizer prepends BOS itself (so a template
    /// that also prints it doubles it).
    pub add_bos_token: Option<bool>,
    /// The entry was asked for by name, so a session keeps that name instead of letting
    /// the tools decide between `default` and `tool_use`.
    pub(crate) pinned: bool,
    /// Things worth telling the user (a template file shadowed by another, ...).
    pub notes: Vec<String>,
}

/// A template ready to compile, with the special tokens its metadata names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSource {
    /// Display name (file stem, model name, `model#entry`).
    pub name: String,
    /// The Jinja source.
    pub source: String,
    /// Where it came from.
    pub origin: Origin,
    /// `bos_token` from the model's metadata.
    pub bos_token: Option<String>,
    /// `eos_token` from the model's metadata.
    pub eos_token: Option<String>,
    /// Further metadata (other special tokens, notes, whether the entry was named).
    pub metadata: TemplateMetadata,
}

impl TemplateSource {
    /// A template with no metadata.
    pub fn new(name: impl Into<String>, source: impl Into<String>, origin: Origin) -> Self {
        TemplateSource {
            name: name.into(),
            source: source.into(),
            origin,
            bos_token: None,
            eos_token: None,
            metadata: TemplateMetadata::default(),
        }
    }

    /// The file to watch for changes, if the template lives on disk.
    pub fn watched_path(&self) -> Option<&Path> {
        match &self.origin {
            Origin::File(path) | Origin::Gguf { path, .. } => Some(path),
            Origin::Model(model) => Some(&model.file),
            Origin::Bundled | Origin::Inline | Origin::Request(_) => None,
        }
    }

    /// The entry name among a model's several templates (`default`, `tool_use`, ...).
    pub fn entry(&self) -> Option<&str> {
        match &self.origin {
            Origin::Model(ModelOrigin { entry, .. }) | Origin::Gguf { entry, .. } => {
                entry.as_deref()
            }
            _ => None,
        }
    }

    /// Where the template came from, for display: `bundled`, `file t.jinja`,
    /// `model folder ./qwen (chat_template.jinja)`,
    /// `HF cache Qwen/Qwen3-8B@main 1a2b3c4 (chat_template.jinja)`, `Hub ...` (fetched by
    /// this run), `GGUF model.gguf`, `request body.json`, `inline`.
    pub fn origin_label(&self) -> String {
        match &self.origin {
            Origin::Bundled => "bundled".into(),
            Origin::File(path) => format!("file {}", path.display()),
            Origin::Model(model) => model_label(model),
            Origin::Gguf { path, .. } => format!("GGUF {}", path.display()),
            Origin::Request(path) => format!("request {}", path.display()),
            Origin::Inline => "inline".into(),
        }
    }

    /// Every special token as a template variable: bos, eos, then the others, in the
    /// order transformers' `special_tokens_map` lists them.
    pub fn token_variables(&self) -> Map<String, Json> {
        let mut variables = Map::new();
        let named = [
            ("bos_token", &self.bos_token),
            ("eos_token", &self.eos_token),
        ];
        for (key, value) in named {
            if let Some(token) = value {
                variables.insert(key.into(), Json::from(token.as_str()));
            }
        }
        for (key, token) in &self.metadata.other_tokens {
            variables.insert(key.clone(), Json::from(token.as_str()));
        }
        variables
    }

    /// How a session saved next to `session_dir` should refer to this template.
    pub fn reference(&self, session_dir: &Path) -> TemplateRef {
        let pinned = self.entry().filter(|_| self.metadata.pinned);
        let path_ref = |path: &Path| match pinned {
            Some(name) => TemplateRef::Named {
                path: relative_to(path, session_dir),
                name: name.to_string(),
            },
            None => TemplateRef::Path(relative_to(path, session_dir)),
        };
        match &self.origin {
            Origin::Bundled => TemplateRef::Bundled(self.name.clone()),
            Origin::Inline | Origin::Request(_) => TemplateRef::Source(self.source.clone()),
            Origin::File(path) | Origin::Gguf { path, .. } => path_ref(path),
            Origin::Model(model) => match &model.place {
                ModelPlace::Folder(dir) => path_ref(dir),
                ModelPlace::Cache(snapshot) | ModelPlace::Hub(snapshot) => TemplateRef::Model {
                    id: snapshot.id.clone(),
                    revision: Some(snapshot.revision.clone()),
                    snapshot: Some(snapshot.commit.clone()),
                    name: pinned.map(String::from),
                },
            },
        }
    }
}

impl TemplateSource {
    /// Makes `session` carry this template itself: its text as `{"source": ...}`, and
    /// the special tokens it passed (bos, eos, `unk_token`, ...) that the session does
    /// not set, so the session renders as it did. For a session that may not name the
    /// template's file (see [`super::TemplateAccess`]).
    pub fn inline_into(&self, session: &mut Session) {
        session.template = TemplateRef::Source(self.source.clone());
        let tokens = [
            (&mut session.bos_token, &self.bos_token),
            (&mut session.eos_token, &self.eos_token),
        ];
        for (field, token) in tokens {
            if field.is_none() {
                field.clone_from(token);
            }
        }
        for (key, token) in &self.metadata.other_tokens {
            (session.variables)
                .entry(key.clone())
                .or_insert_with(|| Json::from(token.as_str()));
        }
    }
}

fn model_label(model: &ModelOrigin) -> String {
    let file = model
        .file
        .strip_prefix(model.place.dir())
        .unwrap_or(&model.file)
        .display()
        .to_string();
    match &model.place {
        ModelPlace::Folder(dir) => format!("model folder {} ({file})", dir.display()),
        ModelPlace::Cache(s) => format!(
            "HF cache {}@{} {} ({file})",
            s.id,
            s.revision,
            short(&s.commit)
        ),
        ModelPlace::Hub(s) => format!("Hub {}@{} {} ({file})", s.id, s.revision, short(&s.commit)),
    }
}

/// The first seven characters of a commit hash, as git shows it.
pub fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// The last component of `dir` (or `dir` itself when it has none, like `.`).
pub fn folder_name(dir: &Path) -> String {
    let absolute = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session that carries its template's text renders as it did: the special
    /// tokens the template passed come along, and the session's own win.
    #[test]
    fn inline_keeps_the_special_tokens_the_session_lacks() {
        let mut template = TemplateSource::new("m", "{{ bos_token }}", Origin::Inline);
        template.bos_token = Some("<s>".into());
        template.eos_token = Some("</s>".into());
        (template.metadata.other_tokens).push(("unk_token".into(), "<unk>".into()));
        let mut session = Session::new(TemplateRef::Bundled("x".into()));
        session.eos_token = Some("<mine>".into());
        template.inline_into(&mut session);
        assert_eq!(
            session.template,
            TemplateRef::Source("{{ bos_token }}".into())
        );
        assert_eq!(session.bos_token.as_deref(), Some("<s>"));
        assert_eq!(session.eos_token.as_deref(), Some("<mine>"));
        assert_eq!(session.variables["unk_token"], "<unk>");
    }
}
