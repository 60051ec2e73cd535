//! The live template preview and the compare view: screens at 80x24 and 120x40 (insta,
//! TestBackend) and their behaviour (the session untouched by a preview, Esc back, Enter
//! adopting, re-rendering on a keystroke, jumping between differences). The other side
//! renders on the real worker; `python` runs the CI venv's transformers for real.

#![cfg(feature = "tui")]

use crate::{common, tui_support};
use chatplate::tui::action::CompareAction;
use chatplate::tui::action::{Action, Direction, MessageAction, Pane, Step, TemplateAction};
use chatplate::tui::app::App;
use chatplate::tui::compare::Shown;
use chatplate_core::compare::EngineSetup;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen, type_text};

/// The example app with the Templates pane focused and the cursor one template up
/// from the session's own (so a preview is on).
fn previewing(dir: &std::path::Path, width: u16, height: u16) -> App {
    let mut app = example_app(dir);
    app.update(Action::Resize(width, height));
    app.update(Action::Focus(Pane::Templates));
    app.handle_key(key(KeyCode::Up));
    app
}

/// The name of the template previewed (or compared), once its answer is in.
fn other_label(app: &mut App) -> Option<String> {
    tui_support::draw_only(app, 80, 24);
    app.other_side().map(|side| side.choice.label())
}

#[test]
fn preview_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = previewing(dir.path(), 80, 24);
    assert_snapshot!("preview_80x24", screen(&mut app, 80, 24));
}

#[test]
fn preview_at_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = previewing(dir.path(), 120, 40);
    assert_snapshot!("preview_120x40", screen(&mut app, 120, 40));
}

#[test]
fn a_preview_leaves_the_session_alone_and_esc_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = previewing(dir.path(), 80, 24);
    let own = app.workspace().template.name.clone();
    let previewed = other_label(&mut app).expect("a preview");
    assert_ne!(previewed, own);
    assert!(!app.workspace().dirty, "a preview is no change");
    assert!(!app.title().ends_with('*'));
    assert_eq!(app.workspace().template.name, own);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains(&format!("preview: {previewed}")), "{text}");

    app.handle_key(key(KeyCode::Esc));
    assert!(app.other_side().is_none(), "Esc ends the preview");
    assert_eq!(
        app.templates().selected().map(|t| t.name.clone()),
        Some(own)
    );
    let text = screen(&mut app, 80, 24);
    assert!(!text.contains("preview:"), "{text}");
    assert!(!app.workspace().dirty);
}

#[test]
fn enter_adopts_the_previewed_template() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = previewing(dir.path(), 80, 24);
    let previewed = other_label(&mut app).expect("a preview");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.workspace().template.name, previewed);
    assert!(app.workspace().dirty, "now the session changed");
    assert!(app.other_side().is_none());
}

#[test]
fn leaving_the_templates_pane_ends_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = previewing(dir.path(), 80, 24);
    assert!(app.other_side().is_some());
    app.update(Action::Focus(Pane::Messages));
    assert!(app.other_side().is_none());
    // Back on the session's own template: nothing to preview.
    app.update(Action::Focus(Pane::Templates));
    app.update(Action::Template(TemplateAction::FilterClear));
    assert!(app.other_side().is_none());
}

/// Compares with the template just above the session's, from the Templates pane.
fn comparing_with_template(dir: &std::path::Path, width: u16, height: u16) -> App {
    let mut app = previewing(dir, width, height);
    app.update(Action::Compare(CompareAction::WithTemplate));
    assert_eq!(app.screen().focus, Pane::Prompt);
    app
}

#[test]
fn compare_narrow_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = comparing_with_template(dir.path(), 80, 24);
    assert_snapshot!("compare_unified_80x24", screen(&mut app, 80, 24));
}

#[test]
fn compare_at_120x40_unified_then_side_by_side_zoomed() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = comparing_with_template(dir.path(), 120, 40);
    assert_snapshot!("compare_unified_120x40", screen(&mut app, 120, 40));
    app.update(Action::Zoom);
    assert_snapshot!("compare_side_by_side_120x40", screen(&mut app, 120, 40));
}

#[test]
fn differences_are_counted_and_jumped_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = comparing_with_template(dir.path(), 80, 24);
    let text = screen(&mut app, 80, 24);
    let hunks = match app.other_side().map(|s| &s.shown) {
        Some(Shown::Answer(answer)) => answer.hunks(),
        other => panic!("no answer: {other:?}"),
    };
    assert!(hunks > 1, "two templates differ in several places");
    assert!(text.contains(&format!("{hunks} hunks differ")), "{text}");
    app.handle_key(key(KeyCode::Char(']')));
    let status = app.status().map(|s| s.text.clone()).unwrap_or_default();
    assert_eq!(status, format!("difference 1 of {hunks}"));
    app.handle_key(key(KeyCode::Char(']')));
    assert_eq!(
        app.status().unwrap().text,
        format!("difference 2 of {hunks}")
    );
    app.handle_key(key(KeyCode::Char('[')));
    assert_eq!(
        app.status().unwrap().text,
        format!("difference 1 of {hunks}")
    );
    app.handle_key(key(KeyCode::Esc));
    assert!(app.other_side().is_none(), "Esc closes the compare view");
}

#[test]
fn c_steps_through_the_engines_and_the_expected_prompt_then_off() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    let mut seen = Vec::new();
    for _ in 0..5 {
        app.handle_key(key(KeyCode::Char('C')));
        seen.push(app.other_side().map(|s| s.choice.label()));
    }
    let want = ["minijinja", "hf-jinja", "python", "expected"].map(|s| Some(s.to_string()));
    assert_eq!(seen[..4], want);
    assert_eq!(seen[4], None, "then off");
}

/// The other side renders again on every keystroke, through the worker.
#[test]
fn the_other_side_follows_the_typing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Compare(CompareAction::CycleSide));
    app.update(Action::Focus(Pane::Messages));
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Down,
    ))));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " zebra");
    let text = screen(&mut app, 80, 24);
    let side = app.other_side().expect("still comparing");
    assert_eq!(
        side.answered,
        app.generation(),
        "answers the latest keystroke"
    );
    let Shown::Answer(answer) = &side.shown else {
        panic!("no answer: {:?}", side.shown)
    };
    assert!(answer.other.contains("zebra"), "{}", answer.other);
    assert!(text.contains("Prompt vs minijinja"), "{text}");
}

/// A missing engine shows why on its side only, with how to install it.
#[test]
fn a_missing_engine_shows_its_error_on_its_side() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let mut setup = EngineSetup::default();
    setup.python = None;
    app.set_engines(setup);
    app.update(Action::Focus(Pane::Prompt));
    for _ in 0..3 {
        app.update(Action::Compare(CompareAction::CycleSide));
    }
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("✗ Prompt vs python"), "{text}");
    assert!(text.contains("python is not available"), "{text}");
    assert!(text.contains("the session's render:"), "{text}");
    assert!(
        text.contains("<|im_start|>system"),
        "the session's side stays: {text}"
    );
}

/// The user's own transformers (the CI venv's 5.23) renders the example session as
/// chatplate does: the compare view says they are the same.
#[test]
fn python_agrees_with_chatplate_on_the_example() {
    if std::env::var_os("CHATPLATE_PYTHON").is_none() {
        return common::skip_unless_ci(
            "python_agrees_with_chatplate_on_the_example",
            "CHATPLATE_PYTHON names no Python with transformers",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    for _ in 0..3 {
        app.update(Action::Compare(CompareAction::CycleSide));
    }
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("same · Prompt vs python"), "{text}");
    assert!(text.contains("python (5.23.0)"), "its version: {text}");
}

/// Whatever the Templates pane lists previews alike: here a GGUF entry.
#[test]
fn a_gguf_entry_previews_like_any_template() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let origin = chatplate_core::catalog::Origin::Gguf {
        path: dir.path().join("tiny.gguf"),
        entry: None,
    };
    let source = "{% for m in messages %}[{{ m.role }}]{% endfor %}";
    let gguf = chatplate_core::catalog::TemplateSource::new("tiny.gguf", source, origin);
    app.add_template(&gguf);
    app.update(Action::Focus(Pane::Templates));
    app.update(Action::Template(TemplateAction::Select(Step::First)));
    app.update(Action::Template(TemplateAction::Select(Step::Last)));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("preview: tiny.gguf"), "{text}");
    assert!(text.contains("[system][user][assistant][tool]"), "{text}");
    assert!(!app.workspace().dirty);
}

/// Compared with the expected prompt: none yet says how to set it; `E` sets it, and the
/// view follows (the same prompt now).
#[test]
fn the_expected_side_follows_e() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    for _ in 0..4 {
        app.update(Action::Compare(CompareAction::CycleSide));
    }
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("✗ Prompt vs expected"), "{text}");
    assert!(text.contains("no expected prompt yet"), "{text}");
    app.handle_key(key(KeyCode::Char('E')));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("same · Prompt vs expected"), "{text}");
}

/// Without the session's template an engine has nothing to render: its side says why.
#[test]
fn an_engine_side_without_the_sessions_template_says_why() {
    use chatplate::tui::files::workspace::Workspace;
    let dir = tempfile::tempdir().unwrap();
    let template = chatplate_core::catalog::default_template();
    let session = chatplate::tui::panes::messages::conversation::example_session(
        template.reference(dir.path()),
    );
    let mut workspace = Workspace::new(session, None, template, dir.path().to_path_buf());
    workspace.template_missing("template not found: gone.jinja".into());
    let mut app = App::new(workspace, chatplate_core::catalog::bundled());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Compare(CompareAction::CycleSide));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("✗ Prompt vs minijinja"), "{text}");
    assert!(text.contains("template not found: gone.jinja"), "{text}");
}

/// Side by side, a missing engine's error takes its column only: the session's render
/// stays in the other.
#[test]
fn side_by_side_a_missing_engine_keeps_the_sessions_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let mut setup = EngineSetup::default();
    setup.node = dir.path().join("no-node-here");
    app.set_engines(setup);
    app.update(Action::Resize(120, 40));
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Zoom);
    for _ in 0..2 {
        app.update(Action::Compare(CompareAction::CycleSide));
    }
    let text = screen(&mut app, 120, 40);
    let row = text
        .lines()
        .find(|line| line.contains("<|im_start|>system"))
        .unwrap_or_else(|| panic!("the session's column: {text}"));
    let (left, right) = row.split_once(" │ ").expect("two columns");
    assert!(left.contains("<|im_start|>system"), "{row}");
    assert!(right.contains("✗ hf-jinja is not available"), "{row}");
    assert!(text.contains("✗ Prompt vs hf-jinja"), "{text}");
}
