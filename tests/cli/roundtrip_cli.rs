//! `chatplate roundtrip` against transformers 5.23: for each case of
//! `tests/data/roundtrip/goldens.json` (made by `scripts/make_roundtrip_goldens.py` with
//! the real qwen3 tokenizer), the same first differing token (place, ids and token
//! strings) or `identical` with the same token count; and the cause chatplate names.

use crate::common;
use std::path::{Path, PathBuf};

use common::binary::{chatplate, stderr, stdout};
use serde_json::{json, Value as Json};

fn read(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The goldens, the parse goldens (schemas and tools), the corpus and the tokenizer; `None`
/// when the checkout lacks one (a failure under `CI=true`).
fn inputs(test: &str) -> Option<(Json, Json, PathBuf, PathBuf)> {
    let corpus = common::corpus_dir(test)?;
    let tokenizer = crate::tokens_support::real_tokenizer("qwen3", test)?;
    let data = common::repo().join("tests/data");
    Some((
        read(&data.join("roundtrip/goldens.json")),
        read(&data.join("parse/goldens.json")),
        corpus,
        tokenizer,
    ))
}

/// Writes the case's session, template, schema, output and ids into `dir`.
fn write_case(dir: &Path, case: &Json, parse: &Json, corpus: &Path) {
    let template = match case["template_source"].as_str() {
        Some(source) => source.to_string(),
        None => {
            let name = case["template"].as_str().unwrap();
            std::fs::read_to_string(corpus.join("templates").join(name)).unwrap()
        }
    };
    std::fs::write(dir.join("template.jinja"), template).unwrap();
    let schema = match &case["schema_source"] {
        Json::Null => parse["schemas"][case["schema"].as_str().unwrap()]["schema"].clone(),
        inline => inline.clone(),
    };
    std::fs::write(dir.join("schema.json"), schema.to_string()).unwrap();
    std::fs::write(dir.join("output.txt"), case["output"].as_str().unwrap()).unwrap();
    if let Some(ids) = case["ids"].as_array() {
        std::fs::write(dir.join("ids.json"), Json::Array(ids.clone()).to_string()).unwrap();
    }
    let session = json!({
        "version": 1,
        "template": {"path": "template.jinja"},
        "response_template": "schema.json",
        "messages": case["messages"],
        "tools": parse["tools"],
    });
    std::fs::write(dir.join("session.json"), session.to_string()).unwrap();
}

/// `chatplate roundtrip` on the case in `dir`: its exit code and what it printed.
fn roundtrip(dir: &Path, tokenizer: &Path, case: &Json, extra: &[&str]) -> (Option<i32>, String) {
    let tokenizer = tokenizer.to_str().unwrap();
    let mut args = vec![
        "roundtrip",
        "session.json",
        "--tokenizer",
        tokenizer,
        "--output",
        "output.txt",
    ];
    if case["ids"].is_array() {
        args.extend(["--ids", "ids.json"]);
    }
    args.extend(extra);
    let output = chatplate(&args, dir);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{}: {}",
        case["id"],
        stderr(&output)
    );
    (code, stdout(&output))
}

/// The cause chatplate names for each failing case.
fn cause_of(id: &str) -> &'static str {
    match id {
        "json-spacing" => "json_spacing",
        "empty-think" => "dropped_empty_tag",
        "leading-newline" => "whitespace",
        "boundary-merge" => "boundary_merge",
        "retokenized" => "retokenized",
        "qwen35-false" => "reserialised",
        other => panic!("no cause listed for {other}"),
    }
}

#[test]
fn roundtrip_equals_transformers_on_every_golden_case() {
    let Some((goldens, parse, corpus, tokenizer)) = inputs("roundtrip_goldens") else {
        return;
    };
    let cases = goldens["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        write_case(dir.path(), case, &parse, &corpus);
        let (code, printed) = roundtrip(dir.path(), &tokenizer, case, &["--json"]);
        let got: Json = serde_json::from_str(&printed).unwrap();
        let want = &case["expected"];
        let id = case["id"].as_str().unwrap();
        if want["identical"] == true {
            assert_eq!(code, Some(0), "{id}: {printed}");
            assert_eq!(
                got,
                json!({"identical": true, "tokens": want["tokens"]}),
                "{id}"
            );
            continue;
        }
        assert_eq!(code, Some(1), "{id}: {printed}");
        let index = want["index"].as_i64().unwrap();
        let position = match usize::try_from(index) {
            Ok(n) => json!({"output": n}),
            Err(_) => json!({"prompt_from_end": -index}),
        };
        assert_eq!(got["position"], position, "{id}: {printed}");
        assert_eq!(got["sampled"], want["sampled"], "{id}");
        assert_eq!(got["rendered"], want["rendered"], "{id}");
        assert_eq!(got["cause"]["kind"], cause_of(id), "{id}: {printed}");
    }
}

/// The case `id` written into a new folder.
fn case_dir(id: &str, test: &str) -> Option<(tempfile::TempDir, Json, PathBuf)> {
    let (goldens, parse, corpus, tokenizer) = inputs(test)?;
    let case = goldens["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap()
        .clone();
    let dir = tempfile::tempdir().unwrap();
    write_case(dir.path(), &case, &parse, &corpus);
    Some((dir, case, tokenizer))
}

#[test]
fn roundtrip_reports_false_becoming_false_and_identical_on_a_clean_call() {
    let Some((dir, case, tokenizer)) = case_dir("qwen35-false", "roundtrip_false") else {
        return;
    };
    let (code, printed) = roundtrip(dir.path(), &tokenizer, &case, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        printed,
        "differs at token 35 of the output\n\
         \x20 sampled:          3849 \"false\"\n\
         \x20 re-rendered:      4049 \"False\"\n\
         \x20 cause: argument re-serialisation: the output's `false` is rendered back as `False`\n\
         \x20 sampled text:     \"false\\n</parameter>\\n</function>\\n</tool_ca\"\n\
         \x20 re-rendered text: \"False\\n</parameter>\\n</function>\\n</tool_ca\"\n"
    );
    let (dir, case, tokenizer) = case_dir("qwen35-clean", "roundtrip_false").unwrap();
    let (code, printed) = roundtrip(dir.path(), &tokenizer, &case, &[]);
    assert_eq!(
        (code, printed.as_str()),
        (Some(0), "identical (33 tokens)\n")
    );
}

#[test]
fn roundtrip_refuses_ids_that_are_not_the_output() {
    let Some((dir, _, tokenizer)) = case_dir("retokenized", "roundtrip_ids") else {
        return;
    };
    std::fs::write(dir.path().join("ids.json"), "[50, 55, 151645]").unwrap();
    let tokenizer = tokenizer.to_str().unwrap();
    let args = ["roundtrip", "session.json", "--tokenizer", tokenizer];
    let mut both = args.to_vec();
    both.extend(["--output", "output.txt", "--ids", "ids.json"]);
    let output = chatplate(&both, dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("the ids decode to a text that differs from the output at byte 1"),
        "{}",
        stderr(&output)
    );
    std::fs::write(dir.path().join("ids.json"), "50 x").unwrap();
    let mut bad = args.to_vec();
    bad.extend(["--ids", "ids.json"]);
    let output = chatplate(&bad, dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("ids.json: id 2 is not a token id: \"x\""),
        "{}",
        stderr(&output)
    );
}

/// `chatplate check` on the case's folder with `assert_token_round_trip` set to
/// `assertion` (and the case's messages, plus `answer` when given), blessed first.
fn check_with(
    dir: &Path,
    tokenizer: &Path,
    assertion: &Json,
    answer: Option<Json>,
) -> (Option<i32>, String) {
    let path = dir.join("session.json");
    let mut session = read(&path);
    session["tokenizer"] = json!(tokenizer.join("tokenizer.json"));
    session["assert_token_round_trip"] = assertion.clone();
    if let Some(answer) = answer {
        session["messages"].as_array_mut().unwrap().push(answer);
    }
    std::fs::write(&path, session.to_string()).unwrap();
    let root = tokenizer.to_str().unwrap();
    let blessed = chatplate(
        &["check", "--bless", "--template-root", root, "session.json"],
        dir,
    );
    assert_eq!(blessed.status.code(), Some(0), "{}", stdout(&blessed));
    let output = chatplate(&["check", "--template-root", root, "session.json"], dir);
    (output.status.code(), stdout(&output))
}

#[test]
fn check_runs_assert_token_round_trip_on_a_recorded_output() {
    let Some((dir, case, tokenizer)) = case_dir("qwen35-false", "check_token_round_trip") else {
        return;
    };
    let sampled = json!({"output": case["output"]});
    let (code, report) = check_with(dir.path(), &tokenizer, &sampled, None);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(
            "FAIL session.json: assert_token_round_trip: differs at token 35 of the output\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("  cause: argument re-serialisation"),
        "{report}"
    );
    let (dir, case, tokenizer) = case_dir("qwen35-clean", "check_token_round_trip").unwrap();
    let sampled = json!({"output": case["output"]});
    let (code, report) = check_with(dir.path(), &tokenizer, &sampled, None);
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("1 passed, 0 failed"), "{report}");
}

#[test]
fn check_runs_assert_token_round_trip_on_each_assistant_message() {
    // A template whose generation prompt ends with a space: the message, cut out of the
    // render, starts a token that the re-render merges with that space.
    let Some((dir, _, tokenizer)) = case_dir("boundary-merge", "check_token_each") else {
        return;
    };
    let answer = json!({"role": "assistant", "content": "Sunny."});
    let (code, report) = check_with(dir.path(), &tokenizer, &json!(true), Some(answer));
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(
            "assert_token_round_trip: messages[1] differs at the prompt's last token\n  sampled:          220 \"Ġ\"\n  re-rendered:      55038 \"ĠSunny\"\n  cause: a boundary merge"
        ),
        "{report}"
    );
    // The Qwen3.5 call as the session's own message: its tokens survive.
    let (dir, case, tokenizer) = case_dir("qwen35-clean", "check_token_each").unwrap();
    let answer = case["parsed"].clone();
    let (code, report) = check_with(dir.path(), &tokenizer, &json!(true), Some(answer));
    assert_eq!(code, Some(0), "{report}");
}
