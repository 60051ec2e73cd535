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
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chatplate_core::corpus::{self, CorpusTemplate};
use chatplate_core::lint::{lint_with, LintOptions, Surroundings};
use chatplate_core::{Origin, TemplateSource};
use criterion::{criterion_group, criterion_main, Criterion};

/// The allocator the chatplate binary installs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn corpus() -> Vec<(TemplateSource, LintOptions)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev/templates");
    let Ok(templates) = corpus::corpus_templates(&dir) else {
        eprintln!("skipping lint/*: ../shared/conformance is not beside the repo");
        return Vec::new();
    };
    templates.into_iter().map(template).collect()
}

/// A corpus template and the options the corpus renders it with.
fn template(corpus: CorpusTemplate) -> (TemplateSource, LintOptions) {
    let mut template = TemplateSource::new(corpus.name, corpus.source, Origin::File(corpus.path));
    template.bos_token = corpus.bos_token;
    template.eos_token = corpus.eos_token;
    let mut options = LintOptions::default();
    options.variables = corpus.variables;
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
