//! Transforms: templates that restructure a field's parsed value, with whole-string
//! `{name}` / `{name.key}` placeholders (`content_parsers.py`'s `_apply_transform`).

use serde_json::{Map, Value};

use super::error::ParseError;
use super::pyvalue::{shown, shown_repr, sorted_names_repr, str_repr, type_name};

/// The dotted path of a whole-string placeholder (`"{content.args}"`), if `text` is one.
fn placeholder(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    is_dotted_path(inner).then_some(inner)
}

/// Python's `\w+(?:\.\w+)*`.
fn is_dotted_path(text: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.split('.')
        .all(|part| !part.is_empty() && part.chars().all(is_word))
}

/// Whether `text` contains a placeholder anywhere (`_PLACEHOLDER.search`).
fn contains_placeholder(text: &str) -> bool {
    text.match_indices('{').any(|(at, _)| {
        text[at + 1..]
            .find('}')
            .is_some_and(|close| is_dotted_path(&text[at + 1..at + 1 + close]))
    })
}

/// Rejects strings that mix a placeholder with literal text (checked when the template
/// loads, as transformers does).
pub(crate) fn validate_transform(scope: &str, transform: &Value) -> Result<(), ParseError> {
    match transform {
        Value::Object(map) => map.values().try_for_each(|v| validate_transform(scope, v)),
        Value::Array(items) => items.iter().try_for_each(|v| validate_transform(scope, v)),
        Value::String(text) if contains_placeholder(text) && placeholder(text).is_none() => {
            Err(ParseError::value(format!(
                "{scope}: transform string {} mixes a {{placeholder}} with literal text. Use either \
                 a whole-string placeholder (e.g. \"{{content}}\") or a plain literal; string \
                 interpolation is not supported.",
                shown_repr(text)
            )))
        }
        _ => Ok(()),
    }
}

/// Fills `transform` from `scope` (the regex captures and `content`, or a list item's keys).
pub(crate) fn apply_transform(
    transform: &Value,
    scope: &Map<String, Value>,
) -> Result<Value, ParseError> {
    match transform {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), apply_transform(v, scope)?)))
            .collect::<Result<Map<_, _>, ParseError>>()
            .map(Value::Object),
        Value::Array(items) => items
            .iter()
            .map(|v| apply_transform(v, scope))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::String(text) => match placeholder(text) {
            Some(path) => look_up(path, scope),
            None => Ok(transform.clone()),
        },
        other => Ok(other.clone()),
    }
}

fn look_up(path: &str, scope: &Map<String, Value>) -> Result<Value, ParseError> {
    let mut keys = path.split('.');
    let root = keys.next().unwrap_or_default();
    // The path comes from the template; it is cut in messages when long.
    let path = shown(path);
    let Some(mut value) = scope.get(root) else {
        let message = format!(
            "transform placeholder '{{{path}}}' is not defined. Available: {}",
            sorted_names_repr(scope.keys().map(String::as_str))
        );
        // `str(KeyError(message))` is the message's repr.
        return Err(ParseError::new("KeyError", str_repr(&message)));
    };
    for key in keys {
        let Value::Object(map) = value else {
            return Err(ParseError::value(format!(
                "transform placeholder '{{{path}}}' cannot index into {} at '{}'",
                type_name(value),
                shown(key)
            )));
        };
        value = map.get(key).ok_or_else(|| {
            ParseError::value(format!(
                "transform placeholder '{{{path}}}' is missing key '{}'. Available: {}",
                shown(key),
                sorted_names_repr(map.keys().map(String::as_str))
            ))
        })?;
    }
    Ok(value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_fill_whole_strings_only() {
        let scope = json!({"name": "f", "content": {"a": 1}});
        let scope = scope.as_object().unwrap();
        let out = apply_transform(
            &json!({"n": "{name}", "a": "{content.a}", "k": "x {y}"}),
            scope,
        );
        assert_eq!(out.unwrap(), json!({"n": "f", "a": 1, "k": "x {y}"}));
        assert!(validate_transform("F", &json!("x {y}")).is_err());
        assert_eq!(
            apply_transform(&json!("{nope}"), scope)
                .unwrap_err()
                .message,
            "\"transform placeholder '{nope}' is not defined. Available: ['content', 'name']\""
        );
    }
}
