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

use std::io::{BufReader, Read, Seek, SeekFrom};

/// The metadata keys chatplate uses.
const CHAT_TEMPLATE: &str = "tokenizer.chat_template";
const TOKENS: &str = "tokenizer.ggml.tokens";
const BOS_ID: &str = "tokenizer.ggml.bos_token_id";
const EOS_ID: &str = "tokenizer.ggml.eos_token_id";
const ADD_BOS: &str = "tokenizer.ggml.add_bos_token";
const NAME: &str = "general.name";

/// Longest template text kept (real templates are under 100 KB).
pub const MAX_TEMPLATE_BYTES: u64 = 4 * 1024 * 1024;
/// Longest key, model name or token kept.
const MAX_SHORT_STRING: u64 = 64 * 1024;
/// Most named templates kept.
const MAX_NAMED_TEMPLATES: usize = 64;
/// Deepest array nesting accepted.
const MAX_DEPTH: usize = 4;
/// Read buffer: large enough that skipping short values stays in memory.
const BUFFER: usize = 64 * 1024;

/// What a GGUF file says about its chat template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GgufMetadata {
    /// The format version (2 or 3).
    pub version: u32,
    /// The file is big-endian.
    pub big_endian: bool,
    /// `general.name`.
    pub name: Option<String>,
    /// `tokenizer.chat_template`.
    pub chat_template: Option<String>,
    /// `tokenizer.chat_template.<name>`, in file order.
    pub named_templates: Vec<(String, String)>,
    /// The text of `tokens[bos_token_id]`.
    pub bos_token: Option<String>,
    /// The text of `tokens[eos_token_id]`.
    pub eos_token: Option<String>,
    /// `tokenizer.ggml.add_bos_token`.
    pub add_bos_token: Option<bool>,
}

/// Why a GGUF header could not be read.
#[derive(Debug, thiserror::Error)]
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
            found.chat_template = Some(input.string(key, MAX_TEMPLATE_BYTES)?)
        }
        (NAME, STRING) => found.name = Some(input.string(key, MAX_SHORT_STRING)?),
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

/// Bytes of a fixed-size value type, `None` for strings, arrays and unknown types.
fn fixed_size(code: u32) -> Option<u64> {
    match code {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// Bytes of an integer type (not float, not bool).
fn integer_size(code: u32) -> Option<u64> {
    matches!(code, 0..=5 | 10 | 11)
        .then(|| fixed_size(code))
        .flatten()
}

/// The file as a bounded stream: a position, the length, the byte order.
struct Input<R> {
    inner: BufReader<R>,
    pos: u64,
    len: u64,
    big_endian: bool,
}

impl<R: Read + Seek> Input<R> {
    fn new(inner: BufReader<R>, len: u64) -> Self {
        Input {
            inner,
            pos: 0,
            len,
            big_endian: false,
        }
    }

    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    /// Magic and version; sets the byte order the way gguf-py does (a version whose low
    /// 16 bits are zero was written in the other order).
    fn header(&mut self) -> Result<(u32, bool), GgufError> {
        let magic = self.bytes::<4>("the magic number")?;
        if &magic != b"GGUF" {
            return Err(GgufError::Magic(format!(
                "{:?}",
                String::from_utf8_lossy(&magic)
            )));
        }
        let raw = self.bytes::<4>("the version")?;
        let little = u32::from_le_bytes(raw);
        self.big_endian = little & 0xFFFF == 0 && little != 0;
        let version = if self.big_endian {
            u32::from_be_bytes(raw)
        } else {
            little
        };
        match version {
            2 | 3 => Ok((version, self.big_endian)),
            1 => Err(GgufError::Version1),
            other => Err(GgufError::Version(other)),
        }
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        if self.left() < N as u64 {
            return Err(GgufError::Truncated {
                what: what.to_string(),
                at: self.pos,
                len: self.len,
            });
        }
        let mut buffer = [0u8; N];
        self.inner
            .read_exact(&mut buffer)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::UnexpectedEof => GgufError::Truncated {
                    what: what.to_string(),
                    at: self.pos,
                    len: self.len,
                },
                _ => GgufError::Io(err),
            })?;
        self.pos += N as u64;
        Ok(buffer)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        let raw = self.bytes::<4>(what)?;
        Ok(if self.big_endian {
            u32::from_be_bytes(raw)
        } else {
            u32::from_le_bytes(raw)
        })
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        let raw = self.bytes::<8>(what)?;
        Ok(if self.big_endian {
            u64::from_be_bytes(raw)
        } else {
            u64::from_le_bytes(raw)
        })
    }

    /// An integer value of type `code`; negative ids (llama.cpp's "none") are `None`.
    fn integer(&mut self, what: &str, code: u32) -> Result<Option<u64>, GgufError> {
        let size = integer_size(code).unwrap_or(8) as usize;
        let mut raw = [0u8; 8];
        for byte in raw.iter_mut().take(size) {
            *byte = self.bytes::<1>(what)?[0];
        }
        if self.big_endian {
            raw[..size].reverse();
        }
        let negative = matches!(code, 1 | 3 | 5 | 11) && raw[size - 1] & 0x80 != 0;
        Ok((!negative).then(|| u64::from_le_bytes(raw)))
    }

    /// A count whose every entry takes at least `min_bytes`: more than the file can hold
    /// is corrupt, before anything is allocated for it.
    fn count(&mut self, what: &str, min_bytes: u64) -> Result<u64, GgufError> {
        let at = self.pos;
        let count = self.u64(what)?;
        if count.saturating_mul(min_bytes) > self.left() {
            return Err(GgufError::Corrupt {
                what: what.to_string(),
                at,
                claimed: format!("{count} entries"),
                left: self.left(),
            });
        }
        Ok(count)
    }

    /// A string's length, checked against what is left.
    fn string_len(&mut self, what: &str) -> Result<u64, GgufError> {
        let at = self.pos;
        let len = self.u64(what)?;
        if len > self.left() {
            return Err(GgufError::Corrupt {
                what: what.to_string(),
                at,
                claimed: format!("a {len}-byte string"),
                left: self.left(),
            });
        }
        Ok(len)
    }

    fn string(&mut self, what: &str, limit: u64) -> Result<String, GgufError> {
        let len = self.string_len(what)?;
        if len > limit {
            return Err(GgufError::TooLarge {
                what: what.to_string(),
                len,
                limit,
            });
        }
        let mut bytes = vec![0u8; len as usize];
        self.inner.read_exact(&mut bytes)?;
        self.pos += len;
        String::from_utf8(bytes).map_err(|_| GgufError::Utf8(what.to_string()))
    }

    fn skip_string(&mut self, what: &str) -> Result<(), GgufError> {
        let len = self.string_len(what)?;
        self.skip(len)
    }

    /// Moves forward `bytes` (already checked against the length).
    fn skip(&mut self, bytes: u64) -> Result<(), GgufError> {
        let step = i64::try_from(bytes).map_err(|_| std::io::Error::other("skip too large"))?;
        self.inner.seek_relative(step)?;
        self.pos += bytes;
        Ok(())
    }

    fn seek_to(&mut self, pos: u64) -> Result<(), GgufError> {
        self.inner.seek(SeekFrom::Start(pos))?;
        self.pos = pos;
        Ok(())
    }

    fn skip_value(
        &mut self,
        what: &str,
        code: u32,
        at: u64,
        depth: usize,
    ) -> Result<(), GgufError> {
        if let Some(size) = fixed_size(code) {
            if size > self.left() {
                return Err(GgufError::Truncated {
                    what: what.to_string(),
                    at,
                    len: self.len,
                });
            }
            return self.skip(size);
        }
        match code {
            8 => self.skip_string(what),
            9 => {
                let element = self.u32(what)?;
                let count = self.count(what, fixed_size(element).unwrap_or(8))?;
                self.skip_array(what, element, count, depth + 1)
            }
            _ => Err(GgufError::BadType {
                what: what.to_string(),
                at,
                code,
            }),
        }
    }

    /// Skips `count` elements of type `element` (the count is already checked).
    fn skip_array(
        &mut self,
        what: &str,
        element: u32,
        count: u64,
        depth: usize,
    ) -> Result<(), GgufError> {
        if depth > MAX_DEPTH {
            return Err(GgufError::Nesting(what.to_string()));
        }
        if let Some(size) = fixed_size(element) {
            return self.skip(size * count);
        }
        for _ in 0..count {
            let at = self.pos;
            self.skip_value(what, element, at, depth)?;
        }
        Ok(())
    }
}
