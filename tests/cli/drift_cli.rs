//! Template drift through the real binary: `check --bless` records `template.sha256`, and
//! `check` then tells "template changed since the fixture was blessed" apart from "prompt
//! differs", with the template's own diff when the Hugging Face cache still has the old
//! text.

use std::path::Path;
use std::process::Output;

use crate::common::binary::{command, stdout};
use crate::hf_support;
use chatplate_core::session::{template_sha256, Session};

fn check(args: &[&str], dir: &Path) -> Output {
    command(&[&["check", "--color", "never"], args].concat(), dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", dir.join("cache"))
        .output()
        .expect("chatplate runs")
}

fn write_fixture(dir: &Path, template: &str) {
    let text = format!(
        r#"{{"version": 1, "template": {template}, "messages": [{{"role": "user", "content": "Hi"}}]}}"#
    );
    std::fs::write(dir.join("f.json"), text).unwrap();
}

#[test]
fn bless_records_the_hash_of_the_template_text() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    hf_support::fake_cache(&dir.join("cache"));
    write_fixture(dir, r#"{"model": {"id": "acme/chat"}}"#);
    let blessed = check(&["--bless", "f.json"], dir);
    assert_eq!(blessed.status.code(), Some(0), "{}", stdout(&blessed));
    let session = Session::load(&dir.join("f.json")).unwrap();
    let want = template_sha256(&hf_support::template("main"));
    assert_eq!(session.template_sha256, Some(want));
    let text = std::fs::read_to_string(dir.join("f.json")).unwrap();
    assert!(text.contains("\"sha256\": \""), "{text}");
}

#[test]
fn a_changed_model_template_is_reported_with_its_own_diff() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let repo = hf_support::fake_cache(&dir.join("cache"));
    write_fixture(dir, r#"{"model": {"id": "acme/chat"}}"#);
    assert_eq!(check(&["--bless", "f.json"], dir).status.code(), Some(0));
    // The model is updated: `main` now resolves to the other commit's template.
    hf_support::set_ref(&repo, "main", hf_support::V1);
    let out = check(&["f.json"], dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL f.json: template changed since the fixture was blessed"),
        "{text}"
    );
    assert!(
        text.contains("the blessed text is acme/chat at commit 1111111"),
        "{text}"
    );
    assert!(text.contains("template diff (blessed -> now):"), "{text}");
    assert!(
        text.contains("- (main){%") && text.contains("+ (v1){%"),
        "{text}"
    );
    assert!(
        text.contains("\nand: prompt differs\n@@ line 1 @@\n- (main)<s>Hi</s>"),
        "{text}"
    );
    assert_eq!(text.matches("FAIL").count(), 1, "{text}");
}

#[test]
fn a_changed_file_template_says_the_old_text_is_gone_and_passes_when_the_prompt_holds() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("t.jinja"), "{{ messages[0].content }}").unwrap();
    write_fixture(dir, r#"{"path": "t.jinja"}"#);
    assert_eq!(check(&["--bless", "f.json"], dir).status.code(), Some(0));
    // A comment changes the text but not the prompt: a pass, with a note.
    std::fs::write(dir.join("t.jinja"), "{# tidied #}{{ messages[0].content }}").unwrap();
    let out = check(&["f.json"], dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("template changed since the fixture was blessed")
            && text.contains("the prompt is the same"),
        "{text}"
    );
    // Now the prompt changes too: both are said, and why there is no template diff.
    std::fs::write(dir.join("t.jinja"), "{{ messages[0].content | upper }}").unwrap();
    let out = check(&["f.json"], dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("the blessed text is not available"), "{text}");
    assert!(text.contains("prompt differs"), "{text}");
}

#[test]
fn a_fixture_without_a_hash_checks_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("t.jinja"), "{{ messages[0].content }}").unwrap();
    write_fixture(dir, r#"{"path": "t.jinja"}"#);
    let mut session = Session::load(&dir.join("f.json")).unwrap();
    session.expected = Some(chatplate_core::session::Expected::Prompt("Hi".into()));
    session.save(&dir.join("f.json")).unwrap();
    std::fs::write(dir.join("t.jinja"), "{{ messages[0].content }}!").unwrap();
    let out = check(&["f.json"], dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL f.json: prompt differs"), "{text}");
    assert!(!text.contains("template changed"), "{text}");
}
