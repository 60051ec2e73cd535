//! Warnings on the conversation from what the template is known to need (its probe
//! answers): string arguments where it requires objects, shown at the message (the `⚠`
//! flag in the list, what to change under its fields), gone once fixed.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Direction, MessageAction, Step};
use chatplate::tui::panes::messages::fields::Field;
use insta::assert_snapshot;
use serde_json::json;
use tui_support::{example_app, screen};

fn msg(action: MessageAction) -> Action {
    Action::Message(action)
}

#[test]
fn string_arguments_on_a_template_that_requires_objects_are_flagged_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    // qwen2.5-reasoning-tools renders arguments only as objects (chatplate inspect).
    let mut app = example_app(dir.path());
    app.edit_session(|session| {
        session.messages[2].0["tool_calls"][0]["function"]["arguments"] =
            json!("{\"city\": \"Paris\"}");
    });
    app.settle();
    assert_eq!(
        app.needs(2),
        ["call 1's arguments are a JSON string; this template needs an object: press o on them"]
    );
    assert!(app.needs(1).is_empty());
    for _ in 0..2 {
        app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    }
    app.update(msg(MessageAction::EnterFields));
    while app.messages().current_field(&app.workspace().session) != Some(Field::CallArguments(0)) {
        app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    }
    assert_snapshot!("needs_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("needs_120x40", screen(&mut app, 120, 40));
    app.update(msg(MessageAction::ToggleArgumentsForm));
    assert!(app.needs(2).is_empty(), "fixed with o");
}
