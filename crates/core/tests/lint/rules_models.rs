//! The rules that read what is around a template: the tokenizer config's BOS, the
//! model's tokenizer, its `response_template`, a GGUF's current model template. Real
//! model folders (target/tokenizers, fetched by scripts/fetch_tokenizers.sh) and the
//! bundled templates with the response templates written for them.

use std::path::Path;

use chatplate_core::catalog;
use chatplate_core::lint::{lint_template, lint_with, CurrentTemplate, LintOptions, Surroundings};
use serde_json::{json, Value as Json};

use crate::{assert_lacks, common, corpus_template, finding, real_model, rules};

/// Every template of the model folder (or file) at `path`, linted.
fn lint_path(path: &Path) -> Vec<chatplate_core::lint::TemplateLint> {
    catalog::load_path(path)
        .unwrap()
        .iter()
        .map(|t| lint_template(t, &LintOptions::default(), &Default::default()).unwrap())
        .collect()
}

/// A model folder in `dir`: `tokenizer_config.json` from `config`, and the tokenizer of
/// the real model `from` when given.
fn model_folder(dir: &Path, config: &Json, from: Option<&Path>) {
    std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    if let Some(from) = from {
        std::fs::copy(from.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    }
}

#[test]
fn double_bos_when_the_tokenizer_adds_one_too() {
    let test = "double_bos_when_the_tokenizer_adds_one_too";
    // Gemma 3's template starts with {{ bos_token }} and its config sets add_bos_token.
    let Some(gemma) = real_model("gemma3", test) else {
        return;
    };
    let reports = lint_path(&gemma);
    let double = finding(&reports[0], "double-bos");
    assert!(double.message.contains("\"<bos>\""), "{}", double.message);
    assert!(
        double.message.contains("add_bos_token: true"),
        "{}",
        double.message
    );
    assert_eq!(double.location.map(|l| (l.line, l.column)), Some((1, 4)));
    // Qwen3 has no BOS token and add_bos_token false.
    let qwen = real_model("qwen3", test).unwrap();
    assert!(!rules(&lint_path(&qwen)[0]).contains(&"double-bos"));
    // The same Gemma template with add_bos_token false.
    let dir = tempfile::tempdir().unwrap();
    let mut config: Json = serde_json::from_str(
        &std::fs::read_to_string(gemma.join("tokenizer_config.json")).unwrap(),
    )
    .unwrap();
    config["add_bos_token"] = json!(false);
    model_folder(dir.path(), &config, None);
    assert!(!rules(&lint_path(dir.path())[0]).contains(&"double-bos"));
}

#[cfg(feature = "tokens")]
#[test]
fn injection_when_typed_text_becomes_a_special_token() {
    let test = "injection_when_typed_text_becomes_a_special_token";
    let Some(llama) = real_model("llama3_1", test) else {
        return;
    };
    let reports = lint_path(&llama);
    let injection = finding(&reports[0], "injection");
    assert!(
        injection.message.contains("\"<|eot_id|>\""),
        "{}",
        injection.message
    );
    assert!(
        injection.message.contains("(id 128009)"),
        "{}",
        injection.message
    );
    // The same model with split_special_tokens: typed text stays text.
    let dir = tempfile::tempdir().unwrap();
    let mut config: Json = serde_json::from_str(
        &std::fs::read_to_string(llama.join("tokenizer_config.json")).unwrap(),
    )
    .unwrap();
    config["split_special_tokens"] = json!(true);
    model_folder(dir.path(), &config, Some(&llama));
    let split = lint_path(dir.path());
    assert!(
        !rules(&split[0]).contains(&"injection"),
        "{:#?}",
        split[0].findings
    );
}

#[cfg(feature = "tokens")]
#[test]
fn reasoning_dropped_counts_tokens_with_the_tokenizer() {
    let Some(qwen) = real_model(
        "qwen3",
        "reasoning_dropped_counts_tokens_with_the_tokenizer",
    ) else {
        return;
    };
    let reports = lint_path(&qwen);
    let dropped = finding(&reports[0], "reasoning-dropped");
    assert!(
        dropped.message.contains(" tokens are processed again"),
        "{}",
        dropped.message
    );
}

#[test]
fn round_trip_with_the_models_response_template() {
    let repo = common::repo();
    let template =
        std::fs::read_to_string(repo.join("templates/qwen2.5-reasoning-tools.jinja")).unwrap();
    let schema = |name: &str| -> Json {
        let path = repo.join(format!("tests/data/parse/schemas/{name}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let own =
        json!({"chat_template": template, "response_template": schema("qwen2.5-reasoning-tools")});
    model_folder(dir.path(), &own, None);
    let sound = lint_path(dir.path());
    assert!(
        !rules(&sound[0]).contains(&"round-trip"),
        "{:#?}",
        sound[0].findings
    );
    // Another format's response_template parses nothing of this one right.
    let other = json!({"chat_template": template, "response_template": schema("gemma-3-tools")});
    model_folder(dir.path(), &other, None);
    let wrong = lint_path(dir.path());
    let failed = finding(&wrong[0], "round-trip");
    assert!(
        failed.message.contains("tokenizer_config.json"),
        "{}",
        failed.message
    );
}

#[test]
fn gguf_drift_against_the_models_current_template() {
    let test = "gguf_drift_against_the_models_current_template";
    let Some(corpus) = common::corpus_dir(test) else {
        return;
    };
    // Gemma 4's template as first released, beside its interleaved-thinking revision.
    let (template, options) = corpus_template(&corpus, "google-gemma-4-31B-it");
    let (newer, _) = corpus_template(&corpus, "google-gemma-4-31B-it-interleaved");
    let mut surroundings = Surroundings::default();
    surroundings.current = Some(CurrentTemplate {
        label: "model folder gemma-4".into(),
        text: newer.source.clone(),
    });
    let report = lint_with(&template, &surroundings, &options, &Default::default()).unwrap();
    let drift = finding(&report, "gguf-drift");
    assert!(
        drift.message.contains("model folder gemma-4"),
        "{}",
        drift.message
    );
    let evidence = drift.evidence.as_deref().unwrap();
    assert!(
        evidence.lines().all(|l| l.starts_with(['-', '+', '…'])),
        "{evidence}"
    );
    surroundings.current.as_mut().unwrap().text = format!("{}\n", template.source);
    let same = lint_with(&template, &surroundings, &options, &Default::default()).unwrap();
    assert_lacks(&same, "gguf-drift");
}
