//! Opening a multi-gigabyte GGUF: an 8 GiB sparse file whose metadata holds a
//! 262,144-token vocabulary (about 6 MB), read header-only. Its budget is in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/gguf_support/mod.rs"]
mod gguf_support;

fn open_large_gguf(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("large.gguf");
    gguf_support::write_large(&path, 262_144, 8 << 30);
    c.bench_function("gguf/open 8 GiB, 262k tokens", |b| {
        b.iter(|| chatplate_core::catalog::load_set(&path).expect("reads"))
    });
}

criterion_group!(benches, open_large_gguf);
criterion_main!(benches);
