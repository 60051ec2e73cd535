//! Writing to stdout like a Unix tool: when the reader goes away (`| head -1`), stop
//! quietly instead of printing "Broken pipe" (or panicking inside `println!`).

use std::io::{self, Write};

/// Writes `text` to stdout as it is.
pub fn print(text: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

/// Writes each line with a newline.
pub fn print_lines(lines: &[String]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for line in lines {
        writeln!(stdout, "{line}")?;
    }
    stdout.flush()
}

/// Whether `err` (from anywhere in a command) is stdout's reader having gone away.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
