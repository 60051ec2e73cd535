//! The conformance corpus as a test: every case in `../shared/conformance/dev` is turned
//! into a fixture and checked like a user's fixture. Transformers' output must match
//! byte for byte; where transformers raised, chatplate must raise too.
//!
//! The corpus is not in this repository. Set `CHATPLATE_CORPUS` to point elsewhere; when
//! it is absent the test says it is skipped (CI always has it).

use chatplate_core::check::{check_all, collect_fixtures, report, CheckOptions};
use chatplate_core::corpus;

use crate::common;
#[test]
fn conformance_corpus_matches_transformers() {
    let Some(dir) = common::corpus_dir("conformance") else {
        return;
    };
    let out = tempfile::tempdir().expect("temp dir");
    corpus::import(&dir, out.path()).expect("corpus converts to fixtures");
    // Found as `chatplate check OUT` finds them: template paths must stay inside OUT.
    let fixtures = collect_fixtures(&[out.path().to_path_buf()]).fixtures;
    let results = check_all(&fixtures, &CheckOptions::default());
    let failures: Vec<String> = results
        .iter()
        .filter(|r| !r.outcome.passed())
        .map(report)
        .collect();
    eprintln!(
        "conformance: {} passed, {} failed of {} cases",
        results.len() - failures.len(),
        failures.len(),
        results.len()
    );
    assert_eq!(results.len(), 798, "the dev corpus has 798 cases");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
