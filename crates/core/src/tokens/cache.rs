//! One loaded tokenizer per file set per process. Loading a large `tokenizer.json` takes
//! hundreds of milliseconds, so `chatplate check` (many fixtures, one tokenizer) and the
//! app (one tokenizer, many prompts) load it once and share it through an `Arc`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use super::files::TokenizerFiles;
use super::load::ModelTokenizer;
use super::TokenizerError;

/// A file set and the modification times it was loaded at: an edited file loads anew.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    files: TokenizerFiles,
    stamps: [Option<SystemTime>; 2],
}

/// Per key, a slot that the first caller fills while later callers for the same key wait
/// (so parallel checks do not load the same file twice).
type Slot = Arc<Mutex<Option<Arc<ModelTokenizer>>>>;

static CACHE: Mutex<Option<HashMap<Key, Slot>>> = Mutex::new(None);

/// The tokenizer of `files`, loaded on first use and shared afterwards. Failures are not
/// cached: a fixed file loads on the next call.
pub fn shared(files: &TokenizerFiles) -> Result<Arc<ModelTokenizer>, TokenizerError> {
    let slot = slot_for(files);
    let mut loaded = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(tokenizer) = loaded.as_ref() {
        return Ok(Arc::clone(tokenizer));
    }
    let tokenizer = Arc::new(ModelTokenizer::load(files)?);
    *loaded = Some(Arc::clone(&tokenizer));
    Ok(tokenizer)
}

fn slot_for(files: &TokenizerFiles) -> Slot {
    let key = Key {
        files: files.clone(),
        stamps: [
            modified(&files.tokenizer),
            files.config.as_deref().and_then(modified),
        ],
    };
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    // An older load of the same files is stale now; drop it.
    cache.retain(|old, _| old.files != key.files || old.stamps == key.stamps);
    Arc::clone(cache.entry(key).or_default())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
