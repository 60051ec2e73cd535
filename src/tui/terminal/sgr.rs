//! Basic colours on the wire: crossterm writes even the 16 named colours as 256-colour
//! codes (`38;5;9`), which 8- and 16-colour terminals show wrong or not at all. This
//! writer sits between the backend and the terminal and rewrites those to the basic SGR
//! codes (`31`, `91`, `41`, `101`); everything else passes through unchanged. It keeps
//! its state across writes, so an escape sequence split between two writes is handled.

use std::io::{self, Write};

/// Longest escape sequence held back while it is incomplete.
const MAX_SEQUENCE: usize = 64;

/// A writer that rewrites 256-colour SGR codes below 16 to basic ones.
#[derive(Debug)]
pub struct BasicColors<W: Write> {
    inner: W,
    /// An escape sequence seen so far (from `ESC`), not yet written.
    pending: Vec<u8>,
}

impl<W: Write> BasicColors<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        BasicColors {
            inner,
            pending: Vec::new(),
        }
    }

    fn finish_sequence(&mut self) -> io::Result<()> {
        let sequence = std::mem::take(&mut self.pending);
        match sequence
            .strip_prefix(b"\x1b[")
            .and_then(|s| s.strip_suffix(b"m"))
        {
            Some(params) => {
                let rewritten = rewrite(params);
                self.inner.write_all(b"\x1b[")?;
                self.inner.write_all(rewritten.as_bytes())?;
                self.inner.write_all(b"m")
            }
            None => self.inner.write_all(&sequence),
        }
    }
}

/// SGR parameters with `38;5;N` / `48;5;N` (N < 16) replaced by basic codes.
pub fn rewrite(params: &[u8]) -> String {
    let text = String::from_utf8_lossy(params);
    let parts: Vec<&str> = text.split(';').collect();
    let mut out: Vec<String> = Vec::new();
    let mut index = 0;
    while index < parts.len() {
        let basic = match (parts[index], parts.get(index + 1), parts.get(index + 2)) {
            (kind @ ("38" | "48"), Some(&"5"), Some(n)) => n
                .parse::<u8>()
                .ok()
                .filter(|n| *n < 16)
                .map(|n| basic_code(kind == "48", n)),
            _ => None,
        };
        match basic {
            Some(code) => {
                out.push(code.to_string());
                index += 3;
            }
            None => {
                out.push(parts[index].to_string());
                index += 1;
            }
        }
    }
    out.join(";")
}

fn basic_code(background: bool, n: u8) -> u8 {
    let base = if n < 8 { 30 + n } else { 90 + n - 8 };
    if background {
        base + 10
    } else {
        base
    }
}

impl<W: Write> Write for BasicColors<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut plain_start = 0;
        for (index, &byte) in buf.iter().enumerate() {
            if self.pending.is_empty() {
                if byte == 0x1b {
                    self.inner.write_all(&buf[plain_start..index])?;
                    self.pending.push(byte);
                }
                continue;
            }
            self.pending.push(byte);
            let len = self.pending.len();
            let done = match (len, byte) {
                (2, b'[') => false,
                (2, _) => true,
                (_, 0x40..=0x7e) => true,
                _ => len >= MAX_SEQUENCE,
            };
            if done {
                self.finish_sequence()?;
            }
            plain_start = index + 1;
        }
        if self.pending.is_empty() {
            self.inner.write_all(&buf[plain_start..])?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() && self.pending.len() >= MAX_SEQUENCE {
            self.finish_sequence()?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{rewrite, BasicColors};

    #[test]
    fn named_colours_become_basic_codes() {
        assert_eq!(rewrite(b"38;5;9"), "91");
        assert_eq!(rewrite(b"38;5;1;48;5;12"), "31;104");
        assert_eq!(rewrite(b"38;5;200"), "38;5;200");
        assert_eq!(rewrite(b"1;38;2;1;2;3"), "1;38;2;1;2;3");
    }

    #[test]
    fn sequences_split_across_writes_are_rewritten() {
        let mut out = BasicColors::new(Vec::new());
        out.write_all(b"a\x1b[38;").unwrap();
        out.write_all(b"5;8mb\x1b[2J\x1b[0mc").unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner, b"a\x1b[90mb\x1b[2J\x1b[0mc");
    }
}
