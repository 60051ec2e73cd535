//! Template compilation: source preparation, the AST-guided rewrites, Jinja2's checks
//! and MiniJinja's compile, for three real templates of the conformance corpus
//! (`../shared/conformance/dev/templates`; skipped with a note when it is absent).

use std::hint::black_box;
use std::path::Path;

use chatplate::render::{CompiledTemplate, Limits};
use criterion::{criterion_group, criterion_main, Criterion};

/// The corpus templates measured, by file name.
const TEMPLATES: [(&str, &str); 3] = [
    ("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct.jinja"),
    ("qwen3", "Qwen-Qwen3-0.6B.jinja"),
    ("gemma-4", "google-gemma-4-31B-it.jinja"),
];

fn compile_benches(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev/templates");
    for (name, file) in TEMPLATES {
        let Ok(source) = std::fs::read_to_string(dir.join(file)) else {
            eprintln!(
                "skipping compile/{name}: {} is not there",
                dir.join(file).display()
            );
            continue;
        };
        c.bench_function(&format!("compile/{name}"), |b| {
            b.iter(|| CompiledTemplate::compile(black_box(&source), Limits::default()).unwrap())
        });
    }
}

criterion_group!(benches, compile_benches);
criterion_main!(benches);
