//! `chatplate bench`: compile and render timings for fixtures.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};

use super::render::fixture_input;
use crate::render::{CompiledTemplate, Limits};

/// `chatplate bench`: compile time, median render time and fuel of each fixture.
pub(super) fn run(fixtures: &[PathBuf], iterations: usize) -> Result<i32> {
    println!(
        "{:<40} {:>8} {:>12} {:>12}",
        "fixture", "messages", "compile", "render p50"
    );
    for path in fixtures {
        let (source, conversation) = fixture_input(path, None)?;
        let started = Instant::now();
        let compiled = CompiledTemplate::compile(&source, Limits::default())
            .map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
        let compile_time = started.elapsed();
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let started = Instant::now();
            let result = compiled.render(&conversation);
            samples.push(started.elapsed());
            if let Err(err) = result {
                bail!("{}: {err}", path.display());
            }
        }
        samples.sort();
        println!(
            "{:<40} {:>8} {:>12.3?} {:>12.3?} {:>10}",
            path.display(),
            conversation.messages.len(),
            compile_time,
            samples[samples.len() / 2],
            compiled.last_fuel_used()
        );
    }
    Ok(0)
}
