//! Fuzzing on the stable toolchain: templates built from grammar fragments
//! (tags, filters, methods, template-chosen widths, nesting) and fixtures made by
//! mutating real sessions. The property: no panic, no abort, no hang, memory bounded;
//! every input ends in a clear error or a render.
//!
//! Bounded for CI: `CHATPLATE_FUZZ_CASES` inputs per target (default 200) and at most
//! `CHATPLATE_FUZZ_SECONDS` seconds each (default 60; once spent, the remaining cases
//! pass without running). A long run: `CHATPLATE_FUZZ_CASES=100000
//! CHATPLATE_FUZZ_SECONDS=36000 cargo test --release -p chatplate-core --test fuzz -- --nocapture`.
//! Under CI (`CI` set) every target runs with a fixed seed; `CHATPLATE_FUZZ_SEED` picks
//! another anywhere. `fuzz_inputs` fuzzes the files chatplate reads (GGUF headers,
//! tokenizers, request bodies) with the same bounds.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chatplate_core::check::{check_file, CheckOptions, Fixture, Outcome};
use chatplate_core::session::Session;
use chatplate_render::{
    thread_live_bytes, CompiledTemplate, Conversation, Limits, RenderControl, RenderErrorKind,
};
use proptest::prelude::*;

pub(crate) use crate::common::fuzzing::{config, setting};
use serde_json::json;

/// Counts the inputs run and stops running them once the time budget is spent.
pub(crate) struct Budget {
    target: &'static str,
    started: Instant,
    limit: Duration,
    ran: AtomicUsize,
    /// Inputs by how they ended (render, syntax error, limit, other error).
    ends: [AtomicUsize; 4],
    /// What each end is called in the report.
    labels: [&'static str; 4],
}

impl Budget {
    pub(crate) fn new(target: &'static str) -> Self {
        Self::labelled(target, ["ok", "syntax", "limit", "other"])
    }

    /// A budget whose ends are called `labels` in the report.
    pub(crate) fn labelled(target: &'static str, labels: [&'static str; 4]) -> Self {
        Budget {
            target,
            started: Instant::now(),
            limit: Duration::from_secs(setting("CHATPLATE_FUZZ_SECONDS", 60)),
            ran: AtomicUsize::new(0),
            ends: Default::default(),
            labels,
        }
    }

    /// Records how an input ended; reports every 500 inputs.
    pub(crate) fn ended(&self, how: usize) {
        self.ends[how].fetch_add(1, Ordering::Relaxed);
        if self.ran.load(Ordering::Relaxed).is_multiple_of(500) {
            self.report();
        }
    }

    pub(crate) fn spent(&self) -> bool {
        self.started.elapsed() > self.limit
    }

    pub(crate) fn count(&self) {
        self.ran.fetch_add(1, Ordering::Relaxed);
    }

    fn report(&self) {
        let target = self.target;
        let ends: Vec<String> = (self.labels.iter().zip(&self.ends))
            .map(|(label, n)| format!("{label} {}", n.load(Ordering::Relaxed)))
            .collect();
        eprintln!(
            "fuzz {target}: {} inputs in {:.1} s ({})",
            self.ran.load(Ordering::Relaxed),
            self.started.elapsed().as_secs_f64(),
            ends.join(", ")
        );
    }
}

/// Keeps the input being tried in `$CHATPLATE_FUZZ_LOG`, so an input that aborts the
/// process (which no test harness can catch) is not lost.
pub(crate) fn last_input(text: &str) {
    if let Some(path) = std::env::var_os("CHATPLATE_FUZZ_LOG") {
        let _ = std::fs::write(path, text);
    }
}

const WIDTHS: &[&str] = &[
    "0", "1", "7", "-3", "1000", "10**6", "10**9", "10**12", "2**64", "2**200", "none", "'x'",
];

fn width() -> impl Strategy<Value = String> {
    prop::sample::select(WIDTHS).prop_map(str::to_string)
}

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "'ab c'",
                "''",
                "'x' * 1000",
                "\"q\\\"\"",
                "1",
                "2.5",
                "-0",
                "none",
                "true",
                "[1, 2, [3]]",
                "{'a': 1, 'b': [2]}",
                "(1,)",
                "messages",
                "messages[0]",
                "messages[0].content",
                "ns",
                "ns.a",
                "v",
                "x",
                "range(3)",
                "range(10**6)",
                "namespace(a=1)",
                "loop",
                "tools",
                "'%s-%d'",
                "'{0}{1:>5}'",
                "undefined_name",
                "'\\x1b[31m'",
                "dict(a=ns)",
                "[ns]",
            ][..]
        )
        .prop_map(str::to_string),
        width(),
    ]
}

const FILTERS: &[&str] = &[
    "center({w})",
    "indent({w})",
    "indent({w}, true, true)",
    "tojson",
    "tojson(indent={w})",
    "batch({w})",
    "batch({w}, 'f')",
    "slice({w})",
    "replace('', 'yy')",
    "replace('a', 'b', {w})",
    "join",
    "join('-')",
    "list",
    "sort",
    "string",
    "length",
    "first",
    "last",
    "reverse",
    "unique",
    "map(attribute='role')",
    "select",
    "dictsort",
    "format(1, 2)",
    "truncate({w})",
    "wordcount",
    "int",
    "float",
    "default('d')",
    "items",
    "e",
    "safe",
    "trim",
    "upper",
    "title",
    "sum",
    "min",
    "max",
    "groupby('a')",
    "pprint",
    "split",
    "abs",
    "round",
    "attr('a')",
];

const METHODS: &[&str] = &[
    "zfill({w})",
    "ljust({w})",
    "rjust({w}, '*')",
    "center({w})",
    "replace('', 'z')",
    "replace('a', 'bb', {w})",
    "split()",
    "rsplit()",
    "rsplit(none, {w})",
    "rsplit({w})",
    "format(1, 'x')",
    "join(['a', 'b'])",
    "strip()",
    "get('a')",
    "startswith('a', {w})",
    "index(1)",
    "partition('')",
    "rpartition('b')",
    "items()",
    "upper()",
    "splitlines()",
];

fn expr() -> impl Strategy<Value = String> {
    atom().prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            (inner.clone(), prop::sample::select(FILTERS), width())
                .prop_map(|(e, f, w)| format!("({e})|{}", f.replace("{w}", &w))),
            (inner.clone(), prop::sample::select(METHODS), width())
                .prop_map(|(e, m, w)| format!("({e}).{}", m.replace("{w}", &w))),
            (
                inner.clone(),
                prop::sample::select(&["~", "+", "*", "%", "==", "in", "and", "-", "//", "**"][..]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a}) {op} ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("[{a}, {b}]")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{{'k': {a}, {b}: 1}}")),
        ]
    })
}

fn block() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        expr().prop_map(|e| format!("{{{{ {e} }}}}")),
        expr().prop_map(|e| format!("{{% set ns.a = {e} %}}")),
        expr().prop_map(|e| format!("{{% set v = {e} %}}")),
        prop::sample::select(
            &[
                "text\n",
                "{%}",
                "{% raw %}{{ x }}{% endraw %}",
                "{{ raise_exception('no') }}",
                "{% set ns.me = ns %}",
                "{{ debug() }}",
                "{{ strftime_now('%d %b') }}",
                "{#c#}",
                "{% if %}",
                "{{",
                "}}",
                "{% endfor %}",
                "\r\n",
                "{{ loop.index }}",
            ][..]
        )
        .prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (expr(), inner.clone()).prop_map(|(e, b)| format!("{{% for x in {e} %}}{b}{{% endfor %}}")),
            (expr(), inner.clone(), inner.clone())
                .prop_map(|(e, a, b)| format!("{{% if {e} %}}{a}{{% else %}}{b}{{% endif %}}")),
            inner.clone().prop_map(|b| format!(
                "{{% macro m(n) %}}{b}{{% if n %}}{{{{ m(n - 1) }}}}{{{{ m(n - 1) }}}}{{% endif %}}{{% endmacro %}}{{{{ m(12) }}}}"
            )),
            inner.clone().prop_map(|b| format!("{{% generation %}}{b}{{% endgeneration %}}")),
            prop::collection::vec(inner, 1..4).prop_map(|parts| parts.concat()),
        ]
    })
}

fn conversation() -> Conversation {
    Conversation::new(vec![
            json!({"role": "user", "content": "hi", "n": 12345678901234567890u64}),
            json!({"role": "assistant", "content": "yo", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}),
        ]).with_tools(Some(vec![json!({"type": "function", "function": {"name": "f"}})]))
}

pub(crate) fn small_limits() -> Limits {
    Limits::default()
        .with_fuel(200_000)
        .with_max_output_bytes(1 << 20)
        .with_max_memory_bytes(32 << 20)
        .with_deadline(Duration::from_secs(2))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn templates_end_in_a_render_or_a_clear_error(
        template in block().prop_map(|b| format!("{{% set ns = namespace(a=1) %}}{b}"))
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::new("templates"));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        last_input(&template);
        let started = Instant::now();
        let result = CompiledTemplate::compile(&template, small_limits()).and_then(|compiled| {
            let control = RenderControl::default().with_deadline(Duration::from_secs(2));
            compiled.render_controlled(conversation(), &control)
        });
        // The deadline stops the render; compile of a template this size is quick.
        prop_assert!(started.elapsed() < Duration::from_secs(30), "slow: {template}");
        if let Err(err) = &result {
            prop_assert!(!err.message.contains("internal error"), "{template}\n{err}");
            prop_assert!(!err.message.contains('\x1b'), "{template}\n{err}");
        }
        if let Ok(prompt) = &result {
            prop_assert!(prompt.len() <= 1 << 20);
        }
        budget.ended(match &result {
            Ok(_) => 0,
            Err(err) if err.kind == RenderErrorKind::Syntax => 1,
            Err(err) if matches!(err.kind, RenderErrorKind::Limit | RenderErrorKind::Timeout) => 2,
            Err(_) => 3,
        });
    }

    #[test]
    fn mutated_fixtures_end_as_passed_or_failed(
        seed in 0usize..SEEDS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..8, mutation()), 1..6),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::new("fixture bytes"));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut text = SEEDS[seed].as_bytes().to_vec();
        for (at, len, insert) in edits {
            let start = at.index(text.len() + 1);
            let end = (start + len).min(text.len());
            text.splice(start..end, insert.into_bytes());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, &text).unwrap();
        last_input(&String::from_utf8_lossy(&text));
        if let Err(err) = Session::load(&path) {
            let message = err.to_string();
            prop_assert!(!message.contains('\x1b'), "{message}");
            prop_assert!(message.len() < 10_000, "{} bytes", message.len());
        }
        let fixture = Fixture { path: path.clone(), root: dir.path().to_path_buf(), found_in_folder: true, text: None };
        let options = CheckOptions { limits: small_limits(), ..CheckOptions::default() };
        let before = thread_live_bytes();
        let outcome = check_file(&fixture, &options).outcome;
        budget.ended(match &outcome {
            Outcome::Pass | Outcome::Blessed => 0,
            Outcome::Broken(_) | Outcome::Skipped(_) => 1,
            Outcome::Mismatch { .. } | Outcome::WrongError { .. } | Outcome::WrongException { .. } => 2,
            _ => 3,
        });
        prop_assert!(!matches!(outcome, Outcome::Crashed(_)), "{outcome:?}\n{}", String::from_utf8_lossy(&text));
        prop_assert!(thread_live_bytes() - before < 64 << 20, "memory kept after the check");
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fixtures_with_odd_values_end_as_passed_or_failed(
        seed in 0usize..SEEDS.len(),
        changes in prop::collection::vec((prop::sample::select(POINTERS), odd_value()), 1..4),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::new("fixture values"));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut json: serde_json::Value = serde_json::from_str(SEEDS[seed]).unwrap();
        for (pointer, value) in changes {
            if let Some(slot) = json.pointer_mut(pointer) {
                *slot = value;
            } else if let Some((parent, key)) = pointer.rsplit_once('/') {
                if let Some(serde_json::Value::Object(map)) = json.pointer_mut(parent) {
                    map.insert(key.to_string(), value);
                }
            }
        }
        let text = serde_json::to_string_pretty(&json).unwrap();
        last_input(&text);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, &text).unwrap();
        let fixture = Fixture { path, root: dir.path().to_path_buf(), found_in_folder: false, text: None };
        let options = CheckOptions { limits: small_limits(), ..CheckOptions::default() };
        let outcome = check_file(&fixture, &options).outcome;
        budget.ended(match &outcome {
            Outcome::Pass | Outcome::Blessed => 0,
            Outcome::Broken(_) | Outcome::Skipped(_) => 1,
            Outcome::Mismatch { .. } | Outcome::WrongError { .. } | Outcome::WrongException { .. } => 2,
            _ => 3,
        });
        prop_assert!(!matches!(outcome, Outcome::Crashed(_)), "{outcome:?}\n{text}");
    }
}

/// Where [`odd_value`]s go in a fixture.
const POINTERS: &[&str] = &[
    "/messages/0/content",
    "/messages/0/role",
    "/messages/0/tool_calls",
    "/messages/0",
    "/messages/0/reasoning_content",
    "/messages",
    "/template",
    "/template/source",
    "/variables",
    "/variables/x",
    "/tools",
    "/documents",
    "/clock",
    "/continue_final_message",
    "/add_generation_prompt",
    "/bos_token",
    "/expected",
    "/expected/prompt",
    "/version",
];

/// Values of every JSON type, including deep, huge and template-code ones.
pub(crate) fn odd_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(
            |f| serde_json::Number::from_f64(f).map_or(json!(0), serde_json::Value::Number)
        ),
        "[\\PC]{0,12}".prop_map(serde_json::Value::from),
        block().prop_map(serde_json::Value::from),
        Just(json!("x".repeat(100_000))),
        Just(json!({"role": "user", "content": "hi"})),
        Just(json!({"bundled": "qwen2.5-reasoning-tools"})),
        Just(json!({"path": "/dev/zero"})),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Real sessions to mutate.
const SEEDS: &[&str] = &[
    include_str!("../../../../sessions/example.json"),
    include_str!("../../../../sessions/gemma-3-tools.json"),
    include_str!("../../../../sessions/chatml-with-headers-tools.function-role-error.json"),
    r#"{"version": 1, "template": {"source": "{% for m in messages %}{{ m.content }}{% endfor %}"},
        "messages": [{"role": "user", "content": "hi", "n": 1}], "variables": {"a": [1]},
        "continue_final_message": "content", "clock": "2026-01-15T00:00:00",
        "expected": {"error": ""}}"#,
];

/// Text spliced into a fixture: JSON fragments, wrong types, huge numbers, template
/// code, control characters, invalid UTF-8 (as a lossy replacement), deep nesting.
pub(crate) fn mutation() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "",
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                "\"",
                "\\",
                "null",
                "true",
                "-0",
                "1E5",
                "123456789012345678901234567890",
                "1e999",
                "\"role\": \"user\", \"role\": 1",
                "\"content\": 5",
                "\"clock\": \"15/01/2026\"",
                "\"version\": 2",
                "\"version\": \"1\"",
                "\"continue_final_message\": 3",
                "\"template\": {\"path\": \"/proc/self/environ\"}",
                "\"template\": {\"path\": \"../../../../etc/passwd\"}",
                "\"template\": {\"bundled\": \"nope\"}",
                "\"template\": {\"source\": \"{{ 'x'|center(10**12) }}\"}",
                "\"\\u001b[31m\"",
                "\"\\ud800\"",
                "\u{0}",
                "\u{fffd}",
                "{\"a\": {\"a\": {\"a\": {}}}}",
            ][..]
        )
        .prop_map(str::to_string),
        (1usize..200).prop_map(|n| "[".repeat(n)),
        "[ -~]{0,40}",
    ]
}
