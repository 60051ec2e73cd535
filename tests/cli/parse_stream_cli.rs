//! `chatplate parse --stream`, `--chunks` and `--check-chunkings` as a user runs them,
//! and the `response_template`s the bundled templates ship with: the real binary,
//! compared with what transformers 5.23 gives.

use crate::common;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use common::binary::{binary_under_test, chatplate, chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SCHEMA: &str = "docs/examples/qwen-response-template.json";
const OUTPUT: &str = "docs/examples/qwen-output.txt";
const TOOLS: &str = "docs/examples/weather-tools.json";

/// transformers' events and message for the docs' example in `chunking`, as written by
/// scripts/make_stream_goldens.py (tests/data/parse/cli_chunks.json).
fn transformers_lines(chunking: &str) -> Vec<Json> {
    let text = std::fs::read_to_string(repo().join("tests/data/parse/cli_chunks.json")).unwrap();
    let goldens: Json = serde_json::from_str(&text).unwrap();
    goldens[chunking].as_array().unwrap().clone()
}

fn lines(output: &std::process::Output) -> Vec<Json> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn chunks_of_seven_bytes_print_transformers_events_then_the_message() {
    let args = [
        "parse",
        "--schema",
        SCHEMA,
        "--tools",
        TOOLS,
        "--response",
        OUTPUT,
        "--chunks",
        "7",
    ];
    let output = chatplate(&args, &repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&output), transformers_lines("every-7"));
}

#[cfg(feature = "tokens")]
#[test]
fn token_chunks_print_transformers_events() {
    let test = "token_chunks_print_transformers_events";
    let Some(qwen) = crate::tokens_support::real_tokenizer("qwen3", test) else {
        return;
    };
    let qwen = qwen.to_string_lossy().into_owned();
    let args = [
        "parse",
        "--schema",
        SCHEMA,
        "--tools",
        TOOLS,
        "--response",
        OUTPUT,
        "--chunks",
        "tokens",
        "--tokenizer",
        &qwen,
    ];
    let output = chatplate(&args, &repo());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(lines(&output), transformers_lines("tokens"));
    // Without a tokenizer, token chunks are refused with what to give.
    let args = [
        "parse",
        "--schema",
        SCHEMA,
        "--response",
        OUTPUT,
        "--chunks",
        "tokens",
    ];
    let output = chatplate(&args, &repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("give --tokenizer PATH"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_chunk_sizes_are_refused() {
    let output = chatplate(&["parse", "--schema", SCHEMA, "--chunks", "0"], &repo());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("expected `tokens` or a positive number of bytes"),
        "{}",
        stderr(&output)
    );
}

/// Reads `child`'s stdout lines on a thread, so the test can wait for one with a bound.
fn line_reader(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

#[test]
fn stream_prints_each_event_as_soon_as_the_output_settles_it() {
    let mut child = std::process::Command::new(binary_under_test())
        .args(["parse", "--schema", SCHEMA, "--stream"])
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let received = line_reader(child.stdout.take().unwrap());
    let next = || -> Json {
        let line = received
            .recv_timeout(Duration::from_secs(60))
            .expect("an event");
        serde_json::from_str(&line).unwrap()
    };
    // The reasoning closes while the output is still open: its events come before EOF.
    stdin
        .write_all(b"<think>\nWeather.\n</think>\n\nSun")
        .unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        next(),
        json!({"type": "region_open", "field": "reasoning_content"})
    );
    assert_eq!(
        next(),
        json!({"type": "region_chunk", "field": "reasoning_content", "text": "\nWeather.\n", "dirty": false})
    );
    assert_eq!(
        next(),
        json!({"type": "region_close", "field": "reasoning_content", "value": "Weather."})
    );
    // `</think>\s*` could still grow: the blank lines wait for the next text, then the
    // content streams; `<|im_e` is held back as the start of a possible `<|im_end|>`.
    assert_eq!(next(), json!({"type": "region_open", "field": "content"}));
    assert_eq!(
        next(),
        json!({"type": "region_chunk", "field": "content", "text": "Sun", "dirty": false})
    );
    stdin.write_all(b"ny.<|im_e").unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        next(),
        json!({"type": "region_chunk", "field": "content", "text": "ny.", "dirty": false})
    );
    stdin.write_all(b"nd|>").unwrap();
    drop(stdin);
    assert_eq!(
        next(),
        json!({"type": "region_close", "field": "content", "value": "Sunny."})
    );
    assert_eq!(
        next(),
        json!({"role": "assistant", "reasoning_content": "Weather.", "content": "Sunny."})
    );
    assert!(child.wait().unwrap().success());
}

/// A Qwen-style output whose JSON argument holds `</tool_call>`: the call closes inside
/// the string, whole and in every chunking alike, so the JSON does not parse (transformers
/// 5.23 raises the same error; see tests/data/parse/stream_goldens.json,
/// `stream/failure/close-marker-in-json-argument`).
const CLOSE_IN_ARGUMENT: &str = "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"text\": \"end with </tool_call> here\"}}\n</tool_call><|im_end|>";

#[test]
fn check_chunkings_finds_every_chunking_parses_as_whole() {
    let args = ["parse", "--schema", SCHEMA, "--check-chunkings"];
    let output = chatplate_with_input(&args, &repo(), CLOSE_IN_ARGUMENT.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = stdout(&output);
    assert!(
        report.starts_with(
            "whole: does not parse: ValueError: json parser could not parse region as JSON."
        ),
        "{report}"
    );
    for line in [
        "every byte (105 chunks): same",
        "random lengths (seed 1) (",
        "random lengths (seed 3) (",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    assert!(!report.contains("DIFFERS"), "{report}");
    // No tokenizer here: the token chunking is left out, and a note says why.
    assert!(
        stderr(&output).contains("no tokenizer, so no token chunking (give --tokenizer PATH)"),
        "{}",
        stderr(&output)
    );
}

/// A session on bundled template `name` with no `response_template` of its own.
fn bundled_session(dir: &Path, name: &str, extra: Json) -> PathBuf {
    let mut session = json!({
        "version": 1,
        "template": {"bundled": name},
        "bos_token": "<|begin_of_text|>",
        "add_generation_prompt": true,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}],
        "variables": {"functions": "[]", "datetime": "2026-12-03"}
    });
    session
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, session.to_string()).unwrap();
    path
}

/// Each bundled template's format and transformers 5.23's `parse_response` of it with the
/// shipped schema, the session's rendered prompt as `prefix=` and its tools as `tools=`
/// (checked with the reference venv).
fn bundled_outputs() -> Vec<(&'static str, &'static str, Json)> {
    let call = json!([{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}]);
    vec![
        (
            "qwen2.5-reasoning-tools",
            "<think>\nweather\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call><|im_end|>",
            json!({"role": "assistant", "reasoning_content": "weather", "content": "Let me check.", "tool_calls": call}),
        ),
        (
            "gemma-3-tools",
            "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call><end_of_turn>",
            json!({"role": "assistant", "content": "Checking.", "tool_calls": call}),
        ),
        (
            "chatml-with-headers-tools",
            "Checking.<|tool_start|>[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}}]<|tool_end|><|eot_id|>",
            json!({"role": "assistant", "content": "Checking.", "tool_calls": call}),
        ),
        (
            "firefunction-v2",
            " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}]<|eot_id|>",
            json!({"role": "assistant", "tool_calls": call}),
        ),
    ]
}

#[test]
fn every_bundled_template_parses_with_the_schema_it_ships() {
    let dir = tempfile::tempdir().unwrap();
    for (name, output_text, expected) in bundled_outputs() {
        let session = bundled_session(dir.path(), name, json!({}));
        let args = ["parse", session.to_str().unwrap()];
        let output = chatplate_with_input(&args, dir.path(), output_text.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        let message: Json = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(message, expected, "{name}");
        // Streamed byte by byte, the same message.
        let args = ["parse", session.to_str().unwrap(), "--check-chunkings"];
        let output = chatplate_with_input(&args, dir.path(), output_text.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stdout(&output));
    }
}

#[test]
fn a_session_s_own_schema_wins_over_the_bundled_one() {
    let dir = tempfile::tempdir().unwrap();
    let own = json!({"start_anchor": "<|im_start|>assistant\n", "fields": {"answer": {"close": "<|im_end|>"}}});
    let session = bundled_session(
        dir.path(),
        "qwen2.5-reasoning-tools",
        json!({"response_template": own}),
    );
    let args = ["parse", session.to_str().unwrap()];
    let output = chatplate_with_input(&args, dir.path(), b"Hi<|im_end|>");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(message, json!({"answer": "Hi"}));
}

#[test]
fn bundled_templates_round_trip_streamed_without_a_schema_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let messages = json!([
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}]},
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."}
    ]);
    for name in [
        "qwen2.5-reasoning-tools",
        "gemma-3-tools",
        "chatml-with-headers-tools",
    ] {
        let extra = json!({"messages": messages, "add_generation_prompt": false,
                           "assert_round_trip": true, "assert_stream_round_trip": true});
        let session = bundled_session(dir.path(), name, extra);
        let file = session.file_name().unwrap().to_str().unwrap();
        let blessed = chatplate(&["check", "--bless", file], dir.path());
        assert_eq!(
            blessed.status.code(),
            Some(0),
            "{name}: {}",
            stdout(&blessed)
        );
        let output = chatplate(&["check", file], dir.path());
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stdout(&output));
        assert!(
            stdout(&output).contains("1 passed, 0 failed"),
            "{}",
            stdout(&output)
        );
    }
}
