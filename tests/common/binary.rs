//! Running the real `chatplate` binary as a user does, for the CLI tests.
//!
//! Only the root package's tests have the binary: the engine crates' tests, which share
//! `tests/common`, compile this module without it and never call it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The `chatplate` binary Cargo built for the root package's tests.
fn chatplate_exe() -> &'static str {
    let Some(exe) = option_env!("CARGO_BIN_EXE_chatplate") else {
        panic!("only the root package's tests run chatplate");
    };
    exe
}

/// The binary with `args`, run in `dir`.
pub fn command(args: &[&str], dir: &Path) -> Command {
    let mut command = Command::new(chatplate_exe());
    command.args(args).current_dir(dir);
    command
}

/// Runs chatplate in `dir` (standard input empty) and waits for it.
pub fn chatplate(args: &[&str], dir: &Path) -> Output {
    command(args, dir).output().expect("chatplate runs")
}

/// Runs chatplate in `dir`, feeding `input` on standard input.
pub fn chatplate_with_input(args: &[&str], dir: &Path, input: &[u8]) -> Output {
    run_with_input(command(args, dir), input)
}

/// Runs `command`, feeding `input` on standard input, and waits for it.
pub fn run_with_input(mut command: Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chatplate runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // chatplate may stop reading early (an error): a broken pipe is then expected.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().expect("chatplate finishes")
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What a bounded run of the binary left behind ([`run_bounded`]).
pub struct Run {
    /// How it ended.
    pub status: ExitStatus,
    /// Standard output as text.
    pub stdout: String,
    /// Standard error as text.
    pub stderr: String,
}

impl Run {
    /// The exit code (`None`: killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// The binary under test: `CHATPLATE_TEST_BIN` runs the hostile-input tests against
/// another build (an older one, to see them fail).
pub fn binary_under_test() -> PathBuf {
    std::env::var_os("CHATPLATE_TEST_BIN")
        .map_or_else(|| PathBuf::from(chatplate_exe()), PathBuf::from)
}

/// Runs `command` (standard input empty, output captured) and kills it after `limit`: a
/// hang (a FIFO, a loop) fails the test instead of stalling the suite.
pub fn run_bounded(mut command: Command, limit: Duration) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chatplate starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} hung (killed after {limit:?})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}
