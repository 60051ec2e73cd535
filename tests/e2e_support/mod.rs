//! The end-to-end harness: the real binary in a pseudo-terminal, its screen parsed by
//! `vt100`. Every wait polls with a generous deadline; nothing depends on fixed sleeps.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use chatplate::tui::panes::messages::conversation::example_session;
use chatplate_core::catalog;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtyPair, PtySize};

/// How long any single wait may take on a loaded machine.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How the app is started.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// Arguments after `chatplate`.
    pub args: &'a [&'a str],
    /// Extra environment variables.
    pub env: &'a [(&'a str, &'a str)],
    /// Terminal rows and columns.
    pub size: (u16, u16),
    /// A shell script run instead of the binary (`$0` is the binary).
    pub shell: Option<&'a str>,
}

impl<'a> Launch<'a> {
    /// `chatplate ARGS` in an 80x24 terminal.
    pub fn args(args: &'a [&'a str]) -> Self {
        Launch {
            args,
            env: &[],
            size: (24, 80),
            shell: None,
        }
    }
}

/// Runs `chatplate` in `dir` on a fresh pseudo-terminal.
pub fn spawn_in_pty(dir: &Path, launch: &Launch) -> (PtyPair, Box<dyn Child + Send + Sync>) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: launch.size.0,
            cols: launch.size.1,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let binary = env!("CARGO_BIN_EXE_chatplate");
    let mut command = match launch.shell {
        Some(script) => {
            let mut command = CommandBuilder::new("sh");
            command.args(["-c", script, binary]);
            command
        }
        None => CommandBuilder::new(binary),
    };
    command.args(launch.args);
    command.cwd(dir);
    command.env("TERM", "xterm-256color");
    command.env("NO_COLOR", "1");
    command.env_remove("TMUX");
    command.env_remove("STY");
    for (name, value) in launch.env {
        command.env(name, value);
    }
    let child = pty.slave.spawn_command(command).expect("spawn chatplate");
    (pty, child)
}

/// The app in a pty, with its output fed to a terminal emulator.
pub struct Tui {
    pub parser: vt100::Parser,
    output: Receiver<Vec<u8>>,
    input: Option<Box<dyn Write + Send>>,
    master: Option<Box<dyn MasterPty + Send>>,
    pub child: Box<dyn Child + Send + Sync>,
    /// The terminal's device, for `stty`.
    pub tty: Option<PathBuf>,
    /// Held open so the pty never reports end-of-file early: Linux may drop the
    /// child's last output when the slave side closes before it was read.
    _slave: Box<dyn portable_pty::SlavePty + Send>,
    stop_reading: std::sync::Arc<std::sync::atomic::AtomicBool>,
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

impl Tui {
    /// `chatplate FILE` in `dir`, 80x24.
    pub fn start(dir: &Path, file: &str) -> Tui {
        Tui::launch(dir, &Launch::args(&[file]))
    }

    /// The app as `launch` says.
    pub fn launch(dir: &Path, launch: &Launch) -> Tui {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (pty, child) = spawn_in_pty(dir, launch);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let (sender, output) = channel();
        let stop_reading = std::sync::Arc::new(AtomicBool::new(false));
        let stop = std::sync::Arc::clone(&stop_reading);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 || sender.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
                if stop.load(Ordering::SeqCst) {
                    break;
                }
            }
        });
        let input = pty.master.take_writer().expect("pty writer");
        Tui {
            parser: vt100::Parser::new(nonzero(launch.size.0), nonzero(launch.size.1), 0),
            output,
            input: Some(input),
            tty: pty.master.tty_name(),
            master: Some(pty.master),
            child,
            _slave: pty.slave,
            stop_reading,
        }
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.parser.screen().contents()
    }

    /// Feeds output to the emulator until `ready` holds for the screen.
    pub fn wait_for(&mut self, what: &str, ready: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !ready(&self.screen()) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {what}; screen:\n{}",
                self.screen()
            );
            self.pump(left.min(Duration::from_millis(100)));
        }
    }

    /// Processes output that arrives within `wait`.
    pub fn pump(&mut self, wait: Duration) {
        if let Ok(bytes) = self.output.recv_timeout(wait) {
            self.parser.process(&bytes);
            while let Ok(more) = self.output.try_recv() {
                self.parser.process(&more);
            }
        }
    }

    /// Types `bytes` (one write: a burst arrives in one read).
    pub fn send(&mut self, bytes: &str) {
        let input = self.input.as_mut().expect("terminal open");
        input.write_all(bytes.as_bytes()).expect("write to pty");
        input.flush().expect("flush pty");
    }

    /// The app's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("child pid")
    }

    /// Sends `signal` (a `kill` name: TERM, HUP, ...) to the app.
    pub fn kill(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal}");
    }

    /// Threads of the app's process right now.
    pub fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .map(|tasks| tasks.count())
            .unwrap_or(0)
    }

    /// Waits for the app to exit; returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                self.pump(Duration::from_millis(200));
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "app did not exit; screen:\n{}",
                self.screen()
            );
            self.pump(Duration::from_millis(50));
        }
    }

    /// Moves to the user message (the second) and opens its content editor.
    pub fn edit_user_message(&mut self) {
        self.send("\x1b[B"); // Down: the user message
        self.wait_for("the user message", |s| s.contains("#2 fields"));
        self.send("e");
        self.wait_for("the editor", |s| s.contains("#2 user · content"));
    }

    /// After the exit: waits until the screen left the alternate buffer (the restore).
    pub fn wait_restored(&mut self) {
        let deadline = Instant::now() + DEADLINE;
        while self.parser.screen().alternate_screen() {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "terminal left in the alternate screen");
            self.pump(left.min(Duration::from_millis(100)));
        }
    }

    /// The terminal's line discipline as `stty -a` prints it.
    pub fn stty(&self) -> String {
        let tty = self.tty.as_ref().expect("the pty's device name");
        let output = std::process::Command::new("stty")
            .arg("-F")
            .arg(tty)
            .arg("-a")
            .output()
            .expect("run stty");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Whether the terminal is back in cooked mode (line editing and echo on).
    pub fn cooked(&self) -> bool {
        let state = self.stty();
        let words: Vec<&str> = state.split_whitespace().collect();
        words.contains(&"icanon") && words.contains(&"echo")
    }

    /// Closes the terminal like a closed window or dropped connection: every handle on
    /// the pty's master side goes, so the kernel hangs the terminal up.
    pub fn close_terminal(&mut self) {
        use std::sync::atomic::Ordering;
        // portable-pty's writer, when dropped, types a newline and the EOF character
        // (^J ^D in raw mode: "delete to line start" in the editor). A terminal that
        // closes types nothing, so the EOF character is unset first.
        let tty = self.tty.as_ref().expect("the pty's device name");
        let unset = std::process::Command::new("stty")
            .arg("-F")
            .arg(tty)
            .args(["eof", "undef"])
            .status();
        assert!(unset.is_ok_and(|s| s.success()), "stty eof undef");
        // The reader thread holds a handle too: make it read once more and stop, by
        // provoking a redraw with a size change.
        self.stop_reading.store(true, Ordering::SeqCst);
        let master = self.master.as_ref().expect("terminal open");
        let size = master.get_size().expect("pty size");
        let _ = master.resize(PtySize {
            rows: size.rows,
            cols: size.cols - 1,
            ..size
        });
        let deadline = Instant::now() + DEADLINE;
        loop {
            match self.output.recv_timeout(Duration::from_millis(50)) {
                Ok(bytes) => self.parser.process(&bytes),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    assert!(Instant::now() < deadline, "the reader did not stop")
                }
            }
        }
        self.input = None;
        self.master = None;
    }
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal size above zero")
}

/// Writes the example session to `<dir>/sessions/weather.json`.
pub fn weather_session(dir: &Path) -> PathBuf {
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join("weather.json");
    let template = catalog::default_template();
    example_session(template.reference(&sessions))
        .save(&file)
        .unwrap();
    file
}

/// The content of message `index` in the session file at `path` (`""` when it is not
/// text).
pub fn message_content(path: &Path, index: usize) -> String {
    let session = chatplate_core::session::Session::load(path).expect("the session loads");
    session.messages[index].0["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
