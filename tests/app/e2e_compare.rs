//! End to end: the real binary in a pseudo-terminal previews templates as the Templates
//! pane's cursor moves, goes back with Esc, compares with minijinja, and quits without
//! asking: previewing and comparing never change the session.

#![cfg(feature = "tui")]
#![cfg(unix)]

use std::time::Duration;

use crate::e2e_support;
use e2e_support::{weather_session, Tui};

#[test]
fn preview_then_compare_leave_the_session_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    let before = std::fs::read_to_string(&file).unwrap();
    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the prompt", |s| s.contains("Prompt"));
    tui.send("1");
    tui.pump(Duration::from_millis(200));
    tui.send("k");
    tui.wait_for("a preview", |s| {
        s.contains("4 hunks differ · preview: gemma-3-tools")
    });
    // Esc alone (a key right after it would read as Alt+key).
    tui.send("\x1b");
    tui.wait_for("the session's render again", |s| {
        !s.contains("preview:") && s.contains("back to the session's render")
    });
    tui.send("3");
    tui.pump(Duration::from_millis(200));
    tui.send("C");
    tui.wait_for("the compare view", |s| s.contains("Prompt vs minijinja"));
    tui.send("\x11"); // Ctrl+Q: nothing unsaved, so no question
    assert_eq!(tui.wait_exit(), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}
