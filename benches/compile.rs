//! Template compilation: source preparation, the AST-guided rewrites, Jinja2's checks
//! and MiniJinja's compile, for three real templates of the conformance corpus
//! (`../shared/conformance/dev/templates`; skipped with a note when it is absent).
//!
//! `rewrite_scaling/{1,2,4,8}x` parses and rewrites (no compile: MiniJinja's own compiler
//! is quadratic in an operator chain's length) a synthetic template that grows 1x, 2x,
//! 4x and 8x (more statements and a longer operator chain, with every kind of
//! expression the source rewrite touches): a linear pass takes twice the time for twice
//! the template (the pass used to rescan each subtree per node).

use std::hint::black_box;
use std::path::Path;

use chatplate_render::{rewritten_source, CompiledTemplate, Limits};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

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

/// Operands of the chain, in turn: plain lookups, a filter, Python `%` formatting, a dict
/// method lookup, a parenthesised sum, a conditional, a test.
const TERMS: [&str; 7] = [
    "m.content",
    "(m.role | upper)",
    "'<%s>' % m.role",
    "m.items",
    "((loop.index + 1) * 2)",
    "(m.name if m.name is defined else 'x')",
    "(m.content is string)",
];

/// The synthetic template at `scale`: `scale` blocks of ordinary statements, and a
/// `{% set %}` whose value is a `~` chain of `scale` × 1,000 operands.
pub fn synthetic(scale: usize) -> String {
    let mut out = String::from("{%- set ns = namespace(text='') -%}\n");
    for block in 0..scale * 50 {
        out.push_str(&format!(
            "{{%- for m in messages[{block}:] if m.role != 'x' -%}}\n\
             {{%- if m.content is string and m.content|length > {block} -%}}\n\
             {{{{ '%s: %s' % (m.role, m.content | trim) }}}}{{{{ m['items'] }}}}\n\
             {{%- set ns.text = ns.text ~ m.content|safe + '!' -%}}\n\
             {{%- endif -%}}\n{{%- endfor -%}}\n"
        ));
    }
    out.push_str("{%- for m in messages -%}\n{%- set chain = ");
    let terms: Vec<&str> = (0..scale * 1000).map(|i| TERMS[i % TERMS.len()]).collect();
    out.push_str(&terms.join(" ~ "));
    out.push_str(" -%}\n{{ chain }}\n{%- endfor -%}\n");
    out
}

fn rewrite_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("rewrite_scaling");
    group.sample_size(10);
    for scale in [1, 2, 4, 8] {
        let source = synthetic(scale);
        if scale == 1 {
            CompiledTemplate::compile(&source, Limits::default()).expect("synthetic compiles");
        }
        group.throughput(Throughput::Bytes(source.len() as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{scale}x")),
            &source,
            |b, source| b.iter(|| rewritten_source(black_box(source))),
        );
    }
    group.finish();
}

criterion_group!(benches, compile_benches, rewrite_scaling);
criterion_main!(benches);
