//! Python `str` methods (and the string filters built on them) where MiniJinja's
//! pycompat layer differs from CPython.
//!
//! * **Whitespace** is `str.isspace()`: Rust's `char::is_whitespace` plus the ASCII
//!   separators `\x1c`-`\x1f`, for `split()`, `rsplit()`, `strip()` and `|trim`.
//! * **`split` / `rsplit` / `splitlines`**: see [`super::splitting`].
//! * **`title()`** capitalises after every uncased character (`"they're"` ->
//!   `"They'Re"`), while the `|title` filter is Jinja2's own, which starts words only
//!   after whitespace, `-` and opening brackets (`"They're"`).
//! * **`capitalize()`** and `str.title()` use title case (`ß` -> `Ss`, `ǆ` -> `ǅ`).
//! * **`index` / `rindex`** are `find` / `rfind` that raise `ValueError`.
//! * **`encode`** gives bytes (see [`super::bytes`]).

use minijinja::value::{from_args, Value, ValueKind};
use minijinja::{Error, State};

use super::none::is_python_none;
use super::pyerror::raise;
use super::splitting;

/// Python's `str.isspace()` for one character.
pub(crate) fn is_space(ch: char) -> bool {
    ch.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&ch)
}

/// Registers the string filters with Python's semantics.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("title", |state: &State, value: Value| {
        let text = case_mapping_input(state, &value)?;
        Ok::<_, Error>(jinja_title(&text))
    });
    env.add_filter("trim", trim);
    env.add_filter("capitalize", |state: &State, value: Value| {
        let text = case_mapping_input(state, &value)?;
        Ok::<_, Error>(capitalize(&text))
    });
}

/// `str(value)` for a case mapping filter, its result (and that result's copy into a
/// template value) charged to the render's byte budget first.
fn case_mapping_input(state: &State, value: &Value) -> Result<String, Error> {
    super::scope::tick(Some(state))?;
    let text = super::pyrepr::to_str_in(Some(state), value)?;
    let most = super::sized::case_mapped_len(&text).saturating_mul(2);
    super::scope::reserve(Some(state), most)?;
    Ok(text)
}

/// The string methods this module implements, or `None` to let pycompat answer.
pub(crate) fn call(
    state: &State,
    text: &str,
    method: &str,
    args: &[Value],
) -> Option<Result<Value, Error>> {
    Some(match method {
        "split" => splitting::split(Some(state), text, args, false),
        "rsplit" => splitting::split(Some(state), text, args, true),
        "strip" | "lstrip" | "rstrip" => strip(text, method, args),
        "splitlines" => splitting::splitlines(Some(state), text, args),
        "isspace" => Ok(Value::from(!text.is_empty() && text.chars().all(is_space))),
        "index" | "rindex" => index(text, method == "rindex", args),
        "encode" => super::bytes::encode(text, args),
        "title" => Ok(Value::from(python_title(text))),
        "capitalize" => Ok(Value::from(capitalize(text))),
        "format" => super::conversions::str_format(text, args)?.and_then(|(format, args)| {
            minijinja::formatting::format(
                minijinja::formatting::FormatStyle::StrFormat,
                &format,
                &args,
            )
            .map(Value::from)
        }),
        _ => return None,
    })
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
    // A plain string with nothing to strip is its own result: no copy (templates trim
    // every message's content, which rarely has surrounding whitespace).
    if chars.is_none() && value.kind() == ValueKind::String && !value.is_safe() {
        if let Some(text) = value.as_str() {
            if text.trim_matches(is_space).len() == text.len() {
                return Ok(value);
            }
        }
    }
    let text = super::pyrepr::to_str(&value);
    strip(&text, "strip", &chars.into_iter().collect::<Vec<_>>())
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
            push_titlecase(&mut out, ch);
        } else {
            out.push(ch);
        }
        previous_cased = cased;
    }
    out
}

/// Python's `str.capitalize()` (and Jinja2's `|capitalize`): the first character in
/// title case, the rest lower-cased.
fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    let mut out = String::with_capacity(text.len());
    if let Some(first) = chars.next() {
        push_titlecase(&mut out, first);
    }
    out.extend(chars.flat_map(char::to_lowercase));
    out
}

/// Appends `ch` in title case. Rust only knows upper case; the two differ for the
/// Latin digraphs (`ǆ` -> `ǅ`), the ligatures (`ß` -> `Ss`, `ﬁ` -> `Fi`) and the Greek
/// letters with iota subscript, which are mapped here.
fn push_titlecase(out: &mut String, ch: char) {
    let mapped = match ch {
        '\u{1c4}'..='\u{1c6}' => "\u{1c5}",
        '\u{1c7}'..='\u{1c9}' => "\u{1c8}",
        '\u{1ca}'..='\u{1cc}' => "\u{1cb}",
        '\u{1f1}'..='\u{1f3}' => "\u{1f2}",
        'ß' => "Ss",
        'ﬀ' => "Ff",
        'ﬁ' => "Fi",
        'ﬂ' => "Fl",
        'ﬃ' => "Ffi",
        'ﬄ' => "Ffl",
        'ﬅ' | 'ﬆ' => "St",
        'և' => "Եւ",
        'ﬓ' => "Մն",
        'ﬔ' => "Մե",
        'ﬕ' => "Մի",
        'ﬖ' => "Վն",
        'ﬗ' => "Մխ",
        _ => {
            let code = ch as u32;
            let greek = match code {
                0x1f80..=0x1f87 | 0x1f90..=0x1f97 | 0x1fa0..=0x1fa7 => Some(code + 8),
                0x1f88..=0x1f8f | 0x1f98..=0x1f9f | 0x1fa8..=0x1faf => Some(code),
                0x1fb3 | 0x1fc3 | 0x1ff3 => Some(code + 9),
                _ => None,
            };
            match greek.and_then(char::from_u32) {
                Some(title) => out.push(title),
                None => out.extend(ch.to_uppercase()),
            }
            return;
        }
    };
    out.push_str(mapped);
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

    #[test]
    fn titles_like_python_and_jinja2() {
        assert_eq!(python_title("they're bill's 1st"), "They'Re Bill'S 1St");
        assert_eq!(
            jinja_title("they're bill's-x (ok)"),
            "They're Bill's-X (Ok)"
        );
    }
}
