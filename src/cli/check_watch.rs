//! `chatplate check --watch`: check, then check again each time a file under the paths
//! changes, until Ctrl+C (whose default action ends this process and, from a terminal,
//! the checking children with it).

use std::path::PathBuf;
use std::thread::sleep;
use std::time::Duration;

use anyhow::{bail, Result};

use super::check::{run_once, shown, CheckArgs};
use super::output;
use super::stdin;
use chatplate_core::check::watch::{Snapshot, MAX_WATCHED_FILES};

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(400);

/// How many polls a burst of writes (an editor saving through a temporary file, a
/// `git checkout`) may last before checking anyway.
const MAX_SETTLE_POLLS: usize = 10;

/// Checks, then waits for a change and checks again, forever (Ctrl+C ends it).
pub(super) fn watch(args: &CheckArgs) -> Result<i32> {
    let paths = args.paths();
    if paths.iter().any(|p| stdin::is_stdin(p)) {
        bail!("--watch re-reads files; a fixture from standard input (`-`) cannot be watched");
    }
    let watched: Vec<PathBuf> = paths.iter().chain(args.template_roots()).cloned().collect();
    let mut told_truncated = false;
    loop {
        let before = Snapshot::take(&watched, MAX_WATCHED_FILES);
        if before.truncated() && !told_truncated {
            told_truncated = true;
            output::note(&format!(
                "chatplate: watching only the first {MAX_WATCHED_FILES} files in {}",
                shown(&watched)
            ));
        }
        run_once(args)?;
        output::note(&format!(
            "chatplate: watching {} files in {} for changes (Ctrl+C ends)",
            before.len(),
            shown(&watched)
        ));
        let after = wait_for_change(&watched, &before);
        let what = before
            .first_change(&after)
            .map_or_else(|| "a file".to_string(), |p| p.display().to_string());
        output::note(&format!("chatplate: {what} changed; checking again"));
    }
}

/// Polls until the files differ from `before`, then until they stop changing (at most
/// [`MAX_SETTLE_POLLS`] more polls); returns the state they settled in.
fn wait_for_change(watched: &[PathBuf], before: &Snapshot) -> Snapshot {
    let mut now = poll(watched);
    while now == *before {
        now = poll(watched);
    }
    for _ in 0..MAX_SETTLE_POLLS {
        let again = poll(watched);
        if again == now {
            break;
        }
        now = again;
    }
    now
}

fn poll(watched: &[PathBuf]) -> Snapshot {
    sleep(POLL);
    Snapshot::take(watched, MAX_WATCHED_FILES)
}
