//! Changing a value without changing its shape, for dropped-field detection.
//!
//! The first change keeps lengths and character classes (letters and digits are
//! rotated: `a`→`b`, `z`→`a`, `9`→`0`), so templates that validate a value (Mistral's
//! nine-character tool-call ids) still accept it. A template that only looks at the
//! length would miss that change, so a second one appends a character.

use serde_json::Value as Json;

/// The two ways of changing a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Same length, letters and digits rotated; numbers +1, booleans flipped.
    Rotate,
    /// An extra character at the end of every string; numbers +1, booleans flipped; an
    /// empty object or list gets an entry (nothing else would change it, and a template
    /// that prints `{}` does use it).
    Append,
    /// Every string between two new characters that differ from its first and last
    /// one, so that a prompt's first and last changed bytes are exactly where the value
    /// starts and ends.
    Wrap,
}

/// `value` with every string leaf (and number, boolean) changed; object keys and
/// `"type"` tags are kept, since they select how a value is read rather than carry it.
pub(crate) fn perturb(value: &Json, change: Change) -> Json {
    match value {
        Json::String(text) => Json::String(change_text(text, change)),
        Json::Number(number) => match number.as_i64() {
            Some(int) => Json::from(int.wrapping_add(1)),
            None => Json::from(number.as_f64().unwrap_or(0.0) + 1.0),
        },
        Json::Bool(flag) => Json::Bool(!flag),
        Json::Null => Json::Null,
        Json::Array(items) if items.is_empty() && change == Change::Append => {
            Json::Array(vec![Json::from("q")])
        }
        Json::Object(fields) if fields.is_empty() && change == Change::Append => {
            Json::Object([("q".to_string(), Json::from("q"))].into_iter().collect())
        }
        Json::Array(items) => Json::Array(items.iter().map(|i| perturb(i, change)).collect()),
        Json::Object(fields) => Json::Object(
            fields
                .iter()
                .map(|(key, item)| {
                    let changed = if key == "type" {
                        item.clone()
                    } else {
                        perturb(item, change)
                    };
                    (key.clone(), changed)
                })
                .collect(),
        ),
    }
}

fn change_text(text: &str, change: Change) -> String {
    match change {
        Change::Append => format!("{text}q"),
        Change::Wrap => {
            let (first, last) = (text.chars().next(), text.chars().last());
            let mark = ['q', 'x', 'z']
                .into_iter()
                .find(|c| Some(*c) != first && Some(*c) != last)
                .unwrap_or('q');
            format!("{mark}{text}{mark}")
        }
        Change::Rotate => {
            let rotated: String = text.chars().map(rotate).collect();
            // Nothing to rotate (empty, punctuation only): fall back to appending.
            if rotated == text {
                format!("{text}q")
            } else {
                rotated
            }
        }
    }
}

fn rotate(ch: char) -> char {
    match ch {
        'z' => 'a',
        'Z' => 'A',
        '9' => '0',
        'a'..='y' | 'A'..='Y' | '0'..='8' => char::from(ch as u8 + 1),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rotation_keeps_shape_and_type_tags() {
        let value = json!({"type": "text", "text": "az9_Z", "n": 1, "ok": true, "x": null});
        assert_eq!(
            perturb(&value, Change::Rotate),
            json!({"type": "text", "text": "ba0_A", "n": 2, "ok": false, "x": null})
        );
        assert_eq!(perturb(&json!("{}"), Change::Rotate), json!("{}q"));
        assert_eq!(perturb(&json!("ab"), Change::Append), json!("abq"));
        assert_eq!(perturb(&json!("quiz"), Change::Wrap), json!("xquizx"));
    }

    #[test]
    fn empty_objects_and_lists_change_when_appending() {
        let value = json!({"arguments": {}, "list": [], "kept": {"a": []}});
        assert_eq!(
            perturb(&value, Change::Rotate),
            value,
            "rotation keeps the shape"
        );
        assert_eq!(
            perturb(&value, Change::Append),
            json!({"arguments": {"q": "q"}, "list": ["q"], "kept": {"a": ["q"]}})
        );
    }
}
