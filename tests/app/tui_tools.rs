//! Adding tools without typing their JSON schema: `+` takes `NAME PARAM description`
//! (a function tool with one required string parameter) or a JSON file of tools.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, MessageAction, Pane};
use chatplate::tui::app::driver;
use chatplate::tui::dialogs::Overlay;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use serde_json::json;
use tui_support::{example_app, key, screen, type_text};

fn tool_names(app: &chatplate::tui::app::App) -> Vec<String> {
    let tools = app.workspace().session.tools.clone().unwrap_or_default();
    let name = |t: &serde_json::Value| t["function"]["name"].as_str().unwrap_or("?").to_string();
    tools.iter().map(name).collect()
}

#[test]
fn a_tool_from_a_skeleton_renders_and_undoes_in_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('+')));
    type_text(&mut app, "get_time timezone The local time");
    assert_snapshot!("tool_skeleton_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(tool_names(&app), ["get_weather", "get_time"]);
    let tool = &app.workspace().session.tools.as_ref().unwrap()[1];
    assert_eq!(
        tool["function"]["parameters"]["required"],
        json!(["timezone"])
    );
    app.settle();
    assert!(app.preview().text().contains("\"name\": \"get_time\""));
    app.update(Action::Message(MessageAction::Undo));
    assert_eq!(tool_names(&app), ["get_weather"]);
}

#[test]
fn a_skeleton_without_a_parameter_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('+')));
    type_text(&mut app, "get_time");
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(app.overlay(), Some(Overlay::Input(i)) if i.text == "get_time"));
    assert!(screen(&mut app, 80, 24).contains("type NAME PARAM description"));
    assert_eq!(tool_names(&app), ["get_weather"]);
}

#[test]
fn tools_from_a_json_file_a_request_body_or_a_broken_file() {
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"model": "m", "tools": [
        {"type": "function", "function": {"name": "a"}},
        {"type": "function", "function": {"name": "b"}},
    ]});
    let file = dir.path().join("body.json");
    std::fs::write(&file, body.to_string()).unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('+')));
    type_text(&mut app, file.to_str().unwrap());
    driver::press(&mut app, key(KeyCode::Enter));
    assert_eq!(tool_names(&app), ["get_weather", "a", "b"]);
    std::fs::write(&file, "[{").unwrap();
    app.handle_key(key(KeyCode::Char('+')));
    type_text(&mut app, file.to_str().unwrap());
    driver::press(&mut app, key(KeyCode::Enter));
    let shown = screen(&mut app, 120, 40);
    assert!(shown.contains("no tools added from"), "{shown}");
    assert!(shown.contains("line 1 column 2"), "{shown}");
    assert_eq!(tool_names(&app).len(), 3);
}
