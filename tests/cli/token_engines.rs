//! Engines that answer tokens, run for real: a `lines:` plug-in (Jinja2 and a real
//! tokenizer.json through Hugging Face `tokenizers`, one process for a whole report) and
//! `mistral-common` with the tokenizers the package ships. Each is compared token by token
//! with the reference's prompt tokenized by its own tokenizer.

use std::path::{Path, PathBuf};

use crate::common::binary::command;
use crate::common::{self, repo};
use crate::compare_cli::python;
use crate::tokens_support::real_tokenizer;
use serde_json::{json, Value as Json};

fn run(dir: &Path, args: &[&str], python: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = command(&[&["compare"], args].concat(), dir);
    command.env("CHATPLATE_CONFIG", dir.join("no-config.json"));
    match python {
        Some(python) => command.env("CHATPLATE_PYTHON", python),
        None => command.env_remove("CHATPLATE_PYTHON"),
    };
    let out = command.output().expect("chatplate runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// A Llama-3-style template that prints its own BOS, on `content`.
fn llama_fixture(dir: &Path, name: &str, content: &str) -> PathBuf {
    let body = json!({
        "version": 1,
        "template": {"source": "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}"},
        "bos_token": "<|begin_of_text|>",
        "messages": [{"role": "user", "content": content}],
    });
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

/// `lines:PYTHON tests/data/plugins/tokenizing_server.py TOKENIZER LOG`.
fn server_spec(python: &str, tokenizer: &Path, log: &Path) -> String {
    let adapter = repo().join("tests/data/plugins/tokenizing_server.py");
    format!(
        "lines:{python} {} {} {}",
        adapter.display(),
        tokenizer.join("tokenizer.json").display(),
        log.display()
    )
}

#[test]
fn a_plugin_answering_tokens_differs_at_the_double_bos_token() {
    let test = "a_plugin_answering_tokens_differs_at_the_double_bos_token";
    let (Some(python), Some(tokenizer)) = (python(test), real_tokenizer("llama3_1", test)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let session = llama_fixture(dir.path(), "session", "Hi there");
    let spec = server_spec(&python, &tokenizer, &dir.path().join("log"));
    let args = [session.to_str().unwrap(), "--engine", &spec, "--json"];
    let (code, stdout, stderr) = run(dir.path(), &args, None);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let report: Json = serde_json::from_str(&stdout).unwrap();
    // tokenizer.encode(prompt) adds <|begin_of_text|> (128000) before the template's own:
    // the reference's second token is the header, the server's a second BOS.
    let tokens = &report["renders"][1]["tokens"];
    let first = &tokens["first_difference"];
    assert_eq!(first["index"], 1, "{report:#}");
    assert_eq!(first["byte"], "<|begin_of_text|>".len(), "{report:#}");
    assert_eq!(
        first["reference"],
        json!({"id": 128006, "text": "<|start_header_id|>"})
    );
    assert_eq!(
        first["engine"],
        json!({"id": 128000, "text": "<|begin_of_text|>"})
    );
    assert_eq!(
        tokens["engine"].as_u64(),
        tokens["reference"].as_u64().map(|n| n + 1)
    );
    assert_eq!(report["first_difference"], 17);
    // The text report names the token on both sides.
    let (code, stdout, _) = run(dir.path(), &args[..3], None);
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("differs at token 1 of 8 (byte 17, line 1:18)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("transformers: 128006 \"<|start_header_id|>\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(": 128000 \"<|begin_of_text|>\"\n"),
        "{stdout}"
    );
}

#[test]
fn a_report_keeps_one_lines_plugin_process_for_every_case() {
    let test = "a_report_keeps_one_lines_plugin_process_for_every_case";
    let (Some(python), Some(tokenizer)) = (python(test), real_tokenizer("llama3_1", test)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for (name, content) in [("a", "Hi"), ("b", "Hello there"), ("c", "2+2?")] {
        llama_fixture(&cases, name, content);
    }
    let log = dir.path().join("log");
    let spec = server_spec(&python, &tokenizer, &log);
    let args = [
        cases.to_str().unwrap(),
        "--report",
        "--engine",
        &spec,
        "--json",
    ];
    let (code, stdout, stderr) = run(dir.path(), &args, None);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let report: Json = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report[0]["cases"], 3, "{report:#}");
    assert_eq!(report[0]["same"], 0, "{report:#}");
    let example = report[0]["causes"][0]["example"]["detail"]
        .as_str()
        .unwrap();
    assert!(
        example.starts_with("token 1 (byte 17): 128006 \"<|start_header_id|>\" vs 128000"),
        "{report:#}"
    );
    // Three requests, one process.
    let pids: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(pids.len(), 3, "{pids:?}");
    assert!(pids.iter().all(|pid| *pid == pids[0]), "{pids:?}");
}

/// The Python with mistral-common ($CHATPLATE_MISTRAL_PYTHON, which .ci/run installs), or
/// `None` (skipped; a failure under CI=true).
fn mistral_python(test: &str) -> Option<String> {
    let python = std::env::var("CHATPLATE_MISTRAL_PYTHON").ok();
    if python.is_none() {
        common::skip_unless_ci(
            test,
            "CHATPLATE_MISTRAL_PYTHON names no Python with mistral-common",
        );
    }
    python
}

/// A Mistral-style session: `[INST]` written before each user message, with `space`
/// after it or not.
fn mistral_fixture(dir: &Path, space: &str) -> PathBuf {
    let template = format!(
        "{{{{ bos_token }}}}{{% for m in messages %}}{{% if m.role == 'user' %}}[INST]{space}{{{{ m.content }}}}[/INST]{{% else %}}{{{{ m.content }}}}{{{{ eos_token }}}}{{% endif %}}{{% endfor %}}"
    );
    let body = json!({
        "version": 1,
        "template": {"source": template},
        "bos_token": "<s>",
        "eos_token": "</s>",
        "messages": [
            {"role": "user", "content": "Hi there"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "2+2?"},
        ],
    });
    let path = dir.join("mistral.json");
    std::fs::write(&path, body.to_string()).unwrap();
    path
}

#[test]
fn mistral_common_compares_tokens_with_the_tokenizers_it_ships() {
    let test = "mistral_common_compares_tokens_with_the_tokenizers_it_ships";
    let Some(python) = mistral_python(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let compare = |space: &str, tokenizer: &str| {
        let session = mistral_fixture(dir.path(), space);
        let engine = format!("mistral-common:{tokenizer}");
        let args = [session.to_str().unwrap(), "--engine", &engine, "--json"];
        let (code, stdout, stderr) = run(dir.path(), &args, Some(&python));
        let report: Json = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
        (code, report["renders"][1].clone(), report)
    };
    // Tekken (v3): `[INST]Hi there[/INST]` is exactly what mistral-common encodes.
    let (code, render, report) = compare("", "v3-tekken");
    assert_eq!(code, Some(0), "{report:#}");
    assert!(
        render["version"]
            .as_str()
            .unwrap()
            .starts_with("mistral-common 1."),
        "{render:#}"
    );
    assert_eq!(
        render["tokens"]["first_difference"],
        Json::Null,
        "{render:#}"
    );
    assert_eq!(render["tokens"]["engine"], 14, "{render:#}");
    // SentencePiece (v7) encodes each message as `▁Hi`: a template without the space
    // after [INST] parts at its third token, one with it agrees.
    let (code, render, report) = compare("", "v7");
    assert_eq!(code, Some(1), "{report:#}");
    let first = &render["tokens"]["first_difference"];
    assert_eq!(first["index"], 2, "{render:#}");
    assert_eq!(first["byte"], "<s>[INST]".len(), "{render:#}");
    assert_eq!(first["reference"], json!({"id": 24577, "text": "Hi"}));
    assert_eq!(first["engine"], json!({"id": 16127, "text": " Hi"}));
    let (code, render, report) = compare(" ", "v7");
    assert_eq!(code, Some(1), "{report:#}");
    // ... up to the assistant's answer, which mistral-common encodes as `▁Hello` too.
    let first = &render["tokens"]["first_difference"];
    assert_eq!(first["reference"]["text"], "Hello", "{render:#}");
    assert_eq!(first["engine"]["text"], " Hello", "{render:#}");
}

#[test]
fn mistral_common_needs_a_tokenizer_and_says_when_it_is_not_installed() {
    let dir = tempfile::tempdir().unwrap();
    let session = mistral_fixture(dir.path(), "");
    let session = session.to_str().unwrap();
    let (code, _, stderr) = run(dir.path(), &[session, "--engine", "mistral-common"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("mistral-common needs its tokenizer"),
        "{stderr}"
    );
    // A Python without mistral-common: not installed, with how to install it.
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            session,
            "--engine",
            "mistral-common:v7",
            "--python",
            "python3",
        ],
        None,
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("mistral-common:v7 is not available: ")
            && stdout.contains("pip install 'mistral-common[sentencepiece]'"),
        "{stdout}"
    );
}
