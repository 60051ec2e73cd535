//! GGUF files as template sources: `tokenizer.chat_template` (`default` when named ones
//! exist), each `tokenizer.chat_template.<name>`, and bos/eos as llama.cpp hands them to
//! the template (the token texts of `bos_token_id`/`eos_token_id`).

use chatplate_render::remedy::{means, Knob};
use std::path::Path;

use super::{open_file, CatalogError, Origin, TemplateMetadata, TemplateSet, TemplateSource};
use crate::gguf::{self, GgufMetadata};

/// Every template in the GGUF file at `path`.
pub(super) fn load(path: &Path) -> Result<TemplateSet, CatalogError> {
    let metadata = read(path)?;
    let label = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let several = !metadata.named_templates.is_empty();
    let main = metadata
        .chat_template
        .clone()
        .map(|source| (several.then(|| "default".to_string()), source));
    let named = metadata
        .named_templates
        .iter()
        .map(|(name, source)| (Some(name.clone()), source.clone()));
    let entries: Vec<TemplateSource> = main
        .into_iter()
        .chain(named)
        .map(|(entry, source)| template(path, &label, entry, source, &metadata))
        .collect();
    if entries.is_empty() {
        return Err(CatalogError::Config {
            path: path.to_path_buf(),
            message: format!("no tokenizer.chat_template in this GGUF's metadata (llama.cpp would fall back to ChatML; choose a template with {})", means(Knob::Template)),
        });
    }
    Ok(TemplateSet {
        label,
        entries,
        pinned: None,
    })
}

/// The header of the file at `path`, read without touching its tensor data.
pub(crate) fn read(path: &Path) -> Result<GgufMetadata, CatalogError> {
    let file = open_file(path)?;
    let len = file
        .metadata()
        .map_err(|cause| CatalogError::Io {
            path: path.to_path_buf(),
            cause,
        })?
        .len();
    gguf::read_metadata(file, len).map_err(|error| CatalogError::Gguf {
        path: path.to_path_buf(),
        error,
    })
}

fn template(
    path: &Path,
    label: &str,
    entry: Option<String>,
    source: String,
    metadata: &GgufMetadata,
) -> TemplateSource {
    TemplateSource {
        name: match &entry {
            Some(entry) => format!("{label}#{entry}"),
            None => label.to_string(),
        },
        source,
        origin: Origin::Gguf {
            path: path.to_path_buf(),
            entry,
        },
        bos_token: metadata.bos_token.clone(),
        eos_token: metadata.eos_token.clone(),
        metadata: TemplateMetadata {
            add_bos_token: metadata.add_bos_token,
            ..TemplateMetadata::default()
        },
    }
}
