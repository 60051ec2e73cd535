//! The capability badges of the Templates list explained: a legend in the help (`?`)
//! under the Templates pane's keys, and at the end of the info view (`i`).

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen};

#[test]
fn the_help_explains_the_badges_after_the_templates_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Templates));
    app.handle_key(key(KeyCode::Char('?')));
    app.handle_key(key(KeyCode::PageDown));
    assert_snapshot!("legend_help_80x24", screen(&mut app, 80, 24));
}

#[test]
fn the_info_view_ends_with_the_badge_legend() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Templates));
    app.handle_key(key(KeyCode::Char('i')));
    app.settle();
    for _ in 0..20 {
        app.handle_key(key(KeyCode::Char(']')));
    }
    assert_snapshot!("legend_info_80x24", screen(&mut app, 80, 24));
    app.update(Action::Resize(120, 40));
    assert_snapshot!("legend_info_120x40", screen(&mut app, 120, 40));
}
