//! `chatplate knobs` and `chatplate inspect --turn-cost` as a user runs them, their
//! numbers checked against transformers (`scripts/turn_cost_reference.py`, run with
//! `$CHATPLATE_PYTHON`): Qwen3 drops earlier turns' reasoning, so each reply is
//! processed again when the next user message arrives.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, binary::chatplate, binary::stderr, binary::stdout};
use serde_json::{json, Value as Json};

/// A Qwen3 session with reasoning in every reply: `turns` user turns, ending with a
/// user message; `tokenizer` names the tokenizer folder when given.
fn qwen3_session(dir: &Path, turns: usize, tokenizer: Option<&Path>) -> Option<PathBuf> {
    let corpus = common::corpus_dir("qwen3_session")?;
    let source = std::fs::read_to_string(corpus.join("templates/Qwen-Qwen3-0.6B.jinja")).unwrap();
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    for turn in 1..=turns {
        messages.push(json!({"role": "user", "content": format!("Question {turn}: what is {turn} + {turn}?")}));
        messages.push(json!({
            "role": "assistant",
            "reasoning_content": format!("The user asks for {turn} + {turn}. That is {}.", 2 * turn),
            "content": format!("{turn} + {turn} = {}.", 2 * turn),
        }));
    }
    messages.push(json!({"role": "user", "content": "Thanks!"}));
    let mut session = json!({
        "version": 1,
        "template": {"source": source},
        "eos_token": "<|im_end|>",
        "add_generation_prompt": true,
        "messages": messages,
    });
    if let Some(folder) = tokenizer {
        session["tokenizer"] = json!(folder.display().to_string());
    }
    let path = dir.join("qwen3.json");
    std::fs::write(&path, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    Some(path)
}

/// What the reference script prints for `args`.
fn reference(python: &str, args: &[&str]) -> Json {
    let script = common::repo().join("scripts/turn_cost_reference.py");
    let output = Command::new(python)
        .arg(script)
        .args(args)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the reference prints JSON")
}

/// Our turns, in the reference's shape.
fn our_turns(fixture: &Path, dir: &Path) -> Json {
    let out = chatplate(
        &[
            "inspect",
            "--fixture",
            fixture.to_str().unwrap(),
            "--turn-cost",
            "--json",
        ],
        dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Json = serde_json::from_str(&stdout(&out)).unwrap();
    let turns: Vec<Json> = report["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!({"message": t["message"], "request": t["request"], "kept": t["kept"], "reprocessed": t["reprocessed"]}))
        .collect();
    json!(turns)
}

#[test]
fn turn_cost_in_tokens_matches_transformers_on_qwen3_with_reasoning_in_history() {
    let test = "turn_cost_in_tokens_matches_transformers_on_qwen3_with_reasoning_in_history";
    let Some(python) = crate::compare_cli::python(test) else {
        return;
    };
    let Some(folder) = crate::tokens_support::real_tokenizer("qwen3", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(fixture) = qwen3_session(dir.path(), 6, Some(&folder)) else {
        return;
    };
    let ours = our_turns(&fixture, dir.path());
    let expected = reference(
        &python,
        &[fixture.to_str().unwrap(), folder.to_str().unwrap()],
    );
    assert_eq!(ours, expected);
    // Every reply is processed again: its reasoning, cached while it was generated, is
    // gone from the next request.
    assert!(ours
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["reprocessed"].as_u64() > Some(10)));
    let out = chatplate(
        &[
            "inspect",
            "--fixture",
            fixture.to_str().unwrap(),
            "--turn-cost",
        ],
        dir.path(),
    );
    let text = stdout(&out);
    let total: u64 = expected
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["reprocessed"].as_u64().unwrap())
        .sum();
    let last = text.lines().last().unwrap();
    assert!(
        last.trim_start().starts_with("all") && last.ends_with(&format!(" {total}")),
        "{text}"
    );
    assert!(text.contains("tokens of "), "{text}");
}

#[test]
fn turn_cost_without_a_tokenizer_counts_bytes_as_transformers_renders_them() {
    let test = "turn_cost_without_a_tokenizer_counts_bytes_as_transformers_renders_them";
    let Some(python) = crate::compare_cli::python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(fixture) = qwen3_session(dir.path(), 3, None) else {
        return;
    };
    let out = chatplate(
        &[
            "inspect",
            "--fixture",
            fixture.to_str().unwrap(),
            "--turn-cost",
            "--json",
        ],
        dir.path(),
    );
    let report: Json = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["unit"], "bytes");
    let expected = reference(&python, &[fixture.to_str().unwrap(), "-"]);
    assert_eq!(our_turns(&fixture, dir.path()), expected);
}

#[test]
fn knobs_flips_each_variable_as_transformers_renders_it() {
    let test = "knobs_flips_each_variable_as_transformers_renders_it";
    let Some(python) = crate::compare_cli::python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(fixture) = qwen3_session(dir.path(), 2, None) else {
        return;
    };
    let out = chatplate(
        &["knobs", "--fixture", fixture.to_str().unwrap(), "--json"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Json = serde_json::from_str(&stdout(&out)).unwrap();
    let knob = &report["knobs"][0];
    assert_eq!(knob["name"], "enable_thinking");
    // Unset, Qwen3 thinks; flipped, the generation prompt gets an empty think block.
    assert_eq!(
        (&knob["behaves_as"], &knob["flip"]["to"]),
        (&json!(true), &json!(false))
    );
    let expected = reference(
        &python,
        &[
            fixture.to_str().unwrap(),
            "--knob",
            "enable_thinking",
            "false",
        ],
    );
    for key in ["at", "added", "removed"] {
        assert_eq!(knob["flip"][key], expected[key], "{key}");
    }
    // The text form, on the built-in sample conversation.
    let corpus = common::corpus_dir(test).unwrap();
    let template = corpus.join("templates/Qwen-Qwen3-0.6B.jinja");
    let out = chatplate(&["knobs", template.to_str().unwrap()], dir.path());
    let text = stdout(&out);
    assert!(
        text.contains("each knob flipped on the built-in sample"),
        "{text}"
    );
    assert!(
        text.contains("enable_thinking  unset (true)\n      = false: +19 −0 bytes"),
        "{text}"
    );
}

#[test]
fn knobs_finds_a_retention_switch_by_what_it_does_not_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("t.jinja");
    // A made-up name: only what it does makes it a reasoning-retention knob.
    std::fs::write(
        &template,
        "{% for m in messages %}<{{ m.role }}>{% if m.reasoning_content and (keep_past or loop.last) %}\
         [{{ m.reasoning_content }}]{% endif %}{{ m.content }}{% endfor %}",
    )
    .unwrap();
    let out = chatplate(&["knobs", template.to_str().unwrap()], dir.path());
    let text = stdout(&out);
    assert!(
        text.contains("reasoning retention: the prompt shows 2 of the conversation's reasoning texts instead of 0"),
        "{text}"
    );
}
