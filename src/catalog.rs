//! Where templates come from: the bundled set, `.jinja` files, directories,
//! `tokenizer_config.json` (a `chat_template` string or a named list) and
//! `chat_template.jinja`. Nothing here renders; it only finds and reads sources.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::files::{self, FileError, MAX_CONFIG_BYTES, MAX_TEMPLATE_BYTES};
use crate::session::TemplateRef;

mod access;

use access::roots_text;
pub use access::TemplateAccess;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled_templates.rs"));
}

/// Where a loaded template came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into chatplate.
    Bundled,
    /// A template file on disk.
    File(PathBuf),
    /// An entry of a `tokenizer_config.json`; `name` is `None` for a plain string.
    TokenizerConfig {
        /// The config file.
        path: PathBuf,
        /// The named entry, when the config lists several.
        name: Option<String>,
    },
    /// Source written into the session itself.
    Inline,
}

/// A template ready to compile, with the special tokens its metadata names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSource {
    /// Display name (file stem, or `config/name`).
    pub name: String,
    /// The Jinja source.
    pub source: String,
    /// Where it came from.
    pub origin: Origin,
    /// `bos_token` from a tokenizer config.
    pub bos_token: Option<String>,
    /// `eos_token` from a tokenizer config.
    pub eos_token: Option<String>,
}

impl TemplateSource {
    /// The file to watch for changes, if the template lives on disk.
    pub fn watched_path(&self) -> Option<&Path> {
        match &self.origin {
            Origin::File(path) | Origin::TokenizerConfig { path, .. } => Some(path),
            Origin::Bundled | Origin::Inline => None,
        }
    }

    /// How a session saved next to `session_dir` should refer to this template.
    pub fn reference(&self, session_dir: &Path) -> TemplateRef {
        match &self.origin {
            Origin::Bundled => TemplateRef::Bundled(self.name.clone()),
            Origin::Inline => TemplateRef::Source(self.source.clone()),
            Origin::File(path) => TemplateRef::Path(relative_to(path, session_dir)),
            Origin::TokenizerConfig { path, name: None } => {
                TemplateRef::Path(relative_to(path, session_dir))
            }
            Origin::TokenizerConfig {
                path,
                name: Some(name),
            } => TemplateRef::Named {
                path: relative_to(path, session_dir),
                name: name.clone(),
            },
        }
    }
}

/// Why a template could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Reading failed.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (shown in the message, so not chained as a `source` too).
        cause: std::io::Error,
    },
    /// A tokenizer config without a usable `chat_template`.
    #[error("{path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No bundled template has this name.
    #[error("no bundled template named {} (see `chatplate templates`)", crate::visible::quoted(.0))]
    UnknownBundled(String),
    /// The file is not one chatplate will read (a FIFO, too large, not UTF-8, ...).
    #[error(transparent)]
    File(#[from] FileError),
    /// A session names a template file outside the folders it may read from.
    #[error("template path {} leads outside {}; templates named by a session must be inside it (allow more with --template-root DIR)", crate::visible::quoted(.path), roots_text(.allowed))]
    Outside {
        /// The path as the session wrote it.
        path: String,
        /// The folders it may read from.
        allowed: Vec<PathBuf>,
    },
}

/// Every bundled template, sorted by name.
pub fn bundled() -> Vec<TemplateSource> {
    bundled::BUNDLED
        .iter()
        .map(|(name, source)| TemplateSource {
            name: name.to_string(),
            source: source.to_string(),
            origin: Origin::Bundled,
            bos_token: None,
            eos_token: None,
        })
        .collect()
}

/// The bundled template the app opens by default.
pub fn default_template() -> TemplateSource {
    let all = bundled();
    all.iter()
        .find(|t| t.name == DEFAULT_TEMPLATE)
        .or(all.first())
        .cloned()
        .unwrap_or_else(|| TemplateSource {
            name: "minimal".into(),
            source: MINIMAL_TEMPLATE.into(),
            origin: Origin::Inline,
            bos_token: None,
            eos_token: None,
        })
}

/// The template shown when nothing else is chosen.
pub const DEFAULT_TEMPLATE: &str = "qwen2.5-reasoning-tools";

/// Used only if the binary was built without any bundled template.
const MINIMAL_TEMPLATE: &str = "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

/// A bundled template by name.
pub fn find_bundled(name: &str) -> Result<TemplateSource, CatalogError> {
    bundled()
        .into_iter()
        .find(|t| t.name == name)
        .ok_or_else(|| CatalogError::UnknownBundled(name.to_string()))
}

/// Loads every template a path offers: a `.jinja` file gives one, a
/// `tokenizer_config.json` one per entry, a directory everything inside it (recursively).
/// A directory with some unusable files still gives the good ones; it fails only when
/// it offers none and something was wrong (see [`load_all`] for the problems).
pub fn load_path(path: &Path) -> Result<Vec<TemplateSource>, CatalogError> {
    let mut loaded = load_all(path);
    if loaded.templates.is_empty() && !loaded.problems.is_empty() {
        return Err(loaded.problems.remove(0));
    }
    Ok(loaded.templates)
}

/// Templates found under a path, and the files that could not be used.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every usable template, in path order.
    pub templates: Vec<TemplateSource>,
    /// Files that were skipped, with why (worth a warning, not a failure).
    pub problems: Vec<CatalogError>,
}

/// Like [`load_path`], but a directory keeps its good templates and lists the problems.
pub fn load_all(path: &Path) -> Loaded {
    if !path.is_dir() {
        return match load_file(path) {
            Ok(templates) => Loaded {
                templates,
                problems: Vec::new(),
            },
            Err(err) => Loaded {
                templates: Vec::new(),
                problems: vec![err],
            },
        };
    }
    let is_template = |p: &Path| {
        p.extension().is_some_and(|e| e == "jinja")
            || p.file_name().is_some_and(|n| n == "tokenizer_config.json")
    };
    let walked = files::walk(path, |_| true, is_template);
    let mut loaded = Loaded::default();
    for file in walked.files {
        match load_file(&file) {
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

fn load_file(path: &Path) -> Result<Vec<TemplateSource>, CatalogError> {
    if path.extension().is_some_and(|e| e == "json") {
        return load_tokenizer_config(path);
    }
    let source = read(path, MAX_TEMPLATE_BYTES)?;
    Ok(vec![TemplateSource {
        name: file_label(path),
        source,
        origin: Origin::File(path.to_path_buf()),
        bos_token: None,
        eos_token: None,
    }])
}

/// A `tokenizer_config.json`: `chat_template` is a string or a list of
/// `{"name", "template"}`; `bos_token`/`eos_token` are strings or `{"content"}` objects.
pub fn load_tokenizer_config(path: &Path) -> Result<Vec<TemplateSource>, CatalogError> {
    let config_error = |message: String| CatalogError::Config {
        path: path.to_path_buf(),
        message,
    };
    let config: Json = serde_json::from_str(&read(path, MAX_CONFIG_BYTES)?).map_err(|err| {
        config_error(format!(
            "line {} column {}: {err}",
            err.line(),
            err.column()
        ))
    })?;
    let bos_token = special_token(&config["bos_token"]);
    let eos_token = special_token(&config["eos_token"]);
    let make = |name: Option<String>, source: &str| TemplateSource {
        name: match &name {
            Some(entry) => format!("{}/{entry}", file_label(path)),
            None => file_label(path),
        },
        source: source.to_string(),
        origin: Origin::TokenizerConfig {
            path: path.to_path_buf(),
            name,
        },
        bos_token: bos_token.clone(),
        eos_token: eos_token.clone(),
    };
    match &config["chat_template"] {
        Json::String(source) => Ok(vec![make(None, source)]),
        Json::Array(entries) => entries
            .iter()
            .map(
                |entry| match (entry["name"].as_str(), entry["template"].as_str()) {
                    (Some(name), Some(source)) => Ok(make(Some(name.to_string()), source)),
                    _ => Err(config_error(
                        "each chat_template entry needs a \"name\" and a \"template\" string"
                            .into(),
                    )),
                },
            )
            .collect(),
        Json::Null => Err(config_error(
            "no \"chat_template\" in this tokenizer config".into(),
        )),
        _ => Err(config_error(
            "\"chat_template\" must be a string or a list of {name, template}".into(),
        )),
    }
}

fn special_token(value: &Json) -> Option<String> {
    match value {
        Json::String(token) => Some(token.clone()),
        Json::Object(fields) => fields.get("content")?.as_str().map(String::from),
        _ => None,
    }
}

/// Resolves a session's template reference; relative paths start at `session_dir` and
/// must stay where `access` allows.
pub fn resolve(
    reference: &TemplateRef,
    session_dir: &Path,
    access: &TemplateAccess,
) -> Result<TemplateSource, CatalogError> {
    match reference {
        TemplateRef::Bundled(name) => find_bundled(name),
        TemplateRef::Source(source) => Ok(TemplateSource {
            name: "inline".into(),
            source: source.clone(),
            origin: Origin::Inline,
            bos_token: None,
            eos_token: None,
        }),
        TemplateRef::Path(relative) => {
            let path = session_dir.join(relative);
            access.check(&path, relative)?;
            let mut all = load_path(&path)?;
            match all.len() {
                1 => Ok(all.remove(0)),
                _ => all
                    .into_iter()
                    .find(|t| matches!(&t.origin, Origin::TokenizerConfig { name: Some(n), .. } if n == "default"))
                    .ok_or_else(|| CatalogError::Config {
                        path,
                        message: "several templates here; name one with {\"named\": {\"path\", \"name\"}}".into(),
                    }),
            }
        }
        TemplateRef::Named {
            path: written,
            name,
        } => {
            let path = session_dir.join(written);
            access.check(&path, written)?;
            load_tokenizer_config(&path)?
                .into_iter()
                .find(|t| matches!(&t.origin, Origin::TokenizerConfig { name: Some(n), .. } if n == name))
                .ok_or_else(|| CatalogError::Config {
                    path,
                    message: format!("no chat_template entry named {name:?}"),
                })
        }
    }
}

fn read(path: &Path, limit: u64) -> Result<String, CatalogError> {
    Ok(files::read_text(path, limit)?)
}

/// `chat_template.jinja` and `tokenizer_config.json` are named after their folder.
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

/// `path` relative to `base` when both are under a common root; absolute otherwise.
pub fn relative_to(path: &Path, base: &Path) -> String {
    let absolute = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (path_abs, base_abs) = (absolute(path), absolute(base));
    let path_parts: Vec<_> = path_abs.components().collect();
    let base_parts: Vec<_> = base_abs.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return path_abs.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in common..base_parts.len() {
        relative.push("..");
    }
    for part in &path_parts[common..] {
        relative.push(part);
    }
    relative.display().to_string()
}
