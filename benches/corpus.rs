//! Every dev-corpus template rendering scripts/long_conversation.py's conversation at
//! 100, 1,000 and 10,000 messages (`corpus/<template>/<messages>`): the bench group of
//! issue 38. `scripts/bench_speed.py` sets the same renders beside minijinja-py and
//! transformers in CPU time; this bench is for following one template while changing
//! the engine, e.g. `cargo bench --bench corpus -- 'corpus/Reka-Edge/'`.
//! `CHATPLATE_BENCH_SIZES=100,1000` leaves out the 10,000-message renders (seconds
//! each for the quadratic templates). Needs ../shared/conformance (skipped without).

use std::hint::black_box;

use chatplate_render::{CompiledTemplate, Limits};
use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../crates/render/tests/render/corpus_conversation.rs"]
mod corpus_conversation;

/// The allocator the chatplate binary installs: its bookkeeping is part of a render.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn sizes() -> Vec<usize> {
    std::env::var("CHATPLATE_BENCH_SIZES")
        .ok()
        .map(|sizes| {
            sizes
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(|| vec![100, 1000, 10_000])
}

fn corpus(c: &mut Criterion) {
    let Some(dir) = corpus_conversation::corpus_templates() else {
        return;
    };
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    let mut group = c.benchmark_group("corpus");
    group.sample_size(10);
    for path in paths {
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let (Ok(source), Ok(meta)) = (
            std::fs::read_to_string(&path),
            std::fs::read_to_string(path.with_extension("json")),
        ) else {
            continue;
        };
        let Ok(meta) = serde_json::from_str(&meta) else {
            continue;
        };
        let unbounded = Limits::default()
            .with_fuel(u64::MAX / 128)
            .with_deadline(std::time::Duration::from_secs(3600));
        let Ok(template) = CompiledTemplate::compile(&source, unbounded) else {
            continue;
        };
        for count in sizes() {
            let conversation = corpus_conversation::conversation_for(&meta, count);
            // A template that refuses this conversation (it raises) is left out.
            if template.render(&conversation).is_err() {
                continue;
            }
            group.bench_function(format!("{stem}/{count}"), |b| {
                b.iter(|| template.render(black_box(&conversation)));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, corpus);
criterion_main!(benches);
