//! `chatplate bench`: compile and render timings for fixtures.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;

use super::limits::LimitArgs;
use super::output;
use super::render::fixture_input;
use super::session_input::shown;
use super::stdin;
use chatplate_core::check::collect_fixtures;
use chatplate_render::{CompiledTemplate, RenderControl};

#[derive(Debug, Args)]
pub(super) struct BenchArgs {
    /// Fixture files or folders of them, searched as `check` searches them (`-`: one
    /// fixture from standard input).
    #[arg(required = true)]
    fixtures: Vec<PathBuf>,
    /// Renders per fixture (1 to 1000000).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    iterations: u32,
    #[command(flatten)]
    limits: LimitArgs,
}

/// `chatplate bench`: compile time, first and median render time and fuel of each
/// fixture.
pub(super) fn run(args: &BenchArgs) -> Result<i32> {
    let iterations = args.iterations as usize;
    stdin::at_most_one_in("FIXTURE", &args.fixtures)?;
    output::print(&format!(
        "{:<40} {:>8} {:>12} {:>12} {:>12} {:>10}\n",
        "fixture", "messages", "compile", "first render", "render p50", "fuel"
    ))?;
    for (path, in_folder) in expand(&args.fixtures)? {
        let path = &path;
        // Timings only (no template text is printed): the template may be anywhere,
        // like the bench fixture's, which points into the conformance corpus.
        let (source, conversation) = match fixture_input(path, None, None) {
            Ok(input) => input,
            // A folder may hold other JSON files, as `check` finds.
            Err(err) if in_folder => {
                output::note(&format!("skipped {}: {err}", path.display()));
                continue;
            }
            Err(err) => return Err(err),
        };
        let name = shown(path);
        let started = Instant::now();
        let limits = args.limits.limits();
        let compiled = CompiledTemplate::compile(&source, limits)
            .map_err(|err| anyhow::anyhow!("{}: {err}", name.display()))?;
        let compile_time = started.elapsed();
        // Each render bounded as `render` bounds it (the deadline grows with the input).
        let control = RenderControl::default();
        // Shared: the first render's thread builds the template values, and the renders
        // after it reuse them (docs/speed.md), as the app reuses every message's values
        // but the edited one's. The first render's time is printed apart.
        let conversation = Arc::new(conversation);
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let started = Instant::now();
            let result = compiled.render_controlled(Arc::clone(&conversation), &control);
            samples.push(started.elapsed());
            if let Err(err) = result {
                bail!("{}: {err}", name.display());
            }
        }
        // The first render converts the conversation; the rest reuse its values.
        let first = samples[0];
        samples.sort();
        output::print_visible(&format!(
            "{:<40} {:>8} {:>12.3?} {:>12.3?} {:>12.3?} {:>10}\n",
            name.display(),
            conversation.messages.len(),
            compile_time,
            first,
            samples[samples.len() / 2],
            compiled.last_fuel_used()
        ))?;
    }
    Ok(0)
}

/// The fixtures `paths` name: a file (or `-`) as given, a folder's fixtures as `check`
/// finds them (`*.json` below it, sorted, without dot-files and recovery files), each
/// with whether it came from a folder. A folder without any is an error.
fn expand(paths: &[PathBuf]) -> Result<Vec<(PathBuf, bool)>> {
    let mut all = Vec::new();
    for path in paths {
        if !path.is_dir() {
            all.push((path.clone(), false));
            continue;
        }
        let found = collect_fixtures(std::slice::from_ref(path));
        for note in &found.notes {
            output::note(note);
        }
        if found.fixtures.is_empty() {
            bail!("{}: no fixtures (*.json) in this folder", path.display());
        }
        all.extend(found.fixtures.into_iter().map(|f| (f.path, true)));
    }
    Ok(all)
}
