//! Reading the user's config file (see [`crate::template_roots::config_path`]) so that
//! every problem has a place: `FILE:LINE:COL: message`, as a session's errors do, both
//! for text that is not JSON and for an entry of the wrong kind (which serde_json,
//! having parsed the whole file, no longer places). Every command reads the file for its
//! template roots, and the app for its keys and colours: both use this.

use std::path::Path;

use chatplate_core::json_text::{key_text, string_end};
use serde_json::{Map, Value};

/// The file's text as a JSON object, or the problem with its place. A UTF-8 byte order
/// mark (which some editors write) is skipped.
pub fn parse(text: &str, path: &Path) -> Result<Map<String, Value>, String> {
    let text = without_bom(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(config)) => Ok(config),
        Ok(_) => Err(problem(path, text, &[], "not a JSON object")),
        Err(err) => {
            let full = err.to_string();
            let message = full
                .rsplit_once(" at line ")
                .map_or(full.as_str(), |(m, _)| m);
            let line = err.line().max(1);
            let column = char_column(text, line, err.column());
            Err(format!("{}:{line}:{column}: {message}", path.display()))
        }
    }
}

/// serde_json counts columns in bytes; the places here count characters, as
/// [`locate`] does.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(line_text) = text.split('\n').nth(line - 1) else {
        return byte_column.max(1);
    };
    let bytes = byte_column.saturating_sub(1).min(line_text.len());
    let end = (0..=bytes)
        .rev()
        .find(|&i| line_text.is_char_boundary(i))
        .unwrap_or(0);
    line_text[..end].chars().count() + 1
}

/// The text without a leading byte order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// `message` about the value at `keys` (object keys from the top) of the file's `text`:
/// `FILE:LINE:COL: message`, or `FILE: message` when the value cannot be found.
pub fn problem(path: &Path, text: &str, keys: &[&str], message: &str) -> String {
    match locate(without_bom(text), keys) {
        Some((line, column)) => format!("{}:{line}:{column}: {message}", path.display()),
        None => format!("{}: {message}", path.display()),
    }
}

/// The 1-based line and column (in characters) where the value at `keys` starts in JSON
/// `text`; the last one when a key repeats, since that is the one serde_json keeps.
/// `None` when there is no such value (or the text is not JSON).
pub fn locate(text: &str, keys: &[&str]) -> Option<(usize, usize)> {
    let offset = value_offset(text, keys)?;
    // Checked: in text that is not JSON an escape may end inside a character.
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some((
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    ))
}

/// One open container while walking the text: the key it sits under in its parent
/// (`None` for the top and for list items) and whether it is an object.
struct Open {
    key: Option<String>,
    object: bool,
}

/// The byte offset where the value at `keys` starts.
fn value_offset(text: &str, keys: &[&str]) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    let (mut key, mut expect_key, mut found) = (None::<String>, false, None);
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b' ' | b'\t' | b'\n' | b'\r' | b':' => index += 1,
            b',' => {
                expect_key = open.last().is_some_and(|o| o.object);
                index += 1;
            }
            b'}' | b']' => {
                open.pop();
                index += 1;
            }
            b'"' if expect_key => {
                let end = string_end(bytes, index);
                key = Some(text.get(index..end).map(key_text).unwrap_or_default());
                expect_key = false;
                index = end;
            }
            first => {
                let key = key.take();
                if is_at(&open, key.as_deref(), keys) {
                    found = Some(index);
                }
                index = match first {
                    b'{' | b'[' => {
                        expect_key = first == b'{';
                        open.push(Open {
                            key,
                            object: first == b'{',
                        });
                        index + 1
                    }
                    b'"' => string_end(bytes, index),
                    _ => literal_end(bytes, index),
                };
            }
        }
    }
    found
}

/// Whether a value under `key` inside the containers `open` is the one at `keys`.
fn is_at(open: &[Open], key: Option<&str>, keys: &[&str]) -> bool {
    let Some((top, inner)) = open.split_first() else {
        return keys.is_empty() && key.is_none();
    };
    if top.key.is_some() || inner.len() + 1 != keys.len() {
        return false;
    }
    let path = inner.iter().map(|o| o.key.as_deref()).chain([key]);
    path.zip(keys).all(|(at, want)| at == Some(*want))
}

/// The offset just past a number, `true`, `false` or `null` starting at `start`.
fn literal_end(bytes: &[u8], start: usize) -> usize {
    let rest = &bytes[start..];
    let len = rest
        .iter()
        .position(|b| matches!(b, b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(rest.len());
    start + len.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"keys\": {\"save\": \"ctrl+w\", \"quit\": [1, {\"save\": 2}]},\n  \"colors\": {},\n  \"template_roots\": \"/t\",\n  \"k\\u00e9\": 5,\n  \"colors\": null\n}";

    #[test]
    fn values_are_found_by_their_keys() {
        assert_eq!(locate(TEXT, &[]), Some((1, 1)));
        assert_eq!(locate(TEXT, &["keys"]), Some((2, 11)));
        assert_eq!(locate(TEXT, &["keys", "save"]), Some((2, 20)));
        assert_eq!(locate(TEXT, &["keys", "quit"]), Some((2, 38)));
        assert_eq!(locate(TEXT, &["template_roots"]), Some((4, 21)));
        assert_eq!(locate(TEXT, &["ké"]), Some((5, 14)));
        // The last of a repeated key: the value serde_json keeps.
        assert_eq!(locate(TEXT, &["colors"]), Some((6, 13)));
        // Inside a list is not a key path.
        assert_eq!(locate(TEXT, &["keys", "quit", "save"]), None);
        assert_eq!(locate(TEXT, &["save"]), None);
        assert_eq!(locate("[1, {\"keys\": 2}]", &["keys"]), None);
    }

    #[test]
    fn problems_have_places() {
        let path = Path::new("c.json");
        assert_eq!(
            parse("{\"a\": tru}", path).unwrap_err(),
            "c.json:1:10: expected ident"
        );
        assert_eq!(
            parse("[1]", path).unwrap_err(),
            "c.json:1:1: not a JSON object"
        );
        assert_eq!(parse("\u{feff}{}", path), Ok(Map::new()));
        assert_eq!(
            parse("{\"é\": x}", path).unwrap_err(),
            "c.json:1:7: expected value"
        );
        assert_eq!(problem(path, TEXT, &["nope"], "x"), "c.json: x");
        assert_eq!(problem(path, TEXT, &["colors"], "x"), "c.json:6:13: x");
    }
}
