//! The MiniJinja profiles: `minijinja` (3.1) and `minijinja@2` (2.14) disagree where
//! MiniJinja 2 and 3 really differ, each checked against minijinja-py of its own version
//! run for real (scripts/minijinja_py_engine.py as a `lines:` plug-in); `mistralrs` adds
//! mistral.rs's `tojson`, which prints JSON as transformers does.

use std::path::Path;

use crate::common::binary::command;
use crate::common::{self, repo};
use serde_json::{json, Value as Json};

/// What MiniJinja 2 and 3 print differently: booleans and none, a list, `tojson`'s
/// spacing, and rounding a half.
const DIFFERENCES: &str = "{{ messages[0].content == 'Hi' }} {{ messages[0].name }} {{ [1, 'a'] }} {{ messages | tojson }} {{ 2.5 | round }} {{ 1.25 | round(1) }}";

fn session(dir: &Path) -> String {
    let body = json!({
        "version": 1,
        "template": {"source": DIFFERENCES},
        "messages": [{"role": "user", "content": "Hi", "name": null}],
    });
    let path = dir.join("session.json");
    std::fs::write(&path, body.to_string()).unwrap();
    path.display().to_string()
}

fn compare(dir: &Path, engines: &[&str]) -> Json {
    let session = session(dir);
    let mut args = vec!["compare", session.as_str(), "--json"];
    for engine in engines {
        args.extend(["--engine", engine]);
    }
    let out = command(&args, dir)
        .env("CHATPLATE_CONFIG", dir.join("no-config.json"))
        .output()
        .expect("chatplate runs");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

fn prompt(report: &Json, at: usize) -> &str {
    report["renders"][at]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("{report:#}"))
}

#[test]
fn minijinja_2_and_3_disagree_where_they_really_differ() {
    let dir = tempfile::tempdir().unwrap();
    let report = compare(dir.path(), &["minijinja@2", "minijinja", "mistralrs"]);
    // `name: null` is dropped before rendering, as transformers drops None keys.
    assert_eq!(
        prompt(&report, 0),
        r#"True  [1, 'a'] [{"role": "user", "content": "Hi"}] 2.0 1.2"#
    );
    assert_eq!(
        report["renders"][1]["version"],
        "minijinja 2.14.0, minijinja-contrib 2.14.0 (pycompat)"
    );
    assert_eq!(
        prompt(&report, 1),
        r#"true  [1, "a"] [{"role":"user","content":"Hi"}] 3.0 1.3"#
    );
    assert_eq!(
        prompt(&report, 2),
        r#"True  [1, 'a'] [{"role": "user", "content": "Hi"}] 2.0 1.2"#
    );
    // mistral.rs's own tojson spaces JSON as Python does; the rest is MiniJinja 2.
    assert_eq!(
        prompt(&report, 3),
        r#"true  [1, "a"] [{"role": "user", "content": "Hi"}] 3.0 1.3"#
    );
}

/// A Python with `minijinja==VERSION` from `variable`, or `None` (skipped; a failure
/// under CI=true).
fn minijinja_py(variable: &str, test: &str) -> Option<String> {
    let python = std::env::var(variable).ok();
    if python.is_none() {
        common::skip_unless_ci(
            test,
            &format!("{variable} names no Python with minijinja-py"),
        );
    }
    python
}

#[test]
fn each_profile_renders_as_minijinja_py_of_its_version() {
    let test = "each_profile_renders_as_minijinja_py_of_its_version";
    let pythons = (
        minijinja_py("CHATPLATE_MINIJINJA2_PYTHON", test),
        minijinja_py("CHATPLATE_MINIJINJA3_PYTHON", test),
    );
    let (Some(two), Some(three)) = pythons else {
        return;
    };
    let adapter = repo().join("scripts/minijinja_py_engine.py");
    for (engine, python, version) in [
        ("minijinja@2", two, "2.14.0"),
        ("minijinja", three, "3.1.0"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let plugin = format!("lines:{python} {}", adapter.display());
        let report = compare(dir.path(), &[engine, &plugin]);
        assert_eq!(
            report["renders"][2]["version"],
            format!("minijinja-py {version}"),
            "{report:#}"
        );
        assert_eq!(
            prompt(&report, 1),
            prompt(&report, 2),
            "{engine}: {report:#}"
        );
    }
}
