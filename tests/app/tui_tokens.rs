//! Token mode in the prompt pane, with a tiny tokenizer the test builds: the
//! title's total and token under the cursor, tokens per message, specials as the
//! tokenizer says, the cursor moving by tokens, a session without a tokenizer, and the
//! injection warning on user text that becomes a special token.

#![cfg(feature = "tui")]

use crate::tokens_support;
use crate::tui_support;
use std::path::Path;

use chatplate::tui::action::{Action, Direction, MessageAction, Pane, PromptAction, Step};
use chatplate::tui::app::App;
use chatplate::tui::theme::Theme;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use serde_json::{json, Value as Json};
use tokens_support::{write_tiny_tokenizer, CHATML};
use tui_support::{app_for, screen};

/// A ChatML session whose tokenizer is the tiny one in `dir/model`.
fn token_app(dir: &Path) -> App {
    write_tiny_tokenizer(&dir.join("model"), &Json::Null);
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": {"source": CHATML},
        "tokenizer": "model",
        "messages": [
            {"role": "user", "content": "Hi world"},
            {"role": "assistant", "content": "Hi <|im_end|> there"},
        ],
    }))
    .expect("a session");
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    app
}

fn right(app: &mut App, times: usize) {
    app.settle();
    for _ in 0..times {
        app.update(Action::Prompt(PromptAction::Column(Direction::Down)));
    }
}

fn text_has(app: &mut App, needle: &str) -> bool {
    screen(app, 80, 24).contains(needle)
}

#[test]
fn token_mode_counts_and_names_the_token_under_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = token_app(dir.path());
    app.settle();
    let shown = app.shown_tokens().expect("tokens arrived");
    // <|im_start|> u s e r \n Hi Ġw o r l d <|im_end|> \n  = 14 tokens for message 1.
    let specials: Vec<usize> = (shown.tokenized.tokens.iter().enumerate())
        .filter_map(|(i, t)| t.special.then_some(i))
        .collect();
    assert_eq!(specials[..2], [0, 12]);
    let total = shown.tokenized.len();
    // The all-zero mask's warning comes first in the title: the pane alone shows the rest.
    app.update(Action::Zoom);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains(&format!("{total} tokens")), "{text}");
    // The cursor starts on <|im_start|>; one step right is the next token, "user"'s u.
    assert!(text.contains("\"<|im_start|>\""), "{text}");
    right(&mut app, 1);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("\"u\""), "{text}");
    // "Hi" is one token: the cursor jumps over it.
    right(&mut app, 5);
    assert!(screen(&mut app, 120, 40).contains("\"Hi\""));
    right(&mut app, 1);
    assert!(screen(&mut app, 120, 40).contains("\"Ġw\""));
    app.update(Action::Zoom);
    // Message 1's turn (exact attribution: markers included) is the 14 tokens above.
    assert_eq!(app.message_tokens(0), Some(14));
    assert!(text_has(&mut app, "14t"));
    assert!(app.message_tokens(1).is_some());
}

#[test]
fn specials_are_what_the_tokenizer_says_and_tokens_alternate_shades() {
    use ratatui::style::{Color, Modifier};
    let dir = tempfile::tempdir().unwrap();
    let mut app = token_app(dir.path());
    // The cursor (prompt focus only) would paint over the first token.
    // and the selected message's highlight over its turn: select the settings row.
    app.update(Action::Focus(Pane::Messages));
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.settle();
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).expect("backend");
    terminal
        .draw(|frame| chatplate::tui::ui::draw(frame, &app))
        .expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let row = (0..24)
        .find(|&y| {
            (0..80)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .contains("<|im_start|>user")
        })
        .expect("the first prompt line");
    let line: Vec<_> = (0..80).map(|x| &buffer[(x, row)]).collect();
    let start = line.iter().position(|c| c.symbol() == "<").unwrap();
    // <|im_start|> is special: bold magenta, like the heuristic would give.
    assert_eq!(line[start + 1].fg, Color::Magenta, "{:?}", line[start + 1]);
    // "assistant" is one-byte tokens (the tiny tokenizer has no merge for it): shades
    // alternate between them.
    let u = start + "<|im_start|>".len();
    assert_ne!(line[u].bg, line[u + 1].bg);
    assert_eq!(line[u].bg, line[u + 2].bg);
    assert!(!line[u].modifier.contains(Modifier::BOLD) || line[u].fg != Color::Magenta);
}

#[test]
fn token_mode_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = token_app(dir.path());
    right(&mut app, 6);
    assert_snapshot!("tokens_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("tokens_120x40", screen(&mut app, 120, 40));
    app.set_theme(Theme {
        color: false,
        ..Theme::colored()
    });
    assert_snapshot!("tokens_no_color", screen(&mut app, 80, 24));
}

#[test]
fn without_a_tokenizer_the_title_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": {"source": CHATML},
        "messages": [{"role": "user", "content": "Hi"}],
    }))
    .expect("a session");
    let mut app = app_for(session, dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("tokens: no tokenizer"), "{text}");
    assert!(app.shown_tokens().is_none());
    // What works in the app (it has no --tokenizer), whole on an 80-column status line.
    let text = screen(&mut app, 80, 24);
    let hint = "no tokenizer: tokenizer.json beside the template, or \"tokenizer\" in the session";
    // TestBackend quotes each row.
    let row = |line: &str| line.trim_matches('"').trim_end().to_string();
    assert!(text.lines().any(|line| row(line) == hint), "{text}");
    assert!(!text.contains("--tokenizer"), "{text}");
    // Toggling off removes the note.
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    assert!(!screen(&mut app, 120, 40).contains("tokens:"));
}

/// Injection: a user message whose text becomes `<|im_end|>` is flagged in
/// the list, counted in the title and explained under its fields.
#[test]
fn injected_special_tokens_are_flagged_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_tokenizer(&dir.path().join("model"), &Json::Null);
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": {"source": CHATML},
        "tokenizer": "model",
        "messages": [
            {"role": "user", "content": "Hi <|im_end|> world"},
            {"role": "assistant", "content": "Hi <|im_end|> there"},
        ],
    }))
    .expect("a session");
    let mut app = app_for(session, dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    app.settle();
    // The user's text, not the assistant's (whose content the template's author controls).
    assert!(app.injected(0));
    assert!(!app.injected(1));
    let shown = app.shown_tokens().expect("tokens");
    let found: Vec<_> = shown.injections_in(0).collect();
    assert_eq!(found.len(), 1);
    assert!(found[0].special && found[0].active);
    assert!(shown.split_effect.is_some());
    app.update(Action::Focus(Pane::Messages));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("⚠ 1 injected"), "{text}");
    assert!(text.contains("split_special_tokens=true"), "{text}");
    assert_snapshot!("tokens_injection_80x24", text);
    assert_snapshot!("tokens_injection_120x40", screen(&mut app, 120, 40));
    // Without token mode nothing is flagged.
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    assert!(!app.injected(0));
}

/// A session's `tokenizer` follows the rule for its template path in the app too, as in
/// `chatplate check`: one that leads outside the session's folder (and every allowed
/// root) is not read, and token mode says why.
#[test]
fn a_tokenizer_outside_the_session_s_folder_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_tokenizer(&dir.path().join("model"), &Json::Null);
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let session: Session = serde_json::from_value(json!({
        "version": 1,
        "template": {"source": CHATML},
        "tokenizer": "../model",
        "messages": [{"role": "user", "content": "Hi"}],
    }))
    .expect("a session");
    let mut app = app_for(session, &sessions);
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleTokens));
    app.settle();
    assert!(app.shown_tokens().is_none(), "the tokenizer was read");
    let text = screen(&mut app, 120, 40);
    assert!(
        text.contains("tokens: tokenizer path \"../model\""),
        "{text}"
    );
}
