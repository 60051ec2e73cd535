//! The paste dialog (`p` in the Messages pane): a model's raw output, pasted, parses on
//! the worker with the session's `response_template` into a new assistant message; what
//! the parser could not place, or that there is no schema, shows before it is added.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::{Path, PathBuf};

use chatplate::tui::action::{Action, DialogAction, MessageAction};
use chatplate::tui::app::App;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use serde_json::{json, Value as Json};
use tui_support::{app_for, screen};

/// What Qwen3 writes for a question about two cities: reasoning, a sentence, two calls.
const QWEN3_OUTPUT: &str = "<think>\nThe user wants the weather in two cities. I will call \
get_weather for each.\n</think>\n\nLet me check both cities.\n<tool_call>\n{\"name\": \
\"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>\n\
<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n</tool_call>\
<|im_end|>";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A session on the bundled Qwen-style template with our schema for its `<tool_call>`
/// JSON (`with_schema`; without it, on a copy of the template as a plain file, which
/// ships no schema), one tool and a user question.
fn paste_app(dir: &Path, with_schema: bool) -> App {
    let schema = repo().join("tests/data/parse/schemas/qwen2.5-reasoning-tools.json");
    std::fs::copy(schema, dir.join("schema.json")).unwrap();
    let mut session = json!({
        "version": 1,
        "template": {"bundled": "qwen2.5-reasoning-tools"},
        "messages": [{"role": "user", "content": "Weather in Paris and Lyon?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}],
    });
    if with_schema {
        session["response_template"] = json!("schema.json");
    } else {
        let template = repo().join("templates/qwen2.5-reasoning-tools.jinja");
        std::fs::copy(template, dir.join("t.jinja")).unwrap();
        session["template"] = json!({"path": "t.jinja"});
    }
    let session: Session = serde_json::from_value(session).expect("a session");
    app_for(session, dir)
}

/// Opens the dialog, pastes `output` (as a bracketed paste arrives) and parses it.
fn paste_and_parse(app: &mut App, output: &str) {
    app.update(Action::PasteOutput);
    app.update(Action::Paste(output.to_string()));
    app.update(Action::Dialog(DialogAction::Accept));
    app.settle();
}

fn messages(app: &App) -> Vec<Json> {
    let session = &app.workspace().session;
    session
        .messages
        .iter()
        .map(|m| Json::Object(m.0.clone()))
        .collect()
}

#[test]
fn a_qwen3_output_with_reasoning_and_two_calls_becomes_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paste_app(dir.path(), true);
    paste_and_parse(&mut app, QWEN3_OUTPUT);
    assert_snapshot!("paste_parsed_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("paste_parsed_120x40", screen(&mut app, 120, 40));
    app.update(Action::Dialog(DialogAction::Accept));
    let added = messages(&app).pop().unwrap();
    assert_eq!(
        added,
        json!({
            "role": "assistant",
            "reasoning_content": "The user wants the weather in two cities. I will call get_weather for each.",
            "content": "Let me check both cities.",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}},
            ],
        })
    );
    // One undo step takes it away again.
    app.update(Action::Message(MessageAction::Undo));
    assert_eq!(messages(&app).len(), 1);
}

#[test]
fn text_the_parser_dropped_is_shown_before_adding() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paste_app(dir.path(), true);
    paste_and_parse(&mut app, "Hi!<|im_end|>\nafter the end");
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("not placed: Hi!<|im_end|>"), "{shown}");
    assert_snapshot!("paste_unplaced_80x24", shown);
    assert_snapshot!("paste_unplaced_120x40", screen(&mut app, 120, 40));
    // Esc leaves the conversation as it was.
    app.update(Action::Dialog(DialogAction::Cancel));
    assert_eq!(messages(&app).len(), 1);
}

#[test]
fn without_a_schema_the_dialog_says_how_to_add_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paste_app(dir.path(), false);
    paste_and_parse(&mut app, QWEN3_OUTPUT);
    let shown = screen(&mut app, 120, 40);
    assert!(shown.contains("no response_template"), "{shown}");
    assert!(shown.contains("docs/parse.md"), "{shown}");
    app.update(Action::Dialog(DialogAction::Accept));
    assert_eq!(
        messages(&app).len(),
        1,
        "nothing is added without a message"
    );
}

/// The paste box shows as much of a long output as the screen has room for.
#[test]
fn the_paste_box_uses_the_height_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = paste_app(dir.path(), true);
    let output: Vec<String> = (1..=50).map(|n| format!("line {n}")).collect();
    app.update(Action::PasteOutput);
    app.update(Action::Paste(output.join("\n")));
    // 40 rows: a 38-row box, 36 inside; the outcome's line, the rule and `… above`
    // leave 33 output lines.
    let tall = screen(&mut app, 120, 40);
    assert!(tall.contains("… 17 lines above"), "{tall}");
    assert!(
        tall.contains("line 18 ") && tall.contains("line 50 "),
        "{tall}"
    );
    // 24 rows: 20 inside, 17 output lines.
    let short = screen(&mut app, 80, 24);
    assert!(short.contains("… 33 lines above"), "{short}");
}

/// Each bundled template's format (the CLI test's outputs, tests/cli/parse_stream_cli.rs)
/// and transformers 5.23's `parse_response` of it with the schema the template ships
/// (checked with the reference venv).
#[test]
fn every_bundled_template_parses_a_pasted_output_with_the_schema_it_ships() {
    let call = json!([{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}]);
    let cases = [
        ("qwen2.5-reasoning-tools",
         "<think>\nweather\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call><|im_end|>",
         json!({"role": "assistant", "reasoning_content": "weather", "content": "Let me check.", "tool_calls": call})),
        ("gemma-3-tools",
         "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call><end_of_turn>",
         json!({"role": "assistant", "content": "Checking.", "tool_calls": call})),
        ("chatml-with-headers-tools",
         "Checking.<|tool_start|>[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}}]<|tool_end|><|eot_id|>",
         json!({"role": "assistant", "content": "Checking.", "tool_calls": call})),
        ("firefunction-v2",
         " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}]<|eot_id|>",
         json!({"role": "assistant", "tool_calls": call})),
    ];
    for (bundled, output, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let session = json!({
            "version": 1,
            "template": {"bundled": bundled},
            "bos_token": "<|begin_of_text|>",
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}],
            "variables": {"functions": "[]", "datetime": "2026-12-03"},
        });
        let session: Session = serde_json::from_value(session).expect("a session");
        let mut app = app_for(session, dir.path());
        paste_and_parse(&mut app, output);
        let shown = screen(&mut app, 80, 24);
        assert!(
            !shown.contains("no response_template"),
            "{bundled}: {shown}"
        );
        app.update(Action::Dialog(DialogAction::Accept));
        assert_eq!(
            messages(&app).pop().unwrap(),
            expected,
            "{bundled}: {shown}"
        );
    }
}
