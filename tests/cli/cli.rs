//! The headless CLI as a user runs it: the real binary, temporary fixtures, exact bytes
//! on stdout and the exit code (0 ok, 1 render failure or failed checks, 2 unusable input).

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chatplate_core::session::{Expected, Session};
use common::binary::{command, stderr, stdout};
use serde_json::{json, Value as Json};

/// The binary in `dir`, offline, with an empty Hugging Face cache of its own.
fn offline(args: &[&str], dir: &Path) -> Command {
    let mut command = command(args, dir);
    command
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", dir.join(".hf-cache"));
    command
}

/// Runs the binary in `dir`, offline (see [`offline`]).
fn chatplate(args: &[&str], dir: &Path) -> Output {
    offline(args, dir).output().expect("chatplate runs")
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("fixture dir");
    }
    std::fs::write(path, text).expect("fixture written");
}

/// Prints each message's content on its own line.
const LINES_TEMPLATE: &str = "{% for m in messages %}{{ m.content }}\n{% endfor %}";

/// A fixture on an inline template; `expected` is written only when given.
fn fixture(dir: &Path, name: &str, contents: &[&str], expected: Option<Json>) -> PathBuf {
    let messages: Vec<Json> = contents
        .iter()
        .map(|c| json!({"role": "user", "content": c}))
        .collect();
    let mut session = json!({
        "version": 1,
        "template": {"source": LINES_TEMPLATE},
        "messages": messages,
    });
    if let Some(expected) = expected {
        session["expected"] = expected;
    }
    let path = dir.join(name);
    write(&path, &serde_json::to_string_pretty(&session).unwrap());
    path
}

fn sessions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions")
}

#[test]
fn render_fixture_prints_exactly_the_expected_bytes() {
    let mut rendered = 0;
    for fixture in chatplate_core::check::collect_fixtures(&[sessions_dir()]).fixtures {
        let path = fixture.path;
        let session = Session::load(&path).expect("session loads");
        let Some(Expected::Prompt(prompt)) = session.expected else {
            continue;
        };
        let output = chatplate(&["render", path.to_str().unwrap()], &sessions_dir());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(output.stdout, prompt.as_bytes(), "{}", path.display());
        rendered += 1;
    }
    assert!(rendered >= 4, "only {rendered} sessions with a prompt");
}

#[test]
fn render_adds_no_trailing_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), "f.json", &["a"], None);
    let source = json!({"source": "{{ messages[0].content }}·\t"});
    let mut session: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    session["template"] = source;
    write(&path, &session.to_string());
    let output = chatplate(&["render", "f.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(output.stdout, "a·\t".as_bytes());
}

#[test]
fn render_quick_mode_with_a_template_file_vars_and_clock() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("t.jinja"),
        "{{ strftime_now('%d %b %Y') }}|{{ enable_thinking }}|{% for m in messages %}\
         {{ m.role }}:{{ m.content }};{% endfor %}{{ tools | length }}\
         {% if add_generation_prompt %}|GEN{% endif %}",
    );
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "Hi"}]"#,
    );
    write(&dir.path().join("tools.json"), r#"[{"type": "function"}]"#);
    let args = [
        "render",
        "--template",
        "t.jinja",
        "--messages",
        "m.json",
        "--tools",
        "tools.json",
        "--var",
        "enable_thinking=false",
        "--add-generation-prompt",
        "--clock",
        "2026-01-15T00:00:00",
    ];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "15 Jan 2026|False|user:Hi;1|GEN");
}

#[test]
fn render_quick_mode_with_a_bundled_template() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("m.json"),
        r#"{"messages": [{"role": "user", "content": "Hi"}]}"#,
    );
    let args = [
        "render",
        "--template",
        "qwen2.5-reasoning-tools",
        "--messages",
        "m.json",
        "--var",
        "enable_thinking=false",
        "--add-generation-prompt",
        "--clock",
        "2026-01-15T00:00:00",
    ];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n\
         <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn render_error_shows_kind_position_and_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("bad.jinja"),
        "{% for m in messages %}\n{{ m.content }}\n{{ raise_exception('no ' ~ m.role) }}\n{% endfor %}\n",
    );
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "Hi"}]"#,
    );
    let args = ["render", "--template", "bad.jinja", "--messages", "m.json"];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let err = stderr(&output);
    assert_eq!(
        err,
        "bad.jinja:3:4: template raised: no user\n \
         1 | {% for m in messages %}\n \
         2 | {{ m.content }}\n\
         >3 | {{ raise_exception('no ' ~ m.role) }}\n        ^\n \
         4 | {% endfor %}\n\n"
    );
}

#[test]
fn a_fixture_s_template_error_names_the_template_file_once() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("t.jinja"), "{{ m.content | nosuch }}");
    write(
        &dir.path().join("s.json"),
        r#"{"version": 1, "template": {"path": "t.jinja"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    );
    let output = chatplate(&["render", "s.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "t.jinja:1:16: syntax error: TemplateAssertionError: No filter named 'nosuch'.\n\
         >1 | {{ m.content | nosuch }}\n                    ^\n\n"
    );
    // An inline template has no file: its name stands in.
    write(
        &dir.path().join("i.json"),
        r#"{"version": 1, "template": {"source": "{{ 'a' + 1 }}"}, "messages": [{"role": "user", "content": "Hi"}]}"#,
    );
    let output = chatplate(&["render", "i.json"], dir.path());
    assert!(
        stderr(&output).starts_with("<inline>:1:4: render error: "),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_long_line_s_excerpt_wraps_with_the_caret_under_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{{{{ \"{}\" }}}}{{{{ foo( }}}}", "x".repeat(100));
    write(&dir.path().join("long.jinja"), &long);
    write(&dir.path().join("m.json"), "[]");
    let args = ["render", "--template", "long.jinja", "--messages", "m.json"];
    let err = stderr(&chatplate(&args, dir.path()));
    let rows: Vec<&str> = err.lines().collect();
    assert_eq!(
        rows[0],
        "long.jinja:1:117: syntax error: TemplateSyntaxError: unexpected '}', expected ')'"
    );
    assert_eq!(rows[1], format!(">1 | {{{{ \"{}", "x".repeat(71)));
    assert_eq!(
        rows[2],
        format!("   | {}\" }}}}{{{{ foo( }}}}", "x".repeat(29))
    );
    // Column 117 is the first `}` of the last tag: 116 - 75 = 41 into the second row.
    assert_eq!(rows[3], format!("{}^", " ".repeat(5 + 41)));
    assert_eq!(rows[2].chars().nth(5 + 41), Some('}'));
    // The excerpt fits 80 columns (the message line above it is as long as it is).
    assert!(
        rows.iter().skip(1).all(|row| row.chars().count() <= 80),
        "{err}"
    );
}

#[test]
fn a_tab_indented_line_s_caret_points_at_the_error() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("tab.jinja"), "\t\t{{ x | nosuch }}");
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "Hi"}]"#,
    );
    let args = ["render", "--template", "tab.jinja", "--messages", "m.json"];
    assert_eq!(
        stderr(&chatplate(&args, dir.path())),
        "tab.jinja:1:10: syntax error: TemplateAssertionError: No filter named 'nosuch'.\n\
         >1 |         {{ x | nosuch }}\n                    ^\n\n"
    );
}

#[test]
fn json_and_session_errors_give_the_position_once() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("t.jinja"), "x");
    write(&dir.path().join("broken.json"), "[{\"role\": ");
    let args = [
        "render",
        "--template",
        "t.jinja",
        "--messages",
        "broken.json",
    ];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "chatplate: broken.json:1:10: EOF while parsing a value\n"
    );
    write(
        &dir.path().join("old.json"),
        r#"{"template": {"path": "t.jinja"}, "messages": []}"#,
    );
    let output = chatplate(&["check", "old.json"], dir.path());
    assert_eq!(
        stdout(&output),
        "FAIL old.json:1:49: missing field `version`\n0 passed, 1 failed\n"
    );
}

#[test]
fn syntax_error_is_reported_with_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("syn.jinja"), "a\n{% if %}\n");
    write(&dir.path().join("m.json"), "[]");
    let args = ["render", "--template", "syn.jinja", "--messages", "m.json"];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.starts_with("syn.jinja:2:"), "{err}");
    assert!(err.contains(": syntax error: "), "{err}");
    assert!(err.contains(">2 | {% if %}\n"), "{err}");
    assert!(err.contains('^'), "{err}");
}

#[test]
fn missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let output = chatplate(&["render", "nope.json"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("nope.json") && err.contains("No such file"),
        "{err}"
    );

    write(&dir.path().join("t.jinja"), "x");
    let args = ["render", "--template", "t.jinja", "--messages", "gone.json"];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("gone.json"), "{}", stderr(&output));

    let args = [
        "render",
        "--template",
        "no-such-template",
        "--messages",
        "m.json",
    ];
    let output = chatplate(&args, dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no bundled template named \"no-such-template\""));
}

#[test]
fn check_passing_fixture() {
    let dir = tempfile::tempdir().unwrap();
    fixture(
        dir.path(),
        "ok.json",
        &["a b", "c"],
        Some(json!({"prompt": "a b\nc\n"})),
    );
    let output = chatplate(&["check", "ok.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(stdout(&output), "1 passed, 0 failed\n");
}

#[test]
fn check_mismatch_shows_a_diff_with_visible_whitespace() {
    let dir = tempfile::tempdir().unwrap();
    let want = json!({"prompt": "a b\nc \n"});
    fixture(dir.path(), "bad.json", &["a b", "c"], Some(want));
    let output = chatplate(&["check", "bad.json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.contains("FAIL bad.json: prompt differs"), "{out}");
    // The removed trailing space is marked under the line (no colour off a terminal).
    assert!(
        out.contains("@@ line 1 @@\n  a b␊\n- c·␊\n   ^\n+ c␊\n"),
        "{out}"
    );
    assert!(out.ends_with("0 passed, 1 failed\n"), "{out}");
    assert!(
        !out.contains('\x1b'),
        "no colour when not a terminal: {out}"
    );
    // --color always paints with basic SGR codes only, and the changed character in
    // reverse video.
    let output = chatplate(&["check", "--color", "always", "bad.json"], dir.path());
    let out = stdout(&output);
    assert!(
        out.contains("\x1b[31m- c\x1b[7m·\x1b[27m␊\x1b[0m"),
        "{out:?}"
    );
    assert!(!out.contains("38;5"), "{out:?}");
}

#[test]
fn check_searches_directories_recursively_and_skips_recovery_files() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = Some(json!({"prompt": "x\n"}));
    fixture(dir.path(), "top.json", &["x"], prompt.clone());
    fixture(dir.path(), "sub/mid.json", &["x"], prompt.clone());
    fixture(dir.path(), "sub/deeper/low.json", &["x"], prompt);
    write(&dir.path().join("sub/low.recovery.json"), "{ not json");
    write(&dir.path().join("sub/notes.txt"), "not a fixture");
    let output = chatplate(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(stdout(&output), "3 passed, 0 failed\n");
}

#[test]
fn bless_records_expected_and_a_second_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let stale = Some(json!({"prompt": "stale"}));
    let path = fixture(dir.path(), "a.json", &["one", "two"], stale);
    fixture(dir.path(), "new.json", &["fresh"], None);
    let output = chatplate(&["check", "."], dir.path());
    assert_eq!(stdout(&output).lines().last(), Some("0 passed, 2 failed"));

    let output = chatplate(&["check", "--bless", "."], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).contains("blessed 2 fixtures"));
    let session = Session::load(&path).unwrap();
    assert_eq!(
        session.expected,
        Some(Expected::Prompt("one\ntwo\n".into()))
    );

    let output = chatplate(&["check", "."], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(stdout(&output), "2 passed, 0 failed\n");
}

#[test]
fn check_compares_an_expected_exception_exactly_and_bless_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let session = |exception: &str| {
        json!({
            "version": 1,
            "template": {"source": "{{ messages[0].content + 1 }}"},
            "messages": [{"role": "user", "content": "hi"}],
            "expected": {"exception": exception},
        })
        .to_string()
    };
    // CPython 3.11 / Jinja2 3.1.6: 'hi' + 1.
    let python = r#"TypeError: can only concatenate str (not "int") to str"#;
    write(&dir.path().join("exact.json"), &session(python));
    let prefix = "TypeError: can only concatenate";
    write(&dir.path().join("prefix.json"), &session(prefix));
    let output = chatplate(&["check", "."], dir.path());
    assert_eq!(stdout(&output).lines().last(), Some("1 passed, 1 failed"));
    assert!(
        stdout(&output).contains("prefix.json: expected the exception"),
        "{}",
        stdout(&output)
    );

    let output = chatplate(&["check", "--bless", "prefix.json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let blessed = Session::load(&dir.path().join("prefix.json")).unwrap();
    assert_eq!(blessed.expected, Some(Expected::Exception(python.into())));
}

#[test]
fn import_corpus_then_check_passes_every_case() {
    let Some(corpus) = common::corpus_dir("import-corpus") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("fixtures");
    let import = chatplate(
        &[
            "import-corpus",
            corpus.to_str().unwrap(),
            target.to_str().unwrap(),
        ],
        out.path(),
    );
    assert_eq!(import.status.code(), Some(0), "{}", stderr(&import));
    assert!(stdout(&import).starts_with("wrote 798 fixtures"));
    let output = chatplate(&["check", "fixtures"], out.path());
    assert_eq!(stdout(&output).lines().last(), Some("798 passed, 0 failed"));
    assert_eq!(output.status.code(), Some(0));
}

/// lint's double-bos rule, said by `render` too: the template prints BOS and the model
/// folder's tokenizer config says the tokenizer adds one. The prompt is printed as ever.
#[test]
fn render_warns_of_a_double_bos_as_lint_does() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    let template = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}";
    let config = |adds: bool| {
        json!({"chat_template": template, "bos_token": "<s>", "add_bos_token": adds}).to_string()
    };
    write(&model.join("tokenizer_config.json"), &config(true));
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "Hi"}]"#,
    );
    let args = ["render", "--template", "model", "--messages", "m.json"];
    let output = chatplate(&args, dir.path());
    assert_eq!(stdout(&output), "<s>Hi");
    assert_eq!(
        stderr(&output),
        "chatplate: warning: the prompt starts with the BOS token \"<s>\" and \
         tokenizer_config.json sets add_bos_token: true: tokenizing the prompt with special \
         tokens (tokenizer(prompt), llama.cpp) gives the model two (lint rule double-bos)\n"
    );
    assert_eq!(output.status.code(), Some(0));
    let lint = chatplate(&["lint", "--format", "json", "model"], dir.path());
    assert!(
        stdout(&lint).contains("\"double-bos\""),
        "{}",
        stdout(&lint)
    );
    write(&model.join("tokenizer_config.json"), &config(false));
    let output = chatplate(&args, dir.path());
    assert_eq!(
        (stdout(&output).as_str(), stderr(&output).as_str()),
        ("<s>Hi", "")
    );
}
