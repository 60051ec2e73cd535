//! Whole-screen snapshots at 80x24 (plus a wide and a tiny terminal) through
//! ratatui's `TestBackend`. The example session has a fixed clock, so screens are
//! deterministic.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Direction, MessageAction, Pane, PromptAction, Step};
use chatplate::tui::theme::Theme;
use chatplate_core::catalog::{Origin, TemplateSource};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{draw_only, example_app, key, screen, type_text};

fn prompt_focused(dir: &std::path::Path) -> chatplate::tui::app::App {
    let mut app = example_app(dir);
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    app
}

#[test]
fn messages_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Down,
    ))));
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Down,
    ))));
    assert_snapshot!("messages", screen(&mut app, 80, 24));
}

/// The settings row shortens before it loses the on/off state (at 80 columns it cut
/// "gen prompt on" to "gen prompt").
#[test]
fn the_settings_row_keeps_its_state_when_narrow() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    for (width, row) in [
        (80, "⚙ tools 1, gen prompt on"),
        (120, "⚙ settings tools 1, gen prompt on"),
    ] {
        let text = screen(&mut app, width, 24);
        assert!(text.contains(row), "{width} columns:\n{text}");
    }
}

#[test]
fn messages_pane_editing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " And tomorrow?");
    assert_snapshot!("messages_editing", screen(&mut app, 80, 24));
}

#[test]
fn templates_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Templates));
    assert_snapshot!("templates", screen(&mut app, 80, 24));
}

#[test]
fn prompt_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = prompt_focused(dir.path());
    assert_snapshot!("prompt", screen(&mut app, 80, 24));
}

#[test]
fn prompt_pane_whitespace() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = prompt_focused(dir.path());
    app.update(Action::Prompt(PromptAction::ToggleWhitespace));
    assert_snapshot!("prompt_whitespace", screen(&mut app, 80, 24));
}

#[test]
fn prompt_pane_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = prompt_focused(dir.path());
    app.use_template(TemplateSource::new(
        "broken",
        "{% for m in messages %}\n{{ m.content }\n{% endfor %}\n",
        Origin::Inline,
    ));
    assert_snapshot!("prompt_error", screen(&mut app, 80, 24));
}

#[test]
fn prompt_pane_diff() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::SaveExpected);
    app.handle_key(key(KeyCode::Esc)); // not saved now
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " Today.");
    app.handle_key(key(KeyCode::Esc));
    app.update(Action::Focus(Pane::Prompt));
    // Diff mode opens two lines above the first change, no scrolling needed.
    app.update(Action::Prompt(PromptAction::ToggleDiff));
    assert_snapshot!("prompt_diff", screen(&mut app, 80, 24));
}

#[test]
fn help_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Help);
    assert_snapshot!("help", screen(&mut app, 80, 24));
}

#[test]
fn wide_terminal_shows_three_panes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Resize(140, 30));
    assert_snapshot!("wide", screen(&mut app, 140, 30));
}

#[test]
fn tiny_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Resize(20, 5));
    assert_snapshot!("tiny", screen(&mut app, 20, 5));
}

#[test]
fn no_size_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('e')));
    for overlay in [None, Some(Action::Help), Some(Action::Quit)] {
        if let Some(action) = overlay {
            app.update(action);
        }
        for width in [0, 1, 2, 5, 12, 20, 40, 69, 70, 80, 119, 120, 200] {
            for height in [0, 1, 2, 3, 5, 9, 10, 11, 12, 16, 24] {
                app.update(Action::Resize(width, height));
                draw_only(&mut app, width, height);
            }
        }
    }
}

/// The buffer cell where `needle` first starts inside the prompt pane (right half).
fn find_cell(buffer: &ratatui::buffer::Buffer, needle: &str) -> Option<(u16, u16)> {
    let area = buffer.area;
    for y in 0..area.height {
        let row: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        if let Some(byte) = row.find(needle) {
            let x = row[..byte].chars().count() as u16;
            if x >= area.width / 2 - 4 {
                return Some((x, y));
            }
        }
    }
    None
}

fn buffer_of(app: &mut chatplate::tui::app::App) -> ratatui::buffer::Buffer {
    app.settle();
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| chatplate::tui::ui::draw(frame, app))
        .unwrap();
    terminal.backend().buffer().clone()
}

#[test]
fn tokens_and_the_selected_message_are_styled() {
    use ratatui::style::{Color, Modifier};
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Down,
    ))));
    let buffer = buffer_of(&mut app);
    let (x, y) = find_cell(&buffer, "What's the weather").expect("user text on screen");
    assert_eq!(
        buffer[(x, y)].bg,
        Color::Blue,
        "selected message highlighted"
    );
    // Outside the selected message (whose exact part includes its turn markers).
    let (x, y) = find_cell(&buffer, "<|im_start|>assistant").expect("token on screen");
    assert_eq!(buffer[(x, y)].fg, Color::Magenta, "special token coloured");
    // NO_COLOR: modifiers only.
    app.set_theme(Theme {
        color: false,
        ..app.theme()
    });
    let buffer = buffer_of(&mut app);
    assert!(buffer
        .content
        .iter()
        .all(|c| c.fg == Color::Reset && c.bg == Color::Reset));
    let (x, y) = find_cell(&buffer, "<|im_start|>assistant").unwrap();
    assert!(buffer[(x, y)].modifier.contains(Modifier::BOLD));
}

/// Capability badges beside each template, at both sizes.
#[test]
fn templates_pane_badges() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Templates));
    app.settle();
    let selected = app
        .templates()
        .selected()
        .expect("a template")
        .source
        .clone();
    assert!(app.templates().badges.get(&selected).is_some(), "probed");
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("sys tools"), "{text}");
    assert_snapshot!("templates_badges_80x24", text);
    app.update(Action::Resize(120, 40));
    assert_snapshot!("templates_badges_120x40", screen(&mut app, 120, 40));
}
