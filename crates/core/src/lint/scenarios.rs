//! The conversations a template claims to support, built from its capabilities: a
//! multi-turn chat always, then a system message, tool definitions, tool calls and
//! their results, parallel calls and reasoning where the probes saw the template render
//! them. Every message is shaped as the template wants it (typed content, non-null
//! content, object arguments, its reasoning field), so a failure here is the template
//! failing on input it accepts elsewhere.

use serde_json::Value as Json;

use super::lab::Lab;
use crate::inspect::{
    tool_definition, Probe, PROBE_REASONING, PROBE_REPLY, SECOND_USER_NEEDLE, SYSTEM_NEEDLE,
    USER_NEEDLE,
};

/// Text of the probe tool result.
pub(crate) const RESULT_TEXT: &str = "ToolResultNeedle9021";

/// One conversation and the capability that makes the template claim it.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    /// What it exercises ("multi-turn", "tool calls", ...).
    pub(crate) claim: &'static str,
    /// The messages, ending with a user or tool turn (the request a server renders).
    pub(crate) messages: Vec<Json>,
    /// Tool definitions, when the scenario has them.
    pub(crate) tools: Option<Vec<Json>>,
}

impl Scenario {
    /// The request: the messages with the generation prompt (without it when the
    /// conversation already ends with the assistant's turn).
    pub(crate) fn request(&self) -> Probe {
        let probe = self.probe(self.messages.clone());
        if ends_with_reply(&self.messages) {
            probe
        } else {
            probe.with_generation_prompt()
        }
    }

    /// The same conversation closed by an assistant `reply`, without the generation
    /// prompt (what training and the next request's history render).
    pub(crate) fn closed(&self, reply: Json) -> Probe {
        let mut messages = self.messages.clone();
        messages.push(reply);
        self.probe(messages)
    }

    fn probe(&self, messages: Vec<Json>) -> Probe {
        let probe = Probe::of(messages);
        match &self.tools {
            Some(tools) => probe.with_tools(tools.clone()),
            None => probe,
        }
    }
}

/// Every scenario the template's capabilities claim, the plain chat first.
pub(crate) fn claimed(lab: &Lab) -> Vec<Scenario> {
    let caps = &lab.caps;
    let user = lab.message("user", USER_NEEDLE);
    let reply = lab.message("assistant", PROBE_REPLY);
    let second = lab.message("user", SECOND_USER_NEEDLE);
    let system = lab.message("system", SYSTEM_NEEDLE);
    let chat = vec![user.clone(), reply.clone(), second.clone()];
    let with_system = [vec![system], chat.clone()].concat();
    let definitions = Some(vec![tool_definition()]);
    let mut found = vec![scenario("multi-turn", chat.clone(), None)];
    let system_ok = caps.roles.supports_system_role.value;
    let tools_ok = caps.tools.supports_tools.value;
    if system_ok {
        found.push(scenario("a system message", with_system.clone(), None));
    }
    if tools_ok {
        found.push(scenario(
            "tool definitions",
            chat.clone(),
            definitions.clone(),
        ));
    }
    if system_ok && tools_ok {
        found.push(scenario(
            "a system message with tools",
            with_system,
            definitions.clone(),
        ));
    }
    let tools = tools_ok.then(|| definitions.clone()).flatten();
    if caps.tools.supports_tool_calls.value {
        found.push(tool_calls(lab, &user, 1, tools.clone()));
    }
    let results = caps.tools.supports_tool_responses.value;
    if caps.tools.supports_parallel_tool_calls.value && results {
        found.push(tool_calls(lab, &user, 2, tools.clone()));
    }
    if caps.tools.supports_tool_calls.value && results {
        found.push(agentic(lab, system_ok, tools));
    }
    if caps.content.accepts_content_parts.value && !caps.content.requires_typed_content.value {
        found.push(typed(
            &chat,
            system_ok.then(|| lab.message("system", SYSTEM_NEEDLE)),
        ));
    }
    if caps.reasoning.supports_reasoning.value {
        let maker = lab.maker();
        let mut messages = vec![user, maker.reply(PROBE_REASONING, PROBE_REPLY)];
        messages.extend(maker.after_reply());
        messages.push(second);
        found.push(scenario("reasoning", messages, None));
    }
    found
}

/// A user turn, `count` tool calls and (when the template renders tool results) their
/// results.
fn tool_calls(lab: &Lab, user: &Json, count: usize, tools: Option<Vec<Json>>) -> Scenario {
    let mut messages = vec![user.clone(), lab.calls(count)];
    if !lab.caps.tools.supports_tool_responses.value {
        // Without tool results the request after a call cannot be formed: the call
        // closes the conversation, and the crash check renders it that way.
        return scenario("tool calls", messages, tools);
    }
    for index in 0..count {
        let mut result = lab.tool_result(RESULT_TEXT);
        if index == 1 {
            result["tool_call_id"] = Json::from("CallIdA02");
            result["name"] = Json::from("probe_call_two");
        }
        messages.push(result);
    }
    let claim = if count > 1 {
        "parallel tool calls"
    } else {
        "tool calls and results"
    };
    scenario(claim, messages, tools)
}

/// The chat with every message's text as typed parts (`[{"type": "text", ...}]`), as
/// OpenAI clients send it: a template that reads parts in a user message claims them.
fn typed(chat: &[Json], system: Option<Json>) -> Scenario {
    let messages = system
        .into_iter()
        .chain(chat.iter().cloned())
        .map(|mut message| {
            if let Some(text) = message.get("content").and_then(Json::as_str) {
                message["content"] = serde_json::json!([{"type": "text", "text": text}]);
            }
            message
        })
        .collect();
    scenario("typed content parts", messages, None)
}

/// An agent's session: (a system message,) a call and its result, the answer, a new
/// question, and a reply that says something before its call.
fn agentic(lab: &Lab, system: bool, tools: Option<Vec<Json>>) -> Scenario {
    let mut messages = Vec::new();
    if system {
        messages.push(lab.message("system", SYSTEM_NEEDLE));
    }
    let mut talking = lab.calls(1);
    talking["content"] = Json::from("Let me look.");
    messages.extend([
        lab.message("user", USER_NEEDLE),
        lab.calls(1),
        lab.tool_result(RESULT_TEXT),
        lab.message("assistant", PROBE_REPLY),
        lab.message("user", SECOND_USER_NEEDLE),
        talking,
        lab.tool_result(RESULT_TEXT),
    ]);
    scenario("two rounds of tool calls", messages, tools)
}

fn scenario(claim: &'static str, messages: Vec<Json>, tools: Option<Vec<Json>>) -> Scenario {
    Scenario {
        claim,
        messages,
        tools,
    }
}

/// Whether the last message is an assistant's (the conversation is already closed).
pub(crate) fn ends_with_reply(messages: &[Json]) -> bool {
    messages
        .last()
        .and_then(|m| m.get("role"))
        .is_some_and(|role| role == "assistant")
}
