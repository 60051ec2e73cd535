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
use chatplate_render::{ContinueFinal, Conversation};

mod fingerprint;
pub(crate) mod scan;

pub use fingerprint::template_sha256;

/// The format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Where a session's template comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TemplateRef {
    /// A template shipped inside chatplate (`templates/`), by file stem.
    Bundled(String),
    /// A file or folder, relative to the session file: a `.jinja`, a Hugging Face model
    /// folder or any file in one, a `.gguf`.
    Path(String),
    /// A named template of a model with several (a model folder or a `.gguf`).
    Named {
        /// The model folder, one of its files, or the `.gguf`, relative to the session file.
        path: String,
        /// The entry name (`default`, `tool_use`, ...).
        name: String,
    },
    /// The template source itself.
    Source(String),
    /// A model id resolved through the local Hugging Face cache (fetched from the Hub
    /// when missing and online), with what it resolved to when the session was saved.
    Model {
        /// `ORG/NAME`.
        id: String,
        /// Branch, tag or commit; absent means `main`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
        /// The commit the revision pointed at when recorded: `check` says when the
        /// cache now resolves it to another.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot: Option<String>,
        /// A named template (`tool_use`, ...); absent lets the tools choose, as
        /// transformers does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// The outcome a fixture pins down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Expected {
    /// The exact prompt, byte for byte.
    Prompt(String),
    /// Rendering must fail; the text, when not empty, must appear in the error message.
    Error(String),
    /// Rendering must fail with exactly this Python exception, written as Python's
    /// traceback ends (`TypeError: can only concatenate str (not "int") to str`): the
    /// class transformers raised and its message. `import-corpus` writes these.
    Exception(String),
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
            chatplate_render::visible::quoted(&text)
        ))),
    }
}

/// One session / fixture, in file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Format version; must be [`FORMAT_VERSION`].
    #[serde(deserialize_with = "read_version")]
    pub(crate) version: u32,
    /// The chat template.
    #[serde(deserialize_with = "fingerprint::read_template")]
    pub template: TemplateRef,
    /// `template.sha256`: the SHA-256 (lower-case hex) of the template text when the
    /// session was saved or blessed, so `check` can tell a changed template from a
    /// changed render. Written inside the `template` object (see `fingerprint`).
    #[serde(skip)]
    pub template_sha256: Option<String>,
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
    /// Keys of an imported request body that are not part of the prompt (`model`,
    /// `temperature`, `stream`, ...), kept so `chatplate export --openai` writes them back.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub request: Map<String, Json>,
    /// The model's tokenizer: a model folder, `tokenizer.json` or `tokenizer_config.json`,
    /// relative to the session file (for `chatplate tokens` and `expected_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// What rendering must produce; absent in a session that is not a test yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
    /// What tokenizing the prompt must give: a token count, or the exact ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_tokens: Option<ExpectedTokens>,
    /// `chatplate check` also asserts that one more turn keeps the prompt a byte prefix
    /// (see `inspect::prefix_stability`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) assert_prefix_stable: bool,
    /// The `response_template` that parses the model's raw output back into a message
    /// (`chatplate parse`, `assert_round_trip`): the template object itself, or the path
    /// of a JSON file holding it, relative to the session file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_template: Option<Json>,
    /// `chatplate check` also parses each assistant message, as the model would have
    /// generated it, back into a message and compares it with the original.
    #[serde(default, skip_serializing_if = "is_false")]
    pub assert_round_trip: bool,
}

/// `expected_tokens` as written: a count (`1234`) or the ids (`[128000, 9906, ...]`).
///
/// (De)serialized by hand through `serde_json::Value`, not as an untagged enum: untagged
/// enums holding numbers break when serde_json's `arbitrary_precision` feature is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedTokens {
    /// The number of tokens.
    Count(usize),
    /// The exact token ids.
    Ids(Vec<u32>),
}

impl Serialize for ExpectedTokens {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ExpectedTokens::Count(count) => serializer.serialize_u64(*count as u64),
            ExpectedTokens::Ids(ids) => ids.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ExpectedTokens {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let wrong =
            || D::Error::custom("\"expected_tokens\" must be a token count or a list of token ids");
        let as_id = |value: &Json| value.as_u64().and_then(|id| u32::try_from(id).ok());
        match Json::deserialize(deserializer)? {
            Json::Number(count) => count
                .as_u64()
                .and_then(|c| usize::try_from(c).ok())
                .map(ExpectedTokens::Count)
                .ok_or_else(wrong),
            Json::Array(ids) => ids
                .iter()
                .map(as_id)
                .collect::<Option<Vec<u32>>>()
                .map(ExpectedTokens::Ids)
                .ok_or_else(wrong),
            _ => Err(wrong()),
        }
    }
}

fn is_false(flag: &bool) -> bool {
    !flag
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
#[non_exhaustive]
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
            template_sha256: None,
            bos_token: None,
            eos_token: None,
            add_generation_prompt: true,
            continue_final_message: ContinueSetting::default(),
            messages: vec![Message::new("user", "Hello!")],
            tools: None,
            documents: None,
            variables: Map::new(),
            clock: None,
            request: Map::new(),
            tokenizer: None,
            expected: None,
            expected_tokens: None,
            assert_prefix_stable: false,
            response_template: None,
            assert_round_trip: false,
        }
    }

    /// Parses session JSON; errors name `path` with line and column. Numbers are kept
    /// exactly as written (serde_json's `arbitrary_precision`), and a key written twice
    /// in one object is an error rather than a silent loss.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SessionError> {
        let mut session: Session = serde_json::from_str(text).map_err(|err| {
            let (line, column) = scan::error_position(text, &err);
            SessionError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: chatplate_render::visible::message(&scan::strip_position(
                    &err.to_string(),
                )),
            }
        })?;
        if let Some(duplicate) = scan::duplicate_key(text) {
            return Err(SessionError::Invalid {
                path: path.to_path_buf(),
                line: duplicate.line,
                column: duplicate.column,
                message: duplicate.message(),
            });
        }
        session.template_sha256 = fingerprint::recorded(text);
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
        let mut text = match &self.template_sha256 {
            None => serde_json::to_string_pretty(self),
            Some(hash) => serde_json::to_value(self).and_then(|mut value| {
                fingerprint::write_into(&mut value, hash);
                serde_json::to_string_pretty(&value)
            }),
        }
        .expect("sessions always serialize");
        text.push('\n');
        text
    }

    /// Records the fingerprint of the template text this session is rendered with
    /// (`template.sha256`), when saving or blessing it. A `source` template is the
    /// fixture's own text, so it gets none.
    pub fn record_template(&mut self, source: &str) {
        self.template_sha256 = match self.template {
            TemplateRef::Source(_) => None,
            _ => Some(template_sha256(source)),
        };
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
        Ok(Conversation::new(
            self.messages
                .iter()
                .map(|m| Json::Object(m.0.clone()))
                .collect(),
        )
        .with_tools(self.tools.clone())
        .with_documents(self.documents.clone())
        .with_generation_prompt(self.add_generation_prompt)
        .with_continue_final(match &self.continue_final_message {
            ContinueSetting::Flag(false) => ContinueFinal::Off,
            ContinueSetting::Flag(true) => ContinueFinal::content(),
            ContinueSetting::Field(name) => ContinueFinal::Field(name.clone()),
        })
        .with_variables(variables)
        .with_clock(self.parsed_clock()?))
    }

    /// The fixed clock, parsed.
    pub(crate) fn parsed_clock(&self) -> Result<Option<jiff::civil::DateTime>, SessionError> {
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
/// partial one: a temporary file beside the target, synced, then renamed over it, and
/// the folder synced so the rename survives a crash.
///
/// The file keeps what it was: a symlink stays a symlink (the file it points to is
/// replaced), and an existing file's permissions and (where allowed) owner are kept.
/// Temporary files that interrupted saves of the same file left behind are removed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = follow_symlinks(path)?;
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    remove_stale_temporaries(dir, &name);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let previous = fs::metadata(&target).ok();
    let result = (|| {
        let mut file = create_private(&temp, previous.is_some())?;
        file.write_all(bytes)?;
        if let Some(previous) = &previous {
            keep_permissions(&file, previous)?;
        }
        file.sync_all()?;
        fs::rename(&temp, &target)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The file a chain of symlinks ends at (which may not exist yet).
fn follow_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(link),
                    None => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// A new temporary file; readable by the owner only while it replaces an existing file
/// (whose permissions it gets before the rename), else with the default permissions.
fn create_private(temp: &Path, replacing: bool) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if replacing {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = replacing;
    options.open(temp)
}

/// Gives `file` the permissions (and on Unix the owner, where the OS allows) of the file
/// it replaces.
fn keep_permissions(file: &fs::File, previous: &fs::Metadata) -> std::io::Result<()> {
    file.set_permissions(previous.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Only root may give a file away; others keep what they can (the group, if they
        // belong to it). A refused change is not worth failing the save.
        let _ = std::os::unix::fs::fchown(file, Some(previous.uid()), Some(previous.gid()));
        let _ = std::os::unix::fs::fchown(file, None, Some(previous.gid()));
    }
    Ok(())
}

/// Makes a rename in `dir` durable (best effort: not every platform can sync a folder).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Removes `.NAME.PID.tmp` files left by interrupted saves of `name` in `dir`, except
/// those of processes still running (they may be saving right now).
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.filter_map(Result::ok) {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !process_running(pid)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (this one always does; elsewhere only Linux can tell,
/// so other systems treat every other process's leftover as stale).
fn process_running(pid: u32) -> bool {
    pid == std::process::id()
        || (cfg!(target_os = "linux") && Path::new("/proc").join(pid.to_string()).exists())
}
