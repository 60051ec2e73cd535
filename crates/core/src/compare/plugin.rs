//! Plug-in engines: `cmd:PROGRAM [ARGS]`, any program that reads one JSON request on its
//! stdin and writes one JSON answer on its stdout (the protocol is in docs/compare.md);
//! and `py:FILE.py:FUNCTION` or `py:MODULE:FUNCTION`, a vendor's Python encoder called by
//! the user's Python (`CHATPLATE_PYTHON`), isolated like the `python` engine.
//!
//! A plug-in is named by the user, on the command line or in their config file, never by
//! a fixture: running a program is the user's decision. It runs through the same fenced
//! runner as `python` and `hf-jinja` ([`super::process`]): a private empty folder, a
//! short environment, its own process group, bounded in time and output.

use std::path::{Path, PathBuf};

/// The version of the request chatplate sends (`"protocol"` in the request).
pub const PROTOCOL_VERSION: u32 = 1;

/// The prefix of a plug-in program's engine spec.
pub const CMD_PREFIX: &str = "cmd:";

/// The prefix of a persistent plug-in program's engine spec: one process, one JSON
/// request a line, one answer a line.
pub const LINES_PREFIX: &str = "lines:";

/// The prefix of a Python encoder's engine spec.
pub const PY_PREFIX: &str = "py:";

/// The `mistral-common` engine's name; its spec is `mistral-common:TOKENIZER`.
pub const MISTRAL_COMMON: &str = "mistral-common";

/// The tokenizers mistral-common ships, by the name `mistral-common:NAME` takes: each is
/// one of its `MistralTokenizer` constructors.
pub const MISTRAL_TOKENIZERS: [&str; 5] = ["v1", "v2", "v3", "v3-tekken", "v7"];

/// The prefixes a spec can start with, each naming a kind of plug-in.
pub const PREFIXES: [&str; 3] = [CMD_PREFIX, LINES_PREFIX, PY_PREFIX];

/// Whether `spec` names a plug-in (`cmd:`, `lines:`, `py:` or `mistral-common`).
pub fn is_plugin(spec: &str) -> bool {
    PREFIXES.iter().any(|prefix| spec.starts_with(prefix))
        || spec == MISTRAL_COMMON
        || spec.starts_with(&format!("{MISTRAL_COMMON}:"))
}

/// What a plug-in runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Runs {
    /// A program and its arguments; those that name an existing file are absolute (the
    /// program runs in an empty folder of its own, where a relative path finds nothing).
    Command {
        /// A bare name is searched in PATH, a path is made absolute.
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// Persistent (`lines:`): started once, it answers one request a line.
        lines: bool,
    },
    /// A function of a Python file (absolute) or an installed module.
    Encoder {
        /// The `.py` file, or `None` for a module.
        file: Option<PathBuf>,
        /// The module's name, when not a file.
        module: Option<String>,
        /// The function's name.
        function: String,
    },
    /// mistral-common's own encoder, with one of the tokenizers it ships or a tokenizer
    /// file (`tekken.json`, `tokenizer.model.v3`, made absolute).
    MistralCommon {
        /// A name of [`MISTRAL_TOKENIZERS`] or a file's absolute path.
        tokenizer: String,
    },
}

/// A plug-in engine: a program and its arguments, under a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Plugin {
    /// Its name in reports: the config file's name for it, else its spec.
    pub name: String,
    /// The spec as written (`cmd:PROGRAM ARGS`, `py:TARGET:FUNCTION`).
    pub spec: String,
    /// What it runs.
    pub(super) runs: Runs,
}

impl Plugin {
    /// The plug-in `spec` (`cmd:PROGRAM [ARGS]`, split at white space, or
    /// `py:FILE.py:FUNCTION`, `py:MODULE:FUNCTION`), named `name` (else by its spec);
    /// relative paths are taken from `base` (chatplate's working folder for the command
    /// line, the config file's folder for the config file).
    ///
    /// # Errors
    /// When `spec` is not `cmd:` followed by a program, or `py:` by a target and function.
    pub fn parse(name: Option<&str>, spec: &str, base: &Path) -> Result<Plugin, String> {
        let runs = if let Some(target) = spec.strip_prefix(PY_PREFIX) {
            encoder(spec, target, base)?
        } else if let Some(command) = spec.strip_prefix(CMD_PREFIX) {
            program(spec, command, base, false)?
        } else if let Some(command) = spec.strip_prefix(LINES_PREFIX) {
            program(spec, command, base, true)?
        } else if let Some(rest) = spec.strip_prefix(MISTRAL_COMMON) {
            mistral_common(rest, base)?
        } else {
            return Err(format!(
                "`{spec}` is not a plug-in engine: write `{CMD_PREFIX}PROGRAM [ARGS]`, \
                 `{LINES_PREFIX}PROGRAM [ARGS]`, `{PY_PREFIX}FILE.py:FUNCTION`, \
                 `{PY_PREFIX}MODULE:FUNCTION` or `{MISTRAL_COMMON}:TOKENIZER`"
            ));
        };
        Ok(Plugin {
            name: name.unwrap_or(spec).to_string(),
            spec: spec.to_string(),
            runs,
        })
    }
}

impl Plugin {
    /// The spec with its paths made absolute, which reads back the same from any folder
    /// (how a plug-in travels to `check`'s children).
    pub fn resolved_spec(&self) -> String {
        match &self.runs {
            Runs::Command {
                program,
                args,
                lines,
            } => {
                let mut words = vec![program.to_string_lossy().into_owned()];
                words.extend(args.iter().cloned());
                let prefix = if *lines { LINES_PREFIX } else { CMD_PREFIX };
                format!("{prefix}{}", words.join(" "))
            }
            Runs::MistralCommon { tokenizer } => format!("{MISTRAL_COMMON}:{tokenizer}"),
            Runs::Encoder {
                file,
                module,
                function,
            } => {
                let target = file.as_ref().map_or_else(
                    || module.clone().unwrap_or_default(),
                    |file| file.to_string_lossy().into_owned(),
                );
                format!("{PY_PREFIX}{target}:{function}")
            }
        }
    }
}

/// `py:TARGET:FUNCTION`: a `.py` file (made absolute from `base`) or a module name.
fn encoder(spec: &str, target: &str, base: &Path) -> Result<Runs, String> {
    let Some((target, function)) = target.rsplit_once(':') else {
        return Err(format!(
            "`{spec}` names no function: write `{PY_PREFIX}FILE.py:FUNCTION`"
        ));
    };
    let is_name = |text: &str| {
        !text.is_empty()
            && text.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
    };
    if !is_name(function) || function.contains('.') {
        return Err(format!(
            "`{spec}`: `{function}` is not a Python function's name"
        ));
    }
    let function = function.to_string();
    if Path::new(target).extension().is_some_and(|ext| ext == "py") {
        let file =
            std::path::absolute(base.join(target)).map_err(|err| format!("{target}: {err}"))?;
        return Ok(Runs::Encoder {
            file: Some(file),
            module: None,
            function,
        });
    }
    if !is_name(target) {
        return Err(format!(
            "`{spec}`: `{target}` is neither a `.py` file nor a module's name"
        ));
    }
    Ok(Runs::Encoder {
        file: None,
        module: Some(target.to_string()),
        function,
    })
}

/// `mistral-common:TOKENIZER`: a tokenizer it ships, or a tokenizer file.
fn mistral_common(rest: &str, base: &Path) -> Result<Runs, String> {
    let names = MISTRAL_TOKENIZERS.join(", ");
    let Some(tokenizer) = rest.strip_prefix(':').filter(|name| !name.is_empty()) else {
        return Err(format!(
            "{MISTRAL_COMMON} needs its tokenizer: `{MISTRAL_COMMON}:NAME` (one it ships: \
             {names}) or `{MISTRAL_COMMON}:FILE` (a model's tekken.json or tokenizer.model.v*)"
        ));
    };
    if MISTRAL_TOKENIZERS.contains(&tokenizer) {
        return Ok(Runs::MistralCommon {
            tokenizer: tokenizer.to_string(),
        });
    }
    let file = std::path::absolute(base.join(tokenizer))
        .map_err(|err| format!("{MISTRAL_COMMON}:{tokenizer}: {err}"))?;
    Ok(Runs::MistralCommon {
        tokenizer: file.to_string_lossy().into_owned(),
    })
}

/// `cmd:PROGRAM [ARGS]` (or `lines:`, persistent).
fn program(spec: &str, command: &str, base: &Path, lines: bool) -> Result<Runs, String> {
    {
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            return Err(format!("`{spec}` names no program after `{CMD_PREFIX}`"));
        };
        let program = Path::new(program);
        let program = if program.components().count() > 1 && program.is_relative() {
            std::path::absolute(base.join(program)).map_err(|err| format!("{spec}: {err}"))?
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
        Ok(Runs::Command {
            program,
            args,
            lines,
        })
    }
}

impl Plugin {
    /// Whether its process is kept for a whole report (and asked a request a line):
    /// `lines:` programs, and the scripts chatplate carries (`py:`, `mistral-common`).
    pub(super) fn persistent(&self) -> bool {
        !matches!(self.runs, Runs::Command { lines: false, .. })
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
        let Runs::Command { program, args, .. } = plugin.runs else {
            panic!("a command")
        };
        assert_eq!(program, PathBuf::from("python3"));
        assert!(Path::new(&args[0]).is_absolute(), "{args:?}");
        assert_eq!(args[1], "--fast");
        let err = Plugin::parse(None, "cmd: ", dir.path()).unwrap_err();
        assert!(err.contains("names no program"), "{err}");
        assert!(Plugin::parse(None, "python3", dir.path()).is_err());
    }

    #[test]
    fn a_py_spec_gives_a_file_or_a_module_and_a_function() {
        let base = Path::new("/base");
        let plugin = Plugin::parse(None, "py:enc/encoding.py:encode_messages", base).unwrap();
        assert_eq!(
            plugin.runs,
            Runs::Encoder {
                file: Some(PathBuf::from("/base/enc/encoding.py")),
                module: None,
                function: "encode_messages".into(),
            }
        );
        let plugin = Plugin::parse(None, "py:vendor.encoding:encode", base).unwrap();
        assert!(
            matches!(plugin.runs, Runs::Encoder { module: Some(m), .. } if m == "vendor.encoding")
        );
        for bad in [
            "py:encoding.py",
            "py:encoding.py:",
            "py:a b:f",
            "py:x.py:a.b",
        ] {
            assert!(Plugin::parse(None, bad, base).is_err(), "{bad}");
        }
    }
}
