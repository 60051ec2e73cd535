//! Undoing back to what the file holds leaves nothing unsaved; redoing marks it again.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::driver;
use crossterm::event::KeyCode;
use tui_support::{app_on_file, ctrl, key, saved_example, screen};

#[test]
fn undo_back_to_the_saved_session_is_clean_and_redo_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut app = app_on_file(&file, dir.path());
    app.update(Action::Focus(Pane::Messages));
    assert!(!app.workspace().dirty);
    app.handle_key(key(KeyCode::Char('d')));
    app.handle_key(key(KeyCode::Char('d')));
    assert!(app.workspace().dirty);
    app.handle_key(key(KeyCode::Char('u')));
    assert!(app.workspace().dirty, "one of two deletions undone");
    app.handle_key(key(KeyCode::Char('u')));
    assert!(!app.workspace().dirty, "back to the file's session");
    assert!(
        screen(&mut app, 80, 24).contains(" w.json ·"),
        "no unsaved mark"
    );
    app.handle_key(key(KeyCode::Char('U')));
    assert!(app.workspace().dirty, "redo changes it again");
    // After a save, the saved session is the clean one.
    driver::press(&mut app, ctrl('s'));
    assert!(!app.workspace().dirty);
    app.handle_key(key(KeyCode::Char('U')));
    app.handle_key(key(KeyCode::Char('u')));
    assert!(!app.workspace().dirty, "back to what was saved");
    app.handle_key(key(KeyCode::Char('u')));
    assert!(app.workspace().dirty, "before the save is unsaved again");
}
