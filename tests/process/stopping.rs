//! A stopped render really stops (issue 7, item 9): after its deadline or its
//! cancellation the caller gets an answer at once, and the render thread ends at its
//! next checkpoint instead of running on.

use std::time::{Duration, Instant};

use chatplate_render::{
    active_renders, CancelToken, CompiledTemplate, Conversation, Limits, RenderControl,
    RenderErrorKind,
};
use serde_json::json;

fn conversation() -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": "hi"})])
}

#[test]
fn a_timed_out_or_cancelled_render_stops_and_its_thread_ends() {
    let slow = CompiledTemplate::compile(
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}",
        Limits::default()
            .with_fuel(u64::MAX / 128)
            .with_max_output_bytes(usize::MAX / 2),
    )
    .unwrap();
    let control = RenderControl::default().with_deadline(Duration::from_millis(200));
    let err = slow
        .render_controlled(&conversation(), &control)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout);
    assert!(err.message.contains("--deadline"), "{err}");

    let cancel = CancelToken::new();
    let canceller = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        canceller.cancel();
    });
    let err = slow
        .render_cancellable(&conversation(), &cancel)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Cancelled);

    // The abandoned renders end at their next checkpoint, not when the loops finish
    // (which would take hours). Generous bound for a loaded machine.
    let started = Instant::now();
    while active_renders() > 0 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(active_renders(), 0, "stopped renders are still running");
}

/// Resident memory of this process (Linux).
#[cfg(target_os = "linux")]
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
        .render_controlled(&conversation(), &control)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout, "{err}");
    let started = Instant::now();
    while active_renders() > 0 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(active_renders(), 0);
    let after = resident_bytes();
    assert!(
        after < before + (64 << 20),
        "{} MB still resident after the render stopped ({} MB before)",
        after >> 20,
        before >> 20
    );
}
