//! Plug-in engines (`cmd:PROGRAM [ARGS]`), run for real: the adapter docs/compare.md shows,
//! run by the CI's Python (its Jinja2), named on the command line and in the config file;
//! and a fixture that tries to name one, refused.

use std::path::{Path, PathBuf};

use crate::common::binary::command;
use crate::compare_cli::python;
use serde_json::{json, Value as Json};

/// The ```python block of docs/compare.md's plug-in section, written to `dir`.
fn docs_adapter(dir: &Path) -> PathBuf {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/compare.md"))
            .expect("docs/compare.md");
    let start = docs.find("```python\n").expect("a python block") + "```python\n".len();
    let end = start + docs[start..].find("```").expect("its end");
    let code = &docs[start..end];
    assert!(
        code.lines().count() <= 20,
        "the adapter is 20 lines at most"
    );
    let path = dir.join("adapter.py");
    std::fs::write(&path, code).unwrap();
    path
}

fn session(dir: &Path, template: &str) -> PathBuf {
    let body = json!({
        "version": 1,
        "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi, it's me"}],
        "add_generation_prompt": true,
    });
    let path = dir.join("session.json");
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

fn compare_json(dir: &Path, args: &[&str], config: Option<&Path>) -> (Option<i32>, Json, String) {
    let mut command = command(&[&["compare", "--json"], args].concat(), dir);
    command.env_remove("CHATPLATE_PYTHON");
    match config {
        Some(config) => command.env("CHATPLATE_CONFIG", config),
        None => command.env("CHATPLATE_CONFIG", dir.join("no-config.json")),
    };
    let out = command.output().expect("chatplate runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("a JSON report; stderr: {stderr}"));
    (out.status.code(), report, stderr)
}

const TEMPLATE: &str = "{% for m in messages %}<|{{ m.role }}|>{{ m.content | tojson }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

#[test]
fn the_docs_adapter_agrees_with_the_reference() {
    let Some(python) = python("the_docs_adapter_agrees_with_the_reference") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    docs_adapter(dir.path());
    let path = session(dir.path(), TEMPLATE);
    let spec = format!("cmd:{python} adapter.py");
    let (code, report, stderr) = compare_json(
        dir.path(),
        &[path.to_str().unwrap(), "--engine", &spec],
        None,
    );
    assert_eq!(code, Some(0), "{report:#}\n{stderr}");
    let plugin = &report["renders"][1];
    assert_eq!(plugin["engine"], spec.as_str(), "{report:#}");
    assert!(
        plugin["version"].as_str().unwrap().starts_with("jinja2 "),
        "{report:#}"
    );
    assert_eq!(
        plugin["prompt"], "<|user|>\"Hi, it's me\"\n<|assistant|>",
        "{report:#}"
    );
    assert_eq!(report["first_difference"], Json::Null);
}

#[test]
fn a_config_engine_runs_by_name_and_its_errors_are_the_engines() {
    let Some(python) = python("a_config_engine_runs_by_name_and_its_errors_are_the_engines") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    docs_adapter(&home);
    let config = home.join("config.json");
    let spec = format!("cmd:{python} adapter.py");
    std::fs::write(&config, json!({"engines": {"jinja2": spec}}).to_string()).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // Jinja2 raises on a call of an undefined function where transformers' does too, but
    // the adapter has no `strftime_now`: its error is the engine's answer.
    let path = session(&work, "{{ strftime_now('%Y') }}");
    let (code, report, stderr) = compare_json(
        &work,
        &[path.to_str().unwrap(), "--engine", "jinja2"],
        Some(&config),
    );
    assert_eq!(code, Some(1), "{report:#}\n{stderr}");
    let plugin = &report["renders"][1];
    assert_eq!(plugin["engine"], "jinja2", "{report:#}");
    let error = plugin["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("UndefinedError: "), "{report:#}");
}

#[test]
fn a_program_that_fails_or_answers_nonsense_is_reported_as_failing() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), TEMPLATE);
    let (code, report, _) = compare_json(
        dir.path(),
        &[path.to_str().unwrap(), "--engine", "cmd:echo nonsense"],
        None,
    );
    assert_eq!(code, Some(1), "{report:#}");
    let error = report["renders"][1]["error"].as_str().unwrap_or_default();
    assert!(error.contains("unexpected output"), "{report:#}");
}

#[test]
fn a_fixture_that_names_an_engine_is_refused_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let fixture = json!({
        "version": 1,
        "template": {"source": "{{ messages[0].content }}"},
        "messages": [{"role": "user", "content": "Hi"}],
        "expected": {"prompt": "Hi"},
        "engines": {"mine": format!("cmd:touch {}", marker.display())},
    });
    std::fs::write(dir.path().join("fixture.json"), fixture.to_string()).unwrap();
    let out = command(&["check", "fixture.json"], dir.path())
        .env("CHATPLATE_CONFIG", dir.path().join("no-config.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("unknown field `engines`"), "{stdout}");
    assert!(
        stdout.contains("a fixture cannot name an engine or a program to run"),
        "{stdout}"
    );
    assert!(!marker.exists());
}

#[test]
fn check_engines_takes_a_plugin() {
    let Some(python) = python("check_engines_takes_a_plugin") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    docs_adapter(dir.path());
    let fixture = json!({
        "version": 1,
        "template": {"source": TEMPLATE},
        "messages": [{"role": "user", "content": "Hi, it's me"}],
        "add_generation_prompt": true,
        "expected": {"prompt": "<|user|>\"Hi, it's me\"\n<|assistant|>"},
    });
    std::fs::write(dir.path().join("fixture.json"), fixture.to_string()).unwrap();
    let spec = format!("cmd:{python} adapter.py");
    let out = command(&["check", "fixture.json", "--engines", &spec], dir.path())
        .env("CHATPLATE_CONFIG", dir.path().join("no-config.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Jinja port of tests/data/encoders/encoding_dsv_style.py, as engines hand-port them.
const DSV_PORT: &str = "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ m.content }}{% elif m.role == 'user' %}<｜User｜>{{ m.content }}{% else %}<｜Assistant｜></think>{{ m.content }}<｜end▁of▁sentence｜>{% endif %}{% endfor %}{% if messages[-1].role == 'user' %}<｜Assistant｜>{% if thinking %}<think>{% else %}</think>{% endif %}{% endif %}";

fn dsv_session(dir: &Path, variables: &Json) -> PathBuf {
    let body = json!({
        "version": 1,
        "template": {"source": DSV_PORT},
        "bos_token": "<｜begin▁of▁sentence｜>",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "2+2?"},
        ],
        "variables": variables,
    });
    let path = dir.join("dsv.json");
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

fn encoder_file() -> String {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/encoders/encoding_dsv_style.py");
    format!("py:{}:encode_messages", file.display())
}

#[test]
fn a_python_encoder_agrees_with_its_jinja_port_and_parts_where_the_port_drifts() {
    let test = "a_python_encoder_agrees_with_its_jinja_port_and_parts_where_the_port_drifts";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = encoder_file();
    let run = |variables: Json| {
        let path = dsv_session(dir.path(), &variables);
        let mut command = command(
            &[
                "compare",
                "--json",
                path.to_str().unwrap(),
                "--engine",
                &spec,
            ],
            dir.path(),
        );
        command
            .env("CHATPLATE_PYTHON", &python)
            .env("CHATPLATE_CONFIG", dir.path().join("no-config.json"));
        let out = command.output().unwrap();
        let report: Json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), report)
    };
    // The encoder takes `thinking_mode`; the port reads `thinking`. Each gets the
    // variables it names.
    let (code, report) = run(json!({"thinking_mode": "chat", "thinking": false}));
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(
        report["renders"][1]["version"], "encode_messages 0.1-test",
        "{report:#}"
    );
    // The port forgets to read `thinking_mode`: it drifts from the encoder at the end.
    let (code, report) = run(json!({"thinking_mode": "thinking"}));
    assert_eq!(code, Some(1), "{report:#}");
    let reference = report["renders"][0]["prompt"].as_str().unwrap();
    let encoded = report["renders"][1]["prompt"].as_str().unwrap();
    assert!(reference.ends_with("<｜Assistant｜></think>"), "{report:#}");
    assert!(encoded.ends_with("<｜Assistant｜><think>"), "{report:#}");
    assert_eq!(
        report["first_difference"],
        reference.len() - "/think>".len()
    );
    // Its own errors are the engine's answer.
    let (code, report) = run(json!({"thinking_mode": "deep"}));
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        report["renders"][1]["error"], "ValueError: Invalid thinking_mode: deep",
        "{report:#}"
    );
}

#[test]
fn a_module_function_is_called_from_the_users_python() {
    let Some(python) = python("a_module_function_is_called_from_the_users_python") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), TEMPLATE);
    // pprint.pformat(messages) is a function of an installed module that returns a string;
    // it takes none of the keyword arguments by name, so it gets none.
    let mut command = command(
        &[
            "compare",
            "--json",
            path.to_str().unwrap(),
            "--engine",
            "py:pprint:pformat",
        ],
        dir.path(),
    );
    command
        .env("CHATPLATE_PYTHON", &python)
        .env("CHATPLATE_CONFIG", dir.path().join("no-config.json"));
    let out = command.output().unwrap();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(
        report["renders"][1]["prompt"], r#"[{'content': "Hi, it's me", 'role': 'user'}]"#,
        "{report:#}"
    );
}

#[test]
fn check_engines_takes_a_config_engine_with_paths_from_the_config_folder() {
    let test = "check_engines_takes_a_config_engine_with_paths_from_the_config_folder";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir(&home).unwrap();
    std::fs::create_dir(&work).unwrap();
    docs_adapter(&home);
    let config = home.join("config.json");
    let spec = format!("cmd:{python} adapter.py");
    std::fs::write(&config, json!({"engines": {"jinja2": spec}}).to_string()).unwrap();
    let fixture = json!({
        "version": 1,
        "template": {"source": TEMPLATE},
        "messages": [{"role": "user", "content": "Hi, it's me"}],
        "add_generation_prompt": true,
        "expected": {"prompt": "<|user|>\"Hi, it's me\"\n<|assistant|>"},
    });
    std::fs::write(work.join("fixture.json"), fixture.to_string()).unwrap();
    // The checking children get the engine with adapter.py made absolute.
    let out = command(&["check", "fixture.json", "--engines", "jinja2"], &work)
        .env("CHATPLATE_CONFIG", &config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
}

#[test]
fn a_report_runs_a_python_encoder_a_request_a_line() {
    let test = "a_report_runs_a_python_encoder_a_request_a_line";
    let Some(python) = python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    // The port agrees in chat mode and drifts in thinking mode (as above), in one report.
    for (name, mode) in [("chat", "chat"), ("thinking", "thinking")] {
        let path = dsv_session(&cases, &json!({"thinking_mode": mode, "thinking": false}));
        std::fs::rename(path, cases.join(format!("{name}.json"))).unwrap();
    }
    let spec = encoder_file();
    let out = command(
        &["compare", "cases", "--report", "--engine", &spec, "--json"],
        dir.path(),
    )
    .env("CHATPLATE_PYTHON", &python)
    .env("CHATPLATE_CONFIG", dir.path().join("no-config.json"))
    .output()
    .unwrap();
    let report: Json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report[0]["cases"], 2, "{report:#}");
    assert_eq!(report[0]["same"], 1, "{report:#}");
    assert_eq!(
        report[0]["version"], "encode_messages 0.1-test",
        "{report:#}"
    );
    assert_eq!(report[0]["could_not_run"], json!([]), "{report:#}");
}
