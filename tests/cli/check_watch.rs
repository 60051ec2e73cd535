//! `chatplate check` with no path (the `sessions/` folder) and `check --watch`, run as a
//! user runs them: the real binary in a temporary folder.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Child;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::common::binary::{chatplate, command, stderr, stdout};
use serde_json::json;

/// How long a run may take to report before the test gives up (a loaded machine).
const PATIENCE: Duration = Duration::from_secs(120);

/// A fixture on an inline template that prints the message, expecting `expected`.
fn fixture(dir: &Path, content: &str, expected: &str) {
    let session = json!({
        "version": 1,
        "template": {"source": "{{ messages[0].content }}"},
        "messages": [{"role": "user", "content": content}],
        "expected": {"prompt": expected},
    });
    std::fs::create_dir_all(dir.join("sessions")).unwrap();
    let text = serde_json::to_string_pretty(&session).unwrap();
    std::fs::write(dir.join("sessions/f.json"), text).unwrap();
}

#[test]
fn check_without_a_path_checks_the_sessions_folder() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "hi", "hi");
    let output = chatplate(&["check"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "1 passed, 0 failed\n");
}

#[test]
fn check_without_a_path_or_a_sessions_folder_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let output = chatplate(&["check"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "chatplate: no fixtures found: no PATH given and no sessions/ folder here \
         (chatplate check PATH... names fixture files or folders)\n"
    );
}

#[test]
fn check_watch_refuses_bless_and_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let bless = chatplate(&["check", "--watch", "--bless"], dir.path());
    assert_eq!(bless.status.code(), Some(2));
    assert!(
        stderr(&bless).contains("cannot be used with"),
        "{}",
        stderr(&bless)
    );
    let stdin = chatplate(&["check", "--watch", "-"], dir.path());
    assert_eq!(stdin.status.code(), Some(2));
    assert!(
        stderr(&stdin).contains("cannot be watched"),
        "{}",
        stderr(&stdin)
    );
}

/// The watching process, its output lines arriving on a channel; killed when dropped.
struct Watching {
    child: Child,
    lines: Receiver<String>,
}

impl Watching {
    fn start(dir: &Path) -> Self {
        // Both streams go into one pipe, so lines arrive in the order the program wrote them
        // (two pipes read by two threads would interleave stderr's "watching" line with
        // stdout's report at random).
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let child = command(&["check", "--watch"], dir)
            .stdout(writer.try_clone().expect("a pipe"))
            .stderr(writer)
            .spawn()
            .expect("chatplate starts");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Watching { child, lines }
    }

    /// Waits for a line starting with `start`, returning every line read until then.
    fn until(&self, start: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) if line.starts_with(start) => return seen,
                Ok(line) => seen.push(line),
                Err(_) => panic!("no line starting {start:?}; read {seen:#?}"),
            }
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn check_watch_checks_again_when_a_fixture_changes() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), "hi", "hi");
    let watching = Watching::start(dir.path());
    watching.until("1 passed, 0 failed");
    watching.until("chatplate: watching 1 files in sessions for changes (Ctrl+C ends)");
    fixture(dir.path(), "hello", "hi");
    watching.until("chatplate: sessions/f.json changed; checking again");
    let report = watching.until("0 passed, 1 failed");
    assert_eq!(
        report[0], "FAIL sessions/f.json: prompt differs",
        "{report:#?}"
    );
    fixture(dir.path(), "hello", "hello");
    watching.until("1 passed, 0 failed");
}
