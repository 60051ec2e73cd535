//! The kinds of input the dev corpus lacks, against transformers: a message `content`
//! given as an object, retrieval `documents`, and `continue_final_message` where it works
//! and where transformers raises (its full message, the rendered chat included).
//!
//! `scripts/make_input_goldens.py` rendered 14 of the dev corpus's templates with these
//! scenarios (tests/fixtures/input-corpus/goldens.json). Here they are laid out as a
//! corpus beside copies of those templates, turned into fixtures by `import-corpus`'s
//! code and checked as `check` checks a user's fixtures: prompts byte for byte, errors as
//! the exact `Class: message` Python printed.

use std::fs;
use std::path::Path;

use chatplate_core::check::{check_all, collect_fixtures, report, CheckOptions};
use chatplate_core::corpus;
use serde_json::{json, Value as Json};

use crate::common;

/// Cases in the goldens: 14 templates, 9 scenarios.
const CASES: usize = 126;

fn goldens() -> Json {
    let path = common::repo().join("tests/fixtures/input-corpus/goldens.json");
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The goldens as a corpus in `dir`, in the layout of ../shared/conformance/dev, with the
/// templates copied from `dev`.
fn lay_out(goldens: &Json, dev: &Path, dir: &Path) {
    for (name, scenario) in goldens["scenarios"].as_object().unwrap() {
        write(
            &dir.join(format!("scenarios/{name}.json")),
            &scenario.to_string(),
        );
    }
    let mut manifest = Vec::new();
    for case in goldens["cases"].as_array().unwrap() {
        let (template, scenario) = (
            case["template"].as_str().unwrap(),
            case["scenario"].as_str().unwrap(),
        );
        let source = dev.join(format!("templates/{template}.jinja"));
        write(
            &dir.join(format!("templates/{template}.jinja")),
            &fs::read_to_string(source).unwrap(),
        );
        let (file, text) = match case["outcome"].as_str().unwrap() {
            "ok" => ("txt", case["expected"].as_str().unwrap().to_string()),
            _ => (
                "err",
                format!(
                    "{}\n{}",
                    case["error_type"].as_str().unwrap(),
                    case["error_message"].as_str().unwrap()
                ),
            ),
        };
        let file = format!("expected/{template}/{scenario}.{file}");
        write(&dir.join(&file), &text);
        manifest.push(json!({
            "template": template, "scenario": scenario, "outcome": case["outcome"],
            "file": file, "template_kwargs": case["template_kwargs"],
        }));
    }
    write(
        &dir.join("MANIFEST.json"),
        &json!({ "cases": manifest }).to_string(),
    );
}

#[test]
fn object_content_documents_and_continuations_match_transformers() {
    let Some(dev) = common::corpus_dir("input_corpus") else {
        return;
    };
    let goldens = goldens();
    let corpus_dir = tempfile::tempdir().unwrap();
    lay_out(&goldens, &dev, corpus_dir.path());
    let out = tempfile::tempdir().unwrap();
    corpus::import(corpus_dir.path(), out.path()).expect("the goldens import as a corpus");
    let fixtures = collect_fixtures(&[out.path().to_path_buf()]).fixtures;
    let results = check_all(&fixtures, &CheckOptions::default());
    let failures: Vec<String> = results
        .iter()
        .filter(|r| !r.outcome.passed())
        .map(|r| report(r).chars().take(3000).collect())
        .collect();
    eprintln!(
        "input corpus: {} passed, {} failed of {} cases",
        results.len() - failures.len(),
        failures.len(),
        results.len()
    );
    assert_eq!(results.len(), CASES);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
