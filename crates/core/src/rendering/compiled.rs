//! Each distinct template is compiled once per process and shared by every fixture
//! that uses it.
//!
//! Compiling was 78% of `chatplate check`'s instructions: the 798-fixture corpus has
//! only 57 distinct templates, and each fixture recompiled its own. A compiled
//! template is immutable and renders from any thread (each render keeps its own
//! bounds), so fixtures with the same source and the same [`Limits`] share one. In
//! `chatplate check` every checking child process keeps its own cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use chatplate_render::{CompiledTemplate, Limits, RenderError};

/// Most templates kept: a run over thousands of distinct templates starts over when
/// the cache is full instead of holding every environment at once.
const MAX_CACHED: usize = 256;

type Cache = HashMap<(String, Limits), Arc<CompiledTemplate>>;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The compiled `source` under `limits`, compiled now only if this process has not
/// compiled it before. Failed compiles are not kept (they are rare, and their error
/// is reported per fixture).
pub(crate) fn shared(source: &str, limits: Limits) -> Result<Arc<CompiledTemplate>, RenderError> {
    let key = (source.to_string(), limits);
    if let Some(found) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(found);
    }
    // Compiled outside the lock: another thread compiling the same template at the
    // same moment only costs a duplicate compile.
    let compiled = Arc::new(CompiledTemplate::compile(source, limits)?);
    if let Ok(mut cached) = cache().lock() {
        if cached.len() >= MAX_CACHED {
            cached.clear();
        }
        cached.insert(key, Arc::clone(&compiled));
    }
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_source_and_limits_share_one_compiled_template() {
        let source = "{{ messages|length }} compiled-once-test";
        let first = shared(source, Limits::default()).unwrap();
        let again = shared(source, Limits::default()).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other_limits = Limits::default().with_fuel(1234);
        let different = shared(source, other_limits).unwrap();
        assert!(!Arc::ptr_eq(&first, &different));
        let other_source = shared("{{ 1 }} compiled-once-test", Limits::default()).unwrap();
        assert!(!Arc::ptr_eq(&first, &other_source));
    }

    #[test]
    fn a_template_that_fails_to_compile_fails_every_time() {
        assert!(shared("{% if %} compiled-once-test", Limits::default()).is_err());
        assert!(shared("{% if %} compiled-once-test", Limits::default()).is_err());
    }
}
