//! `chatplate check`: fixtures as golden tests, with a summary line.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::fetching::ensure_cached;
use crate::check;
use crate::session::{Session, TemplateRef};

/// `chatplate check`: every fixture under `paths`; exit 1 when any fails.
pub(super) fn run(paths: &[PathBuf], bless: bool) -> i32 {
    let fixtures = check::collect_fixtures(paths);
    fetch_models(&fixtures);
    let results = check::check_all(&fixtures, bless);
    let failed: Vec<_> = results.iter().filter(|r| !r.outcome.passed()).collect();
    for result in &failed {
        println!("{}", check::report(result));
    }
    for result in results.iter().filter(|r| r.outcome.passed()) {
        for note in &result.notes {
            println!("note {}: {note}", result.path.display());
        }
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

/// Fetches, once each, the models that fixtures name and the cache lacks (when online);
/// a failure shows up again, per fixture, when it is checked.
fn fetch_models(fixtures: &[PathBuf]) {
    let models: BTreeSet<(String, Option<String>)> = fixtures
        .iter()
        .filter_map(|path| match Session::load(path).ok()?.template {
            TemplateRef::Model { id, revision, .. } => Some((id, revision)),
            _ => None,
        })
        .collect();
    for (id, revision) in models {
        let reference = TemplateRef::Model {
            id,
            revision,
            snapshot: None,
            name: None,
        };
        if let Err(err) = ensure_cached(&reference) {
            eprintln!("chatplate: {err:#}");
        }
    }
}
