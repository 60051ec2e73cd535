//! Checking fixtures in this process, on every core: each worker takes the next
//! fixture from a shared counter, and a panic while checking one fixture becomes that
//! fixture's [`Outcome::Crashed`] instead of losing the worker's other results.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::{check_verdict, CaseResult, CheckOptions, Fixture, Outcome, Verdict};

/// Stack for each checking thread. Deeply nested templates recurse in the parser and
/// compiler; the memory is only reserved, and only what is used is ever touched.
pub(crate) const WORKER_STACK_BYTES: usize = 256 << 20;

/// Checks (or with `options.bless`, rewrites) every fixture, in parallel; the result
/// has one entry per fixture, in input order, whatever happened.
pub fn check_all(fixtures: &[Fixture], options: &CheckOptions) -> Vec<CaseResult> {
    let workers = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .clamp(1, fixtures.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; fixtures.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let spawned = std::thread::Builder::new()
                .name("chatplate-check".into())
                .stack_size(WORKER_STACK_BYTES)
                .spawn_scoped(scope, || loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(fixture) = fixtures.get(index) else {
                        break;
                    };
                    let result = check_guarded(fixture, options);
                    if let Ok(mut all) = results.lock() {
                        all[index] = Some(result);
                    }
                });
            if spawned.is_err() {
                break; // the threads that did start take all the work
            }
        }
    });
    let all = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    all.into_iter()
        .zip(fixtures)
        .map(|(result, fixture)| {
            result.unwrap_or_else(|| {
                Verdict::of(Outcome::Crashed(
                    "the checker did not get to this fixture".into(),
                ))
                .at(&fixture.path)
            })
        })
        .collect()
}

/// [`check_file`], with a panic turned into the fixture's failure.
pub(crate) fn check_guarded(fixture: &Fixture, options: &CheckOptions) -> CaseResult {
    check_guarded_telling(fixture, options, &mut |_| {}).at(&fixture.path)
}

/// [`check_guarded`]'s verdict; `started` hears the fixture's render deadline once it
/// is loaded (see [`super::check_verdict`]).
pub(crate) fn check_guarded_telling(
    fixture: &Fixture,
    options: &CheckOptions,
    started: &mut dyn FnMut(Duration),
) -> Verdict {
    catch_unwind(AssertUnwindSafe(|| {
        check_verdict(fixture, options, started)
    }))
    .unwrap_or_else(|payload| {
        Verdict::of(Outcome::Crashed(format!(
            "panicked: {}",
            panic_message(&*payload)
        )))
    })
}

/// The text a panic was raised with.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
