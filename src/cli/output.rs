//! Everything the commands print goes through here, so that two rules hold everywhere:
//!
//! * Like a Unix tool, a reader that goes away (`| head -1`) ends the command quietly:
//!   writes return the error (which `main` turns into exit 0) instead of panicking
//!   inside `println!`. The `print!` family is denied in this module tree (clippy's
//!   `print_stdout` and `print_stderr`), so no command can bypass this.
//! * Names that come from files, users or the network (template and model names, Hub
//!   file names, request keys, paths, notes) reach the terminal with their control
//!   characters escaped ([`visible`]), so none can retitle or rewrite it. JSON
//!   documents ([`print_json`]) go through [`machine_output`], which escapes the DEL and
//!   C1 controls serde_json leaves raw without changing the document's value. Only the
//!   prompt itself is written as it is.

use std::io::{self, Write};

use chatplate_core::machine_output;
use chatplate_render::visible;
use serde::Serialize;

/// Writes `text` to stdout as it is (a prompt, a JSON document).
pub fn print(text: &str) -> io::Result<()> {
    print_bytes(text.as_bytes())
}

/// Writes `bytes` to stdout as they are (a man page, a completion script).
pub fn print_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()
}

/// Writes `value` as a JSON document (pretty, or on one line) and a newline, with no raw
/// control character ([`machine_output`]).
pub fn print_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> anyhow::Result<()> {
    let mut text = match pretty {
        true => machine_output::to_json_pretty(value)?,
        false => machine_output::to_json(value)?,
    };
    text.push('\n');
    Ok(print(&text)?)
}

/// Writes each line with a newline.
pub fn print_lines(lines: &[String]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for line in lines {
        writeln!(stdout, "{line}")?;
    }
    stdout.flush()
}

/// Writes text made of untrusted names to stdout, control characters escaped.
pub fn print_visible(text: &str) -> io::Result<()> {
    print(&visible::for_terminal(text))
}

/// One line on stderr (a note, a warning, an error), control characters escaped. A
/// stderr that is gone is ignored: there is nobody left to tell.
pub fn note(line: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{}", visible::for_terminal(line));
}

/// Whether `err` (from anywhere in a command) is stdout's reader having gone away.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
