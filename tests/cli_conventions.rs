//! The CLI conventions CI users rely on: `check --format json|junit`, shell
//! completions and the man page. The real binary, as a user runs it.

#![cfg(feature = "cli")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value as Json};

/// Runs chatplate in `dir`, feeding `input` on standard input.
fn chatplate(args: &[&str], dir: &Path, input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chatplate runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("input written");
    drop(stdin);
    child.wait_with_output().expect("chatplate finishes")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A fixture on an inline template that prints each message's content.
fn fixture(contents: &str, expected: &str) -> String {
    serde_json::to_string_pretty(&json!({
        "version": 1,
        "template": {"source": "{% for m in messages %}{{ m.content }}\n{% endfor %}"},
        "messages": [{"role": "user", "content": contents}],
        "expected": {"prompt": expected},
    }))
    .unwrap()
}

fn two_fixtures(dir: &Path) {
    std::fs::write(dir.join("good.json"), fixture("hi", "hi\n")).unwrap();
    std::fs::write(dir.join("bad.json"), fixture("hi", "ho\n")).unwrap();
}

#[test]
fn check_reports_json() {
    let dir = tempfile::tempdir().unwrap();
    two_fixtures(dir.path());
    let output = chatplate(&["check", ".", "--format", "json"], dir.path(), "");
    assert_eq!(output.status.code(), Some(1));
    let report: Json = serde_json::from_str(&stdout(&output)).expect("stdout is one JSON document");
    assert_eq!(report["passed"], 1);
    assert_eq!(report["failed"], 1);
    let bad = &report["cases"][0];
    assert_eq!(bad["path"], "./bad.json");
    assert_eq!(bad["outcome"], "mismatch");
    assert!(bad["detail"].as_str().unwrap().contains("- ho␊"));
}

#[test]
fn check_reports_junit_xml() {
    let dir = tempfile::tempdir().unwrap();
    two_fixtures(dir.path());
    std::fs::write(dir.path().join("broken.json"), "{ not json").unwrap();
    let output = chatplate(&["check", ".", "--format", "junit"], dir.path(), "");
    assert_eq!(output.status.code(), Some(1));
    let xml = stdout(&output);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>"),
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" errors=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"chatplate check\" name=\"./good.json\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<failure type=\"mismatch\" message=\"FAIL ./bad.json: prompt differs\">"),
        "{xml}"
    );
    assert!(xml.contains("<error type=\"broken\""), "{xml}");
    assert!(xml.trim_end().ends_with("</testsuites>"));
}

#[test]
fn completions_and_man_page_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "_chatplate()"),
        ("zsh", "#compdef chatplate"),
        ("fish", "complete -c chatplate"),
    ] {
        let output = chatplate(&["completions", shell], dir.path(), "");
        assert_eq!(output.status.code(), Some(0));
        let script = stdout(&output);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("junit"),
            "{shell} completes check --format values"
        );
    }
    let output = chatplate(&["man"], dir.path(), "");
    let page = stdout(&output);
    assert!(page.contains(".TH chatplate 1"), "{page}");
    assert!(page.contains("completions"));
}
