//! Python's `json.dumps` as transformers exposes it through the `tojson` filter.
//!
//! transformers replaces Jinja's `tojson` with
//! `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`, so
//! the default separators are `", "` and `": "` (or `","` with an indent), nothing is
//! HTML-escaped and non-ASCII text is kept as is.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::data::PyDict;
use super::generators::is_generator;
use super::none::is_python_none;
use super::pyfloat::repr_float;

/// The keyword arguments of `json.dumps` that templates use.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    /// `indent`: `None` for one line, otherwise the text repeated per level.
    pub indent: Option<String>,
    /// `separators`: item and key separators; `None` picks Python's defaults.
    pub separators: Option<(String, String)>,
    /// `sort_keys`.
    pub sort_keys: bool,
    /// `ensure_ascii`: escape every non-ASCII character as `\uXXXX`.
    pub ensure_ascii: bool,
    /// Refuse to produce more than this many bytes (`None`: only the render's byte
    /// budget applies).
    pub max_bytes: Option<usize>,
}

/// Deepest nesting serialised: Python's encoder fails with `RecursionError` near its
/// recursion limit of 1,000.
pub(crate) const MAX_JSON_DEPTH: usize = 1000;

/// Serializes `value` exactly as Python's `json.dumps` would.
pub fn dumps(value: &Value, options: &DumpOptions) -> Result<String, Error> {
    let (item_sep, key_sep) = match &options.separators {
        Some((item, key)) => (item.as_str(), key.as_str()),
        None if options.indent.is_some() => (",", ": "),
        None => (", ", ": "),
    };
    let mut writer = JsonWriter {
        // Room for a small tool or arguments dict without growing step by step from 8.
        out: String::with_capacity(DUMPS_ROOM),
        options,
        item_sep,
        key_sep,
        checked_at: 0,
    };
    writer.write(value, 0)?;
    Ok(writer.out)
}

/// The room a `dumps` output starts with.
const DUMPS_ROOM: usize = 256;

struct JsonWriter<'a> {
    out: String,
    options: &'a DumpOptions,
    item_sep: &'a str,
    key_sep: &'a str,
    /// Output length at the last budget check.
    checked_at: usize,
}

impl JsonWriter<'_> {
    fn write(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        if self
            .options
            .max_bytes
            .is_some_and(|max| self.out.len() > max)
        {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "tojson: output exceeds the render's remaining budget",
            ));
        }
        if self.out.len() - self.checked_at > 1 << 16 {
            self.checked_at = self.out.len();
            super::scope::reserve(None, 0)?;
        }
        if depth > MAX_JSON_DEPTH {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "RecursionError: maximum recursion depth exceeded while encoding a JSON object",
            ));
        }
        if is_python_none(value) {
            self.out.push_str("null");
            return Ok(());
        }
        match value.kind() {
            ValueKind::None => self.out.push_str("null"),
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number => self.write_number(value),
            ValueKind::String => self.write_string(value.as_str().unwrap_or_default())?,
            ValueKind::Seq | ValueKind::Iterable if !is_generator(value) => {
                self.write_seq(value, depth)?;
            }
            ValueKind::Map if !super::loops::is_namespace(value) => self.write_map(value, depth)?,
            _ => return Err(not_serializable(value)),
        }
        Ok(())
    }

    fn write_number(&mut self, value: &Value) {
        if value.is_integer() {
            use std::fmt::Write as _;
            let _ = write!(self.out, "{value}");
            return;
        }
        let float = f64::try_from(value.clone()).unwrap_or(f64::NAN);
        let text = match repr_float(float).as_str() {
            "nan" => "NaN".to_string(),
            "inf" => "Infinity".to_string(),
            "-inf" => "-Infinity".to_string(),
            other => other.to_string(),
        };
        self.out.push_str(&text);
    }

    fn write_string(&mut self, text: &str) -> Result<(), Error> {
        if self
            .options
            .max_bytes
            .is_some_and(|max| self.out.len() + text.len() > max)
        {
            // Leave the output over budget; the next `write` reports it.
            self.out.push_str(text);
            return Ok(());
        }
        if text.len() > LONG_STRING_BYTES {
            // Escaping can make it six times longer in this one call.
            self.make_room(quoted_len(text, self.options.ensure_ascii))?;
        }
        self.out.push('"');
        if self.options.ensure_ascii {
            self.write_escaped_ascii(text);
        } else {
            self.write_escaped(text);
        }
        self.out.push('"');
        Ok(())
    }

    /// The characters of a JSON string with `ensure_ascii=False`: only ASCII needs
    /// escaping, so runs of bytes between escapes are copied whole (every other byte of
    /// UTF-8 is left as it is).
    fn write_escaped(&mut self, text: &str) {
        let mut run_start = 0;
        for (at, byte) in text.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..=0x1f => "",
                _ => continue,
            };
            self.out.push_str(&text[run_start..at]);
            run_start = at + 1;
            if escape.is_empty() {
                self.push_unicode_escape(u32::from(byte));
            } else {
                self.out.push_str(escape);
            }
        }
        self.out.push_str(&text[run_start..]);
    }

    /// The characters of a JSON string with `ensure_ascii=True`.
    fn write_escaped_ascii(&mut self, text: &str) {
        for ch in text.chars() {
            match ch {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 => self.push_unicode_escape(c as u32),
                c if !is_printable_ascii(c) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        self.push_unicode_escape(u32::from(*unit));
                    }
                }
                c => self.out.push(c),
            }
        }
    }

    fn push_unicode_escape(&mut self, unit: u32) {
        use std::fmt::Write as _;
        let _ = write!(self.out, "\\u{unit:04x}");
    }

    /// Checks, before the output grows by `extra` bytes, that the render may hold what
    /// it grows to: a `String` that must grow at least doubles its capacity.
    fn make_room(&mut self, extra: usize) -> Result<(), Error> {
        let needed = self.out.len().saturating_add(extra);
        let capacity = self.out.capacity();
        if needed <= capacity {
            return Ok(());
        }
        let grown = needed.max(capacity.saturating_mul(2));
        super::scope::reserve(None, grown - capacity)?;
        self.out.reserve(extra);
        Ok(())
    }

    fn write_seq(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        // At least a separator per item: refuse a list too long to write before starting
        // (a list doubled with `l + l` is lazy and can claim 2^60 items).
        let len = value.len().unwrap_or(0);
        super::scope::reserve_items(None, len, self.item_sep.len().max(1))?;
        let mut items = value.try_iter()?.peekable();
        if items.peek().is_none() {
            self.out.push_str("[]");
            return Ok(());
        }
        self.out.push('[');
        for (index, item) in items.enumerate() {
            self.separator(index, depth + 1)?;
            self.write(&item, depth + 1)?;
        }
        self.newline(depth)?;
        self.out.push(']');
        Ok(())
    }

    fn write_map(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        super::scope::reserve_items(None, value.len().unwrap_or(0), 4)?;
        match value.downcast_object_ref::<PyDict>() {
            // The chat data's own dicts: their entries in order, without collecting the
            // keys and looking each one up again (their keys are unique).
            Some(dict) if !self.options.sort_keys => {
                let entries = dict.entries();
                self.write_entries(entries.iter().map(|(key, item)| (key, item)), depth)
            }
            _ => self.write_any_map(value, depth),
        }
    }

    /// Any other map, through MiniJinja's generic iteration and lookup.
    fn write_any_map(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        let mut keys: Vec<Value> = value.try_iter()?.collect();
        if self.options.sort_keys {
            sort_keys(&mut keys)?;
        }
        let items = keys
            .iter()
            .map(|key| Ok((key, value.get_item(key)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        self.write_entries(items.iter().map(|(key, item)| (*key, item)), depth)
    }

    /// `{key: item, ...}` for the entries in the order given.
    fn write_entries<'v>(
        &mut self,
        entries: impl ExactSizeIterator<Item = (&'v Value, &'v Value)>,
        depth: usize,
    ) -> Result<(), Error> {
        if entries.len() == 0 {
            self.out.push_str("{}");
            return Ok(());
        }
        self.out.push('{');
        for (index, (key, item)) in entries.enumerate() {
            self.separator(index, depth + 1)?;
            match key.as_str().filter(|_| key.kind() == ValueKind::String) {
                Some(text) => self.write_string(text)?,
                None => self.write_string(&key_string(key)?)?,
            }
            self.out.push_str(self.key_sep);
            self.write(item, depth + 1)?;
        }
        self.newline(depth)?;
        self.out.push('}');
        Ok(())
    }

    /// Writes what comes before the item at `index` inside a container.
    fn separator(&mut self, index: usize, depth: usize) -> Result<(), Error> {
        if index > 0 {
            self.out.push_str(self.item_sep);
        }
        self.newline(depth)
    }

    fn newline(&mut self, depth: usize) -> Result<(), Error> {
        if let Some(indent) = &self.options.indent {
            // The indent is the template's: `tojson(indent=10**6)` nested a few levels.
            super::scope::reserve(None, indent.len().saturating_mul(depth))?;
            self.out.push('\n');
            for _ in 0..depth {
                self.out.push_str(indent);
            }
        }
        Ok(())
    }
}

/// Strings longer than this are measured before they are written (shorter ones at most
/// sextuple a few KiB, which the budget check every 64 KiB of output covers).
const LONG_STRING_BYTES: usize = 4096;

/// The length of `text` as a JSON string, quotes included.
fn quoted_len(text: &str, ensure_ascii: bool) -> usize {
    text.chars().fold(2usize, |len, ch| {
        len.saturating_add(match ch {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c if ensure_ascii && !is_printable_ascii(c) => 6 * c.len_utf16(),
            c => c.len_utf8(),
        })
    })
}

/// What `ensure_ascii=True` writes as it is: Python's `ESCAPE_ASCII` escapes everything
/// outside `' '..='~'`, so DEL (U+007F), ASCII though it is, becomes `\u007f`.
fn is_printable_ascii(c: char) -> bool {
    (' '..='~').contains(&c)
}

/// JSON object keys the way Python coerces them: str, int, float, bool and None only.
fn key_string(key: &Value) -> Result<String, Error> {
    if is_python_none(key) {
        return Ok("null".into());
    }
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_string()),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
        ValueKind::None => Ok("null".into()),
        ValueKind::Number => {
            let mut text = String::new();
            super::pyrepr::write_number(&mut text, key);
            Ok(text)
        }
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "TypeError: keys must be str, int, float, bool or None, not {}",
                super::pytype::type_name(key)
            ),
        )),
    }
}

fn sort_keys(keys: &mut [Value]) -> Result<(), Error> {
    let all_strings = keys.iter().all(|k| k.kind() == ValueKind::String);
    let all_numbers = keys.iter().all(|k| k.kind() == ValueKind::Number);
    if !all_strings && !all_numbers {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "TypeError: '<' not supported between keys of different types",
        ));
    }
    keys.sort();
    Ok(())
}

fn not_serializable(value: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "TypeError: Object of type {} is not JSON serializable",
            super::pytype::type_name(value)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumps_json(json: serde_json::Value, options: &DumpOptions) -> String {
        dumps(&crate::data::json_to_value(&json), options).unwrap()
    }

    // Expectations are CPython 3.11 `json.dumps(..., ensure_ascii=False, ...)` output.
    #[test]
    fn default_separators_have_spaces() {
        let json = serde_json::json!({"name": "f", "args": [1, 2.0, null, true], "e": {}});
        assert_eq!(
            dumps_json(json, &DumpOptions::default()),
            r#"{"name": "f", "args": [1, 2.0, null, true], "e": {}}"#
        );
    }

    #[test]
    fn indent_uses_comma_without_trailing_space() {
        let json = serde_json::json!({"a": [1, {"b": "é\n"}], "c": []});
        let options = DumpOptions {
            indent: Some("  ".into()),
            ..DumpOptions::default()
        };
        assert_eq!(
            dumps_json(json, &options),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"é\\n\"\n    }\n  ],\n  \"c\": []\n}"
        );
    }

    #[test]
    fn long_strings_are_measured_exactly() {
        for ensure_ascii in [false, true] {
            let options = DumpOptions {
                ensure_ascii,
                ..DumpOptions::default()
            };
            let text = "a\"\\\n\u{1}é😀".repeat(1000);
            let dumped = dumps(&Value::from(text.as_str()), &options).unwrap();
            assert_eq!(dumped.len(), quoted_len(&text, ensure_ascii));
            assert_eq!(dumped, serde_json_like(&text, ensure_ascii));
        }
    }

    /// What `json.dumps` gives, through the short-string path.
    fn serde_json_like(text: &str, ensure_ascii: bool) -> String {
        let options = DumpOptions {
            ensure_ascii,
            ..DumpOptions::default()
        };
        let pieces: Vec<String> = text
            .split_inclusive('😀')
            .map(|piece| dumps(&Value::from(piece), &options).unwrap())
            .collect();
        let inner: String = pieces.iter().map(|p| &p[1..p.len() - 1]).collect();
        format!("\"{inner}\"")
    }

    #[test]
    fn ensure_ascii_and_sort_keys() {
        let json = serde_json::json!({"b": "😀", "a": "\u{1}<>&"});
        let options = DumpOptions {
            ensure_ascii: true,
            sort_keys: true,
            ..DumpOptions::default()
        };
        assert_eq!(
            dumps_json(json, &options),
            r#"{"a": "\u0001<>&", "b": "\ud83d\ude00"}"#
        );
    }

    #[test]
    fn ensure_ascii_escapes_del_and_ensure_ascii_false_keeps_it() {
        // CPython: json.dumps("a\x7f~\x80", ensure_ascii=True) == '"a\\u007f~\\u0080"',
        // and with ensure_ascii=False the DEL stays raw.
        let text = Value::from("a\u{7f}~\u{80}");
        let ascii = DumpOptions {
            ensure_ascii: true,
            ..DumpOptions::default()
        };
        assert_eq!(dumps(&text, &ascii).unwrap(), r#""a\u007f~\u0080""#);
        assert_eq!(
            dumps(&text, &DumpOptions::default()).unwrap(),
            "\"a\u{7f}~\u{80}\""
        );
        let long = "\u{7f}".repeat(LONG_STRING_BYTES + 1);
        let dumped = dumps(&Value::from(long.as_str()), &ascii).unwrap();
        assert_eq!(dumped.len(), quoted_len(&long, true));
        assert_eq!(
            dumped,
            format!("\"{}\"", "\\u007f".repeat(LONG_STRING_BYTES + 1))
        );
    }

    #[test]
    fn engine_maps_and_escapes_take_the_same_path_as_chat_dicts() {
        // A map MiniJinja built (not a chat dict) goes through its generic iteration.
        let map = Value::from(std::collections::BTreeMap::from([(
            "a",
            Value::from(vec![Value::from(1), Value::from("x")]),
        )]));
        let text = "tab\there \u{1}\u{8}\u{c} \"q\" é\\";
        let dict = crate::data::json_to_value(&serde_json::json!({ "k": text }));
        assert_eq!(
            dumps(&map, &DumpOptions::default()).unwrap(),
            r#"{"a": [1, "x"]}"#
        );
        assert_eq!(
            dumps(&dict, &DumpOptions::default()).unwrap(),
            r#"{"k": "tab\there \u0001\b\f \"q\" é\\"}"#
        );
    }
}
