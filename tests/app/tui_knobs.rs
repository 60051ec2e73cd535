//! The settings' Knobs section (the template's variables, `Enter` flips a boolean one)
//! and the turn-cost column (`$`: what each turn makes a prefix cache process again,
//! summed in the Messages title), on the worker; the column's numbers are transformers'
//! (`scripts/turn_cost_reference.py`).

#![cfg(feature = "tui")]

use crate::tui_support;
use std::path::{Path, PathBuf};
use std::process::Command;

use chatplate::tui::action::{Action, Direction, MessageAction, Pane, Step};
use chatplate::tui::app::App;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use serde_json::{json, Value as Json};
use tui_support::{app_for, screen};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Three user turns, the two replies with reasoning.
fn turns() -> Json {
    json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "greet back"},
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You are welcome", "reasoning_content": "be polite"},
        {"role": "user", "content": "Bye"},
    ])
}

/// An app on `docs/examples/knobs.jinja` (a thinking switch and a reasoning-retention
/// knob), inline (a path would put the temporary folder on screen), and copied into
/// `dir` for the reference.
fn knobs_app(dir: &Path) -> App {
    std::fs::copy(
        repo().join("docs/examples/knobs.jinja"),
        dir.join("knobs.jinja"),
    )
    .unwrap();
    let source = std::fs::read_to_string(dir.join("knobs.jinja")).unwrap();
    let session = json!({
        "version": 1,
        "template": {"source": source},
        "add_generation_prompt": true,
        "messages": turns(),
    });
    let session: Session = serde_json::from_value(session).unwrap();
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Messages));
    app
}

#[test]
fn the_knobs_section_lists_the_template_variables_and_enter_flips_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = knobs_app(dir.path());
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.update(Action::Message(MessageAction::EnterFields));
    app.settle();
    let names: Vec<&str> = app.knob_rows().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["enable_thinking", "keep_past_thinking"]);
    assert_snapshot!("knobs_section_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("knobs_section_120x40", screen(&mut app, 120, 40));
    // The field before the raw JSON is the last knob: Enter keeps the past reasoning.
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Up,
    ))));
    app.update(Action::Message(MessageAction::EditField));
    app.settle();
    assert_eq!(
        app.workspace().session.variables.get("keep_past_thinking"),
        Some(&json!(true))
    );
    let prompt = app.preview().text().to_string();
    assert!(prompt.contains("<think>greet back</think>"), "{prompt}");
    let shown = screen(&mut app, 120, 40);
    assert!(shown.contains("keep_past_thinking = true"), "{shown}");
    // The prompt pane compares the new prompt with the one before the flip.
    assert!(
        shown.contains("hunks differ · Prompt vs before keep_past_t"),
        "{shown}"
    );
    assert!(shown.contains("+ <assistant>Hello␊"), "{shown}");
    assert_snapshot!("knobs_flipped_120x40", shown);
    // Undo puts the session back.
    app.update(Action::Message(MessageAction::Undo));
    app.settle();
    assert_eq!(
        app.workspace().session.variables.get("keep_past_thinking"),
        None
    );
}

#[test]
fn the_turn_cost_column_counts_bytes_without_a_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = knobs_app(dir.path());
    app.update(Action::Message(MessageAction::ToggleTurnCost));
    app.settle();
    if let Some(expected) = reference(dir.path(), "-") {
        for turn in expected {
            let index = usize::try_from(turn["message"].as_u64().unwrap() - 1).unwrap();
            let cell = format!("↻{}B", turn["reprocessed"]);
            assert_eq!(app.turn_cost_cell(index), Some(cell));
        }
    }
    assert_snapshot!("turn_cost_bytes_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("turn_cost_bytes_120x40", screen(&mut app, 120, 40));
    app.update(Action::Message(MessageAction::ToggleTurnCost));
    assert_eq!(app.turn_cost_title(), None);
}

/// transformers' turns for the session of `knobs_app`, written to `dir/s.json` (`None`:
/// no Python, skipped; a failure under CI=true).
fn reference(dir: &Path, tokenizer: &str) -> Option<Vec<Json>> {
    let Ok(python) = std::env::var("CHATPLATE_PYTHON") else {
        crate::common::skip_unless_ci("turn_cost reference", "CHATPLATE_PYTHON names no Python");
        return None;
    };
    let source = std::fs::read_to_string(dir.join("knobs.jinja")).unwrap();
    let body = json!({"version": 1, "template": {"source": source},
        "add_generation_prompt": true, "messages": turns()});
    std::fs::write(dir.join("s.json"), body.to_string()).unwrap();
    let script = repo().join("scripts/turn_cost_reference.py");
    let output = Command::new(python)
        .arg(script)
        .arg(dir.join("s.json"))
        .arg(tokenizer)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

#[test]
fn the_turn_cost_column_shows_what_transformers_counts_on_qwen3() {
    let test = "the_turn_cost_column_shows_what_transformers_counts_on_qwen3";
    let Some(python) = std::env::var("CHATPLATE_PYTHON").ok() else {
        return crate::common::skip_unless_ci(test, "CHATPLATE_PYTHON names no Python");
    };
    let Some(folder) = crate::tokens_support::real_tokenizer("qwen3", test) else {
        return;
    };
    let Some(corpus) = crate::common::corpus_dir(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The tokenizer inside the session's folder, where a session may name one.
    std::fs::create_dir(dir.path().join("qwen3")).unwrap();
    for file in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(folder.join(file), dir.path().join("qwen3").join(file)).unwrap();
    }
    let source = std::fs::read_to_string(corpus.join("templates/Qwen-Qwen3-0.6B.jinja")).unwrap();
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    for turn in 1..=5 {
        messages.push(json!({"role": "user", "content": format!("What is {turn} + {turn}?")}));
        messages.push(
            json!({"role": "assistant", "content": format!("{}.", 2 * turn),
            "reasoning_content": format!("Adding {turn} and {turn} gives {}.", 2 * turn)}),
        );
    }
    messages.push(json!({"role": "user", "content": "Thanks!"}));
    let body = json!({"version": 1, "template": {"source": source}, "tokenizer": "qwen3",
        "eos_token": "<|im_end|>", "add_generation_prompt": true, "messages": messages});
    let path = dir.path().join("qwen3.json");
    std::fs::write(&path, body.to_string()).unwrap();
    let script = repo().join("scripts/turn_cost_reference.py");
    let output = Command::new(python)
        .args([script, path.clone(), dir.path().join("qwen3")])
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected: Vec<Json> = serde_json::from_slice(&output.stdout).unwrap();
    let session: Session = serde_json::from_value(body).unwrap();
    let mut app = app_for(session, dir.path());
    app.update(Action::Message(MessageAction::ToggleTurnCost));
    app.settle();
    let mut total = 0;
    for turn in &expected {
        let index = usize::try_from(turn["message"].as_u64().unwrap() - 1).unwrap();
        let reprocessed = turn["reprocessed"].as_u64().unwrap();
        total += reprocessed;
        assert_eq!(app.turn_cost_cell(index), Some(format!("↻{reprocessed}t")));
    }
    assert_eq!(app.turn_cost_title(), Some(format!("↻{total}t")));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains(&format!("Messages · ↻{total}t")), "{shown}");
}
