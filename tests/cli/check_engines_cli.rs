//! `check --engines` with real engines: bare MiniJinja in-process, @huggingface/jinja on
//! Node and the CI venv's transformers (skipped when missing; a failure under CI=true).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::binary::{command, stdout};
use crate::compare_cli::{node_path, python};

/// A blessed fixture on an inline template, in `dir`.
fn fixture(dir: &Path, name: &str, template: &str, prompt: &str) {
    let body = serde_json::json!({
        "version": 1,
        "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi"}],
        "expected": {"prompt": prompt},
    });
    std::fs::write(dir.join(name), body.to_string()).unwrap();
}

fn check(args: &[&str], dir: &Path, setup: impl FnOnce(&mut Command)) -> Output {
    let mut command = command(&[&["check", "--color", "never"], args].concat(), dir);
    command
        .env_remove("CHATPLATE_PYTHON")
        .env("HF_HUB_OFFLINE", "1");
    setup(&mut command);
    command.output().expect("chatplate runs")
}

/// Plain text every engine renders alike; `tojson` of an apostrophe, which bare MiniJinja
/// escapes as \u0027 where Python's json.dumps keeps it.
fn corpus(dir: &Path) {
    fixture(
        dir,
        "plain.json",
        "{% for m in messages %}[{{ m.content }}]{% endfor %}",
        "[Hi]",
    );
    fixture(dir, "quote.json", "{{ \"it's\" | tojson }}", "\"it's\"");
}

#[test]
fn minijinja_disagreeing_fails_the_fixture_with_compares_diff() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let out = check(&[".", "--engines", "minijinja"], dir.path(), |_| {});
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL ./quote.json: 1 of 1 engines disagree with transformers: 6 bytes\n"),
        "{text}"
    );
    assert!(text.contains("minijinja (minijinja 3.1.0"), "{text}");
    assert!(
        text.contains(": differs at byte 3 (line 1:4)\n  transformers: \"\\\"it's\\\"\"\n"),
        "{text}"
    );
    assert!(text.contains("1 passed, 1 failed"), "{text}");
    // The same fixtures without --engines pass: the cross-check is what failed them.
    let plain = check(&["."], dir.path(), |_| {});
    assert_eq!(plain.status.code(), Some(0), "{}", stdout(&plain));
    // In the JSON report the case is `engines_disagree`.
    let json = check(
        &[".", "--engines", "minijinja", "--format", "json"],
        dir.path(),
        |_| {},
    );
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let outcomes: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["pass", "engines_disagree"]);
}

#[test]
fn an_unknown_engine_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let out = check(&[".", "--engines", "minijinja,jinja2"], dir.path(), |_| {});
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the engines are"));
}

#[test]
fn hf_jinja_agrees_on_both_and_python_agrees_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    if let Some(node_path) = node_path("hf_jinja_agrees_on_both") {
        let out = check(&[".", "--engines", "hf-jinja"], dir.path(), |c| {
            c.env("NODE_PATH", &node_path);
        });
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
    if let Some(python) = python("python_agrees_with_the_reference") {
        let out = check(
            &[".", "--engines", "python", "--python", &python],
            dir.path(),
            |_| {},
        );
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
}

#[test]
fn a_missing_engine_fails_the_fixture_and_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "plain.json", "{{ messages[0].content }}", "Hi");
    let out = check(&[".", "--engines", "python"], dir.path(), |_| {});
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("python is not available") && text.contains("pip install transformers"),
        "{text}"
    );
}
