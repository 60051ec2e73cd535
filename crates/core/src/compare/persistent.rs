//! One engine process for a whole corpus report: started once, fenced like every external
//! run ([`super::process`]), it reads one JSON request a line and answers each on a line.
//! Each request has its own deadline: past it, or when an answer is over the output cap,
//! the process's group is killed and the next request starts a new one. Starting Node or
//! Python once instead of once a case is what makes a report over a corpus fast.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use super::process;

/// Why a request gave no answer line.
#[derive(Debug)]
pub(super) enum AskError {
    /// It did not answer within the deadline (it was killed).
    TimedOut,
    /// Its answer was over the cap (it was killed).
    TooLarge,
    /// It ended without answering; the last line of its stderr, if any.
    Ended(String),
}

/// A running engine process.
pub(super) struct Persistent {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<Result<Vec<u8>, AskError>>,
    stderr: Receiver<Vec<u8>>,
    /// Its private working folder, removed with it.
    _folder: tempfile::TempDir,
}

impl Persistent {
    /// Starts `program` with `args`, fenced, reading requests a line; answers over `cap`
    /// bytes are refused.
    pub(super) fn start(program: &Path, args: &[&OsStr], cap: usize) -> io::Result<Persistent> {
        let folder = process::private_folder()?;
        let mut command = process::command(program, args, folder.path())?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        process::fence(&mut command);
        let mut child = command.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("no stderr"))?;
        let (send, answers) = mpsc::channel();
        thread::spawn(move || read_lines(stdout, cap, &send));
        let (send_err, stderr_lines) = mpsc::channel();
        thread::spawn(move || {
            // Keep only the last line (bounded), so a chatty engine never blocks.
            for line in BufReader::new(stderr).split(b'\n').map_while(Result::ok) {
                let _ = send_err.send(line.into_iter().take(1000).collect());
            }
        });
        Ok(Persistent {
            child,
            stdin,
            answers,
            stderr: stderr_lines,
            _folder: folder,
        })
    }

    /// Sends `request` (one line of JSON) and waits up to `timeout` for its answer line.
    /// On any error the process is killed: the caller starts another.
    pub(super) fn ask(&mut self, request: &[u8], timeout: Duration) -> Result<Vec<u8>, AskError> {
        let written = self
            .stdin
            .write_all(request)
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush());
        let answer = match written {
            Ok(()) => match self.answers.recv_timeout(timeout) {
                Ok(answer) => answer,
                Err(RecvTimeoutError::Timeout) => Err(AskError::TimedOut),
                Err(RecvTimeoutError::Disconnected) => Err(AskError::Ended(String::new())),
            },
            Err(_) => Err(AskError::Ended(String::new())),
        };
        match answer {
            Err(AskError::Ended(_)) => {
                process::end_group(&mut self.child);
                thread::sleep(Duration::from_millis(50));
                let last = self.stderr.try_iter().last().unwrap_or_default();
                Err(AskError::Ended(
                    String::from_utf8_lossy(&last).trim().to_string(),
                ))
            }
            Err(err) => {
                process::end_group(&mut self.child);
                Err(err)
            }
            Ok(line) => Ok(line),
        }
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        process::end_group(&mut self.child);
    }
}

/// Reads answer lines of at most `cap` bytes and sends each; a longer one is sent as
/// [`AskError::TooLarge`] and ends the reading.
fn read_lines(stdout: impl Read, cap: usize, send: &mpsc::Sender<Result<Vec<u8>, AskError>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        match (&mut reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                if send.send(Ok(line)).is_err() {
                    return;
                }
            }
            Ok(_) if line.len() > cap => {
                let _ = send.send(Err(AskError::TooLarge));
                return;
            }
            // The end of its output without a newline: the last answer.
            Ok(_) => {
                let _ = send.send(Ok(line));
                return;
            }
        }
    }
}
