//! Filters whose MiniJinja behaviour differs from Jinja2's, re-implemented with Python
//! semantics: `tojson` (transformers' `json.dumps`), `string`, `join`, `indent`,
//! `length`/`count`, `first`/`last` and `items`.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::generators::is_generator;
use super::none::is_python_none;
use super::pyjson::{dumps, DumpOptions};
use super::pyrepr::to_str_in;
use super::pytype::type_name;
use super::scope;

/// Registers every overriding filter on `env`.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("tojson", tojson);
    env.add_filter("string", string);
    env.add_filter("join", join);
    env.add_filter("indent", indent);
    env.add_filter("length", length);
    env.add_filter("count", length);
    env.add_filter("first", first);
    env.add_filter("last", last);
}

/// `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`,
/// with the same positional order as transformers' Python signature.
fn tojson(state: &State, value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    let positional = |index: usize, name: &str| -> Result<Option<Value>, Error> {
        let keyword: Option<Value> = kwargs.get(name)?;
        Ok(keyword.or_else(|| args.get(index).cloned()))
    };
    let options = DumpOptions {
        ensure_ascii: positional(0, "ensure_ascii")?.is_some_and(|v| v.is_true()),
        indent: positional(1, "indent")?
            .map(|v| indent_text(state, &v))
            .transpose()?
            .flatten(),
        separators: positional(2, "separators")?
            .map(|v| separator_pair(state, &v))
            .transpose()?
            .flatten(),
        sort_keys: positional(3, "sort_keys")?.is_some_and(|v| v.is_true()),
        max_bytes: None,
    };
    kwargs.assert_all_used()?;
    let json = dumps(&value, &options)?;
    // Becoming a template value copies it.
    scope::reserve(Some(state), json.len())?;
    Ok(Value::from(json))
}

/// A template-controlled count (a width, a repetition): a non-negative size, checked
/// against the render's byte budget (`each` bytes per unit) before anything is built.
pub(crate) fn checked_count(state: &State, value: &Value, each: usize) -> Result<usize, Error> {
    let count = match value.as_i64() {
        Some(n) => usize::try_from(n.max(0)).unwrap_or(usize::MAX),
        // An integer beyond 64 bits: far more than any budget.
        None if value.is_integer() => usize::MAX,
        None => 0,
    };
    scope::reserve_items(Some(state), count, each)?;
    Ok(count)
}

/// Python's `indent` argument: an int is that many spaces, a string is used as is.
fn indent_text(state: &State, value: &Value) -> Result<Option<String>, Error> {
    if is_python_none(value) {
        return Ok(None);
    }
    Ok(Some(match value.as_str() {
        Some(text) => text.to_string(),
        None => " ".repeat(checked_count(state, value, 1)?),
    }))
}

fn separator_pair(state: &State, value: &Value) -> Result<Option<(String, String)>, Error> {
    if is_python_none(value) {
        return Ok(None);
    }
    let parts = iterate(state, value)?;
    match parts.as_slice() {
        [item, key] => Ok(Some((
            to_str_in(Some(state), item)?,
            to_str_in(Some(state), key)?,
        ))),
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            "ValueError: separators must be a pair of strings",
        )),
    }
}

/// Python's `str()`.
fn string(state: &State, value: Value) -> Result<String, Error> {
    let text = to_str_in(Some(state), &value)?;
    // Becoming a template value copies it.
    scope::reserve(Some(state), text.len())?;
    Ok(text)
}

/// Jinja2's `join(d='', attribute=None)`, stringifying items with Python's `str()`.
fn join(
    state: &mut State,
    value: Value,
    separator: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let attribute: Option<String> = kwargs.get("attribute")?;
    kwargs.assert_all_used()?;
    let separator = separator.unwrap_or_default();
    let items = iterate(state, &value)?;
    scope::reserve_items(Some(state), items.len(), separator.len())?;
    let mut joined = String::new();
    for (index, item) in items.into_iter().enumerate() {
        let item = match &attribute {
            Some(path) => state.apply_filter("attr", &[item, Value::from(path.as_str())])?,
            None => item,
        };
        let text = to_str_in(Some(state), &item)?;
        scope::reserve(Some(state), text.len() + separator.len())?;
        if index > 0 {
            joined.push_str(&separator);
        }
        joined.push_str(&text);
    }
    Ok(joined)
}

/// Jinja2's `indent(width=4, first=False, blank=False)`, including its handling of the
/// trailing newline (it appends one before splitting, so a final newline survives).
fn indent(state: &State, text: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let width: Option<Value> = kwargs.get("width")?;
    let width = width.or_else(|| args.first().cloned());
    let first: Option<bool> = kwargs.get("first")?;
    let blank: Option<bool> = kwargs.get("blank")?;
    kwargs.assert_all_used()?;
    let first = first.unwrap_or_else(|| args.get(1).is_some_and(minijinja::Value::is_true));
    let blank = blank.unwrap_or_else(|| args.get(2).is_some_and(minijinja::Value::is_true));
    let indention = match &width {
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or_default().to_string(),
        Some(w) if w.as_i64().is_none() && !w.is_integer() => "    ".to_string(),
        Some(w) => " ".repeat(checked_count(state, w, 1)?),
        None => "    ".to_string(),
    };
    let text = match text.as_str() {
        Some(borrowed) if text.kind() == ValueKind::String => std::borrow::Cow::Borrowed(borrowed),
        _ => std::borrow::Cow::Owned(to_str_in(Some(state), &text)?),
    };
    let indented = indent_lines(state, &text, &indention, first, blank)?;
    // Becoming a template value copies it.
    scope::reserve(Some(state), indented.len())?;
    Ok(indented)
}

/// Jinja2's `indent` of `text` (which appends a line break first, so that a text
/// ending in one gets an empty last line), built line by line and charged to the
/// render's byte budget before the result grows.
fn indent_lines(
    state: &State,
    text: &str,
    indention: &str,
    first: bool,
    blank: bool,
) -> Result<String, Error> {
    let mut out = String::new();
    if first {
        scope::push_charged(Some(state), &mut out, indention)?;
    }
    // `(text + "\n").splitlines()`: the text's own lines, and an empty one after a
    // final line break (or for an empty text).
    let mut ends_in_break = true;
    let lines = super::pystr::Lines::new(text).map(|line| {
        ends_in_break = line.with_break.len() > line.text.len();
        line.text
    });
    let mut index = 0;
    let mut write = |line: &str, out: &mut String| -> Result<(), Error> {
        if index > 0 {
            scope::push_charged(Some(state), out, "\n")?;
            if blank || !line.is_empty() {
                scope::push_charged(Some(state), out, indention)?;
            }
        }
        index += 1;
        scope::push_charged(Some(state), out, line)
    };
    for line in lines {
        write(line, &mut out)?;
    }
    if ends_in_break {
        write("", &mut out)?;
    }
    Ok(out)
}

/// `len(x)`, failing like Python for values without a length.
fn length(state: &State, value: Value) -> Result<usize, Error> {
    scope::tick(Some(state))?;
    if value.is_undefined() {
        return Ok(0);
    }
    match value.kind() {
        ValueKind::String => Ok(value.as_str().unwrap_or_default().chars().count()),
        // Lists and dicts (`messages|length` on every turn) are neither `None` nor
        // generators, which are plain and iterable objects.
        ValueKind::Seq | ValueKind::Map => value.len().ok_or_else(|| no_len(&value)),
        _ if is_python_none(&value) => Err(no_len(&value)),
        _ if is_generator(&value) => Err(no_len(&value)),
        _ => value.len().ok_or_else(|| no_len(&value)),
    }
}

fn no_len(value: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "TypeError: object of type '{}' has no len()",
            type_name(value)
        ),
    )
}

fn first(state: &State, value: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    ensure_iterable(&value)?;
    Ok(value.try_iter()?.next().unwrap_or_default())
}

fn last(state: &State, value: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    ensure_iterable(&value)?;
    if let Some(len) = value.len().filter(|n| *n > 0) {
        if value.kind() == ValueKind::Seq {
            return Ok(value.get_item(&Value::from(len - 1)).unwrap_or_default());
        }
    }
    let mut last = Value::UNDEFINED;
    for (index, item) in value.try_iter()?.enumerate() {
        if index % 4096 == 0 {
            scope::tick(Some(state))?;
        }
        last = item;
    }
    Ok(last)
}

/// Bytes one collected item is counted as (a MiniJinja value).
pub(crate) const ITEM_BYTES: usize = 24;

/// Longest string MiniJinja keeps inside the value itself, without an allocation.
const SMALL_TEXT_BYTES: usize = 22;

/// Bytes a string value of `len` bytes allocates besides the value: none for a short
/// one, else the shared string with its two reference counts.
pub(crate) fn text_value_bytes(len: usize) -> usize {
    if len <= SMALL_TEXT_BYTES {
        0
    } else {
        len.saturating_add(16)
    }
}

/// Iterates like Python's `iter()`: `None` and numbers are not iterable. The items are
/// collected, so their number is checked against the render's byte budget first.
pub(crate) fn iterate(state: &State, value: &Value) -> Result<Vec<Value>, Error> {
    ensure_iterable(value)?;
    scope::tick(Some(state))?;
    let len = value.len().unwrap_or(0);
    scope::reserve_items(Some(state), len, ITEM_BYTES)?;
    // At its final size: grown by doubling, it would hold up to twice what was charged.
    let mut items = Vec::with_capacity(len);
    for item in value.try_iter()? {
        if items.len() % 4096 == 4095 {
            scope::reserve_items(Some(state), 4096, ITEM_BYTES)?;
        }
        items.push(item);
    }
    Ok(items)
}

/// Fails with Python's `TypeError` for `None`, numbers and booleans.
pub(crate) fn ensure_iterable(value: &Value) -> Result<(), Error> {
    if is_python_none(value) || matches!(value.kind(), ValueKind::Number | ValueKind::Bool) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("TypeError: '{}' object is not iterable", type_name(value)),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    // CPython 3.11 + Jinja2 3.1.6: "a\n\nb\n"|indent(2) == "a\n\n  b\n"
    #[test]
    fn indent_keeps_trailing_newline_and_skips_blank_lines() {
        let env = minijinja::Environment::new();
        let state = env.empty_state();
        let indent = |text, first, blank| super::indent_lines(&state, text, "  ", first, blank);
        assert_eq!(indent("a\n\nb\n", false, false).unwrap(), "a\n\n  b\n");
        assert_eq!(indent("a\nb", true, false).unwrap(), "  a\n  b");
        assert_eq!(indent("a\n\nb", false, true).unwrap(), "a\n  \n  b");
        assert_eq!(indent("", true, true).unwrap(), "  ");
        assert_eq!(indent("a\r\nb", false, false).unwrap(), "a\n  b");
    }
}
