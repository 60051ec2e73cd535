//! `chatplate check`: fixtures as golden tests, with a summary line.

use std::path::PathBuf;

use crate::check;

/// `chatplate check`: every fixture under `paths`; exit 1 when any fails.
pub(super) fn run(paths: &[PathBuf], bless: bool) -> i32 {
    let fixtures = check::collect_fixtures(paths);
    let results = check::check_all(&fixtures, bless);
    let failed: Vec<_> = results.iter().filter(|r| !r.outcome.passed()).collect();
    for result in &failed {
        println!("{}", check::report(result));
    }
    if bless {
        println!("blessed {} fixtures", results.len() - failed.len());
    }
    println!(
        "{} passed, {} failed",
        results.len() - failed.len(),
        failed.len()
    );
    i32::from(!failed.is_empty())
}
