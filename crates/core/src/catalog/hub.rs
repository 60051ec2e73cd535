//! Fetching a model's template files from the Hugging Face Hub into the local cache, in
//! `huggingface_hub`'s own layout (`blobs/`, `snapshots/<commit>/`, `refs/<revision>`),
//! so Python tools find them there too. Only the template files are fetched:
//! `tokenizer_config.json`, `chat_template.jinja`, `chat_template.json`,
//! `special_tokens_map.json`, `processor_config.json` and
//! `additional_chat_templates/*.jinja`.
//!
//! Honours `HF_ENDPOINT`, `HF_TOKEN` (or the token file, `$HF_TOKEN_PATH` or
//! `$HF_HOME/token`; the token is never printed) and `HF_HUB_OFFLINE`. The HTTP client is
//! the cargo feature `hub` (on by default); without it, fetching says so.
//!
//! The token goes only where the user pointed it: with a model the user named, not with
//! one a file named (a fixture in a pull request could otherwise make a CI fetch its
//! private models with the CI's token), unless the user allows it
//! ([`HubSettings::token_for_files`], [`allow_token_for_files`]).

#[cfg(feature = "hub")]
mod store;
#[cfg(feature = "hub")]
mod transfer;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::hf_cache::{cache_root_from, hf_home_from, ModelId};
use super::{model, read, CatalogError, Fetch, NamedBy, Snapshot};
use crate::files::MAX_TEMPLATE_BYTES;

/// The Hub used when `HF_ENDPOINT` is not set.
pub(crate) const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// An access token; its `Debug` output never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        Token(token.into())
    }

    /// The secret itself, for the `Authorization` header only.
    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

/// Where and how to reach the Hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSettings {
    /// `HF_ENDPOINT`, without a trailing slash.
    pub endpoint: String,
    /// `HF_TOKEN`, else the token file.
    pub token: Option<Token>,
    /// `HF_HUB_OFFLINE` is set: never connect.
    pub offline: bool,
    /// The cache to fill (see [`super::hf_cache::cache_root`]).
    pub cache: PathBuf,
    /// The token also goes with models a file named (a session, a fixture, a request
    /// body), not only with those the user named.
    pub token_for_files: bool,
}

/// The process's choice for [`HubSettings::token_for_files`] (see
/// [`allow_token_for_files`]).
static TOKEN_FOR_FILES: AtomicBool = AtomicBool::new(false);

/// Lets the token go with models files name in every [`HubSettings::from_env`] of this
/// process: the front end's `--hub-token-for-fixtures` and its config file's switch.
pub fn allow_token_for_files(allowed: bool) {
    TOKEN_FOR_FILES.store(allowed, Ordering::Relaxed);
}

impl HubSettings {
    /// Settings from the process environment (and [`allow_token_for_files`]).
    pub fn from_env() -> Self {
        let mut settings = Self::from_lookup(|key| std::env::var_os(key));
        settings.token_for_files = TOKEN_FOR_FILES.load(Ordering::Relaxed);
        settings
    }

    /// These settings for a fetch of a model `named_by` names: without the token when a
    /// file named it and files may not use it. Also whether a token was held back.
    fn for_fetch(&self, named_by: NamedBy) -> (HubSettings, bool) {
        let withhold = named_by == NamedBy::File && !self.token_for_files && self.token.is_some();
        let mut settings = self.clone();
        if withhold {
            settings.token = None;
        }
        (settings, withhold)
    }

    /// Settings from an environment lookup.
    pub(crate) fn from_lookup(env: impl Fn(&str) -> Option<OsString>) -> Self {
        let text = |key: &str| {
            env(key)
                .map(|v| v.to_string_lossy().trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let endpoint = text("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.into());
        let offline = text("HF_HUB_OFFLINE").is_some_and(|v| {
            matches!(v.to_ascii_uppercase().as_str(), "1" | "ON" | "YES" | "TRUE")
        });
        let token_file =
            text("HF_TOKEN_PATH").map_or_else(|| hf_home_from(&env).join("token"), PathBuf::from);
        let token = text("HF_TOKEN")
            .or_else(|| text("HUGGING_FACE_HUB_TOKEN"))
            .or_else(|| {
                read(&token_file, MAX_TEMPLATE_BYTES)
                    .ok()
                    .map(|t| t.trim().to_string())
            })
            .filter(|t| !t.is_empty())
            .map(Token);
        HubSettings {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            token,
            offline,
            cache: cache_root_from(&env),
            token_for_files: false,
        }
    }
}

/// What a fetch is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchEvent {
    /// Asking the Hub which files the revision has.
    Resolving {
        /// The model.
        id: ModelId,
        /// The Hub.
        endpoint: String,
    },
    /// One file is in the cache.
    Fetched {
        /// Its path in the repository.
        file: String,
        /// Its size.
        bytes: u64,
    },
    /// All template files are in the cache.
    Done(Snapshot),
}

impl std::fmt::Display for FetchEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchEvent::Resolving { id, endpoint } => {
                write!(
                    f,
                    "{id} is not cached; fetching its template files from {endpoint}"
                )
            }
            FetchEvent::Fetched { file, bytes } => write!(f, "  {file} ({bytes} bytes)"),
            FetchEvent::Done(snapshot) => write!(f, "  cached in {}", snapshot.dir.display()),
        }
    }
}

/// Why fetching failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubError {
    /// `HF_HUB_OFFLINE` forbids connecting.
    #[error("{id} is not in the local Hugging Face cache ({cache}) and HF_HUB_OFFLINE is set")]
    Offline {
        /// The model.
        id: ModelId,
        /// The cache searched.
        cache: PathBuf,
    },
    /// Built without the `hub` feature.
    #[error("{id} is not in the local Hugging Face cache ({cache}), and this chatplate was built without the Hub client (cargo feature \"hub\")")]
    Disabled {
        /// The model.
        id: ModelId,
        /// The cache searched.
        cache: PathBuf,
    },
    /// 401: no token, or one the Hub did not accept.
    #[error("{id}: the Hub refused access (401): {hint}")]
    Unauthorized {
        /// The model.
        id: ModelId,
        /// What to do about it.
        hint: String,
    },
    /// A file named the model, so it was fetched without the user's token, and the Hub
    /// refused it (it may be private or gated).
    #[error("{id} is named by a file (a fixture, session or request body), so it was fetched without your Hugging Face token, and the Hub refused it ({refused}); if it is private or gated and you trust these files, let them use the token with --hub-token-for-fixtures, or \"hub_token_for_fixtures\": true in chatplate's config file")]
    TokenWithheld {
        /// The model.
        id: ModelId,
        /// The Hub's answer.
        refused: String,
    },
    /// 403: a gated model this token has no access to.
    #[error("{id}: access denied (403): the model is gated and this account has not been granted access (request it on the model's page)")]
    Forbidden {
        /// The model.
        id: ModelId,
    },
    /// 404: no such model, revision or file.
    #[error("{what} not found on {endpoint} (404)")]
    NotFound {
        /// What was not found.
        what: String,
        /// The Hub.
        endpoint: String,
    },
    /// The Hub could not be reached.
    #[error(
        "cannot reach {endpoint}: {message} (set HF_HUB_OFFLINE=1 to use the local cache only)"
    )]
    Network {
        /// The Hub.
        endpoint: String,
        /// The transport error.
        message: String,
    },
    /// Another unexpected answer.
    #[error("{url}: unexpected answer from the Hub: {message}")]
    BadResponse {
        /// The request.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The revision exists but has none of the template files.
    #[error("{id} has no chat template files ({hint})")]
    NoTemplate {
        /// The model.
        id: ModelId,
        /// What it has instead.
        hint: String,
    },
    /// Writing the cache failed.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
}

/// Whether a repository file is one the templates need.
pub(crate) fn is_template_file(file: &str) -> bool {
    const TOP_LEVEL: [&str; 5] = [
        model::TOKENIZER_CONFIG,
        model::CHAT_TEMPLATE_FILE,
        model::PROCESSOR_TEMPLATE_FILE,
        model::SPECIAL_TOKENS_MAP,
        model::PROCESSOR_CONFIG,
    ];
    match file.split_once('/') {
        None => TOP_LEVEL.contains(&file),
        Some((dir, name)) => {
            dir == model::TEMPLATE_DIR && name.ends_with(".jinja") && !name.contains('/')
        }
    }
}

/// Fetches `id`'s template files into `settings.cache`; the snapshot they are in.
pub fn fetch_templates(
    settings: &HubSettings,
    id: &ModelId,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<Snapshot, HubError> {
    if settings.offline {
        return Err(HubError::Offline {
            id: id.clone(),
            cache: settings.cache.clone(),
        });
    }
    fetch_online(settings, id, progress)
}

#[cfg(feature = "hub")]
fn fetch_online(
    settings: &HubSettings,
    id: &ModelId,
    progress: &mut dyn FnMut(&FetchEvent),
) -> Result<Snapshot, HubError> {
    transfer::fetch(settings, id, progress)
}

#[cfg(not(feature = "hub"))]
fn fetch_online(
    settings: &HubSettings,
    id: &ModelId,
    _progress: &mut dyn FnMut(&FetchEvent),
) -> Result<Snapshot, HubError> {
    Err(HubError::Disabled {
        id: id.clone(),
        cache: settings.cache.clone(),
    })
}

/// A [`Fetch`] that asks the Hub, reporting progress to a callback.
pub struct HubFetch<'a> {
    /// Where and how.
    pub settings: HubSettings,
    /// Called for each step.
    pub progress: &'a mut dyn FnMut(&FetchEvent),
}

impl Fetch for HubFetch<'_> {
    fn fetch(&mut self, id: &ModelId, named_by: NamedBy) -> Option<Result<Snapshot, CatalogError>> {
        let (settings, withheld) = self.settings.for_fetch(named_by);
        let fetched = match fetch_templates(&settings, id, self.progress) {
            Err(err) if withheld => Err(refused_without_token(err)),
            fetched => fetched,
        };
        Some(fetched.map_err(CatalogError::from))
    }
}

/// A refusal of a fetch that went without the token, said as such: the token the user
/// has might have been let in.
fn refused_without_token(err: HubError) -> HubError {
    let (id, refused) = match err {
        HubError::Unauthorized { id, .. } => (id, "401".to_string()),
        HubError::Forbidden { id } => (id, "403".to_string()),
        other => return other,
    };
    HubError::TokenWithheld { id, refused }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> HubSettings {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        HubSettings::from_lookup(move |key| {
            pairs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn environment_sets_endpoint_token_and_offline() {
        let plain = settings(&[("HOME", "/nonexistent")]);
        assert_eq!(plain.endpoint, DEFAULT_ENDPOINT);
        assert_eq!((plain.token, plain.offline), (None, false));
        let custom = settings(&[
            ("HF_ENDPOINT", "http://127.0.0.1:9/"),
            ("HF_TOKEN", "hf_secret"),
            ("HF_HUB_OFFLINE", "true"),
            ("HF_HUB_CACHE", "/c"),
        ]);
        assert_eq!(custom.endpoint, "http://127.0.0.1:9");
        assert_eq!(custom.token, Some(Token::new("hf_secret")));
        assert!(custom.offline);
        assert_eq!(custom.cache, PathBuf::from("/c"));
        assert!(!format!("{custom:?}").contains("hf_secret"));
    }

    #[test]
    fn token_file_is_read_when_hf_token_is_unset() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "hf_from_file\n").unwrap();
        let home = dir.path().to_str().unwrap();
        let found = settings(&[("HF_HOME", home)]);
        assert_eq!(found.token, Some(Token::new("hf_from_file")));
        assert_eq!(found.cache, dir.path().join("hub"));
    }

    #[test]
    fn only_template_files_are_fetched() {
        for yes in [
            "tokenizer_config.json",
            "chat_template.jinja",
            "additional_chat_templates/rag.jinja",
        ] {
            assert!(is_template_file(yes), "{yes}");
        }
        for no in [
            "model.safetensors",
            "tokenizer.json",
            "additional_chat_templates/x/y.jinja",
            "a/chat_template.jinja",
        ] {
            assert!(!is_template_file(no), "{no}");
        }
    }
}
