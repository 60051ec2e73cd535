//! Checking fixtures in child processes, so that nothing a fixture does can take the
//! run down: a panic is caught in the child, and an abort, a stack overflow or a child
//! that stops answering is that fixture's failure (with the child's last words); a new
//! child takes the remaining fixtures.
//!
//! The children are the chatplate binary itself, started with a hidden argument
//! ([`WORKER_ARG`]); they live for the whole run (one per core), reading one request
//! per line on stdin and answering one [`Outcome`] per line on stdout, after a line
//! that gives the fixture's render deadline once it is loaded (it grows with the
//! conversation, so the parent waits for a long one accordingly). Each child
//! compiles a template once and reuses it ([`crate::rendering::compiled`]); the fixtures are handed
//! out in runs from the same folder, so that a template's fixtures mostly reach one
//! child.

use std::io::{BufRead, BufReader, Read, Write};
use std::ops::Range;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use super::child::serve;
use super::child::Answer;
use super::pool::check_guarded;
use super::{CaseResult, CheckOptions, Fixture, Outcome, Verdict};

/// The hidden command-line argument that makes the binary a checking child.
pub const WORKER_ARG: &str = "__check-worker";

/// How much of a crashed child's stderr is kept for the report.
const STDERR_TAIL_BYTES: usize = 2048;

/// Checks every fixture in child processes started by `worker` (a command that runs
/// [`serve`]); one result per fixture, in input order. Falls back to checking in this
/// process when no child can be started.
pub fn check_all_isolated(
    fixtures: &[Fixture],
    options: &CheckOptions,
    worker: &(dyn Fn() -> Command + Sync),
) -> Vec<CaseResult> {
    let workers = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .clamp(1, fixtures.len().max(1));
    let batches = batches(fixtures);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Verdict>>> = Mutex::new(vec![None; fixtures.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut slot = Slot::new(worker, options);
                while let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let verdicts = slot.check_batch(&fixtures[batch.clone()]);
                    if let Ok(mut all) = results.lock() {
                        for (index, verdict) in batch.clone().zip(verdicts) {
                            all[index] = Some(verdict);
                        }
                    }
                }
                slot.finish();
            });
        }
    });
    let all = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
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

/// Most fixtures one child takes at a time.
const MAX_BATCH: usize = 16;

/// The work split into runs of consecutive fixtures from the same folder (at most
/// [`MAX_BATCH`]): fixtures beside each other usually share a template (the corpus keeps
/// one folder per template), and each child compiles a template only once
/// ([`crate::rendering::compiled`]), so a run costs one compile instead of one per child.
fn batches(fixtures: &[Fixture]) -> Vec<Range<usize>> {
    let mut batches: Vec<Range<usize>> = Vec::new();
    for (index, fixture) in fixtures.iter().enumerate() {
        match batches.last_mut() {
            Some(last)
                if last.len() < MAX_BATCH
                    && fixtures[last.start].path.parent() == fixture.path.parent() =>
            {
                last.end = index + 1;
            }
            _ => batches.push(index..index + 1),
        }
    }
    batches
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

    /// One verdict per fixture of `batch`, in order. The whole batch is sent at once
    /// (one round trip instead of one per fixture); after a crash, the fixtures the
    /// child had not answered yet go to a new child.
    fn check_batch(&mut self, batch: &[Fixture]) -> Vec<Verdict> {
        let mut verdicts = Vec::with_capacity(batch.len());
        while verdicts.len() < batch.len() {
            let rest = &batch[verdicts.len()..];
            let sendable = rest.iter().take_while(|f| travels(f)).count();
            if sendable == 0 {
                // The request travels as JSON text: a path that is not UTF-8 is checked here.
                verdicts.push(self.here(&rest[0]));
                continue;
            }
            if self.child.is_none() {
                self.child = Worker::start(self.worker, self.options).ok();
            }
            let Some(child) = self.child.as_mut() else {
                // No child could be started: check here, still catching panics.
                verdicts.push(self.here(&rest[0]));
                continue;
            };
            let base = self.options.limits.deadline;
            let answered = child.send(&rest[..sendable]).and_then(|()| {
                (0..sendable).try_for_each(|_| {
                    verdicts.push(child.receive(base)?);
                    Ok(())
                })
            });
            if let Err(why) = answered {
                let crashed = self.child.take().map(|c| c.end(why.clone()));
                verdicts.push(Verdict::of(Outcome::Crashed(crashed.unwrap_or(why))));
            }
        }
        verdicts
    }

    /// Checks `fixture` in this process, still catching panics.
    fn here(&self, fixture: &Fixture) -> Verdict {
        let result = check_guarded(fixture, self.options);
        Verdict {
            outcome: result.outcome,
            notes: result.notes,
        }
    }

    fn finish(self) {
        if let Some(child) = self.child {
            child.close();
        }
    }
}

/// Whether `fixture`'s paths can travel to a child as JSON text (they are UTF-8).
fn travels(fixture: &Fixture) -> bool {
    fixture.path.to_str().is_some() && fixture.root.to_str().is_some()
}

/// Renders one fixture may make, each within its render deadline: the prompt and the
/// prefix-stability check (see [`super::prefix_stable`]), counted generously.
const RENDERS_PER_FIXTURE: u32 = 4;

/// How long a child may take to answer for a fixture whose renders are bounded by
/// `render_deadline` before it is stopped. A render stops itself at its deadline, which
/// grows with the conversation (10,000 messages add 100 s), so this only catches a
/// child stuck outside any render; it is generous, so a long real conversation is never
/// cut off here. Until a child says which fixture's deadline applies, the base deadline
/// does: loading a fixture is no render.
fn answer_deadline(render_deadline: Duration) -> Duration {
    render_deadline
        .saturating_mul(RENDERS_PER_FIXTURE)
        .saturating_add(Duration::from_secs(600))
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

    /// Sends one request per fixture.
    fn send(&mut self, fixtures: &[Fixture]) -> Result<(), String> {
        let mut lines = String::new();
        for fixture in fixtures {
            // One fixture a line, as the child reads it (see `serve`).
            lines.push_str(&serde_json::to_string(fixture).map_err(|e| e.to_string())?);
            lines.push('\n');
        }
        self.stdin
            .write_all(lines.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|_| "the checking process stopped accepting work".to_string())
    }

    /// The next verdict, waiting for it at most [`answer_deadline`] of the fixture's
    /// render deadline (`base` until the child has said what that is).
    fn receive(&mut self, base: Duration) -> Result<Verdict, String> {
        let mut wait = answer_deadline(base);
        loop {
            let line = match self.answers.recv_timeout(wait) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "no answer within {} s; the checking process was stopped",
                        wait.as_secs()
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the checking process died".into())
                }
            };
            match serde_json::from_str(&line) {
                Ok(Answer::Started { render_deadline_ms }) => {
                    wait = answer_deadline(Duration::from_millis(render_deadline_ms));
                }
                Ok(Answer::Verdict(verdict)) => return Ok(verdict),
                Err(err) => {
                    return Err(format!(
                        "unreadable answer from the checking process: {err}"
                    ))
                }
            }
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn fixture(path: &str) -> Fixture {
        Fixture {
            path: PathBuf::from(path),
            root: PathBuf::from("."),
            found_in_folder: true,
            text: None,
        }
    }

    #[test]
    fn the_parent_waits_for_a_fixture_as_long_as_its_renders_may_take() {
        let started = serde_json::to_string(&Answer::Started {
            render_deadline_ms: 105_000,
        })
        .unwrap();
        assert_eq!(started, r#"{"render_deadline_ms":105000}"#);
        let verdict = serde_json::to_string(&Answer::Verdict(Verdict::of(Outcome::Pass))).unwrap();
        assert!(matches!(
            serde_json::from_str(&verdict).unwrap(),
            Answer::Verdict(Verdict {
                outcome: Outcome::Pass,
                ..
            })
        ));
        // Gemma-4 at 10,000 messages: 5 s + 100 s per render, more than the old 610 s
        // for its renders together.
        let long = Duration::from_secs(105);
        assert!(answer_deadline(long) >= long * RENDERS_PER_FIXTURE);
    }

    #[test]
    fn batches_are_runs_from_one_folder_of_at_most_max_batch() {
        let mut fixtures = vec![
            fixture("a/1.json"),
            fixture("a/2.json"),
            fixture("b/1.json"),
        ];
        fixtures.extend((0..=MAX_BATCH).map(|i| fixture(&format!("c/{i}.json"))));
        fixtures.push(fixture("a/3.json"));
        let c = 3 + MAX_BATCH;
        assert_eq!(
            batches(&fixtures),
            vec![0..2, 2..3, 3..c, c..c + 1, c + 1..c + 2]
        );
        assert!(batches(&[]).is_empty());
    }
}
