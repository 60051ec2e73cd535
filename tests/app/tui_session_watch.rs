//! A session changed on disk by another program is noticed when it happens (the file
//! watch's timer), not at the next save; the app's own saves are not taken for changes.

#![cfg(feature = "tui")]

use std::time::{Duration, Instant};

use crate::tui_support::{self, app_on_file, saved_example};
use chatplate::tui::action::{Action, DialogAction, MessageAction};
use chatplate::tui::app::driver::{self, apply};
use chatplate::tui::app::App;
use chatplate::tui::dialogs::{Confirm, Overlay};
use chatplate_core::session::Session;

/// The watch's next look (its interval is shorter than this).
fn look(app: &mut App, after: u64) {
    driver::tick(app, Instant::now() + Duration::from_secs(after));
}

#[test]
fn another_programs_change_is_asked_about_at_once_and_reload_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut app = app_on_file(&file, dir.path());
    look(&mut app, 1);
    assert_eq!(app.overlay(), None, "nothing changed");
    let mut theirs = Session::load(&file).unwrap();
    theirs.messages[0].0["content"] = "theirs, and longer".into();
    theirs.save(&file).unwrap();
    look(&mut app, 2);
    assert_eq!(app.overlay(), Some(&Overlay::Confirm(Confirm::Changed)));
    apply(&mut app, Action::Dialog(DialogAction::Reload));
    assert_eq!(
        app.workspace().session.messages[0].0["content"],
        "theirs, and longer"
    );
    look(&mut app, 3);
    assert_eq!(app.overlay(), None, "asked once per change");
}

#[test]
fn the_apps_own_save_is_not_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut app = app_on_file(&file, dir.path());
    look(&mut app, 1);
    app.update(Action::Message(MessageAction::CycleRole));
    apply(&mut app, Action::Save);
    assert!(!app.workspace().dirty);
    look(&mut app, 2);
    assert_eq!(app.overlay(), None);
}

#[test]
fn the_restore_question_shows_what_differs_from_the_saved_file() {
    use chatplate::tui::action::Pane;
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut first = app_on_file(&file, dir.path());
    first.update(Action::Focus(Pane::Messages));
    first.update(Action::Message(MessageAction::CycleRole));
    driver::emergency_save(&mut first).unwrap();
    let mut second = app_on_file(&file, dir.path());
    let Some(Overlay::Confirm(Confirm::Restore(found))) = second.overlay() else {
        panic!("no restore question")
    };
    // Only the edit: a recovery file does not add the template's fingerprint.
    assert_eq!(
        found.diff,
        ["- \"role\": \"system\",", "+ \"role\": \"user\","]
    );
    // Not a snapshot: the dialog names the temporary folder and the time of the save.
    let shown = tui_support::screen(&mut second, 80, 24);
    for line in [
        "│What differs from the saved file:  ",
        "│- \"role\": \"system\",  ",
        "│+ \"role\": \"user\",  ",
        "│y restore · n discard · Esc decide later (kept)",
    ] {
        assert!(shown.contains(line), "{line}:\n{shown}");
    }
}
