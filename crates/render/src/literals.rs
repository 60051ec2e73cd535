//! String literals decoded the way Jinja2 decodes them.
//!
//! Jinja2 reads a string literal with Python's `unicode-escape` codec, so a backslash at
//! the end of a line continues the string without the newline (Mistral Small 3.1's
//! system prompt is written this way), and `\a`, `\v` and `\UXXXXXXXX` are escapes.
//! MiniJinja keeps those backslashes. Literals that use them are decoded here and written
//! back in a form MiniJinja reads identically; the newlines the literal spanned are put
//! after it (whitespace inside the tag), so every later line keeps its number.

use std::borrow::Cow;

use minijinja::machinery::{tokenize, Token};
use minijinja::syntax::SyntaxConfig;

use super::offsets::OffsetMap;

/// Rewrites the string literals MiniJinja would read differently from Jinja2; the map
/// leads back from the result's offsets to `source`'s.
pub(crate) fn decode_python_escapes(source: &str) -> (Cow<'_, str>, OffsetMap) {
    let mut map = OffsetMap::default();
    if !needs_decoding(source) {
        return (Cow::Borrowed(source), map);
    }
    let mut out = String::with_capacity(source.len());
    let mut cursor = 0;
    for (token, span) in tokenize(source, false, SyntaxConfig::default()).map_while(Result::ok) {
        if !matches!(token, Token::Str(_) | Token::String(_)) {
            continue;
        }
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        let Some(raw) = source.get(start..end) else {
            continue;
        };
        if start < cursor || !needs_decoding(raw) || raw.len() < 2 {
            continue;
        }
        out.push_str(&source[cursor..start]);
        let new_start = out.len();
        out.push_str(&reencode(&decode(&raw[1..raw.len() - 1])));
        out.extend(std::iter::repeat_n('\n', raw.matches('\n').count()));
        map.record((new_start, out.len()), (start, end), None);
        cursor = end;
    }
    out.push_str(&source[cursor..]);
    (Cow::Owned(out), map)
}

/// Whether `text` has a backslash escape MiniJinja reads differently.
fn needs_decoding(text: &str) -> bool {
    // Backslashes are rare: jump from one to the next (a byte search) instead of
    // looking at every pair of bytes.
    let bytes = text.as_bytes();
    text.match_indices('\\')
        .any(|(at, _)| matches!(bytes.get(at + 1), Some(b'\n' | b'a' | b'v' | b'U')))
}

/// Python's `unicode-escape` decoding of a literal's contents.
fn decode(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        match next {
            '\n' => {}
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' => out.push(next),
            'x' | 'u' | 'U' => push_hex(&mut out, &mut chars, next),
            '0'..='7' => push_octal(&mut out, &mut chars, next),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn push_hex(out: &mut String, chars: &mut std::iter::Peekable<std::str::Chars>, kind: char) {
    let width = match kind {
        'x' => 2,
        'u' => 4,
        _ => 8,
    };
    let digits: String = (0..width)
        .filter_map(|_| chars.next_if(char::is_ascii_hexdigit))
        .collect();
    match u32::from_str_radix(&digits, 16)
        .ok()
        .and_then(char::from_u32)
    {
        Some(decoded) if digits.len() == width => out.push(decoded),
        _ => {
            out.push('\\');
            out.push(kind);
            out.push_str(&digits);
        }
    }
}

fn push_octal(out: &mut String, chars: &mut std::iter::Peekable<std::str::Chars>, first: char) {
    let mut value = first.to_digit(8).unwrap_or(0);
    for _ in 0..2 {
        match chars.next_if(|c| ('0'..='7').contains(c)) {
            Some(digit) => value = value * 8 + digit.to_digit(8).unwrap_or(0),
            None => break,
        }
    }
    out.extend(char::from_u32(value));
}

/// A double-quoted literal MiniJinja decodes back to `text`, on one line.
fn reencode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::decode_python_escapes;

    #[test]
    fn continues_lines_and_keeps_line_numbers() {
        let source = "{% set s = \"a\\\nb\\\\c\\a\" %}\n{{ s }}";
        let (rewritten, _) = decode_python_escapes(source);
        assert_eq!(rewritten, "{% set s = \"ab\\\\c\\u0007\"\n %}\n{{ s }}");
        assert_eq!(rewritten.lines().count(), source.lines().count());
    }
}
