//! The deadline grows with the conversation on every command: a long conversation gets
//! its extended deadline in `render`, `check` (in its child processes) and `bench`, and a
//! timeout names the deadline applied.
//!
//! No test here asserts that something is fast. A render cannot be stopped before its
//! deadline however loaded the machine is, so "it was not stopped" and "it ran at least
//! as long as its message says" hold on any machine.

use std::path::Path;
use std::time::Instant;

use crate::common::binary::{chatplate, stderr, stdout};
use serde_json::{json, Value as Json};

/// Messages in the long conversation: its deadline grows by 1 µs × 10,000² = 100 s, up
/// to the minute where growth stops.
const LONG: usize = 10_000;

/// Linear work per message, far more than a millisecond in all, far less than 100 s.
const PER_MESSAGE_WORK: &str =
    "{% for m in messages %}{% for i in range(20) %}{% endfor %}{{ m.content }}{% endfor %}";

fn messages(count: usize) -> Vec<Json> {
    (0..count)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": "x"}))
        .collect()
}

fn write_session(dir: &Path, name: &str, source: &str, count: usize, expected: Option<&str>) {
    let mut session =
        json!({"version": 1, "template": {"source": source}, "messages": messages(count)});
    if let Some(prompt) = expected {
        session["expected"] = json!({"prompt": prompt});
    }
    std::fs::write(dir.join(name), session.to_string()).unwrap();
}

#[test]
fn a_long_conversation_gets_its_extended_deadline_in_render_check_and_bench() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = "x".repeat(LONG);
    write_session(
        dir.path(),
        "long.json",
        PER_MESSAGE_WORK,
        LONG,
        Some(&prompt),
    );
    // A 1 ms base: the render takes longer than that anywhere, and far less than the
    // minute its 10,000 messages add.
    let run = chatplate(&["render", "long.json", "--deadline", "0.001"], dir.path());
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(stdout(&run), prompt);
    // `check` renders in child processes, which must apply the same deadline.
    let run = chatplate(&["check", "long.json", "--deadline", "0.001"], dir.path());
    assert!(
        stdout(&run).contains("1 passed, 0 failed"),
        "{}",
        stdout(&run)
    );
    let run = chatplate(&["check", ".", "--deadline", "0.001"], dir.path());
    assert!(
        stdout(&run).contains("1 passed, 0 failed"),
        "{}",
        stdout(&run)
    );
    let run = chatplate(
        &[
            "bench",
            "long.json",
            "--iterations",
            "1",
            "--deadline",
            "0.001",
        ],
        dir.path(),
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}

#[test]
fn a_timeout_names_the_deadline_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let endless = "{% for i in range(100000) %}{% for j in range(100000) %}\
                   {% for k in range(100000) %}{% endfor %}{% endfor %}{% endfor %}";
    write_session(dir.path(), "endless.json", endless, 1_000, None);
    let started = Instant::now();
    let run = chatplate(
        &[
            "render",
            "endless.json",
            "--deadline",
            "0.5",
            "--fuel",
            "1000000000000000",
        ],
        dir.path(),
    );
    let ran = started.elapsed();
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    // 0.5 s + 1 µs × 1,000² = 1.5 s.
    let message = stderr(&run);
    assert!(
        message.contains(
            "did not finish within 1.5 s and was stopped, its deadline for 1,000 input items \
             (0.5 s + 1 µs × items²)"
        ),
        "{message}"
    );
    // Stopped at the deadline it names, not at the base (a render is never stopped
    // early, so this holds however slow the machine is).
    assert!(ran.as_secs_f64() >= 1.5, "stopped after {ran:?}: {message}");
}

#[test]
fn an_inspection_is_bounded_as_a_whole_and_says_how_to_allow_more() {
    let dir = tempfile::tempdir().unwrap();
    // One render is quick, but the inspection renders every prefix of 5,000 messages
    // (some 250 million loop steps in all): it is cut off as a whole.
    write_session(dir.path(), "slow.json", PER_MESSAGE_WORK, 5_000, None);
    let started = Instant::now();
    let run = chatplate(
        &["inspect", "--fixture", "slow.json", "--deadline", "1"],
        dir.path(),
    );
    let ran = started.elapsed();
    assert_eq!(run.status.code(), Some(2), "{}", stdout(&run));
    let message = stderr(&run);
    assert!(
        message.contains(
            "the probes did not finish within 1.0 s (the inspection's bound; raise it with --deadline)"
        ),
        "{message}"
    );
    assert!(ran.as_secs_f64() >= 1.0, "stopped after {ran:?}: {message}");
}
