//! The session file: one conversation, its settings and the expected prompt.
//!
//! A session doubles as a golden test (a "fixture"): `chatplate check` re-renders it and
//! compares with `expected`. The format is versioned JSON, written pretty with a stable
//! key order, and saved atomically so a failed save never damages the previous file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::files::{self, FileError, MAX_SESSION_BYTES};
use chatplate_render::{ContinueFinal, Conversation};

mod atomic_write;
pub(crate) mod compact;
mod fields;
mod fingerprint;
mod message;
pub(crate) mod scan;
mod token_round_trip;

pub use atomic_write::write_atomically;
pub use compact::{load_bound, LOAD_FLOOR, LOAD_HALVES};
pub use fields::{ContinueSetting, ExpectedTokens};
pub use fingerprint::template_sha256;
pub use message::Message;
pub use token_round_trip::TokenRoundTripAssertion;

use fields::{is_false, is_off, read_clock, read_version};

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
    #[serde(deserialize_with = "compact::list")]
    pub messages: Vec<Message>,
    /// Tool definitions; absent means `tools=None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact::optional_list"
    )]
    pub tools: Option<Vec<Json>>,
    /// Retrieval documents; absent means `documents=None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact::optional_list"
    )]
    pub documents: Option<Vec<Json>>,
    /// Extra template variables (`enable_thinking`, `date_string`, ...).
    #[serde(
        default,
        skip_serializing_if = "Map::is_empty",
        deserialize_with = "compact::object"
    )]
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
    #[serde(
        default,
        skip_serializing_if = "Map::is_empty",
        deserialize_with = "compact::object"
    )]
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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact::optional_value"
    )]
    pub response_template: Option<Json>,
    /// `chatplate check` also parses each assistant message, as the model would have
    /// generated it, back into a message and compares it with the original.
    #[serde(default, skip_serializing_if = "is_false")]
    pub assert_round_trip: bool,
    /// `chatplate check` also streams each assistant message's generated text in
    /// several chunkings and asserts each parses as it does whole.
    #[serde(default, skip_serializing_if = "is_false")]
    pub assert_stream_round_trip: bool,
    /// `chatplate check` also proves that tokens survive the round trip: `true` for each
    /// assistant message as rendered, or the output a model sampled after the messages
    /// (see [`TokenRoundTripAssertion`] and `chatplate roundtrip`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "token_round_trip::read"
    )]
    pub assert_token_round_trip: Option<TokenRoundTripAssertion>,
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
            assert_stream_round_trip: false,
            assert_token_round_trip: None,
        }
    }

    /// Parses session JSON; errors name `path` with line and column. Numbers are kept
    /// exactly as written (serde_json's `arbitrary_precision`), and a key written twice
    /// in one object is an error rather than a silent loss. The values may take at most
    /// [`LOAD_HALVES`] halves of the text's size in memory (at least [`LOAD_FLOOR`]); denser text is
    /// refused where it crosses that bound.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SessionError> {
        let parsed = compact::bounded(text.len(), || serde_json::from_str(text));
        let mut session: Session = parsed.map_err(|err| {
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

    /// The file text: pretty JSON with a trailing newline, control characters escaped
    /// ([`crate::machine_output`]).
    pub fn to_json(&self) -> String {
        let mut text =
            crate::machine_output::to_json_pretty(self).expect("sessions always serialize");
        if let Some(hash) = &self.template_sha256 {
            fingerprint::write_into(&mut text, hash);
        }
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
        let mut conversation = self.settings()?;
        conversation.messages = self
            .messages
            .iter()
            .map(|m| Json::Object(m.0.clone()))
            .collect();
        Ok(conversation)
    }

    /// [`Session::conversation`], taking the messages instead of copying them.
    pub fn into_conversation(mut self) -> Result<Conversation, SessionError> {
        let mut conversation = self.settings()?;
        conversation.messages = std::mem::take(&mut self.messages)
            .into_iter()
            .map(|message| Json::Object(message.0))
            .collect();
        Ok(conversation)
    }

    /// [`Session::conversation`] without its messages: the settings a render of them
    /// needs (tools, documents, variables, ...), for rendering the session's messages
    /// where they are, without copying them ([`Session::message_objects`]).
    pub fn settings(&self) -> Result<Conversation, SessionError> {
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
        Ok(Conversation::new(Vec::new())
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

    /// The messages as the JSON objects they are, borrowed: with
    /// [`Session::settings`], a render input that copies no message
    /// ([`ConversationInput::Parts`](chatplate_render::ConversationInput::Parts)).
    pub fn message_objects(&self) -> Vec<&Map<String, Json>> {
        self.messages.iter().map(|message| &message.0).collect()
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
