//! The dev corpus's templates with scripts/long_conversation.py's conversation, as
//! `scripts/bench_speed.py` renders them: shared by the clock-free speed test
//! (`speed.rs`) and the criterion bench `benches/corpus.rs` (included by path).

use std::path::{Path, PathBuf};

use chatplate_render::Conversation;
use serde_json::{json, Map, Value as Json};

/// The dev corpus's templates (`$CHATPLATE_CORPUS` or ../shared/conformance/dev beside
/// the repository); `None` (a skip, a failure under `CI=true`) without it.
pub fn corpus_templates() -> Option<PathBuf> {
    // The workspace's root: the root package's folder, two above this crate's.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.contains("[workspace]"))
        })?;
    let dir = std::env::var_os("CHATPLATE_CORPUS")
        .map_or_else(|| root.join("../shared/conformance/dev"), PathBuf::from);
    if dir.join("MANIFEST.json").exists() {
        return Some(dir.join("templates"));
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(!in_ci, "no corpus at {}", dir.display());
    eprintln!("SKIPPED: no corpus at {}", dir.display());
    None
}

/// scripts/long_conversation.py's conversation (`call_content=""`): a system prompt,
/// then questions and answers, a tool call every tenth turn.
pub fn long_conversation(count: usize) -> Vec<Json> {
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    let mut turn = 0;
    while messages.len() < count {
        turn += 1;
        messages.push(json!({"role": "user",
            "content": format!("Question {turn}: what is the weather like in city number {turn}?")}));
        if turn % 10 == 0 && messages.len() + 3 <= count {
            messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather",
                 "arguments": {"city": format!("City {turn}")}}}]}));
            messages.push(json!({"role": "tool",
                "content": format!("{{\"city\": \"City {turn}\", \"temperature_c\": {}}}", 20 + turn % 7)}));
        }
        messages.push(json!({"role": "assistant",
            "content": format!("Answer {turn}: it is sunny, about {} degrees.", 20 + turn % 7)}));
    }
    messages.truncate(count);
    messages
}

pub fn tools() -> Vec<Json> {
    vec![json!({"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}})]
}

/// The corpus template's conversation of `count` messages, with its tokens and
/// variables as the corpus renders it (`<stem>.json`).
pub fn conversation_for(meta: &Json, count: usize) -> Conversation {
    let mut variables = Map::new();
    for key in ["bos_token", "eos_token"] {
        if let Some(token) = meta.get(key) {
            variables.insert(key.to_string(), token.clone());
        }
    }
    if let Some(Json::Object(extra)) = meta.get("extra") {
        variables.extend(extra.clone());
    }
    if let Some(Json::String(name)) = meta.get("tools_json_kwarg") {
        let functions: Vec<Json> = tools().iter().map(|t| t["function"].clone()).collect();
        // Only the work is measured here, not the bytes: serde's indent will do.
        let text = serde_json::to_string_pretty(&functions).unwrap();
        variables.insert(name.clone(), Json::String(text));
    }
    let mut conversation = Conversation::new(long_conversation(count)).with_tools(Some(tools()));
    conversation.add_generation_prompt = true;
    conversation.variables = variables;
    conversation
}
