//! Scanning session JSON for what serde_json does not report.
//!
//! * A key written twice in one object: serde_json keeps the last without a word, so a
//!   message written `{"content": "a", "content": "b"}` would silently lose `"a"`, and
//!   `--bless` would write the file back without it.
//! * Where a top-level key's value is: serde_json places an error found while checking
//!   a field's value at the end of the enclosing object.

use std::collections::HashSet;

/// The byte offset and text of the first key that repeats an earlier key of the same
/// object, in JSON text that is already known to be valid.
pub fn first_duplicate_key(text: &str) -> Option<(usize, String)> {
    let bytes = text.as_bytes();
    // One entry per open container: the keys seen so far for an object, None for a list.
    let mut open: Vec<Option<HashSet<String>>> = Vec::new();
    let mut expect_key = false;
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'{' => {
                open.push(Some(HashSet::new()));
                expect_key = true;
            }
            b'[' => {
                open.push(None);
                expect_key = false;
            }
            b'}' | b']' => {
                open.pop();
                expect_key = false;
            }
            b',' => expect_key = matches!(open.last(), Some(Some(_))),
            b'"' => {
                let end = string_end(bytes, index);
                if expect_key {
                    let key = key_text(&text[index..end]);
                    if let Some(Some(seen)) = open.last_mut() {
                        if !seen.insert(key.clone()) {
                            return Some((index, key));
                        }
                    }
                    expect_key = false;
                }
                index = end;
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// The byte offset of the value of the top-level `key` in a JSON object's text.
pub fn top_level_value(text: &str, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut index) = (0usize, 0usize);
    while index < bytes.len() {
        match bytes[index] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let end = string_end(bytes, index);
                let after = text[end..].trim_start();
                if depth == 1 && after.starts_with(':') && key_text(&text[index..end]) == key {
                    let value = after[1..].trim_start();
                    return Some(text.len() - value.len());
                }
                index = end;
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// The offset just past the string that starts with the quote at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
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
fn key_text(quoted: &str) -> String {
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
    use super::{first_duplicate_key, top_level_value};

    #[test]
    fn finds_top_level_values_only() {
        let text = r#"{"m": [{"clock": 1}], "clock": "x"}"#;
        assert_eq!(
            top_level_value(text, "clock"),
            Some(text.rfind("\"x\"").unwrap())
        );
        assert_eq!(top_level_value(text, "version"), None);
    }

    #[test]
    fn finds_repeated_keys_in_any_object_only() {
        assert_eq!(first_duplicate_key(r#"{"a": 1, "b": {"a": 2}}"#), None);
        assert_eq!(first_duplicate_key(r#"["a", "a", {"x": "a"}]"#), None);
        let text = r#"{"m": [{"role": "user", "content": "x", "content": "y"}]}"#;
        assert_eq!(
            first_duplicate_key(text),
            Some((text.rfind("\"content\"").unwrap(), "content".into()))
        );
        assert_eq!(
            first_duplicate_key(r#"{"a\"b": 1, "a\u0022b": 2}"#).map(|(_, k)| k),
            Some("a\"b".into())
        );
    }
}
