//! Lint speed on the dev corpus (needs `../shared`), without external engines.
//!
//! * `lint/<template>`: every rule on one of the 57 dev corpus templates, as
//!   `chatplate lint` runs them (the capability probes, the claimed conversations, the
//!   stability, marker, generation-prompt and mask checks, the portability table).
//! * `lint_corpus/57-templates-2-threads`: the whole corpus on two threads, as
//!   `chatplate lint` spreads templates over the cores.
//!
//! Before Criterion's runs, a summary line gives the median over the templates of each
//! template's median wall time (five runs each), the mean process CPU time per template
//! over all those runs (the kernel counts CPU time in 10 ms ticks, too coarse for one
//! template), and one whole-corpus run: the figures the goal in BENCHMARKS.md is about.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chatplate_core::lint::{lint_with, LintOptions, Surroundings};
use chatplate_core::{Origin, TemplateSource};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::Value as Json;

/// The allocator the chatplate binary installs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn corpus() -> Vec<(TemplateSource, LintOptions)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev/templates");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping lint/*: ../shared/conformance is not beside the repo");
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    paths.into_iter().map(|path| template(&path)).collect()
}

fn template(path: &Path) -> (TemplateSource, LintOptions) {
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let source = std::fs::read_to_string(path).unwrap();
    let meta: Json =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
            .unwrap();
    let mut template = TemplateSource::new(stem, source, Origin::File(path.to_path_buf()));
    template.bos_token = meta["bos_token"].as_str().map(String::from);
    template.eos_token = meta["eos_token"].as_str().map(String::from);
    let mut options = LintOptions::default();
    if let Some(name) = meta["tools_json_kwarg"].as_str() {
        options.variables.insert(name.into(), Json::from("[]"));
    }
    if let Some(extra) = meta["extra"].as_object() {
        options.variables.extend(extra.clone());
    }
    (template, options)
}

fn lint(template: &TemplateSource, options: &LintOptions) {
    let report = lint_with(
        template,
        &Surroundings::default(),
        options,
        &Default::default(),
    );
    black_box(report.expect("not cancelled"));
}

/// Every template on `threads` threads, as `chatplate lint` does.
fn lint_all(cases: &[(TemplateSource, LintOptions)], threads: usize) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some((template, options)) =
                    cases.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    lint(template, options);
                }
            });
        }
    });
}

/// The process's CPU time (user + system) so far, from /proc (Linux); zero elsewhere.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // The kernel reports clock ticks of 1/100 s on every Linux this runs on.
    Duration::from_millis(ticks * 10)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The summary line: median wall time and mean CPU time per template, and the corpus on
/// two threads.
fn summary(cases: &[(TemplateSource, LintOptions)]) {
    const RUNS: usize = 5;
    let mut walls = Vec::new();
    let cpu_start = cpu_time();
    for (template, options) in cases {
        let mut wall = Vec::new();
        for _ in 0..RUNS {
            let start = Instant::now();
            lint(template, options);
            wall.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        walls.push(median(&mut wall));
    }
    let mean_cpu = (cpu_time() - cpu_start).as_secs_f64() * 1000.0 / (RUNS * cases.len()) as f64;
    let (start, cpu_start) = (Instant::now(), cpu_time());
    lint_all(cases, 2);
    let corpus_wall = start.elapsed().as_secs_f64() * 1000.0;
    let corpus_cpu = (cpu_time() - cpu_start).as_secs_f64() * 1000.0;
    eprintln!(
        "lint summary: {} templates; median per template {:.2} ms wall, mean {:.2} ms CPU; \
         whole corpus on 2 threads {:.0} ms wall, {:.0} ms CPU",
        cases.len(),
        median(&mut walls),
        mean_cpu,
        corpus_wall,
        corpus_cpu
    );
}

fn lint_benches(c: &mut Criterion) {
    let cases = corpus();
    if cases.is_empty() {
        return;
    }
    summary(&cases);
    let mut group = c.benchmark_group("lint");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    for (template, options) in &cases {
        group.bench_function(template.name.as_str(), |b| {
            b.iter(|| lint(template, options))
        });
    }
    group.finish();
    let mut corpus = c.benchmark_group("lint_corpus");
    corpus
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    corpus.bench_function("57-templates-2-threads", |b| b.iter(|| lint_all(&cases, 2)));
    corpus.finish();
}

criterion_group!(benches, lint_benches);
criterion_main!(benches);
