//! A render error's excerpt in the Prompt pane: laid out for the pane (tabs expanded,
//! long rows wrapped by the excerpt), so the caret stays under the error's character
//! however wide the characters before it are.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate_core::session::{Message, Session, TemplateRef};
use tui_support::{app_for, screen};
use unicode_width::UnicodeWidthChar;

/// The character at display column `column` of `row` (a screen row, pane borders
/// included).
fn at_column(row: &str, column: usize) -> Option<char> {
    let mut used = 0;
    row.chars().find(|c| {
        let here = used;
        used += c.width().unwrap_or(0);
        here == column
    })
}

#[test]
fn a_wrapped_excerpt_row_keeps_its_caret_under_the_error() {
    let dir = tempfile::tempdir().unwrap();
    // A tab, 30 CJK characters (60 cells) and the error, on one long line.
    let template = format!("\t{{{{ \"{}\" }}}}{{{{ foo( }}}}", "漢".repeat(30));
    std::fs::write(dir.path().join("t.jinja"), &template).unwrap();
    let mut session = Session::new(TemplateRef::Path("t.jinja".into()));
    session.messages = vec![Message::new("user", "Hi")];
    let mut app = app_for(session, dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Zoom);
    for (width, height) in [(80, 24), (120, 40), (50, 30)] {
        let shown = screen(&mut app, width, height);
        let rows: Vec<String> = shown
            .lines()
            .map(|row| row.trim_matches('"').to_string())
            .collect();
        let caret = rows
            .iter()
            .position(|row| row.trim_matches(|c| c == '│' || c == ' ') == "^")
            .unwrap_or_else(|| panic!("a caret row at {width}x{height}:\n{shown}"));
        let column = rows[caret].chars().position(|c| c == '^').unwrap();
        // The error is the `}` that closes `foo( ` (column 48). Columns count cells:
        // the border and the spaces before the caret are one each.
        let under = (
            at_column(&rows[caret - 1], column - 2),
            at_column(&rows[caret - 1], column),
        );
        assert_eq!(under, (Some('('), Some('}')), "{width}x{height}:\n{shown}");
    }
}
