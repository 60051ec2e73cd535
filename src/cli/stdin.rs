//! `-` for standard input, wherever the command line reads a file (a fixture, a request
//! body, a messages or tools list, a template, prompt text).
//!
//! Standard input can be read only once, so a command takes at most one `-`
//! ([`at_most_one`] says which arguments collided before anything is read). What is
//! read is capped like the file it stands for (`chatplate_core::files`), and errors name it
//! `<stdin>`, as `FILE:LINE:COL` diagnostics do.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Result};

use chatplate_core::files;

/// How standard input is named in errors and reports.
pub(super) const NAME: &str = "<stdin>";

/// Whether a path argument means standard input.
pub(super) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Fails when more than one of `inputs` (an argument's name, and whether it is `-`)
/// reads standard input: one of them would find it empty.
pub(super) fn at_most_one(inputs: &[(&str, bool)]) -> Result<()> {
    let given: Vec<&str> = inputs
        .iter()
        .filter(|(_, dash)| *dash)
        .map(|(name, _)| *name)
        .collect();
    let what = match given.as_slice() {
        [] | [_] => return Ok(()),
        [first, rest @ ..] if rest.iter().all(|name| name == first) => {
            format!("{} times as {first}", given.len())
        }
        _ => format!("for {}", given.join(" and ")),
    };
    bail!("`-` (standard input) is given {what}; standard input can feed only one of them")
}

/// [`at_most_one`] for a list of paths given as one argument (`name`).
pub(super) fn at_most_one_in(name: &str, paths: &[PathBuf]) -> Result<()> {
    let dashes: Vec<_> = paths.iter().map(|p| (name, is_stdin(p))).collect();
    at_most_one(&dashes)
}

/// Whether standard input was read already (a second read would find it empty).
static TAKEN: AtomicBool = AtomicBool::new(false);

/// All of standard input as UTF-8 text, at most `limit` bytes (the cap of the file it
/// stands for). Standard input is read once per process: a second call is an error.
pub(super) fn read_text(limit: u64) -> Result<String> {
    if TAKEN.swap(true, Ordering::SeqCst) {
        bail!("{NAME}: standard input was already read for another argument");
    }
    let name = Path::new(NAME);
    let bytes = files::read_capped(std::io::stdin().lock(), name, limit, 0)?;
    Ok(files::utf8_text(name, bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_dashes_are_refused_by_name() {
        assert!(at_most_one(&[("FIXTURE", true), ("--tools", false)]).is_ok());
        let err = at_most_one(&[("--template", true), ("--messages", true)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`-` (standard input) is given for --template and --messages; standard input can feed only one of them"
        );
        let err = at_most_one(&[("PATH", true), ("PATH", false), ("PATH", true)]).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("`-` (standard input) is given 2 times as PATH;"));
    }
}
