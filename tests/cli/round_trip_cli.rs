//! `assert_round_trip` as `chatplate check` runs it: every assistant message, rendered
//! with a bundled template and cut out as the model would have generated it, parses back
//! into itself with the fixture's `response_template`; a message that does not shows as a
//! diff, like a prompt diff.

use crate::common;
use std::path::{Path, PathBuf};

use common::binary::{chatplate, stderr, stdout};
use serde_json::{json, Value as Json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture in `dir` for a bundled template and our schema for its format, blessed.
fn fixture(dir: &Path, bundled: &str, messages: Json) -> PathBuf {
    let schema = repo().join(format!("tests/data/parse/schemas/{bundled}.json"));
    std::fs::copy(schema, dir.join("schema.json")).unwrap();
    let session = json!({
        "version": 1,
        "template": {"bundled": bundled},
        "response_template": "schema.json",
        "assert_round_trip": true,
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    });
    let path = dir.join("session.json");
    std::fs::write(&path, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    let blessed = chatplate(&["check", "--bless", "session.json"], dir);
    assert_eq!(blessed.status.code(), Some(0), "{}", stdout(&blessed));
    path
}

fn conversation(final_message: Json) -> Json {
    json!([
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}}]},
        {"role": "tool", "content": "sunny"},
        final_message
    ])
}

#[test]
fn bundled_templates_round_trip_with_their_schemas() {
    for bundled in [
        "qwen2.5-reasoning-tools",
        "gemma-3-tools",
        "chatml-with-headers-tools",
    ] {
        let dir = tempfile::tempdir().unwrap();
        fixture(
            dir.path(),
            bundled,
            conversation(json!({"role": "assistant", "content": "Sunny."})),
        );
        let output = chatplate(&["check", "session.json"], dir.path());
        assert_eq!(
            output.status.code(),
            Some(0),
            "{bundled}: {}{}",
            stdout(&output),
            stderr(&output)
        );
        assert!(
            stdout(&output).contains("1 passed, 0 failed"),
            "{}",
            stdout(&output)
        );
    }
}

#[test]
fn a_message_the_template_drops_a_field_of_fails_with_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let last =
        json!({"role": "assistant", "content": "Sunny.", "reasoning_content": "The tool said so."});
    fixture(dir.path(), "qwen2.5-reasoning-tools", conversation(last));
    let output = chatplate(&["check", "session.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let report = stdout(&output);
    assert!(
        report.contains("assert_round_trip: messages[3] parses back into a different message"),
        "{report}"
    );
    assert!(
        report.contains("- ··\"reasoning_content\":·\"The·tool·said·so.\","),
        "{report}"
    );
}

#[test]
fn a_round_trip_without_a_schema_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(
        dir.path(),
        "gemma-3-tools",
        conversation(json!({"role": "assistant", "content": "Hi"})),
    );
    let mut session: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    session.as_object_mut().unwrap().remove("response_template");
    // A bundled template ships its schema: a copy of it as a plain file has none.
    let source = repo().join("templates/gemma-3-tools.jinja");
    std::fs::copy(source, dir.path().join("t.jinja")).unwrap();
    session["template"] = json!({"path": "t.jinja"});
    std::fs::write(&path, session.to_string()).unwrap();
    let output = chatplate(&["check", "session.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("assert_round_trip: the session has no response_template"),
        "{}",
        stdout(&output)
    );
}

/// A blessed fixture in `dir` whose `response_template` closes the content with `close`,
/// its one assistant message `content`.
fn hostile_fixture(dir: &Path, close: &str, content: &str) {
    let session = json!({
        "version": 1,
        "template": {"bundled": "qwen2.5-reasoning-tools"},
        "response_template": {"defaults": {"role": "assistant"},
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {"content": {"close_pattern": close}}},
        "assert_round_trip": true,
        "messages": [{"role": "user", "content": "Say a."},
                     {"role": "assistant", "content": content}],
    });
    std::fs::write(dir.join("session.json"), session.to_string()).unwrap();
    let blessed = chatplate(&["check", "--bless", "session.json"], dir);
    assert_eq!(blessed.status.code(), Some(0), "{}", stdout(&blessed));
}

/// `chatplate check session.json` in `dir`, failed if it hangs.
fn bounded_check(dir: &Path) -> common::binary::Run {
    let mut command = std::process::Command::new(common::binary::binary_under_test());
    command.args(["check", "session.json"]).current_dir(dir);
    common::binary::run_bounded(command, std::time::Duration::from_secs(300))
}

#[test]
fn a_look_behind_schema_round_trips_a_long_message_as_python_would() {
    // Trying `(?<=a+)` at every position rescans the message before it: minutes at
    // 300 KB. Only where `<|im_end|>` follows can it match.
    let dir = tempfile::tempdir().unwrap();
    hostile_fixture(dir.path(), "(?<=a+)<\\|im_end\\|>", &"a".repeat(300_000));
    let run = bounded_check(dir.path());
    assert_eq!(run.code(), Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("1 passed, 0 failed"), "{}", run.stdout);
}

#[test]
fn a_schema_whose_parse_grows_with_the_square_of_the_message_fails_by_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    hostile_fixture(
        dir.path(),
        "(?:(?<=a+)a)*<\\|im_end\\|>",
        &"a".repeat(300_000),
    );
    let run = bounded_check(dir.path());
    assert_eq!(run.code(), Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("the generated text does not parse: LimitExceeded: the parse would take longer than its deadline")
            && run.stdout.contains("raise it with --deadline"),
        "{}",
        run.stdout
    );
}
