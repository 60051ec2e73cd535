//! GGUF files, read from the metadata header only. The committed files in
//! `tests/fixtures/gguf/` were written by the official `gguf` Python package (llama.cpp's
//! own writer) through `scripts/make_gguf_fixtures.py`; when Python has that package, the
//! script runs again here and its fresh files must read the same.

use crate::gguf_support;
use std::path::{Path, PathBuf};

use chatplate_core::catalog::{self, CatalogError, Origin};
use chatplate_core::gguf::GgufError;
use gguf_support::python_with_gguf;

use crate::common;

fn fixtures() -> PathBuf {
    common::repo().join("tests/fixtures/gguf")
}

/// A one-line summary of what chatplate reads from a GGUF (or the error).
fn summary(path: &Path) -> String {
    match catalog::load_set(path) {
        Ok(set) => {
            let first = &set.entries[0];
            let names: Vec<String> = set
                .entries
                .iter()
                .map(|t| format!("{}={}", t.entry().unwrap_or("-"), t.source.len()))
                .collect();
            format!(
                "{} bos={:?} eos={:?} add_bos={:?}",
                names.join(","),
                first.bos_token,
                first.eos_token,
                first.metadata.add_bos_token
            )
        }
        Err(CatalogError::Gguf { error, .. }) => format!("error {error}"),
        Err(CatalogError::Config { message, .. }) => format!("error {message}"),
        Err(other) => format!("error {other}"),
    }
}

fn error_of(name: &str) -> GgufError {
    match catalog::load_set(&fixtures().join(name)) {
        Err(CatalogError::Gguf { error, .. }) => error,
        other => panic!("{name}: expected a GGUF error, got {other:?}"),
    }
}

#[test]
fn chat_template_and_special_tokens_come_from_the_header() {
    let set = catalog::load_set(&fixtures().join("chat.gguf")).unwrap();
    assert_eq!(set.entries.len(), 1);
    let template = set.choose(false).unwrap();
    assert!(template
        .source
        .starts_with("{{ bos_token }}{% for m in messages %}"));
    assert_eq!(template.bos_token.as_deref(), Some("<s>"));
    assert_eq!(template.eos_token.as_deref(), Some("<|im_end|>"));
    assert_eq!(template.metadata.add_bos_token, Some(true));
    assert_eq!(template.name, "chat");
    assert!(matches!(&template.origin, Origin::Gguf { entry: None, .. }));
    assert!(template.origin_label().starts_with("GGUF "));
}

#[test]
fn named_templates_are_chosen_like_llama_cpp() {
    let set = catalog::load_set(&fixtures().join("named.gguf")).unwrap();
    assert_eq!(set.names(), ["default", "tool_use", "rag"]);
    let first_line = |has_tools: bool, set: &catalog::TemplateSet| {
        set.choose(has_tools).unwrap().source[..10].to_string()
    };
    assert_eq!(first_line(false, &set), "(default){");
    assert_eq!(first_line(true, &set), "(tool_use)");
    assert_eq!(
        first_line(true, &set.clone().pin(Some("rag"))),
        "(rag){{ bo"
    );
    let tokens = set.entries[0].token_variables();
    assert_eq!(
        (tokens["bos_token"].as_str(), tokens["eos_token"].as_str()),
        (Some("<s>"), Some("</s>"))
    );
}

#[test]
fn big_endian_files_read_the_same() {
    assert_eq!(
        summary(&fixtures().join("big-endian.gguf")),
        summary(&fixtures().join("chat.gguf"))
    );
}

#[test]
fn version_2_reads_like_version_3() {
    // Version 2 has version 3's layout (3 only added big-endian files); the gguf package
    // writes 3, so the version field of its file is changed here.
    let mut bytes = std::fs::read(fixtures().join("chat.gguf")).unwrap();
    bytes[4..8].copy_from_slice(&2u32.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chat.gguf");
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(summary(&path), summary(&fixtures().join("chat.gguf")));
}

#[test]
fn bad_files_are_clear_errors() {
    assert!(matches!(error_of("bad-magic.gguf"), GgufError::Magic(_)));
    assert!(matches!(error_of("version1.gguf"), GgufError::Version1));
    assert!(matches!(error_of("version4.gguf"), GgufError::Version(4)));
    assert!(matches!(
        error_of("bad-type.gguf"),
        GgufError::BadType { code: 99, .. }
    ));
    assert!(matches!(
        error_of("bad-token-id.gguf"),
        GgufError::TokenId {
            id: 99,
            count: 7,
            ..
        }
    ));
    let cases = [
        ("truncated.gguf", "tokenizer.chat_template at byte"),
        (
            "absurd-count.gguf",
            "the metadata count at byte 16 claims 1152921504606846976 entries",
        ),
        (
            "absurd-length.gguf",
            "claims a 4611686018427387904-byte string",
        ),
    ];
    for (name, fragment) in cases {
        let message = error_of(name).to_string();
        assert!(message.contains(fragment), "{name}: {message}");
        assert!(
            message.contains("truncated or corrupt"),
            "{name}: {message}"
        );
    }
    let message = error_of("version1.gguf").to_string();
    assert!(message.contains("version 1 is not supported"), "{message}");
    let missing = catalog::load_set(&fixtures().join("no-template.gguf")).unwrap_err();
    assert!(
        missing.to_string().contains("no tokenizer.chat_template"),
        "{missing}"
    );
}

#[test]
fn every_prefix_of_a_file_is_an_error_not_a_panic() {
    let bytes = std::fs::read(fixtures().join("named.gguf")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.gguf");
    let mut read_fully_at = None;
    for len in 0..bytes.len() {
        std::fs::write(&path, &bytes[..len]).unwrap();
        if catalog::load_set(&path).is_ok() && read_fully_at.is_none() {
            read_fully_at = Some(len);
        }
    }
    // Only a prefix that holds all the metadata (the tensor data may be cut) reads.
    let read_fully_at = read_fully_at.expect("the whole metadata reads");
    assert!(
        read_fully_at > bytes.len() / 2,
        "{read_fully_at} of {}",
        bytes.len()
    );
}

#[test]
fn the_gguf_package_writes_files_that_read_the_same() {
    let Some(python) = python_with_gguf("the_gguf_package_writes_files_that_read_the_same") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = common::repo().join("scripts/make_gguf_fixtures.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(dir.path())
        .output()
        .expect("the script runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut compared = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let committed = entry.unwrap().path();
        let fresh = dir.path().join(committed.file_name().unwrap());
        assert_eq!(
            summary(&fresh),
            summary(&committed),
            "{}",
            committed.display()
        );
        compared += 1;
    }
    assert!(compared >= 12, "only {compared} files");
}
