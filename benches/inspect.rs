//! Inspection speed.
//!
//! * `inspect/<template>`: every probe of `inspect_template` (capabilities, variables and
//!   their effects) for each of the 57 dev corpus templates (needs `../shared`); the
//!   goal is in BENCHMARKS.md.
//! * `attribution/llama-3.1-1000`: the full attribution of the 1,000-message bench
//!   fixture (one render per prefix, on all cores); the same after the last message was
//!   edited, reusing the earlier prefix renders; and the cheap queries: one message's
//!   span (two prefix renders) and one byte's producer (binary search).
//! * `dropped/llama-3.1-1000`, `stability/llama-3.1-1000`: the other conversation
//!   inspections on the same fixture.
//! * `first_attribution/<template>`: the attribution the app makes when a session opens
//!   (no earlier one to reuse, the prompt rendered too), of 1,000 messages, for each dev
//!   corpus template: the templates the traced render cannot predict show here as
//!   hundreds of renders instead of a few.
//! * `first_attribution_on_screen/<template>`: the same as the app asks for it, on screen
//!   first (41 messages from the middle in focus, the prompt already rendered): the whole
//!   attribution where the template's prefixes are predicted, else a partial one.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use chatplate_core::inspect::{
    attribute, attribute_focused, attribute_incremental, dropped_fields, inspect_template,
    message_span, prefix_stability, source_at, Previous, ProbeSettings,
};
use chatplate_core::session::Session;
use chatplate_core::{catalog, corpus};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits, PreparedMessages};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn corpus_templates() -> Vec<(String, String, ProbeSettings)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev/templates");
    let Ok(templates) = corpus::corpus_templates(&dir) else {
        eprintln!("skipping inspect/*: ../shared/conformance is not beside the repo");
        return Vec::new();
    };
    templates
        .into_iter()
        .map(|template| {
            let settings = ProbeSettings {
                variables: template.variables_with_tokens(),
                ..ProbeSettings::default()
            };
            (template.name, template.source, settings)
        })
        .collect()
}

fn inspect_benches(c: &mut Criterion) {
    let mut group = quick_group(c, "inspect");
    for (stem, source, settings) in corpus_templates() {
        let template = CompiledTemplate::compile(&source, Limits::default()).unwrap();
        group.bench_function(&stem, |b| {
            b.iter(|| {
                inspect_template(black_box(&template), &settings, &CancelToken::new()).unwrap()
            })
        });
    }
    group.finish();
}

fn llama_fixture() -> Option<(CompiledTemplate, Conversation)> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/llama-3.1-1000.json");
    let session = Session::load(&path).ok()?;
    let template = catalog::resolve(
        &session.template,
        path.parent()?,
        &catalog::TemplateAccess::Anywhere,
    )
    .ok()?;
    let compiled = CompiledTemplate::compile(&template.source, Limits::default()).ok()?;
    Some((compiled, session.conversation().ok()?))
}

fn conversation_benches(c: &mut Criterion) {
    let Some((template, conversation)) = llama_fixture() else {
        eprintln!("skipping attribution/*: ../shared/conformance is not beside the repo");
        return;
    };
    let cancel = CancelToken::new();
    let prompt = template.render(&conversation).unwrap();
    let mut group = c.benchmark_group("attribution");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("llama-3.1-1000", |b| {
        b.iter(|| attribute(&template, black_box(&conversation), &cancel).unwrap())
    });
    let full = attribute(&template, &conversation, &cancel).unwrap();
    let mut edited = conversation.clone();
    let last = edited.messages.len() - 1;
    edited.messages[last]["content"] = json!("An edited last message.");
    group.bench_function("llama-3.1-1000/after-editing-the-last-message", |b| {
        let previous = Previous {
            conversation: &conversation,
            prompt: &prompt,
            attribution: &full,
        };
        b.iter(|| {
            attribute_incremental(&template, black_box(&edited), Some(previous), &cancel).unwrap()
        })
    });
    group.bench_function("llama-3.1-1000/message_span", |b| {
        b.iter(|| message_span(&template, &conversation, &prompt, black_box(500), &cancel).unwrap())
    });
    group.bench_function("llama-3.1-1000/source_at", |b| {
        let offset = prompt.len() / 2;
        b.iter(|| {
            source_at(
                &template,
                &conversation,
                &prompt,
                black_box(offset),
                &cancel,
            )
            .unwrap()
        })
    });
    group.finish();
    let mut group = c.benchmark_group("conversation");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("dropped/llama-3.1-1000", |b| {
        b.iter(|| dropped_fields(&template, black_box(&conversation), &cancel).unwrap())
    });
    group.bench_function("stability/llama-3.1-1000", |b| {
        b.iter(|| prefix_stability(&template, black_box(&conversation), &cancel).unwrap())
    });
    group.finish();
}

/// `count` messages, after a system prompt when `system`: questions and answers, every
/// tenth answer a tool call with its result when `tools`.
fn long_conversation(
    count: usize,
    (tools, system): (bool, bool),
    settings: &ProbeSettings,
) -> Conversation {
    let mut messages = Vec::with_capacity(count + 1);
    if system {
        messages.push(json!({"role": "system", "content": "You are a helpful assistant."}));
    }
    for turn in 1.. {
        if messages.len() >= count {
            break;
        }
        messages.push(json!({"role": "user",
            "content": format!("Question {turn}: how warm is it in city {turn}?")}));
        if tools && turn % 10 == 0 {
            messages.push(json!({"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": "call_1",
                "content": "{\"temperature\": 18}"}));
        } else {
            messages.push(json!({"role": "assistant",
                "content": format!("Answer {turn}: it is {} degrees.", turn % 30)}));
        }
    }
    let definitions = tools.then(|| {
        vec![
            json!({"type": "function", "function": {"name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string"}}}}}),
        ]
    });
    let mut conversation = Conversation::new(messages)
        .with_tools(definitions)
        .with_generation_prompt(true);
    conversation.variables = settings.variables.clone();
    conversation
}

/// A group of few, short samples: each iteration is many renders.
fn quick_group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    group
}

fn first_attribution_benches(c: &mut Criterion) {
    let mut group = quick_group(c, "first_attribution");
    let cancel = CancelToken::new();
    for (stem, template, conversation) in first_attribution_cases() {
        group.bench_function(&stem, |b| {
            b.iter(|| attribute(&template, black_box(&conversation), &cancel).unwrap())
        });
    }
    group.finish();
}

/// The app's first request: on screen first, the prompt already rendered (by the
/// worker, to show it) and the messages converted, with 41 messages from the middle of
/// the conversation in focus (a 120x40 terminal's list around its selection).
fn on_screen_first_benches(c: &mut Criterion) {
    let mut group = quick_group(c, "first_attribution_on_screen");
    let cancel = CancelToken::new();
    for (stem, template, conversation) in first_attribution_cases() {
        let prompt = template.render(&conversation).unwrap();
        let prepared = PreparedMessages::new(&conversation);
        group.bench_function(&stem, |b| {
            b.iter(|| {
                let focus = 480..521;
                attribute_focused(
                    &template,
                    &conversation,
                    &prepared,
                    &prompt,
                    None,
                    focus,
                    &cancel,
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

/// Each dev corpus template with the 1,000-message conversation it renders: with tools
/// where the template takes them, else plain turns, else without the system prompt some
/// templates refuse.
fn first_attribution_cases() -> Vec<(String, CompiledTemplate, Conversation)> {
    let mut cases = Vec::new();
    for (stem, source, settings) in corpus_templates() {
        let template = CompiledTemplate::compile(&source, Limits::default()).unwrap();
        let Some(conversation) = [(true, true), (false, true), (false, false)]
            .into_iter()
            .map(|shape| long_conversation(1000, shape, &settings))
            .find(|conversation| template.render(conversation).is_ok())
        else {
            eprintln!("skipping first_attribution/{stem}: it rejects all three conversations");
            continue;
        };
        cases.push((stem, template, conversation));
    }
    cases
}

criterion_group!(
    benches,
    inspect_benches,
    conversation_benches,
    first_attribution_benches,
    on_screen_first_benches
);
criterion_main!(benches);
