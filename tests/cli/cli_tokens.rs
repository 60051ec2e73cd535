//! `chatplate tokens` and `expected_tokens` in `chatplate check`, as a user runs them: the
//! real binary on temporary fixtures with the tiny tokenizer the tests build.

#![cfg(feature = "tokens")]

use crate::common;
use crate::tokens_support;
use std::path::{Path, PathBuf};

use chatplate_core::session::{ExpectedTokens, Session};
use chatplate_core::tokens::{ModelTokenizer, TokenizerFiles};
use common::binary::{chatplate, chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};
use tokens_support::{write_tiny_tokenizer, CHATML, IM_END};

/// A ChatML fixture in `dir` whose tokenizer is the tiny one in `dir/model`.
fn fixture(dir: &Path, messages: Json, extra: Json) -> PathBuf {
    write_tiny_tokenizer(&dir.join("model"), &Json::Null);
    let mut session = json!({
        "version": 1,
        "template": {"source": CHATML},
        "tokenizer": "model",
        "messages": messages,
    });
    for (key, value) in extra.as_object().into_iter().flatten() {
        session[key] = value.clone();
    }
    let path = dir.join("f.json");
    std::fs::write(&path, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    path
}

fn tiny(dir: &Path) -> ModelTokenizer {
    ModelTokenizer::load(&TokenizerFiles::locate(&dir.join("model")).unwrap()).unwrap()
}

#[test]
fn tokens_prints_one_row_per_token_and_a_total() {
    let dir = tempfile::tempdir().unwrap();
    fixture(
        dir.path(),
        json!([{"role": "user", "content": "Hi"}]),
        json!({}),
    );
    let output = chatplate(&["tokens", "f.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    // <|im_start|> u s e r Ċ Hi <|im_end|> Ċ
    assert_eq!(lines.len(), 1 + 9 + 1, "{text}");
    assert!(
        lines[0].contains("index") && lines[0].contains("bytes"),
        "{text}"
    );
    assert!(
        lines[1].ends_with("0..12         \"<|im_start|>\"  special"),
        "{text}"
    );
    assert!(lines[7].contains("17..19        \"Hi\""), "{text}");
    assert!(
        lines[10].starts_with("9 tokens (2 special, 30 bytes) with "),
        "{text}"
    );
    assert!(stderr(&output).is_empty(), "{}", stderr(&output));
}

#[test]
fn tokens_json_has_ids_tokens_offsets_and_matches_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let messages =
        json!([{"role": "user", "content": "Hi wé"}, {"role": "assistant", "content": "Hi"}]);
    fixture(dir.path(), messages, json!({}));
    let output = chatplate(&["tokens", "--json", "f.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Json = serde_json::from_str(&stdout(&output)).unwrap();
    let prompt = stdout(&chatplate(&["render", "f.json"], dir.path()));
    let expected = tiny(dir.path()).tokenize(&prompt).unwrap();
    assert_eq!(report["ids"], json!(expected.ids()));
    assert_eq!(report["count"], json!(expected.len()));
    let offsets = report["offsets"].as_array().unwrap();
    let tokens = report["tokens"].as_array().unwrap();
    assert_eq!(
        (offsets.len(), tokens.len()),
        (expected.len(), expected.len())
    );
    assert_eq!(offsets[0], json!([0, 12]));
    assert_eq!(tokens[0], json!("<|im_start|>"));
    assert_eq!(report["special"][0], json!(true));
    assert_eq!(report["injections"], json!([]));
    assert_eq!(report["split_effect"], Json::Null);
}

#[test]
fn special_token_in_user_content_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let messages = json!([
        {"role": "user", "content": format!("Hi{IM_END}")},
        {"role": "assistant", "content": format!("ok{IM_END}")}
    ]);
    fixture(dir.path(), messages, json!({}));
    let output = chatplate(&["tokens", "--json", "f.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "only the user message: {err}");
    assert!(
        err.starts_with("warning: f.json: messages[0] (user) bytes 2..12: becomes the special token \"<|im_end|>\""),
        "{err}"
    );
    assert!(
        err.contains("with split_special_tokens=true it would be"),
        "{err}"
    );
    // Both turn markers of both turns, plus the two typed ones.
    assert!(
        err.contains("(6 special tokens in this prompt would become 0)"),
        "{err}"
    );
    let report: Json = serde_json::from_str(&stdout(&output)).unwrap();
    let found = &report["injections"][0];
    assert_eq!(found["source"], "message");
    assert_eq!(
        (found["index"].clone(), found["role"].clone()),
        (json!(0), json!("user"))
    );
    assert_eq!(found["offsets"], json!([2, 12]));
    assert_eq!(report["split_effect"]["special"], json!(6));
}

#[test]
fn tokenizer_comes_from_the_option_the_fixture_or_the_template_folder() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    write_tiny_tokenizer(&model, &json!({"chat_template": CHATML}));
    let session = json!({
        "version": 1,
        "template": {"path": "model/tokenizer_config.json"},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    std::fs::write(dir.path().join("f.json"), session.to_string()).unwrap();
    let from_folder = chatplate(&["tokens", "--json", "f.json"], dir.path());
    assert_eq!(
        from_folder.status.code(),
        Some(0),
        "{}",
        stderr(&from_folder)
    );
    let given = chatplate(
        &[
            "tokens",
            "--json",
            "--tokenizer",
            "model/tokenizer.json",
            "f.json",
        ],
        dir.path(),
    );
    assert_eq!(stdout(&given), stdout(&from_folder));
    std::fs::write(dir.path().join("p.txt"), "Hi").unwrap();
    let text = chatplate(
        &[
            "tokens",
            "--json",
            "--text",
            "--tokenizer",
            "model",
            "p.txt",
        ],
        dir.path(),
    );
    let report: Json = serde_json::from_str(&stdout(&text)).unwrap();
    assert_eq!(report["tokens"], json!(["Hi"]));
}

#[test]
fn unusable_input_exits_2_and_render_failure_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let session = json!({"version": 1, "template": {"source": "x"},
        "messages": [{"role": "user", "content": "Hi"}]});
    std::fs::write(dir.path().join("none.json"), session.to_string()).unwrap();
    let output = chatplate(&["tokens", "none.json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "no tokenizer: tokenizer.json beside the template, or \"tokenizer\" in the session, \
             or give --tokenizer PATH"
        ),
        "{}",
        stderr(&output)
    );
    let output = chatplate(
        &["tokens", "--tokenizer", "missing", "none.json"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("missing: no tokenizer.json there"),
        "{}",
        stderr(&output)
    );
    std::fs::write(dir.path().join("tokenizer.json"), "not json").unwrap();
    let output = chatplate(
        &["tokens", "--tokenizer", "tokenizer.json", "none.json"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let failing = json!({"version": 1, "template": {"source": "{{ raise_exception('no') }}"},
        "tokenizer": "model", "messages": [{"role": "user", "content": "Hi"}]});
    write_tiny_tokenizer(&dir.path().join("model"), &Json::Null);
    std::fs::write(dir.path().join("fail.json"), failing.to_string()).unwrap();
    let output = chatplate(&["tokens", "fail.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("template raised: no"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn check_compares_expected_tokens_and_bless_keeps_its_form() {
    let dir = tempfile::tempdir().unwrap();
    let messages = json!([{"role": "user", "content": "Hi"}]);
    let path = fixture(dir.path(), messages, json!({"expected_tokens": 9}));
    let check = |args: &[&str]| chatplate(args, dir.path());
    // No "expected" prompt yet: bless records it and rewrites the count.
    let output = check(&["check", "--bless", "f.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let output = check(&["check", "f.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let mut session = Session::load(&path).unwrap();
    session.expected_tokens = Some(ExpectedTokens::Count(10));
    session.save(&path).unwrap();
    let output = check(&["check", "f.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output)
            .contains("FAIL f.json: tokens differ: expected 10 tokens, the tokenizer gives 9"),
        "{}",
        stdout(&output)
    );
    session.expected_tokens = Some(ExpectedTokens::Ids(vec![1, 2]));
    session.save(&path).unwrap();
    let output = check(&["check", "f.json"]);
    assert!(
        stdout(&output).contains("token ids differ at token 0"),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        check(&["check", "--bless", "f.json"]).status.code(),
        Some(0)
    );
    let blessed = Session::load(&path).unwrap().expected_tokens;
    let prompt = stdout(&check(&["render", "f.json"]));
    let ids = tiny(dir.path()).tokenize(&prompt).unwrap().ids();
    assert_eq!(blessed, Some(ExpectedTokens::Ids(ids)));
    std::fs::remove_dir_all(dir.path().join("model")).unwrap();
    let output = check(&["check", "f.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("FAIL f.json: "),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains("no tokenizer.json there"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn tokens_reads_a_fixture_or_prompt_text_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(
        dir.path(),
        json!([{"role": "user", "content": "Hi"}]),
        json!({}),
    );
    let from_file = chatplate(&["tokens", "--json", "f.json"], dir.path());
    let text = std::fs::read(&path).unwrap();
    // The fixture's "tokenizer": "model" is found from the working directory.
    let output = chatplate_with_input(&["tokens", "--json", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (piped, file): (Json, Json) = (
        serde_json::from_slice(&output.stdout).unwrap(),
        serde_json::from_slice(&from_file.stdout).unwrap(),
    );
    assert_eq!(piped["ids"], file["ids"]);
    assert_eq!(piped["input"], "<stdin>");

    let args = ["tokens", "--text", "--tokenizer", "model", "--json", "-"];
    let prompt = "<|im_start|>user\nHi<|im_end|>\n";
    let output = chatplate_with_input(&args, dir.path(), prompt.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let piped: Json = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(piped["ids"], file["ids"]);

    let output = chatplate_with_input(&["tokens", "-", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn tokens_past_the_memory_bound_are_refused_naming_the_flag() {
    // The tokenizer library holds about a hundred bytes per byte of text it works on: a
    // 1 KiB bound takes 8 bytes between special tokens, and this text has more.
    let dir = tempfile::tempdir().unwrap();
    write_tiny_tokenizer(&dir.path().join("model"), &Json::Null);
    std::fs::write(dir.path().join("p.txt"), "Hi wé Hi wé").unwrap();
    let args = ["tokens", "--text", "p.txt", "--tokenizer", "model"];
    let output = chatplate(&[&args[..], &["--max-memory", "1K"]].concat(), dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stderr(&output)
            .contains("tokenizing 13 bytes of text with no special token to cut them at")
            && stderr(&output).contains("raise it with --max-memory"),
        "{}",
        stderr(&output)
    );
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
