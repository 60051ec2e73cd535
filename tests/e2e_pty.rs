//! End to end: the real binary in a pseudo-terminal, its screen parsed by `vt100`.
//! Open a session, type into a message, watch the prompt pane change, store the render
//! as the expected prompt, save, quit, and let `chatplate check` confirm the fixture.
//!
//! Every wait polls the screen with a deadline; nothing depends on fixed sleeps.

#![cfg(feature = "tui")]
#![cfg(unix)]

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use chatplate::catalog;
use chatplate::session::{Expected, Session};
use chatplate::tui::conversation::example_session;
use portable_pty::{native_pty_system, Child, CommandBuilder, PtyPair, PtySize, SlavePty};

const DEADLINE: Duration = Duration::from_secs(10);
const ROWS: NonZeroU16 = NonZeroU16::new(24).unwrap();
const COLS: NonZeroU16 = NonZeroU16::new(80).unwrap();

/// The app in a 80x24 pty, with its output fed to a terminal emulator.
struct Tui {
    parser: vt100::Parser,
    output: Receiver<Vec<u8>>,
    input: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    /// Held open so the pty never reports end-of-file early: Linux may drop the
    /// child's last output when the slave side closes before it was read.
    _slave: Box<dyn SlavePty + Send>,
}

/// A failed assertion must not leave the app running after the test.
impl Drop for Tui {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `chatplate FILE` in `dir` on a fresh ROWS x COLS pseudo-terminal.
fn spawn_in_pty(dir: &Path, file: &str) -> (PtyPair, Box<dyn Child + Send + Sync>) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: ROWS.get(),
            cols: COLS.get(),
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_chatplate"));
    command.arg(file);
    command.cwd(dir);
    command.env("TERM", "xterm-256color");
    command.env("NO_COLOR", "1");
    let child = pty.slave.spawn_command(command).expect("spawn chatplate");
    (pty, child)
}

impl Tui {
    fn start(dir: &Path, file: &str) -> Tui {
        let (pty, child) = spawn_in_pty(dir, file);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let (sender, output) = channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 || sender.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let input = pty.master.take_writer().expect("pty writer");
        // Keep the master alive for the child's lifetime.
        std::mem::forget(pty.master);
        Tui {
            parser: vt100::Parser::new(ROWS, COLS, 0),
            output,
            input,
            child,
            _slave: pty.slave,
        }
    }

    fn screen(&self) -> String {
        self.parser.screen().contents()
    }

    /// Feeds output to the emulator until `ready` holds for the screen.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !ready(&self.screen()) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {what}; screen:\n{}",
                self.screen()
            );
            if let Ok(bytes) = self
                .output
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                self.parser.process(&bytes);
            }
        }
    }

    fn send(&mut self, bytes: &str) {
        self.input
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.input.flush().expect("flush pty");
    }

    /// Waits for the child to exit, then for the screen to leave the alternate
    /// buffer (the terminal restore); returns whether the exit was successful.
    fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + DEADLINE;
        let success = loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                break status.success();
            }
            assert!(
                Instant::now() < deadline,
                "app did not exit; screen:\n{}",
                self.screen()
            );
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.parser.process(&bytes);
            }
        };
        let deadline = Instant::now() + DEADLINE;
        while self.parser.screen().alternate_screen() {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "terminal left in the alternate screen");
            if let Ok(bytes) = self.output.recv_timeout(left) {
                self.parser.process(&bytes);
            }
        }
        success
    }
}

/// Writes the example session to `<dir>/sessions/weather.json`.
fn weather_session(dir: &Path) -> PathBuf {
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join("weather.json");
    let template = catalog::default_template();
    example_session(template.reference(&sessions))
        .save(&file)
        .unwrap();
    file
}

#[test]
fn edit_save_and_check_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());

    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| {
        s.contains("weather.json") && s.contains("<|im_start|>")
    });
    tui.send("\x1b[B"); // Down: the user message
    tui.wait_for("the user message fields", |s| s.contains("#2 fields"));
    tui.send("e");
    tui.wait_for("the editor", |s| s.contains("#2 user · content"));
    tui.send(" Umbrella");
    // Only the prompt pane shows the content followed by the end-of-turn token.
    tui.wait_for("the prompt to change", |s| s.contains("Umbrella<|im_end|>"));
    tui.send("\x1b"); // Esc closes the editor
    tui.wait_for("the editor to close", |s| s.contains("#2 fields"));
    tui.send("E");
    tui.wait_for("expected set", |s| s.contains("expected prompt set"));
    tui.send("\x13"); // Ctrl+S
    tui.wait_for("the save", |s| s.contains("saved"));
    tui.send("q");
    assert!(tui.wait_exit(), "clean exit");
    assert!(!tui.parser.screen().alternate_screen(), "terminal restored");

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
    let pid = tui.child.process_id().expect("child pid");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    tui.wait_exit();
    assert!(!tui.parser.screen().alternate_screen(), "terminal restored");
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
    let (pty, mut child) = spawn_in_pty(dir.path(), "sessions/weather.json");
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
