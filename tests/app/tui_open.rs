//! New, save-as and open-anything in the running app: the open dialog takes a
//! model folder, a `.gguf`, a session, and reports bad input; a model's templates join
//! the picker with their origin, and `tool_use` follows the conversation's tools.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::PathBuf;

use chatplate::tui::action::{Action, DialogAction, MessageAction, Pane, Step};
use chatplate::tui::app::driver;
use chatplate::tui::app::App;
use chatplate::tui::dialogs::{Confirm, Overlay};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{ctrl, example_app, key, screen, type_text};

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
        .display()
        .to_string()
}

/// Opens `target` through the dialog and waits for the worker's answer.
fn open(app: &mut App, target: &str) {
    app.handle_key(ctrl('p'));
    assert!(app.overlay().is_some(), "the open dialog");
    type_text(app, target);
    app.handle_key(key(KeyCode::Enter));
    assert!(app.open_pending());
    driver::settle(app);
    assert!(!app.open_pending());
}

fn status(app: &App) -> String {
    app.status().map(|s| s.text.clone()).unwrap_or_default()
}

#[test]
fn a_model_folder_opens_without_a_restart_and_tools_choose_its_template() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    open(&mut app, &fixture("models/additional"));
    // The example conversation has tools: transformers would use tool_use.
    assert_eq!(app.workspace().template.name, "additional#tool_use");
    assert!(
        app.preview().text().contains("tool_use file"),
        "rendered with it"
    );
    let names: Vec<&str> = app
        .templates()
        .catalog
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert!(names.contains(&"additional#rag"), "{names:?}");
    // Without tools the default entry applies again.
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.update(Action::Message(MessageAction::EnterFields));
    app.update(Action::Message(MessageAction::RemoveField));
    app.edit_session(|session| session.tools = None);
    app.settle();
    assert_eq!(app.workspace().template.name, "additional#default");
}

#[test]
fn a_gguf_opens_and_a_broken_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    open(&mut app, &fixture("gguf/chat.gguf"));
    assert!(app.workspace().template.origin_label().starts_with("GGUF"));
    assert!(
        app.preview().error().is_none(),
        "{:?}",
        app.preview().error()
    );
    let before = app.workspace().template.clone();
    for bad in [
        "gguf/truncated.gguf",
        "gguf/bad-magic.gguf",
        "gguf/no-template.gguf",
    ] {
        open(&mut app, &fixture(bad));
        assert!(
            status(&app).starts_with("could not open"),
            "{bad}: {}",
            status(&app)
        );
        assert_eq!(app.workspace().template, before, "{bad}: template kept");
    }
}

#[test]
fn bad_targets_are_reported_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let before = app.workspace().template.clone();
    let empty = tempfile::tempdir().unwrap();
    for bad in [
        "/nonexistent/path/model".to_string(),
        empty.path().display().to_string(),
    ] {
        open(&mut app, &bad);
        assert!(
            status(&app).starts_with("could not open"),
            "{bad}: {}",
            status(&app)
        );
        assert_eq!(app.workspace().template, before);
    }
}

#[test]
fn new_session_and_save_as() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, "x");
    app.handle_key(key(KeyCode::Esc));
    // Unsaved changes are never dropped by Ctrl+N without asking: save, discard or stay.
    app.handle_key(ctrl('n'));
    assert!(matches!(
        app.overlay(),
        Some(Overlay::Confirm(Confirm::NewDiscard))
    ));
    assert_snapshot!("new_discard_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_none(), "Esc stays");
    assert_eq!(app.workspace().session.messages.len(), 4);
    app.handle_key(ctrl('a'));
    let path = dir.path().join("saved-as.json");
    // The dialog starts with the sessions folder: type the whole path instead.
    let Some(Overlay::Input(input)) = app.overlay() else {
        panic!("the save dialog")
    };
    for _ in 0..input.text.chars().count() {
        app.update(Action::Dialog(DialogAction::Backspace));
    }
    type_text(&mut app, &path.display().to_string());
    driver::press(&mut app, key(KeyCode::Enter));
    assert!(path.is_file(), "{}", status(&app));
    assert!(!app.workspace().dirty);
    driver::press(&mut app, ctrl('n'));
    assert!(app.workspace().session.messages.is_empty());
    assert!(app.workspace().path.is_none());
}

#[test]
fn new_session_over_unsaved_changes_discards_them_when_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, "x");
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(ctrl('n'));
    driver::press(&mut app, key(KeyCode::Char('d')));
    assert!(app.overlay().is_none());
    assert!(app.workspace().session.messages.is_empty());
    assert!(!app.workspace().dirty);
}

#[test]
fn a_session_file_opens_through_the_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let session = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions/gemma-3-tools.json");
    open(&mut app, &session.display().to_string());
    assert_eq!(app.workspace().template.name, "gemma-3-tools");
}

fn with_model(width: u16, height: u16) -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Resize(width, height));
    // A relative path keeps the snapshot free of the checkout's location.
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    open(&mut app, "tests/fixtures/models/additional");
    open(&mut app, "tests/fixtures/models/additional-no-default");
    open(&mut app, "tests/fixtures/models/additional");
    app.update(Action::Focus(Pane::Templates));
    (dir, app)
}

#[test]
fn snapshot_templates_with_origins_80x24() {
    let (_dir, mut app) = with_model(80, 24);
    assert_snapshot!("open_templates_80x24", screen(&mut app, 80, 24));
}

#[test]
fn snapshot_templates_with_origins_120x40() {
    let (_dir, mut app) = with_model(120, 40);
    assert_snapshot!("open_templates_120x40", screen(&mut app, 120, 40));
}

#[test]
fn snapshot_open_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(ctrl('p'));
    type_text(&mut app, "Qwen/Qwen3-8B");
    assert_snapshot!("open_dialog_80x24", screen(&mut app, 80, 24));
    app.update(Action::Resize(120, 40));
    assert_snapshot!("open_dialog_120x40", screen(&mut app, 120, 40));
}

/// The example with an unsaved edit, saved first as `w.json` in `dir`.
fn edited_saved_example(dir: &std::path::Path) -> App {
    let file = tui_support::saved_example(dir);
    let mut app = tui_support::app_on_file(&file, dir);
    app.update(Action::Focus(chatplate::tui::action::Pane::Messages));
    app.handle_key(key(KeyCode::Char('r')));
    assert!(app.workspace().dirty);
    app
}

#[test]
fn opening_over_unsaved_changes_offers_save_discard_or_stay() {
    let dir = tempfile::tempdir().unwrap();
    // Relative to the package (the tests' working folder), so the screen is the same
    // in any checkout.
    let other = PathBuf::from("sessions/gemma-3-tools.json");
    let mut app = edited_saved_example(dir.path());
    open(&mut app, &other.display().to_string());
    assert!(matches!(
        app.overlay(),
        Some(Overlay::Confirm(Confirm::OpenDiscard(_)))
    ));
    assert_snapshot!("open_unsaved_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Esc));
    assert!(app.workspace().dirty, "Esc stays with the changes");
    assert_ne!(app.workspace().template.name, "gemma-3-tools");
    // y: saved first, then opened.
    open(&mut app, &other.display().to_string());
    driver::press(&mut app, key(KeyCode::Char('y')));
    app.settle();
    assert_eq!(
        app.workspace().template.name,
        "gemma-3-tools",
        "{:?}",
        app.status()
    );
    let saved = chatplate_core::session::Session::load(&dir.path().join("w.json")).unwrap();
    assert_eq!(
        saved.messages[0].role(),
        "user",
        "the edit was saved before opening"
    );
}

#[test]
fn ctrl_n_over_unsaved_changes_saves_then_starts_new() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = edited_saved_example(dir.path());
    app.handle_key(ctrl('n'));
    driver::press(&mut app, key(KeyCode::Char('y')));
    app.settle();
    assert!(
        app.workspace().session.messages.is_empty(),
        "{:?}",
        app.status()
    );
    let saved = chatplate_core::session::Session::load(&dir.path().join("w.json")).unwrap();
    assert_eq!(saved.messages[0].role(), "user");
}
