//! Blocks of messages (`v`, the range mode): extending the block with keys, go-to and
//! the mouse; deleting, moving, duplicating, changing the role of and copying it; pasting
//! JSON messages; each change one undo step, on a 1,000-message session too.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, MessageAction, MouseInput, MouseKind, Pane};
use chatplate::tui::app::App;
use chatplate::tui::keymap::Scope;
use chatplate_core::session::{Message, Session};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{app_for, example_app, key, screen, type_text};

/// A session of `count` alternating user / assistant messages on the default template.
fn long_app(dir: &std::path::Path, count: usize) -> App {
    let mut session = Session::new(chatplate_core::session::TemplateRef::Bundled(
        chatplate_core::catalog::DEFAULT_TEMPLATE.into(),
    ));
    session.messages = (0..count)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            Message::new(role, &format!("message number {}", i + 1))
        })
        .collect();
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Messages));
    app
}

/// The messages' contents, in order.
fn contents(app: &App) -> Vec<String> {
    (app.workspace().session.messages.iter())
        .map(|m| m.0["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn press(app: &mut App, keys: &str) {
    type_text(app, keys);
}

fn block(app: &App) -> Option<std::ops::RangeInclusive<usize>> {
    app.messages().block(&app.workspace().session)
}

#[test]
fn v_then_movement_selects_a_block_that_moves_and_undoes_in_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 10);
    press(&mut app, "jjv");
    assert_eq!(app.scope(), Scope::Range);
    press(&mut app, "jj");
    assert_eq!(block(&app), Some(2..=4));
    press(&mut app, "JJ");
    assert_eq!(
        block(&app),
        Some(4..=6),
        "the block moved with its messages"
    );
    let moved = contents(&app);
    assert_eq!(
        moved[4..=6],
        ["message number 3", "message number 4", "message number 5"]
    );
    press(&mut app, "u");
    press(&mut app, "u");
    assert_eq!(
        contents(&app)[2],
        "message number 3",
        "two moves, two steps"
    );
    assert_eq!(app.scope(), Scope::Messages, "undo leaves the range mode");
}

#[test]
fn a_deleted_duplicated_or_retyped_block_comes_back_with_one_undo() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 6);
    let before = contents(&app);
    press(&mut app, "jvjj");
    press(&mut app, "d");
    assert_eq!(contents(&app).len(), 3);
    assert_eq!(app.scope(), Scope::Messages, "a deleted block is gone");
    press(&mut app, "u");
    assert_eq!(contents(&app), before, "one undo brings all three back");
    // Undo selected message 4 again, where the cursor was.
    press(&mut app, "vjc");
    assert_eq!(contents(&app).len(), 8);
    assert_eq!(
        block(&app),
        Some(5..=6),
        "the copy, after the block, is the block"
    );
    press(&mut app, "r");
    let roles: Vec<&str> = (app.workspace().session.messages.iter())
        .map(Message::role)
        .collect();
    assert_eq!(
        roles[5..=6],
        ["tool", "tool"],
        "the role after the first one's (assistant)"
    );
    press(&mut app, "uu");
    assert_eq!(contents(&app), before);
}

#[test]
fn the_role_dialog_sets_the_whole_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 4);
    press(&mut app, "vjj");
    press(&mut app, "R");
    // The role dialog opens with the first message's role: replace it.
    for _ in 0..10 {
        app.handle_key(key(KeyCode::Backspace));
    }
    press(&mut app, "developer");
    app.handle_key(key(KeyCode::Enter));
    let roles: Vec<&str> = (app.workspace().session.messages.iter())
        .map(Message::role)
        .collect();
    assert_eq!(roles, ["developer", "developer", "developer", "assistant"]);
    press(&mut app, "u");
    assert_eq!(app.workspace().session.messages[1].role(), "assistant");
}

#[test]
fn a_copied_block_pastes_back_as_messages_and_bad_json_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 4);
    press(&mut app, "vj");
    let Some(chatplate::tui::context::Effect::Copy { text, .. }) =
        app.handle_key(key(KeyCode::Char('y')))
    else {
        panic!("y copies")
    };
    let copied: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(copied[1]["content"], "message number 2");
    app.handle_key(key(KeyCode::Esc));
    press(&mut app, "G");
    app.update(Action::Paste(
        "[{\"role\": \"user\",\n \"content\": }]".into(),
    ));
    let said = app.status().expect("bad JSON is refused").clone();
    assert!(
        said.error && said.text.contains("not JSON at 2:13"),
        "{said:?}"
    );
    assert_eq!(contents(&app).len(), 4, "nothing pasted");
    app.update(Action::Paste(text));
    assert_eq!(contents(&app).len(), 6);
    assert_eq!(
        contents(&app)[4..],
        ["message number 1", "message number 2"]
    );
    assert_eq!(
        block(&app),
        Some(4..=5),
        "the pasted messages are the block"
    );
    press(&mut app, "u");
    assert_eq!(contents(&app).len(), 4, "the paste is one step");
}

#[test]
fn go_to_and_the_mouse_extend_the_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 1000);
    press(&mut app, "v:");
    press(&mut app, "900");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(block(&app), Some(0..=899));
    press(&mut app, "J");
    assert_eq!(block(&app), Some(1..=900));
    assert_eq!(contents(&app)[0], "message number 901");
    press(&mut app, "d");
    assert_eq!(contents(&app).len(), 100);
    press(&mut app, "u");
    assert_eq!(contents(&app).len(), 1000, "900 messages back in one step");
    assert_eq!(contents(&app)[1], "message number 1");
    // A drag over the list: the block runs from where it began.
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    let at = |kind, row| {
        Action::Mouse(MouseInput {
            kind,
            column: 5,
            row,
        })
    };
    app.update(at(MouseKind::Click, 3));
    app.update(at(MouseKind::Drag, 4));
    app.update(at(MouseKind::Drag, 5));
    assert_eq!(block(&app), Some(1..=3));
    // A click in the range mode moves the block's end.
    app.update(at(MouseKind::Click, 2));
    assert_eq!(block(&app), Some(0..=1));
}

#[test]
fn the_range_mode_screens() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    press(&mut app, "jvj");
    assert_snapshot!("range_80x24", screen(&mut app, 80, 24));
    let mut app = long_app(dir.path(), 1000);
    app.update(Action::Message(MessageAction::Select(
        chatplate::tui::action::Step::Page(chatplate::tui::action::Direction::Down),
    )));
    press(&mut app, "vjjj");
    assert_snapshot!("range_1000_120x40", screen(&mut app, 120, 40));
}
