//! Getting models the local Hugging Face cache lacks, with progress on stderr.

use anyhow::Result;

use chatplate_core::catalog::hub::{FetchEvent, HubFetch, HubSettings};
use chatplate_core::catalog::{self, Fetch};
use chatplate_core::session::TemplateRef;

use super::output;

/// Prints one step of a fetch on stderr (never the token: it is not in the events), its
/// file names (the Hub's) escaped.
pub(super) fn print_progress(event: &FetchEvent) {
    output::note(&format!("chatplate: {event}"));
}

/// Runs `work` with a [`Fetch`] that asks the Hub and reports progress on stderr.
pub(super) fn with_hub<T>(work: impl FnOnce(&mut dyn Fetch) -> T) -> T {
    let mut progress = print_progress;
    let mut fetch = HubFetch {
        settings: HubSettings::from_env(),
        progress: &mut progress,
    };
    work(&mut fetch)
}

/// Makes sure a fixture's model reference is in the cache (fetching it when online), so
/// resolving it offline afterwards succeeds.
pub(super) fn ensure_cached(reference: &TemplateRef) -> Result<()> {
    Ok(with_hub(|fetch| catalog::prefetch(reference, fetch))?)
}
