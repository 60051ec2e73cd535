//! Engine speed: template compilation and full renders of a 1,000-message conversation.
//!
//! * `llama-3.1-1000`: `tests/fixtures/bench/llama-3.1-1000.json` (the conformance
//!   corpus' Llama 3.1 template; needs `../shared`). `scripts/make_bench_fixture.py`
//!   measures transformers 5.23.0 on the same input (figures in BENCHMARKS.md).
//! * `bundled-default-1000`: the bundled default template on a generated conversation,
//!   always available.
//! * `slice_index/{inline,lazy}/{2000,8000}`: a loop indexing a slice where
//!   it is written, `messages[1:][i]`, which the source rewrite makes O(1) per index;
//!   `lazy` is the same loop with the slice behind a conditional, which the rewrite does
//!   not touch, so it still walks MiniJinja's lazy slice: what `inline` cost before.

use std::hint::black_box;
use std::path::Path;

use chatplate_core::catalog;
use chatplate_core::session::Session;
use chatplate_render::{CompiledTemplate, Conversation, Limits};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn llama_fixture() -> Option<(String, Conversation)> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/llama-3.1-1000.json");
    let session = Session::load(&path).ok()?;
    let template = catalog::resolve(
        &session.template,
        path.parent()?,
        &catalog::TemplateAccess::Anywhere,
    )
    .ok()?;
    Some((template.source, session.conversation().ok()?))
}

fn generated_conversation() -> Conversation {
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    for turn in 1..=333 {
        messages.push(
            json!({"role": "user", "content": format!("Question {turn}: what is {turn} squared?")}),
        );
        messages.push(json!({"role": "assistant", "tool_calls": [{"id": format!("call_{turn}"), "type": "function",
            "function": {"name": "square", "arguments": {"n": turn}}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{turn}"), "content": (turn * turn).to_string()}));
    }
    Conversation::new(messages)
        .with_tools(Some(vec![
            json!({"type": "function", "function": {"name": "square",
            "description": "Square a number.", "parameters": {"type": "object",
            "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}),
        ]))
        .with_generation_prompt(true)
}

fn bench_case(c: &mut Criterion, name: &str, source: &str, conversation: &Conversation) {
    c.bench_function(&format!("compile/{name}"), |b| {
        b.iter(|| CompiledTemplate::compile(black_box(source), Limits::default()).unwrap())
    });
    let compiled = CompiledTemplate::compile(source, Limits::default()).unwrap();
    c.bench_function(&format!("render/{name}"), |b| {
        b.iter(|| compiled.render(black_box(conversation)).unwrap())
    });
}

fn render_benches(c: &mut Criterion) {
    match llama_fixture() {
        Some((source, conversation)) => bench_case(c, "llama-3.1-1000", &source, &conversation),
        None => eprintln!("skipping llama-3.1-1000: ../shared/conformance is not beside the repo"),
    }
    let default = catalog::default_template();
    bench_case(
        c,
        "bundled-default-1000",
        &default.source,
        &generated_conversation(),
    );
}

/// `messages[1:][i]` for every `i`, indexed in place (`inline`) or through a
/// conditional that keeps MiniJinja's lazy slice (`lazy`).
fn slice_index(c: &mut Criterion) {
    let inline =
        "{% for i in range(messages[1:] | length) %}{{ messages[1:][i].content }}{% endfor %}";
    let lazy = "{% for i in range(messages[1:] | length) %}{{ (messages[1:] if true else none)[i].content }}{% endfor %}";
    let mut group = c.benchmark_group("slice_index");
    group.sample_size(10);
    for count in [2000, 8000] {
        let conversation = Conversation::new(
            (0..count)
                .map(|i| json!({"role": "user", "content": format!("m{i}")}))
                .collect(),
        );
        for (name, source) in [("inline", inline), ("lazy", lazy)] {
            let compiled = CompiledTemplate::compile(source, Limits::default()).unwrap();
            match compiled.render(&conversation) {
                Ok(_) => group.bench_function(format!("{name}/{count}"), |b| {
                    b.iter(|| compiled.render(black_box(&conversation)).unwrap())
                }),
                Err(err) => {
                    println!("slice_index/{name}/{count}: {}", err.message);
                    continue;
                }
            };
        }
    }
    group.finish();
}

criterion_group!(benches, render_benches, slice_index);
criterion_main!(benches);
