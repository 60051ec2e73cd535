//! The config file's key overrides as the app uses them: the new key triggers the
//! action, the footer shows it, and the old key no longer does it.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::Path;

use chatplate::tui::config;
use chatplate::tui::context::Effect;
use chatplate::tui::keymap;
use tui_support::{ctrl, example_app, screen};

#[test]
fn an_overridden_key_triggers_its_action() {
    let dir = tempfile::tempdir().unwrap();
    let settings = config::from_text(r#"{"keys": {"quit": "ctrl+x"}}"#, Path::new("config.json"));
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    keymap::install(settings.bindings);
    let mut app = example_app(dir.path());
    let shown = screen(&mut app, 200, 40);
    assert!(shown.contains("Ctrl+X quit"), "{shown}");
    assert!(
        !matches!(app.handle_key(ctrl('q')), Some(Effect::Quit)),
        "Ctrl+Q no longer quits"
    );
    assert!(matches!(app.handle_key(ctrl('x')), Some(Effect::Quit)));
}
