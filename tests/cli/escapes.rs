//! Control characters from a stranger's fixture through every machine-readable output of
//! the real binary: CSI (U+009B), NEL (U+0085), DEL and NUL in a file name, a message, a
//! template's output and a model's output. No output may hold one raw (serde_json writes
//! DEL and C1 as they are), and each JSON document must read back as the same value.

use std::path::Path;
use std::process::Output;

use crate::common::binary::{chatplate, chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};

/// CSI, NEL, DEL and NUL, with the rest of an SGR sequence after the CSI.
const HOSTILE: &str = "a\u{9b}31m b\u{85} c\u{7f} d\u{0} e";

/// A fixture's name with the controls a file name may hold (NUL cannot be in one).
const NAME: &str = "case\u{9b}2J\u{85}\u{7f}.json";

/// The control characters in `bytes` other than line feed and tab (JSON and XML
/// whitespace), as text; invalid UTF-8 counts too.
fn raw_controls(bytes: &[u8]) -> Vec<char> {
    let text = std::str::from_utf8(bytes).expect("UTF-8 output");
    text.chars()
        .filter(|&c| c.is_control() && !matches!(c, '\n' | '\t'))
        .collect()
}

/// The command's standard output and error hold no raw control character.
fn clean(what: &str, output: &Output) {
    assert_eq!(
        raw_controls(&output.stdout),
        Vec::<char>::new(),
        "{what}: stdout"
    );
    assert_eq!(
        raw_controls(&output.stderr),
        Vec::<char>::new(),
        "{what}: stderr"
    );
}

/// A fixture on a template file that prints each message's role and content, expecting
/// a prompt it will not get (so the reports have detail), and the template file.
fn fixture(dir: &Path) {
    std::fs::write(
        dir.join("t.jinja"),
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}",
    )
    .unwrap();
    let session = json!({
        "version": 1,
        "template": {"path": "t.jinja"},
        "messages": [{"role": "user", "content": HOSTILE}],
        "expected": {"prompt": format!("<user>{HOSTILE} and more\n")},
    });
    std::fs::write(dir.join(NAME), serde_json::to_string(&session).unwrap()).unwrap();
}

fn json_of(what: &str, output: &Output) -> Json {
    clean(what, output);
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{what}: {err}: {}", stdout(output)))
}

#[test]
fn check_reports_carry_no_raw_control() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let output = chatplate(&["check", "--format", "json", "."], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json_of("check --format json", &output);
    assert_eq!(report["cases"][0]["path"], format!("./{NAME}"));
    let output = chatplate(&["check", "--format", "junit", "."], dir.path());
    clean("check --format junit", &output);
    let xml = stdout(&output);
    // DEL and C1 are character references an XML reader turns back into them.
    assert!(
        xml.contains("name=\"./case&#x9B;2J&#x85;&#x7F;.json\""),
        "{xml}"
    );
}

#[test]
fn a_blessed_fixture_is_written_without_raw_control() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let output = chatplate(&["check", "--bless", NAME], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let written = std::fs::read(dir.path().join(NAME)).unwrap();
    assert_eq!(raw_controls(&written), Vec::<char>::new());
    let session: Json = serde_json::from_slice(&written).unwrap();
    let prompt = stdout(&chatplate(&["render", NAME], dir.path()));
    assert_eq!(session["expected"]["prompt"], prompt);
    assert_eq!(
        prompt,
        format!("<user>{HOSTILE}\n"),
        "the prompt itself is raw"
    );
}

#[test]
fn exported_and_imported_bodies_carry_no_raw_control() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let output = chatplate(&["export", "--openai", NAME], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let body = json_of("export --openai", &output);
    assert_eq!(body["messages"][0]["content"], HOSTILE);
    std::fs::write(dir.path().join("body.json"), &output.stdout).unwrap();
    let output = chatplate(&["import", "body.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let session = json_of("import", &output);
    assert_eq!(session["messages"][0]["content"], HOSTILE);
}

#[test]
fn compare_and_inspect_json_carry_no_raw_control() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let prompt = format!("<user>{HOSTILE}\n");
    let args = ["compare", NAME, "--engine", "minijinja", "--json"];
    let report = json_of("compare --json", &chatplate(&args, dir.path()));
    for render in report["renders"].as_array().unwrap() {
        assert_eq!(render["prompt"], prompt, "{render}");
    }
    let args = [
        "compare",
        ".",
        "--engine",
        "minijinja",
        "--report",
        "--json",
    ];
    let report = json_of("compare --report --json", &chatplate(&args, dir.path()));
    assert_eq!(report[0]["engine"], "minijinja");
    let args = ["inspect", "--fixture", NAME, "--json"];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    json_of("inspect --json", &output);
}

#[test]
fn parsed_output_json_carries_no_raw_control() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // transformers 5.23's parse_response(output, schema, prefix="") gives
    // {"role": "assistant", "content": HOSTILE} for it.
    let model_output = format!("{HOSTILE}<|im_end|>");
    let args = [
        "parse",
        "--schema",
        "docs/examples/qwen-response-template.json",
    ];
    let output = chatplate_with_input(&args, repo, model_output.as_bytes());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message = json_of("parse", &output);
    assert_eq!(message["content"], HOSTILE);
}

#[cfg(feature = "tokens")]
#[test]
fn tokens_json_carries_no_raw_control() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    crate::tokens_support::write_tiny_tokenizer(&dir.path().join("model"), &Json::Null);
    let mut session: Json =
        serde_json::from_slice(&std::fs::read(dir.path().join(NAME)).unwrap()).unwrap();
    session["tokenizer"] = json!("model");
    std::fs::write(dir.path().join(NAME), session.to_string()).unwrap();
    let output = chatplate(&["tokens", "--json", NAME], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json_of("tokens --json", &output);
    assert!(report["count"].as_u64().unwrap() > 0, "{report}");
}
