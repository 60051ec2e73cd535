//! Flag scans (a loop that only sets a namespace flag when its item matches, see
//! `scans.rs`) answered from a per-render memo: the same prompt and the same errors as
//! transformers and as the loop walked in full, the bounds still enforced, and
//! gpt-oss's look-ahead no longer quadratic.

use std::path::Path;
use std::time::Duration;

use chatplate_render::{
    rewritten_source, CancelToken, CompiledTemplate, Conversation, Limits, RenderControl,
    RenderError, RenderErrorKind,
};
use serde_json::{json, Value as Json};

use super::corpus_conversation::{conversation_for, corpus_templates};

/// The cases and what transformers 5.23.0's `render_jinja_template` gives for each.
const CASES: &str = include_str!("scans_cases.json");

/// `source` with every flag scan walked in full: a statement that writes nothing after
/// each scan's `if` makes the loop's body more than the flag (same lines, same errors).
fn walked_in_full(source: &str) -> String {
    let walked = source
        .replace(
            "{%- endif %}\n{%- endfor %}",
            "{%- endif %}{{- '' }}\n{%- endfor %}",
        )
        .replace("{% endif %}{% endfor", "{% endif %}{{ '' }}{% endfor")
        .replace("found = true %}", "found = true %}{{- '' }}");
    assert!(!rewritten_source(&walked).contains("_scan("), "{walked}");
    walked
}

fn render(source: &str, messages: &Json) -> Result<String, RenderError> {
    let messages = messages.as_array().expect("a list").clone();
    CompiledTemplate::compile(source, Limits::default())?.render(&Conversation::new(messages))
}

#[test]
fn flag_scans_render_what_transformers_renders() {
    let cases: Json = serde_json::from_str(CASES).unwrap();
    let mut errors = 0;
    for case in cases["cases"].as_array().unwrap() {
        let (name, source) = (&case["name"], case["source"].as_str().unwrap());
        assert!(
            rewritten_source(source).contains("_scan("),
            "{name}: not a scan"
        );
        let ours = render(source, &case["messages"]);
        let full = render(&walked_in_full(source), &case["messages"]);
        let python = &case["transformers"];
        match (ours, full) {
            (Ok(ours), Ok(full)) => {
                assert_eq!(ours, python["ok"].as_str().unwrap(), "{name}");
                assert_eq!(ours, full, "{name}");
            }
            (Err(ours), Err(full)) => {
                errors += 1;
                // The same message at the same place as the loop walked in full, and
                // transformers' exception.
                assert_eq!(ours.message, full.message, "{name}");
                assert_eq!(ours.position, full.position, "{name}");
                let message = python["err"].as_str().unwrap();
                assert!(
                    message.ends_with(&ours.message),
                    "{name}: {ours:?} against {message}"
                );
            }
            (ours, full) => panic!("{name}: {ours:?} against {full:?}"),
        }
    }
    assert_eq!(errors, 9);
}

#[test]
fn a_condition_that_raises_reports_its_own_line() {
    let cases: Json = serde_json::from_str(CASES).unwrap();
    let case = &cases["cases"][5];
    assert_eq!(case["name"], "raises_after_start");
    let err = render(case["source"].as_str().unwrap(), &case["messages"]).unwrap_err();
    // transformers: the `{%- if m.meta.flag %}` line.
    assert_eq!(err.position.map(|p| p.line), Some(4), "{err:?}");
    assert_eq!(case["transformers"]["line"], 4);
}

/// Two scans of 300,000 items (the second fills the memo), nothing else to stop at.
const LONG_SCAN: &str = "{% set r = range(100000) | list %}{% set xs = r + r + r %}\
    {% set ns = namespace(f=false) %}{% for i in range(2) %}\
    {% for x in xs %}{% if x is string and x == 'a' %}{% set ns.f = true %}{% endif %}{% endfor %}\
    {% endfor %}{{ ns.f }}";

/// Steps enough for [`LONG_SCAN`].
const FUEL: u64 = 50_000_000;

fn one_message() -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": "hi"})])
}

#[test]
fn a_long_scan_stops_at_its_deadline() {
    assert!(rewritten_source(LONG_SCAN).contains("_scan("));
    let template = CompiledTemplate::compile(LONG_SCAN, Limits::default().with_fuel(FUEL)).unwrap();
    assert_eq!(template.render(&one_message()).unwrap(), "False");
    let control = RenderControl::default().with_deadline(Duration::from_millis(150));
    let err = template
        .render_controlled(one_message(), &control)
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout, "{err:?}");
}

#[test]
fn a_long_scan_stops_when_cancelled() {
    let template = CompiledTemplate::compile(LONG_SCAN, Limits::default().with_fuel(FUEL)).unwrap();
    let cancel = CancelToken::default();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            cancel.cancel();
        })
    };
    let err = template
        .render_cancellable(one_message(), &cancel)
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.kind, RenderErrorKind::Cancelled, "{err:?}");
}

#[test]
fn a_scan_burns_fuel_like_the_loop() {
    // The first scan walks the list (2.7 M steps with the list's making), the second
    // fills the memo (1.5 M more; the loop walked in full takes 3.2 M more): neither
    // fits in 3.5 M.
    for source in [LONG_SCAN.to_string(), walked_in_full(LONG_SCAN)] {
        let limits = Limits::default().with_fuel(3_500_000);
        let template = CompiledTemplate::compile(&source, limits).unwrap();
        let err = template.render(&one_message()).unwrap_err();
        assert!(
            matches!(err.bound, Some(chatplate_render::Bound::Steps { .. })),
            "{err:?}"
        );
    }
}

/// Fuel used by one render of the gpt-oss template at `count` messages.
fn gpt_oss_fuel(dir: &Path, count: usize) -> u64 {
    let path = dir.join("openai-gpt-oss-120b.jinja");
    let source = std::fs::read_to_string(&path).unwrap();
    let meta: Json =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
            .unwrap();
    let template = CompiledTemplate::compile(&source, Limits::default()).unwrap();
    template.render(&conversation_for(&meta, count)).unwrap();
    template.last_fuel_used()
}

#[test]
fn gpt_oss_looks_ahead_in_linear_work() {
    let Some(dir) = corpus_templates() else {
        return;
    };
    let source = std::fs::read_to_string(dir.join("openai-gpt-oss-120b.jinja")).unwrap();
    assert!(rewritten_source(&source).contains("_scan("));
    // Four times the messages: about four times the steps (walking every later message
    // from each tool call made it 8.7 times).
    let (small, large) = (gpt_oss_fuel(&dir, 100), gpt_oss_fuel(&dir, 400));
    assert!(
        large < 5 * small,
        "{small} steps at 100 messages, {large} at 400"
    );
}

/// A traced render (the inspector's) of `source` over `conversation`, and of the same
/// loops walked in full: the same text, the same first looks, the same loop reaches.
fn assert_traced_alike(name: &str, source: &str, conversation: &Conversation) {
    let traced = |source: &str| {
        CompiledTemplate::compile(source, Limits::default())
            .unwrap()
            .render_traced_prefix(conversation, &CancelToken::default())
    };
    let (ours, full) = (traced(source), traced(&walked_in_full(source)));
    assert_eq!(ours, full, "{name}");
    assert!(ours.is_ok(), "{name}: {ours:?}");
}

#[test]
fn traced_renders_note_the_same_looks_and_reaches() {
    let cases: Json = serde_json::from_str(CASES).unwrap();
    for case in cases["cases"].as_array().unwrap() {
        if case["transformers"]["ok"].is_string() {
            let messages = case["messages"].as_array().unwrap().clone();
            let source = case["source"].as_str().unwrap();
            assert_traced_alike(
                case["name"].as_str().unwrap(),
                source,
                &Conversation::new(messages),
            );
        }
    }
    let Some(dir) = corpus_templates() else {
        return;
    };
    let path = dir.join("openai-gpt-oss-120b.jinja");
    let source = std::fs::read_to_string(&path).unwrap();
    let meta: Json =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
            .unwrap();
    assert_traced_alike("gpt-oss", &source, &conversation_for(&meta, 300));
}
