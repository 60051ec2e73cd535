//! Filters whose MiniJinja behaviour differs from Jinja2's, re-implemented with Python
//! semantics: `tojson` (transformers' `json.dumps`), `string`, `join`, `indent`,
//! `length`/`count`, `first`/`last` and `items`.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::generators::is_generator;
use super::none::is_python_none;
use super::pyjson::{dumps, DumpOptions};
use super::pyrepr::to_str;
use super::pytype::type_name;

/// Registers every overriding filter on `env`.
pub fn register(env: &mut minijinja::Environment<'static>) {
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
    let positional = |index: usize, name: &str| -> Result<Option<Value>, Error> {
        let keyword: Option<Value> = kwargs.get(name)?;
        Ok(keyword.or_else(|| args.get(index).cloned()))
    };
    let options = DumpOptions {
        ensure_ascii: positional(0, "ensure_ascii")?.is_some_and(|v| v.is_true()),
        indent: positional(1, "indent")?.and_then(|v| indent_text(&v)),
        separators: positional(2, "separators")?
            .map(|v| separator_pair(&v))
            .transpose()?
            .flatten(),
        sort_keys: positional(3, "sort_keys")?.is_some_and(|v| v.is_true()),
        max_bytes: Some(byte_budget(state)),
    };
    kwargs.assert_all_used()?;
    dumps(&value, &options).map(Value::from)
}

/// How many bytes a filter may still produce: fuel pays 1/64 per allocated byte.
pub fn byte_budget(state: &State) -> usize {
    state.fuel_levels().map_or(usize::MAX, |(_, remaining)| {
        usize::try_from(remaining.saturating_mul(64)).unwrap_or(usize::MAX)
    })
}

fn over_budget(state: &State, bytes: usize, filter: &str) -> Result<(), Error> {
    if bytes > byte_budget(state) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("{filter}: result exceeds the render's remaining budget"),
        ));
    }
    Ok(())
}

/// Python's `indent` argument: an int is that many spaces, a string is used as is.
fn indent_text(value: &Value) -> Option<String> {
    if is_python_none(value) {
        return None;
    }
    match value.as_str() {
        Some(text) => Some(text.to_string()),
        None => Some(" ".repeat(value.as_i64().unwrap_or(0).max(0) as usize)),
    }
}

fn separator_pair(value: &Value) -> Result<Option<(String, String)>, Error> {
    if is_python_none(value) {
        return Ok(None);
    }
    let parts: Vec<Value> = value.try_iter()?.collect();
    match parts.as_slice() {
        [item, key] => Ok(Some((to_str(item), to_str(key)))),
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            "ValueError: separators must be a pair of strings",
        )),
    }
}

/// Python's `str()`.
fn string(value: Value) -> String {
    to_str(&value)
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
    let mut parts = Vec::new();
    for item in iterate(&value)? {
        let item = match &attribute {
            Some(path) => state.apply_filter("attr", &[item, Value::from(path.as_str())])?,
            None => item,
        };
        parts.push(to_str(&item));
    }
    let total = parts.iter().map(String::len).sum::<usize>() + separator.len() * parts.len();
    over_budget(state, total, "join")?;
    Ok(parts.join(&separator))
}

/// Jinja2's `indent(width=4, first=False, blank=False)`, including its handling of the
/// trailing newline (it appends one before splitting, so a final newline survives).
fn indent(state: &State, text: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let width: Option<Value> = kwargs.get("width")?;
    let width = width.or_else(|| args.first().cloned());
    let first: Option<bool> = kwargs.get("first")?;
    let blank: Option<bool> = kwargs.get("blank")?;
    kwargs.assert_all_used()?;
    let first = first.unwrap_or_else(|| args.get(1).is_some_and(|v| v.is_true()));
    let blank = blank.unwrap_or_else(|| args.get(2).is_some_and(|v| v.is_true()));
    let indention = match &width {
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or_default().to_string(),
        Some(w) => " ".repeat(w.as_i64().unwrap_or(4).max(0) as usize),
        None => "    ".to_string(),
    };
    let text = to_str(&text);
    let lines = text.matches('\n').count() + 1;
    over_budget(state, text.len() + lines * indention.len(), "indent")?;
    Ok(indent_lines(&text, &indention, first, blank))
}

fn indent_lines(text: &str, indention: &str, first: bool, blank: bool) -> String {
    let padded = format!("{text}\n");
    let lines = super::pystr::splitlines(&padded);
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            out.push('\n');
            if blank || !line.is_empty() {
                out.push_str(indention);
            }
        }
        out.push_str(line);
    }
    if first {
        out.insert_str(0, indention);
    }
    out
}

/// `len(x)`, failing like Python for values without a length.
fn length(value: Value) -> Result<usize, Error> {
    if value.is_undefined() {
        return Ok(0);
    }
    match value.kind() {
        ValueKind::String => Ok(value.as_str().unwrap_or_default().chars().count()),
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

fn first(value: Value) -> Result<Value, Error> {
    Ok(iterate(&value)?.into_iter().next().unwrap_or_default())
}

fn last(value: Value) -> Result<Value, Error> {
    Ok(iterate(&value)?.into_iter().last().unwrap_or_default())
}

/// Iterates like Python's `iter()`: `None` and numbers are not iterable.
pub fn iterate(value: &Value) -> Result<Vec<Value>, Error> {
    ensure_iterable(value)?;
    Ok(value.try_iter()?.collect())
}

/// Fails with Python's `TypeError` for `None`, numbers and booleans.
pub fn ensure_iterable(value: &Value) -> Result<(), Error> {
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
    use super::indent_lines;

    // CPython 3.11 + Jinja2 3.1.6: "a\n\nb\n"|indent(2) == "a\n\n  b\n"
    #[test]
    fn indent_keeps_trailing_newline_and_skips_blank_lines() {
        assert_eq!(indent_lines("a\n\nb\n", "  ", false, false), "a\n\n  b\n");
        assert_eq!(indent_lines("a\nb", "  ", true, false), "  a\n  b");
        assert_eq!(indent_lines("a\n\nb", "  ", false, true), "a\n  \n  b");
    }
}
