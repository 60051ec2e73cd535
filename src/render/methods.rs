//! Python methods on strings, dicts and lists (`content.strip()`, `message.get('x')`).
//!
//! minijinja-contrib's `pycompat` covers most of them; this layer adds the ones chat
//! templates use that it lacks, and makes every method call on `None` fail the way
//! Python's `AttributeError` does.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::generators::is_generator;
use super::none::is_python_none;
use super::pyerror::repr;
use super::pytype::type_name;
use super::undefined::object_type_repr;

/// The unknown-method callback installed on the environment.
pub fn call_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    if is_python_none(value) {
        return Err(no_attribute(value, method));
    }
    if value.kind() == ValueKind::String {
        let text = value.as_str().unwrap_or_default();
        if let Some(result) = super::sized::string_method(state, text, method, args) {
            return result;
        }
        if let Some(result) = extra_string_method(state, text, method, args) {
            return result;
        }
    }
    if value.kind() == ValueKind::Seq && method == "index" {
        return list_index(state, value, args);
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args).map_err(
        |err| match err.kind() {
            ErrorKind::UnknownMethod => no_attribute(value, method),
            _ => err,
        },
    )
}

/// Calling a method the value lacks. Jinja2 looks the method up first, which gives an
/// undefined value (or, for methods that modify a list, dict or set, the immutable
/// sandbox's refusal) that fails when called.
fn no_attribute(value: &Value, method: &str) -> Error {
    // Kept as `UnknownMethod`: MiniJinja then notes which undefined value (if the
    // receiver is one) the call failed on.
    let error = |class: &str, message: String| {
        Error::new(ErrorKind::UnknownMethod, format!("{class}: {message}"))
    };
    if modifies_known_mutable(value, method) {
        return error(
            "SecurityError",
            format!(
                "access to attribute {} of {} object is unsafe.",
                repr(method),
                repr(type_name(value))
            ),
        );
    }
    error(
        "UndefinedError",
        format!(
            "{} has no attribute {}",
            repr(&object_type_repr(value)),
            repr(method)
        ),
    )
}

/// The methods Jinja2's immutable sandbox refuses: the ones that modify a list or dict.
fn modifies_known_mutable(value: &Value, method: &str) -> bool {
    let unsafe_methods: &[&str] = match value.kind() {
        ValueKind::Seq | ValueKind::Iterable if !value.is_tuple() && !is_generator(value) => &[
            "append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove",
        ],
        ValueKind::Map => &["clear", "pop", "popitem", "setdefault", "update"],
        _ => &[],
    };
    unsafe_methods.contains(&method)
}

/// Python's `list.index(x)`: the first position of `x`, or `ValueError`.
fn list_index(state: &State, list: &Value, args: &[Value]) -> Result<Value, Error> {
    let wanted = args.first().cloned().unwrap_or_default();
    for (index, item) in list.try_iter()?.enumerate() {
        if index % 4096 == 4095 {
            super::scope::tick(Some(state))?;
        }
        if item == wanted {
            return Ok(Value::from(index));
        }
    }
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "ValueError: {} is not in list",
            super::pyrepr::to_str_in(Some(state), &wanted)?
        ),
    ))
}

/// String methods `pycompat` lacks.
fn extra_string_method(
    state: &State,
    text: &str,
    method: &str,
    args: &[Value],
) -> Option<Result<Value, Error>> {
    let arg = |index: usize| args.get(index).and_then(|v| v.as_str());
    let result = match method {
        "removeprefix" => Value::from(text.strip_prefix(arg(0)?).unwrap_or(text)),
        "removesuffix" => Value::from(text.strip_suffix(arg(0)?).unwrap_or(text)),
        "rsplit" => return Some(rsplit(text, args)),
        "partition" | "rpartition" if arg(0) == Some("") => {
            return Some(Err(value_error("empty separator")))
        }
        "partition" => partition(text, arg(0)?, text.find(arg(0)?)),
        "rpartition" => partition(text, arg(0)?, text.rfind(arg(0)?)),
        "casefold" => Value::from(text.to_lowercase()),
        "swapcase" => Value::from(swapcase(text)),
        "zfill" => {
            let width = super::filters::checked_count(state, args.first()?, 1);
            return Some(width.map(|width| Value::from(zfill(text, width))));
        }
        "startswith" | "endswith" if args.len() > 1 => {
            return Some(affix_test(text, method == "startswith", args))
        }
        _ => return None,
    };
    Some(Ok(result))
}

/// `str.startswith(prefix, start, end)` / `endswith`, with a tuple of candidates and
/// Python's slice semantics for the offsets (negative counts from the end).
fn affix_test(text: &str, start_side: bool, args: &[Value]) -> Result<Value, Error> {
    let chars: Vec<char> = text.chars().collect();
    let bound = |index: usize, default: usize| -> usize {
        match args.get(index).and_then(Value::as_i64) {
            Some(n) if n < 0 => chars.len().saturating_sub(n.unsigned_abs() as usize),
            Some(n) => (n as usize).min(chars.len()),
            None => default,
        }
    };
    let (from, to) = (bound(1, 0), bound(2, chars.len()));
    let window: String = chars
        .get(from..to.max(from))
        .unwrap_or_default()
        .iter()
        .collect();
    let candidates: Vec<Value> = match args[0].kind() {
        ValueKind::String => vec![args[0].clone()],
        _ => args[0].try_iter()?.collect(),
    };
    let hit = candidates.iter().filter_map(Value::as_str).any(|affix| {
        if start_side {
            window.starts_with(affix)
        } else {
            window.ends_with(affix)
        }
    });
    Ok(Value::from(hit))
}

/// Python's `str.rsplit(sep=None, maxsplit=-1)`.
fn rsplit(text: &str, args: &[Value]) -> Result<Value, Error> {
    let sep = match args.first() {
        None => None,
        Some(v) if is_python_none(v) => None,
        Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap_or_default()),
        Some(v) => {
            return Err(type_error(&format!(
                "must be str or None, not {}",
                type_name(v)
            )))
        }
    };
    if sep == Some("") {
        return Err(value_error("empty separator"));
    }
    let max = match args.get(1) {
        None => None,
        Some(v) if v.is_integer() || v.kind() == ValueKind::Bool => v
            .as_i64()
            .filter(|n| *n >= 0)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        Some(v) => {
            return Err(type_error(&format!(
                "'{}' object cannot be interpreted as an integer",
                type_name(v)
            )))
        }
    };
    let mut parts: Vec<String> = match (sep, max) {
        (Some(sep), Some(max)) => text
            .rsplitn(max.saturating_add(1), sep)
            .map(String::from)
            .collect(),
        (Some(sep), None) => text.rsplit(sep).map(String::from).collect(),
        (None, max) => rsplit_whitespace(text, max),
    };
    parts.reverse();
    Ok(Value::from(parts))
}

/// Whitespace `rsplit`, returned in reverse order (last piece first).
fn rsplit_whitespace(text: &str, max: Option<usize>) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let limit = max.unwrap_or(usize::MAX);
    if words.len() <= limit.saturating_add(1) {
        return words.iter().rev().map(|w| w.to_string()).collect();
    }
    let mut parts: Vec<String> = words[words.len() - limit..]
        .iter()
        .rev()
        .map(|w| w.to_string())
        .collect();
    let mut rest = text.trim_end();
    for _ in 0..limit {
        rest = rest
            .trim_end_matches(|c: char| !c.is_whitespace())
            .trim_end();
    }
    parts.push(rest.trim_start().to_string());
    parts
}

fn type_error(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("TypeError: {message}"))
}

fn value_error(message: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("ValueError: {message}"),
    )
}

fn partition(text: &str, sep: &str, found: Option<usize>) -> Value {
    let parts = match found {
        Some(at) => [&text[..at], sep, &text[at + sep.len()..]],
        None => [text, "", ""],
    };
    Value::from_iter(parts.iter().map(|s| Value::from(*s)))
}

fn swapcase(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_uppercase() {
                c.to_lowercase().collect::<Vec<_>>()
            } else {
                c.to_uppercase().collect::<Vec<_>>()
            }
        })
        .collect()
}

fn zfill(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let (sign, digits) = match text.chars().next() {
        Some(c @ ('+' | '-')) => (c.to_string(), &text[1..]),
        _ => (String::new(), text),
    };
    format!("{sign}{}{digits}", "0".repeat(width - len))
}
