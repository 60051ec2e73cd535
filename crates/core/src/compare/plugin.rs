//! Plug-in engines: `cmd:PROGRAM [ARGS]`, any program that reads one JSON request on its
//! stdin and writes one JSON answer on its stdout (the protocol is in docs/compare.md).
//!
//! A plug-in is named by the user, on the command line or in their config file, never by
//! a fixture: running a program is the user's decision. It runs through the same fenced
//! runner as `python` and `hf-jinja` ([`super::process`]): a private empty folder, a
//! short environment, its own process group, bounded in time and output.

use std::path::{Path, PathBuf};

/// The version of the request chatplate sends (`"protocol"` in the request).
pub const PROTOCOL_VERSION: u32 = 1;

/// The prefix of a plug-in's engine spec.
pub const CMD_PREFIX: &str = "cmd:";

/// A plug-in engine: a program and its arguments, under a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Plugin {
    /// Its name in reports: the config file's name for it, else its spec.
    pub name: String,
    /// The spec as written (`cmd:PROGRAM ARGS`).
    pub spec: String,
    /// The program: a bare name is searched in PATH, a path is made absolute.
    pub(super) program: PathBuf,
    /// Its arguments; those that name an existing file are absolute (the program runs in
    /// an empty folder of its own, where a relative path would find nothing).
    pub(super) args: Vec<String>,
}

impl Plugin {
    /// The plug-in `spec` (`cmd:PROGRAM [ARGS]`, split at white space), named `name` (else
    /// by its spec); relative paths are taken from `base` (chatplate's working folder for
    /// the command line, the config file's folder for the config file).
    ///
    /// # Errors
    /// When `spec` is not `cmd:` followed by a program.
    pub fn parse(name: Option<&str>, spec: &str, base: &Path) -> Result<Plugin, String> {
        let Some(command) = spec.strip_prefix(CMD_PREFIX) else {
            return Err(format!(
                "`{spec}` is not a plug-in engine: write `{CMD_PREFIX}PROGRAM [ARGS]`"
            ));
        };
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            return Err(format!("`{spec}` names no program after `{CMD_PREFIX}`"));
        };
        let program = Path::new(program);
        let program = if program.components().count() > 1 && program.is_relative() {
            base.join(program)
        } else {
            program.to_path_buf()
        };
        let args = words
            .map(|arg| {
                let path = Path::new(arg);
                let there = base.join(path);
                if path.is_relative() && there.exists() {
                    std::path::absolute(&there).map_or_else(
                        |_| arg.to_string(),
                        |abs| abs.to_string_lossy().into_owned(),
                    )
                } else {
                    arg.to_string()
                }
            })
            .collect();
        Ok(Plugin {
            name: name.unwrap_or(spec).to_string(),
            spec: spec.to_string(),
            program,
            args,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_gives_the_program_and_absolute_file_arguments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("adapter.py"), "").unwrap();
        let plugin = Plugin::parse(None, "cmd:python3 adapter.py --fast", dir.path()).unwrap();
        assert_eq!(plugin.name, "cmd:python3 adapter.py --fast");
        assert_eq!(plugin.program, PathBuf::from("python3"));
        assert!(
            Path::new(&plugin.args[0]).is_absolute(),
            "{:?}",
            plugin.args
        );
        assert_eq!(plugin.args[1], "--fast");
        let err = Plugin::parse(None, "cmd: ", dir.path()).unwrap_err();
        assert!(err.contains("names no program"), "{err}");
        assert!(Plugin::parse(None, "python3", dir.path()).is_err());
    }
}
