//! Running the real `chatplate` binary as a user does, for the CLI tests.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The binary with `args`, run in `dir`.
pub fn command(args: &[&str], dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chatplate"));
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
