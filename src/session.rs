//! The session file: one conversation, its settings and the expected prompt.
//!
//! A session doubles as a golden test (a "fixture"): `chatplate check` re-renders it and
//! compares with `expected`. The format is versioned JSON, written pretty with a stable
//! key order, and saved atomically so a failed save never damages the previous file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::files::{self, FileError, MAX_SESSION_BYTES};
use crate::render::{ContinueFinal, Conversation};

mod scan;

/// The format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Where a session's template comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TemplateRef {
    /// A template shipped inside chatplate (`templates/`), by file stem.
    Bundled(String),
    /// A file, relative to the session file: `.jinja`, `chat_template.jinja` or
    /// `tokenizer_config.json`.
    Path(String),
    /// A named template inside a `tokenizer_config.json` that lists several.
    Named {
        /// The `tokenizer_config.json`, relative to the session file.
        path: String,
        /// The entry name (`default`, `tool_use`, ...).
        name: String,
    },
    /// The template source itself.
    Source(String),
}

/// The outcome a fixture pins down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Expected {
    /// The exact prompt, byte for byte.
    Prompt(String),
    /// Rendering must fail; the text, when not empty, must appear in the error message.
    Error(String),
}

/// `continue_final_message` as written in the file: a flag or a field name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ContinueSetting {
    /// `true` continues `content`, `false` is off.
    Flag(bool),
    /// Continue this field of the final message.
    Field(String),
}

impl Default for ContinueSetting {
    fn default() -> Self {
        ContinueSetting::Flag(false)
    }
}

impl<'de> Deserialize<'de> for ContinueSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Json::deserialize(deserializer)? {
            Json::Bool(flag) => Ok(ContinueSetting::Flag(flag)),
            Json::String(field) => Ok(ContinueSetting::Field(field)),
            other => Err(D::Error::custom(format!(
                "\"continue_final_message\" must be true, false or the name of a field \
                 (like \"content\"), not {}",
                json_kind(&other)
            ))),
        }
    }
}

/// How a JSON value is described in a message.
fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// `version`: the number 1, checked while reading so the error has a position.
fn read_version<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    use serde::de::Error;
    let value = Json::deserialize(deserializer)?;
    match value.as_u64() {
        Some(found) if found == u64::from(FORMAT_VERSION) => Ok(FORMAT_VERSION),
        Some(found) => Err(D::Error::custom(format!(
            "unsupported session version {found} (this chatplate reads version {FORMAT_VERSION})"
        ))),
        None => Err(D::Error::custom(format!(
            "\"version\" must be the number {FORMAT_VERSION}, not {}",
            json_kind(&value)
        ))),
    }
}

/// `clock`: a `YYYY-MM-DDTHH:MM:SS` date-time, checked while reading.
fn read_clock<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    let text = String::deserialize(deserializer)?;
    match text.parse::<jiff::civil::DateTime>() {
        Ok(_) => Ok(Some(text)),
        Err(_) => Err(D::Error::custom(format!(
            "clock {} is not a date-time like 2026-01-15T00:00:00",
            crate::visible::quoted(&text)
        ))),
    }
}

/// One session / fixture, in file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Format version; must be [`FORMAT_VERSION`].
    #[serde(deserialize_with = "read_version")]
    pub version: u32,
    /// The chat template.
    pub template: TemplateRef,
    /// `bos_token` passed to the template (overrides the template's own metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bos_token: Option<String>,
    /// `eos_token` passed to the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eos_token: Option<String>,
    /// Open an assistant turn at the end.
    #[serde(default)]
    pub add_generation_prompt: bool,
    /// Leave the final message open.
    #[serde(default, skip_serializing_if = "is_off")]
    pub continue_final_message: ContinueSetting,
    /// The conversation: OpenAI / Hugging Face message objects, kept key for key.
    pub messages: Vec<Message>,
    /// Tool definitions; absent means `tools=None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Json>>,
    /// Retrieval documents; absent means `documents=None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<Vec<Json>>,
    /// Extra template variables (`enable_thinking`, `date_string`, ...).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub variables: Map<String, Json>,
    /// Fixed time for `strftime_now`, `YYYY-MM-DDTHH:MM:SS`; absent means the real clock.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "read_clock"
    )]
    pub clock: Option<String>,
    /// What rendering must produce; absent in a session that is not a test yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
}

fn is_off(setting: &ContinueSetting) -> bool {
    *setting == ContinueSetting::Flag(false)
}

/// A message: a JSON object with a string `role`, every other key kept as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Message(pub Map<String, Json>);

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let fields = Map::<String, Json>::deserialize(deserializer)?;
        match fields.get("role") {
            Some(Json::String(_)) => {}
            Some(_) => return Err(D::Error::custom("message \"role\" must be a string")),
            None => return Err(D::Error::custom("message has no \"role\"")),
        }
        match fields.get("content") {
            None | Some(Json::Null | Json::String(_) | Json::Array(_)) => Ok(Message(fields)),
            Some(_) => Err(D::Error::custom(
                "message \"content\" must be a string, a list of parts or null",
            )),
        }
    }
}

impl Message {
    /// A message with just a role and text content.
    pub fn new(role: &str, content: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("role".into(), Json::from(role));
        fields.insert("content".into(), Json::from(content));
        Message(fields)
    }

    /// The role (validated to be a string on load).
    pub fn role(&self) -> &str {
        self.0
            .get("role")
            .and_then(Json::as_str)
            .unwrap_or_default()
    }
}

/// Why a session could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The file is not one chatplate will read (a FIFO, too large, not UTF-8, ...).
    #[error(transparent)]
    File(#[from] FileError),
    /// The file could not be read or written.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (shown in the message, so not chained as a `source` too).
        cause: std::io::Error,
    },
    /// The file is not a valid session; `line`/`column` are 1-based.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file's `version` is not one this build understands.
    #[error("{path}: unsupported session version {found} (this chatplate reads version {FORMAT_VERSION})")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
    },
    /// The clock is not a `YYYY-MM-DDTHH:MM:SS` date-time.
    #[error("clock {0:?} is not a date-time like 2026-01-15T00:00:00")]
    Clock(String),
}

impl Session {
    /// A new session on `template` with one user message.
    pub fn new(template: TemplateRef) -> Self {
        Session {
            version: FORMAT_VERSION,
            template,
            bos_token: None,
            eos_token: None,
            add_generation_prompt: true,
            continue_final_message: ContinueSetting::default(),
            messages: vec![Message::new("user", "Hello!")],
            tools: None,
            documents: None,
            variables: Map::new(),
            clock: None,
            expected: None,
        }
    }

    /// Parses session JSON; errors name `path` with line and column. Numbers are kept
    /// exactly as written (serde_json's `arbitrary_precision`), and a key written twice
    /// in one object is an error rather than a silent loss.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SessionError> {
        let session: Session = serde_json::from_str(text).map_err(|err| {
            let (line, column) = scan::error_position(text, &err);
            SessionError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: crate::visible::message(&scan::strip_position(&err.to_string())),
            }
        })?;
        if let Some((offset, key)) = scan::first_duplicate_key(text) {
            let (line, column) = scan::line_column(text, offset);
            return Err(SessionError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: format!(
                    "duplicate key {} (each key may appear once per object)",
                    crate::visible::quoted(&key)
                ),
            });
        }
        Ok(session)
    }

    /// Reads and parses a session file (a regular file of at most
    /// [`MAX_SESSION_BYTES`]).
    pub fn load(path: &Path) -> Result<Self, SessionError> {
        let bytes = files::read_bytes(path, MAX_SESSION_BYTES)?;
        let text = files::utf8_text(path, bytes)?;
        Session::parse(&text, path)
    }

    /// The file text: pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("sessions always serialize");
        text.push('\n');
        text
    }

    /// Writes atomically: a temporary file beside `path`, synced, then renamed over it.
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        write_atomically(path, self.to_json().as_bytes()).map_err(|source| SessionError::Io {
            path: path.to_path_buf(),
            cause: source,
        })
    }

    /// The render input: bos/eos first, then `variables` (which win on a clash).
    pub fn conversation(&self) -> Result<Conversation, SessionError> {
        let mut variables = Map::new();
        if let Some(bos) = &self.bos_token {
            variables.insert("bos_token".into(), Json::from(bos.as_str()));
        }
        if let Some(eos) = &self.eos_token {
            variables.insert("eos_token".into(), Json::from(eos.as_str()));
        }
        for (key, value) in &self.variables {
            variables.insert(key.clone(), value.clone());
        }
        Ok(Conversation {
            messages: self
                .messages
                .iter()
                .map(|m| Json::Object(m.0.clone()))
                .collect(),
            tools: self.tools.clone(),
            documents: self.documents.clone(),
            add_generation_prompt: self.add_generation_prompt,
            continue_final_message: match &self.continue_final_message {
                ContinueSetting::Flag(false) => ContinueFinal::Off,
                ContinueSetting::Flag(true) => ContinueFinal::content(),
                ContinueSetting::Field(name) => ContinueFinal::Field(name.clone()),
            },
            variables,
            clock: self.parsed_clock()?,
        })
    }

    /// The fixed clock, parsed.
    pub fn parsed_clock(&self) -> Result<Option<jiff::civil::DateTime>, SessionError> {
        self.clock
            .as_deref()
            .map(|text| {
                text.parse()
                    .map_err(|_| SessionError::Clock(text.to_string()))
            })
            .transpose()
    }
}

/// Writes `bytes` to `path` so that readers see either the old or the new file, never a
/// partial one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}
