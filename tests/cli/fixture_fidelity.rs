//! Fixtures and request bodies take what transformers takes, and `check` accepts only
//! what it can really check: a message `content` given as an object renders as
//! transformers renders it, an empty expected error is refused, and a template that
//! cannot be read is a broken fixture whatever error it expects.

use std::path::Path;

use serde_json::json;

use crate::common::binary::{chatplate, stderr, stdout};

/// Prints each message's content on its own line.
const LINES_TEMPLATE: &str = "{% for m in messages %}{{ m.content }}\n{% endfor %}";

/// transformers 5.23.0, `render_jinja_template` of [`LINES_TEMPLATE`] with the messages
/// of [`object_messages`]: the dict printed as Python prints it.
const OBJECT_PROMPT: &str = "{'text': 'hi', 'n': [1, 2.5, None, True]}\n7\n";

fn object_messages() -> serde_json::Value {
    json!([
        {"role": "user", "content": {"text": "hi", "n": [1, 2.5, null, true]}},
        {"role": "assistant", "content": 7}
    ])
}

fn write_json(path: &Path, value: &serde_json::Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

#[test]
fn a_fixture_with_object_content_checks_against_transformers_render() {
    let dir = tempfile::tempdir().unwrap();
    let session = |expected: serde_json::Value| {
        json!({
            "version": 1,
            "template": {"source": LINES_TEMPLATE},
            "messages": object_messages(),
            "expected": expected,
        })
    };
    write_json(
        &dir.path().join("object.json"),
        &session(json!({"prompt": OBJECT_PROMPT})),
    );
    // transformers: `m.role + ': ' + m.content` raises for the dict.
    let mut concatenating = session(json!({
        "exception": "TypeError: can only concatenate str (not \"dict\") to str"
    }));
    concatenating["template"]["source"] =
        json!("{% for m in messages %}{{ m.role + ': ' + m.content }}\n{% endfor %}");
    write_json(&dir.path().join("concatenating.json"), &concatenating);
    let output = chatplate(&["check", "."], dir.path());
    assert_eq!(
        stdout(&output).lines().last(),
        Some("2 passed, 0 failed"),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn a_request_body_with_object_content_imports_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lines.jinja"), LINES_TEMPLATE).unwrap();
    write_json(
        &dir.path().join("body.json"),
        &json!({"model": "m", "messages": object_messages(), "add_generation_prompt": false}),
    );
    let import = chatplate(
        &[
            "import",
            "body.json",
            "--template",
            "lines.jinja",
            "--bless",
            "-o",
            "session.json",
        ],
        dir.path(),
    );
    assert_eq!(import.status.code(), Some(0), "{}", stderr(&import));
    let render = chatplate(&["render", "session.json"], dir.path());
    assert_eq!(render.status.code(), Some(0), "{}", stderr(&render));
    assert_eq!(stdout(&render), OBJECT_PROMPT);
    let check = chatplate(&["check", "session.json"], dir.path());
    assert_eq!(stdout(&check).lines().last(), Some("1 passed, 0 failed"));
}

#[test]
fn an_empty_expected_error_is_refused_with_what_to_write_instead() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = |name: &str, template: serde_json::Value| {
        write_json(
            &dir.path().join(name),
            &json!({
                "version": 1,
                "template": template,
                "messages": [{"role": "user", "content": "hi"}],
                "expected": {"error": ""},
            }),
        );
    };
    fixture(
        "raises.json",
        json!({"source": "{{ raise_exception('no') }}"}),
    );
    fixture("missing.json", json!({"path": "missing.jinja"}));
    let output = chatplate(&["check", "."], dir.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert_eq!(text.lines().last(), Some("0 passed, 2 failed"), "{text}");
    assert!(
        text.contains("the expected error is empty, which any error would match"),
        "{text}"
    );
    assert!(text.contains("--bless"), "{text}");
}

#[test]
fn a_missing_template_is_broken_whatever_error_is_expected_and_bless_keeps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.json");
    let session = json!({
        "version": 1,
        "template": {"path": "missing.jinja"},
        "messages": [{"role": "user", "content": "hi"}],
        "expected": {"error": "missing.jinja"},
    });
    write_json(&path, &session);
    let before = std::fs::read_to_string(&path).unwrap();
    let output = chatplate(&["check", "missing.json"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert_eq!(stdout(&output).lines().last(), Some("0 passed, 1 failed"));
    let blessed = chatplate(&["check", "--bless", "missing.json"], dir.path());
    assert_ne!(blessed.status.code(), Some(0), "{}", stdout(&blessed));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}
