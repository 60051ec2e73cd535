//! Conversion of JSON input into template values with Python semantics.

use minijinja::value::Value;
use serde_json::Value as Json;

use super::none::python_none;

/// Converts JSON into a template value: key order kept, `null` as Python's `None`
/// (see [`super::none`]), integers as integers and other numbers as floats.
pub fn json_to_value(json: &Json) -> Value {
    match json {
        Json::Null => python_none(),
        Json::Bool(flag) => Value::from(*flag),
        Json::Number(number) => number_to_value(number),
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => items.iter().map(json_to_value).collect(),
        Json::Object(map) => Value::from_pairs(
            map.iter()
                .map(|(key, item)| (Value::from(key.as_str()), json_to_value(item))),
        ),
    }
}

fn number_to_value(number: &serde_json::Number) -> Value {
    if let Some(int) = number.as_i64() {
        Value::from(int)
    } else if let Some(uint) = number.as_u64() {
        Value::from(uint)
    } else {
        Value::from(number.as_f64().unwrap_or(f64::NAN))
    }
}
