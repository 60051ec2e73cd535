//! The help (`?`) filtered as you type, the focused pane's keys first; Enter on a row
//! runs its command; Esc clears the filter, then closes.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::dialogs::Overlay;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen, type_text};

fn help_filter(app: &chatplate::tui::app::App) -> Option<String> {
    match app.overlay() {
        Some(Overlay::Help { filter, .. }) => Some(filter.clone()),
        _ => None,
    }
}

#[test]
fn typing_filters_the_help_and_the_focused_panes_keys_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('?')));
    type_text(&mut app, "undo");
    assert_snapshot!("help_filtered_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(
        help_filter(&app).as_deref(),
        Some(""),
        "Esc clears the filter"
    );
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_none(), "then closes");
    app.handle_key(key(KeyCode::Char('?')));
    app.handle_key(key(KeyCode::Char('?')));
    assert!(
        app.overlay().is_none(),
        "? on an empty filter closes, as it opened"
    );
}

#[test]
fn enter_runs_the_selected_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('?')));
    type_text(&mut app, "zoom"); // the footer hint matches too
    app.handle_key(key(KeyCode::Enter));
    assert!(app.overlay().is_none());
    assert!(app.screen().zoom, "z: this pane alone");
    app.update(Action::Zoom);
    // Another pane's key: that pane is focused, then the key runs.
    app.handle_key(key(KeyCode::Char('?')));
    type_text(&mut app, "whitespace");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.screen().focus, Pane::Prompt);
    assert!(app.prompt().whitespace);
}

#[test]
fn rows_that_only_explain_or_only_work_in_a_dialog_do_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('?')));
    type_text(&mut app, "being probed");
    app.handle_key(key(KeyCode::Enter));
    let status = screen(&mut app, 80, 24);
    assert!(status.contains("nothing to run on this row"), "{status}");
    app.handle_key(key(KeyCode::Char('?')));
    type_text(&mut app, "overwrite it");
    app.handle_key(key(KeyCode::Enter));
    let status = screen(&mut app, 80, 24);
    assert!(
        status.contains("works in Session changed on disk only"),
        "{status}"
    );
}
