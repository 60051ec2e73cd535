//! `chatplate completions SHELL` and `chatplate man`: shell completion scripts and the
//! man page, generated from the same argument definitions as the parser.

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use super::{output, Cli};

/// Prints the completion script for `shell`.
pub(super) fn completions(shell: Shell) -> Result<i32> {
    let mut command = Cli::command();
    // Into a buffer first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "chatplate", &mut script);
    output::print_bytes(&script)?;
    Ok(0)
}

/// Prints the man page (roff): `chatplate man > chatplate.1`.
pub(super) fn man() -> Result<i32> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    output::print_bytes(&page)?;
    Ok(0)
}
