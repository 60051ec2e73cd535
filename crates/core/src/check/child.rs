//! The checking child's side of [`super::isolate`]: it reads the options, then one
//! fixture per line, and for each says on stdout, one line at a time, the fixture's
//! render deadline once it is loaded ([`Answer::Started`]), then its verdict.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use super::pool::{check_guarded_telling, WORKER_STACK_BYTES};
use super::{CheckOptions, Fixture, Verdict};

/// What a child says on stdout: the render deadline of the fixture it has loaded, then
/// that fixture's verdict.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Answer {
    /// The fixture is loaded; each of its renders may take this long.
    Started {
        /// [`chatplate_render::Limits::deadline_for`] its conversation, in milliseconds.
        render_deadline_ms: u64,
    },
    /// What checking it concluded.
    Verdict(Verdict),
}

/// The child's side: reads the options, then one request per line, and answers each
/// with two lines (its render deadline, then its verdict), until stdin
/// closes. Runs the work on a thread with a large stack, like [`super::check_all`].
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
        let fixture: Fixture = serde_json::from_str(&line?).map_err(std::io::Error::other)?;
        let mut told = Ok(());
        let verdict = check_guarded_telling(&fixture, &options, &mut |deadline| {
            let render_deadline_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
            told = tell(&mut output, &Answer::Started { render_deadline_ms });
        });
        told?;
        tell(&mut output, &Answer::Verdict(verdict))?;
    }
    Ok(())
}

/// Writes one answer line and flushes it, so the parent hears it at once.
fn tell(output: &mut impl Write, answer: &Answer) -> std::io::Result<()> {
    writeln!(output, "{}", serde_json::to_string(answer)?)?;
    output.flush()
}
