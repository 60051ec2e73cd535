//! What a render costs the thread that asks for it: the render runs on a render thread
//! (see `watchdog`), and the caller waits. Waiting awake (looking for the answer
//! without sleeping) saves the time a sleeping thread takes to wake, but every moment
//! of it is CPU spent beside the render's own, which the bare engine, rendering on the
//! caller's thread, never spends (issue 38: a 1,000-message render cost up to a third
//! more CPU than minijinja-py's for this alone).

use std::sync::Arc;

use chatplate_render::{CompiledTemplate, Conversation, Limits, RenderControl};
use serde_json::json;

/// CPU time this thread has used so far, from the kernel's scheduler statistics.
#[cfg(target_os = "linux")]
fn thread_cpu() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    let nanos = stat.split_whitespace().next().unwrap().parse().unwrap();
    std::time::Duration::from_nanos(nanos)
}

#[cfg(target_os = "linux")]
#[test]
fn a_caller_waiting_for_a_long_render_spends_little_cpu() {
    // About a millisecond of work a render, the length of a 1,000-message render.
    let source = "{% for m in messages %}{% for i in range(20) %}{{ m.content ~ i }}{% endfor %}{% endfor %}";
    let messages = (0..200)
        .map(|i| json!({"role": "user", "content": format!("message {i}")}))
        .collect();
    // Shared, as `bench` and `check` pass it: the render thread converts it.
    let conversation = Arc::new(Conversation::new(messages));
    let control = RenderControl::default();
    let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
    // The first renders start the render thread and teach the caller how long a
    // render takes.
    for _ in 0..3 {
        template
            .render_controlled(Arc::clone(&conversation), &control)
            .unwrap();
    }
    let renders = 40;
    let started = std::time::Instant::now();
    let before = thread_cpu();
    for _ in 0..renders {
        template
            .render_controlled(Arc::clone(&conversation), &control)
            .unwrap();
    }
    let caller = thread_cpu().saturating_sub(before);
    let elapsed = started.elapsed();
    // Looking awake for a fixed 100 µs as the render starts and 400 µs around its
    // expected end, the caller used about 13% of the renders' time here (measured at
    // load 3); bounded by the render's length (at most a sixteenth), 2-4% (sending the
    // job and taking the answer).
    assert!(
        caller * 12 < elapsed,
        "the caller used {caller:?} of CPU over {renders} renders taking {elapsed:?}"
    );
}
