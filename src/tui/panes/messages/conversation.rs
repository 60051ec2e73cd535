//! Structural edits of the conversation: new messages, roles, tool calls and the tool
//! results that answer them, plus the example session the app opens with.

use serde_json::{json, Value as Json};

use chatplate_core::session::{Message, Session, TemplateRef};

use crate::tui::panes::messages::fields::tool_calls;

/// The roles `r` cycles through; any other string can be typed with `R`.
pub const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// The role after `role` in [`ROLES`] (custom roles go back to the start).
pub fn cycle_role(role: &str) -> &'static str {
    let next = ROLES.iter().position(|r| *r == role).map_or(0, |i| i + 1);
    ROLES[next % ROLES.len()]
}

/// A sensible role for a message that follows `previous`: the model answers a user
/// and a tool result.
pub fn role_after(previous: Option<&str>) -> &'static str {
    match previous {
        Some("user" | "tool") => "assistant",
        _ => "user",
    }
}

/// A new empty message for position `at`, its role guessed from the message before; the
/// first message of an empty session is the system prompt (one `r` makes it a user's).
pub fn blank_message(session: &Session, at: usize) -> Message {
    if session.messages.is_empty() {
        return Message::new("system", "");
    }
    let previous = at.checked_sub(1).and_then(|i| session.messages.get(i));
    Message::new(role_after(previous.map(Message::role)), "")
}

/// Moves message `index` one step; returns its new index.
pub fn move_message(session: &mut Session, index: usize, down: bool) -> Option<usize> {
    let target = if down {
        index.checked_add(1)?
    } else {
        index.checked_sub(1)?
    };
    if target >= session.messages.len() || index >= session.messages.len() {
        return None;
    }
    session.messages.swap(index, target);
    Some(target)
}

/// Appends a tool call to `msg`, named after the first tool definition it does not call
/// yet (else the first, else `my_tool`); returns the new call's index.
pub fn add_tool_call(msg: &mut Message, tools: Option<&[Json]>) -> usize {
    let count = tool_calls(msg).len();
    let used: Vec<&str> = tool_calls(msg)
        .iter()
        .filter_map(|call| call.pointer("/function/name").and_then(Json::as_str))
        .collect();
    let names: Vec<&str> = tools
        .unwrap_or_default()
        .iter()
        .filter_map(|tool| tool.pointer("/function/name").or_else(|| tool.get("name")))
        .filter_map(Json::as_str)
        .collect();
    // The first tool this message does not call yet: parallel calls are usually to
    // different tools.
    let name = names
        .iter()
        .find(|name| !used.contains(name))
        .or(names.first())
        .copied()
        .unwrap_or("my_tool")
        .to_string();
    let call = json!({
        "id": format!("call_{}", count + 1),
        "type": "function",
        "function": {"name": name, "arguments": {}}
    });
    match msg.0.get_mut("tool_calls").and_then(Json::as_array_mut) {
        Some(calls) => calls.push(call),
        None => {
            msg.0.insert("tool_calls".into(), Json::Array(vec![call]));
        }
    }
    count
}

/// Builds the tool result that answers the first unanswered call of the nearest
/// assistant message at or before `index`; returns where to insert it and the message.
pub fn tool_result(session: &Session, index: usize) -> Option<(usize, Message)> {
    let owner = (0..=index.min(session.messages.len().checked_sub(1)?))
        .rev()
        .find(|&i| !tool_calls(&session.messages[i]).is_empty())?;
    let answered: Vec<&str> = session.messages[owner + 1..]
        .iter()
        .take_while(|m| m.role() == "tool")
        .filter_map(|m| m.0.get("tool_call_id").and_then(Json::as_str))
        .collect();
    let calls = tool_calls(&session.messages[owner]);
    let call = calls
        .iter()
        .find(|c| {
            c.get("id")
                .and_then(Json::as_str)
                .is_none_or(|id| !answered.contains(&id))
        })
        .or(calls.first())?;
    let insert_at = owner
        + 1
        + session.messages[owner + 1..]
            .iter()
            .take_while(|m| m.role() == "tool")
            .count();
    Some((insert_at, result_message(call)))
}

fn result_message(call: &Json) -> Message {
    let mut msg = Message::new("tool", "");
    if let Some(id) = call.get("id").and_then(Json::as_str) {
        msg.0.insert("tool_call_id".into(), Json::from(id));
    }
    let name = call.pointer("/function/name").or_else(|| call.get("name"));
    if let Some(name) = name.and_then(Json::as_str) {
        msg.0.insert("name".into(), Json::from(name));
    }
    msg
}

/// The example the app opens with when no file is given: a system prompt, a question,
/// a tool call, its result and the tool list, with a fixed clock.
pub fn example_session(template: TemplateRef) -> Session {
    let value = json!({
        "version": chatplate_core::session::FORMAT_VERSION,
        "template": template,
        "add_generation_prompt": true,
        "messages": [
            {"role": "system", "content": "You are a helpful weather assistant."},
            {"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}}
            }]},
            {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
             "content": "{\"temperature\": 18, \"sky\": \"cloudy\"}"}
        ],
        "tools": [{
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                }
            }
        }],
        "clock": "2026-01-15T09:30:00"
    });
    serde_json::from_value(value).unwrap_or_else(|_| Session::new(template_fallback()))
}

fn template_fallback() -> TemplateRef {
    TemplateRef::Bundled(chatplate_core::catalog::DEFAULT_TEMPLATE.into())
}
