//! Copy as code (`X`): the chooser, and each of its texts run for real: the Python
//! `apply_chat_template` call in the user's transformers, the `chatplate render` command
//! line in a shell, and the request body read back as the session's messages. Each gives
//! the prompt the app shows.

#![cfg(feature = "tui")]

use std::process::Command;

use crate::{common, tui_support};
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::App;
use chatplate::tui::context::Effect;
use chatplate::tui::dialogs::Overlay;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use serde_json::json;
use tui_support::{example_app, key, screen};

/// The example session with a knob (`enable_thinking=false`) and a name no keyword
/// argument can take, as the user leaves it: unsaved.
fn app_with_knobs(dir: &std::path::Path) -> App {
    let mut app = example_app(dir);
    app.edit_session(|session| {
        session
            .variables
            .insert("enable_thinking".into(), json!(false));
        session
            .variables
            .insert("odd-name".into(), json!({"a": [1, "'''\"\"\""]}));
        session.messages[1]
            .0
            .insert("content".into(), json!("It's \"\"\" \\n 'Paris'\n"));
    });
    app.update(Action::Focus(Pane::Messages));
    app
}

/// What `X` then `choice` copies.
fn copied(app: &mut App, choice: char) -> String {
    app.handle_key(key(KeyCode::Char('X')));
    assert!(matches!(app.overlay(), Some(Overlay::CopyCode(_))));
    match app.handle_key(key(KeyCode::Char(choice))) {
        Some(Effect::Copy { text, .. }) => text,
        other => panic!("{choice} copies: {other:?}"),
    }
}

#[test]
fn the_chooser_shows_the_three_and_the_start_of_the_selected() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('X')));
    let shown = screen(&mut app, 80, 24).replace(&dir.path().display().to_string(), "DIR");
    assert_snapshot!("copy_code_80x24", shown);
    app.handle_key(key(KeyCode::Down));
    assert!(screen(&mut app, 120, 40).contains("chatplate render -"));
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_none(), "Esc copies nothing");
}

#[test]
fn the_python_call_gives_the_same_prompt_in_transformers() {
    let Some(python) = std::env::var_os("CHATPLATE_PYTHON") else {
        return common::skip_unless_ci(
            "the_python_call_gives_the_same_prompt_in_transformers",
            "CHATPLATE_PYTHON names no Python with transformers",
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_knobs(dir.path());
    screen(&mut app, 80, 24);
    let prompt = app.preview().text().to_string();
    assert!(prompt.contains("It's \"\"\" \\n 'Paris'"), "{prompt}");
    let code = copied(&mut app, 'p');
    assert!(code.contains("    enable_thinking=False,\n"), "{code}");
    let script = dir.path().join("snippet.py");
    std::fs::write(&script, &code).unwrap();
    let out = Command::new(python).arg(&script).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{code}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), prompt, "{code}");
}

#[test]
fn the_render_command_and_the_request_body_hold_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_with_knobs(dir.path());
    screen(&mut app, 80, 24);
    let prompt = app.preview().text().to_string();
    let command = copied(&mut app, 'c');
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_chatplate"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", &command])
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{command}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), prompt, "{command}");
    let curl = copied(&mut app, 'o');
    let body: String = (curl.lines())
        .skip_while(|line| !line.ends_with("<<'BODY'"))
        .skip(1)
        .take_while(|line| *line != "BODY")
        .map(|line| format!("{line}\n"))
        .collect();
    let body: serde_json::Value = serde_json::from_str(&body).expect(&curl);
    let messages: Vec<serde_json::Value> = (app.workspace().session.messages.iter())
        .map(|m| serde_json::Value::Object(m.0.clone()))
        .collect();
    assert_eq!(body["messages"], serde_json::Value::from(messages));
    assert_eq!(
        body["chat_template_kwargs"]["enable_thinking"],
        json!(false),
        "{curl}"
    );
}
