//! The `mistralrs` engine's additions to MiniJinja 2.14, read from mistral.rs's
//! `mistralrs-core/src/pipeline/chat_template.rs` (`apply_chat_template_to`, commit
//! 9e92262 of 2026-08-22; its Cargo.lock has minijinja 2.14.0) and
//! `mistralrs-core/src/request.rs` (`resolve_reasoning_controls`): the template rewrites
//! before compiling, its own `tojson` filter, and the variables it passes. Written from
//! that description, not copied; what it leaves out is listed in docs/compare.md.

use chatplate_render::{effective_messages, Conversation};
use fancy_regex::{Captures, Regex};
use minijinja2::value::Kwargs;
use minijinja2::{Error, ErrorKind, Value};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::sync::LazyLock;

/// mistral.rs's version these rules were read from.
pub(super) const VERSION: &str =
    "mistral.rs 9e92262 (2026-08-22) rules on minijinja 2.14.0, minijinja-contrib 2.14.0";

/// `range(X, -1, -1)`, which mistral.rs rewrites to `range(X)|reverse`.
static DESCENDING_RANGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"range\((?P<expr>[^,]+),\s*-1,\s*-1\)").expect("a valid pattern"));

/// `{% generation %}` and `{% endgeneration %}` tags, which mistral.rs drops.
static GENERATION_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{%-?\s*(?:end)?generation\s*-?%\}").expect("a valid pattern"));

/// The template as mistral.rs compiles it: a parenthesised `namespace(...)` argument,
/// `[::-1]` as `|reverse`, descending ranges reversed, GLM-4's `meta` lines dropped when
/// it prints `{{ meta }}`, and `{% generation %}` tags dropped.
pub(super) fn rewrite(template: &str) -> String {
    let mut template = template.replace(
        "namespace(name=tcid if tcid else '')",
        "namespace(name=(tcid if tcid else ''))",
    );
    template = template.replace("[::-1]", "|reverse");
    template = DESCENDING_RANGE
        .replace_all(&template, |caps: &Captures| {
            format!("range({})|reverse", &caps["expr"])
        })
        .into_owned();
    if template.contains("{{ meta }}") {
        template = template.replace("{%- set meta = message.get(\"metadata\", \"\") %}", "");
        template = template.replace("{{ meta }}", "");
    }
    GENERATION_TAG.replace_all(&template, "").into_owned()
}

/// mistral.rs's `tojson`: Python's `json.dumps` separators (`, ` and `: `), or serde's
/// pretty printer with `indent=N` spaces (at most 256); not HTML-escaped; any other
/// keyword argument is refused (MiniJinja checks that every one was used).
pub(super) fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let bad = |err: serde_json::Error| {
        Error::new(ErrorKind::BadSerialization, "cannot serialize to JSON").with_source(err)
    };
    let mut buf = Vec::new();
    if let Ok(indent) = kwargs.get::<usize>("indent") {
        if indent > 256 {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson `indent` of {indent} exceeds the maximum of 256"),
            ));
        }
        let spaces = b" ".repeat(indent);
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&spaces);
        let mut serializer = serde_json::Serializer::with_formatter(&mut buf, formatter);
        value.serialize(&mut serializer).map_err(bad)?;
    } else {
        let mut serializer = serde_json::Serializer::with_formatter(&mut buf, PythonSeparators);
        value.serialize(&mut serializer).map_err(bad)?;
    }
    let text = String::from_utf8(buf).map_err(|err| {
        Error::new(ErrorKind::BadSerialization, "cannot serialize to JSON").with_source(err)
    })?;
    Ok(Value::from_safe_string(text))
}

/// JSON with `, ` between items and `: ` after keys, as Python's `json.dumps`.
struct PythonSeparators;

impl serde_json::ser::Formatter for PythonSeparators {
    fn begin_array_value<W: std::io::Write + ?Sized>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: std::io::Write + ?Sized>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: std::io::Write + ?Sized>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// The tools mistral.rs recognises as built in (`builtin_tools`).
const BUILTIN_TOOLS: [&str; 6] = [
    "browser",
    "python",
    "code_interpreter",
    "web_search",
    "brave_search",
    "wolfram_alpha",
];

/// What mistral.rs passes the template: the messages (an assistant's string tool-call
/// arguments parsed to objects), `add_generation_prompt`, `bos_token`, `eos_token`,
/// `unk_token`, `date_string` (`%d, %B, %Y` of the clock), `enable_thinking` (true unless
/// turned off or `reasoning_effort` is `off`), `reasoning_effort` and
/// `reasoning_strength`; with tools, `tools` (each reduced to its type, name,
/// description, parameters and strict), `xml_tools` and `builtin_tools`. Nothing else:
/// no `documents`, none of the session's other variables.
pub(super) fn context(conversation: &Conversation) -> Map<String, Json> {
    let variables = &conversation.variables;
    let mut context = Map::new();
    let mut messages = effective_messages(&conversation.messages);
    messages.iter_mut().for_each(parse_tool_call_arguments);
    context.insert("messages".into(), messages.into());
    let generation = conversation.add_generation_prompt.into();
    context.insert("add_generation_prompt".into(), generation);
    for token in ["bos_token", "eos_token", "unk_token"] {
        let given = variables.get(token).cloned().unwrap_or(Json::Null);
        context.insert(token.into(), given);
    }
    let date = super::bare2::strftime(conversation.clock, "%d, %B, %Y").unwrap_or_default();
    context.insert("date_string".into(), date.into());
    let effort = variables.get("reasoning_effort").and_then(Json::as_str);
    let thinking = match effort {
        Some(effort) => effort != "off",
        None => variables
            .get("enable_thinking")
            .and_then(Json::as_bool)
            .unwrap_or(true),
    };
    context.insert("enable_thinking".into(), thinking.into());
    if let Some(effort) = effort {
        context.insert("reasoning_effort".into(), effort.into());
        context.insert("reasoning_strength".into(), effort.into());
    }
    let tools: Vec<Json> = conversation.tools.iter().flatten().map(tool).collect();
    if !tools.is_empty() {
        let builtin: Vec<Json> = tools
            .iter()
            .filter_map(|tool| tool["function"]["name"].as_str())
            .filter(|name| BUILTIN_TOOLS.contains(name))
            .map(Json::from)
            .collect();
        context.insert("xml_tools".into(), tools.clone().into());
        context.insert("tools".into(), tools.into());
        context.insert("builtin_tools".into(), builtin.into());
    }
    context
}

/// An assistant's `tool_calls[].function.arguments` given as JSON text, parsed when it
/// is an object.
fn parse_tool_call_arguments(message: &mut Json) {
    if message.get("role").and_then(Json::as_str) != Some("assistant") {
        return;
    }
    let Some(calls) = message.get_mut("tool_calls").and_then(Json::as_array_mut) else {
        return;
    };
    for call in calls {
        let Some(function) = call.get_mut("function").and_then(Json::as_object_mut) else {
            continue;
        };
        let parsed = function
            .get("arguments")
            .and_then(Json::as_str)
            .and_then(|text| serde_json::from_str::<Json>(text).ok())
            .filter(Json::is_object);
        if let Some(parsed) = parsed {
            function.insert("arguments".into(), parsed);
        }
    }
}

/// A tool as mistral.rs hands it to the template: `{"type", "function": {"name",
/// "description", "parameters", "strict"}}`, the parameters' keys ordered `type`,
/// `properties`, `required`, `additionalProperties`, then alphabetically.
fn tool(tool: &Json) -> Json {
    let given = &tool["function"];
    let mut function = Map::new();
    function.insert("name".into(), given["name"].clone());
    for key in ["description", "parameters", "strict"] {
        let Some(item) = given.get(key).filter(|item| !item.is_null()) else {
            continue;
        };
        let item = match (key, item) {
            ("parameters", Json::Object(parameters)) => Json::Object(ordered(parameters)),
            _ => item.clone(),
        };
        function.insert(key.into(), item);
    }
    serde_json::json!({"type": tool.get("type").cloned().unwrap_or_else(|| "function".into()), "function": function})
}

fn ordered(parameters: &Map<String, Json>) -> Map<String, Json> {
    const FIRST: [&str; 4] = ["type", "properties", "required", "additionalProperties"];
    let mut keys: Vec<&String> = parameters.keys().collect();
    keys.sort_by_key(|key| {
        let rank = FIRST.iter().position(|first| first == key);
        (rank.unwrap_or(FIRST.len()), key.as_str())
    });
    keys.into_iter()
        .map(|key| (key.clone(), parameters[key].clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_what_mistral_rs_rewrites() {
        let source = "{% for m in messages[::-1] %}{% endfor %}{% for i in range(n - 1, -1, -1) %}{% endfor %}{% generation %}x{%- endgeneration -%}";
        assert_eq!(
            rewrite(source),
            "{% for m in messages|reverse %}{% endfor %}{% for i in range(n - 1)|reverse %}{% endfor %}x"
        );
    }

    #[test]
    fn tool_parameters_are_ordered_and_other_keys_dropped() {
        let given = serde_json::json!({"type": "function", "function": {"name": "f", "extra": 1,
            "parameters": {"required": [], "b": 1, "type": "object", "a": 2}}});
        let keys: Vec<String> = tool(&given)["function"]["parameters"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["type", "required", "a", "b"]);
        assert!(tool(&given)["function"].get("extra").is_none());
    }
}
