//! Python's `str()` and `repr()` for template values.
//!
//! Jinja2 prints `{{ x }}` with `str(x)`, so a dict shows as `{'a': 1}`, `None` as `None`
//! and `True` as `True`. MiniJinja prints its own spellings; templates that print whole
//! tool definitions or booleans need Python's.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::generators::is_generator;
use super::none::is_python_none;
use super::pyfloat::repr_float;

/// Deepest nesting printed: Python's `repr` fails with `RecursionError` near its
/// recursion limit of 1,000.
pub(crate) const MAX_REPR_DEPTH: usize = 1000;

/// How much text is written between two budget checks.
const CHECK_EVERY_BYTES: usize = 1 << 16;

/// Python's `str(value)`: strings as they are, everything else as `repr`. Fails for
/// nesting deeper than [`MAX_REPR_DEPTH`] and for text beyond the render's byte budget
/// (`state` is the render's, when there is one).
pub(crate) fn to_str_in(state: Option<&State>, value: &Value) -> Result<String, Error> {
    match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => Ok(text.to_string()),
        _ => {
            let mut writer = Repr {
                out: String::new(),
                state,
                checked_at: 0,
            };
            writer.write(value, 0)?;
            Ok(writer.out)
        }
    }
}

/// [`to_str_in`] for filters that get no state. The render's memory budget still
/// applies (a value too large stops the render at its next checkpoint); the error
/// itself is shown in place.
pub(crate) fn to_str(value: &Value) -> String {
    to_str_in(None, value).unwrap_or_else(|err| format!("<{err}>"))
}

/// Python's `repr(value)` (strings quoted), for state-less callers like [`to_str`].
pub(crate) fn repr(value: &Value) -> String {
    match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => {
            let mut out = String::new();
            write_str_repr(&mut out, text);
            out
        }
        _ => to_str(value),
    }
}

struct Repr<'s, 'a, 'b> {
    out: String,
    state: Option<&'s State<'a, 'b>>,
    checked_at: usize,
}

impl Repr<'_, '_, '_> {
    fn write(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        if self.out.len() - self.checked_at > CHECK_EVERY_BYTES {
            self.checked_at = self.out.len();
            super::scope::reserve(self.state, 0)?;
        }
        if is_python_none(value) {
            self.out.push_str("None");
            return Ok(());
        }
        match value.kind() {
            ValueKind::Undefined => {}
            ValueKind::None => self.out.push_str("None"),
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "True" } else { "False" }),
            ValueKind::Number => write_number(&mut self.out, value),
            ValueKind::String => {
                let text = value.as_str().unwrap_or_default();
                // Escapes make a repr up to four times the text: its exact length is
                // charged before the output grows.
                super::scope::make_room(self.state, &mut self.out, str_repr_len(text))?;
                write_str_repr(&mut self.out, text);
            }
            ValueKind::Bytes => {
                let bytes = value.as_bytes().unwrap_or_default();
                let most = bytes.len().saturating_mul(4).saturating_add(3);
                super::scope::make_room(self.state, &mut self.out, most)?;
                write_bytes_repr(&mut self.out, bytes);
            }
            ValueKind::Seq | ValueKind::Iterable if !is_generator(value) => {
                self.container(value, depth, Repr::seq)?;
            }
            ValueKind::Map if super::loops::is_namespace(value) => {
                self.out.push_str("<Namespace ");
                self.container(value, depth, Repr::map)?;
                self.out.push('>');
            }
            ValueKind::Map => self.container(value, depth, Repr::map)?,
            _ => self.out.push_str(&value.to_string()),
        }
        Ok(())
    }

    /// Checks depth and size before writing a list or dict.
    fn container(
        &mut self,
        value: &Value,
        depth: usize,
        write: impl FnOnce(&mut Self, &Value, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if depth >= MAX_REPR_DEPTH {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "RecursionError: maximum recursion depth exceeded while getting the repr of an object",
            ));
        }
        // At least ", " per item: refuse a list too long to print before starting.
        super::scope::reserve_items(self.state, value.len().unwrap_or(0), 2)?;
        write(self, value, depth + 1)
    }

    fn seq(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        // groupby's groups are namedtuples in Python: they print as tuples.
        let tuple = value.is_tuple() || super::groups::is_group(value);
        let (open, close) = if tuple { ('(', ')') } else { ('[', ']') };
        self.out.push(open);
        let mut count = 0;
        if let Ok(items) = value.try_iter() {
            for (index, item) in items.enumerate() {
                if index > 0 {
                    self.out.push_str(", ");
                }
                self.write(&item, depth)?;
                count += 1;
            }
        }
        if tuple && count == 1 {
            self.out.push(',');
        }
        self.out.push(close);
        Ok(())
    }

    fn map(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        self.out.push('{');
        if let Ok(keys) = value.try_iter() {
            for (index, key) in keys.enumerate() {
                if index > 0 {
                    self.out.push_str(", ");
                }
                self.write(&key, depth)?;
                self.out.push_str(": ");
                self.write(&value.get_item(&key).unwrap_or_default(), depth)?;
            }
        }
        self.out.push('}');
        Ok(())
    }
}

/// Writes an integer or float the way Python prints it.
pub(crate) fn write_number(out: &mut String, value: &Value) {
    if value.is_integer() {
        out.push_str(&value.to_string());
    } else {
        let float = f64::try_from(value.clone()).unwrap_or(f64::NAN);
        out.push_str(&repr_float(float));
    }
}

/// Python's `repr(bytes)`: `b'...'`, with `\xNN` for everything outside printable ASCII.
fn write_bytes_repr(out: &mut String, bytes: &[u8]) {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push('b');
    out.push(char::from(quote));
    for &byte in bytes {
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b if b == quote => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(byte)),
            _ => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push(char::from(quote));
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`, with
/// backslash escapes for control and non-printable characters.
pub fn write_str_repr(out: &mut String, text: &str) {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => push_escape(out, c),
        }
    }
    out.push(quote);
}

/// The length of [`write_str_repr`]'s output for `text`, counted without building it.
pub(crate) fn str_repr_len(text: &str) -> usize {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let escaped = |ch: char| match ch {
        '\\' | '\n' | '\r' | '\t' => 2,
        c if c == quote => 2,
        c if is_printable(c) => c.len_utf8(),
        c if (c as u32) < 0x100 => 4,
        c if (c as u32) < 0x10000 => 6,
        _ => 10,
    };
    text.chars()
        .fold(2usize, |len, ch| len.saturating_add(escaped(ch)))
}

fn push_escape(out: &mut String, ch: char) {
    let code = ch as u32;
    let escaped = if code < 0x100 {
        format!("\\x{code:02x}")
    } else if code < 0x10000 {
        format!("\\u{code:04x}")
    } else {
        format!("\\U{code:08x}")
    };
    out.push_str(&escaped);
}

/// Python's `str.isprintable()` for one character: false for control, format,
/// separator (other than the ASCII space), private-use and surrogate characters.
///
/// Unassigned code points are treated as printable; the tables here cover the
/// assigned non-printable ranges, which is what real chat data contains.
pub(crate) fn is_printable(ch: char) -> bool {
    let c = ch as u32;
    if c == 0x20 {
        return true;
    }
    !NON_PRINTABLE.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Ranges of Unicode categories Cc, Cf, Zs, Zl, Zp and Co.
const NON_PRINTABLE: &[(u32, u32)] = &[
    (0x00, 0x20),
    (0x7F, 0xA0),
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x1680, 0x1680),
    (0x180E, 0x180E),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x2064),
    (0x2066, 0x206F),
    (0x3000, 0x3000),
    (0xE000, 0xF8FF),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xF0000, 0x10FFFF),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::json_to_value;

    #[test]
    fn the_repr_length_is_counted_exactly() {
        for text in [
            "",
            "plain",
            "it's",
            "it's \"q\"",
            "a\\b\n\t\r",
            "\x01\u{7f}\u{ad}é中",
            "\u{e0001}\u{feff}",
        ] {
            let mut out = String::new();
            write_str_repr(&mut out, text);
            assert_eq!(str_repr_len(text), out.len(), "{text:?}");
        }
    }

    fn to_repr(value: &Value) -> String {
        match value.as_str() {
            Some(text) => {
                let mut out = String::new();
                write_str_repr(&mut out, text);
                out
            }
            None => to_str(value),
        }
    }

    // Expectations are CPython 3.11 output of repr()/str() on the same data.
    #[test]
    fn prints_containers_like_python() {
        let value = json_to_value(&serde_json::json!(
            {"a": [1, 2.5, true, null, "x"], "b": {"c": "it's"}}
        ));
        assert_eq!(
            to_str(&value),
            r#"{'a': [1, 2.5, True, None, 'x'], 'b': {'c': "it's"}}"#
        );
    }

    #[test]
    fn escapes_strings_like_python_repr() {
        assert_eq!(to_repr(&Value::from("a\nb\t\\")), r"'a\nb\t\\'");
        assert_eq!(to_repr(&Value::from("both ' and \"")), r#"'both \' and "'"#);
        assert_eq!(to_repr(&Value::from("nb\u{a0}sp é 😀")), r"'nb\xa0sp é 😀'");
        assert_eq!(to_repr(&Value::from("\u{1}\u{200b}")), r"'\x01\u200b'");
    }

    #[test]
    fn prints_scalars_like_python() {
        assert_eq!(to_str(&Value::from(true)), "True");
        assert_eq!(to_str(&Value::from(())), "None");
        assert_eq!(to_str(&Value::from(3.0)), "3.0");
        assert_eq!(to_str(&Value::from("plain")), "plain");
    }
}
