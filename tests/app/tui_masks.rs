//! The assistant mask in token mode, with a tiny tokenizer the test builds: trained
//! tokens are underlined (green with colour), the title counts them, and a conversation
//! with assistant turns whose mask is all zero (a template without `{% generation %}`)
//! says so at the title's end (`⚠ 0 trained`).

#![cfg(feature = "tui")]

use crate::tokens_support;
use crate::tui_support;
use std::path::Path;

use chatplate::tui::action::{Action, Pane, PromptAction, Step};
use chatplate::tui::app::App;
use chatplate::tui::theme::Theme;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use serde_json::{json, Value as Json};
use tokens_support::{write_tiny_tokenizer, CHATML};
use tui_support::{app_for, screen};

/// ChatML with the assistant's reply and its `<|im_end|>` inside `{% generation %}`.
const TRAINING: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}{{ '\n' }}{% endfor %}";

fn mask_app(dir: &Path, template: &str) -> App {
    write_tiny_tokenizer(&dir.join("model"), &Json::Null);
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": {"source": template},
        "tokenizer": "model",
        "messages": [
            {"role": "user", "content": "Hi world"},
            {"role": "assistant", "content": "Hi there"},
        ],
    }))
    .expect("a session");
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    app.settle();
    app
}

fn buffer_of(app: &mut App) -> ratatui::buffer::Buffer {
    app.settle();
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| chatplate::tui::ui::draw(frame, app))
        .unwrap();
    terminal.backend().buffer().clone()
}

/// The cells of `needle` on the first screen line containing `line_with`.
fn cells_of(buffer: &ratatui::buffer::Buffer, line_with: &str, needle: &str) -> Vec<(u16, u16)> {
    let width = buffer.area.width;
    for y in 0..buffer.area.height {
        let line: String = (0..width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        if !line.contains(line_with) {
            continue;
        }
        if let Some(at) = line.find(needle) {
            let x = line[..at].chars().count() as u16;
            return (x..x + needle.chars().count() as u16)
                .map(|x| (x, y))
                .collect();
        }
    }
    panic!("{needle:?} not on screen");
}

#[test]
fn trained_tokens_are_underlined_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = mask_app(dir.path(), TRAINING);
    let mask = app
        .shown_tokens()
        .and_then(|t| t.mask.clone())
        .expect("a mask");
    // "Hi", "Ġ", "t", "h", "e", "r", "e", "<|im_end|>": the reply and its end of turn.
    assert_eq!(mask.trained_tokens, 8);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("· 8 trained"), "{text}");
    assert!(!text.contains("⚠"), "{text}");
    assert_snapshot!("mask_trained_80x24", text);

    let buffer = buffer_of(&mut app);
    for (x, y) in cells_of(&buffer, "Hi there<|im_end|>", "Hi there") {
        let cell = &buffer[(x, y)];
        assert!(cell.modifier.contains(Modifier::UNDERLINED), "{x},{y}");
        assert_eq!(cell.fg, Color::Green);
    }
    for (x, y) in cells_of(&buffer, "Hi world<|im_end|>", "Hi world") {
        assert!(!buffer[(x, y)].modifier.contains(Modifier::UNDERLINED));
    }
    // NO_COLOR: the underline alone.
    app.set_theme(Theme {
        color: false,
        ..app.theme()
    });
    let buffer = buffer_of(&mut app);
    let underlined: Vec<_> = (buffer.content.iter())
        .filter(|cell| cell.modifier.contains(Modifier::UNDERLINED))
        .collect();
    // "Hi there<|im_end|>" and the `¦` marks between its tokens.
    assert!(underlined.len() >= 18, "{}", underlined.len());
    assert!(underlined.iter().all(|cell| cell.fg == Color::Reset));
}

#[test]
fn an_all_zero_mask_for_assistant_turns_is_in_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = mask_app(dir.path(), CHATML);
    let mask = app
        .shown_tokens()
        .and_then(|t| t.mask.clone())
        .expect("a mask");
    assert!(!mask.has_generation_tag && mask.silently_empty());
    assert!(app.token_note().starts_with(" · ⚠ 0 trained"));
    // The warning comes first in the title, so 80 columns do not cut it, zoomed or not.
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Prompt · ⚠ 0 trained"), "{text}");
    app.update(Action::Zoom);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Prompt · ⚠ 0 trained"), "{text}");
    assert_snapshot!("mask_all_zero_80x24", text);
}
