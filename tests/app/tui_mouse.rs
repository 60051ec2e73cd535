//! The mouse: a click focuses the pane under it and selects a message row, a template
//! row, or the message that produced the prompt byte clicked; the wheel moves the list
//! under the pointer or scrolls the prompt.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Direction, Pane};
use chatplate::tui::action::{MouseInput, MouseKind};
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
    // The prompt pane's top border: the pane, but no byte.
    app.update(at(MouseKind::Click, 60, 1));
    assert_eq!(app.screen().focus, Pane::Prompt);
    assert_eq!(
        app.messages().selected,
        2,
        "a click beside the prompt text selects nothing"
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

/// The screen cell where `needle` is drawn, searching the rows from the right (the
/// prompt pane is the rightmost), as (column, row).
fn cell_of(screen: &str, needle: &str) -> (u16, u16) {
    for (row, line) in screen.lines().enumerate() {
        // `TestBackend` quotes each row.
        let line = line.trim_matches('"');
        if let Some(at) = line.rfind(needle) {
            let column = line[..at].chars().count();
            return (column as u16, row as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{screen}");
}

#[test]
fn a_click_on_a_prompt_byte_selects_the_message_that_produced_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let screen = tui_support::screen(&mut app, 120, 40);
    app.update(Action::Resize(120, 40));
    let top = app.prompt().top;
    let (column, row) = cell_of(&screen, "Paris?<|im_end|>");
    app.update(at(MouseKind::Click, column + 2, row));
    assert_eq!(app.messages().selected, 1, "the user message");
    assert_eq!(
        app.screen().focus,
        Pane::Messages,
        "shown in the Messages pane"
    );
    assert!(
        app.status().is_some_and(|s| s.text.contains("produced by")),
        "{:?}",
        app.status()
    );
    let (column, row) = cell_of(&screen, "\"sky\": \"cloudy\"}");
    app.update(at(MouseKind::Click, column, row));
    assert_eq!(app.messages().selected, 3, "the tool result");
    // The view stays where the click was, not re-centred on the message.
    let after = tui_support::screen(&mut app, 120, 40);
    assert_eq!(cell_of(&after, "\"sky\": \"cloudy\"}"), (column, row));
    assert!(top.is_none() || app.prompt().top == top);
    insta::assert_snapshot!("mouse_prompt_click_120x40", after);
}

#[test]
fn a_click_in_the_templates_list_selects_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let screen = tui_support::screen(&mut app, 120, 40);
    app.update(Action::Resize(120, 40));
    let (column, row) = cell_of(&screen, "gemma-3-tools");
    app.update(at(MouseKind::Click, column, row));
    assert_eq!(app.screen().focus, Pane::Templates);
    let selected =
        |app: &chatplate::tui::app::App| app.templates().selected().unwrap().name.clone();
    assert_eq!(selected(&app), "gemma-3-tools");
    let (column, row) = cell_of(&screen, "chatml-with-headers-tools");
    app.update(at(MouseKind::Click, column, row));
    assert_eq!(selected(&app), "chatml-with-headers-tools");
    let (column, row) = cell_of(&screen, "firefunction-v2");
    app.update(at(MouseKind::Click, column, row));
    assert_eq!(selected(&app), "firefunction-v2");
    // The session keeps its template until Enter (the click previews).
    assert_eq!(app.workspace().template.name, "qwen2.5-reasoning-tools");
    insta::assert_snapshot!(
        "mouse_template_click_120x40",
        tui_support::screen(&mut app, 120, 40)
    );
}
