//! `response_template` parsing speed (`chatplate parse`, the paste dialog, round trips).
//!
//! * `parse/lfm2.5-400-calls`: TRL's LFM2.5 schema (from `tests/data/parse/goldens.json`,
//!   written from TRL 1.16.0) on `tests/fixtures/bench/lfm2.5-400-calls.txt`, reasoning
//!   and 400 tool calls in one list, with the goldens' tools casting the arguments.
//!   Every call is a region whose `xml-inline` content parser runs the schema's long
//!   `tag_pattern` and a JSON `string_delims` pattern per argument: what it costs when
//!   those patterns are compiled once per schema.
//! * `parse/look-behind-1mb`: a close pattern with a variable-length look-behind
//!   (`(?<=a+)b`) on 1 MiB of `a`: quadratic if every position were tried.
//! * `load/lfm2.5`: validating and compiling the schema.
//!
//! `scripts/bench_parse.py` runs this and transformers' `parse_response` on the same
//! output and prints both.

use std::hint::black_box;
use std::path::Path;

use chatplate_core::parse::{parse_response, ResponseTemplate};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

/// The allocator the chatplate binary installs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn repo_file(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The LFM2.5 schema and the goldens' tools.
fn lfm_schema_and_tools() -> (Value, Vec<Value>) {
    let goldens: Value = serde_json::from_str(&repo_file("tests/data/parse/goldens.json"))
        .expect("the goldens are JSON");
    let schema = goldens["schemas"]["trl/lfm2_2_5"]["schema"].clone();
    let tools = goldens["tools"].as_array().cloned().unwrap_or_default();
    (schema, tools)
}

fn parse_benches(c: &mut Criterion) {
    let (schema, tools) = lfm_schema_and_tools();
    let output = repo_file("tests/fixtures/bench/lfm2.5-400-calls.txt");
    let template = ResponseTemplate::load(&schema).expect("TRL's schema loads");
    let message = parse_response(&output, &template, "", &tools).expect("the output parses");
    assert_eq!(message["tool_calls"].as_array().map(Vec::len), Some(400));

    let mut group = c.benchmark_group("parse");
    group.bench_function("lfm2.5-400-calls", |b| {
        b.iter(|| parse_response(black_box(&output), &template, "", &tools).unwrap());
    });

    let hostile = ResponseTemplate::load(&json!({
        "start_anchor": "A",
        "fields": {"content": {"close_pattern": "(?<=a+)b"}},
    }))
    .expect("a look-behind loads");
    let text = "a".repeat(1 << 20);
    group.bench_function("look-behind-1mb", |b| {
        b.iter(|| parse_response(black_box(&text), &hostile, "", &[]).unwrap());
    });
    group.finish();

    let mut group = c.benchmark_group("load");
    group.bench_function("lfm2.5", |b| {
        b.iter(|| ResponseTemplate::load(black_box(&schema)).unwrap());
    });
    group.finish();
}

criterion_group!(benches, parse_benches);
criterion_main!(benches);
