//! The mouse: a click focuses the pane under it and selects a message row; the wheel
//! moves the list under the pointer or scrolls the prompt.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Direction, Pane};
use chatplate::tui::mouse::{MouseInput, MouseKind};
use tui_support::example_app;

fn at(kind: MouseKind, column: u16, row: u16) -> Action {
    Action::Mouse(MouseInput { kind, column, row })
}

#[test]
fn a_click_focuses_the_pane_and_selects_the_message_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    // 80x24: the tab line, then the Messages pane's border, then its rows.
    app.update(at(MouseKind::Click, 5, 4));
    assert_eq!(app.screen().focus, Pane::Messages);
    assert_eq!(app.messages().selected, 2, "the third row: message 3");
    app.update(at(MouseKind::Click, 60, 10));
    assert_eq!(app.screen().focus, Pane::Prompt);
    assert_eq!(
        app.messages().selected,
        2,
        "a click in the prompt selects nothing"
    );
}

#[test]
fn the_wheel_moves_what_is_under_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.update(at(MouseKind::Wheel(Direction::Down), 5, 4));
    assert_eq!(app.messages().selected, 3, "three rows a notch");
    let top = app.prompt().top;
    app.update(at(MouseKind::Wheel(Direction::Down), 60, 10));
    assert_ne!(app.prompt().top, top, "the prompt scrolled");
    assert_eq!(
        app.screen().focus,
        Pane::Messages,
        "the wheel does not move the focus"
    );
}
