//! Loading a `response_template` (format version 1), with transformers' validation and
//! its error messages (`response_templates.py`).

use serde_json::{Map, Value};

use super::error::ParseError;
use super::limits::Clock;
use super::pattern::{Pattern, PatternCache};
use super::pyvalue::{py_str, shown, sorted_names_repr, truthy, type_name};
use super::transform::validate_transform;

/// The content parsers the format defines.
pub(crate) const CONTENT_PARSERS: [&str; 7] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
];

const TEMPLATE_KEYS: [&str; 5] = [
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];

const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

/// A validated, compiled `response_template`.
#[derive(Debug, Clone)]
pub struct ResponseTemplate {
    pub(crate) defaults: Map<String, Value>,
    /// The fields in the template's order.
    pub(crate) fields: Vec<Field>,
    /// The index of the field without an open anchor (the leftover sink), if any.
    pub(crate) implicit: Option<usize>,
    pub(crate) start_anchor: Pattern,
    /// The content parsers' patterns, compiled once for all parses with this template.
    pub(crate) patterns: PatternCache,
}

/// One field of the template: where its region opens and closes, and how its text
/// becomes a value.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) open: Option<Pattern>,
    pub(crate) close: Option<Pattern>,
    pub(crate) content: String,
    pub(crate) content_args: Value,
    pub(crate) repeats: bool,
    pub(crate) join: Option<String>,
    pub(crate) optional: bool,
    pub(crate) transform: Option<Value>,
    pub(crate) transform_each: bool,
}

impl ResponseTemplate {
    /// Validates and compiles a template as `load_response_template` does; the error is
    /// the one transformers raises.
    pub fn load(spec: &Value) -> Result<Self, ParseError> {
        let spec = validate_shape(spec)?;
        let raw_fields = spec
            .get("fields")
            .and_then(Value::as_object)
            .expect("validated");
        let fields = raw_fields
            .iter()
            .map(|(name, raw)| build_field(name, raw))
            .collect::<Result<Vec<_>, _>>()?;
        let implicit: Vec<usize> = (0..fields.len())
            .filter(|i| fields[*i].open.is_none())
            .collect();
        if implicit.len() > 1 {
            let names: Vec<&str> = implicit.iter().map(|i| fields[*i].name.as_str()).collect();
            return Err(ParseError::value(format!(
                "At most one field may omit 'open'/'open_pattern' (that field becomes the \
                 implicit-open / leftover sink). Found: {}",
                shown(&names.join(", "))
            )));
        }
        let start_anchor = compile_anchor(
            "response_template",
            spec,
            "start_anchor",
            "start_anchor_pattern",
        )?
        .ok_or_else(|| {
            ParseError::value(
                "response_template must define 'start_anchor' or 'start_anchor_pattern'.",
            )
        })?;
        let defaults = spec
            .get("defaults")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Ok(Self {
            defaults,
            fields,
            implicit: implicit.first().copied(),
            start_anchor,
            patterns: PatternCache::default(),
        })
    }

    /// The names of the template's fields, in its order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }

    /// `truncate_past_last_anchor`: the prefix after the last start anchor (all of it
    /// when the anchor does not occur).
    pub(crate) fn truncate_prefix<'p>(
        &self,
        prefix: &'p str,
        clock: &Clock,
    ) -> Result<&'p str, ParseError> {
        let mut last_end = None;
        self.start_anchor
            .for_each_match(prefix, clock, |m| last_end = Some(m.end))?;
        Ok(last_end.map_or(prefix, |end| &prefix[end..]))
    }
}

fn validate_shape(spec: &Value) -> Result<&Map<String, Value>, ParseError> {
    let Value::Object(spec) = spec else {
        return Err(ParseError::value(format!(
            "response_template must be a dict, got {}",
            type_name(spec)
        )));
    };
    let version = spec.get("version").cloned().unwrap_or(Value::from(1));
    if !equals_one(&version) {
        return Err(ParseError::value(format!(
            "Unsupported response_template version: {}",
            shown(&py_str(&version))
        )));
    }
    let unknown: Vec<&str> = spec
        .keys()
        .map(String::as_str)
        .filter(|k| !TEMPLATE_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(ParseError::value(format!(
            "Unknown keys in response_template: {}",
            sorted_names_repr(unknown)
        )));
    }
    if spec.get("defaults").is_some_and(|d| !d.is_object()) {
        return Err(ParseError::value(
            "response_template.defaults must be a dict",
        ));
    }
    match spec.get("fields") {
        Some(Value::Object(fields)) if !fields.is_empty() => Ok(spec),
        _ => Err(ParseError::value(
            "response_template.fields must be a non-empty dict",
        )),
    }
}

/// Python's `version != 1`: `1`, `1.0` and `True` all equal one.
fn equals_one(version: &Value) -> bool {
    match version {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() == Some(1.0),
        _ => false,
    }
}

fn build_field(name: &str, raw: &Value) -> Result<Field, ParseError> {
    let scope = format!("Field '{}'", shown(name));
    let Value::Object(field) = raw else {
        return Err(ParseError::value(format!("{scope} must be a dict")));
    };
    let unknown: Vec<&str> = field
        .keys()
        .map(String::as_str)
        .filter(|k| !FIELD_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(ParseError::value(format!(
            "{scope}: unknown keys {}",
            sorted_names_repr(unknown)
        )));
    }
    let content = content_parser(&scope, field.get("content"))?;
    let open = compile_anchor(&scope, field, "open", "open_pattern")?;
    let close = compile_anchor(&scope, field, "close", "close_pattern")?;
    let join = match field.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::String(join)) => Some(join.clone()),
        Some(other) => {
            return Err(ParseError::value(format!(
                "{scope}: 'join' must be a string, got {}",
                type_name(other)
            )))
        }
    };
    let repeats = field.get("repeats").is_some_and(truthy);
    if join.is_some() && !repeats {
        return Err(ParseError::value(format!(
            "{scope}: 'join' requires 'repeats': true"
        )));
    }
    let transform = field.get("transform").filter(|t| !t.is_null()).cloned();
    let transform_each = match field.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(ParseError::value(format!(
                "{scope}: transform_each must be a bool, got {}",
                type_name(other)
            )))
        }
    };
    if transform_each && transform.is_none() {
        return Err(ParseError::value(format!(
            "{scope}: transform_each is set but no transform was provided"
        )));
    }
    match &transform {
        Some(transform) => validate_transform(&scope, transform)?,
        None => reject_unused_captures(&scope, [&open, &close])?,
    }
    Ok(Field {
        name: name.to_string(),
        open,
        close,
        content,
        content_args: field
            .get("content_args")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
        repeats,
        join,
        optional: field.get("optional").is_none_or(truthy),
        transform,
        transform_each,
    })
}

/// `content not in CONTENT_PARSERS` (a dict): a list or dict cannot be looked up in one.
fn content_parser(scope: &str, content: Option<&Value>) -> Result<String, ParseError> {
    let content = content.cloned().unwrap_or(Value::from("text"));
    match content.as_str() {
        Some(name) if CONTENT_PARSERS.contains(&name) => Ok(name.to_string()),
        _ => {
            unhashable(&content)?;
            Err(ParseError::value(format!(
                "{scope}: unknown content parser '{}'. Available: {}",
                shown(&py_str(&content)),
                sorted_names_repr(CONTENT_PARSERS)
            )))
        }
    }
}

/// The `TypeError` Python raises for a list or dict used as a dict key or looked up in
/// a cache (`regex.compile`'s, say).
pub(crate) fn unhashable(value: &Value) -> Result<(), ParseError> {
    match value {
        Value::Array(_) | Value::Object(_) => Err(ParseError::new(
            "TypeError",
            format!("unhashable type: '{}'", type_name(value)),
        )),
        _ => Ok(()),
    }
}

/// Named captures only reach the output through a transform: a pattern that declares
/// some on a field without one is a mistake transformers reports.
fn reject_unused_captures(scope: &str, anchors: [&Option<Pattern>; 2]) -> Result<(), ParseError> {
    let names: Vec<String> = anchors
        .into_iter()
        .flatten()
        .flat_map(Pattern::group_names)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    Err(ParseError::value(format!(
        "{scope}: open_pattern/close_pattern declares named group(s) {}, but the field has no \
         'transform'. Named captures are only surfaced through a 'transform' template (where \
         they appear alongside 'content'). Either add a 'transform' that uses the captures, or \
         remove the named groups from the pattern.",
        sorted_names_repr(names.iter().map(String::as_str))
    )))
}

/// `_compile_anchor`: a literal, a list of literals, or a pattern; `None` when the
/// field has none of them.
fn compile_anchor(
    scope: &str,
    field: &Map<String, Value>,
    literal_key: &str,
    pattern_key: &str,
) -> Result<Option<Pattern>, ParseError> {
    if field.contains_key(literal_key) && field.contains_key(pattern_key) {
        return Err(ParseError::value(format!(
            "{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"
        )));
    }
    if let Some(raw) = field.get(literal_key) {
        return literals(scope, literal_key, raw).map(|l| Some(Pattern::literals(&l)));
    }
    match field.get(pattern_key) {
        None => Ok(None),
        Some(Value::String(source)) => Pattern::python(source).map(Some).map_err(|e| {
            ParseError::value(format!(
                "{scope}: invalid {pattern_key} regex: {}",
                shown(&e)
            ))
        }),
        Some(other) => {
            unhashable(other)?;
            Err(ParseError::new(
                "TypeError",
                "first argument must be a string or compiled pattern",
            ))
        }
    }
}

fn literals(scope: &str, key: &str, raw: &Value) -> Result<Vec<String>, ParseError> {
    let literals: Vec<String> = match raw {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) if items.is_empty() => {
            return Err(ParseError::value(format!(
                "{scope}: '{key}' list must contain at least one literal"
            )))
        }
        Value::Array(items) => {
            let strings: Option<Vec<String>> = items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect();
            let mut strings = strings.ok_or_else(|| {
                ParseError::value(format!("{scope}: '{key}' list must contain only strings"))
            })?;
            let mut seen = std::collections::HashSet::new();
            strings.retain(|s| seen.insert(s.clone()));
            strings
        }
        other => {
            return Err(ParseError::value(format!(
                "{scope}: '{key}' must be a string or list of strings, got {}",
                type_name(other)
            )))
        }
    };
    if literals.iter().any(String::is_empty) {
        return Err(ParseError::value(format!(
            "{scope}: '{key}' literals cannot be empty strings"
        )));
    }
    Ok(literals)
}
