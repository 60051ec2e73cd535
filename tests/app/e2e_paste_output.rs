//! The paste dialog on the real binary in a pty: a Qwen3-style output pasted with
//! bracketed paste (line breaks as CR, as terminals send them) parses on the worker and
//! becomes a new assistant message that saves with the session.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::PathBuf;

use chatplate_core::session::Session;
use e2e_support::Tui;
use serde_json::json;

#[test]
fn a_bracketed_paste_becomes_an_assistant_message_with_two_calls() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let schema = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parse/schemas/qwen2.5-reasoning-tools.json");
    std::fs::copy(schema, sessions.join("schema.json")).unwrap();
    let file = sessions.join("paste.json");
    let session = json!({
        "version": 1,
        "template": {"bundled": "qwen2.5-reasoning-tools"},
        "response_template": "schema.json",
        "messages": [{"role": "user", "content": "Weather in Paris and Lyon?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}],
    });
    std::fs::write(&file, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    let mut tui = Tui::start(dir.path(), "sessions/paste.json");
    tui.wait_for("the first frame", |s| s.contains("paste.json"));
    tui.send("2");
    tui.send("p");
    tui.wait_for("the dialog", |s| s.contains("Paste a model's raw output"));
    tui.send(
        "\x1b[200~<think>\rTwo cities.\r</think>\r\rChecking both.\r<tool_call>\r\
         {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\r</tool_call>\r\
         <tool_call>\r{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\r\
         </tool_call><|im_end|>\x1b[201~",
    );
    tui.wait_for("the paste", |s| s.contains("</tool_call><|im_end|>"));
    tui.send("\r");
    tui.wait_for("the parsed message", |s| {
        s.contains("Enter add this message")
    });
    tui.send("\r");
    tui.wait_for("the new message", |s| s.contains("added message 2"));
    tui.send("\x13");
    tui.wait_for("the save", |s| s.contains("saved sessions/"));
    let saved = Session::load(&file).unwrap();
    let added = &saved.messages[1].0;
    assert_eq!(added["reasoning_content"], "Two cities.");
    assert_eq!(added["content"], "Checking both.");
    assert_eq!(added["tool_calls"].as_array().map(Vec::len), Some(2));
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}
