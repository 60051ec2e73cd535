//! Python's `json.loads`, with its exact error messages (`JSONDecodeError`, CPython
//! 3.11's C scanner): the `json` content parser quotes them in its own errors.
//!
//! Differences kept on purpose: a lone surrogate escape (`"\ud800"`), which a Python
//! string can hold and a Rust one cannot, becomes U+FFFD; `NaN` and `Infinity` parse
//! but become `null`, since a JSON value cannot hold them.

use serde_json::{Map, Value};

use super::pyvalue::{float_value, number_from_text};

/// Nesting deeper than this fails, as Python's recursion limit makes `json.loads` fail.
const MAX_DEPTH: usize = 900;

/// A `json.JSONDecodeError`: the message and the character index it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError {
    message: &'static str,
    position: usize,
    line: usize,
    column: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: line {} column {} (char {})",
            self.message, self.line, self.column, self.position
        )
    }
}

/// `json.loads(text)`.
pub(crate) fn loads(text: &str) -> Result<Value, DecodeError> {
    let chars: Vec<char> = text.chars().collect();
    let scanner = Scanner { chars: &chars };
    scanner.document().map_err(|(message, position)| {
        let before = &chars[..position.min(chars.len())];
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let column = match before.iter().rposition(|c| *c == '\n') {
            Some(newline) => position - newline,
            None => position + 1,
        };
        DecodeError {
            message,
            position,
            line,
            column,
        }
    })
}

type Scan<T> = Result<T, (&'static str, usize)>;

struct Scanner<'c> {
    chars: &'c [char],
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

impl Scanner<'_> {
    fn at(&self, idx: usize) -> Option<char> {
        self.chars.get(idx).copied()
    }

    fn skip_ws(&self, mut idx: usize) -> usize {
        while self.at(idx).is_some_and(is_ws) {
            idx += 1;
        }
        idx
    }

    fn document(&self) -> Scan<Value> {
        if self.at(0) == Some('\u{feff}') {
            return Err(("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
        }
        let start = self.skip_ws(0);
        let (value, end) = self.value(start, 0)?;
        let end = self.skip_ws(end);
        if end != self.chars.len() {
            return Err(("Extra data", end));
        }
        Ok(value)
    }

    /// `scan_once`: a value at `idx`; "Expecting value" where none starts.
    fn value(&self, idx: usize, depth: usize) -> Scan<(Value, usize)> {
        if depth > MAX_DEPTH {
            return Err(("maximum recursion depth exceeded", idx));
        }
        match self.at(idx) {
            None => Err(("Expecting value", idx)),
            Some('"') => self.string(idx + 1).map(|(s, end)| (Value::String(s), end)),
            Some('{') => self.object(idx + 1, depth),
            Some('[') => self.array(idx + 1, depth),
            Some(_) => self.keyword(idx).map_or_else(|| self.number(idx), Ok),
        }
    }

    fn keyword(&self, idx: usize) -> Option<(Value, usize)> {
        let words: [(&str, Value); 6] = [
            ("null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("NaN", Value::Null),
            ("Infinity", Value::Null),
            ("-Infinity", Value::Null),
        ];
        words.into_iter().find_map(|(word, value)| {
            let len = word.chars().count();
            let here = self.chars.get(idx..idx + len)?;
            here.iter()
                .copied()
                .eq(word.chars())
                .then_some((value, idx + len))
        })
    }

    fn digits(&self, mut idx: usize) -> usize {
        while self.at(idx).is_some_and(|c| c.is_ascii_digit()) {
            idx += 1;
        }
        idx
    }

    /// `_match_number_unicode`: JSON's number grammar, backing off a dangling exponent.
    fn number(&self, start: usize) -> Scan<(Value, usize)> {
        let mut idx = start;
        if self.at(idx) == Some('-') {
            idx += 1;
        }
        idx = match self.at(idx) {
            Some('1'..='9') => self.digits(idx + 1),
            Some('0') => idx + 1,
            _ => return Err(("Expecting value", start)),
        };
        let mut is_float = false;
        if self.at(idx) == Some('.') && self.at(idx + 1).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            idx = self.digits(idx + 2);
        }
        if matches!(self.at(idx), Some('e' | 'E')) && idx + 1 < self.chars.len() {
            let mut exp = idx + 1;
            if matches!(self.at(exp), Some('-' | '+')) && exp + 1 < self.chars.len() {
                exp += 1;
            }
            let end = self.digits(exp);
            if end > exp {
                is_float = true;
                idx = end;
            }
        }
        let text: String = self.chars[start..idx].iter().collect();
        let value = if is_float {
            float_value(text.parse().unwrap_or(f64::NAN))
        } else if text == "-0" {
            // `int("-0")` is 0.
            number_from_text("0")
        } else {
            number_from_text(&text)
        };
        Ok((value, idx))
    }

    /// `scanstring`: `idx` is just past the opening quote.
    fn string(&self, idx: usize) -> Scan<(String, usize)> {
        let begin = idx - 1;
        let mut out = String::new();
        let mut next = idx;
        loop {
            let c = loop {
                match self.at(next) {
                    None => return Err(("Unterminated string starting at", begin)),
                    Some(c @ ('"' | '\\')) => break c,
                    Some(c) if (c as u32) <= 0x1f => {
                        return Err(("Invalid control character at", next))
                    }
                    Some(c) => out.push(c),
                }
                next += 1;
            };
            next += 1;
            if c == '"' {
                return Ok((out, next));
            }
            next = self.escape(next, &mut out, begin)?;
        }
    }

    /// One backslash escape; `next` is just past the backslash.
    fn escape(&self, next: usize, out: &mut String, begin: usize) -> Scan<usize> {
        let Some(c) = self.at(next) else {
            return Err(("Unterminated string starting at", begin));
        };
        let simple = match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(next + 1, out),
            _ => return Err(("Invalid \\escape", next - 1)),
        };
        out.push(simple);
        Ok(next + 1)
    }

    fn hex4(&self, from: usize) -> Option<u32> {
        let digits = self.chars.get(from..from + 4)?;
        digits
            .iter()
            .try_fold(0u32, |acc, d| Some(acc * 16 + d.to_digit(16)?))
    }

    /// `\uXXXX`, joining a surrogate pair; `next` is just past the `u`.
    fn unicode_escape(&self, next: usize, out: &mut String) -> Scan<usize> {
        let end = next + 4;
        if end >= self.chars.len() {
            return Err(("Invalid \\uXXXX escape", next - 1));
        }
        let code = self.hex4(next).ok_or(("Invalid \\uXXXX escape", end - 5))?;
        let is_high = (0xd800..0xdc00).contains(&code);
        if is_high
            && end + 6 < self.chars.len()
            && self.at(end) == Some('\\')
            && self.at(end + 1) == Some('u')
        {
            let low = self
                .hex4(end + 2)
                .ok_or(("Invalid \\uXXXX escape", end + 1))?;
            if (0xdc00..0xe000).contains(&low) {
                let joined = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                out.push(char::from_u32(joined).unwrap_or('\u{fffd}'));
                return Ok(end + 6);
            }
        }
        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
        Ok(end)
    }

    fn object(&self, idx: usize, depth: usize) -> Scan<(Value, usize)> {
        let mut map = Map::new();
        let mut idx = self.skip_ws(idx);
        if self.at(idx) == Some('}') {
            return Ok((Value::Object(map), idx + 1));
        }
        loop {
            if self.at(idx) != Some('"') {
                return Err(("Expecting property name enclosed in double quotes", idx));
            }
            let (key, after) = self.string(idx + 1)?;
            idx = self.skip_ws(after);
            if self.at(idx) != Some(':') {
                return Err(("Expecting ':' delimiter", idx));
            }
            idx = self.skip_ws(idx + 1);
            let (value, after) = self.value(idx, depth + 1)?;
            map.insert(key, value);
            idx = self.skip_ws(after);
            match self.at(idx) {
                Some('}') => return Ok((Value::Object(map), idx + 1)),
                Some(',') => idx = self.skip_ws(idx + 1),
                _ => return Err(("Expecting ',' delimiter", idx)),
            }
        }
    }

    fn array(&self, idx: usize, depth: usize) -> Scan<(Value, usize)> {
        let mut items = Vec::new();
        let mut idx = self.skip_ws(idx);
        if self.at(idx) == Some(']') {
            return Ok((Value::Array(items), idx + 1));
        }
        loop {
            let (value, after) = self.value(idx, depth + 1)?;
            items.push(value);
            idx = self.skip_ws(after);
            match self.at(idx) {
                Some(']') => return Ok((Value::Array(items), idx + 1)),
                Some(',') => idx = self.skip_ws(idx + 1),
                _ => return Err(("Expecting ',' delimiter", idx)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        loads(text).unwrap_err().to_string()
    }

    /// Messages checked against CPython 3.11's `json.loads`.
    #[test]
    fn errors_read_as_python_words_them() {
        assert_eq!(
            error("{\"a\": \"x\ny\"}"),
            "Invalid control character at: line 1 column 9 (char 8)"
        );
        assert_eq!(
            error("{\"a\":\"\\q\"}"),
            "Invalid \\escape: line 1 column 7 (char 6)"
        );
        assert_eq!(
            error("\"\\u12"),
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)"
        );
        assert_eq!(
            error("\"\\u12zz\""),
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)"
        );
        assert_eq!(
            error("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(error("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(
            error("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            error("{"),
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(error("-"), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(
            error("\"abc"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(error("1 2"), "Extra data: line 1 column 3 (char 2)");
    }

    #[test]
    fn values_keep_python_numbers() {
        let value = loads(r#"{"a": 1e2, "b": 10000000000000000000001, "c": "\ud83d\ude00"}"#);
        assert_eq!(
            value.unwrap().to_string(),
            r#"{"a":100.0,"b":10000000000000000000001,"c":"😀"}"#
        );
    }
}
