//! The assistant mask in character mode: with a TRL-style training template (one with
//! `{% generation %}`), the prompt underlines what the assistant's turns generate, from
//! one tracked render on the worker; a template without the tag marks nothing.

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::{Path, PathBuf};

use chatplate::tui::action::{Action, Pane, PromptAction, Step};
use chatplate::tui::app::App;
use chatplate::tui::theme::Theme;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;
use serde_json::json;
use tui_support::{app_for, screen};

fn training_app(dir: &Path, template: serde_json::Value) -> App {
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": template,
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello there"},
        ],
    }))
    .expect("a session");
    let mut app = app_for(session, dir);
    app.set_theme(Theme::colored());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::Scroll(Step::Last)));
    app.settle();
    app
}

fn qwen3_training() -> serde_json::Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/masks/qwen3-training.jinja");
    json!({"source": std::fs::read_to_string(path).unwrap()})
}

#[test]
fn a_training_template_underlines_the_assistant_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = training_app(dir.path(), qwen3_training());
    let shown = screen(&mut app, 80, 24);
    let spans = app.generation_spans().to_vec();
    assert!(!spans.is_empty(), "{shown}");
    let prompt = app.preview().text().to_string();
    let marked: String = spans.iter().map(|r| &prompt[r.clone()]).collect();
    assert!(marked.contains("Hello there"), "{marked:?}");
    assert!(
        !marked.contains("Hi<"),
        "the user's turn is not trained: {marked:?}"
    );
    // The marked characters are underlined on screen.
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| chatplate::tui::ui::draw(frame, &app))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let underlined = (0..24).any(|y| {
        let line: String = (0..80)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        let at = line.find("Hello").map(|i| line[..i].chars().count() as u16);
        at.is_some_and(|x| buffer[(x, y)].modifier.contains(Modifier::UNDERLINED))
    });
    assert!(underlined, "{shown}");
    assert_snapshot!("generation_marks_80x24", shown);
    assert_snapshot!("generation_marks_120x40", screen(&mut app, 120, 40));
}

#[test]
fn a_template_without_generation_blocks_marks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = training_app(dir.path(), json!({"bundled": "qwen2.5-reasoning-tools"}));
    screen(&mut app, 80, 24);
    assert!(app.generation_spans().is_empty());
}
