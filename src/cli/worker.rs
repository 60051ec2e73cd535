//! The hidden `__check-worker` command: a child process of `chatplate check`, which
//! checks the fixtures it is sent on stdin (see `chatplate_core::check::isolate`).

use anyhow::Result;

use chatplate_core::check::isolate;

/// Serves check requests until stdin closes.
pub(super) fn run() -> Result<i32> {
    let input = std::io::BufReader::new(std::io::stdin());
    isolate::serve(input, std::io::stdout())?;
    Ok(0)
}
