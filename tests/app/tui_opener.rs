//! The opener (`Ctrl+P`) as a fuzzy finder over the files below the working directory
//! (listed as file work when it opens), the templates folders, cached models and this
//! run's earlier opens: matches as you type, arrows pick, Tab completes, Enter opens.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::context::Effect;
use chatplate::tui::dialogs::Overlay;
use chatplate::tui::files::disk::{perform, Done, Job};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{ctrl, example_app, key, screen, type_text};

fn text(app: &chatplate::tui::app::App) -> String {
    match app.overlay() {
        Some(Overlay::Input(input)) => input.text.clone(),
        other => panic!("no input: {other:?}"),
    }
}

fn listed() -> Vec<String> {
    [
        "sessions/example.json",
        "sessions/gemma-3-tools.json",
        "models/gemma-2/",
        "t/qwen.jinja",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn the_opener_lists_files_then_matches_as_you_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let effect = app.handle_key(ctrl('p'));
    assert!(
        matches!(effect, Some(Effect::Disk(Job::ListOpenable(_)))),
        "{effect:?}"
    );
    app.update(Done::Openable(listed()));
    type_text(&mut app, "gem");
    assert_snapshot!("opener_80x24", screen(&mut app, 80, 24));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Enter));
    assert!(app.open_pending(), "the selected match is being opened");
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("sessions/gemma-3-tools.json"), "{shown}");
}

#[test]
fn tab_completes_the_path_and_an_exact_or_absolute_text_opens_as_typed() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(ctrl('p'));
    app.update(Done::Openable(listed()));
    type_text(&mut app, "se");
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(text(&app), "sessions/", "the common start");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(
        text(&app),
        "sessions/gemma-3-tools.json",
        "then the selected match"
    );
    let Some(Overlay::Input(input)) = app.overlay() else {
        panic!("closed")
    };
    assert_eq!(
        chatplate::tui::dialogs::opener::target(input),
        "sessions/gemma-3-tools.json"
    );
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(ctrl('p'));
    type_text(&mut app, "/nowhere/gem");
    let Some(Overlay::Input(input)) = app.overlay() else {
        panic!("closed")
    };
    assert_eq!(
        chatplate::tui::dialogs::opener::target(input),
        "/nowhere/gem"
    );
}

fn choices(app: &chatplate::tui::app::App) -> Vec<String> {
    match app.overlay() {
        Some(Overlay::Input(input)) => input.choices.clone(),
        other => panic!("no input: {other:?}"),
    }
}

#[test]
fn a_typed_folder_is_listed_as_file_work_and_tab_completes_in_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    std::fs::write(dir.path().join("m_chat.jinja"), "").unwrap();
    std::fs::write(dir.path().join("m_chat.json"), "{}").unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(ctrl('p'));
    let folder = format!("{}/", dir.path().display());
    type_text(&mut app, folder.trim_end_matches('/'));
    let effect = app.handle_key(key(KeyCode::Char('/')));
    let Some(Effect::Disk(job @ Job::ListFolder(_))) = effect else {
        panic!("the folder typed is listed as file work: {effect:?}")
    };
    app.update(perform(job).expect("a listing"));
    assert_eq!(
        choices(&app),
        ["m_chat.jinja", "m_chat.json", "models/"].map(|n| format!("{folder}{n}"))
    );
    type_text(&mut app, "m_");
    assert_eq!(
        choices(&app),
        ["m_chat.json", "m_chat.jinja"].map(|n| format!("{folder}{n}"))
    );
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(text(&app), format!("{folder}m_chat.j"), "the common start");
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(
        text(&app),
        format!("{folder}m_chat.json"),
        "then the selection"
    );
    let effect = app.handle_key(key(KeyCode::Char('x')));
    assert!(effect.is_none(), "the same folder is not listed again");
}
