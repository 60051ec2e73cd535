//! Scanning session JSON for what serde_json does not report.
//!
//! * A key written twice in one object: serde_json keeps the last without a word, so a
//!   message written `{"content": "a", "content": "b"}` would silently lose `"a"`, and
//!   `--bless` would write the file back without it.
//! * Where an error is: serde_json places an error found while checking a field's value
//!   at the end of the enclosing object, and a message's own checks where the message
//!   ends; errors are moved to the field's value or the message's opening brace.

use std::collections::HashSet;

use crate::json_text::{key_text, string_end};

/// A key written twice in one object, where the second one is (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) key: String,
}

impl DuplicateKey {
    /// What is wrong, for a message after the position.
    pub(crate) fn message(&self) -> String {
        format!(
            "duplicate key {} (each key may appear once per object)",
            chatplate_render::visible::quoted(&self.key)
        )
    }
}

/// The first key that repeats an earlier key of the same object in valid JSON text (a
/// session, a request body), with its position.
pub(crate) fn duplicate_key(text: &str) -> Option<DuplicateKey> {
    let (offset, key) = first_duplicate_key(text)?;
    let (line, column) = line_column(text, offset);
    Some(DuplicateKey { line, column, key })
}

/// The byte offset and text of the first key that repeats an earlier key of the same
/// object, in JSON text that is already known to be valid.
fn first_duplicate_key(text: &str) -> Option<(usize, String)> {
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
pub(crate) fn top_level_value(text: &str, key: &str) -> Option<usize> {
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

/// The offset of the `}` that closes the JSON object opening at `start` (valid JSON).
pub(crate) fn object_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut index = start;
    while index < bytes.len() {
        match bytes[index] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(index);
                }
            }
            b'"' => {
                index = string_end(bytes, index);
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// Where to point for a parse error (1-based). serde_json reports a message's own
/// validation errors (no role, bad content) where it finished reading that message;
/// those point at the message's opening brace instead.
pub(crate) fn error_position(text: &str, err: &serde_json::Error) -> (usize, usize) {
    let (line, column) = (err.line(), err.column().max(1));
    // Checks on one field's value are placed at the end of the object by serde_json.
    let message = err.to_string();
    let field = [
        ("clock ", "clock"),
        ("unsupported session version", "version"),
        ("\"version\"", "version"),
        ("\"continue_final_message\"", "continue_final_message"),
        ("\"expected_tokens\"", "expected_tokens"),
        ("\"assert_token_round_trip\"", "assert_token_round_trip"),
        ("\"template\"", "template"),
    ]
    .into_iter()
    .find(|(start, _)| message.starts_with(start));
    if let Some(offset) = field.and_then(|(_, key)| top_level_value(text, key)) {
        return line_column(text, offset);
    }
    if err.classify() != serde_json::error::Category::Data
        || !err.to_string().starts_with("message ")
    {
        return (line, column);
    }
    let offset = offset_of(text, line, column);
    match object_start_before(text, offset) {
        Some(start) => line_column(text, start),
        None => (line, column),
    }
}

fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// The `{` that opens the object ending at or before `offset`, skipping over strings.
fn object_start_before(text: &str, offset: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut index = offset.min(bytes.len());
    let mut depth = 0usize;
    while index > 0 {
        index -= 1;
        match bytes[index] {
            b'"' if !is_escaped(bytes, index) => index = string_start(bytes, index)?,
            b'}' => depth += 1,
            b'{' if depth <= 1 => return Some(index),
            b'{' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The opening quote of the string whose closing quote is at `end`.
fn string_start(bytes: &[u8], end: usize) -> Option<usize> {
    (0..end)
        .rev()
        .find(|&i| bytes[i] == b'"' && !is_escaped(bytes, i))
}

fn is_escaped(bytes: &[u8], quote: usize) -> bool {
    bytes[..quote]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}

/// serde_json appends " at line L column C"; the position is reported separately.
pub(crate) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
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
