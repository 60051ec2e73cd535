//! End to end, the authoring goal: from `chatplate --new TEMPLATE`,
//! build the fixture "system; user; assistant with two parallel tool calls (object and
//! string arguments); two tool results; final answer; two tools; add_generation_prompt;
//! enable_thinking = false" with the keys docs/keys.md documents, save it with its
//! expected prompt, and let `chatplate check` pass it. Command keys are counted (typed
//! text is not): 20, the goal (25 before `e` on the settings row edited all the settings
//! as one JSON object; 29 before `t` opened the arguments editor, `a` worked from the
//! settings fields, `--new` started with add_generation_prompt on and `E` on an untitled
//! session asked for the name without a `y` first).

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use chatplate_core::session::{Expected, Session};
use e2e_support::Tui;
use serde_json::{json, Value as Json};

/// The most command keys the authoring may take (what it takes now: no regression).
const GOAL: usize = 20;

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}, {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}}}}]"#;

/// Sends command keys and counts them.
struct Keys<'t> {
    tui: &'t mut Tui,
    count: usize,
}

impl Keys<'_> {
    /// A command key, then waits until `ready` holds.
    fn press(&mut self, key: &str, what: &str, ready: impl Fn(&str) -> bool) {
        self.count += 1;
        self.tui.send(key);
        self.tui.wait_for(what, ready);
    }

    /// Typed text (not counted), then waits until `ready` holds.
    fn type_text(&mut self, text: &str, what: &str, ready: impl Fn(&str) -> bool) {
        self.tui.send(text);
        self.tui.wait_for(what, ready);
    }
}

const ESC: &str = "\x1b";
const ENTER: &str = "\r";

#[test]
fn author_the_goal_fixture_in_at_most_20_command_keys() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join("goal.json");

    let launch = e2e_support::Launch::args(&["--new", "qwen2.5-reasoning-tools"]);
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("qwen2.5-reasoning-tools"));
    let mut keys = Keys {
        tui: &mut tui,
        count: 0,
    };
    // Settings: `e` on the settings row edits them all as one JSON object.
    keys.press("e", "the settings editor", |s| {
        s.contains("settings · raw JSON")
    });
    // It opens selected: what is typed replaces it.
    let settings = format!(
        r#"{{"tools": {TOOLS}, "add_generation_prompt": true, "variables": {{"enable_thinking": false}}}}"#
    );
    keys.type_text(&settings, "valid settings", |s| {
        s.contains("✓ valid JSON") && s.contains("tools 2")
    });
    keys.press(ESC, "the editor closed", |s| {
        !s.contains("settings · raw JSON")
    });
    // Messages: `a` works from the settings fields too.
    keys.press("a", "a system message", |s| {
        s.contains("#1 system · content")
    });
    keys.type_text("You are a concise travel assistant.", "the text", |s| {
        s.contains("concise travel")
    });
    keys.press(ESC, "the editor closed", |s| !s.contains("· content"));
    keys.press("a", "a user message", |s| s.contains("#2 user · content"));
    keys.type_text(
        "Weather in Paris, and the time in Tokyo?",
        "the text",
        |s| s.contains("Tokyo?"),
    );
    keys.press(ESC, "the editor closed", |s| !s.contains("· content"));
    // `t` adds the call and opens its arguments editor.
    keys.press("t", "an assistant with a call", |s| {
        s.contains("· call 1 args")
    });
    keys.type_text(r#"{"city": "Paris"}"#, "valid arguments", |s| {
        s.contains("✓ valid JSON")
    });
    keys.press(ESC, "the editor closed", |s| !s.contains("· call 1 args"));
    keys.press("t", "a second call", |s| s.contains("· call 2 args"));
    keys.type_text(r#"{"timezone": "Asia/Tokyo"}"#, "the arguments", |s| {
        s.contains("✓ valid JSON")
    });
    keys.press(ESC, "the editor closed", |s| !s.contains("· call 2 args"));
    // The string form is the text as typed.
    keys.press("o", "string arguments", |s| s.contains("(string)"));
    keys.press("T", "the first result", |s| s.contains("#4 tool · content"));
    keys.type_text(r#"{"temp_c": 18}"#, "the text", |s| s.contains("temp_c"));
    keys.press(ESC, "the editor closed", |s| !s.contains("· content"));
    keys.press("T", "the second result", |s| {
        s.contains("#5 tool · content")
    });
    keys.type_text("09:30 JST", "the text", |s| s.contains("09:30 JST"));
    keys.press(ESC, "the editor closed", |s| !s.contains("· content"));
    keys.press("a", "the final answer", |s| {
        s.contains("#6 assistant · content")
    });
    keys.type_text("18 °C in Paris; 09:30 in Tokyo.", "the text", |s| {
        s.contains("Tokyo.")
    });
    keys.press(ESC, "the editor closed", |s| !s.contains("· content"));
    // `E` on an untitled session asks for the name straight away.
    keys.press("E", "expected set, the name asked for", |s| {
        s.contains("expected prompt set") && s.contains("sessions/")
    });
    keys.type_text("goal.json", "the name", |s| s.contains("goal.json"));
    keys.press(ENTER, "saved", |s| s.contains("saved"));
    // `q`.
    keys.count += 1;
    let count = keys.count;
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0, "clean exit");
    println!("command keys used: {count} (goal {GOAL})");
    assert!(count <= GOAL, "{count} command keys");

    let saved = Session::load(&file).unwrap();
    let roles: Vec<&str> = saved.messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "assistant"]
    );
    let calls = saved.messages[2].0["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    assert_eq!(calls[0]["function"]["arguments"], json!({"city": "Paris"}));
    assert_eq!(calls[1]["function"]["name"], "get_time");
    assert_eq!(
        calls[1]["function"]["arguments"],
        Json::from(r#"{"timezone": "Asia/Tokyo"}"#)
    );
    assert_eq!(saved.messages[3].0["tool_call_id"], calls[0]["id"]);
    assert_eq!(saved.messages[4].0["tool_call_id"], calls[1]["id"]);
    assert_eq!(saved.tools.as_ref().map(Vec::len), Some(2));
    assert!(saved.add_generation_prompt);
    assert_eq!(saved.variables["enable_thinking"], json!(false));
    assert!(matches!(saved.expected, Some(Expected::Prompt(_))));

    let check = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("run chatplate check");
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "check failed: {stdout}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}
