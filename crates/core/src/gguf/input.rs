//! The GGUF file as a bounded stream: every read checks the bytes left first, so a
//! length or count from a corrupt file can neither overrun the file nor make an
//! allocation larger than the file itself (and values kept are capped separately).

use std::io::{BufReader, Read, Seek, SeekFrom};

use super::{GgufError, MAX_DEPTH};

/// Bytes of a fixed-size value type, `None` for strings, arrays and unknown types.
pub(super) fn fixed_size(code: u32) -> Option<u64> {
    match code {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// Bytes of an integer type (not float, not bool).
pub(super) fn integer_size(code: u32) -> Option<u64> {
    matches!(code, 0..=5 | 10 | 11)
        .then(|| fixed_size(code))
        .flatten()
}

/// The file as a bounded stream: a position, the length, the byte order.
pub(super) struct Input<R> {
    inner: BufReader<R>,
    /// Bytes consumed so far.
    pub(super) pos: u64,
    len: u64,
    big_endian: bool,
}

impl<R: Read + Seek> Input<R> {
    pub(super) fn new(inner: BufReader<R>, len: u64) -> Self {
        Input {
            inner,
            pos: 0,
            len,
            big_endian: false,
        }
    }

    pub(super) fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    /// Magic and version; sets the byte order the way gguf-py does (a version whose low
    /// 16 bits are zero was written in the other order).
    pub(super) fn header(&mut self) -> Result<(u32, bool), GgufError> {
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

    pub(super) fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
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

    pub(super) fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        let raw = self.bytes::<4>(what)?;
        Ok(if self.big_endian {
            u32::from_be_bytes(raw)
        } else {
            u32::from_le_bytes(raw)
        })
    }

    pub(super) fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        let raw = self.bytes::<8>(what)?;
        Ok(if self.big_endian {
            u64::from_be_bytes(raw)
        } else {
            u64::from_le_bytes(raw)
        })
    }

    /// An integer value of type `code`; negative ids (llama.cpp's "none") are `None`.
    pub(super) fn integer(&mut self, what: &str, code: u32) -> Result<Option<u64>, GgufError> {
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
    pub(super) fn count(&mut self, what: &str, min_bytes: u64) -> Result<u64, GgufError> {
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
    pub(super) fn string_len(&mut self, what: &str) -> Result<u64, GgufError> {
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

    pub(super) fn string(&mut self, what: &str, limit: u64) -> Result<String, GgufError> {
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

    pub(super) fn skip_string(&mut self, what: &str) -> Result<(), GgufError> {
        let len = self.string_len(what)?;
        self.skip(len)
    }

    /// Moves forward `bytes` (already checked against the length).
    pub(super) fn skip(&mut self, bytes: u64) -> Result<(), GgufError> {
        let step = i64::try_from(bytes).map_err(|_| std::io::Error::other("skip too large"))?;
        self.inner.seek_relative(step)?;
        self.pos += bytes;
        Ok(())
    }

    pub(super) fn seek_to(&mut self, pos: u64) -> Result<(), GgufError> {
        self.inner.seek(SeekFrom::Start(pos))?;
        self.pos = pos;
        Ok(())
    }

    pub(super) fn skip_value(
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
    pub(super) fn skip_array(
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
