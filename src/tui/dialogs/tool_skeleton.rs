//! Adding a tool definition without typing its JSON schema (most of the typing in a
//! fixture): `+` in the Messages pane asks for `NAME PARAM description...`, which
//! becomes a function tool with one required string parameter (or `NAME city:string
//! days:integer description...`: several typed parameters), or for the path of a
//! JSON file of tools (a list, `{"tools": [...]}` as in a request body, or one tool),
//! read as file work. The tools are added to the session's, as one undo step: the
//! dialog asks for it with [`DialogRequest::AddTools`].

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use chatplate_core::files::{self, MAX_REQUEST_BYTES};

use crate::tui::context::Effect;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::files::disk::Job;

/// The JSON Schema types a typed parameter may name.
const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

/// A function tool from `NAME PARAM description...` (one required string parameter) or
/// `NAME PARAM:TYPE PARAM:TYPE... description...` (each typed parameter required, in
/// the order typed); the description may be left out.
pub fn skeleton(text: &str) -> Result<Json, String> {
    let mut words = text.split_whitespace().peekable();
    let (Some(name), Some(first)) = (words.next(), words.next()) else {
        return Err(
            "type NAME PARAM description (e.g. get_weather city Current weather, or \
                    get_weather city:string date:string ...), or the path of a .json file"
                .into(),
        );
    };
    let mut params = vec![typed(first)?];
    if first.contains(':') {
        // A word with a type after its colon; `Note:` starts the description.
        let is_typed = |w: &&str| w.split_once(':').is_some_and(|(_, kind)| !kind.is_empty());
        while let Some(word) = words.next_if(is_typed) {
            params.push(typed(word)?);
        }
    }
    let description = words.collect::<Vec<_>>().join(" ");
    let mut properties = serde_json::Map::new();
    for (param, kind) in &params {
        if properties
            .insert(param.clone(), json!({"type": kind}))
            .is_some()
        {
            return Err(format!("parameter {param:?} is typed twice"));
        }
    }
    let required: Vec<&String> = params.iter().map(|(param, _)| param).collect();
    Ok(json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
            },
        },
    }))
}

/// `PARAM:TYPE` (or a bare `PARAM`, a string) as the parameter and its type.
fn typed(word: &str) -> Result<(String, String), String> {
    let Some((param, kind)) = word.split_once(':') else {
        return Ok((word.to_string(), "string".into()));
    };
    if param.is_empty() {
        return Err(format!("{word:?}: the parameter has no name"));
    }
    if !TYPES.contains(&kind) {
        return Err(format!("{word:?}: the type is one of {}", TYPES.join(", ")));
    }
    Ok((param.to_string(), kind.to_string()))
}

/// The tools a JSON document holds: a list of tools, an object with a `tools` list (a
/// request body), or one tool (an object with `type` or `function`).
pub fn tools_in(json: Json) -> Result<Vec<Json>, String> {
    match json {
        Json::Array(tools) => Ok(tools),
        Json::Object(mut object) => match object.remove("tools") {
            Some(Json::Array(tools)) => Ok(tools),
            Some(_) => Err("its \"tools\" is not a list".into()),
            None if object.contains_key("type") || object.contains_key("function") => {
                Ok(vec![Json::Object(object)])
            }
            None => Err("not a tool, a list of tools or an object with \"tools\"".into()),
        },
        _ => Err("not a tool, a list of tools or an object with \"tools\"".into()),
    }
}

/// Reads the tools in a JSON file (file work, off the update path).
pub(in crate::tui) fn read_tools(path: &Path) -> Result<Vec<Json>, String> {
    let text = files::read_text(path, MAX_REQUEST_BYTES).map_err(|err| err.to_string())?;
    let json: Json = serde_json::from_str(&text)
        .map_err(|err| format!("line {} column {}: {err}", err.line(), err.column()))?;
    tools_in(json)
}

/// The tool dialog's answer: a `.json` path is read as file work; anything else is a
/// skeleton, or why it is not one (the dialog asks again).
pub fn answer(text: &str) -> Result<DialogRequest, String> {
    let text = text.trim();
    if text.ends_with(".json") {
        let read = Job::ReadTools(PathBuf::from(text));
        return Ok(DialogRequest::Effect(Effect::Disk(read)));
    }
    let tool = skeleton(text)?;
    let what = "added tool".to_string();
    Ok(DialogRequest::AddTools {
        tools: vec![tool],
        what,
    })
}

/// The file's tools arrived (or why not): asks for them to be added.
pub fn tools_read(path: &Path, result: Result<Vec<Json>, String>, ctx: &mut DialogContext) {
    match result {
        Ok(tools) => {
            let what = format!("added tools from {}:", path.display());
            ctx.ask(DialogRequest::AddTools { tools, what });
        }
        Err(why) => ctx.warn(format!("no tools added from {}: {why}", path.display())),
    }
}

/// The names of `tools`, for the status line.
pub fn names(tools: &[Json]) -> Vec<String> {
    (tools.iter())
        .map(|t| {
            let name = t.pointer("/function/name").or_else(|| t.get("name"));
            name.and_then(Json::as_str).unwrap_or("?").to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skeleton_has_one_required_string_parameter() {
        let tool = skeleton("get_weather city Current weather for a city").unwrap();
        assert_eq!(tool["function"]["name"], "get_weather");
        assert_eq!(
            tool["function"]["description"],
            "Current weather for a city"
        );
        let parameters = &tool["function"]["parameters"];
        assert_eq!(parameters["properties"]["city"], json!({"type": "string"}));
        assert_eq!(parameters["required"], json!(["city"]));
        assert!(skeleton("get_weather").is_err());
    }

    #[test]
    fn typed_parameters_are_all_required_in_the_order_typed() {
        let tool = skeleton("get_weather city:string days:integer The forecast").unwrap();
        assert_eq!(tool["function"]["description"], "The forecast");
        let parameters = &tool["function"]["parameters"];
        assert_eq!(
            parameters["properties"],
            json!({"city": {"type": "string"}, "days": {"type": "integer"}})
        );
        let order: Vec<&String> = parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(order, ["city", "days"]);
        assert_eq!(parameters["required"], json!(["city", "days"]));
        // The description may hold a colon once the parameters end.
        let tool = skeleton("f a:string Note: b").unwrap();
        assert_eq!(tool["function"]["description"], "Note: b");
        assert!(skeleton("f city:text")
            .unwrap_err()
            .contains("one of string"));
        assert!(skeleton("f :string").is_err());
        assert!(skeleton("f a:string a:number")
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn a_file_may_hold_a_list_a_request_body_or_one_tool() {
        let tool = json!({"type": "function", "function": {"name": "f"}});
        assert_eq!(tools_in(json!([tool])).unwrap().len(), 1);
        assert_eq!(
            tools_in(json!({"model": "m", "tools": [tool, tool]}))
                .unwrap()
                .len(),
            2
        );
        assert_eq!(tools_in(tool.clone()).unwrap(), [tool]);
        assert!(tools_in(json!({"messages": []})).is_err());
        assert!(tools_in(json!("x")).is_err());
    }
}
