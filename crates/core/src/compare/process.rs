//! One bounded run of an external engine's interpreter (`python`, `node`), fenced from the
//! folder chatplate runs in: a fixture's folder is a stranger's tree, and an interpreter
//! started there imports what lies beside the fixtures (a `json.py`, a `node_modules`).
//!
//! So the child gets a working directory of its own (a fresh, empty temporary folder), an
//! environment of its own (a short list of the user's variables, see [`PASSED`]: no
//! `PYTHON*`, no `NODE_*`, no tokens), and its program is found by an absolute path
//! (a relative one is taken from chatplate's own folder, and a bare name is searched only
//! in PATH's absolute folders, never in `.`).
//!
//! It runs in a process group of its own, so at its deadline the whole group is killed,
//! grandchildren included, and so is any grandchild still alive when it ends: nothing it
//! started outlives the run. On Linux it also dies with chatplate (an interrupted run). The pipes are read for a short while after that and then
//! abandoned, so a descendant that left the group while holding them cannot make chatplate
//! wait.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The variables the child keeps from chatplate's environment (and every `LC_*`): what
/// an interpreter needs to start and to read text (its search path for programs, the
/// home folder, the locale, the time zone, the temporary folder, the libraries a
/// Python build may need), and nothing that changes what it imports or runs on start
/// (`PYTHONPATH`, `PYTHONSTARTUP`, `NODE_OPTIONS`, `NODE_PATH`, ...) or that it has no
/// use for (`HF_TOKEN` and every other credential).
pub(super) const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "WINDIR",
    "LD_LIBRARY_PATH",
    "DYLD_LIBRARY_PATH",
];

/// How long the pipes are still read after the child ended (or was killed): enough for
/// what the kernel holds, not a wait for a descendant that escaped the group.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// What a finished child left.
pub(super) struct Finished {
    /// How it exited.
    pub(super) status: ExitStatus,
    /// Its stdout, at most the cap plus one byte.
    pub(super) stdout: Vec<u8>,
    /// Its stderr, likewise.
    pub(super) stderr: Vec<u8>,
}

/// Why a run gave no [`Finished`].
#[derive(Debug)]
pub(super) enum RunError {
    /// The program could not be found or started.
    Spawn(io::Error),
    /// The deadline passed; the child's group was killed.
    TimedOut,
}

/// `program` with `args`, ready to run with an environment and working directory of its
/// own (`cwd`, which the caller keeps alive for the run).
pub(super) fn command(program: &Path, args: &[&OsStr], cwd: &Path) -> io::Result<Command> {
    let located = locate(program)?;
    let mut command = Command::new(located);
    command.args(args).current_dir(cwd).env_clear();
    for (key, value) in std::env::vars_os() {
        let keep = key
            .to_str()
            .is_some_and(|key| PASSED.contains(&key) || key.starts_with("LC_"));
        if keep {
            command.env(key, value);
        }
    }
    Ok(command)
}

/// A fresh, empty folder for the child to run in, removed when dropped.
pub(super) fn private_folder() -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("chatplate-engine-")
        .tempdir()
}

/// Where `program` is: a path with a folder in it, made absolute from chatplate's own
/// working directory (the child runs elsewhere); a bare name, from PATH's absolute
/// folders only (an empty or relative entry would be the current folder).
pub(super) fn locate(program: &Path) -> io::Result<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return std::path::absolute(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .flat_map(|dir| candidates(&dir, program))
        .find(|candidate| is_program(candidate))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} not found in PATH", program.display()),
            )
        })
}

/// The files `name` may be in `dir` (with Windows' executable extensions there).
fn candidates(dir: &Path, name: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.join(name)];
    if cfg!(windows) && name.extension().is_none() {
        found.extend(["exe", "cmd", "bat"].map(|ext| dir.join(name).with_extension(ext)));
    }
    found
}

#[cfg(unix)]
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_program(path: &Path) -> bool {
    path.is_file()
}

/// Runs `command` with `input` on its stdin until it exits or `timeout` passes, keeping
/// at most `cap + 1` bytes of each output (one more than allowed shows it went over).
pub(super) fn run(
    mut command: Command,
    input: Vec<u8>,
    timeout: Duration,
    cap: usize,
) -> Result<Finished, RunError> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    fence(&mut command);
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let deadline = Instant::now() + timeout;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that never reads its stdin must not block us: the write has its own
        // thread, never waited for (killing the group closes the pipe and ends it).
        thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let stdout = Capture::start(child.stdout.take(), cap);
    let stderr = Capture::start(child.stderr.take(), cap);
    let status = wait_until(&mut child, deadline);
    end_group(&mut child);
    let drained = Instant::now() + DRAIN_GRACE;
    let (stdout, stderr) = (stdout.finish(drained), stderr.finish(drained));
    match status {
        Some(status) => Ok(Finished {
            status,
            stdout,
            stderr,
        }),
        None => Err(RunError::TimedOut),
    }
}

/// Puts the child in a process group of its own, which dies with chatplate on Linux.
pub(super) fn fence(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    die_with_parent(command);
}

/// Makes the child die with chatplate. In a group of its own it no longer gets the
/// terminal's Ctrl+C, and an engine stuck in a template would outlive an interrupted
/// `check` or `compare`; on Linux the kernel kills it when chatplate's thread that
/// started it ends (that thread waits for it, so this happens only when chatplate dies).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn die_with_parent(command: &mut Command) {
    use rustix::process::{getpid, getppid, set_parent_process_death_signal, Signal};
    use std::os::unix::process::CommandExt;
    let parent = getpid();
    let ask = move || -> io::Result<()> {
        set_parent_process_death_signal(Some(Signal::KILL))?;
        // chatplate may have ended before the signal was asked for.
        if getppid() == Some(parent) {
            Ok(())
        } else {
            Err(rustix::io::Errno::SRCH.into())
        }
    };
    // SAFETY: the closure runs in the child between fork and exec; it only makes the
    // system calls prctl and getppid and allocates nothing (an `Errno` converts into an
    // `io::Error` without allocating), as `pre_exec` requires.
    unsafe {
        command.pre_exec(ask);
    }
}

/// The child's exit status, or `None` when `deadline` passed first.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

/// Kills whatever is left of the child's process group (the child itself at its
/// deadline, and any grandchild still holding the pipes), and reaps the child.
pub(super) fn end_group(child: &mut Child) {
    #[cfg(unix)]
    {
        // The group is named by the child's pid (`process_group(0)`). When the child was
        // already reaped, the group lives on under that number as long as any member does;
        // an empty group is simply not found.
        let group = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// One output of the child, read to its end by a thread, kept up to a cap.
struct Capture {
    kept: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
}

impl Capture {
    fn start(source: Option<impl Read + Send + 'static>, cap: usize) -> Capture {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&kept);
        let reader = source.map(|source| thread::spawn(move || keep(source, cap, &shared)));
        Capture { kept, reader }
    }

    /// What was read, once the reader is done or at `deadline` (what it had by then: a
    /// descendant outside the group may hold the pipe open for ever).
    fn finish(self, deadline: Instant) -> Vec<u8> {
        if let Some(reader) = self.reader {
            while !reader.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(2));
            }
        }
        self.kept
            .lock()
            .map(|kept| kept.clone())
            .unwrap_or_default()
    }
}

/// Reads `source` to its end, keeping at most `cap + 1` bytes in `kept` and discarding
/// the rest, so the child never blocks on a full pipe.
fn keep(mut source: impl Read, cap: usize, kept: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 64 * 1024];
    while let Ok(n) = source.read(&mut buffer) {
        if n == 0 {
            break;
        }
        let Ok(mut kept) = kept.lock() else { break };
        let room = (cap + 1).saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..n.min(room)]);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_found_in_absolute_path_folders_only() {
        let found = locate(Path::new("sh")).expect("sh is on PATH");
        assert!(found.is_absolute(), "{found:?}");
        let relative = locate(Path::new("bin/sh")).unwrap();
        assert!(relative.is_absolute() && relative.ends_with("bin/sh"));
        assert!(locate(Path::new("surely-no-such-program-here")).is_err());
    }

    #[test]
    fn the_child_keeps_only_the_passed_variables() {
        let dir = private_folder().unwrap();
        let command = command(Path::new("sh"), &[], dir.path()).unwrap();
        let names: Vec<String> = command
            .get_envs()
            .filter(|(_, value)| value.is_some())
            .map(|(key, _)| key.to_string_lossy().into_owned())
            .collect();
        for name in &names {
            assert!(
                PASSED.contains(&name.as_str()) || name.starts_with("LC_"),
                "{name}"
            );
        }
        assert_eq!(command.get_current_dir(), Some(dir.path()));
    }
}
