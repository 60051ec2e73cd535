//! Checking fixtures in child processes, so that nothing a fixture does can take the
//! run down: a panic is caught in the child, and an abort, a stack overflow or a child
//! that stops answering is that fixture's failure (with the child's last words); a new
//! child takes the remaining fixtures.
//!
//! The children are the chatplate binary itself, started with a hidden argument
//! ([`WORKER_ARG`]); they live for the whole run (one per core), reading one request
//! per line on stdin and answering one [`Outcome`] per line on stdout, so templates
//! could later be compiled once per child and reused.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::pool::{check_guarded, WORKER_STACK_BYTES};
use super::{CaseResult, CheckOptions, Fixture, Outcome, Verdict};

/// The hidden command-line argument that makes the binary a checking child.
pub const WORKER_ARG: &str = "__check-worker";

/// How much of a crashed child's stderr is kept for the report.
const STDERR_TAIL_BYTES: usize = 2048;

/// One fixture, as sent to a child.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    path: PathBuf,
    root: PathBuf,
    found_in_folder: bool,
}

/// Checks every fixture in child processes started by `worker` (a command that runs
/// [`serve`]); one result per fixture, in input order. Falls back to checking in this
/// process when no child can be started.
pub fn check_all_isolated(
    fixtures: &[Fixture],
    options: &CheckOptions,
    worker: &(dyn Fn() -> Command + Sync),
) -> Vec<CaseResult> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, fixtures.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Verdict>>> = Mutex::new(vec![None; fixtures.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut slot = Slot::new(worker, options);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(fixture) = fixtures.get(index) else {
                        break;
                    };
                    let verdict = slot.check(fixture);
                    if let Ok(mut all) = results.lock() {
                        all[index] = Some(verdict);
                    }
                }
                slot.finish();
            });
        }
    });
    let all = results.into_inner().unwrap_or_else(|p| p.into_inner());
    all.into_iter()
        .zip(fixtures)
        .map(|(verdict, fixture)| {
            verdict
                .unwrap_or_else(|| {
                    Verdict::of(Outcome::Crashed(
                        "the checker did not get to this fixture".into(),
                    ))
                })
                .at(&fixture.path)
        })
        .collect()
}

/// One worker's child process, restarted after a crash.
struct Slot<'a> {
    worker: &'a (dyn Fn() -> Command + Sync),
    options: &'a CheckOptions,
    child: Option<Worker>,
}

impl<'a> Slot<'a> {
    fn new(worker: &'a (dyn Fn() -> Command + Sync), options: &'a CheckOptions) -> Self {
        Slot {
            worker,
            options,
            child: None,
        }
    }

    fn check(&mut self, fixture: &Fixture) -> Verdict {
        let here = |fixture: &Fixture| {
            let result = check_guarded(fixture, self.options);
            Verdict {
                outcome: result.outcome,
                notes: result.notes,
            }
        };
        if fixture.path.to_str().is_none() || fixture.root.to_str().is_none() {
            // The request travels as JSON text: a path that is not UTF-8 is checked here.
            return here(fixture);
        }
        if self.child.is_none() {
            self.child = Worker::start(self.worker, self.options).ok();
        }
        let Some(child) = self.child.as_mut() else {
            // No child could be started: check here, still catching panics.
            return here(fixture);
        };
        match child.ask(fixture, answer_deadline(self.options)) {
            Ok(verdict) => verdict,
            Err(why) => {
                let crashed = self.child.take().map(|c| c.end(why.clone()));
                Verdict::of(Outcome::Crashed(crashed.unwrap_or(why)))
            }
        }
    }

    fn finish(self) {
        if let Some(child) = self.child {
            child.close();
        }
    }
}

/// How long a child may take to answer for one fixture before it is stopped. A render
/// stops itself at its deadline (which grows with the conversation: 10,000 messages add
/// 100 s), so this only catches a child stuck outside any render; it is generous, so a
/// long real conversation is never cut off here.
fn answer_deadline(options: &CheckOptions) -> Duration {
    options.limits.deadline * 2 + Duration::from_secs(600)
}

/// A running child.
struct Worker {
    process: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: std::thread::JoinHandle<()>,
}

impl Worker {
    fn start(
        worker: &(dyn Fn() -> Command + Sync),
        options: &CheckOptions,
    ) -> std::io::Result<Self> {
        let mut process = worker()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) = (
            process.stdin.take(),
            process.stdout.take(),
            process.stderr.take(),
        ) else {
            let _ = process.kill();
            let _ = process.wait();
            return Err(std::io::Error::other("child without pipes"));
        };
        let (sender, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&tail);
        let stderr_reader = std::thread::spawn(move || keep_tail(stderr, &writer));
        writeln!(stdin, "{}", serde_json::to_string(options)?)?;
        Ok(Worker {
            process,
            stdin,
            answers,
            stderr: tail,
            stderr_reader,
        })
    }

    fn ask(&mut self, fixture: &Fixture, deadline: Duration) -> Result<Verdict, String> {
        let request = Request {
            path: fixture.path.clone(),
            root: fixture.root.clone(),
            found_in_folder: fixture.found_in_folder,
        };
        let line = serde_json::to_string(&request).map_err(|e| e.to_string())?;
        if writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return Err("the checking process stopped accepting work".into());
        }
        match self.answers.recv_timeout(deadline) {
            Ok(answer) => serde_json::from_str(&answer)
                .map_err(|err| format!("unreadable answer from the checking process: {err}")),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "no answer within {} s; the checking process was stopped",
                deadline.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => Err("the checking process died".into()),
        }
    }

    /// Stops the child (it crashed or hung) and describes how it ended.
    fn end(mut self, why: String) -> String {
        let _ = self.process.kill();
        let status = self.process.wait().ok();
        // The child is gone, so its stderr is at end of file: the reader is done.
        let _ = self.stderr_reader.join();
        let tail = self.stderr.lock().map(|t| t.clone()).unwrap_or_default();
        let tail = String::from_utf8_lossy(&tail);
        let mut message = match status {
            Some(status) => format!("{why} ({})", describe_exit(status)),
            None => why,
        };
        let tail = tail.trim();
        if !tail.is_empty() {
            message.push_str("\nits last output:\n");
            message.push_str(tail);
        }
        message
    }

    /// Ends a child that did its work: closing stdin makes it exit.
    fn close(mut self) {
        drop(self.stdin);
        let _ = self.process.wait();
    }
}

/// Keeps the last [`STDERR_TAIL_BYTES`] of a child's stderr.
fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 4096];
    while let Ok(read) = stderr.read(&mut buffer) {
        if read == 0 {
            break;
        }
        let Ok(mut tail) = tail.lock() else { break };
        tail.extend_from_slice(&buffer[..read]);
        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..excess);
    }
}

fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => "SIGABRT: aborted, e.g. an allocation failed",
                9 => "SIGKILL",
                11 => "SIGSEGV: e.g. a stack overflow",
                _ => "a signal",
            };
            return format!("killed by signal {signal}, {name}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "ended".into(),
    }
}

/// The child's side: reads the options, then one request per line, and answers each
/// with one outcome per line, until stdin closes. Runs the work on a thread with a
/// large stack, like [`super::check_all`].
pub fn serve(input: impl BufRead + Send, output: impl Write + Send) -> std::io::Result<()> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("chatplate-check".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn_scoped(scope, || serve_here(input, output))?
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the checking thread panicked")))
    })
}

fn serve_here(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    let mut lines = input.lines();
    let Some(first) = lines.next() else {
        return Ok(());
    };
    let options: CheckOptions = serde_json::from_str(&first?).map_err(std::io::Error::other)?;
    for line in lines {
        let request: Request = serde_json::from_str(&line?).map_err(std::io::Error::other)?;
        let fixture = Fixture {
            path: request.path,
            root: request.root,
            found_in_folder: request.found_in_folder,
        };
        let result = check_guarded(&fixture, &options);
        let verdict = Verdict {
            outcome: result.outcome,
            notes: result.notes,
        };
        writeln!(output, "{}", serde_json::to_string(&verdict)?)?;
        output.flush()?;
    }
    Ok(())
}
