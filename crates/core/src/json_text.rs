//! Walking JSON text by hand, for what a parsed value no longer tells: where a key or
//! value was written (errors with a place), and keys written twice. Only the two steps
//! every such walk needs live here; each walk keeps its own state.

/// The offset just past the string whose opening quote is at `start` (the end of the
/// text when the string is not closed).
pub fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut index = start + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            b'"' => return index + 1,
            _ => index += 1,
        }
    }
    bytes.len()
}

/// A quoted key as the text it stands for (`"\u0061"` is the key `a`).
pub fn key_text(quoted: &str) -> String {
    let inner = quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default();
    if !inner.contains('\\') {
        return inner.to_string();
    }
    serde_json::from_str(quoted).unwrap_or_else(|_| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_end_after_their_closing_quote_and_escapes_are_skipped() {
        let text = br#""a\"b" x"#;
        assert_eq!(string_end(text, 0), 6);
        assert_eq!(string_end(b"\"open", 0), 5);
    }

    #[test]
    fn keys_are_the_text_they_stand_for() {
        assert_eq!(key_text(r#""plain""#), "plain");
        assert_eq!(key_text(r#""k\u00e9""#), "ké");
        assert_eq!(key_text(r#""bad\u12""#), r"bad\u12");
    }
}
