//! Hugging Face model folders, read as transformers 5.23 reads them. The layouts in
//! `tests/fixtures/models/` (written by `scripts/make_model_layouts.py`) cover each way a
//! model stores its template(s) and special tokens; the sessions in
//! `tests/fixtures/model-sessions/` render them, and their expected prompts were recorded
//! from transformers' `apply_chat_template` on the same folders by
//! `scripts/verify_models.py` (which also re-checks them against transformers).

use std::path::{Path, PathBuf};

use chatplate_core::catalog::{self, CatalogError, Origin, TemplateSet};
use chatplate_core::check::{check_all, collect_fixtures, report, CheckOptions};
use chatplate_core::session::TemplateRef;

use crate::common;

fn fixtures() -> PathBuf {
    common::repo().join("tests/fixtures")
}

fn model(name: &str) -> PathBuf {
    fixtures().join("models").join(name)
}

fn set(path: &Path) -> TemplateSet {
    catalog::load_set(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The "(label)" line each fixture template starts with.
fn label(set: &TemplateSet, has_tools: bool) -> String {
    let chosen = set.choose(has_tools).expect("a template is chosen");
    chosen.source.lines().next().unwrap_or_default().to_string()
}

#[test]
fn every_layout_renders_as_transformers_does() {
    let sessions = collect_fixtures(&[fixtures().join("model-sessions")]).fixtures;
    assert!(
        sessions.len() >= 19,
        "only {} model sessions",
        sessions.len()
    );
    // The sessions name model folders beside their own folder.
    let options = CheckOptions {
        template_roots: vec![fixtures()],
        ..CheckOptions::default()
    };
    let failures: Vec<String> = check_all(&sessions, &options)
        .iter()
        .filter(|r| !r.outcome.passed())
        .map(report)
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn template_files_take_precedence_over_the_config() {
    let over = set(&model("jinja-over-config"));
    assert_eq!(label(&over, false), "(chat_template.jinja wins)");
    let note = &over.entries[0].metadata.notes;
    assert!(
        note.iter().any(|n| n.contains("chat_template is not used")),
        "{note:?}"
    );
    // Named files without chat_template.jinja replace the config's template entirely.
    let replaced = set(&model("additional-no-default"));
    assert_eq!(replaced.names(), ["tool_use"]);
    assert!(matches!(
        replaced.choose(false),
        Err(CatalogError::NoDefault { .. })
    ));
    assert_eq!(label(&replaced, true), "(tool_use only)");
}

#[test]
fn tools_choose_tool_use_and_an_explicit_name_always_wins() {
    for layout in ["config-named", "additional"] {
        let named = set(&model(layout));
        assert!(label(&named, false).contains("default"), "{layout}");
        assert!(label(&named, true).contains("tool_use"), "{layout}");
        let rag = named.clone().pin(Some("rag"));
        assert!(label(&rag, true).contains("rag"), "{layout}");
        assert!(label(&named.clone().pin(Some("default")), true).contains("default"));
        let err = named
            .pin(Some("nope"))
            .choose(true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no chat template named \"nope\"") && err.contains("tool_use"),
            "{err}"
        );
    }
}

#[test]
fn any_file_of_a_model_opens_the_model() {
    let folder = model("additional");
    for file in [
        "tokenizer_config.json",
        "tokenizer.json",
        "chat_template.jinja",
    ] {
        let opened = set(&folder.join(file));
        assert_eq!(opened.entries.len(), 3, "{file}");
        assert_eq!(
            opened.entries[0].bos_token.as_deref(),
            Some("<s>"),
            "{file}"
        );
    }
    // Opening a template file pins its entry, with the model's tokens.
    let rag = set(&folder.join("additional_chat_templates/rag.jinja"));
    let chosen = rag.choose(true).unwrap();
    assert_eq!(chosen.entry(), Some("rag"));
    assert_eq!(chosen.eos_token.as_deref(), Some("</s>"));
    // A lone chat_template.jinja picks up bos/eos from the sibling config.
    let lone = set(&model("jinja-file").join("chat_template.jinja"));
    let only = lone.choose(false).unwrap();
    assert_eq!(
        (only.entry(), only.bos_token.as_deref()),
        (None, Some("<s>"))
    );
}

#[test]
fn special_tokens_come_from_config_and_legacy_map_like_transformers() {
    let legacy = set(&model("special-tokens-map")).choose(false).unwrap();
    assert_eq!(legacy.eos_token.as_deref(), Some("<|eot|>"));
    let vars = legacy.token_variables();
    assert_eq!(vars["unk_token"], "<unk>");
    assert_eq!(vars["image_token"], "<img>");
    let ignored = set(&model("added-tokens-decoder")).choose(false).unwrap();
    assert_eq!(ignored.eos_token.as_deref(), Some("</s>"));
    assert!(!ignored.token_variables().contains_key("pad_token"));
}

#[test]
fn a_template_folder_lists_model_folders_as_models() {
    let all = catalog::load_path(&fixtures().join("models")).unwrap();
    let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"config-string"), "{names:?}");
    assert!(names.contains(&"additional#tool_use"), "{names:?}");
    assert!(names.contains(&"config-named#rag"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("tokenizer_config")),
        "{names:?}"
    );
    // Entries of the same name in different models tell their origin apart.
    let defaults: Vec<String> = all
        .iter()
        .filter(|t| t.entry() == Some("default"))
        .map(chatplate_core::TemplateSource::origin_label)
        .collect();
    assert!(defaults.len() >= 2);
    assert!(
        defaults.iter().all(|l| l.starts_with("model folder ")),
        "{defaults:?}"
    );
    assert_ne!(defaults[0], defaults[1]);
    // A folder of several models is not one model: nothing is chosen without a name.
    let folder = catalog::load_set(&fixtures().join("models")).unwrap();
    assert!(matches!(
        folder.choose(true),
        Err(CatalogError::NoDefault { .. })
    ));
    let named = folder.pin(Some("config-string")).choose(false).unwrap();
    assert_eq!(named.name, "config-string");
}

#[test]
fn references_keep_a_pinned_name_and_let_tools_choose_otherwise() {
    let dir = fixtures().join("model-sessions");
    let named = set(&model("additional"));
    let auto = named.choose(true).unwrap();
    assert_eq!(
        auto.reference(&dir),
        TemplateRef::Path("../models/additional".into())
    );
    let pinned = named.pin(Some("rag")).choose(false).unwrap();
    assert_eq!(
        pinned.reference(&dir),
        TemplateRef::Named {
            path: "../models/additional".into(),
            name: "rag".into()
        }
    );
    assert!(matches!(pinned.origin, Origin::Model(_)));
}
