//! Searches that run as you type: the message find (`/` in Messages), the prompt search
//! (`/` in Prompt) and the session picker (`Ctrl+O`), each with its count in the title;
//! Enter keeps the place found, `n` / `N` go on from it, Esc goes back.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::driver;
use chatplate::tui::dialogs::Overlay;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{ctrl, example_app, key, screen, type_text};

/// The number of matches the open input's title counts.
fn matches(app: &chatplate::tui::app::App) -> Option<usize> {
    match app.overlay() {
        Some(Overlay::Input(input)) => input.matches,
        other => panic!("no input open: {other:?}"),
    }
}

#[test]
fn the_message_find_selects_as_you_type_and_esc_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    assert_eq!(app.messages().selected, 0);
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "paris");
    // Selected at the first keystroke that matched, not after Enter.
    assert_eq!(
        app.messages().selected,
        1,
        "the user message asks about Paris"
    );
    assert_eq!(
        matches(&app),
        Some(1),
        "the question (arguments are not searched)"
    );
    assert_snapshot!("find_as_typed_80x24", screen(&mut app, 80, 24));
    type_text(&mut app, "x");
    assert_eq!(matches(&app), Some(0));
    assert_eq!(
        app.messages().selected,
        0,
        "no match: back where the find started"
    );
    app.handle_key(key(KeyCode::Backspace));
    assert_eq!(app.messages().selected, 1);
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(
        app.messages().selected,
        0,
        "Esc returns to where the find started"
    );
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "weather");
    app.handle_key(key(KeyCode::Enter));
    assert!(app.overlay().is_none());
    let found = app.messages().selected;
    assert_eq!(found, 1, "Enter keeps the message found");
    app.handle_key(key(KeyCode::Char('n')));
    assert_eq!(
        app.messages().selected,
        2,
        "n goes on from it (the get_weather call)"
    );
    app.handle_key(key(KeyCode::Char('N')));
    assert_eq!(app.messages().selected, found);
}

#[test]
fn the_prompt_search_scrolls_as_you_type_and_esc_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "im_start");
    let count = app.prompt().search.as_ref().map(|s| s.matches.len());
    assert_eq!(count, Some(5), "one per turn, before Enter");
    assert_eq!(matches(&app), count);
    assert_snapshot!("search_as_typed_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Esc));
    assert!(app.prompt().search.is_none(), "Esc clears the search");
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "tool_call>");
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Char('n')));
    assert_eq!(app.prompt().search.as_ref().map(|s| s.current), Some(1));
}

#[test]
fn the_session_picker_filters_as_you_type() {
    let dir = tempfile::tempdir().unwrap();
    let session = std::fs::read_to_string("sessions/example.json").unwrap();
    for name in ["qwen-tools.json", "llama-chat.json", "qwen-plain.json"] {
        std::fs::write(dir.path().join(name), &session).unwrap();
    }
    let mut app = example_app(dir.path());
    driver::press(&mut app, ctrl('o'));
    type_text(&mut app, "qwen");
    let Some(Overlay::Picker(picker)) = app.overlay() else {
        panic!("no picker")
    };
    assert_eq!(picker.shown().len(), 2);
    assert_snapshot!("picker_filtered_80x24", screen(&mut app, 80, 24));
    type_text(&mut app, " pl");
    driver::press(&mut app, key(KeyCode::Enter));
    app.settle();
    let path = app.workspace().path.clone().expect("a session opened");
    assert_eq!(path.file_name().unwrap(), "qwen-plain.json");
}
