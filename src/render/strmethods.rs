//! Python `str` methods (and the string filters built on them) where MiniJinja's
//! pycompat layer differs from CPython.
//!
//! * **Whitespace** is `str.isspace()`: Rust's `char::is_whitespace` plus the ASCII
//!   separators `\x1c`-`\x1f`, for `split()`, `rsplit()`, `strip()` and `|trim`.
//! * **`split` / `rsplit`** take `sep` and `maxsplit` as keywords too, and keep Python's
//!   rules for whitespace splitting with a limit.
//! * **`splitlines`** splits on every line boundary Python knows, `keepends` included.
//! * **`title()`** capitalises after every uncased character (`"they're"` ->
//!   `"They'Re"`), while the `|title` filter is Jinja2's own, which starts words only
//!   after whitespace, `-` and opening brackets (`"They're"`).
//! * **`index` / `rindex`** are `find` / `rfind` that raise `ValueError`.
//! * **`encode`** gives bytes, printed `b'...'`; `bytes.decode` turns them back.

use minijinja::value::{from_args, Kwargs, Value, ValueKind};
use minijinja::Error;

use super::none::is_python_none;
use super::pyerror::raise;
use super::pystr::splitlines;

/// Python's `str.isspace()` for one character.
pub fn is_space(ch: char) -> bool {
    ch.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&ch)
}

/// Registers the string filters with Python's semantics.
pub fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("title", |value: Value| {
        jinja_title(&super::pyrepr::to_str(&value))
    });
    env.add_filter("trim", trim);
}

/// The string methods this module implements, or `None` to let pycompat answer.
pub fn call(text: &str, method: &str, args: &[Value]) -> Option<Result<Value, Error>> {
    Some(match method {
        "split" => split(text, args, false),
        "rsplit" => split(text, args, true),
        "strip" | "lstrip" | "rstrip" => strip(text, method, args),
        "splitlines" => lines(text, args),
        "isspace" => Ok(Value::from(!text.is_empty() && text.chars().all(is_space))),
        "index" | "rindex" => index(text, method == "rindex", args),
        "encode" => encode(text, args),
        "title" => Ok(Value::from(python_title(text))),
        _ => return None,
    })
}

/// `bytes.decode(encoding='utf-8')`.
pub fn decode(bytes: &[u8], args: &[Value]) -> Result<Value, Error> {
    let (encoding,): (Option<String>,) = from_args(args)?;
    match codec(encoding.as_deref())? {
        Codec::Utf8 => String::from_utf8(bytes.to_vec()).map(Value::from).map_err(|err| {
            let at = err.utf8_error().valid_up_to();
            raise(
                "UnicodeDecodeError",
                format!(
                    "'utf-8' codec can't decode byte 0x{:02x} in position {at}: invalid start byte",
                    bytes[at]
                ),
            )
        }),
        Codec::Latin1 => Ok(Value::from(bytes.iter().map(|&b| char::from(b)).collect::<String>())),
        Codec::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
            None => Ok(Value::from(String::from_utf8_lossy(bytes).into_owned())),
            Some(at) => Err(raise(
                "UnicodeDecodeError",
                format!(
                    "'ascii' codec can't decode byte 0x{:02x} in position {at}: ordinal not in range(128)",
                    bytes[at]
                ),
            )),
        },
    }
}

/// `sep` and `maxsplit`, positional or by keyword.
fn split_arguments(args: &[Value]) -> Result<(Option<String>, Option<usize>), Error> {
    let (sep, maxsplit, kwargs): (Option<Value>, Option<Value>, Kwargs) = from_args(args)?;
    let sep = match kwargs.get::<Option<Value>>("sep")?.or(sep) {
        Some(value) if is_python_none(&value) => None,
        Some(value) => match value.as_str() {
            Some("") => return Err(raise("ValueError", "empty separator")),
            Some(sep) if value.kind() == ValueKind::String => Some(sep.to_string()),
            _ => {
                return Err(raise(
                    "TypeError",
                    format!(
                        "must be str or None, not {}",
                        super::pytype::type_name(&value)
                    ),
                ))
            }
        },
        None => None,
    };
    let maxsplit = kwargs
        .get::<Option<Value>>("maxsplit")?
        .or(maxsplit)
        .and_then(|v| v.as_i64())
        .and_then(|n| usize::try_from(n).ok());
    kwargs.assert_all_used()?;
    Ok((sep, maxsplit))
}

fn split(text: &str, args: &[Value], from_right: bool) -> Result<Value, Error> {
    let (sep, maxsplit) = split_arguments(args)?;
    let limit = maxsplit.unwrap_or(usize::MAX);
    let parts: Vec<String> = match (sep, from_right) {
        (Some(sep), false) => text
            .splitn(limit.saturating_add(1), sep.as_str())
            .map(String::from)
            .collect(),
        (Some(sep), true) => {
            let mut parts: Vec<String> = text
                .rsplitn(limit.saturating_add(1), sep.as_str())
                .map(String::from)
                .collect();
            parts.reverse();
            parts
        }
        (None, false) => split_whitespace(text, limit),
        (None, true) => {
            let reversed: String = text.chars().rev().collect();
            let mut parts: Vec<String> = split_whitespace(&reversed, limit)
                .iter()
                .map(|part| part.chars().rev().collect())
                .collect();
            parts.reverse();
            parts
        }
    };
    Ok(Value::from(parts))
}

/// `str.split()` without a separator: runs of whitespace separate words; after `limit`
/// splits the rest is one piece, with its leading whitespace removed.
fn split_whitespace(text: &str, limit: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = text.trim_start_matches(is_space);
    while !rest.is_empty() {
        if parts.len() == limit {
            parts.push(rest.to_string());
            break;
        }
        let end = rest.find(is_space).unwrap_or(rest.len());
        parts.push(rest[..end].to_string());
        rest = rest[end..].trim_start_matches(is_space);
    }
    parts
}

fn strip(text: &str, method: &str, args: &[Value]) -> Result<Value, Error> {
    let (chars,): (Option<Value>,) = from_args(args)?;
    let chars: Option<Vec<char>> = chars
        .filter(|v| !is_python_none(v))
        .map(|v| v.as_str().unwrap_or_default().chars().collect());
    let matches = |c: char| match &chars {
        Some(set) => set.contains(&c),
        None => is_space(c),
    };
    Ok(Value::from(match method {
        "lstrip" => text.trim_start_matches(matches),
        "rstrip" => text.trim_end_matches(matches),
        _ => text.trim_matches(matches),
    }))
}

/// `|trim(chars=None)`: Jinja2's `str.strip(chars)`.
fn trim(value: Value, chars: Option<Value>) -> Result<Value, Error> {
    let text = super::pyrepr::to_str(&value);
    strip(&text, "strip", &chars.into_iter().collect::<Vec<_>>())
}

/// `str.splitlines(keepends=False)`.
fn lines(text: &str, args: &[Value]) -> Result<Value, Error> {
    let (keepends, kwargs): (Option<bool>, Kwargs) = from_args(args)?;
    let keepends = kwargs
        .get::<Option<bool>>("keepends")?
        .or(keepends)
        .unwrap_or(false);
    kwargs.assert_all_used()?;
    let pieces = splitlines(text);
    if !keepends {
        return Ok(Value::from_iter(pieces.into_iter().map(Value::from)));
    }
    // Each piece runs up to the next piece's start (its line break included).
    let base = text.as_ptr() as usize;
    let starts: Vec<usize> = pieces.iter().map(|p| p.as_ptr() as usize - base).collect();
    let kept = starts.iter().enumerate().map(|(i, &start)| {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        Value::from(&text[start..end])
    });
    Ok(Value::from_iter(kept))
}

/// `str.index(sub[, start[, end]])` / `rindex`: a character position or `ValueError`.
fn index(text: &str, from_right: bool, args: &[Value]) -> Result<Value, Error> {
    let (sub, start, end): (String, Option<i64>, Option<i64>) = from_args(args)?;
    let chars: Vec<char> = text.chars().collect();
    let bound = |n: Option<i64>, default: usize| match n {
        Some(n) if n < 0 => chars.len().saturating_sub(n.unsigned_abs() as usize),
        Some(n) => (n as usize).min(chars.len()),
        None => default,
    };
    let (from, to) = (bound(start, 0), bound(end, chars.len()));
    let window: String = chars
        .get(from..to.max(from))
        .unwrap_or_default()
        .iter()
        .collect();
    let found = if from_right {
        window.rfind(&sub)
    } else {
        window.find(&sub)
    };
    match found {
        Some(at) => Ok(Value::from(from + window[..at].chars().count())),
        None => Err(raise("ValueError", "substring not found")),
    }
}

enum Codec {
    Utf8,
    Ascii,
    Latin1,
}

/// The codecs chat templates could reasonably name, spelled any way Python accepts.
fn codec(name: Option<&str>) -> Result<Codec, Error> {
    let normalized = name
        .unwrap_or("utf-8")
        .to_ascii_lowercase()
        .replace('_', "-");
    match normalized.as_str() {
        "utf-8" | "utf8" => Ok(Codec::Utf8),
        "ascii" | "us-ascii" => Ok(Codec::Ascii),
        "latin-1" | "latin1" | "iso-8859-1" => Ok(Codec::Latin1),
        _ => Err(raise(
            "LookupError",
            format!("unknown encoding: {}", name.unwrap_or_default()),
        )),
    }
}

/// `str.encode(encoding='utf-8')`.
fn encode(text: &str, args: &[Value]) -> Result<Value, Error> {
    let (encoding, kwargs): (Option<String>, Kwargs) = from_args(args)?;
    let encoding = kwargs.get::<Option<String>>("encoding")?.or(encoding);
    let _errors: Option<String> = kwargs.get("errors")?;
    kwargs.assert_all_used()?;
    let limit = match codec(encoding.as_deref())? {
        Codec::Utf8 => return Ok(Value::from_bytes(text.as_bytes().to_vec())),
        Codec::Ascii => (128, "ascii"),
        Codec::Latin1 => (256, "latin-1"),
    };
    match text.chars().position(|c| (c as u32) >= limit.0) {
        None => Ok(Value::from_bytes(text.chars().map(|c| c as u8).collect())),
        Some(at) => {
            let code = text.chars().nth(at).map_or(0, u32::from);
            // Python writes the character as an escape, whatever it is.
            let escaped = match code {
                0..=0xff => format!("\\x{code:02x}"),
                0x100..=0xffff => format!("\\u{code:04x}"),
                _ => format!("\\U{code:08x}"),
            };
            Err(raise(
                "UnicodeEncodeError",
                format!(
                    "'{}' codec can't encode character '{escaped}' in position {at}: ordinal not in range({})",
                    limit.1, limit.0
                ),
            ))
        }
    }
}

/// Python's `str.title()`: a cased character after an uncased one is upper-cased, every
/// other cased character lower-cased.
fn python_title(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous_cased = false;
    for ch in text.chars() {
        let cased = ch.is_uppercase() || ch.is_lowercase();
        if cased && previous_cased {
            out.extend(ch.to_lowercase());
        } else if cased {
            out.extend(ch.to_uppercase());
        } else {
            out.push(ch);
        }
        previous_cased = cased;
    }
    out
}

/// Jinja2's `|title`: words start after whitespace, `-`, `(`, `{`, `[` or `<`; each
/// word's first character is upper-cased and the rest lower-cased.
fn jinja_title(text: &str) -> String {
    let starts_word = |c: char| is_space(c) || "-({[<".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut at_start = true;
    for ch in text.chars() {
        if starts_word(ch) {
            out.push(ch);
            at_start = true;
        } else if at_start {
            out.extend(ch.to_uppercase());
            at_start = false;
        } else {
            out.extend(ch.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(value: Value) -> Vec<String> {
        value
            .try_iter()
            .unwrap()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    // Expectations: CPython 3.11 on the same strings.
    #[test]
    fn splits_like_python() {
        let kw = |k: &str, v: Value| Value::from(Kwargs::from_iter([(k.to_string(), v)]));
        assert_eq!(
            strings(split("  a b  c  ", &[Value::from(()), Value::from(1)], false).unwrap()),
            ["a", "b  c  "]
        );
        assert_eq!(
            strings(split("  a b  c  ", &[kw("maxsplit", Value::from(1))], true).unwrap()),
            ["  a b", "c"]
        );
        assert_eq!(strings(split("a\u{1c}b", &[], false).unwrap()), ["a", "b"]);
        assert_eq!(strings(split("a b", &[], true).unwrap()), ["a", "b"]);
    }

    #[test]
    fn titles_like_python_and_jinja2() {
        assert_eq!(python_title("they're bill's 1st"), "They'Re Bill'S 1St");
        assert_eq!(
            jinja_title("they're bill's-x (ok)"),
            "They're Bill's-X (Ok)"
        );
    }
}
