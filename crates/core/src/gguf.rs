//! The chat-template metadata of a GGUF file (llama.cpp, Ollama, LM Studio), read from the
//! header alone.
//!
//! A GGUF file is a header (`GGUF`, version, tensor count, key/value count), the key/value
//! metadata, the tensor descriptions, then gigabytes of tensor data. Only the metadata is
//! read, as a stream: values that are not needed are skipped with a seek, and the token
//! list (hundreds of thousands of strings) is skipped once, remembering where every
//! 1,024th token starts, so the bos/eos texts are found by walking at most 1,024 strings;
//! memory stays at the size of the template text. Every length and count is checked
//! against the bytes left in the file before anything is allocated or skipped, so a
//! truncated or corrupt file is an error, never a panic or a huge allocation.
//! Versions 2 and 3 are read, in either byte order; version 1 (32-bit lengths) was
//! dropped by llama.cpp and is refused with a message saying so.

mod input;

use std::io::{BufReader, Read, Seek};

use input::{fixed_size, integer_size, Input};

/// The metadata keys chatplate uses.
const CHAT_TEMPLATE: &str = "tokenizer.chat_template";
const TOKENS: &str = "tokenizer.ggml.tokens";
const BOS_ID: &str = "tokenizer.ggml.bos_token_id";
const EOS_ID: &str = "tokenizer.ggml.eos_token_id";
const ADD_BOS: &str = "tokenizer.ggml.add_bos_token";
const NAME: &str = "general.name";
/// Where the model was converted from, newest key first (gguf-py's `SOURCE_REPO_URL`,
/// the older `huggingface.repository`, then the model's web page).
const SOURCES: [&str; 3] = [
    "general.source.repo_url",
    "general.source.huggingface.repository",
    "general.source.url",
];

/// Longest template text kept (real templates are under 100 KB).
pub const MAX_TEMPLATE_BYTES: u64 = 4 * 1024 * 1024;
/// Longest key, model name or token kept.
const MAX_SHORT_STRING: u64 = 64 * 1024;
/// Most named templates kept.
const MAX_NAMED_TEMPLATES: usize = 64;
/// Deepest array nesting accepted.
pub(crate) const MAX_DEPTH: usize = 4;
/// Read buffer: large enough that skipping short values stays in memory.
const BUFFER: usize = 64 * 1024;

/// What a GGUF file says about its chat template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GgufMetadata {
    /// The format version (2 or 3).
    pub(crate) version: u32,
    /// The file is big-endian.
    pub(crate) big_endian: bool,
    /// `general.name`.
    pub(crate) name: Option<String>,
    /// `tokenizer.chat_template`.
    pub chat_template: Option<String>,
    /// `tokenizer.chat_template.<name>`, in file order.
    pub(crate) named_templates: Vec<(String, String)>,
    /// The text of `tokens[bos_token_id]`.
    pub bos_token: Option<String>,
    /// The text of `tokens[eos_token_id]`.
    pub eos_token: Option<String>,
    /// `tokenizer.ggml.add_bos_token`.
    pub(crate) add_bos_token: Option<bool>,
    /// The Hugging Face model it was converted from (`ORG/NAME`), when its metadata
    /// names one (see [`SOURCES`]).
    pub source_model: Option<String>,
    /// Which of [`SOURCES`] gave `source_model`.
    source_rank: Option<usize>,
}

/// Why a GGUF header could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GgufError {
    /// The first four bytes are not `GGUF`.
    #[error("not a GGUF file (it starts with {0}, not \"GGUF\")")]
    Magic(String),
    /// Version 1 used 32-bit lengths; llama.cpp no longer reads it either.
    #[error("GGUF version 1 is not supported (llama.cpp dropped it too); convert the model again with a current llama.cpp")]
    Version1,
    /// A version this reader does not know.
    #[error("unsupported GGUF version {0} (chatplate reads versions 2 and 3)")]
    Version(u32),
    /// A fixed-size field runs past the end of the file.
    #[error("the file ends at byte {len} while reading {what} at byte {at}: it is truncated")]
    Truncated {
        /// What was being read.
        what: String,
        /// Where.
        at: u64,
        /// The file's length.
        len: u64,
    },
    /// A length or count claims more bytes than the file has left.
    #[error("{what} at byte {at} claims {claimed} but only {left} bytes are left: the file is truncated or corrupt")]
    Corrupt {
        /// What was being read.
        what: String,
        /// Where.
        at: u64,
        /// The claim, e.g. "1152921504606846976 entries".
        claimed: String,
        /// Bytes left in the file.
        left: u64,
    },
    /// A value larger than chatplate keeps.
    #[error("{what} is {len} bytes, more than the {limit} bytes chatplate reads")]
    TooLarge {
        /// Which value.
        what: String,
        /// Its length.
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// A value type that GGUF does not define.
    #[error("{what} at byte {at} has type {code}, which is not a GGUF type: the file is corrupt")]
    BadType {
        /// Which value.
        what: String,
        /// Where.
        at: u64,
        /// The type code.
        code: u32,
    },
    /// A string that is not UTF-8.
    #[error("{0} is not valid UTF-8")]
    Utf8(String),
    /// Arrays of arrays beyond [`MAX_DEPTH`].
    #[error("{0} nests arrays more than {MAX_DEPTH} deep")]
    Nesting(String),
    /// A token id that the vocabulary does not have.
    #[error("{key} is {id}, but the vocabulary has {count} tokens")]
    TokenId {
        /// `tokenizer.ggml.bos_token_id` or `eos_token_id`.
        key: &'static str,
        /// The id.
        id: u64,
        /// Tokens in `tokenizer.ggml.tokens`.
        count: u64,
    },
    /// The operating system failed to read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads the chat-template metadata of the GGUF file `file` (of `len` bytes).
pub fn read_metadata<R: Read + Seek>(file: R, len: u64) -> Result<GgufMetadata, GgufError> {
    let mut input = Input::new(BufReader::with_capacity(BUFFER, file), len);
    let mut found = GgufMetadata::default();
    let (version, big_endian) = input.header()?;
    (found.version, found.big_endian) = (version, big_endian);
    let _tensors = input.count("the tensor count", 24)?;
    let pairs = input.count("the metadata count", 13)?;
    let mut ids = TokenIds::default();
    for index in 0..pairs {
        let key = input.string(&format!("metadata key #{index}"), MAX_SHORT_STRING)?;
        let at = input.pos;
        let code = input.u32(&key)?;
        read_value(&mut input, &key, code, at, &mut found, &mut ids)?;
    }
    ids.look_up(&mut input, &mut found)?;
    Ok(found)
}

/// `ORG/NAME` from `https://huggingface.co/ORG/NAME[/...]` or a bare `ORG/NAME` (the
/// catalog checks it again as a model id before using it).
fn hugging_face_model(text: &str) -> Option<String> {
    let rest = [
        "https://huggingface.co/",
        "http://huggingface.co/",
        "huggingface.co/",
    ]
    .iter()
    .find_map(|prefix| text.strip_prefix(prefix))
    .unwrap_or(text);
    if rest.contains("://") {
        return None;
    }
    let mut parts = rest.split('/').filter(|part| !part.is_empty());
    let (org, name) = (parts.next()?, parts.next()?);
    let plain = |part: &str| {
        !part.starts_with('.')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    (plain(org) && plain(name)).then(|| format!("{org}/{name}"))
}

/// Tokens between two remembered positions in the token list.
const CHECKPOINT_EVERY: u64 = 1024;

/// Which ids to look up in the token list, and where in the file every
/// [`CHECKPOINT_EVERY`]th token starts, so a lookup walks at most that many strings.
#[derive(Debug, Default)]
struct TokenIds {
    count: u64,
    checkpoints: Vec<u64>,
    bos: Option<u64>,
    eos: Option<u64>,
}

fn read_value<R: Read + Seek>(
    input: &mut Input<R>,
    key: &str,
    code: u32,
    at: u64,
    found: &mut GgufMetadata,
    ids: &mut TokenIds,
) -> Result<(), GgufError> {
    const STRING: u32 = 8;
    const ARRAY: u32 = 9;
    const BOOL: u32 = 7;
    match (key, code) {
        (CHAT_TEMPLATE, STRING) => {
            found.chat_template = Some(input.string(key, MAX_TEMPLATE_BYTES)?);
        }
        (NAME, STRING) => found.name = Some(input.string(key, MAX_SHORT_STRING)?),
        _ if SOURCES.contains(&key) && code == STRING => {
            let text = input.string(key, MAX_SHORT_STRING)?;
            let rank = |k: &str| SOURCES.iter().position(|s| *s == k);
            let better = found.source_rank.is_none_or(|held| rank(key) < Some(held));
            if let (Some(model), true) = (hugging_face_model(&text), better) {
                found.source_model = Some(model);
                found.source_rank = rank(key);
            }
        }
        (ADD_BOS, BOOL) => found.add_bos_token = Some(input.bytes::<1>(key)?[0] != 0),
        (BOS_ID | EOS_ID, _) if integer_size(code).is_some() => {
            let id = input.integer(key, code)?;
            *(if key == BOS_ID {
                &mut ids.bos
            } else {
                &mut ids.eos
            }) = id;
        }
        (TOKENS, ARRAY) => {
            let element = input.u32(key)?;
            let count = input.count(key, fixed_size(element).unwrap_or(8))?;
            if element != STRING {
                return input.skip_array(key, element, count, 1);
            }
            ids.count = count;
            ids.checkpoints.clear();
            for index in 0..count {
                if index % CHECKPOINT_EVERY == 0 {
                    ids.checkpoints.push(input.pos);
                }
                input.skip_string(key)?;
            }
        }
        _ if key.starts_with("tokenizer.chat_template.") && code == STRING => {
            let name = &key["tokenizer.chat_template.".len()..];
            let source = input.string(key, MAX_TEMPLATE_BYTES)?;
            if found.named_templates.len() < MAX_NAMED_TEMPLATES {
                found.named_templates.push((name.to_string(), source));
            }
        }
        _ => input.skip_value(key, code, at, 0)?,
    }
    Ok(())
}

impl TokenIds {
    /// The texts of the bos and eos ids, each found from the nearest checkpoint.
    fn look_up<R: Read + Seek>(
        &self,
        input: &mut Input<R>,
        found: &mut GgufMetadata,
    ) -> Result<(), GgufError> {
        if self.checkpoints.is_empty() {
            return Ok(());
        }
        found.bos_token = self.token(input, BOS_ID, self.bos)?;
        found.eos_token = self.token(input, EOS_ID, self.eos)?;
        Ok(())
    }

    fn token<R: Read + Seek>(
        &self,
        input: &mut Input<R>,
        key: &'static str,
        id: Option<u64>,
    ) -> Result<Option<String>, GgufError> {
        let Some(id) = id else {
            return Ok(None);
        };
        if id >= self.count {
            return Err(GgufError::TokenId {
                key,
                id,
                count: self.count,
            });
        }
        let checkpoint = (id / CHECKPOINT_EVERY) as usize;
        input.seek_to(self.checkpoints[checkpoint])?;
        for _ in 0..id % CHECKPOINT_EVERY {
            input.skip_string(TOKENS)?;
        }
        input
            .string(&format!("token #{id}"), MAX_SHORT_STRING)
            .map(Some)
    }
}
