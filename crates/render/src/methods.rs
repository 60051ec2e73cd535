//! Python methods on strings, dicts and lists (`content.strip()`, `message.get('x')`).
//!
//! minijinja-contrib's `pycompat` covers most of them; this layer adds the ones chat
//! templates use that it lacks, and makes every method call on `None` fail the way
//! Python's `AttributeError` does.

use minijinja::value::{Tuple, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::generators::is_generator;
use super::none::is_python_none;
use super::pyerror::repr;
use super::pytype::type_name;
use super::undefined::object_type_repr;

/// The unknown-method callback installed on the environment.
pub(crate) fn call_method(
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
        if let Some(result) = super::strmethods::call(state, text, method, args) {
            return result;
        }
        if let Some(result) = extra_string_method(state, text, method, args) {
            return result;
        }
    }
    if let (Some(bytes), "decode") = (value.as_bytes(), method) {
        return super::bytes::decode(bytes, args);
    }
    if value.kind() == ValueKind::Seq && method == "index" {
        return list_index(state, value, args);
    }
    if value.kind() == ValueKind::Map && method == "copy" && args.is_empty() {
        // A shallow copy, in the same key order.
        let pairs = value
            .try_iter()?
            .map(|key| {
                let item = value.get_item(&key).unwrap_or_default();
                (key, item)
            })
            .collect();
        return Ok(super::data::dict(pairs));
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
        "partition" | "rpartition" if arg(0) == Some("") => {
            return Some(Err(value_error("empty separator")))
        }
        "partition" => partition(text, arg(0)?, text.find(arg(0)?), ""),
        "rpartition" => partition(text, arg(0)?, text.rfind(arg(0)?), text),
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

fn value_error(message: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("ValueError: {message}"),
    )
}

/// `str.partition` / `rpartition`: a 3-tuple. Without the separator, the text is the
/// first item for `partition` and the last for `rpartition` (`unfound_last`).
fn partition(text: &str, sep: &str, found: Option<usize>, unfound_last: &str) -> Value {
    let parts = match found {
        Some(at) => [&text[..at], sep, &text[at + sep.len()..]],
        None if unfound_last.is_empty() => [text, "", ""],
        None => ["", "", unfound_last],
    };
    Value::from(Tuple::from(parts.map(Value::from).to_vec()))
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
