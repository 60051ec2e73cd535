//! Untrusted templates: every bound ends with a clear error, never a hang, a crash or
//! a read of a file the template was not given.

use std::sync::Arc;
use std::time::Duration;

use chatplate::render::{
    render_with_deadline, CompiledTemplate, Conversation, Limits, RenderErrorKind,
};
use serde_json::json;

fn conversation() -> Conversation {
    Conversation {
        messages: vec![json!({"role": "user", "content": "hi"})],
        ..Conversation::default()
    }
}

fn render(source: &str) -> Result<String, chatplate::render::RenderError> {
    CompiledTemplate::compile(source, Limits::default())?.render(&conversation())
}

#[test]
fn huge_ranges_are_refused() {
    let err = render("{% for i in range(999999999) %}x{% endfor %}").unwrap_err();
    assert!(err.message.contains("range"), "{err}");
}

#[test]
fn nested_loops_run_out_of_fuel() {
    let source = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    assert_eq!(render(source).unwrap_err().kind, RenderErrorKind::Limit);
}

#[test]
fn doubling_a_string_is_stopped_by_its_allocation_cost() {
    let source = "{% set ns = namespace(s='xxxxxxxxxx') %}{% for i in range(60) %}\
                  {% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}";
    assert!(render(source).is_err());
    let tilde = source.replace("ns.s + ns.s", "ns.s ~ ns.s");
    assert!(render(&tilde).is_err());
}

#[test]
fn python_filters_respect_the_budget() {
    for grow in [
        "[ns.s, ns.s]|join",
        "(ns.s, ns.s)|tojson",
        "ns.s|indent(2, true, true) ~ ns.s",
    ] {
        let source = format!(
            "{{% set ns = namespace(s='xxxxxxxxxx') %}}{{% for i in range(60) %}}\
             {{% set ns.s = {grow} %}}{{% endfor %}}"
        );
        // A smaller budget than the default keeps this quick; the mechanism is the same.
        let limits = Limits {
            fuel: 200_000,
            ..Limits::default()
        };
        let result = CompiledTemplate::compile(&source, limits)
            .unwrap()
            .render(&conversation());
        assert!(result.is_err(), "{grow} must be bounded");
    }
}

#[test]
fn output_size_is_bounded() {
    let limits = Limits {
        max_output_bytes: 1000,
        ..Limits::default()
    };
    let source = "{% for i in range(100000) %}0123456789{% endfor %}";
    let err = CompiledTemplate::compile(source, limits)
        .unwrap()
        .render(&conversation())
        .unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Limit);
    assert!(err.message.contains("1,000 bytes"), "{}", err.message);
}

#[test]
fn unbounded_recursion_is_an_error() {
    let err = render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
}

#[test]
fn templates_cannot_read_files() {
    for source in [
        "{% include '/etc/passwd' %}",
        "{% import '/etc/passwd' as x %}",
        "{% extends '/etc/passwd' %}",
    ] {
        let err = render(source).unwrap_err();
        assert!(!err.message.contains("root:"), "{source} leaked a file");
    }
}

#[test]
fn the_watchdog_returns_render_results_and_times_out_slow_ones() {
    let quick = Arc::new(
        CompiledTemplate::compile("{{ messages[0].content }}", Limits::default()).unwrap(),
    );
    let result = render_with_deadline(&quick, conversation(), Duration::from_secs(5));
    assert_eq!(result.unwrap(), "hi");
    // Busy for longer than the deadline but finite: 2 million steps with ample fuel.
    let slow_limits = Limits {
        fuel: u64::MAX / 128,
        ..Limits::default()
    };
    let slow = Arc::new(
        CompiledTemplate::compile(
            "{% for i in range(2000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
            slow_limits,
        )
        .unwrap(),
    );
    let err = render_with_deadline(&slow, conversation(), Duration::from_millis(1)).unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Timeout);
}
