//! Python's view of JSON values, for messages worded as transformers words them:
//! `type(x).__name__`, `str(x)`, `repr(x)` and truthiness.

use serde_json::Value;

/// `type(value).__name__` of the value `json.loads` would give.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if is_integer(n) => "int",
        Value::Number(_) => "float",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Whether a JSON number is a Python `int` (no fraction, no exponent).
pub(crate) fn is_integer(number: &serde_json::Number) -> bool {
    !number.to_string().contains(['.', 'e', 'E'])
}

/// Python truthiness: `None`, `False`, zero and empty containers are false.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `repr(text)`.
pub(crate) fn str_repr(text: &str) -> String {
    let mut out = String::new();
    chatplate_render::python_str_repr(&mut out, text);
    out
}

/// Longest value an error message repeats, in characters: a region of the output or a
/// name from the template is cut there, with its full size noted, where Python's
/// message would repeat all of it (a 30 MB region, say).
pub(crate) const MAX_SHOWN_CHARS: usize = 1000;

/// `repr(text)` for a message, cut after [`MAX_SHOWN_CHARS`] characters:
/// `'abc…'… (52428800 bytes in all)`.
pub(crate) fn shown_repr(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        None => str_repr(text),
        Some((end, _)) => format!("{}… ({} bytes in all)", str_repr(&text[..end]), text.len()),
    }
}

/// `text` for a message, cut likewise.
pub(crate) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    chatplate_render::visible::cut(text, MAX_SHOWN_CHARS)
}

/// `str(value)`: strings as they are, everything else as its `repr`.
pub(crate) fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// `repr(value)` of the value `json.loads` would give.
pub(crate) fn repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => number_repr(n),
        Value::String(s) => str_repr(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

fn number_repr(number: &serde_json::Number) -> String {
    if is_integer(number) {
        return number.to_string();
    }
    let value: f64 = number.to_string().parse().unwrap_or(f64::NAN);
    chatplate_render::python_float_repr(value)
}

/// `repr(sorted(names))` for a list of strings, cut when long (see [`shown`]).
pub(crate) fn sorted_names_repr<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    let parts: Vec<String> = names.into_iter().map(str_repr).collect();
    shown(&format!("[{}]", parts.join(", "))).into_owned()
}

/// A JSON number from Python's `float`, printed as Python prints it (`json.dumps`
/// writes `repr(float)`); `None` for NaN and the infinities, which JSON cannot hold.
pub(crate) fn float_value(value: f64) -> Value {
    if !value.is_finite() {
        return Value::Null;
    }
    number_from_text(&chatplate_render::python_float_repr(value))
}

/// A JSON number from its text (with `arbitrary_precision`, kept exactly as written).
pub(crate) fn number_from_text(text: &str) -> Value {
    serde_json::from_str::<serde_json::Number>(text).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs_read_as_python_prints_them() {
        assert_eq!(
            repr(&json!({"a": [1, 2.5, null, true]})),
            "{'a': [1, 2.5, None, True]}"
        );
        assert_eq!(sorted_names_repr(["b", "a"]), "['a', 'b']");
        assert_eq!(type_name(&json!(1.0)), "float");
        assert_eq!(float_value(1e16), json!(1e16));
    }

    #[test]
    fn long_values_are_cut_with_their_size() {
        let long = "é".repeat(MAX_SHOWN_CHARS + 1);
        let shown = shown_repr(&long);
        assert!(shown.starts_with("'éé"), "{shown}");
        assert!(shown.ends_with("'… (2002 bytes in all)"), "{shown}");
        assert_eq!(shown_repr("it's"), "\"it's\"");
    }
}
