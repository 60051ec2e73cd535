//! Round-trip badges: with a `response_template`, each assistant message is parsed back
//! on the worker after the render (as `check`'s `assert_round_trip` does) and the list
//! marks it ✓ or ✗, the selected message's detail showing the difference.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::{Path, PathBuf};

use chatplate::tui::action::{Action, Direction, MessageAction, Pane, Step};
use chatplate::tui::app::App;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use serde_json::json;
use tui_support::{app_for, screen};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The round-trip CLI test's conversation: parallel calls that come back, and a final
/// answer whose reasoning the template drops from past turns (so it cannot come back).
fn badge_app(dir: &Path, with_schema: bool) -> App {
    let schema = repo().join("tests/data/parse/schemas/qwen2.5-reasoning-tools.json");
    std::fs::copy(schema, dir.join("schema.json")).unwrap();
    let mut session = json!({
        "version": 1,
        "template": {"bundled": "qwen2.5-reasoning-tools"},
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}}]},
            {"role": "tool", "content": "sunny"},
            {"role": "assistant", "content": "Sunny.", "reasoning_content": "The tool said so."},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}],
    });
    if with_schema {
        session["response_template"] = json!("schema.json");
    } else {
        // The bundled template ships a schema; a copy of it as a plain file has none.
        let template = repo().join("templates/qwen2.5-reasoning-tools.jinja");
        std::fs::copy(template, dir.join("t.jinja")).unwrap();
        session["template"] = json!({"path": "t.jinja"});
    }
    let session: Session = serde_json::from_value(session).expect("a session");
    opened(session, dir)
}

/// The app on `session`, the Messages pane focused on the message before the last.
fn opened(session: Session, dir: &Path) -> App {
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Messages));
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Up,
    ))));
    app.settle();
    app
}

#[test]
fn assistant_messages_are_marked_and_the_failure_shows_its_difference() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = badge_app(dir.path(), true);
    let shown = screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(1), Some(true), "{shown}");
    assert_eq!(app.round_trip_of(3), Some(false), "{shown}");
    assert_eq!(app.round_trip_of(0), None, "user messages have no badge");
    let note = app.round_trip_note(3).join("\n");
    assert!(
        note.contains("parses back into a different message"),
        "{note}"
    );
    assert!(
        note.contains("- \"reasoning_content\": \"The tool said so.\","),
        "{note}"
    );
    assert_snapshot!("round_trip_badges_80x24", shown);
    assert_snapshot!("round_trip_badges_120x40", screen(&mut app, 120, 40));
}

#[test]
fn the_badges_follow_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = badge_app(dir.path(), true);
    screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(3), Some(false));
    app.update(Action::Message(MessageAction::Delete));
    screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(3), None, "the failing message is gone");
    assert_eq!(app.round_trip_of(1), Some(true));
}

#[test]
fn without_a_schema_there_are_no_badges() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = badge_app(dir.path(), false);
    screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(1), None);
    assert_eq!(app.round_trip_of(3), None);
}

#[test]
fn a_bundled_template_badges_with_the_schema_it_ships() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = badge_app(dir.path(), true);
    screen(&mut app, 80, 24);
    let with_file = (app.round_trip_of(1), app.round_trip_of(3));
    // The same session without a response_template of its own: the bundled one.
    let dir = tempfile::tempdir().unwrap();
    let mut session = app.workspace().session.clone();
    session.response_template = None;
    let mut app = opened(session, dir.path());
    screen(&mut app, 80, 24);
    assert_eq!((app.round_trip_of(1), app.round_trip_of(3)), with_file);
    assert_eq!(with_file, (Some(true), Some(false)));
}
