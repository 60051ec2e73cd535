//! The command line: a thin layer that parses arguments and calls the engine. Each
//! command lives in a file of its own; this one holds the argument types and dispatch.

mod bench;
mod check;
mod limits;
mod output;
mod render;
mod worker;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::{catalog, corpus};

pub use output::is_broken_pipe;
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
    /// A folder sessions' template paths may also lead into (repeatable); by default the
    /// session's folder, the working directory and the --templates folders.
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// Render bounds for the app.
    #[command(flatten)]
    limits: limits::LimitArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rendered prompt, byte for byte (nothing added).
    Render(RenderArgs),
    /// Re-render fixtures and compare with their `expected`; ends with "N passed, N failed".
    Check(check::CheckArgs),
    /// Time template compilation and the median render of each fixture.
    Bench(bench::BenchArgs),
    /// Convert a conformance corpus (MANIFEST.json + templates + scenarios) into fixtures.
    ImportCorpus {
        /// The corpus set directory, e.g. ../shared/conformance/dev.
        corpus: PathBuf,
        /// Where to write `<template>/<scenario>.json`.
        out: PathBuf,
    },
    /// List the bundled templates.
    Templates,
    /// Internal: a `check` child process (see `chatplate::check::isolate`).
    #[command(name = "__check-worker", hide = true)]
    CheckWorker,
}

/// Runs the parsed command line; the exit code is the returned value.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        None => interactive(cli.file, cli.template_dirs, cli.template_roots, &cli.limits),
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::CheckWorker) => worker::run(),
        Some(Command::ImportCorpus { corpus, out }) => {
            let written = corpus::import(&corpus, &out)?;
            println!("wrote {} fixtures to {}", written.len(), out.display());
            Ok(0)
        }
        Some(Command::Templates) => {
            let names: Vec<String> = catalog::bundled().into_iter().map(|t| t.name).collect();
            output::print_lines(&names)?;
            Ok(0)
        }
    }
}

#[cfg(feature = "tui")]
fn interactive(
    file: Option<PathBuf>,
    template_dirs: Vec<PathBuf>,
    template_roots: Vec<PathBuf>,
    limits: &limits::LimitArgs,
) -> Result<i32> {
    crate::tui::preview::set_app_limits(limits.apply(crate::tui::preview::app_default_limits()));
    crate::tui::startup::allow_template_roots(template_roots);
    crate::tui::run(crate::tui::TuiOptions {
        file,
        template_dirs,
    })?;
    Ok(0)
}

#[cfg(not(feature = "tui"))]
fn interactive(
    _file: Option<PathBuf>,
    _template_dirs: Vec<PathBuf>,
    _template_roots: Vec<PathBuf>,
    _limits: &limits::LimitArgs,
) -> Result<i32> {
    anyhow::bail!(
        "this chatplate was built without the terminal app (feature \"tui\"); use a subcommand"
    )
}
