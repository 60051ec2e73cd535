//! The content parsers (`content_parsers.py`): how a region's text becomes a value.

use serde_json::{Map, Value};

use super::error::ParseError;
use super::limits::Clock;
use super::pattern::{Found, Pattern, PatternCache};
use super::pyjson;
use super::pynum::{parse_float, parse_int};
use super::pyvalue::{float_value, number_from_text, repr, shown, shown_repr, truthy, type_name};

/// Sentinels for the strings `string_delims` pulls out before JSON parsing.
const LAX_OPEN: char = '\u{1}';
const LAX_CLOSE: char = '\u{2}';

/// A content parser's arguments (`content_args`), read as Python's `args.get` would.
struct Args<'a>(&'a Value);

impl<'a> Args<'a> {
    fn new(args: &'a Value) -> Result<Self, ParseError> {
        match args {
            Value::Object(_) => Ok(Self(args)),
            other => Err(ParseError::new(
                "AttributeError",
                format!("'{}' object has no attribute 'get'", type_name(other)),
            )),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn flag(&self, key: &str, default: bool) -> bool {
        self.0.get(key).map_or(default, truthy)
    }

    fn text(&self, key: &str, default: &'a str) -> Result<&'a str, ParseError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(ParseError::new(
                "TypeError",
                format!("must be str or None, not {}", type_name(other)),
            )),
        }
    }

    /// `_text`: the text stripped unless `strip` is false.
    fn strip<'t>(&self, text: &'t str) -> &'t str {
        if self.flag("strip", true) {
            text.trim()
        } else {
            text
        }
    }
}

/// What a content parser runs with: the parse's clock, and the template's patterns
/// compiled once (Python's `regex` caches what it compiles the same way).
#[derive(Clone, Copy)]
pub(crate) struct Run<'a> {
    pub(crate) clock: &'a Clock,
    pub(crate) patterns: &'a PatternCache,
}

/// `parse_content`: runs the named parser over `text`.
pub(crate) fn parse_content(
    text: &str,
    name: &str,
    args: &Value,
    run: Run<'_>,
) -> Result<Value, ParseError> {
    let args = Args::new(args)?;
    match name {
        "text" => Ok(Value::from(args.strip(text))),
        "int" => parse_int(args.strip(text))
            .map(|digits| number_from_text(&digits))
            .map_err(ParseError::value),
        "float" => parse_float(args.strip(text))
            .map(float_value)
            .map_err(ParseError::value),
        "bool" => Ok(Value::Bool(matches!(
            args.strip(text).to_lowercase().as_str(),
            "true" | "1"
        ))),
        "json" => json(text, &args, run),
        "xml-inline" => xml_inline(text, &args, run),
        "kv-lines" => kv_lines(text, &args, run),
        other => Err(ParseError::new("KeyError", shown_repr(other))),
    }
}

/// A nested parser (`value_parser`: `{"name": ..., "args": {...}}`), or the raw text.
fn sub_parse(raw: &str, value_parser: Option<&Value>, run: Run<'_>) -> Result<Value, ParseError> {
    let Some(parser) = value_parser else {
        return Ok(Value::from(raw));
    };
    let parser = Args::new(parser)?;
    // `value_parser.get("name", "text")`, then the parsers' dict looked up with it.
    let name = match parser.0.get("name") {
        None => "text",
        Some(Value::String(name)) => name,
        Some(other) => {
            super::template::unhashable(other)?;
            return Err(ParseError::new("KeyError", shown(&repr(other))));
        }
    };
    let empty = Value::Object(Map::new());
    parse_content(raw, name, parser.0.get("args").unwrap_or(&empty), run)
}

fn json(text: &str, args: &Args<'_>, run: Run<'_>) -> Result<Value, ParseError> {
    // `args.get("string_delims", [])`: a null is kept, and fails when iterated.
    let raw_delims = args.0.get("string_delims");
    if raw_delims.is_some_and(truthy) && text.contains([LAX_OPEN, LAX_CLOSE]) {
        return Err(ParseError::value(
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely.",
        ));
    }
    let delims = raw_delims.map_or(Ok(Vec::new()), string_delims)?;
    let mut captured: Vec<String> = Vec::new();
    let mut working = text.to_string();
    for (open, close) in &delims {
        let source = format!(
            "{}(?P<inner>.*?){}",
            fancy_regex::escape(open),
            fancy_regex::escape(close)
        );
        let pattern = run.patterns.python(&source).map_err(ParseError::value)?;
        working = replace_all(&pattern, &working, run.clock, |m| {
            captured.push(m.groups.first().map(|g| g.1.clone()).unwrap_or_default());
            format!("{LAX_OPEN}{}{LAX_CLOSE}", captured.len() - 1)
        })?;
    }
    if args.flag("unquoted_keys", false) {
        working = quote_bare_keys(&working, run.clock)?;
    }
    if !captured.is_empty() {
        working = restore_strings(&working, &captured);
    }
    pyjson::loads(&working).or_else(|e| {
        if args.flag("allow_non_json", false) {
            return Ok(Value::from(args.strip(text)));
        }
        Err(ParseError::value(if working == text {
            format!("json parser could not parse region as JSON.\nContent: {}\nError: {e}", shown_repr(text))
        } else {
            format!(
                "json: could not parse after dialect transforms.\nOriginal: {}\nTransformed: {}\nError: {e}",
                shown_repr(text),
                shown_repr(&working)
            )
        }))
    })
}

/// `for open_d, close_d in string_delims`, with `re.escape` of each: any Python iterable
/// of pairs, each pair any iterable of two strings, failing as Python fails.
fn string_delims(raw: &Value) -> Result<Vec<(String, String)>, ParseError> {
    iterate(raw)?
        .iter()
        .map(|pair| {
            let [open, close] = unpack_pair(pair)?;
            Ok((escape_argument(&open)?, escape_argument(&close)?))
        })
        .collect()
}

/// `iter(value)` of a JSON value: a list's items, a dict's keys, a string's characters.
fn iterate(value: &Value) -> Result<Vec<Value>, ParseError> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(map) => Ok(map.keys().cloned().map(Value::from).collect()),
        Value::String(text) => Ok(text.chars().map(|c| Value::from(c.to_string())).collect()),
        other => Err(ParseError::new(
            "TypeError",
            format!("'{}' object is not iterable", type_name(other)),
        )),
    }
}

/// `open_d, close_d = pair`.
fn unpack_pair(pair: &Value) -> Result<[Value; 2], ParseError> {
    if !matches!(pair, Value::Array(_) | Value::Object(_) | Value::String(_)) {
        return Err(ParseError::new(
            "TypeError",
            format!("cannot unpack non-iterable {} object", type_name(pair)),
        ));
    }
    match <[Value; 2]>::try_from(iterate(pair)?) {
        Ok(both) => Ok(both),
        Err(items) if items.len() < 2 => Err(ParseError::value(format!(
            "not enough values to unpack (expected 2, got {})",
            items.len()
        ))),
        Err(_) => Err(ParseError::value("too many values to unpack (expected 2)")),
    }
}

/// The text `re.escape(value)` escapes: a string, or the strings a list or dict holds.
fn escape_argument(value: &Value) -> Result<String, ParseError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(_) | Value::Object(_) => iterate(value)?
            .iter()
            .map(escape_argument)
            .collect::<Result<Vec<_>, _>>()
            .map(|parts| parts.concat()),
        other => iterate(other).map(|_| String::new()),
    }
}

/// `re.sub(r"(?<=[{,])(\w+):", r'"\1":', text)`.
fn quote_bare_keys(text: &str, clock: &Clock) -> Result<String, ParseError> {
    static PATTERN: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
    let pattern = PATTERN
        .get_or_init(|| Pattern::python(r"(?<=[{,])(?P<key>\w+):").expect("a fixed pattern"));
    replace_all(pattern, text, clock, |m| format!("\"{}\":", m.groups[0].1))
}

/// `re.sub` with a function over every non-overlapping match.
fn replace_all(
    pattern: &Pattern,
    text: &str,
    clock: &Clock,
    mut replace: impl FnMut(&Found) -> String,
) -> Result<String, ParseError> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in pattern.find_all(text, clock)? {
        out.push_str(&text[last..m.start]);
        out.push_str(&replace(&m));
        last = m.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// Python's `working.replace(f"\x01{i}\x02", json.dumps(s))` for every captured string,
/// in one pass (one replace per string rescans the text: quadratic in a region of many
/// strings). The same result: a replacement is ASCII JSON, which holds no sentinel.
fn restore_strings(working: &str, captured: &[String]) -> String {
    let mut out = String::with_capacity(working.len());
    let mut rest = working;
    while let Some(open) = rest.find(LAX_OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open + LAX_OPEN.len_utf8()..];
        let digits = after.find(LAX_CLOSE).map(|close| &after[..close]);
        let found = digits.and_then(|d| Some((d, captured.get(d.parse::<usize>().ok()?)?)));
        if let Some((digits, string)) = found {
            out.push_str(&ascii_json_string(string));
            rest = &after[digits.len() + LAX_CLOSE.len_utf8()..];
        } else {
            out.push(LAX_OPEN);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `json.dumps(text)`: ASCII only, as Python's default `ensure_ascii` writes it.
fn ascii_json_string(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_ascii() && (c as u32) >= 0x20 => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

fn xml_inline(text: &str, args: &Args<'_>, run: Run<'_>) -> Result<Value, ParseError> {
    let Some(tag_pattern) = args.get("tag_pattern") else {
        return Err(ParseError::value(
            "xml-inline: 'tag_pattern' content_arg is required",
        ));
    };
    super::template::unhashable(tag_pattern)?;
    let source = tag_pattern.as_str().ok_or_else(|| {
        ParseError::new(
            "TypeError",
            "first argument must be a string or compiled pattern",
        )
    })?;
    let pattern = run
        .patterns
        .python(source)
        .map_err(|e| ParseError::new("error", e))?;
    let has_value = pattern.group_names().iter().any(|n| n == "value");
    let merge = args.flag("merge_duplicates", false);
    let mut out = Map::new();
    for m in pattern.find_all(text, run.clock)? {
        let group = |name: &str| m.groups.iter().find(|g| g.0 == name).map(|g| g.1.as_str());
        let Some(key) = group("key") else {
            return Err(ParseError::value(format!(
                "xml-inline: tag_pattern must have a named group 'key'. Pattern: {}",
                shown(source)
            )));
        };
        let value = match (group("value"), has_value) {
            (Some(raw), _) => sub_parse(raw, args.get("value_parser"), run)?,
            (None, false) => sub_parse("", args.get("value_parser"), run)?,
            // A `value` group that took no part is `None` in Python.
            (None, true) if args.get("value_parser").is_none() => Value::Null,
            (None, true) => {
                return Err(ParseError::new(
                    "AttributeError",
                    "'NoneType' object has no attribute 'strip'",
                ))
            }
        };
        insert(&mut out, key, value, merge);
    }
    Ok(Value::Object(out))
}

/// Adds a key; with `merge_duplicates` a repeated key collects its values in a list.
fn insert(out: &mut Map<String, Value>, key: &str, value: Value, merge: bool) {
    match out.get_mut(key) {
        Some(existing) if merge => {
            if !existing.is_array() {
                *existing = Value::Array(vec![existing.take()]);
            }
            if let Value::Array(items) = existing {
                items.push(value);
            }
        }
        _ => {
            out.insert(key.to_string(), value);
        }
    }
}

fn kv_lines(text: &str, args: &Args<'_>, run: Run<'_>) -> Result<Value, ParseError> {
    let line_sep = args.text("line_sep", "\n")?;
    let kv_sep = args.text("kv_sep", ":")?;
    if line_sep.is_empty() {
        return Err(ParseError::value("empty separator"));
    }
    let mut out = Map::new();
    for line in text.split(line_sep) {
        run.clock.check(|| "reading kv-lines".into())?;
        let line = args.strip(line);
        if line.is_empty() || !line.contains(kv_sep) {
            continue;
        }
        if kv_sep.is_empty() {
            return Err(ParseError::value("empty separator"));
        }
        let (key, value) = line.split_once(kv_sep).expect("checked above");
        let value = sub_parse(args.strip(value), args.get("value_parser"), run)?;
        out.insert(args.strip(key).to_string(), value);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_content(text: &str, name: &str, args: &Value) -> Result<Value, ParseError> {
        let clock = Clock::unbounded();
        let patterns = PatternCache::default();
        super::parse_content(
            text,
            name,
            args,
            Run {
                clock: &clock,
                patterns: &patterns,
            },
        )
    }

    #[test]
    fn json_dialects_quote_keys_and_pull_strings() {
        let args = json!({"unquoted_keys": true, "string_delims": [["<|\"|>", "<|\"|>"]]});
        let out = parse_content("{city:<|\"|>Paris, \"FR\"<|\"|>,n:2}", "json", &args);
        assert_eq!(out.unwrap(), json!({"city": "Paris, \"FR\"", "n": 2}));
    }

    #[test]
    fn xml_inline_reads_tags() {
        let args = json!({"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": true});
        let out = parse_content("<a>1</a><b>x</b><a>2</a>", "xml-inline", &args);
        assert_eq!(out.unwrap(), json!({"a": ["1", "2"], "b": "x"}));
    }

    #[test]
    fn kv_lines_split_once() {
        let out = parse_content("a: 1\nnoise\nb: x:y", "kv-lines", &json!({}));
        assert_eq!(out.unwrap(), json!({"a": "1", "b": "x:y"}));
    }
}
