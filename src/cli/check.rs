//! `chatplate check`: fixtures as golden tests, reported as text (with a summary line),
//! JSON or JUnit XML.
//!
//! Fixtures are checked in child processes of this binary (see
//! `chatplate_core::check::isolate`), so a fixture that crashes the checker is only that
//! fixture's failure, and the summary always counts every fixture found.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use super::check_watch;
use super::compare::parse_engine;
use super::fetching::ensure_cached;
use super::limits::LimitArgs;
use super::output;
use super::session_input::allowed_roots;
use super::stdin;
use chatplate_core::check::{
    self, ci_report, isolate, CaseResult, CheckOptions, Discovery, EngineCheck, Fixture, Outcome,
};
use chatplate_core::compare::Engine;
use chatplate_core::files::{self, MAX_SESSION_BYTES};
use chatplate_core::session::{Session, TemplateRef};
use chatplate_render::visible;

#[derive(Debug, Args)]
pub(super) struct CheckArgs {
    /// Fixture files or directories (searched recursively); `-` reads one fixture from
    /// standard input. Without any, `sessions/`.
    paths: Vec<PathBuf>,
    /// Check again whenever a file under the paths (or a `--template-root`) changes,
    /// until Ctrl+C.
    #[arg(long, conflicts_with = "bless")]
    pub(super) watch: bool,
    /// Rewrite `expected` from the current render instead of comparing.
    #[arg(long)]
    bless: bool,
    /// A folder fixtures' template paths may also lead into (repeatable), besides the
    /// config file's "template_roots"; otherwise they must stay inside the folder being
    /// checked (or a named fixture's folder).
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// Check in this process instead of child processes (faster to start, but a fixture
    /// that crashes chatplate ends the run).
    #[arg(long, hide = true)]
    in_process: bool,
    /// How to report: human-readable text, a JSON document, or JUnit XML.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Colour the diffs: `auto` (a terminal, and `NO_COLOR` unset), `always` or `never`.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    color: ColorChoice,
    /// Also render each passing fixture with these engines (comma-separated, as
    /// `compare` names them: minijinja, python, hf-jinja) and fail it when one disagrees.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = parse_engine)]
    engines: Vec<Engine>,
    /// The Python interpreter with transformers for the `python` engine (default:
    /// $CHATPLATE_PYTHON).
    #[arg(long, value_name = "PATH", requires = "engines")]
    python: Option<PathBuf>,
    /// Seconds an external engine (python, hf-jinja) may run on one fixture.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30,
        requires = "engines"
    )]
    engine_timeout: u64,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Failures in detail, then "N passed, N failed".
    Text,
    /// `{"passed", "failed", "skipped", "cases": [...]}`.
    Json,
    /// JUnit XML, for CI test dashboards.
    Junit,
}

/// When `check` colours its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    pub(super) fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// `chatplate check`: every fixture under `paths`; exit 1 when any fails, 2 when there
/// is nothing to check.
pub(super) fn run(args: &CheckArgs) -> Result<i32> {
    if args.watch {
        return check_watch::watch(args);
    }
    run_once(args)
}

impl CheckArgs {
    /// The paths to check: those given, or [`DEFAULT_DIR`].
    pub(super) fn paths(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from(DEFAULT_DIR)]
        } else {
            self.paths.clone()
        }
    }

    /// The folders given with `--template-root` (watched too).
    pub(super) fn template_roots(&self) -> &[PathBuf] {
        &self.template_roots
    }
}

/// What `chatplate check` with no path checks: the project's sessions, where the app
/// saves them.
pub(super) const DEFAULT_DIR: &str = "sessions";

/// One run over every fixture (see [`run`]).
pub(super) fn run_once(args: &CheckArgs) -> Result<i32> {
    if args.paths.is_empty() && !std::path::Path::new(DEFAULT_DIR).is_dir() {
        output::note(&format!(
            "chatplate: no fixtures found: no PATH given and no {DEFAULT_DIR}/ folder here \
             (chatplate check PATH... names fixture files or folders)"
        ));
        return Ok(2);
    }
    let found = discover(args)?;
    for note in &found.notes {
        output::note(&format!("chatplate: {}", visible::message(note)));
    }
    if found.fixtures.is_empty() {
        output::note(&format!(
            "chatplate: no fixtures found in {}",
            shown(&args.paths())
        ));
        return Ok(2);
    }
    fetch_models(&found.fixtures);
    let options = CheckOptions {
        bless: args.bless,
        limits: args.limits.limits(),
        template_roots: allowed_roots(&args.template_roots),
        engines: engine_check(args),
    };
    let results = match (args.in_process, std::env::current_exe()) {
        (false, Ok(exe)) => {
            let worker = move || {
                let mut command = Command::new(&exe);
                command.arg(isolate::WORKER_ARG);
                // The children never fetch from the Hub: the token stays with this process.
                command
                    .env_remove("HF_TOKEN")
                    .env_remove("HUGGING_FACE_HUB_TOKEN");
                command
            };
            isolate::check_all_isolated(&found.fixtures, &options, &worker)
        }
        _ => check::check_all(&found.fixtures, &options),
    };
    let failed = results.iter().any(|r| r.outcome.failed());
    match args.format {
        Format::Text => print_text(args, &results),
        Format::Json => print_document(&ci_report::json(&results), failed),
        Format::Junit => print_document(&ci_report::junit(&results, "chatplate check"), failed),
    }
}

/// `--engines` and how they run.
fn engine_check(args: &CheckArgs) -> EngineCheck {
    let mut check = EngineCheck::new(args.engines.clone());
    check.python = args.python.clone();
    check.timeout = Some(Duration::from_secs(args.engine_timeout));
    check
}

/// The fixtures under `args.paths`, in order; `-` is one fixture from standard input,
/// its template paths starting at the working directory.
fn discover(args: &CheckArgs) -> Result<Discovery> {
    let paths = args.paths();
    stdin::at_most_one_in("PATH", &paths)?;
    if args.bless && paths.iter().any(|p| stdin::is_stdin(p)) {
        bail!("--bless rewrites fixture files; a fixture from standard input (`-`) has none");
    }
    let mut found = Discovery::default();
    for path in &paths {
        if stdin::is_stdin(path) {
            let text = stdin::read_text(MAX_SESSION_BYTES)?;
            found
                .fixtures
                .push(Fixture::from_text(stdin::NAME, text, "."));
            continue;
        }
        let more = check::collect_fixtures(std::slice::from_ref(path));
        found.fixtures.extend(more.fixtures);
        found.notes.extend(more.notes);
    }
    Ok(found)
}

/// Prints a whole JSON or XML document; exit 1 when any fixture failed.
fn print_document(text: &str, failed: bool) -> Result<i32> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(i32::from(failed))
}

/// The text report: failures and skipped files in detail, notes, then the summary.
fn print_text(args: &CheckArgs, results: &[CaseResult]) -> Result<i32> {
    let skipped = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
        .count();
    let failed: Vec<_> = results.iter().filter(|r| r.outcome.failed()).collect();
    let passed = results.len() - failed.len() - skipped;
    let mut lines: Vec<String> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
        .chain(failed.iter().copied())
        .map(|result| check::report_with(result, args.color.enabled()))
        .collect();
    if skipped > 0 && passed + failed.len() == 0 {
        lines.push(format!(
            "no fixtures found in {} ({skipped} JSON files that are not fixtures)",
            shown(&args.paths())
        ));
        output::print_lines(&lines)?;
        return Ok(2);
    }
    for result in results.iter().filter(|r| r.outcome.passed()) {
        for note in &result.notes {
            lines.push(format!(
                "note {}: {}",
                visible::for_terminal(&result.path.display().to_string()),
                visible::message(note)
            ));
        }
    }
    if args.bless {
        lines.push(format!("blessed {passed} fixtures"));
    }
    let mut summary = format!("{passed} passed, {} failed", failed.len());
    if skipped > 0 {
        summary.push_str(&format!(", {skipped} skipped (not fixtures)"));
    }
    lines.push(summary);
    output::print_lines(&lines)?;
    Ok(i32::from(!failed.is_empty()))
}

pub(super) fn shown(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    visible::message(&names.join(", "))
}

/// The model a fixture's template names, if any. This runs in this process for every
/// fixture before any child starts, so a fixture whose text never mentions `"model"`
/// (nearly all of them) is not parsed: parsing every fixture here was a tenth of a
/// corpus check. (A key spelled with JSON escapes is missed here; that fixture's model
/// is then fetched, or reported missing, when the fixture itself is checked.)
fn named_model(fixture: &Fixture) -> Option<(String, Option<String>)> {
    let bytes: Cow<[u8]> = match &fixture.text {
        Some(text) => Cow::Borrowed(text.as_bytes()),
        None => Cow::Owned(files::read_bytes(&fixture.path, MAX_SESSION_BYTES).ok()?),
    };
    if !bytes.windows(7).any(|window| window == b"\"model\"") {
        return None;
    }
    let text = std::str::from_utf8(&bytes).ok()?;
    match Session::parse(text, &fixture.path).ok()?.template {
        TemplateRef::Model { id, revision, .. } => Some((id, revision)),
        _ => None,
    }
}

/// Fetches, once each, the models that fixtures name and the cache lacks (when online);
/// a failure shows up again, per fixture, when it is checked.
fn fetch_models(fixtures: &[Fixture]) {
    let models: BTreeSet<(String, Option<String>)> =
        fixtures.iter().filter_map(named_model).collect();
    for (id, revision) in models {
        let reference = TemplateRef::Model {
            id,
            revision,
            snapshot: None,
            name: None,
        };
        if let Err(err) = ensure_cached(&reference) {
            output::note(&format!(
                "chatplate: {}",
                visible::message(&format!("{err:#}"))
            ));
        }
    }
}
