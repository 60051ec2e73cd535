//! The CLI conventions CI users rely on: `check --format json|junit`, shell
//! completions and the man page. The real binary, as a user runs it.

use crate::common;
use std::path::Path;
use std::process::Output;

use common::binary::{chatplate_with_input, stderr, stdout};
use serde_json::{json, Value as Json};

/// Runs chatplate in `dir`, feeding `input` on standard input.
fn chatplate(args: &[&str], dir: &Path, input: &str) -> Output {
    chatplate_with_input(args, dir, input.as_bytes())
}

/// A fixture on an inline template that prints each message's content.
fn fixture(contents: &str, expected: &str) -> String {
    serde_json::to_string_pretty(&json!({
        "version": 1,
        "template": {"source": "{% for m in messages %}{{ m.content }}\n{% endfor %}"},
        "messages": [{"role": "user", "content": contents}],
        "expected": {"prompt": expected},
    }))
    .unwrap()
}

fn two_fixtures(dir: &Path) {
    std::fs::write(dir.join("good.json"), fixture("hi", "hi\n")).unwrap();
    std::fs::write(dir.join("bad.json"), fixture("hi", "ho\n")).unwrap();
}

#[test]
fn check_reports_json() {
    let dir = tempfile::tempdir().unwrap();
    two_fixtures(dir.path());
    let output = chatplate(&["check", ".", "--format", "json"], dir.path(), "");
    assert_eq!(output.status.code(), Some(1));
    let report: Json = serde_json::from_str(&stdout(&output)).expect("stdout is one JSON document");
    assert_eq!(report["passed"], 1);
    assert_eq!(report["failed"], 1);
    let bad = &report["cases"][0];
    assert_eq!(bad["path"], "./bad.json");
    assert_eq!(bad["outcome"], "mismatch");
    assert!(bad["detail"].as_str().unwrap().contains("- ho␊"));
}

#[test]
fn check_reports_junit_xml() {
    let dir = tempfile::tempdir().unwrap();
    two_fixtures(dir.path());
    std::fs::write(dir.path().join("broken.json"), "{ not json").unwrap();
    let output = chatplate(&["check", ".", "--format", "junit"], dir.path(), "");
    assert_eq!(output.status.code(), Some(1));
    let xml = stdout(&output);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>"),
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" errors=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"chatplate check\" name=\"./good.json\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<failure type=\"mismatch\" message=\"FAIL ./bad.json: prompt differs\">"),
        "{xml}"
    );
    assert!(xml.contains("<error type=\"broken\""), "{xml}");
    assert!(xml.trim_end().ends_with("</testsuites>"));
}

#[test]
fn completions_and_man_page_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "_chatplate()"),
        ("zsh", "#compdef chatplate"),
        ("fish", "complete -c chatplate"),
    ] {
        let output = chatplate(&["completions", shell], dir.path(), "");
        assert_eq!(output.status.code(), Some(0));
        let script = stdout(&output);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("junit"),
            "{shell} completes check --format values"
        );
    }
    let output = chatplate(&["man"], dir.path(), "");
    let page = stdout(&output);
    assert!(page.contains(".TH chatplate 1"), "{page}");
    assert!(page.contains("completions"));
}

/// `dir/m.json`: one user message, "hi".
fn messages_file(dir: &Path) {
    std::fs::write(dir.join("m.json"), r#"[{"role": "user", "content": "hi"}]"#).unwrap();
}

/// Asserts that chatplate refused its input (exit 2), saying `what`.
fn refused(output: &Output, what: &str) {
    assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
    assert!(stderr(output).contains(what), "{}", stderr(output));
}

/// A fixture whose template is a file beside it (`t.jinja`), as `dir/f.json`.
fn fixture_on_a_template_file(dir: &Path) -> String {
    let template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}";
    std::fs::write(dir.join("t.jinja"), template).unwrap();
    let text = serde_json::to_string_pretty(&json!({
        "version": 1,
        "template": {"path": "t.jinja"},
        "messages": [{"role": "user", "content": "hi"}],
        "expected": {"prompt": "<user>hi\n"},
    }))
    .unwrap();
    std::fs::write(dir.join("f.json"), &text).unwrap();
    text
}

#[test]
fn a_dash_reads_the_fixture_from_stdin_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let text = fixture_on_a_template_file(dir.path());
    let output = chatplate(&["render", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "<user>hi\n");

    let output = chatplate(&["check", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "1 passed, 0 failed\n");
    let output = chatplate(&["check", "--format", "json", "-"], dir.path(), &text);
    let report: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["cases"][0]["path"], "<stdin>");

    let output = chatplate(&["bench", "--iterations", "2", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("\n<stdin> "),
        "{}",
        stdout(&output)
    );
    // Every column has a heading, right-aligned over its values (the fuel had none).
    let table = stdout(&output);
    let (header, row) = (table.lines().next().unwrap(), table.lines().nth(1).unwrap());
    assert!(header.ends_with(" fuel"), "{table}");
    assert_eq!(header.chars().count(), row.chars().count(), "{table}");

    let output = chatplate(&["export", "--openai", "-"], dir.path(), &text);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let body: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(body["messages"][0]["content"], "hi");
}

#[test]
fn check_takes_one_stdin_fixture_beside_folders_and_never_blesses_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = fixture_on_a_template_file(dir.path());
    let mismatch = fixture("hi", "ho\n");
    // The stdin fixture is checked in a child process like the others.
    let output = chatplate(&["check", "-", "."], dir.path(), &mismatch);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = stdout(&output);
    assert!(report.contains("FAIL <stdin>: prompt differs"), "{report}");
    assert!(report.ends_with("1 passed, 1 failed\n"), "{report}");

    let output = chatplate(&["check", "--bless", "-"], dir.path(), &text);
    refused(&output, "--bless rewrites fixture files");
    let output = chatplate(&["check", "-", "-"], dir.path(), &text);
    refused(&output, "`-` (standard input) is given 2 times as PATH");
}

#[test]
fn a_stdin_fixture_s_template_paths_start_at_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let text = fixture_on_a_template_file(dir.path());
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    // From elsewhere, `t.jinja` is looked for in the working directory, and the error
    // says so.
    let output = chatplate(&["render", "-"], &sub, &text);
    refused(&output, "t.jinja");
    refused(
        &output,
        "(a fixture read from standard input finds its template paths from the current directory, ",
    );
    let output = chatplate(&["check", "-"], &sub, &text);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("from the current directory"),
        "{}",
        stdout(&output)
    );
    // The same fixture as a file finds its template beside it.
    let output = chatplate(&["render", "../f.json"], &sub, "");
    assert_eq!(stdout(&output), "<user>hi\n");
}

#[test]
fn a_template_messages_or_tools_list_can_come_from_stdin_but_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let template = "{{ messages[0].content }}|{{ tools | length }}";
    std::fs::write(dir.path().join("t.jinja"), template).unwrap();
    messages_file(dir.path());
    let tools = r#"[{"type": "function", "function": {"name": "f"}}]"#;
    std::fs::write(dir.path().join("tools.json"), tools).unwrap();
    let quick = |template: &str, messages: &str, tools: &str| {
        vec![
            "render",
            "--template",
            template,
            "--messages",
            messages,
            "--tools",
            tools,
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let cases = [
        (quick("-", "m.json", "tools.json"), template),
        (
            quick("t.jinja", "-", "tools.json"),
            r#"[{"role": "user", "content": "hi"}]"#,
        ),
        (quick("t.jinja", "m.json", "-"), tools),
    ];
    for (args, input) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = chatplate(&args, dir.path(), input);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "hi|1", "{args:?}");
    }
    let both = ["render", "--template", "-", "--messages", "-"];
    let output = chatplate(&both, dir.path(), template);
    refused(
        &output,
        "chatplate: `-` (standard input) is given for --template and --messages; standard input can feed only one of them\n",
    );
}

#[test]
fn stdin_errors_are_named_stdin_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    messages_file(dir.path());
    let output = chatplate(
        &["render", "-"],
        dir.path(),
        "{\n  \"version\": 1,\n  oops\n}",
    );
    refused(&output, "chatplate: <stdin>:3:3: ");

    let args = ["render", "--template", "-", "--messages", "m.json"];
    let output = chatplate(
        &args,
        dir.path(),
        "line one\n{{ messages[0].content + 1 }}\n",
    );
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.starts_with(
            "<stdin>:2:4: render error: TypeError: can only concatenate str (not \"int\") to str\n"
        ),
        "{err}"
    );
    assert!(err.contains(">2 | {{ messages[0].content + 1 }}"), "{err}");

    std::fs::write(dir.path().join("t.jinja"), "{{ messages }}").unwrap();
    let args = ["render", "--template", "t.jinja", "--messages", "-"];
    let output = chatplate(&args, dir.path(), "[1,\n 2,,]");
    refused(&output, "chatplate: <stdin>:2:4: ");

    let output = chatplate_with_input(&["render", "-"], dir.path(), b"{\"a\": \"\xff\"}");
    assert_eq!(
        stderr(&output),
        "chatplate: <stdin>:1:8: not valid UTF-8 (byte 0xff)\n"
    );
}

#[test]
fn the_app_says_it_cannot_open_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let output = chatplate(&["-"], dir.path(), "{}");
    refused(
        &output,
        "the app reads its keys from the terminal, so it cannot open standard input",
    );
}

#[test]
fn stdin_is_capped_like_the_file_it_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    messages_file(dir.path());
    // Templates are capped at 1 MiB (`files::MAX_TEMPLATE_BYTES`).
    let huge = "x".repeat((1 << 20) + 10);
    let args = ["render", "--template", "-", "--messages", "m.json"];
    let output = chatplate(&args, dir.path(), &huge);
    refused(
        &output,
        "<stdin>: 1048577 bytes is more than the 1048576 bytes allowed",
    );
}

#[test]
fn a_request_body_on_stdin_renders_and_imports() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "chat_template": "{{ messages[0].content }}!"}"#;
    let output = chatplate(&["render", "-"], dir.path(), body);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "hi!");
    let output = chatplate(&["import", "-"], dir.path(), body);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let session: Json = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(session["template"]["source"], "{{ messages[0].content }}!");
}

/// `bench FOLDER` benches the fixtures `check FOLDER` finds, skipping other JSON files
/// there with a note; a folder without any is an error.
#[test]
fn bench_takes_a_folder_like_check() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("fx");
    std::fs::create_dir(&folder).unwrap();
    fixture_on_a_template_file(&folder);
    std::fs::write(folder.join("g.json"), "{\"not\": \"a fixture\"}").unwrap();
    std::fs::write(folder.join("f.recovery.json"), "{}").unwrap();
    let output = chatplate(&["bench", "--iterations", "1", "fx"], dir.path(), "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = stdout(&output);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{table}");
    assert!(rows[0].starts_with("fx/f.json "), "{table}");
    assert!(
        stderr(&output).contains("skipped fx/g.json"),
        "{}",
        stderr(&output)
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = chatplate(&["bench", "empty"], dir.path(), "");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no fixtures"),
        "{}",
        stderr(&output)
    );
}
