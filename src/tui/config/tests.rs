//! Reading the config file: names, keys, colours, and what a bad file says.

use std::path::Path;

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::style::Color;

use super::{from_text, parse_chord};
use crate::tui::action::Action;
use crate::tui::action::MessageAction;
use crate::tui::keymap::Chord;
use crate::tui::keymap::Scope;

fn load(text: &str) -> super::Settings {
    from_text(text, Path::new("config.json"))
}

fn keys_of(settings: &super::Settings, scope: Scope, action: &Action) -> Vec<Chord> {
    let row = settings
        .bindings
        .iter()
        .find(|b| b.scope == scope && &b.action == action)
        .expect("a row");
    row.keys.to_vec()
}

#[test]
fn keys_are_written_as_the_footer_shows_them() {
    let ctrl = |c| Chord {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    };
    assert_eq!(parse_chord("ctrl+s"), Some(ctrl('s')));
    assert_eq!(parse_chord("Ctrl+S"), Some(ctrl('s')));
    assert_eq!(
        parse_chord("G"),
        Some(Chord {
            code: KeyCode::Char('G'),
            mods: KeyModifiers::NONE
        })
    );
    assert_eq!(parse_chord("f2").map(|c| c.code), Some(KeyCode::F(2)));
    assert_eq!(
        parse_chord("space").map(|c| c.code),
        Some(KeyCode::Char(' '))
    );
    assert_eq!(parse_chord("+").map(|c| c.code), Some(KeyCode::Char('+')));
    assert_eq!(
        parse_chord("shift+up").map(|c| c.mods),
        Some(KeyModifiers::SHIFT)
    );
    for bad in ["", "ctrl+", "hyper+x", "f99", "nokey"] {
        assert_eq!(parse_chord(bad), None, "{bad}");
    }
}

#[test]
fn an_override_replaces_the_row_s_keys_and_takes_them_from_its_scope() {
    let settings = load(r#"{"keys": {"save": "ctrl+w", "messages.edit": ["x", "d"]}}"#);
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Save),
        vec![parse_chord("ctrl+w").unwrap()]
    );
    let edit = Action::Message(MessageAction::EditContent);
    assert_eq!(
        keys_of(&settings, Scope::Messages, &edit),
        vec![parse_chord("x").unwrap(), parse_chord("d").unwrap()]
    );
    // `d` was Delete's first key in that scope; Delete keeps only Del.
    let delete = Action::Message(MessageAction::Delete);
    assert_eq!(
        keys_of(&settings, Scope::Messages, &delete),
        vec![parse_chord("delete").unwrap()]
    );
}

#[test]
fn colours_change_the_palette() {
    let settings = load(r#"{"colors": {"user": "light-blue", "error": "Magenta"}}"#);
    assert!(settings.problems.is_empty(), "{:?}", settings.problems);
    assert_eq!(settings.palette.user, Color::LightBlue);
    assert_eq!(settings.palette.error, Color::Magenta);
    assert_eq!(settings.palette.assistant, Color::Green);
}

#[test]
fn a_syntax_error_names_line_and_column_and_keeps_the_defaults() {
    let settings = load("{\n  \"keys\": {\"save\": \"ctrl+w\",}\n}");
    assert_eq!(
        settings.problems,
        vec!["config.json:2:29: trailing comma (using the defaults)".to_string()]
    );
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Save),
        vec![parse_chord("ctrl+s").unwrap()]
    );
}

#[test]
fn unusable_entries_are_reported_and_the_rest_is_used() {
    let settings = load(
        r#"{"keys": {"nosuch": "x", "edit": "x", "save": "hyper+s", "quit": "ctrl+x"},
            "colors": {"user": "pink", "nosuch": "red"}}"#,
    );
    let problems = settings.problems.join("\n");
    assert!(
        problems.contains("config.json:1:21: no key named \"nosuch\""),
        "{problems}"
    );
    assert!(
        problems.contains("\"edit\" is in several scopes: say which (messages.edit, fields.edit)"),
        "{problems}"
    );
    assert!(
        problems.contains("keys.save: \"hyper+s\" is not a key"),
        "{problems}"
    );
    assert!(
        problems.contains("colors.user: \"pink\" is not one of the 16 colours"),
        "{problems}"
    );
    assert!(
        problems.contains("config.json:2:50: colors: no colour named \"nosuch\""),
        "{problems}"
    );
    assert_eq!(settings.problems.len(), 5, "{problems}");
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Quit),
        vec![parse_chord("ctrl+x").unwrap()]
    );
}

#[test]
fn the_lint_section_is_checked_not_refused() {
    assert!(
        load(r#"{"lint": {"allow": ["clock"], "fail_on": "warning"}}"#)
            .problems
            .is_empty()
    );
    let bad = load(r#"{"lint": {"deny": ["nope"]}}"#);
    assert_eq!(bad.problems.len(), 1);
    assert!(
        bad.problems[0].contains("lint.deny: no rule \"nope\""),
        "{:?}",
        bad.problems
    );
}

#[test]
fn unknown_sections_are_reported_and_the_rest_is_used() {
    let settings = load(r#"{"colours": {}, "keys": {"quit": "ctrl+x"}}"#);
    assert_eq!(
        settings.problems,
        vec![
            "config.json:1:13: unknown section \"colours\" (expected \"keys\", \"colors\", \"mouse\", \"lint\", \"template_roots\", \"hub_token_for_fixtures\" or \"engines\"; ignored)"
                .to_string()
        ]
    );
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Quit),
        vec![parse_chord("ctrl+x").unwrap()]
    );
}

#[test]
fn the_hub_token_switch_is_a_section_the_app_only_checks() {
    assert!(load(r#"{"hub_token_for_fixtures": true}"#)
        .problems
        .is_empty());
    let settings = load(r#"{"hub_token_for_fixtures": "yes"}"#);
    assert_eq!(
        settings.problems,
        vec!["config.json:1:28: hub_token_for_fixtures: expected true or false (off)".to_string()]
    );
}

/// One wrongly typed value used to discard the whole file: now only that entry is
/// dropped (with its name in the problem) and every other override applies.
#[test]
fn a_wrongly_typed_value_drops_only_its_entry() {
    let settings = load(
        r#"{"keys": {"save": 5, "quit": "ctrl+x"},
            "colors": {"user": ["red"], "assistant": "yellow"}}"#,
    );
    assert_eq!(
        settings.problems,
        vec![
            "config.json:1:19: keys.\"save\": expected a key or a list of keys (default kept)"
                .to_string(),
            "config.json:2:32: colors.\"user\": expected a colour name (default kept)".to_string(),
        ]
    );
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Quit),
        vec![parse_chord("ctrl+x").unwrap()]
    );
    assert_eq!(
        keys_of(&settings, Scope::Everywhere, &Action::Save),
        vec![parse_chord("ctrl+s").unwrap()]
    );
    assert_eq!(settings.palette.assistant, Color::Yellow);
}

/// A FIFO where the config file should be is refused at once: the app starts with the
/// defaults and says why, instead of waiting for a writer that never comes.
#[cfg(unix)]
#[test]
fn a_fifo_config_file_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::env::set_var(super::CONFIG_ENV, &fifo);
    let settings = super::load();
    std::env::remove_var(super::CONFIG_ENV);
    assert_eq!(settings.problems.len(), 1, "{:?}", settings.problems);
    assert!(
        settings.problems[0].contains("config.json"),
        "{:?}",
        settings.problems
    );
}
