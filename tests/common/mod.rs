//! Helpers shared by the integration tests (each test file uses some of them).

#![allow(dead_code)]

pub mod binary;

use std::path::PathBuf;

/// The conformance corpus: `$CHATPLATE_CORPUS`, else `../shared/conformance/dev` beside
/// the repository (always present in CI), when its MANIFEST.json exists. Prints that the
/// calling test is skipped otherwise.
pub fn corpus_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CHATPLATE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev")
        });
    if dir.join("MANIFEST.json").exists() {
        return Some(dir);
    }
    eprintln!(
        "SKIPPED {test}: no corpus at {} (set CHATPLATE_CORPUS)",
        dir.display()
    );
    None
}
