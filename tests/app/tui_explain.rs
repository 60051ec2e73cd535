//! Exact attribution in the app: the selected-message highlight, `Enter` on a prompt
//! line, per-message byte counts and the not-prefix-monotone note, as
//! update tests and snapshots at 80x24 and 120x40; and the "not used by this template"
//! marks on values the template ignores.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Direction, MessageAction, Pane, PromptAction, Step};
use chatplate::tui::app::App;
use chatplate::tui::jobs::attribution::AttributionState;
use chatplate::tui::panes::messages::fields::{Field, Row};
use chatplate_core::catalog::{Origin, TemplateSource};
use chatplate_core::inspect::Source;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen};

/// Puts the prompt cursor on the first line containing `needle`.
fn cursor_to(app: &mut App, needle: &str) {
    app.settle();
    let line = (0..app.preview().line_count())
        .find(|&i| app.preview().line(i).contains(needle))
        .expect("line on the prompt");
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    for _ in 0..line {
        app.handle_key(key(KeyCode::Char('j')));
    }
    let offset = app.cursor_offset().expect("cursor placed");
    assert_eq!(app.preview().line_of(offset), line);
}

#[test]
fn the_highlight_is_the_exact_attribution() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Down));
    app.settle();
    assert_eq!(app.attribution_state(), AttributionState::Exact);
    let prompt = app.preview().text().to_string();
    let ranges = app.selected_ranges();
    let highlighted: String = ranges.iter().map(|r| &prompt[r.clone()]).collect();
    // The whole turn, markers included: what the quick content search never found.
    assert_eq!(
        highlighted,
        "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
    );
    let bytes = app.message_bytes().expect("attributed");
    assert_eq!(bytes[1], Some(highlighted.len()));
}

#[test]
fn enter_on_a_prompt_line_selects_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    cursor_to(&mut app, "\"temperature\": 18");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.screen().focus, Pane::Messages);
    assert_eq!(app.messages().selected, 3, "the tool result");
    assert!(app.status().unwrap().text.contains("message 4"));
    // The preamble is no message: the status says what produced it.
    cursor_to(&mut app, "# Tools");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.screen().focus, Pane::Prompt);
    assert_eq!(app.messages().selected, 3);
    let offset = app.cursor_offset().unwrap();
    assert!(matches!(
        app.source_at(offset),
        Some(Source::Tools | Source::Preamble)
    ));
}

#[test]
fn cursor_moves_by_character_and_the_view_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    cursor_to(&mut app, "<|im_start|>assistant");
    let start = app.cursor_offset().unwrap();
    app.handle_key(key(KeyCode::Char('l')));
    app.handle_key(key(KeyCode::Right));
    assert_eq!(app.cursor_offset(), Some(start + 2));
    app.handle_key(key(KeyCode::Char('h')));
    assert_eq!(app.cursor_offset(), Some(start + 1));
    app.handle_key(key(KeyCode::Char('G')));
    let last = app.preview().line_count() - 1;
    assert_eq!(app.preview().line_of(app.cursor_offset().unwrap()), last);
    let top = app.prompt().top.expect("scrolled");
    assert!(top <= last && last < top + 24, "cursor line in view");
}

/// Appends a marker after the last message only: `P(k)` is never a prefix.
fn rewriting_template() -> TemplateSource {
    TemplateSource::new(
        "rewrites-end",
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n\
         {% if loop.last %}(last){% endif %}{% endfor %}",
        Origin::Inline,
    )
}

#[test]
fn a_template_that_rewrites_history_is_named_in_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.use_template(rewriting_template());
    app.settle();
    assert_eq!(app.attribution_state(), AttributionState::NotMonotone);
    assert!(screen(&mut app, 80, 24).contains("not prefix-monotone"));
}

#[test]
fn snapshot_cursor_and_counts_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    cursor_to(&mut app, "What's the weather");
    assert_snapshot!("explain_cursor_80x24", screen(&mut app, 80, 24));
}

#[test]
fn snapshot_cursor_and_counts_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Resize(120, 40));
    cursor_to(&mut app, "What's the weather");
    assert_snapshot!("explain_cursor_120x40", screen(&mut app, 120, 40));
}

#[test]
fn snapshot_not_monotone_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.use_template(rewriting_template());
    app.update(Action::Focus(Pane::Prompt));
    assert_snapshot!("explain_not_monotone_80x24", screen(&mut app, 80, 24));
}

#[test]
fn snapshot_not_monotone_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.use_template(rewriting_template());
    app.update(Action::Resize(120, 40));
    app.update(Action::Focus(Pane::Prompt));
    assert_snapshot!("explain_not_monotone_120x40", screen(&mut app, 120, 40));
}

/// Values the template ignores: the example session's tool result id and a
/// variable no template reads are marked in the fields and the settings.
#[test]
fn ignored_values_are_marked_in_the_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.edit_session(|session| {
        session
            .variables
            .insert("nobody_reads_this".into(), serde_json::json!(true));
    });
    // The tool result: the bundled default template never prints `tool_call_id`.
    for _ in 0..3 {
        app.update(Action::Message(MessageAction::Select(Step::Line(
            Direction::Down,
        ))));
    }
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("not used · call_1"), "{text}");
    assert_eq!(
        app.unused_note(Row::Message(3), Field::ToolCallId),
        Some(String::new())
    );
    assert_eq!(app.unused_note(Row::Message(3), Field::Content), None);
    assert_snapshot!("ignored_values_80x24", text);
    // Cached per session version and message: back on message 4, nothing is asked.
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Up,
    ))));
    app.settle();
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Down,
    ))));
    app.request_render();
    assert!(!app.values_pending(), "answered from the cache");
    assert_snapshot!("ignored_values_120x40", screen(&mut app, 120, 40));
    // The settings row: the variable is named.
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.settle();
    assert_eq!(
        app.unused_note(Row::Settings, Field::Variables),
        Some("nobody_reads_this".into())
    );
    assert_eq!(app.unused_note(Row::Settings, Field::Tools), None);
    assert_snapshot!("ignored_settings_120x40", screen(&mut app, 120, 40));
}

/// The marks answer the current session: after an edit that makes a value used, the
/// old verdict is not shown.
#[test]
fn ignored_value_marks_follow_edits() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    for _ in 0..3 {
        app.update(Action::Message(MessageAction::Select(Step::Line(
            Direction::Down,
        ))));
    }
    app.settle();
    assert!(app
        .unused_note(Row::Message(3), Field::ToolCallId)
        .is_some());
    app.use_template(TemplateSource::new(
        "prints-ids",
        "{% for m in messages %}{{ m.content }}{{ m.tool_call_id }}{% endfor %}",
        Origin::Inline,
    ));
    // Before the new probe answers, nothing stale is shown.
    assert_eq!(app.unused_note(Row::Message(3), Field::ToolCallId), None);
    app.settle();
    assert_eq!(app.unused_note(Row::Message(3), Field::ToolCallId), None);
    assert_eq!(
        app.unused_note(Row::Message(3), Field::Name),
        Some(String::new())
    );
}
