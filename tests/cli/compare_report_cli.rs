//! `chatplate compare FOLDER --engine NAME --report`: a folder of fixtures, or the
//! conformance corpus, compared with a real engine and summarised by cause.

use std::path::Path;
use std::process::Output;

use crate::common::binary::{stderr, stdout};
use crate::common::{self, binary::command};
use serde_json::Value as Json;

fn compare(args: &[&str], dir: &Path) -> Output {
    command(&[&["compare"], args].concat(), dir)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("chatplate runs")
}

/// A fixture on its own template file `NAME.jinja`.
fn fixture(dir: &Path, name: &str, template: &str) {
    std::fs::write(dir.join(format!("{name}.jinja")), template).unwrap();
    let body = format!(
        r#"{{"version": 1, "template": {{"path": "{name}.jinja"}}, "messages": [{{"role": "user", "content": "Hi"}}]}}"#
    );
    std::fs::write(dir.join(format!("{name}.json")), body).unwrap();
}

#[test]
fn a_folder_is_summarised_by_cause_with_its_templates() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    fixture(dir, "plain", "{{ messages[0].content }}");
    // MiniJinja's tojson escapes ' as \u0027; it prints 2.5e20 in full.
    fixture(dir, "quote", "{{ \"it's\" | tojson }}");
    fixture(dir, "float", "{{ 2.5e20 }}");
    fixture(dir, "kwarg", "{{ messages | tojson(ensure_ascii=False) }}");
    let out = compare(&[".", "--engine", "minijinja", "--report"], dir);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("4 cases of 4 templates in "), "{text}");
    // The summary ends with what the whole command took, the corpus's reading included.
    assert!(
        text.lines()
            .last()
            .is_some_and(|line| line.ends_with("s of it reading the corpus")),
        "{text}"
    );
    assert!(
        text.contains(": 1 same, 3 differ (3 templates)\n"),
        "{text}"
    );
    for (label, template) in [
        ("tojson escaping (\\uXXXX)", "quote"),
        ("number formatting", "float"),
        ("raises: arguments it does not take", "kwarg"),
    ] {
        let line = text.lines().find(|l| l.contains(label)).unwrap_or_default();
        assert!(
            line.ends_with(&format!("1         1  {template}")),
            "{label}: {text}"
        );
    }
    let json = compare(&[".", "--engine", "minijinja", "--report", "--json"], dir);
    let report: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report[0]["engine"], "minijinja");
    assert_eq!(report[0]["same"], 1);
    assert_eq!(report[0]["causes"].as_array().unwrap().len(), 3);
    // The whole command's time, what the user waits for, is never less than one engine's.
    let (engine, total) = (&report[0]["seconds"], &report[0]["total_seconds"]);
    assert!(
        total.as_f64().unwrap() >= engine.as_f64().unwrap(),
        "{report}"
    );
    assert!(report[0]["reading_seconds"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_report_needs_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "plain", "{{ 1 }}");
    let out = compare(&[".", "--report"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--report needs the engine"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_conformance_corpus_is_read_in_its_own_layout() {
    let Some(corpus) = common::corpus_dir("the_conformance_corpus_is_read_in_its_own_layout")
    else {
        return;
    };
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("MANIFEST.json")).unwrap())
            .unwrap();
    let cases = manifest["cases"].as_array().unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let out = compare(
        &[
            corpus.to_str().unwrap(),
            "--engine",
            "minijinja",
            "--report",
            "--json",
        ],
        dir.path(),
    );
    let report: Json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(report[0]["cases"], cases, "{}", stderr(&out));
    assert!(report[0]["not_compared"].as_array().unwrap().is_empty());
    // Bare MiniJinja differs somewhere in the corpus (tojson's escaping at least).
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_report_allows_the_template_roots_check_allows() {
    let dir = tempfile::tempdir().unwrap();
    let (fixtures, templates) = (dir.path().join("fixtures"), dir.path().join("templates"));
    std::fs::create_dir_all(&fixtures).unwrap();
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(templates.join("t.jinja"), "{{ messages[0].content }}").unwrap();
    let body = r#"{"version": 1, "template": {"path": "../templates/t.jinja"}, "messages": [{"role": "user", "content": "Hi"}], "expected": {"prompt": "Hi"}}"#;
    std::fs::write(fixtures.join("f.json"), body).unwrap();
    let root = templates.to_str().unwrap();
    let check = command(&["check", "fixtures", "--template-root", root], dir.path())
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let args = [
        "fixtures",
        "--engine",
        "minijinja",
        "--report",
        "--json",
        "--template-root",
        root,
    ];
    let out = compare(&args, dir.path());
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report[0]["cases"], 1, "{report:#}");
    assert_eq!(report[0]["same"], 1, "{report:#}");
    assert_eq!(report[0]["not_compared"], serde_json::json!([]));
    assert_eq!(out.status.code(), Some(0));
    // Without the root the template is outside the folder, as `check` says too.
    let out = compare(&args[..5], dir.path());
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report[0]["cases"], 0, "{report:#}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_engine_that_could_not_run_is_counted_apart_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "plain", "{{ messages[0].content }}");
    fixture(dir.path(), "quote", "{{ \"it's\" | tojson }}");
    // Nothing listens on port 9 (discard) of this machine: llama.cpp cannot answer.
    let args = [".", "--engine", "http://127.0.0.1:9", "--report"];
    let out = compare(&args, dir.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr(&out));
    assert!(
        text.contains("0 same, 0 differ (0 templates), 2 could not run"),
        "{text}"
    );
    assert!(text.contains("  could not run: 2 cases, e.g. "), "{text}");
    // A plug-in whose program is not there, likewise, in JSON.
    let args = [
        ".",
        "--engine",
        "cmd:/no/such/program",
        "--report",
        "--json",
    ];
    let out = compare(&args, dir.path());
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(2), "{report:#}");
    assert_eq!(report[0]["cases"], 0, "{report:#}");
    let errors = report[0]["could_not_run"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{report:#}");
    let error = errors[0]["error"].as_str().unwrap();
    assert!(error.contains("/no/such/program"), "{report:#}");
}

#[test]
fn one_node_serves_a_report_and_a_stuck_case_costs_only_its_own_timeout() {
    let test = "one_node_serves_a_report_and_a_stuck_case_costs_only_its_own_timeout";
    let Some(node_path) = crate::compare_cli::node_path(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "a", "{{ messages[0].content }}");
    // 10^8 steps: the reference runs out of fuel, hf-jinja runs past --timeout and its
    // Node is killed; the next case starts another.
    let stuck = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}";
    fixture(dir.path(), "b", stuck);
    fixture(
        dir.path(),
        "c",
        "<{{ messages[0].role }}>{{ messages[0].content }}",
    );
    let args = [
        ".",
        "--engine",
        "hf-jinja",
        "--report",
        "--json",
        "--timeout",
        "2",
    ];
    let started = std::time::Instant::now();
    let out = command(&[&["compare"], &args[..]].concat(), dir.path())
        .env("NODE_PATH", &node_path)
        .output()
        .unwrap();
    let report: Json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(report[0]["cases"], 3, "{report:#}");
    assert_eq!(
        report[0]["could_not_run"],
        serde_json::json!([]),
        "{report:#}"
    );
    assert!(report[0]["same"].as_u64().unwrap() >= 2, "{report:#}");
    assert!(
        report[0]["version"].as_str().unwrap().starts_with("0."),
        "{report:#}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn one_python_serves_a_report() {
    let Some(python) = crate::compare_cli::python("one_python_serves_a_report") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "a", "{{ messages[0].content }}");
    fixture(
        dir.path(),
        "b",
        "{{ \"it's\" | tojson }}{{ messages | length }}",
    );
    fixture(dir.path(), "c", "{{ raise_exception('no') }}");
    let args = [".", "--engine", "python", "--report", "--json"];
    let out = command(&[&["compare"], &args[..]].concat(), dir.path())
        .env("CHATPLATE_PYTHON", &python)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let report: Json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(report[0]["cases"], 3, "{report:#}");
    assert_eq!(report[0]["same"], 3, "{report:#}");
    assert_eq!(report[0]["version"], "5.23.0", "{report:#}");
    assert_eq!(out.status.code(), Some(0));
}
