//! What is known around a template besides its text, read from where it came from:
//! whether the tokenizer adds BOS itself (`add_bos_token` in a model's
//! `tokenizer_config.json`, `tokenizer.ggml.add_bos_token` in a GGUF), the model's
//! `response_template`, its tokenizer, and for a GGUF the template its model has now
//! (a model folder beside the file, else the Hugging Face cache's snapshot of the model
//! its metadata names).
//!
//! Everything is optional: what cannot be read is noted and the rules that need it are
//! skipped.

use std::path::Path;

use serde_json::Value as Json;

use crate::catalog::{self, hf_cache, model, ModelId, ModelPlace, Origin, TemplateSet};
use crate::files;
use crate::parse::ResponseTemplate;
use crate::TemplateSource;

/// Largest tokenizer config read (as the catalog reads it).
const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The current template a GGUF's embedded one is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentTemplate {
    /// Where it is (`model folder ./qwen (chat_template.jinja)`, `HF cache ...`).
    pub label: String,
    /// Its text.
    pub text: String,
}

/// What the rules know around one template.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Surroundings {
    /// Who says the tokenizer adds BOS itself, when someone does.
    pub adds_bos: Option<String>,
    /// The model's `response_template` and the file it is in.
    pub response_template: Option<(ResponseTemplate, String)>,
    /// The model's tokenizer, for token counts and injection.
    #[cfg(feature = "tokens")]
    pub tokenizer: Option<std::sync::Arc<crate::tokens::ModelTokenizer>>,
    /// For a GGUF: its model's current template.
    pub current: Option<CurrentTemplate>,
    /// What could not be read (a bad config, a tokenizer that does not load).
    pub notes: Vec<String>,
}

impl Surroundings {
    /// Reads what is around `template`.
    pub fn of(template: &TemplateSource) -> Self {
        let mut found = Surroundings {
            adds_bos: super::double_bos::adds_bos(template),
            ..Surroundings::default()
        };
        match &template.origin {
            Origin::Model(model) => found.model(model.place.dir()),
            Origin::Gguf { path, .. } => found.gguf(template, path),
            _ => {}
        }
        found
    }

    /// A model folder's tokenizer config and tokenizer.
    fn model(&mut self, dir: &Path) {
        let config_path = dir.join(model::TOKENIZER_CONFIG);
        let config = match files::read_optional_text(&config_path, MAX_CONFIG_BYTES) {
            Ok(Some(text)) => serde_json::from_str::<Json>(&text).ok(),
            Ok(None) => None,
            Err(err) => {
                self.notes.push(err.to_string());
                None
            }
        };
        if let Some(config) = &config {
            if let Some(spec) = config.get("response_template") {
                match ResponseTemplate::load(spec) {
                    Ok(parser) => {
                        self.response_template = Some((parser, config_path.display().to_string()));
                    }
                    Err(err) => self.notes.push(format!(
                        "{}: response_template: {err}",
                        config_path.display()
                    )),
                }
            }
        }
        self.tokenizer(dir);
    }

    #[cfg(feature = "tokens")]
    fn tokenizer(&mut self, dir: &Path) {
        use crate::tokens::{shared, TokenizerFiles};
        if !dir.join(crate::tokens::TOKENIZER_FILE).is_file() {
            return;
        }
        match TokenizerFiles::locate(dir).and_then(|files| shared(&files)) {
            Ok(tokenizer) => self.tokenizer = Some(tokenizer),
            Err(err) => self
                .notes
                .push(format!("the tokenizer does not load: {err}")),
        }
    }

    #[cfg(not(feature = "tokens"))]
    fn tokenizer(&mut self, _dir: &Path) {}

    /// A GGUF's `add_bos_token` and its model's current template.
    fn gguf(&mut self, template: &TemplateSource, path: &Path) {
        let folder = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let set = if model::is_model_folder(folder) {
            model::load(ModelPlace::Folder(folder.to_path_buf()))
        } else {
            let Some(id) = source_model(path) else {
                return;
            };
            match hf_cache::snapshot(&hf_cache::cache_root(), &id) {
                Ok(snapshot) if model::is_model_folder(&snapshot.dir) => {
                    model::load(ModelPlace::Cache(snapshot))
                }
                _ => return,
            }
        };
        match set {
            Ok(set) => self.current = current(&set, template.entry()),
            Err(err) => self.notes.push(format!("the GGUF's model: {err}")),
        }
    }
}

/// The model a GGUF was converted from, as its metadata names it.
fn source_model(path: &Path) -> Option<ModelId> {
    let metadata = catalog::read_gguf(path).ok()?;
    ModelId::parse(metadata.source_model.as_deref()?)
}

/// The entry of `set` that corresponds to the GGUF's `entry` (`None` and `default`:
/// the model's default template).
fn current(set: &TemplateSet, entry: Option<&str>) -> Option<CurrentTemplate> {
    let wanted = entry.filter(|e| *e != "default");
    let template = match wanted {
        Some(name) => set
            .entries
            .iter()
            .find(|t| t.entry() == Some(name))
            .cloned(),
        None => set.choose(false).ok(),
    }?;
    Some(CurrentTemplate {
        label: template.origin_label(),
        text: template.source,
    })
}
