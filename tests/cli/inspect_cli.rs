//! `chatplate inspect` and `assert_prefix_stable` as a user runs them: the real binary,
//! its JSON and exit codes.

use crate::common;
use std::path::{Path, PathBuf};

use common::binary::{chatplate, chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The keys minja names, with the JSON type each must have.
const MINJA_KEYS: [&str; 10] = [
    "supports_system_role",
    "supports_tools",
    "supports_tool_calls",
    "supports_tool_responses",
    "supports_tool_call_id",
    "supports_parallel_tool_calls",
    "requires_object_arguments",
    "requires_non_null_content",
    "requires_typed_content",
    "supports_reasoning",
];

#[test]
fn inspect_json_uses_minja_names_with_evidence() {
    let output = chatplate(&["inspect", "gemma-3-tools", "--json"], &repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Json = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["template"], "gemma-3-tools");
    for key in MINJA_KEYS {
        assert!(report[key].is_boolean(), "{key}: {}", report[key]);
        let evidence = &report["evidence"][key];
        assert!(
            evidence["probe"].as_str().is_some_and(|p| !p.is_empty()),
            "{key}"
        );
        assert!(
            evidence["observed"].as_str().is_some_and(|o| !o.is_empty()),
            "{key}"
        );
    }
    assert_eq!(report["reasoning_format"], "NONE");
    assert_eq!(report["supports_tools"], true);
    assert_eq!(report["roles"]["tool"], "renders");
    assert!(report["variables"].is_array());
}

#[test]
fn inspect_text_explains_each_answer() {
    let output = chatplate(&["inspect", "qwen2.5-reasoning-tools"], &repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("requires_object_arguments      yes\n"),
        "{text}"
    );
    assert!(text.contains("JSON-encoded a second time"), "{text}");
}

#[test]
fn inspect_fixture_adds_attribution_dropped_fields_and_stability() {
    let output = chatplate(
        &["inspect", "--fixture", "sessions/example.json", "--json"],
        &repo(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Json = serde_json::from_slice(&output.stdout).unwrap();
    let attribution = &report["attribution"];
    assert_eq!(attribution["prefix_monotone"], true);
    assert_eq!(attribution["message_bytes"].as_array().unwrap().len(), 5);
    assert!(attribution["tools_block"].is_array(), "{attribution}");
    let unused = report["dropped_fields"]["unused"].as_array().unwrap();
    assert!(
        unused.contains(&json!("messages[3].tool_call_id")),
        "{unused:?}"
    );
    assert_eq!(report["prefix_stability"]["stable"], true);
    assert_eq!(report["prefix_stability"]["appended"], json!(["user"]));
}

#[test]
fn inspect_rejects_bad_input_with_the_right_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let output = chatplate(&["inspect", "no-such-template"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no bundled template"),
        "{}",
        stderr(&output)
    );
    std::fs::write(dir.path().join("bad.jinja"), "{% for %}").unwrap();
    let output = chatplate(&["inspect", "bad.jinja"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("syntax error"),
        "{}",
        stderr(&output)
    );
    let output = chatplate(&["inspect"], dir.path());
    assert_eq!(
        output.status.code(),
        Some(2),
        "a template or fixture is required"
    );
}

/// A fixture on an inline template that renders past reasoning only for the last turn.
fn reasoning_fixture(dir: &Path, strips: bool) -> PathBuf {
    let condition = if strips { "loop.last and " } else { "" };
    let source = format!(
        "{{% for m in messages %}}<{{{{ m.role }}}}>{{% if {condition}m.reasoning_content %}}<think>{{{{ m.reasoning_content }}}}</think>{{% endif %}}{{{{ m.content }}}}\n{{% endfor %}}{{% if add_generation_prompt %}}<assistant>{{% endif %}}"
    );
    let session = json!({
        "version": 1,
        "template": {"source": source},
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello", "reasoning_content": "greet back"}
        ],
        "expected": {"error": ""},
        "assert_prefix_stable": true,
    });
    let path = dir.join(if strips { "strips.json" } else { "keeps.json" });
    std::fs::write(&path, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    let blessed = chatplate(&["check", "--bless", path.to_str().unwrap()], dir);
    assert_eq!(blessed.status.code(), Some(0), "{}", stderr(&blessed));
    path
}

#[test]
fn check_asserts_prefix_stability_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let keeps = reasoning_fixture(dir.path(), false);
    let output = chatplate(&["check", keeps.to_str().unwrap()], dir.path());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let strips = reasoning_fixture(dir.path(), true);
    let output = chatplate(&["check", strips.to_str().unwrap()], dir.path());
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("assert_prefix_stable"), "{text}");
    assert!(text.contains("produced by message 1"), "{text}");
    assert!(text.contains("<think>greet back"), "{text}");
    // The flag survives a bless.
    let saved = std::fs::read_to_string(&strips).unwrap();
    assert!(saved.contains("\"assert_prefix_stable\": true"), "{saved}");
}

#[test]
fn readme_has_the_generated_capability_table() {
    let output = chatplate(
        &[
            "inspect",
            "--table",
            "--var",
            "functions=\"[]\"",
            "--var",
            "datetime=\"2026-01-15 00:00:00\"",
        ],
        &repo(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    let docs = std::fs::read_to_string(repo().join("docs/inspect.md")).unwrap();
    assert!(
        docs.contains(table.as_ref()),
        "docs/inspect.md lacks the current table; paste:\n{table}"
    );
}

#[test]
fn inspect_reads_a_template_or_a_fixture_from_stdin() {
    let template = std::fs::read(repo().join("templates/gemma-3-tools.jinja")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = chatplate_with_input(&["inspect", "-", "--json"], dir.path(), &template);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let from_stdin: Json = serde_json::from_slice(&output.stdout).unwrap();
    let from_name = chatplate(&["inspect", "gemma-3-tools", "--json"], &repo());
    let from_name: Json = serde_json::from_slice(&from_name.stdout).unwrap();
    assert_eq!(from_stdin["supports_tools"], from_name["supports_tools"]);
    assert_eq!(from_stdin["template"], "stdin");

    let fixture = std::fs::read(repo().join("sessions/example.json")).unwrap();
    let args = ["inspect", "--fixture", "-", "--json"];
    // A bundled template: no path to resolve, so any working directory will do.
    let output = chatplate_with_input(&args, dir.path(), &fixture);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Json = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["template"], "<stdin>");
    assert_eq!(report["prefix_stability"]["stable"], true);
    let text = chatplate_with_input(&["inspect", "--fixture", "-"], dir.path(), &fixture);
    assert!(stdout(&text).starts_with("<stdin>\n"), "{}", stdout(&text));
}
