//! The compare view's typed sides (`o` in the Prompt pane): a template from any source,
//! `@REV` for the session's model at another revision of a Hugging Face cache (a fake
//! cache in huggingface_hub's layout, the session's template a path into its snapshot),
//! and a real llama-server. Screens at 80x24 and 120x40 (insta, TestBackend).

#![cfg(feature = "tui")]

use std::path::Path;

use crate::{hf_support, llama_support, tui_support};
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::App;
use chatplate::tui::compare::Shown;
use chatplate_core::session::Session;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{app_for, example_app, key, screen, type_text};

/// Presses `o` in the Prompt pane and types `text` into the dialog.
fn compare_with(app: &mut App, text: &str) {
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('o')));
    type_text(app, text);
    app.handle_key(key(KeyCode::Enter));
    tui_support::draw_only(app, 80, 24);
}

/// The other side's prompt, once answered.
fn other_prompt(app: &mut App) -> String {
    tui_support::draw_only(app, 80, 24);
    match app.other_side().map(|side| &side.shown) {
        Some(Shown::Answer(answer)) => answer.other.to_string(),
        other => panic!("no answer: {other:?}"),
    }
}

/// The example app compared with a `.jinja` file typed in.
fn with_typed_template(dir: &Path, width: u16, height: u16) -> App {
    let path = dir.join("other.jinja");
    let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}";
    std::fs::write(&path, source).unwrap();
    let mut app = example_app(dir);
    app.update(Action::Resize(width, height));
    compare_with(&mut app, path.to_str().unwrap());
    app
}

#[test]
fn a_typed_template_file_is_the_other_side() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = with_typed_template(dir.path(), 80, 24);
    assert_eq!(
        app.other_side().map(|side| side.choice.label()),
        Some("template other".to_string())
    );
    assert!(other_prompt(&mut app).starts_with("<|system|>"));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Prompt vs template other"), "{text}");
}

#[test]
fn typed_bundled_template_at_80x24_and_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    compare_with(&mut app, "chatml-with-headers-tools");
    let label = app.other_side().map(|side| side.choice.label());
    assert_eq!(label.as_deref(), Some("template chatml-with-headers-tools"));
    assert_snapshot!("typed_template_80x24", screen(&mut app, 80, 24));
    app.update(Action::Resize(120, 40));
    assert_snapshot!("typed_template_120x40", screen(&mut app, 120, 40));
}

#[test]
fn a_source_that_cannot_be_opened_says_so_and_keeps_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    compare_with(&mut app, "no/such.jinja");
    tui_support::draw_only(&mut app, 80, 24);
    let status = app.status().map(|s| s.text.clone()).unwrap_or_default();
    assert!(
        status.starts_with("could not open no/such.jinja"),
        "{status}"
    );
    assert!(app.other_side().is_none());
    // A revision needs a session on a cached model.
    compare_with(&mut app, "@v1");
    let status = app.status().map(|s| s.text.clone()).unwrap_or_default();
    assert!(
        status.contains("@v1: the session's template is not a model from the Hugging Face cache"),
        "{status}"
    );
}

/// A session whose template is `acme/chat`'s main snapshot, by path into the cache.
fn on_cached_model(dir: &Path, width: u16, height: u16) -> App {
    hf_support::fake_cache(&dir.join("cache"));
    let path = format!(
        "cache/models--acme--chat/snapshots/{}/chat_template.jinja",
        hf_support::MAIN
    );
    let json = serde_json::json!({"version": 1, "template": {"path": path},
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]});
    let session = Session::parse(&json.to_string(), &dir.join("s.json")).unwrap();
    let mut app = app_for(session, dir);
    app.update(Action::Resize(width, height));
    app
}

#[test]
fn at_revision_compares_the_sessions_model_at_that_revision() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = on_cached_model(dir.path(), 80, 24);
    compare_with(&mut app, "@v1");
    assert_eq!(
        app.other_side().map(|side| side.choice.label()),
        Some("revision v1".to_string())
    );
    // The conversation the session renders (its own values), with the v1 template.
    assert_eq!(other_prompt(&mut app), "(v1)HiHello");
    let hide = |text: String| text.replace(&dir.path().display().to_string(), "DIR");
    assert_snapshot!("revision_80x24", hide(screen(&mut app, 80, 24)));
    app.update(Action::Resize(120, 40));
    assert_snapshot!("revision_120x40", hide(screen(&mut app, 120, 40)));
}

/// A llama-server's URL is a side: llama.cpp's own engine renders the session's template
/// (here `{{ 1/3 }}`, which llama.cpp prints with 6 digits, Python with 16).
#[test]
fn a_llama_server_url_is_a_side() {
    let test = "a_llama_server_url_is_a_side";
    let Some(files) = llama_support::server_files(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}{{ m.content }} {{ 1/3 }}\n{% endfor %}";
    let file = dir.path().join("t.jinja");
    std::fs::write(&file, template).unwrap();
    let server = llama_support::start(&files, Some(&file), &dir.path().join("log"));
    let json = serde_json::json!({"version": 1, "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi"}]});
    let session = Session::parse(&json.to_string(), &dir.path().join("s.json")).unwrap();
    let mut app = app_for(session, dir.path());
    compare_with(&mut app, &server.url);
    assert_eq!(
        app.other_side().map(|side| side.choice.label()),
        Some("llama.cpp".to_string())
    );
    let other = other_prompt(&mut app);
    assert!(other.contains("Hi 0.333333\n"), "{other:?}");
    assert!(!other.contains("0.3333333333"), "{other:?}");
    let text = screen(&mut app, 120, 40);
    assert!(
        text.contains("1 hunk differs · Prompt vs llama.cpp"),
        "{text}"
    );
    assert!(
        text.contains(&format!("+ llama.cpp ({}", server.url)),
        "{text}"
    );
}
