//! Hugging Face model folders, read the way transformers 5.23 reads them.
//!
//! `PreTrainedTokenizerBase.from_pretrained` (tokenization_utils_base.py) starts from
//! `tokenizer_config.json`'s `chat_template` (a string, or a list of `{name, template}`);
//! when `chat_template.jinja` or any `additional_chat_templates/*.jinja` exists, those
//! files replace it entirely ("independent chat template files take priority"): the
//! `.jinja` file is `default`, each additional file is named by its stem, and a lone
//! `default` is a single template. `chat_template.json` is the processors' legacy file
//! (`ProcessorMixin.get_processor_dict`); a tokenizer never reads it, so it is used only
//! when the tokenizer files give no template (where users load `AutoProcessor`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use super::template::{ModelOrigin, ModelPlace, TemplateMetadata};
use super::tokens::{self, SpecialTokens};
use super::{read, CatalogError, Origin, TemplateSet, TemplateSource};
use crate::files::{MAX_CONFIG_BYTES, MAX_TEMPLATE_BYTES};

/// `tokenizer_config.json`.
pub(crate) const TOKENIZER_CONFIG: &str = "tokenizer_config.json";
/// The single-template file of models saved since 2025.
pub(crate) const CHAT_TEMPLATE_FILE: &str = "chat_template.jinja";
/// The processors' legacy template file, `{"chat_template": "..."}`.
pub(crate) const PROCESSOR_TEMPLATE_FILE: &str = "chat_template.json";
/// The folder of named templates, one `NAME.jinja` each.
pub(crate) const TEMPLATE_DIR: &str = "additional_chat_templates";
/// Legacy special tokens, read when the config has no `added_tokens_decoder`.
pub(crate) const SPECIAL_TOKENS_MAP: &str = "special_tokens_map.json";
/// A processor's config, which may carry a `chat_template` of its own.
pub(crate) const PROCESSOR_CONFIG: &str = "processor_config.json";

/// Files whose presence makes a folder a model folder (opening any of them opens the
/// model).
pub(crate) const MODEL_FILES: [&str; 7] = [
    TOKENIZER_CONFIG,
    CHAT_TEMPLATE_FILE,
    PROCESSOR_TEMPLATE_FILE,
    SPECIAL_TOKENS_MAP,
    PROCESSOR_CONFIG,
    "tokenizer.json",
    "config.json",
];

/// Whether `dir` holds a Hugging Face model's template files.
pub fn is_model_folder(dir: &Path) -> bool {
    [
        TOKENIZER_CONFIG,
        CHAT_TEMPLATE_FILE,
        PROCESSOR_TEMPLATE_FILE,
    ]
    .iter()
    .any(|name| dir.join(name).is_file())
        || dir.join(TEMPLATE_DIR).is_dir()
}

/// The model folder a file belongs to, and the template entry the file itself is
/// (`default` for `chat_template.jinja`, `NAME` for `additional_chat_templates/NAME.jinja`).
pub(crate) fn folder_of(path: &Path) -> Option<(PathBuf, Option<String>)> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let parent = parent.unwrap_or(Path::new("."));
    if parent.file_name().is_some_and(|n| n == TEMPLATE_DIR) {
        let stem = name.strip_suffix(".jinja")?;
        let folder = parent.parent().filter(|p| !p.as_os_str().is_empty());
        let folder = folder.unwrap_or(Path::new("."));
        return Some((folder.to_path_buf(), Some(stem.to_string())));
    }
    if !MODEL_FILES.contains(&name) || !is_model_folder(parent) {
        return None;
    }
    let entry = (name == CHAT_TEMPLATE_FILE).then(|| "default".to_string());
    Some((parent.to_path_buf(), entry))
}

/// Every template of the model in `place`, with its special tokens.
pub fn load(place: ModelPlace) -> Result<TemplateSet, CatalogError> {
    if let Some(snapshot) = place.snapshot() {
        super::hf_cache::check_links(snapshot)?;
    }
    let dir = place.dir().to_path_buf();
    let config = read_object(&dir.join(TOKENIZER_CONFIG))?.unwrap_or_default();
    let tokens = tokens::from_config(&config, &dir)?;
    let mut notes = Vec::new();
    let found = match template_files(&dir)? {
        Some(found) => {
            if config.get("chat_template").is_some_and(|t| !t.is_null()) {
                notes.push(format!(
                    "{TOKENIZER_CONFIG}'s chat_template is not used: template files take precedence, as in transformers"
                ));
            }
            found
        }
        None => match config_templates(&config, &dir.join(TOKENIZER_CONFIG))? {
            Some(found) => found,
            None => processor_templates(&dir)?.ok_or_else(|| no_template(&dir))?,
        },
    };
    if found
        .file
        .file_name()
        .is_some_and(|n| n != PROCESSOR_TEMPLATE_FILE)
        && dir.join(PROCESSOR_TEMPLATE_FILE).is_file()
    {
        notes.push(format!(
            "{PROCESSOR_TEMPLATE_FILE} is not used: it is the processors' file (AutoProcessor would prefer it)"
        ));
    }
    let mut set = build_set(place, found, &tokens, notes);
    // Whether the tokenizer prepends BOS itself (the double-BOS warning reads it).
    let adds_bos = config.get("add_bos_token").and_then(Json::as_bool);
    for entry in &mut set.entries {
        entry.metadata.add_bos_token = adds_bos;
    }
    Ok(set)
}

/// A JSON file of another name holding a tokenizer config's `chat_template`: read on its
/// own, with the special tokens it names.
pub(crate) fn load_config_file(path: &Path) -> Result<TemplateSet, CatalogError> {
    let config = read_object(path)?.unwrap_or_default();
    let tokens = tokens::from_object(&config);
    let found = config_templates(&config, path)?.ok_or_else(|| CatalogError::Config {
        path: path.to_path_buf(),
        message: "no \"chat_template\" in this tokenizer config".into(),
    })?;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    let place = ModelPlace::Folder(folder.unwrap_or(Path::new(".")).to_path_buf());
    let mut set = build_set(place, found, &tokens, Vec::new());
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    set.label = stem.unwrap_or_default();
    for template in &mut set.entries {
        template.name = match template.entry() {
            Some(entry) => format!("{}#{entry}", set.label),
            None => set.label.clone(),
        };
    }
    Ok(set)
}

/// The templates found, and the file they came from (for a single config, the config).
struct Found {
    file: PathBuf,
    /// `(entry name, file, source)`; a `None` name is the single template.
    entries: Vec<(Option<String>, PathBuf, String)>,
}

/// `chat_template.jinja` and `additional_chat_templates/*.jinja`, if any exist.
fn template_files(dir: &Path) -> Result<Option<Found>, CatalogError> {
    let mut entries: Vec<(Option<String>, PathBuf, String)> = Vec::new();
    let main = dir.join(CHAT_TEMPLATE_FILE);
    if main.is_file() {
        entries.push((
            Some("default".into()),
            main.clone(),
            read(&main, MAX_TEMPLATE_BYTES)?,
        ));
    }
    for (name, path) in additional_templates(dir)? {
        let source = read(&path, MAX_TEMPLATE_BYTES)?;
        // A later file of the same name replaces the earlier one, as in a Python dict.
        match entries
            .iter_mut()
            .find(|(n, ..)| n.as_deref() == Some(&name))
        {
            Some(entry) => *entry = (Some(name), path, source),
            None => entries.push((Some(name), path, source)),
        }
    }
    if entries.is_empty() {
        return Ok(None);
    }
    if let [(Some(name), ..)] = entries.as_mut_slice() {
        if name == "default" {
            entries[0].0 = None;
        }
    }
    Ok(Some(Found {
        file: entries[0].1.clone(),
        entries,
    }))
}

/// `additional_chat_templates/NAME.jinja` files (regular files only, no descent), by name.
fn additional_templates(dir: &Path) -> Result<Vec<(String, PathBuf)>, CatalogError> {
    let folder = dir.join(TEMPLATE_DIR);
    if !folder.is_dir() {
        return Ok(Vec::new());
    }
    let listing = std::fs::read_dir(&folder).map_err(|cause| CatalogError::Io {
        path: folder.clone(),
        cause,
    })?;
    let mut found: Vec<(String, PathBuf)> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jinja")?
                .to_string();
            Some((name, path))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// `tokenizer_config.json`'s `chat_template`: a string, or a list of `{name, template}`.
fn config_templates(
    config: &Map<String, Json>,
    file: &Path,
) -> Result<Option<Found>, CatalogError> {
    let file = file.to_path_buf();
    let bad = |message: &str| CatalogError::Config {
        path: file.clone(),
        message: message.into(),
    };
    let entries = match config.get("chat_template") {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::String(source)) => vec![(None, file.clone(), source.clone())],
        Some(Json::Array(list)) => named_list(list, &file).ok_or_else(|| {
            bad("each chat_template entry needs a \"name\" and a \"template\" string")
        })?,
        Some(_) => {
            return Err(bad(
                "\"chat_template\" must be a string or a list of {name, template}",
            ))
        }
    };
    Ok(Some(Found { file, entries }))
}

fn named_list(list: &[Json], file: &Path) -> Option<Vec<(Option<String>, PathBuf, String)>> {
    let mut entries: Vec<(Option<String>, PathBuf, String)> = Vec::new();
    for item in list {
        let name = item.get("name")?.as_str()?.to_string();
        let source = item.get("template")?.as_str()?.to_string();
        match entries
            .iter_mut()
            .find(|(n, ..)| n.as_deref() == Some(&name))
        {
            Some(entry) => entry.2 = source,
            None => entries.push((Some(name), file.to_path_buf(), source)),
        }
    }
    Some(entries)
}

/// The processor's template: `processor_config.json`'s `chat_template`, else
/// `chat_template.json` (transformers refuses it beside named template files, and so do we
/// by only getting here when there are none).
fn processor_templates(dir: &Path) -> Result<Option<Found>, CatalogError> {
    for name in [PROCESSOR_CONFIG, PROCESSOR_TEMPLATE_FILE] {
        let file = dir.join(name);
        let Some(object) = read_object(&file)? else {
            continue;
        };
        match object.get("chat_template") {
            Some(Json::String(source)) => {
                return Ok(Some(Found {
                    entries: vec![(None, file.clone(), source.clone())],
                    file,
                }))
            }
            None | Some(Json::Null) if name == PROCESSOR_CONFIG => continue,
            _ => {
                return Err(CatalogError::Config {
                    path: file,
                    message: "\"chat_template\" must be a string".into(),
                })
            }
        }
    }
    Ok(None)
}

fn no_template(dir: &Path) -> CatalogError {
    CatalogError::Config {
        path: dir.to_path_buf(),
        message: format!(
            "no chat template in this model folder (looked for {CHAT_TEMPLATE_FILE}, {TEMPLATE_DIR}/, \"chat_template\" in {TOKENIZER_CONFIG}, {PROCESSOR_TEMPLATE_FILE})"
        ),
    }
}

fn build_set(
    place: ModelPlace,
    found: Found,
    tokens: &SpecialTokens,
    notes: Vec<String>,
) -> TemplateSet {
    let model_name = place.model_name();
    let entries = found
        .entries
        .into_iter()
        .map(|(entry, file, source)| TemplateSource {
            name: match &entry {
                Some(entry) => format!("{model_name}#{entry}"),
                None => model_name.clone(),
            },
            source,
            origin: Origin::Model(ModelOrigin {
                place: place.clone(),
                file,
                entry,
            }),
            bos_token: tokens.bos.clone(),
            eos_token: tokens.eos.clone(),
            metadata: TemplateMetadata {
                other_tokens: tokens.others.clone(),
                notes: notes.clone(),
                ..TemplateMetadata::default()
            },
        })
        .collect();
    TemplateSet {
        label: model_name,
        entries,
        pinned: None,
    }
}

/// A JSON object file, `None` when the file does not exist.
pub(super) fn read_object(path: &Path) -> Result<Option<Map<String, Json>>, CatalogError> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = read(path, MAX_CONFIG_BYTES)?;
    let bad = |message: String| CatalogError::Config {
        path: path.to_path_buf(),
        message,
    };
    match serde_json::from_str(&text) {
        Ok(Json::Object(object)) => Ok(Some(object)),
        Ok(_) => Err(bad("expected a JSON object".into())),
        Err(err) => Err(bad(format!(
            "line {} column {}: {err}",
            err.line(),
            err.column()
        ))),
    }
}
