//! `chatplate parse` as a user runs it: the real binary, a model's raw output on
//! standard input or from a file, the message as JSON, and the exit codes (0 parsed,
//! 1 the output does not parse, 2 bad input).

use crate::common;
use std::path::PathBuf;

use common::binary::{chatplate, chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SCHEMA: &str = "docs/examples/qwen-response-template.json";
const OUTPUT: &str = "docs/examples/qwen-output.txt";

/// transformers 5.23's `parse_response` for docs/examples/qwen-output.txt with the
/// tools of docs/examples/weather-tools.json (checked with the reference venv).
fn expected_with_tools() -> Json {
    json!({
        "role": "assistant",
        "reasoning_content": "The user wants the weather in Paris and an alarm at 7.",
        "content": "I will check the weather and set the alarm.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
            {"type": "function", "function": {"name": "set_alarm", "arguments": {"hour": 7}}}
        ]
    })
}

#[test]
fn a_schema_and_stdin_give_the_message() {
    let output_text = std::fs::read(repo().join(OUTPUT)).unwrap();
    let args = [
        "parse",
        "--schema",
        SCHEMA,
        "--tools",
        "docs/examples/weather-tools.json",
    ];
    let output = chatplate_with_input(&args, &repo(), &output_text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(message, expected_with_tools());
}

#[test]
fn a_session_brings_its_schema_prefix_and_tools() {
    let args = [
        "parse",
        "docs/examples/weather-session.json",
        "--response",
        OUTPUT,
    ];
    let output = chatplate(&args, &repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(message, expected_with_tools());
}

#[test]
fn an_output_that_does_not_parse_is_exit_1_with_python_s_message() {
    let args = ["parse", "--schema", SCHEMA];
    let output = chatplate_with_input(&args, &repo(), b"<tool_call>{\"name\": x}</tool_call>");
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(stdout(&output).is_empty());
    // transformers 5.23 raises ValueError with this text for the same input.
    assert!(
        stderr(&output).contains(
            "ValueError: json parser could not parse region as JSON.\nContent: '{\"name\": x}'\n\
             Error: Expecting value: line 1 column 10 (char 9)"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_input_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"start_anchor": "A", "fields": {}}"#).unwrap();
    let output = chatplate_with_input(
        &["parse", "--schema", bad.to_str().unwrap()],
        &repo(),
        b"hi",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("response_template.fields must be a non-empty dict"),
        "{}",
        stderr(&output)
    );

    // A template file with no model folder has no schema (a bundled one ships its own).
    let template = repo().join("templates/gemma-3-tools.jinja");
    std::fs::copy(template, dir.path().join("t.jinja")).unwrap();
    let session = dir.path().join("s.json");
    let text = r#"{"version": 1, "template": {"path": "t.jinja"}, "messages": []}"#;
    std::fs::write(&session, text).unwrap();
    let output = chatplate_with_input(&["parse", session.to_str().unwrap()], &repo(), b"hi");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no response_template"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_session_s_schema_path_stays_inside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::fs::copy(repo().join(SCHEMA), dir.path().join("schema.json")).unwrap();
    let text = r#"{"version": 1, "template": {"bundled": "gemma-3-tools"}, "messages": [],
        "response_template": "../schema.json"}"#;
    std::fs::write(inner.join("s.json"), text).unwrap();
    let output = chatplate_with_input(&["parse", "inner/s.json"], dir.path(), b"hi");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("response_template path"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_model_folder_s_tokenizer_config_supplies_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    let schema: Json =
        serde_json::from_str(&std::fs::read_to_string(repo().join(SCHEMA)).unwrap()).unwrap();
    let chat_template =
        std::fs::read_to_string(repo().join("templates/qwen2.5-reasoning-tools.jinja")).unwrap();
    let config = json!({"chat_template": chat_template, "eos_token": "<|im_end|>", "response_template": schema});
    std::fs::write(model.join("tokenizer_config.json"), config.to_string()).unwrap();
    let session = r#"{"version": 1, "template": {"path": "model"}, "messages": [{"role": "user", "content": "Hi"}]}"#;
    std::fs::write(dir.path().join("s.json"), session).unwrap();
    let output = chatplate_with_input(
        &["parse", "s.json"],
        dir.path(),
        b"<think>\nhm\n</think>\n\nHello!<|im_end|>",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        message,
        json!({"role": "assistant", "reasoning_content": "hm", "content": "Hello!"})
    );
}

/// Writes `schema` and `output` in `dir`; the arguments that parse one with the other.
fn hostile_files(dir: &std::path::Path, schema: &Json, output: &str) -> Vec<String> {
    std::fs::write(dir.join("schema.json"), schema.to_string()).unwrap();
    std::fs::write(dir.join("output.txt"), output).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    vec![
        "parse".into(),
        "--schema".into(),
        path("schema.json"),
        "--response".into(),
        path("output.txt"),
    ]
}

/// Runs `chatplate ARGS`, killed (and the test failed) if it hangs.
fn bounded(args: &[String]) -> common::binary::Run {
    let mut command = std::process::Command::new(common::binary::binary_under_test());
    command.args(args).current_dir(repo());
    common::binary::run_bounded(command, std::time::Duration::from_secs(300))
}

#[test]
fn a_variable_look_behind_on_a_long_output_parses_as_python_does() {
    // `(?<=a+)b` rescans every `a` before each position: 83 minutes on 1 MB when every
    // position is tried. Only a `b` can start a match, and there is none: the whole
    // output is the content (Python: the same message, in under a millisecond).
    let dir = tempfile::tempdir().unwrap();
    let schema = json!({"start_anchor": "A", "fields": {"content": {"close_pattern": "(?<=a+)b"}}});
    let output = "a".repeat(1 << 20);
    let run = bounded(&hostile_files(dir.path(), &schema, &output));
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    let message: Json = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(message["content"].as_str().map(str::len), Some(1 << 20));
}

#[test]
fn a_pattern_whose_attempts_grow_with_the_square_of_the_output_stops_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let schema =
        json!({"start_anchor": "A", "fields": {"content": {"close_pattern": "(?:(?<=a+)a)*b"}}});
    let mut args = hostile_files(dir.path(), &schema, &"a".repeat(1 << 20));
    args.extend(["--deadline".into(), "0.5".into()]);
    let run = bounded(&args);
    assert_eq!(run.code(), Some(1), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("LimitExceeded: the parse would take longer than its deadline of 0.5 s")
            && run.stderr.contains("raise it with --deadline"),
        "{}",
        run.stderr
    );
}

#[test]
fn backtracking_without_end_stops_at_the_deadline() {
    // Two ways to match each `a` before a `b` the negative look-ahead refuses: 2^40 paths.
    let dir = tempfile::tempdir().unwrap();
    let schema = json!({"start_anchor": "A", "fields": {"content": {"close_pattern": "(?:(?=a)a|a)*b(?!d)"}}});
    let output = format!("{}bd", "a".repeat(40));
    let mut args = hostile_files(dir.path(), &schema, &output);
    args.extend(["--deadline".into(), "0.3".into()]);
    let run = bounded(&args);
    assert_eq!(run.code(), Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("raise it with --deadline"),
        "{}",
        run.stderr
    );
}

#[test]
fn standard_input_is_read_no_further_than_a_parse_takes() {
    // 64 MiB is what a parse takes: the read stops one byte past it, not at the 256 MiB
    // of a session file.
    let input = vec![b'x'; (64 << 20) + 4096];
    let output = chatplate_with_input(&["parse", "--schema", SCHEMA], &repo(), &input);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("<stdin>: 67108865 bytes is more than the 67108864 bytes"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_long_region_is_cut_in_the_error_with_its_size() {
    // transformers repeats the whole region in its message; chatplate keeps the first
    // 1,000 characters and says how long it was.
    let region = format!("{{\"name\": x{}}}", " ".repeat(3 << 20));
    let text = format!("<tool_call>{region}</tool_call>");
    let output = chatplate_with_input(&["parse", "--schema", SCHEMA], &repo(), text.as_bytes());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let error = stderr(&output);
    assert!(error.len() < 4000, "{} bytes of error", error.len());
    assert!(
        error.contains(&format!("'… ({} bytes in all)", region.len()))
            && error.contains("Error: Expecting value: line 1 column 10 (char 9)"),
        "{error}"
    );
}
