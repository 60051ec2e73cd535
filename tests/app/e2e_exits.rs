//! Every way a session ends, on the real binary in a pty: each terminating signal and a
//! closed terminal keep the unsaved edit in the recovery file, restore the terminal and
//! exit with 128 + the signal; so does a panic on the UI thread (101); a panic on the
//! render worker is reported in the prompt pane while the app keeps running.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::Path;

use e2e_support::{message_content, weather_session, Launch, Tui};

/// Opens the weather session and types " Umbrella?" into the user message.
fn edited(dir: &Path) -> Tui {
    edited_with(dir, &[])
}

fn edited_with(dir: &Path, env: &[(&str, &str)]) -> Tui {
    weather_session(dir);
    let launch = Launch {
        env,
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir, &launch);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.edit_user_message();
    tui.send(" Umbrella?");
    tui.wait_for("the edit on screen", |s| s.contains("Umbrella?<|im_end|>"));
    tui
}

fn recovered_content(dir: &Path) -> String {
    message_content(&dir.join("sessions/weather.recovery.json"), 1)
}

fn assert_signal_exit(signal: &str, code: u32) {
    let dir = tempfile::tempdir().unwrap();
    let mut tui = edited(dir.path());
    tui.kill(signal);
    assert_eq!(tui.wait_exit(), code, "exit status after SIG{signal}");
    tui.wait_restored();
    assert!(
        tui.cooked(),
        "SIG{signal}: terminal left raw:\n{}",
        tui.stty()
    );
    assert!(
        recovered_content(dir.path()).ends_with("Umbrella?"),
        "SIG{signal}: the edit is in the recovery file"
    );
}

#[test]
fn sighup_saves_restores_and_exits_129() {
    assert_signal_exit("HUP", 129);
}

#[test]
fn sigint_from_outside_saves_restores_and_exits_130() {
    assert_signal_exit("INT", 130);
}

#[test]
fn sigquit_from_outside_saves_restores_and_exits_131() {
    assert_signal_exit("QUIT", 131);
}

#[test]
fn sigterm_saves_restores_and_exits_143() {
    assert_signal_exit("TERM", 143);
}

#[test]
fn closing_the_terminal_right_after_typing_keeps_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut tui = edited(dir.path());
    // Well inside the autosave's one-second debounce.
    std::thread::sleep(std::time::Duration::from_millis(100));
    tui.close_terminal();
    assert_eq!(tui.wait_exit(), 129);
    let content = recovered_content(dir.path());
    assert!(content.ends_with("Umbrella?"), "{content:?}");
}

#[test]
fn a_hang_up_without_a_signal_keeps_the_edit() {
    // The app runs under a shell that ignores SIGHUP and is the terminal's session
    // leader, so when the terminal closes no SIGHUP reaches the app: only the hang-up.
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let launch = Launch {
        shell: Some("trap '' HUP; \"$0\" sessions/weather.json; echo $? > status; sleep 30"),
        ..Launch::args(&[])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.send("\x1b[Be Umbrella?");
    tui.wait_for("the edit on screen", |s| s.contains("Umbrella?<|im_end|>"));
    tui.close_terminal();
    let status = dir.path().join("status");
    let deadline = std::time::Instant::now() + e2e_support::DEADLINE;
    while std::fs::read_to_string(&status)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(std::time::Instant::now() < deadline, "the app did not exit");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&status).unwrap().trim(), "129");
    let content = recovered_content(dir.path());
    assert!(content.ends_with("Umbrella?"), "{content:?}");
}

#[test]
fn a_panic_on_the_render_worker_is_an_error_in_the_prompt_pane() {
    if !cfg!(debug_assertions) {
        println!("SKIPPED worker panic: the trigger exists only in debug builds");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let launch = Launch {
        env: &[("CHATPLATE_TEST_PANIC", "PANIC-NOW")],
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.send("\x1b[Be PANIC-NOW");
    tui.wait_for("the crash report", |s| s.contains("engine crashed"));
    let screen = tui.screen();
    assert!(tui.parser.screen().alternate_screen(), "still in the app");
    assert!(!screen.contains("panicked at"), "no panic text over the UI");
    assert!(!tui.cooked(), "the terminal is still raw: the app runs on");
    // The session lives on: remove the marker and the prompt renders again.
    tui.send(&"\x7f".repeat("PANIC-NOW".len()));
    tui.wait_for("the prompt again", |s| s.contains("Paris? <|im_end|>"));
    tui.send("\x1b\x11"); // Esc, Ctrl+Q
    tui.wait_for("the quit question", |s| s.contains("Unsaved changes"));
    tui.send("n");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_panic_on_the_ui_thread_saves_restores_and_exits_101() {
    if !cfg!(debug_assertions) {
        println!("SKIPPED UI panic: the trigger exists only in debug builds");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut tui = edited_with(dir.path(), &[("CHATPLATE_TEST_UI_PANIC", "CRASH-NOW")]);
    tui.send("\x1b[200~CRASH-NOW\x1b[201~");
    assert_eq!(tui.wait_exit(), 101);
    tui.wait_restored();
    assert!(tui.cooked(), "terminal left raw:\n{}", tui.stty());
    assert!(recovered_content(dir.path()).ends_with("Umbrella?"));
    tui.wait_for("the crash report after the restore", |s| {
        s.contains("chatplate: crashed") && s.contains("weather.recovery.json")
    });
}

#[test]
fn without_a_terminal_the_app_says_so_in_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run chatplate");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("needs a terminal"), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "nothing on stdout (no escape codes)"
    );
}
