//! The command line: a thin layer that parses arguments and calls the engine. Each
//! command lives in a file of its own; this one holds the argument types and dispatch.

mod bench;
mod check;
mod render;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::{catalog, corpus};

use render::RenderArgs;

/// chatplate: see the exact prompt a chat template makes of a conversation.
#[derive(Debug, Parser)]
#[command(name = "chatplate", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A session (.json fixture), template (.jinja) or tokenizer_config.json to open.
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker (repeatable).
    #[arg(long = "templates", value_name = "DIR")]
    pub template_dirs: Vec<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rendered prompt, byte for byte (nothing added).
    Render(RenderArgs),
    /// Re-render fixtures and compare with their `expected`; ends with "N passed, N failed".
    Check {
        /// Fixture files or directories (searched recursively).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Rewrite `expected` from the current render instead of comparing.
        #[arg(long)]
        bless: bool,
    },
    /// Time template compilation and the median render of each fixture.
    Bench {
        /// Fixture files.
        #[arg(required = true)]
        fixtures: Vec<PathBuf>,
        /// Renders per fixture.
        #[arg(long, default_value_t = 200)]
        iterations: usize,
    },
    /// Convert a conformance corpus (MANIFEST.json + templates + scenarios) into fixtures.
    ImportCorpus {
        /// The corpus set directory, e.g. ../shared/conformance/dev.
        corpus: PathBuf,
        /// Where to write `<template>/<scenario>.json`.
        out: PathBuf,
    },
    /// List the bundled templates.
    Templates,
}

/// Runs the parsed command line; the exit code is the returned value.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        None => interactive(cli.file, cli.template_dirs),
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Check { paths, bless }) => Ok(check::run(&paths, bless)),
        Some(Command::Bench {
            fixtures,
            iterations,
        }) => bench::run(&fixtures, iterations.max(1)),
        Some(Command::ImportCorpus { corpus, out }) => {
            let written = corpus::import(&corpus, &out)?;
            println!("wrote {} fixtures to {}", written.len(), out.display());
            Ok(0)
        }
        Some(Command::Templates) => {
            for template in catalog::bundled() {
                println!("{}", template.name);
            }
            Ok(0)
        }
    }
}

#[cfg(feature = "tui")]
fn interactive(file: Option<PathBuf>, template_dirs: Vec<PathBuf>) -> Result<i32> {
    use std::io::IsTerminal;
    // Checked before anything touches the terminal: raw mode on a pipe fails halfway.
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "the app needs a terminal (stdin and stdout must be one); in scripts use a \
             command such as `chatplate render` or `chatplate check` (see --help)"
        );
    }
    crate::tui::run(crate::tui::TuiOptions {
        file,
        template_dirs,
    })
}

#[cfg(not(feature = "tui"))]
fn interactive(_file: Option<PathBuf>, _template_dirs: Vec<PathBuf>) -> Result<i32> {
    anyhow::bail!(
        "this chatplate was built without the terminal app (feature \"tui\"); use a subcommand"
    )
}
