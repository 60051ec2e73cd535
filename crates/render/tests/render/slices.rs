//! Indexing a stored slice is O(1): `{% set l = messages[1:] %}` then `l[i]`
//! in a loop over `range(l|length)` used to walk MiniJinja's lazy slice from the start
//! on every access, charging fuel per step (16 million steps at 8,000 messages, 0.9 s,
//! and over the step budget for longer messages). The fuel a render used is
//! deterministic, so the tests bound it: linear, not quadratic.
//! The semantics (negative steps, out of range, strings) are covered by the
//! transformers-recorded cases in `tests/python_compat/cases.json`.

use chatplate_render::{CompiledTemplate, Conversation, Limits};
use serde_json::json;

fn conversation(count: usize) -> Conversation {
    let messages = (0..count)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"role": role, "content": format!("message {i}")})
        })
        .collect();
    Conversation::new(messages)
}

/// Renders `source` over `count` messages; checks the output and that the fuel stayed
/// linear (the same loop over `messages` itself uses about 9 steps per message).
fn assert_linear(source: &str, count: usize) {
    let compiled = CompiledTemplate::compile(source, Limits::default()).expect("compiles");
    let out = compiled.render(&conversation(count)).expect("renders");
    assert_eq!(out, expected(count));
    let fuel = compiled.last_fuel_used();
    assert!(
        fuel < 20 * count as u64,
        "{fuel} steps for {count} messages"
    );
}

/// What the loop renders, built without the template.
fn expected(count: usize) -> String {
    (1..count).map(|i| format!("message {i};")).collect()
}

#[test]
fn a_loop_indexing_a_stored_slice_renders_at_8000_messages() {
    let source =
        "{% set l = messages[1:] %}{% for i in range(l|length) %}{{ l[i].content }};{% endfor %}";
    assert_linear(source, 8_000);
}

#[test]
fn a_slice_stored_in_a_namespace_indexes_in_constant_time_too() {
    let source = "{% set ns = namespace(l=none) %}{% set ns.l = messages[1:] %}\
                  {% for i in range(ns.l|length) %}{{ ns.l[i].content }};{% endfor %}";
    assert_linear(source, 8_000);
}

#[test]
fn a_stored_list_sum_indexes_in_constant_time() {
    let source = "{% set l = messages[1:] + messages[:0] %}\
                  {% for i in range(l|length) %}{{ l[i].content }};{% endfor %}";
    assert_linear(source, 8_000);
}
