//! Casting tool-call arguments with the calling tool's JSON schema
//! (`response_parser.py`'s `_coerce_tool_calls`): `"7"` becomes `7` for an integer
//! parameter and stays `"7"` for a string one.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::pyjson;
use super::pynum::{parse_float, parse_int};
use super::pyvalue::{float_value, number_from_text};

/// Each tool's parameter schemas (`parameters.properties`), by tool name.
#[derive(Debug, Default)]
pub(crate) struct ToolParams(HashMap<String, Map<String, Value>>);

impl ToolParams {
    /// Reads tools as `apply_chat_template` takes them (`{"type": "function",
    /// "function": {...}}` or the bare function); anything else is skipped.
    pub(crate) fn new(tools: &[Value]) -> Self {
        let mut params = HashMap::new();
        for tool in tools {
            let function = tool.get("function").unwrap_or(tool);
            let Some(name) = function.get("name").and_then(Value::as_str) else {
                continue;
            };
            let properties = function
                .get("parameters")
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            params.insert(name.to_string(), properties);
        }
        Self(params)
    }

    /// Whether any tool was given (transformers casts only then).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Casts the arguments of a tool call, or of each call in a list, in place.
    pub(crate) fn coerce(&self, value: &mut Value) {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(|item| self.coerce(item));
            return;
        }
        let Some(function) = value.get_mut("function").and_then(Value::as_object_mut) else {
            return;
        };
        let Some(name) = function
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return;
        };
        let Some(properties) = self.0.get(&name).filter(|p| !p.is_empty()) else {
            return;
        };
        if let Some(Value::Object(arguments)) = function.get_mut("arguments") {
            coerce_arguments(arguments, properties);
        }
    }
}

fn coerce_arguments(arguments: &mut Map<String, Value>, properties: &Map<String, Value>) {
    for (key, argument) in arguments.iter_mut() {
        let types = properties.get(key).map(schema_types).unwrap_or_default();
        if types.is_empty() {
            continue;
        }
        match argument {
            Value::String(raw) => *argument = coerce(raw, &types),
            // Duplicate keys that `merge_duplicates` collected into a list.
            Value::Array(items) if !types.iter().any(|t| t == "array") => {
                for item in items.iter_mut() {
                    if let Value::String(raw) = item {
                        *item = coerce(raw, &types);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `_schema_types`: the declared types, with `anyOf`/`oneOf` choices and `nullable`.
fn schema_types(schema: &Value) -> Vec<String> {
    let Value::Object(schema) = schema else {
        return Vec::new();
    };
    let mut types: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(choices)) = schema.get(union) {
            types.extend(choices.iter().flat_map(schema_types));
        }
    }
    let nullable = schema.get("nullable").is_some_and(super::pyvalue::truthy);
    if nullable && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    types
}

/// `_coerce`: the first type the text casts to, else the text unchanged.
fn coerce(raw: &str, types: &[String]) -> Value {
    types
        .iter()
        .find_map(|type_name| cast(raw, type_name))
        .unwrap_or_else(|| Value::from(raw))
}

fn cast(raw: &str, type_name: &str) -> Option<Value> {
    match type_name {
        "integer" => match parse_int(raw) {
            Ok(digits) => Some(number_from_text(&digits)),
            // JSON Schema integers include whole numbers written as floats ("3.0").
            Err(_) => whole_float(parse_float(raw).ok()?),
        },
        "number" => {
            let number = parse_float(raw).ok().filter(|n| n.is_finite())?;
            if number.fract() == 0.0 && !raw.contains('.') {
                whole_float(number)
            } else {
                Some(float_value(number))
            }
        }
        "boolean" => match raw.trim().to_lowercase().as_str() {
            "true" | "1" => Some(Value::Bool(true)),
            "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        "null" => matches!(raw.trim(), "null" | "None").then_some(Value::Null),
        "object" => pyjson::loads(raw).ok().filter(Value::is_object),
        "array" => pyjson::loads(raw).ok().filter(Value::is_array),
        _ => None,
    }
}

/// `int(number)` for a float with no fraction (`None` for NaN, infinities and fractions).
fn whole_float(number: f64) -> Option<Value> {
    if !number.is_finite() || number.fract() != 0.0 {
        return None;
    }
    Some(number_from_text(&format!("{number:.0}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_follow_the_schema() {
        let tools = [
            json!({"type": "function", "function": {"name": "f", "parameters": {"properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "s": {"type": "string"},
            "b": {"type": "boolean"}, "o": {"anyOf": [{"type": "object"}], "nullable": true}}}}}),
        ];
        let params = ToolParams::new(&tools);
        let mut call = json!({"type": "function", "function": {"name": "f", "arguments":
            {"n": "3.0", "x": "1e3", "s": "7", "b": "True", "o": "None"}}});
        params.coerce(&mut call);
        assert_eq!(
            call["function"]["arguments"],
            json!({"n": 3, "x": 1000, "s": "7", "b": true, "o": null})
        );
    }
}
