//! `chatplate lint` as a user and a CI job run it: exit codes, the four formats (SARIF
//! validated against the official 2.1.0 schema), `--allow`/`--deny`/`--fail-on` and the
//! config file's `"lint"` section, and the targets: a template, a model folder with a
//! GGUF in it, a GGUF whose model is in the Hugging Face cache, a model id.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value as Json};

use crate::common::binary::{command, stderr, stdout};
use crate::common::{corpus_dir, repo, skip_unless_ci};
use crate::hf_support;

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n\
                      {% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// Runs `chatplate lint ARGS` in `dir` with no config file unless `config` is given.
fn lint(args: &[&str], dir: &Path, config: Option<&Path>) -> Output {
    let mut all = vec!["lint"];
    all.extend_from_slice(args);
    let mut cmd = command(&all, dir);
    let none = dir.join("no-config.json");
    cmd.env("CHATPLATE_CONFIG", config.unwrap_or(&none));
    cmd.output().expect("chatplate runs")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn json_of(output: &Output) -> Json {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| panic!("{e}: {}", stdout(output)))
}

#[test]
fn lint_exits_0_clean_1_on_findings_2_when_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "chatml.jinja", CHATML);
    write(
        dir.path(),
        "evil.jinja",
        "{{ cycler.__init__.__globals__ }}",
    );
    let clean = lint(&["chatml.jinja"], dir.path(), None);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    assert!(
        stdout(&clean).contains("info[zero-mask]"),
        "{}",
        stdout(&clean)
    );
    assert!(stdout(&clean).ends_with("1 template: 0 errors, 0 warnings, 1 info (fails on error)\n"));
    let evil = lint(&["chatml.jinja", "evil.jinja"], dir.path(), None);
    assert_eq!(evil.status.code(), Some(1));
    assert!(
        stdout(&evil).contains("  error[sandbox-escape] at evil.jinja:1:11\n"),
        "{}",
        stdout(&evil)
    );
    let missing = lint(&["chatml.jinja", "gone.jinja"], dir.path(), None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stdout(&missing).contains("could not lint"),
        "{}",
        stdout(&missing)
    );
    assert_eq!(
        lint(&["--fail-on", "info", "chatml.jinja"], dir.path(), None)
            .status
            .code(),
        Some(1)
    );
    let allowed = lint(&["--allow", "zero-mask", "chatml.jinja"], dir.path(), None);
    assert!(
        stdout(&allowed).contains("  no findings\n"),
        "{}",
        stdout(&allowed)
    );
    let refused = lint(
        &["--allow", "sandbox-escape", "evil.jinja"],
        dir.path(),
        None,
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("always an error"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn lint_text_reads_at_80_columns() {
    let Some(corpus) = corpus_dir("lint_text_reads_at_80_columns") else {
        return;
    };
    let templates = corpus.join("templates");
    let output = lint(
        &["Qwen-Qwen3-0.6B.jinja", "Apertus-8B-Instruct.jinja"],
        &templates,
        None,
    );
    let text = stdout(&output);
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("  warning[reasoning-dropped]\n"), "{text}");
    assert!(
        text.contains("  error[marker-balance] at Apertus-8B-Instruct.jinja:147:"),
        "{text}"
    );
    assert!(text.contains("    fix: "), "{text}");
}

#[test]
fn lint_json_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "evil.jinja",
        "ok\n{{ cycler.__init__.__globals__ }}",
    );
    let output = lint(&["--format", "json", "evil.jinja"], dir.path(), None);
    assert_eq!(output.status.code(), Some(1));
    let report = json_of(&output);
    let template = &report["templates"][0];
    let keys: Vec<&String> = template.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["template", "source", "findings"]);
    let finding = &template["findings"][0];
    let keys: Vec<&String> = finding.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["rule", "severity", "line", "column", "message", "fix"]
    );
    assert_eq!(
        (
            &finding["rule"],
            &finding["severity"],
            &finding["line"],
            &finding["column"]
        ),
        (
            &json!("sandbox-escape"),
            &json!("error"),
            &json!(2),
            &json!(11)
        )
    );
    assert_eq!(template["template"], json!("evil"));
}

#[test]
fn lint_sarif_validates_against_the_sarif_2_1_0_schema() {
    let test = "lint_sarif_validates_against_the_sarif_2_1_0_schema";
    let schema = repo().join("target/sarif/sarif-schema-2.1.0.json");
    let python = std::env::var("CHATPLATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_jsonschema = std::process::Command::new(&python)
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !schema.is_file() || !has_jsonschema {
        skip_unless_ci(
            test,
            "no SARIF schema or jsonschema (run scripts/fetch_sarif_schema.sh)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "evil.jinja",
        "{{ cycler.__init__.__globals__ }}",
    );
    write(dir.path(), "chatml.jinja", CHATML);
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    write(
        &model,
        "tokenizer_config.json",
        &json!({"chat_template": "{{ messages[0].content.nope() }}"}).to_string(),
    );
    let output = lint(
        &[
            "--format",
            "sarif",
            "evil.jinja",
            "chatml.jinja",
            "model",
            "gone.jinja",
        ],
        dir.path(),
        None,
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let log = write(dir.path(), "lint.sarif", &stdout(&output));
    let check = std::process::Command::new(&python)
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             log, schema = (json.load(open(p)) for p in sys.argv[1:3])\n\
             jsonschema.validate(log, schema)\n\
             print(len(log['runs'][0]['results']))",
        ])
        .arg(&log)
        .arg(&schema)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let sarif = json_of(&output);
    let results = &sarif["runs"][0]["results"];
    let escape = results
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "sandbox-escape")
        .unwrap();
    let location = &escape["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], json!("evil.jinja"));
    assert_eq!(
        location["region"],
        json!({"startLine": 1, "startColumn": 11})
    );
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        json!(false)
    );
}

#[test]
fn lint_github_annotations_point_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "evil.jinja",
        "{{ cycler.__init__.__globals__ }}",
    );
    let output = lint(&["--format", "github", "evil.jinja"], dir.path(), None);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.starts_with("::error file=evil.jinja,line=1,col=11,title=chatplate lint%3A sandbox-escape::evil: reaches for"),
        "{text}"
    );
    assert!(text.contains("%0AFix: remove the access"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn lint_reads_allow_deny_and_fail_on_from_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "chatml.jinja", CHATML);
    let config = |section: Json| {
        write(
            dir.path(),
            "config.json",
            &json!({"lint": section}).to_string(),
        )
    };
    let run = |args: &[&str], config: &Path| lint(args, dir.path(), Some(config));
    let denied = config(json!({"deny": ["zero-mask"]}));
    let output = run(&["chatml.jinja"], &denied);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("  error[zero-mask]"),
        "{}",
        stdout(&output)
    );
    // A flag wins over the file for the same rule.
    assert_eq!(
        run(&["--allow", "zero-mask", "chatml.jinja"], &denied)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&["chatml.jinja"], &config(json!({"fail_on": "info"})))
            .status
            .code(),
        Some(1)
    );
    let allowed = run(&["chatml.jinja"], &config(json!({"allow": ["zero-mask"]})));
    assert!(
        stdout(&allowed).contains("no findings"),
        "{}",
        stdout(&allowed)
    );
    let bad = run(&["chatml.jinja"], &config(json!({"deny": ["nope"]})));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("lint.deny: no rule \"nope\""),
        "{}",
        stderr(&bad)
    );
}

/// Writes a GGUF with `template`, the BOS/EOS tokens of Llama 3, `add_bos_token` and the
/// model it names as its source, with the `gguf` package; `None` (skipped) without it.
fn gguf(path: &Path, template: &str, add_bos: bool, source: &str, test: &str) -> Option<()> {
    let python = crate::gguf_support::python_with_gguf(test)?;
    let script = "import sys, numpy as np, gguf\n\
                  path, template, add_bos, source = sys.argv[1:5]\n\
                  w = gguf.GGUFWriter(path, 'llama')\n\
                  w.add_name('tiny')\n\
                  if source: w.add_string('general.source.repo_url', source)\n\
                  w.add_tokenizer_model('gpt2')\n\
                  w.add_token_list(['<|begin_of_text|>', '<|eot_id|>', 'a'])\n\
                  w.add_token_types([3, 3, 1])\n\
                  w.add_bos_token_id(0)\n\
                  w.add_eos_token_id(1)\n\
                  w.add_add_bos_token(add_bos == '1')\n\
                  w.add_chat_template(template)\n\
                  w.add_tensor('token_embd.weight', np.arange(8, dtype=np.float32))\n\
                  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()\n";
    let status = std::process::Command::new(python)
        .args(["-c", script])
        .arg(path)
        .arg(template)
        .arg(if add_bos { "1" } else { "0" })
        .arg(source)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    Some(())
}

fn findings_of(report: &Json, template: &str) -> Vec<String> {
    let entry = report["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["template"] == template);
    let entry = entry.unwrap_or_else(|| panic!("no {template} in {report:#}"));
    entry["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn lint_a_model_folder_with_its_gguf() {
    let test = "lint_a_model_folder_with_its_gguf";
    let Some(corpus) = corpus_dir(test) else {
        return;
    };
    let old =
        std::fs::read_to_string(corpus.join("templates/google-gemma-4-31B-it.jinja")).unwrap();
    let new =
        std::fs::read_to_string(corpus.join("templates/google-gemma-4-31B-it-interleaved.jinja"))
            .unwrap();
    let llama =
        std::fs::read_to_string(corpus.join("templates/meta-llama-Llama-3.1-8B-Instruct.jinja"))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("gemma-4");
    std::fs::create_dir(&folder).unwrap();
    write(&folder, "chat_template.jinja", &new);
    write(
        &folder,
        "tokenizer_config.json",
        &json!({"bos_token": "<bos>", "eos_token": "<eos>"}).to_string(),
    );
    if gguf(&folder.join("gemma-4-Q4.gguf"), &old, false, "", test).is_none() {
        return;
    }
    let output = lint(&["--format", "json", "gemma-4"], dir.path(), None);
    let report = json_of(&output);
    assert_eq!(
        report["templates"].as_array().unwrap().len(),
        2,
        "{report:#}"
    );
    assert!(!findings_of(&report, "gemma-4").contains(&"gguf-drift".to_string()));
    assert!(
        findings_of(&report, "gemma-4-Q4").contains(&"gguf-drift".to_string()),
        "{report:#}"
    );
    // A GGUF whose template prints BOS while the file says llama.cpp adds one.
    gguf(&dir.path().join("llama.gguf"), &llama, true, "", test);
    let output = lint(&["--format", "json", "llama.gguf"], dir.path(), None);
    assert!(findings_of(&json_of(&output), "llama").contains(&"double-bos".to_string()));
    gguf(&dir.path().join("llama.gguf"), &llama, false, "", test);
    let output = lint(&["--format", "json", "llama.gguf"], dir.path(), None);
    assert!(!findings_of(&json_of(&output), "llama").contains(&"double-bos".to_string()));
}

#[test]
fn lint_a_gguf_against_its_model_in_the_hf_cache_and_the_model_itself() {
    let test = "lint_a_gguf_against_its_model_in_the_hf_cache_and_the_model_itself";
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("hub");
    hf_support::fake_cache(&cache);
    let run = |args: &[&str]| {
        let mut all = vec!["lint", "--format", "json"];
        all.extend_from_slice(args);
        let mut cmd = command(&all, dir.path());
        cmd.env("HF_HUB_CACHE", &cache).env("HF_HUB_OFFLINE", "1");
        cmd.env("CHATPLATE_CONFIG", dir.path().join("none.json"));
        cmd.output().unwrap()
    };
    // The model id: both of its templates.
    let model = json_of(&run(&["acme/chat"]));
    assert_eq!(model["templates"].as_array().unwrap().len(), 2, "{model:#}");
    let url = "https://huggingface.co/acme/chat";
    if gguf(
        &dir.path().join("old.gguf"),
        &hf_support::template("v1"),
        false,
        url,
        test,
    )
    .is_none()
    {
        return;
    }
    gguf(
        &dir.path().join("current.gguf"),
        &hf_support::template("main"),
        false,
        url,
        test,
    );
    let report = json_of(&run(&["old.gguf", "current.gguf"]));
    let drift = &report["templates"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "gguf-drift")
        .cloned();
    let drift = drift.as_ref().unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        drift["message"]
            .as_str()
            .unwrap()
            .contains("HF cache acme/chat@main"),
        "{drift:#}"
    );
    assert!(
        drift["message"].as_str().unwrap().contains("- (main)"),
        "{drift:#}"
    );
    assert!(!findings_of(&report, "current").contains(&"gguf-drift".to_string()));
}
