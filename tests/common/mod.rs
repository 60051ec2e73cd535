//! Helpers shared by the integration tests (each test file uses some of them): the root
//! package's (`tests/`) and the engine crates' (`crates/*/tests`, which include this
//! folder by path).

#![allow(dead_code)]

pub mod binary;
pub mod fuzzing;

use std::path::{Path, PathBuf};

/// The repository's root folder (the workspace's, where `sessions/`, `tests/fixtures/`
/// and `target/` are): the root package's folder, two levels above an engine crate's.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.contains("[workspace]"))
        })
        .expect("the workspace's Cargo.toml above the package")
        .to_path_buf()
}

/// Says that `test` is skipped for want of data or a reference the checkout lacks, or,
/// under `CI=true`, fails it: CI installs everything, so a missing piece there is a
/// broken set-up, not a reason to pass.
pub fn skip_unless_ci(test: &str, reason: &str) {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(!in_ci, "{test} needs what CI provides, but: {reason}");
    eprintln!("SKIPPED {test}: {reason}");
}

/// The conformance corpus: `$CHATPLATE_CORPUS`, else `../shared/conformance/dev` beside
/// the repository (always present in CI), when its MANIFEST.json exists. Otherwise the
/// calling test is skipped, or fails under `CI=true` ([`skip_unless_ci`]).
pub fn corpus_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CHATPLATE_CORPUS")
        .map_or_else(|| repo().join("../shared/conformance/dev"), PathBuf::from);
    if dir.join("MANIFEST.json").exists() {
        return Some(dir);
    }
    skip_unless_ci(
        test,
        &format!("no corpus at {} (set CHATPLATE_CORPUS)", dir.display()),
    );
    None
}
