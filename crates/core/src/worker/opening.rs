//! Opening jobs on the worker: resolving what the user typed in the app's open dialog
//! ([`crate::target::open`]: a session, a request body, a template file, a model folder,
//! a `.gguf`, a model id from the Hugging Face cache or the Hub) and scanning the local
//! Hugging Face cache for the template picker. Both read files (and maybe the network),
//! so they never run on the caller's thread.

use crate::catalog::hf_cache::{cache_root, cached_models};
use crate::catalog::hub::{HubFetch, HubSettings};
use crate::catalog::{CachedModel, TemplateSet};
use crate::target;
use chatplate_render::RenderError;

use super::Output;

/// Resolves `text` as the command line would (a missing model id is fetched from the Hub
/// when online, without progress output: the caller's screen is not a terminal log).
pub(super) fn open(text: &str) -> Result<Output, RenderError> {
    let mut quiet = |_: &crate::catalog::hub::FetchEvent| {};
    let mut fetch = HubFetch {
        settings: HubSettings::from_env(),
        progress: &mut quiet,
    };
    target::open(text, &mut fetch)
        .map(|opened| Output::Opened(Box::new(opened)))
        .map_err(|err| RenderError::input(format!("{err}")))
}

/// `model`'s templates at `revision` (see [`CachedModel::at`]), fetched quietly.
pub(super) fn open_revision(model: &CachedModel, revision: &str) -> Result<Output, RenderError> {
    let mut quiet = |_: &crate::catalog::hub::FetchEvent| {};
    let mut fetch = HubFetch {
        settings: HubSettings::from_env(),
        progress: &mut quiet,
    };
    let set = model.at(revision, &mut fetch);
    set.map(|set| Output::Opened(Box::new(target::Opened::Templates(set))))
        .map_err(|err| RenderError::input(format!("{model}@{revision}: {err}", model = model.repo)))
}

/// The cached models that have a chat template.
pub(super) fn scan_cache() -> Output {
    let sets: Vec<TemplateSet> = cached_models(&cache_root());
    Output::Cached(sets)
}
