//! The command line: a thin layer that parses arguments and calls the engine. Each
//! command lives in a file of its own; this one holds the argument types and dispatch.
//! Commands print through [`output`] only (see there why).

#![warn(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod check;
mod check_watch;
mod compare;
mod compare_report;
mod compare_sides;
mod completions;
mod diagnostic;
mod export;
mod fetching;
mod import;
mod inspect;
mod inspect_table;
mod inspect_text;
mod inspect_training;
mod inspect_turn_cost;
mod knobs;
mod limits;
mod lint;
mod lint_text;
mod output;
mod parse;
mod parse_stream;
mod remedy;
mod render;
#[cfg(feature = "tokens")]
mod roundtrip;
mod session_input;
mod stdin;
mod templates;
#[cfg(feature = "tokens")]
mod tokens;
#[cfg(feature = "tokens")]
mod tokens_mask;
mod worker;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use chatplate_core::corpus;

use export::ExportArgs;
use import::ImportArgs;
use inspect::InspectArgs;
use render::RenderArgs;
use templates::TemplatesArgs;

pub use output::is_broken_pipe;

/// chatplate: see the exact prompt a chat template makes of a conversation.
#[derive(Debug, Parser)]
#[command(name = "chatplate", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to open: a session (.json fixture), an OpenAI request body, a template
    /// (.jinja), a model folder or any file in it, a .gguf, a model id ORG/NAME[@REVISION]
    /// (local HF cache, else the Hub); `#NAME` picks a named template.
    #[arg(value_name = "TARGET")]
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker (repeatable); model folders inside
    /// are listed as models.
    #[arg(long = "templates", value_name = "DIR")]
    pub template_dirs: Vec<PathBuf>,
    /// Use this named template of the opened model (`tool_use`, ...) instead of letting
    /// the tools choose.
    #[arg(long, value_name = "NAME")]
    pub template_name: Option<String>,
    /// A folder sessions' template paths may also lead into (repeatable), besides the
    /// session's folder and the config file's "template_roots", as for `check`.
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// Start an empty, untitled session on the template TARGET names (the default
    /// template without one), to write a fixture from scratch.
    #[arg(long)]
    new: bool,
    /// Render bounds for the app.
    #[command(flatten)]
    limits: limits::LimitArgs,
    /// Fetch the Hub models that files name (fixtures, sessions, request bodies) with
    /// your Hugging Face token too, as those named on the command line are; without it
    /// they are fetched without one (also the config file's "hub_token_for_fixtures").
    #[arg(long, global = true)]
    hub_token_for_fixtures: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rendered prompt, byte for byte (nothing added).
    Render(RenderArgs),
    /// Re-render fixtures and compare with their `expected`; ends with "N passed, N failed".
    Check(check::CheckArgs),
    /// Render a session with transformers and other engines (minijinja, python,
    /// hf-jinja, a llama-server) and show where their prompts differ; exit 1 when any differs.
    Compare(compare::CompareArgs),
    /// Time template compilation and the median render of each fixture.
    Bench(bench::BenchArgs),
    /// Explain a template by probing it: capabilities (minja's names), variables, and
    /// for a fixture the values it ignores and prefix stability.
    Inspect(InspectArgs),
    /// List a template's knobs (the variables it reads) with what flipping each one
    /// changes on a sample conversation or a fixture's.
    Knobs(knobs::KnobsArgs),
    /// Judge templates for CI: crashes, double BOS, dropped system messages and
    /// reasoning, prefix stability, markers, portability, sandbox escapes...; exit 1 on
    /// findings at or above --fail-on, 2 when something could not be linted.
    Lint(lint::LintArgs),
    /// Convert a conformance corpus (MANIFEST.json + templates + scenarios) into fixtures.
    ImportCorpus {
        /// The corpus set directory, e.g. ../shared/conformance/dev.
        corpus: PathBuf,
        /// Where to write `<template>/<scenario>.json`.
        out: PathBuf,
    },
    /// List the bundled templates, a source's templates, or cached models with one.
    Templates(TemplatesArgs),
    /// Save an OpenAI Chat Completions request body as a session fixture.
    Import(ImportArgs),
    /// Write a fixture back as a request body (`--openai`), for replaying with curl.
    Export(ExportArgs),
    /// Tokenize the rendered prompt with the model's tokenizer: ids, token strings, byte
    /// offsets; warns when user, tool or document text becomes a special token.
    #[cfg(feature = "tokens")]
    Tokens(tokens::TokensArgs),
    /// Parse a model's raw output (stdin) back into an assistant message with a
    /// response_template, as transformers' parse_response does; prints it as JSON.
    Parse(parse::ParseArgs),
    /// Whether the tokens a model sampled survive: parse the output, render the
    /// conversation with it, tokenize and compare; exit 1 at the first differing token.
    #[cfg(feature = "tokens")]
    Roundtrip(roundtrip::RoundtripArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `chatplate man > chatplate.1`.
    Man,
    /// Internal: a `check` child process (see `chatplate_core::check::isolate`).
    #[command(name = "__check-worker", hide = true)]
    CheckWorker,
}

/// Runs the parsed command line; the exit code is the returned value.
pub fn run(cli: Cli) -> Result<i32> {
    // Before anything renders: the engine's messages name this front end's flags.
    remedy::install();
    // Before anything fetches: whether files' models get the token.
    let (allowed, problem) = crate::hub_token::allowed(cli.hub_token_for_fixtures);
    chatplate_core::catalog::hub::allow_token_for_files(allowed);
    if let Some(problem) = problem {
        output::note(&format!(
            "chatplate: {}",
            chatplate_render::visible::message(&problem)
        ));
    }
    match cli.command {
        None if cli.file.as_deref().is_some_and(stdin::is_stdin) => anyhow::bail!(
            "the app reads its keys from the terminal, so it cannot open standard input \
             (`-`): save it to a file, or use `chatplate render -` / `chatplate check -`"
        ),
        None => interactive(Interactive {
            file: cli.file,
            template_dirs: cli.template_dirs,
            template_name: cli.template_name,
            template_roots: cli.template_roots,
            limits: cli.limits,
            new: cli.new,
        }),
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Inspect(args)) => inspect::run(args),
        Some(Command::Lint(args)) => lint::run(args),
        Some(Command::Knobs(args)) => knobs::run(&args),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Compare(args)) => compare::run(args),
        Some(Command::Completions { shell }) => completions::completions(shell),
        Some(Command::Man) => completions::man(),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::CheckWorker) => worker::run(),
        Some(Command::ImportCorpus { corpus, out }) => {
            let written = corpus::import(&corpus, &out)?;
            output::print_visible(&format!(
                "wrote {} fixtures to {}\n",
                written.len(),
                out.display()
            ))?;
            Ok(0)
        }
        Some(Command::Templates(args)) => templates::run(args),
        Some(Command::Import(args)) => import::run(args),
        Some(Command::Export(args)) => export::run(args),
        Some(Command::Parse(args)) => parse::run(args),
        #[cfg(feature = "tokens")]
        Some(Command::Tokens(args)) => tokens::run(args),
        #[cfg(feature = "tokens")]
        Some(Command::Roundtrip(args)) => roundtrip::run(args),
    }
}

/// What the app is started with.
struct Interactive {
    file: Option<PathBuf>,
    template_dirs: Vec<PathBuf>,
    template_name: Option<String>,
    template_roots: Vec<PathBuf>,
    limits: limits::LimitArgs,
    new: bool,
}

#[cfg(feature = "tui")]
fn interactive(args: Interactive) -> Result<i32> {
    use std::io::IsTerminal;
    // Checked before anything touches the terminal: raw mode on a pipe fails halfway.
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "the app needs a terminal (stdin and stdout must be one); in scripts use a \
             command such as `chatplate render` or `chatplate check` (see --help)"
        );
    }
    crate::tui::preview::set_app_limits(
        args.limits.apply(crate::tui::preview::app_default_limits()),
    );
    // A config file that cannot be read is reported by the app's own settings.
    let (roots, _) = crate::template_roots::allowed(&args.template_roots);
    crate::tui::files::startup::allow_template_roots(roots);
    // A bad "lint" section is reported by `chatplate lint`; the app lints by default then.
    crate::tui::panes::templates::lint::set_policy(
        crate::lint_config::policy().unwrap_or_default(),
    );
    let options = crate::tui::TuiOptions {
        file: args.file,
        template_dirs: args.template_dirs,
        template_name: args.template_name,
    };
    match args.new {
        true => crate::tui::run_new(options),
        false => crate::tui::run(options),
    }
}

#[cfg(not(feature = "tui"))]
fn interactive(_args: Interactive) -> Result<i32> {
    anyhow::bail!(
        "this chatplate was built without the terminal app (feature \"tui\"); use a subcommand"
    )
}
