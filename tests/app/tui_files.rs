//! The app and its files, state in and state out: recovery files kept and keyed, a
//! session changed on disk, a missing template, a failed save, input normalisation.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::Path;
use std::time::{Duration, Instant};

use chatplate::tui::action::{Action, DialogAction, MessageAction, Step};
use chatplate::tui::app::driver::{self, apply, press};
use chatplate::tui::app::App;
use chatplate::tui::dialogs::{Confirm, Overlay};
use chatplate::tui::files::disk::recovery_path;
use chatplate::tui::files::startup::open;
use chatplate::tui::TuiOptions;
use chatplate_core::session::{Session, TemplateRef};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_support::{app_on_file, example_app, key, saved_example, type_text};

/// Long enough after the last change for the autosave to be due.
fn later() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[test]
fn a_kept_recovery_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut first = app_on_file(&file, dir.path());
    first.update(Action::Message(MessageAction::CycleRole));
    driver::emergency_save(&mut first).unwrap();
    let kept = dir.path().join("w.recovery.json");
    let kept_bytes = std::fs::read(&kept).unwrap();

    let mut second = app_on_file(&file, dir.path());
    assert!(matches!(
        second.overlay(),
        Some(Overlay::Confirm(Confirm::Restore(_)))
    ));
    second.update(Action::Dialog(DialogAction::Cancel));
    second.update(Action::Message(MessageAction::Duplicate));
    driver::tick(&mut second, later());
    assert_eq!(std::fs::read(&kept).unwrap(), kept_bytes);
    let own = dir.path().join("w~2.recovery.json");
    assert_eq!(Session::load(&own).unwrap().messages.len(), 5);

    // The next run offers the newest and counts the other.
    let third = app_on_file(&file, dir.path());
    let Some(Overlay::Confirm(Confirm::Restore(found))) = third.overlay() else {
        panic!("no restore question")
    };
    assert_eq!((found.path.clone(), found.others), (own, 1));
    assert_eq!(
        found.contents,
        Ok((5, "template qwen2.5-reasoning-tools".into()))
    );
}

#[test]
fn discarding_offers_the_next_recovery_file_and_restoring_adopts_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    for (name, role) in [("w.recovery.json", "user"), ("w~2.recovery.json", "tool")] {
        let mut session = Session::load(&file).unwrap();
        session.messages[0].0.insert("role".into(), role.into());
        session.save(&dir.path().join(name)).unwrap();
    }
    let mut app = app_on_file(&file, dir.path());
    let offered = |app: &App| match app.overlay() {
        Some(Overlay::Confirm(Confirm::Restore(found))) => Some(found.path.clone()),
        _ => None,
    };
    let first = offered(&app).expect("a question");
    apply(&mut app, Action::Dialog(DialogAction::Discard));
    assert!(!first.exists());
    let second = offered(&app).expect("the other one next");
    apply(&mut app, Action::Dialog(DialogAction::Accept));
    assert!(app.workspace().dirty);
    assert_eq!(
        recovery_path(app.workspace()),
        second,
        "restored file is this run's"
    );
    apply(&mut app, Action::Save);
    assert!(!second.exists(), "saving removes it");
}

#[test]
fn untitled_recovery_is_keyed_to_the_template_opened() {
    let dir = tempfile::tempdir().unwrap();
    let templates: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            let path = dir.path().join(format!("{name}.jinja"));
            std::fs::write(&path, format!("{name}{{{{ messages|length }}}}")).unwrap();
            path
        })
        .collect();
    let workspace = |path: &Path| {
        let opened = open(&TuiOptions {
            file: Some(path.to_path_buf()),
            ..TuiOptions::default()
        })
        .unwrap();
        let mut workspace = opened.workspace;
        workspace.sessions_dir = dir.path().join("sessions");
        workspace
    };
    let (a, b) = (workspace(&templates[0]), workspace(&templates[1]));
    assert_ne!(recovery_path(&a), recovery_path(&b));
    let name = recovery_path(&a)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with(".untitled-a-"), "{name}");
}

#[test]
fn a_session_changed_on_disk_asks_and_reload_takes_the_disk_version() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut app = app_on_file(&file, dir.path());
    app.update(Action::Message(MessageAction::CycleRole));
    let mut theirs = Session::load(&file).unwrap();
    theirs.messages[0].0["content"] = "theirs".into();
    theirs.save(&file).unwrap();
    apply(&mut app, Action::Save);
    assert_eq!(app.overlay(), Some(&Overlay::Confirm(Confirm::Changed)));
    apply(&mut app, Action::Dialog(DialogAction::Reload));
    assert!(!app.workspace().dirty);
    assert_eq!(app.workspace().session.messages[0].0["content"], "theirs");
    // Saving what was just read asks nothing.
    apply(&mut app, Action::Save);
    assert_eq!(app.overlay(), None);
    // Save as, after another change on disk, writes elsewhere and leaves theirs alone.
    app.update(Action::Message(MessageAction::CycleRole));
    theirs.messages[0].0["content"] = "theirs again".into();
    theirs.save(&file).unwrap();
    apply(&mut app, Action::Save);
    app.update(Action::Dialog(DialogAction::SaveAs));
    assert!(matches!(app.overlay(), Some(Overlay::Input(_))));
    for _ in 0..40 {
        app.update(Action::Dialog(DialogAction::Backspace));
    }
    let copy = dir.path().join("mine.json");
    type_text(&mut app, &copy.display().to_string());
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(Session::load(&copy).unwrap().messages[0].role(), "user");
    assert_eq!(
        Session::load(&file).unwrap().messages[0].0["content"],
        "theirs again"
    );
}

#[test]
fn a_missing_template_renders_nothing_and_is_picked_up_when_it_appears() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut session = Session::load(&file).unwrap();
    session.template = TemplateRef::Path("later.jinja".into());
    session.save(&file).unwrap();
    let mut app = app_on_file(&file, dir.path());
    assert!(app.workspace().missing_template.is_some());
    let err = app
        .preview()
        .error()
        .expect("an error, not the default template");
    assert!(err.message.contains("later.jinja"), "{}", err.message);
    std::fs::write(
        dir.path().join("later.jinja"),
        "found {{ messages|length }}",
    )
    .unwrap();
    driver::tick(&mut app, later());
    app.settle();
    assert_eq!(app.preview().text(), "found 4");
    assert!(app.workspace().missing_template.is_none());
}

#[test]
fn a_failed_autosave_does_not_hide_a_failed_save() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the sessions folder should be: both the save and the recovery file
    // fail.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "").unwrap();
    let mut app = example_app(&blocked);
    app.update(Action::Message(MessageAction::CycleRole));
    let save = app.save(Some(blocked.join("s.json")));
    driver::follow(&mut app, save);
    let shown = app.status().cloned().expect("a status");
    assert!(
        shown.error && shown.text.starts_with("not saved"),
        "{shown:?}"
    );
    driver::tick(&mut app, later());
    assert_eq!(app.status(), Some(&shown), "the save failure stays on show");
}

#[test]
fn pasted_line_breaks_become_newlines() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Message(MessageAction::Select(Step::First)));
    app.update(Action::Message(MessageAction::EditContent));
    app.update(Action::Paste("\r\na\rb\r\nc".into()));
    let content = app.workspace().session.messages[0].0["content"]
        .as_str()
        .unwrap();
    assert!(content.ends_with("\na\nb\nc"), "{content:?}");
}

#[test]
fn escape_and_a_command_in_one_read_are_two_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Message(MessageAction::EditContent));
    assert!(app.editor().is_some());
    let alt_ctrl_s = KeyModifiers::ALT | KeyModifiers::CONTROL;
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), alt_ctrl_s));
    assert!(app.editor().is_none(), "Esc closed the editor");
    assert!(
        matches!(app.overlay(), Some(Overlay::Input(_))),
        "Ctrl+S asks for a name"
    );
    // Alt+letter in the editor stays the editor's (word movement), not Esc + letter.
    app.update(Action::Dialog(DialogAction::Cancel));
    app.update(Action::Message(MessageAction::EditContent));
    app.handle_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::ALT));
    assert!(app.editor().is_some());
}

#[test]
fn an_unchanged_external_edit_is_not_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::ExternalEdit);
    let text = app.editor().unwrap().text();
    app.update(Action::ExternalEdited(format!("{text}\n")));
    assert!(!app.workspace().dirty);
    app.update(Action::ExternalEdited(format!("{text}!")));
    assert!(app.workspace().dirty);
}

#[test]
fn the_restore_question_keeps_its_keys_visible_with_a_long_template_path() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("models--some-organisation--a-fairly-long-model-name-v2/snapshots/0123456789abcdef0123456789abcdef01234567");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("chat_template.jinja"), "{{ messages|length }}").unwrap();
    let mut session = Session::new(TemplateRef::Path(
        "models--some-organisation--a-fairly-long-model-name-v2/snapshots/0123456789abcdef0123456789abcdef01234567/chat_template.jinja".into(),
    ));
    session.messages.truncate(1);
    let file = dir.path().join("w.json");
    session.save(&file).unwrap();
    session.messages.clear();
    session.save(&dir.path().join("w.recovery.json")).unwrap();
    let mut app = app_on_file(&file, dir.path());
    for (width, height) in [(80, 24), (120, 40)] {
        let screen = tui_support::screen(&mut app, width, height);
        assert!(
            screen.contains("y restore · n discard · Esc decide later"),
            "{width}x{height}:\n{screen}"
        );
    }
}

#[test]
fn a_missing_template_gives_no_warnings_on_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut session = Session::load(&file).unwrap();
    session.template = TemplateRef::Path("gone.jinja".into());
    session.save(&file).unwrap();
    let mut app = app_on_file(&file, dir.path());
    app.settle();
    let system = (app.workspace().session.messages.iter())
        .position(|m| m.role() == "system")
        .expect("the example has a system message");
    // The placeholder (an empty template) shows no system message; that says nothing
    // about gone.jinja.
    assert!(app.needs(system).is_empty(), "{:?}", app.needs(system));
}

/// The event loop writes the recovery file on another thread (`driver::tick_aside`): one
/// write at a time, and its outcome names the file, so a change made while it was under
/// way goes to the same file later instead of a second one.
#[test]
fn the_autosave_written_aside_keeps_one_recovery_file() {
    use chatplate::tui::app::autosave::Autosave;
    let dir = tempfile::tempdir().unwrap();
    let file = saved_example(dir.path());
    let mut app = app_on_file(&file, dir.path());
    let mut autosave = Autosave::new(|| {});
    app.update(Action::Message(MessageAction::CycleRole));
    driver::tick_aside(&mut app, later(), &mut autosave);
    app.update(Action::Message(MessageAction::Duplicate));
    driver::tick_aside(&mut app, later(), &mut autosave);
    autosave.finish(&mut app);
    driver::tick_aside(&mut app, later() + Duration::from_secs(10), &mut autosave);
    autosave.finish(&mut app);
    let own = dir.path().join("w.recovery.json");
    assert_eq!(Session::load(&own).unwrap().messages.len(), 5);
    let recovery_files = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().contains("recovery")
        })
        .count();
    assert_eq!(recovery_files, 1);
}
