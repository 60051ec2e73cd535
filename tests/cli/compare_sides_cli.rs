//! `chatplate compare --template SOURCE --revision REV`: the session's conversation
//! rendered by chatplate with another template, or with its model at another revision of
//! the Hugging Face cache (a tree in huggingface_hub's layout, offline).

use std::path::Path;
use std::process::Output;

use crate::common::binary::{command, stderr, stdout};
use crate::hf_support;
use serde_json::Value as Json;

fn compare(args: &[&str], dir: &Path) -> Output {
    command(&[&["compare", "--color", "never"], args].concat(), dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", dir.join("cache"))
        .output()
        .expect("chatplate runs")
}

/// A session on `acme/chat` (main) in a fresh cache, with a template file beside it.
fn setup(dir: &Path) {
    hf_support::fake_cache(&dir.join("cache"));
    let session = r#"{"version": 1, "template": {"model": {"id": "acme/chat"}},
        "messages": [{"role": "user", "content": "Hi"}]}"#;
    std::fs::write(dir.join("s.json"), session).unwrap();
    // A bare template file brings no special tokens: it prints its own.
    let same = "{% for m in messages %}(main)<s>{{ m.content }}</s>{% endfor %}";
    std::fs::write(dir.join("same.jinja"), same).unwrap();
}

#[test]
fn another_revision_of_the_sessions_model_is_a_side() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = compare(&["s.json", "--revision", "v1"], dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.starts_with("transformers (chatplate "), "{text}");
    assert!(
        text.contains("revision v1 (HF cache acme/chat@v1 2222222 (chat_template.jinja)): differs at byte 1 (line 1:2)"),
        "{text}"
    );
    assert!(text.contains("  acme/chat@v1: \"(v1)<s>Hi</s>\""), "{text}");
    assert!(
        text.ends_with("0 of 1 renders agree with transformers\n"),
        "{text}"
    );
    let json = compare(&["s.json", "--revision", "v1", "--json"], dir.path());
    let report: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["first_difference"], 1);
    let side = &report["renders"][1];
    assert_eq!(side["engine"], "transformers");
    assert_eq!(side["template"], "acme/chat");
    assert_eq!(side["prompt"], "(v1)<s>Hi</s>");
    assert!(side["source"]
        .as_str()
        .unwrap()
        .starts_with("HF cache acme/chat@v1 2222222"));
    assert_eq!(report["renders"][0]["prompt"], "(main)<s>Hi</s>");
}

#[test]
fn a_template_file_that_renders_the_same_agrees_beside_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let args = [
        "s.json",
        "--template",
        "same.jinja",
        "--engine",
        "minijinja",
    ];
    let out = compare(&args, dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("template same (file "), "{text}");
    assert!(text.contains("minijinja (minijinja 3.1.0"), "{text}");
    assert!(
        text.ends_with("2 of 2 renders agree with transformers\n"),
        "{text}"
    );
}

#[test]
fn a_bundled_template_gets_the_sessions_conversation() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let json = compare(
        &[
            "s.json",
            "--template",
            "chatml-with-headers-tools",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(json.status.code(), Some(1), "{}", stderr(&json));
    let report: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["renders"][1]["template"],
        "chatml-with-headers-tools"
    );
    assert_eq!(report["renders"][1]["source"], "bundled");
    assert_eq!(report["first_difference"], 0);
    assert!(report["renders"][1]["prompt"]
        .as_str()
        .unwrap()
        .contains("Hi"));
}

#[test]
fn a_missing_template_or_a_revision_without_a_model_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let missing = compare(&["s.json", "--template", "nope.jinja"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("nope.jinja"),
        "{}",
        stderr(&missing)
    );
    let inline = r#"{"version": 1, "template": {"source": "{{ 1 }}"}, "messages": [{"role": "user", "content": "Hi"}]}"#;
    std::fs::write(dir.path().join("inline.json"), inline).unwrap();
    let out = compare(&["inline.json", "--revision", "v1"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--revision v1: the session's template is not a model from the Hugging Face cache (inline)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_session_on_a_path_into_a_cached_snapshot_compares_another_revision() {
    let dir = tempfile::tempdir().unwrap();
    // Another cache than HF_HUB_CACHE: the revision comes from the cache the path is in.
    hf_support::fake_cache(&dir.path().join("other"));
    let path = format!(
        "other/models--acme--chat/snapshots/{}/chat_template.jinja",
        hf_support::MAIN
    );
    let session = serde_json::json!({"version": 1, "template": {"path": path},
        "messages": [{"role": "user", "content": "Hi"}]});
    std::fs::write(dir.path().join("s.json"), session.to_string()).unwrap();
    let out = compare(&["s.json", "--revision", "v1", "--json"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["renders"][0]["prompt"], "(main)<s>Hi</s>");
    assert_eq!(report["renders"][1]["prompt"], "(v1)<s>Hi</s>");
    assert_eq!(report["first_difference"], 1);
}
