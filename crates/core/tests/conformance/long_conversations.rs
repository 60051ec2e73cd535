//! Real templates that are quadratic in the number of messages render long
//! conversations exactly as transformers does: google-gemma-4 at
//! 2,000 messages and openai-gpt-oss at 10,000, within the default bounds: the step
//! budget, the byte budget and the deadline, whose growth with the conversation stops
//! at a minute (`MAX_GROWN_DEADLINE`) so that a hostile fixture cannot buy more; a real
//! conversation this long is never refused by it (in this unoptimised test build as in
//! the release binary).
//!
//! The goldens are large and not committed: `scripts/make_long_goldens.py` writes them
//! (from transformers 5.23.0) to `target/long-goldens/`, or to `$CHATPLATE_LONG_GOLDENS`.
//! Without them the test says it is skipped.

use std::path::PathBuf;

use chatplate_core::check::{check_all, collect_fixtures, report, CheckOptions};
use chatplate_render::MAX_GROWN_DEADLINE;

#[test]
fn long_quadratic_conversations_match_transformers() {
    let dir = std::env::var_os("CHATPLATE_LONG_GOLDENS").map_or_else(
        || crate::common::repo().join("target/long-goldens"),
        PathBuf::from,
    );
    let fixtures = collect_fixtures(std::slice::from_ref(&dir)).fixtures;
    if fixtures.len() < 2 {
        crate::common::skip_unless_ci(
            "long_conversations",
            &format!(
                "no goldens in {} (run scripts/make_long_goldens.py)",
                dir.display()
            ),
        );
        return;
    }
    let options = CheckOptions::default();
    assert_eq!(options.limits.deadline_for(10_000), MAX_GROWN_DEADLINE);
    let results = check_all(&fixtures, &options);
    let failures: Vec<String> = results
        .iter()
        .filter(|r| !r.outcome.passed())
        .map(|r| report(r).chars().take(2000).collect())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("long_conversations: {} goldens match", results.len());
}
