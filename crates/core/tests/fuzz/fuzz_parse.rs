//! Fuzzing `response_template` parsing: schemas × outputs. Random Python patterns built
//! from the constructs that make a backtracking engine slow (look-arounds of unbounded
//! length, back-references, nested and overlapping repetitions, `$`) placed where a
//! schema takes a pattern, run over hostile outputs (long runs of one character, of
//! markup, of whitespace, up to a megabyte); and TRL's and transformers' real schemas
//! with odd values in their places. The property: no panic, and every parse ends,
//! parsed or with an error, within its deadline (plus the time one bounded step may
//! overrun it by).
//!
//! Bounded like `fuzz.rs` (see there).

use std::time::{Duration, Instant};

use chatplate_core::parse::{parse_response_within, ParseLimits, ResponseTemplate, LIMIT_CLASS};
use proptest::prelude::*;
use serde_json::{json, Value as Json};

use crate::fuzz::{config, last_input, odd_value, Budget};

/// How an input ended.
const ENDS: [&str; 4] = ["parsed", "refused", "limit", "no schema"];

/// The deadline each fuzzed parse gets.
const DEADLINE: Duration = Duration::from_millis(300);

/// How far past its deadline a parse may end: one bounded step (a candidate search, a
/// first match attempt) on a megabyte, in a debug build on a loaded machine.
const OVERRUN: Duration = Duration::from_secs(3);

/// Pattern atoms: literals, classes, markup, anchors, a back-reference.
const ATOMS: &[&str] = &[
    "a", "b", "x", ".", "\\s", "\\w", "\\d", "[^<]", "[ab]", "<x>", "</x>", "\\n", "^", "$", "\\Z",
    "\\b", "\\1", "",
];

/// Repetitions, greedy, lazy and possessive.
const REPEATS: &[&str] = &[
    "*", "+", "?", "{2,5}", "{0,}", "*?", "+?", "??", "*+", "{3}",
];

fn pattern() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(ATOMS).prop_map(str::to_string);
    atom.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), prop::sample::select(REPEATS)).prop_map(|(p, r)| format!("(?:{p}){r}")),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|parts| parts.concat()),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}|{b}")),
            inner.clone().prop_map(|p| format!("({p})")),
            inner.clone().prop_map(|p| format!("(?={p})")),
            inner.clone().prop_map(|p| format!("(?!{p})")),
            inner.clone().prop_map(|p| format!("(?<={p})")),
            inner.clone().prop_map(|p| format!("(?<!{p})")),
            inner.prop_map(|p| format!("(?>{p})")),
        ]
    })
}

/// Where the pattern goes in a schema.
fn schema_with(pattern: &str, place: usize) -> Json {
    match place {
        0 => json!({"start_anchor": "A", "fields": {"content": {"close_pattern": pattern}}}),
        1 => json!({"start_anchor": "A", "fields": {
            "r": {"open_pattern": pattern, "close": "</x>"}, "content": {}}}),
        2 => json!({"start_anchor_pattern": pattern, "fields": {"content": {}}}),
        3 => json!({"start_anchor": "A", "fields": {"t": {"open": "<x>", "close": "</x>",
            "content": "xml-inline",
            "content_args": {"tag_pattern": format!("(?P<key>{pattern})(?P<value>.*?)")}}}}),
        _ => json!({"start_anchor": "A", "fields": {"t": {"open": "<x>", "close": "</x>",
            "content": "json", "content_args": {"string_delims": [[pattern, "'"]],
            "allow_non_json": true}}}}),
    }
}

/// An output, shown in a failure by its length and start (a megabyte would flood the
/// log).
#[derive(Clone)]
struct Output(String);

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let start: String = self.0.chars().take(80).collect();
        write!(f, "{} bytes: {start:?}…", self.0.len())
    }
}

/// Outputs that make backtracking patterns slow: long runs, repeated markup.
fn output() -> impl Strategy<Value = Output> {
    let unit = prop::sample::select(
        &[
            "a", "ab", " ", "\n", "<x>", "<x>a</x>", "aaa\n", "'a'", "é", "</x>b",
        ][..],
    );
    let count = prop::sample::select(&[1usize, 10, 1_000, 50_000, 300_000][..]);
    (
        prop::collection::vec((unit, count), 1..4),
        "[ab<>x\n ]{0,8}",
    )
        .prop_map(|(runs, tail)| {
            let mut text: String = runs.iter().map(|(unit, n)| unit.repeat(*n)).collect();
            text.push_str(&tail);
            Output(text)
        })
}

/// Parses `output` with `schema` within the fuzzing deadline: how it ended.
fn parse_within_deadline(schema: &Json, output: &str, prefix: &str) -> Result<usize, String> {
    let Ok(template) = ResponseTemplate::load(schema) else {
        return Ok(3);
    };
    let started = Instant::now();
    let limits = ParseLimits::new(DEADLINE);
    let result = parse_response_within(output, &template, prefix, &[], &limits);
    let took = started.elapsed();
    if took > DEADLINE + OVERRUN {
        return Err(format!("took {took:?}"));
    }
    Ok(match result {
        Ok(_) => 0,
        Err(error) if error.class == LIMIT_CLASS => 2,
        Err(_) => 1,
    })
}

/// The real schemas the goldens hold (transformers', TRL's and chatplate's).
fn real_schemas() -> &'static [Json] {
    static SCHEMAS: std::sync::OnceLock<Vec<Json>> = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let goldens: Json =
            serde_json::from_str(include_str!("../../../../tests/data/parse/goldens.json"))
                .unwrap();
        let schemas = goldens["schemas"].as_object().unwrap();
        schemas
            .iter()
            .filter(|(id, _)| !id.starts_with("edge/"))
            .map(|(_, entry)| entry["schema"].clone())
            .collect()
    })
}

/// Where odd values go in a schema: every key the format reads.
const SCHEMA_KEYS: &[&str] = &[
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_patterns_over_hostile_outputs_end_within_the_deadline(
        pattern in pattern(),
        place in 0usize..5,
        output in output(),
        prefixed in any::<bool>(),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("parse patterns", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let schema = schema_with(&pattern, place);
        let output = output.0;
        last_input(&format!("{schema}\n{}", output.len()));
        let prefix = if prefixed { output.as_str() } else { "" };
        let ended = parse_within_deadline(&schema, &output, prefix);
        prop_assert!(ended.is_ok(), "{}: {schema} on {} bytes", ended.unwrap_err(), output.len());
        budget.ended(ended.unwrap_or(1));
    }

    #[test]
    fn real_schemas_with_odd_values_parse_or_fail_clearly(
        seed in any::<prop::sample::Index>(),
        field in any::<prop::sample::Index>(),
        changes in prop::collection::vec((prop::sample::select(SCHEMA_KEYS), odd_value()), 1..3),
        output in output(),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("parse schemas", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut schema = seed.get(real_schemas()).clone();
        if let Some(fields) = schema["fields"].as_object_mut() {
            let names: Vec<String> = fields.keys().cloned().collect();
            let name = field.get(&names);
            for (key, value) in changes {
                fields[name][key] = value;
            }
        }
        let output = output.0;
        last_input(&format!("{schema}\n{}", output.len()));
        let ended = parse_within_deadline(&schema, &output, "");
        prop_assert!(ended.is_ok(), "{}: {schema}", ended.unwrap_err());
        budget.ended(ended.unwrap_or(1));
    }
}
