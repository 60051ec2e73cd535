//! A stopped render really stops: after its deadline or its
//! cancellation the caller gets an answer at once, and the render thread ends at its
//! next checkpoint instead of running on, and frees its memory, also in the app's
//! render worker.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use chatplate_core::worker::{Job, Template, Update, Worker};
use chatplate_render::{
    active_renders, CancelToken, CompiledTemplate, Conversation, Limits, RenderControl,
    RenderErrorKind,
};
use serde_json::json;

fn conversation() -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": "hi"})])
}

/// Runs the tests of this binary one at a time: each counts the process's render
/// threads and resident memory, which another test's renders would change.
fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits (generously, for a loaded machine) until no render thread is running.
fn until_no_render_runs() {
    let started = Instant::now();
    while active_renders() > 0 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_timed_out_or_cancelled_render_stops_and_its_thread_ends() {
    let _alone = alone();
    let slow = CompiledTemplate::compile(
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}",
        Limits::default()
            .with_fuel(u64::MAX / 128)
            .with_max_output_bytes(usize::MAX / 2),
    )
    .unwrap();
    let control = RenderControl::default().with_deadline(Duration::from_millis(200));
    let err = slow
        .render_controlled(conversation(), &control)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout);
    assert!(
        matches!(err.bound, Some(chatplate_render::Bound::Deadline { .. })),
        "{err}"
    );

    let cancel = CancelToken::new();
    let canceller = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        canceller.cancel();
    });
    let err = slow
        .render_cancellable(conversation(), &cancel)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Cancelled);

    // The abandoned renders end at their next checkpoint, not when the loops finish
    // (which would take hours).
    until_no_render_runs();
    assert_eq!(active_renders(), 0, "stopped renders are still running");
}

/// Resident memory of this process (Linux).
#[cfg(target_os = "linux")]
/// The process's resident memory once it has come down below `ceiling`, or after a
/// generous wait on a loaded machine: memory a stopped render freed may reach the
/// operating system a moment after the render thread has ended (the allocator returns
/// freed pages lazily), so one reading right after could still count it.
fn resident_bytes_settled(ceiling: usize) -> usize {
    let started = Instant::now();
    loop {
        let now = resident_bytes();
        if now < ceiling || started.elapsed() > Duration::from_secs(20) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[cfg(target_os = "linux")]
#[test]
fn a_stopped_render_frees_its_memory() {
    let _alone = alone();
    // Holds about 180 MB (under the default 256 MiB budget), then loops for ever.
    let source = "{% set big = 'x' * 60000000 %}{% set more = big ~ big %}\
                  {% for i in range(100000) %}{% for j in range(100000) %}{{ more|length }}\
                  {% endfor %}{% endfor %}";
    let limits = Limits::default()
        .with_fuel(u64::MAX / 128)
        .with_max_output_bytes(usize::MAX / 2);
    let template = CompiledTemplate::compile(source, limits).unwrap();
    let before = resident_bytes();
    let control = RenderControl::default().with_deadline(Duration::from_secs(2));
    let err = template
        .render_controlled(conversation(), &control)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout, "{err}");
    until_no_render_runs();
    assert_eq!(active_renders(), 0);
    let after = resident_bytes_settled(before + (64 << 20));
    assert!(
        after < before + (64 << 20),
        "{} MB still resident after the render stopped ({} MB before)",
        after >> 20,
        before >> 20
    );
}

/// A render the app's worker had stopped at its deadline kept running and
/// allocating: `sum` copied its lists in one call without a checkpoint, and grew past
/// 871 MB against the 256 MiB limit until the memory meter parked its thread for good.
#[cfg(target_os = "linux")]
#[test]
fn a_render_the_worker_stopped_ends_and_frees_its_memory() {
    let _alone = alone();
    let worker = Worker::spawn(Duration::from_millis(200)).unwrap();
    worker.update(Update::all(conversation()));
    let template = Template::new(
        "{{ ([[1] * 1000000] * 100)|sum(start=[])|length }}",
        Limits::default(),
    );
    let before = resident_bytes();
    worker.submit(1, Job::Render { template });
    let reply = worker
        .recv_timeout(Duration::from_secs(60))
        .expect("a reply");
    let err = reply.result.unwrap_err();
    // Stopped at its deadline, or by the memory limit if it gets there first.
    assert!(
        matches!(err.kind, RenderErrorKind::Timeout | RenderErrorKind::Limit),
        "{err}"
    );
    until_no_render_runs();
    assert_eq!(active_renders(), 0, "the stopped render is still running");
    let after = resident_bytes_settled(before + (64 << 20));
    assert!(
        after < before + (64 << 20),
        "{} MB still resident after the render stopped ({} MB before)",
        after >> 20,
        before >> 20
    );
}
