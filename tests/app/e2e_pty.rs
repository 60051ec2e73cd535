//! End to end: the real binary in a pseudo-terminal, its screen parsed by `vt100`.
//! Open a session, type into a message, watch the prompt pane change, store the render
//! as the expected prompt, save, quit, and let `chatplate check` confirm the fixture.
//!
//! Every wait polls the screen with a deadline; nothing depends on fixed sleeps.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::io::Read;
use std::time::{Duration, Instant};

use chatplate_core::session::{Expected, Session};
use e2e_support::{spawn_in_pty, weather_session, Launch, Tui, DEADLINE};

#[test]
fn edit_save_and_check_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());

    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| {
        s.contains("weather.json") && s.contains("<|im_start|>")
    });
    tui.edit_user_message();
    tui.send(" Umbrella");
    // Only the prompt pane shows the content followed by the end-of-turn token.
    tui.wait_for("the prompt to change", |s| s.contains("Umbrella<|im_end|>"));
    tui.send("\x1b"); // Esc closes the editor
    tui.wait_for("the editor to close", |s| s.contains("#2 fields"));
    tui.send("E");
    tui.wait_for("expected set", |s| s.contains("expected prompt set"));
    tui.send("y"); // E offers to save
    tui.wait_for("the save", |s| s.contains("saved"));
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0, "clean exit");
    tui.wait_restored();

    let saved = Session::load(&file).unwrap();
    assert_eq!(
        saved.messages[1].0["content"],
        "What's the weather in Paris? Umbrella"
    );
    let Some(Expected::Prompt(expected)) = &saved.expected else {
        panic!("no expected prompt saved")
    };
    assert!(expected.contains("Paris? Umbrella<|im_end|>"));
    assert!(
        !file.with_file_name("weather.recovery.json").exists(),
        "recovery removed after save"
    );

    let check = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("run chatplate check");
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "check failed: {stdout}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}

#[test]
fn sigterm_keeps_unsaved_changes_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());

    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("r"); // change the system message's role: unsaved now
    tui.wait_for("the change", |s| s.contains("weather.json*"));
    tui.kill("TERM");
    assert_eq!(tui.wait_exit(), 143);
    tui.wait_restored();
    let recovery =
        Session::load(&file.with_file_name("weather.recovery.json")).expect("recovery file");
    assert_eq!(recovery.messages[0].role(), "user");
    let saved = Session::load(&file).unwrap();
    assert_eq!(
        saved.messages[0].role(),
        "system",
        "the session itself is untouched"
    );
}

#[test]
fn the_app_exits_when_its_terminal_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let (pty, mut child) = spawn_in_pty(dir.path(), &Launch::args(&["sessions/weather.json"]));
    let mut reader = pty.master.try_clone_reader().expect("pty reader");
    // Wait for the first frame, then close both sides of the terminal, like a dropped
    // connection whose hang-up signal never arrives.
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("weather.json") {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
    drop(reader);
    drop(pty);
    let deadline = Instant::now() + DEADLINE;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chatplate kept running after its terminal closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Clock ticks (user + system) the process `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn an_idle_app_uses_no_cpu() {
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    // The render, its attribution and the background probes finish first.
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_secs(2) {
        tui.pump(Duration::from_millis(100));
    }
    let before = cpu_ticks(tui.pid());
    let idle = Instant::now();
    while idle.elapsed() < Duration::from_secs(5) {
        tui.pump(Duration::from_millis(100));
    }
    let used = cpu_ticks(tui.pid()) - before;
    // The input thread wakes ten times a second to see whether to pause; crossterm's
    // own wait spun through the last millisecond of each.
    assert!(
        used <= 2,
        "an idle app used {used} clock ticks of CPU in 5 s"
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}
