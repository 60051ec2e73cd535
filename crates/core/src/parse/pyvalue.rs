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

/// `repr(sorted(names))` for a list of strings.
pub(crate) fn sorted_names_repr<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    let parts: Vec<String> = names.into_iter().map(str_repr).collect();
    format!("[{}]", parts.join(", "))
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
}
