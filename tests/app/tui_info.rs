//! The templates pane's info view: `i` shows the selected template's
//! capabilities, probed on the worker, "computing…" until they arrive, cached per
//! template; as update tests and snapshots at 80x24 and 120x40.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::App;
use chatplate::tui::panes::templates::info::InfoState;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen};

/// The value of `key` in the selected template's answers, once they arrived.
fn answer(app: &App, key: &str) -> Option<serde_json::Value> {
    match app.templates().selected_info()? {
        InfoState::Done(info) => (info.entries.iter())
            .find(|e| e.key == key)
            .map(|e| e.value.clone()),
        _ => None,
    }
}

fn info_app(dir: &std::path::Path) -> App {
    let mut app = example_app(dir);
    app.update(Action::Focus(Pane::Templates));
    app
}

#[test]
fn i_probes_the_selected_template_on_the_worker_and_caches_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = info_app(dir.path());
    assert!(
        app.templates().selected_info().is_none(),
        "nothing asked before `i`"
    );
    app.handle_key(key(KeyCode::Char('i')));
    assert!(app.templates().info.open);
    // update never waits: the answer is on its way.
    assert!(matches!(
        app.templates().selected_info(),
        Some(InfoState::Computing)
    ));
    assert!(app.templates().info_pending());
    app.settle();
    assert_eq!(answer(&app, "supports_system_role"), Some(true.into()));
    assert_eq!(answer(&app, "supports_tools"), Some(true.into()));
    assert_eq!(answer(&app, "supports_tool_calls"), Some(true.into()));
    // Another template is probed when selected; coming back is served from the cache.
    let first = app.templates().selected().unwrap().name.clone();
    app.handle_key(key(KeyCode::Char('k')));
    assert_ne!(app.templates().selected().unwrap().name, first);
    assert!(app.templates().info_pending());
    app.settle();
    assert!(matches!(
        app.templates().selected_info(),
        Some(InfoState::Done(_))
    ));
    app.handle_key(key(KeyCode::Char('j')));
    assert_eq!(app.templates().selected().unwrap().name, first);
    assert!(!app.templates().info_pending(), "cached, not asked again");
    assert!(matches!(
        app.templates().selected_info(),
        Some(InfoState::Done(_))
    ));
    // `i` again shows the source.
    app.handle_key(key(KeyCode::Char('i')));
    assert!(!app.templates().info.open);
}

#[test]
fn a_replaced_request_is_asked_again_when_its_template_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = info_app(dir.path());
    app.handle_key(key(KeyCode::Char('i')));
    // Move on before the answer arrives, then back.
    app.handle_key(key(KeyCode::Char('k')));
    app.handle_key(key(KeyCode::Char('j')));
    app.settle();
    assert!(matches!(
        app.templates().selected_info(),
        Some(InfoState::Done(_))
    ));
}

#[test]
fn a_template_that_does_not_compile_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = info_app(dir.path());
    let broken = chatplate_core::catalog::TemplateSource::new(
        "broken",
        "{% for m in messages %}",
        chatplate_core::catalog::Origin::Bundled,
    );
    app.add_template(&broken);
    app.handle_key(key(KeyCode::Char('i')));
    app.settle();
    assert!(matches!(
        app.templates().selected_info(),
        Some(InfoState::Failed(_))
    ));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("capabilities"), "{text}");
}

#[test]
fn info_view_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = info_app(dir.path());
    app.handle_key(key(KeyCode::Char('i')));
    assert_snapshot!(screen(&mut app, 80, 24));
}

#[test]
fn info_view_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = info_app(dir.path());
    app.update(Action::Resize(120, 40));
    app.handle_key(key(KeyCode::Char('i')));
    assert_snapshot!(screen(&mut app, 120, 40));
}
