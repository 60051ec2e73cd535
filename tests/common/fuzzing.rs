//! The fuzzing settings every proptest target shares: how many inputs
//! (`CHATPLATE_FUZZ_CASES`), and a fixed seed under CI (`CHATPLATE_FUZZ_SEED` picks
//! another anywhere), so CI's inputs are the same on every run.

use proptest::prelude::ProptestConfig;
use proptest::test_runner::RngSeed;

/// A numeric setting from the environment, or `default`.
pub fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// proptest's settings: `CHATPLATE_FUZZ_CASES` inputs (default 200), no failure files,
/// the CI seed under CI.
pub fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: setting("CHATPLATE_FUZZ_CASES", 200) as u32,
        // Inputs that fail say so; no files are written beside the sources.
        failure_persistence: None,
        rng_seed: seed().unwrap_or(default.rng_seed),
        ..default
    }
}

/// The seed CI runs with, so that its inputs are the same on every run and a failure
/// there reproduces anywhere (`CI=true cargo test`).
const CI_SEED: u64 = 18;

/// `CHATPLATE_FUZZ_SEED`, else [`CI_SEED`] under CI; elsewhere proptest's own choice
/// (random, or `PROPTEST_RNG_SEED`), so local runs keep exploring.
fn seed() -> Option<RngSeed> {
    let fixed = std::env::var("CHATPLATE_FUZZ_SEED").ok();
    if let Some(seed) = fixed.and_then(|v| v.parse().ok()) {
        return Some(RngSeed::Fixed(seed));
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    ci.then_some(RngSeed::Fixed(CI_SEED))
}
