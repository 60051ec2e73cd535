//! Tokenizer speed: the real Llama 3.1 tokenizer on the 1,000-message prompt.
//!
//! * `tokenize/llama-3.1-1000`: the rendered `tests/fixtures/bench/llama-3.1-1000.json`
//!   (105 KB, 19,471 tokens; needs `../shared` for its template).
//! * `tokenize/llama-3.1-1000x12`: that prompt twelve times over (1.27 MB), the size the
//!   issue names.
//! * `load/llama3_1`: reading `tokenizer.json` + config.
//!
//! Needs the real tokenizer (`scripts/fetch_tokenizers.sh`); skipped otherwise.
//! `scripts/bench_tokens.py` runs this and Python `tokenizers` / transformers on the same
//! prompts and prints both medians.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chatplate_core::check::render_session;
use chatplate_core::session::Session;
use chatplate_core::tokens::{ModelTokenizer, TokenizerFiles};
use criterion::{criterion_group, criterion_main, Criterion};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn tokenizer_folder() -> Option<PathBuf> {
    let cache = std::env::var_os("CHATPLATE_TOKENIZERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tokenizers"));
    let folder = cache.join("llama3_1");
    folder.join("tokenizer.json").is_file().then_some(folder)
}

fn bench_prompt() -> Option<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/llama-3.1-1000.json");
    let session = Session::load(&path).ok()?;
    render_session(
        &session,
        path.parent()?,
        &chatplate_core::catalog::TemplateAccess::Anywhere,
        chatplate_render::Limits::default(),
    )
    .ok()
}

fn token_benches(c: &mut Criterion) {
    let (Some(folder), Some(prompt)) = (tokenizer_folder(), bench_prompt()) else {
        eprintln!("skipping tokens benches: needs target/tokenizers/llama3_1 (scripts/fetch_tokenizers.sh) and ../shared/conformance");
        return;
    };
    let files = TokenizerFiles::locate(&folder).expect("llama3_1 files");
    let tokenizer = ModelTokenizer::load(&files).expect("llama3_1 loads");
    let mut group = c.benchmark_group("tokenize");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("llama-3.1-1000", |b| {
        b.iter(|| tokenizer.tokenize(black_box(&prompt)).unwrap())
    });
    let big = prompt.repeat(12);
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("llama-3.1-1000x12", |b| {
        b.iter(|| tokenizer.tokenize(black_box(&big)).unwrap())
    });
    group.finish();
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("llama3_1", |b| {
        b.iter(|| ModelTokenizer::load(black_box(&files)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, token_benches);
criterion_main!(benches);
