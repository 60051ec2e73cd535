//! `chatplate compare` against the real engines: bare MiniJinja in-process, the CI
//! venv's transformers (`CHATPLATE_PYTHON`) and @huggingface/jinja on Node (NODE_PATH, else
//! `target/node/node_modules` from scripts/fetch_hf_jinja.sh). Nothing is mocked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{self, binary::command};
use serde_json::{json, Value as Json};

/// A session with an inline template, in a fresh folder.
fn session(dir: &Path, template: &str, extra: Json) -> PathBuf {
    let mut body = json!({
        "version": 1,
        "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    for (key, value) in extra.as_object().expect("an object") {
        body[key] = value.clone();
    }
    let path = dir.join("session.json");
    std::fs::write(&path, body.to_string()).expect("session written");
    path
}

fn compare(args: &[&str], dir: &Path, setup: impl FnOnce(&mut Command)) -> Output {
    let mut command = command(&[&["compare", "--color", "never"], args].concat(), dir);
    command
        .env_remove("CHATPLATE_PYTHON")
        .env("HF_HUB_OFFLINE", "1");
    setup(&mut command);
    command.output().expect("chatplate runs")
}

fn report(output: &Output) -> Json {
    serde_json::from_slice(&output.stdout).expect("a JSON report")
}

/// The CI Python with transformers, or `None` (skipped; a failure under CI=true).
pub(crate) fn python(test: &str) -> Option<String> {
    let python = std::env::var("CHATPLATE_PYTHON").ok();
    if python.is_none() {
        common::skip_unless_ci(test, "CHATPLATE_PYTHON names no Python with transformers");
    }
    python
}

/// Where Node finds @huggingface/jinja, or `None` (skipped; a failure under CI=true).
pub(crate) fn node_path(test: &str) -> Option<String> {
    let fetched = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/node/node_modules");
    let path = std::env::var("NODE_PATH")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| fetched.display().to_string());
    let found = std::env::split_paths(&path).any(|dir| dir.join("@huggingface/jinja").is_dir());
    let node = Command::new("node").arg("--version").output().is_ok();
    if !(found && node) {
        common::skip_unless_ci(
            test,
            "no node, or no @huggingface/jinja (run scripts/fetch_hf_jinja.sh)",
        );
        return None;
    }
    Some(path)
}

#[test]
fn minijinja_agrees_on_plain_text_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(
        dir.path(),
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
        json!({}),
    );
    let out = compare(
        &[path.to_str().unwrap(), "--engine", "minijinja"],
        dir.path(),
        |_| {},
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("minijinja (minijinja 3.1.0") && text.contains(": same"),
        "{text}"
    );
}

#[test]
fn minijinja_tojson_escaping_differs_and_the_first_byte_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    // Python's json.dumps escapes nothing here; MiniJinja's tojson escapes the quote mark
    // as \u0027 (HTML-safe), so they part at the apostrophe, byte 12 of `{"a": "it's"}`.
    let path = session(dir.path(), "{{ {'a': \"it's\"} | tojson }}", json!({}));
    let args = [path.to_str().unwrap(), "--engine", "minijinja", "--json"];
    let out = compare(&args, dir.path(), |_| {});
    assert_eq!(out.status.code(), Some(1));
    let report = report(&out);
    assert_eq!(report["renders"][0]["prompt"], "{\"a\": \"it's\"}");
    assert_eq!(report["renders"][1]["engine"], "minijinja");
    assert_eq!(report["renders"][1]["prompt"], "{\"a\": \"it\\u0027s\"}");
    assert_eq!(report["first_difference"], 9);
    let text = compare(
        &[path.to_str().unwrap(), "--engine", "minijinja"],
        dir.path(),
        |_| {},
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("differs at byte 9 (line 1:10)"), "{text}");
    assert!(text.contains("@@ line 1 @@"), "{text}");
}

#[test]
fn an_unknown_engine_or_a_missing_session_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = compare(&["nope.json", "--engine", "minijinja"], dir.path(), |_| {});
    assert_eq!(out.status.code(), Some(2));
    let path = session(dir.path(), "x", json!({}));
    let out = compare(
        &[path.to_str().unwrap(), "--engine", "jinja9"],
        dir.path(),
        |_| {},
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_engine_that_is_not_installed_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), "hello", json!({}));
    let args = [
        path.to_str().unwrap(),
        "--engine",
        "python",
        "--engine",
        "minijinja",
        "--json",
    ];
    let out = compare(&args, dir.path(), |_| {});
    assert_eq!(out.status.code(), Some(1));
    let report = report(&out);
    let error = report["renders"][1]["error"].as_str().unwrap();
    assert!(
        error.contains("CHATPLATE_PYTHON") && error.contains("pip install transformers"),
        "{error}"
    );
    assert_eq!(report["renders"][2]["prompt"], "hello");
    // By default an engine that is not installed is skipped with a note.
    let out = compare(&[path.to_str().unwrap()], dir.path(), |c| {
        c.env("PATH", "");
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipped python"));
}

#[test]
fn python_transformers_agrees_with_the_reference_on_a_real_session() {
    let Some(python) = python("python_transformers_agrees_with_the_reference_on_a_real_session")
    else {
        return;
    };
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    for name in [
        "example.json",
        "chatml-with-headers-tools.json",
        "qwen2.5-reasoning-tools.json",
    ] {
        let path = sessions.join(name);
        let args = [path.to_str().unwrap(), "--engine", "python", "--json"];
        let out = compare(&args, &sessions, |c| {
            c.env("CHATPLATE_PYTHON", &python);
        });
        let report = report(&out);
        assert_eq!(report["renders"][1]["version"], "5.23.0", "{report}");
        assert_eq!(report["first_difference"], Json::Null, "{name}: {report}");
        assert_eq!(out.status.code(), Some(0));
    }
}

#[test]
fn python_and_hf_jinja_part_where_javascript_prints_a_dict() {
    let test = "python_and_hf_jinja_part_where_javascript_prints_a_dict";
    let (Some(python), Some(node_path)) = (python(test), node_path(test)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{{ bos_token }}{{ 1/3 }} {{ {'a': 1} }} {{ strftime_now('%d %B %Y') }}";
    let extra = json!({"bos_token": "<s>", "clock": "2026-01-15T00:00:00"});
    let path = session(dir.path(), template, extra);
    let args = [
        path.to_str().unwrap(),
        "--engine",
        "python",
        "--engine",
        "hf-jinja",
        "--json",
    ];
    let out = compare(&args, dir.path(), |c| {
        c.env("CHATPLATE_PYTHON", &python)
            .env("NODE_PATH", &node_path);
    });
    let report = report(&out);
    let prompt = |i: usize| {
        report["renders"][i]["prompt"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        prompt(0),
        "<s>0.3333333333333333 {'a': 1} 15 January 2026",
        "{report}"
    );
    assert_eq!(prompt(1), prompt(0), "python agrees: {report}");
    assert_eq!(report["renders"][2]["engine"], "hf-jinja");
    assert_eq!(report["renders"][2]["version"], "0.5.11");
    // @huggingface/jinja prints a dict as JSON, Python as its repr: they part at the quote.
    assert_eq!(
        prompt(2),
        "<s>0.3333333333333333 {\"a\": 1} 15 January 2026",
        "{report}"
    );
    assert_eq!(report["first_difference"], 23);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_template_error_in_hf_jinja_is_its_own_render_only() {
    let test = "a_template_error_in_hf_jinja_is_its_own_render_only";
    let Some(node_path) = node_path(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), "{{ messages[0].content.zfill(5) }}", json!({}));
    let args = [
        path.to_str().unwrap(),
        "--engine",
        "hf-jinja",
        "--engine",
        "minijinja",
    ];
    let out = compare(&args, dir.path(), |c| {
        c.env("NODE_PATH", &node_path);
    });
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("transformers (chatplate"), "{text}");
    assert!(text.contains("hf-jinja (0.5.11): error:"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}
