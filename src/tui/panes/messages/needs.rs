//! Warnings on the conversation from what the session's template is known to need:
//! the probe answers behind the Templates pane's badges (`sys`, `ids`, ...; the
//! session's own template is probed first) compared with each message. A message with
//! a warning gets the `⚠` flag in the list, and its fields say what to change. Only
//! answers the probes decided count: nothing is said about a template that could not
//! be probed.

use serde_json::Value as Json;

use chatplate_core::session::Message;
use chatplate_core::worker::capabilities::TemplateInfo;

use crate::tui::files::workspace::Workspace;
use crate::tui::panes::messages::fields::tool_calls;
use crate::tui::panes::templates::badges::TemplateBadges;

/// The probe answer `key`, when the probes decided it.
fn flag(info: &TemplateInfo, key: &str) -> Option<bool> {
    (info.entries.iter())
        .find(|e| e.key == key)
        .and_then(|e| e.value.as_bool())
}

/// What to change in `message` for the template `info` describes, one sentence each.
pub fn warnings(message: &Message, info: &TemplateInfo) -> Vec<String> {
    let mut found = Vec::new();
    let role = message.0.get("role").and_then(Json::as_str);
    if role == Some("system") && flag(info, "supports_system_role") == Some(false) {
        found.push(
            "this template does not show system messages: move the text into the first \
             user message"
                .to_string(),
        );
    }
    if matches!(message.0.get("content"), Some(Json::Array(_)))
        && flag(info, "accepts_content_parts") == Some(false)
    {
        found.push(
            "the content is a list of parts, which this template prints as data: make it \
             plain text"
                .to_string(),
        );
    }
    let objects = flag(info, "requires_object_arguments") == Some(true);
    let ids = flag(info, "supports_tool_call_id") == Some(true);
    for (i, call) in tool_calls(message).iter().enumerate() {
        let n = i + 1;
        if objects
            && call
                .pointer("/function/arguments")
                .is_some_and(Json::is_string)
        {
            found.push(format!(
                "call {n}'s arguments are a JSON string; this template needs an object: \
                 press o on them"
            ));
        }
        if ids && call.get("id").is_none_or(Json::is_null) {
            found.push(format!(
                "call {n} has no id, and this template prints ids: give it one (the tool \
                 result's tool_call_id names it)"
            ));
        }
    }
    let has_call_id = message.0.get("tool_call_id").is_some_and(|v| !v.is_null());
    if role == Some("tool") && ids && !has_call_id {
        found.push(
            "no tool_call_id, and this template prints it: set it to the id of the call \
             this answers"
                .to_string(),
        );
    }
    found
}

/// What to change in message `index` of `workspace` for its template (empty until the
/// template's probe answers arrived in `badges`, and while the template is missing).
pub fn needs(workspace: &Workspace, badges: &TemplateBadges, index: usize) -> Vec<String> {
    // A missing template's placeholder is an empty source: its probe answers
    // ("no system role", ...) say nothing about the template the session names.
    if workspace.missing_label().is_some() {
        return Vec::new();
    }
    let info = badges.info(&workspace.template.source);
    match (info, workspace.session.messages.get(index)) {
        (Some(info), Some(message)) => warnings(message, info),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_core::inspect::Entry;
    use serde_json::json;

    fn info(flags: &[(&str, bool)]) -> TemplateInfo {
        let entries = (flags.iter())
            .map(|(key, value)| Entry {
                key: (*key).to_string(),
                value: Json::Bool(*value),
                probe: String::new(),
                observed: String::new(),
            })
            .collect();
        TemplateInfo {
            entries,
            variables: Vec::new(),
            failures: Vec::new(),
        }
    }

    fn message(json: Json) -> Message {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn each_need_is_checked_only_where_the_template_decided_it() {
        let system = message(json!({"role": "system", "content": "Be brief."}));
        assert_eq!(
            warnings(&system, &info(&[("supports_system_role", false)])).len(),
            1
        );
        assert!(warnings(&system, &info(&[("supports_system_role", true)])).is_empty());
        assert!(
            warnings(&system, &info(&[])).is_empty(),
            "undecided: nothing said"
        );
        let call = message(json!({"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]}));
        let strict = info(&[
            ("requires_object_arguments", true),
            ("supports_tool_call_id", true),
        ]);
        let found = warnings(&call, &strict);
        assert!(
            found[0].starts_with("call 1's arguments are a JSON string"),
            "{found:?}"
        );
        assert!(found[1].starts_with("call 1 has no id"), "{found:?}");
        let parts = message(json!({"role": "user", "content": [{"type": "text", "text": "x"}]}));
        assert_eq!(
            warnings(&parts, &info(&[("accepts_content_parts", false)])).len(),
            1
        );
        let result = message(json!({"role": "tool", "content": "18"}));
        assert_eq!(warnings(&result, &strict).len(), 1);
    }
}
