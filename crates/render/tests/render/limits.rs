//! Untrusted templates: every attack ends with a clear error (or a correct render),
//! never a panic, an abort, a hang, unbounded memory or a read of a file the template
//! was not given.
//!
//! This test binary counts allocations like the chatplate binary does, so the byte
//! budget sees everything a render allocates.

use std::time::Duration;

use chatplate_render::{
    reset_thread_peak, thread_peak_bytes, CompiledTemplate, Conversation, Limits, RenderControl,
    RenderError, RenderErrorKind,
};
use serde_json::json;

fn conversation() -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": "hi"})])
}

/// Renders on a render thread with a generous deadline (nothing here should need it).
fn render_with(source: &str, limits: Limits) -> Result<String, RenderError> {
    let control = RenderControl::default().with_deadline(Duration::from_secs(60));
    CompiledTemplate::compile(source, limits)?.render_controlled(conversation(), &control)
}

fn render(source: &str) -> Result<String, RenderError> {
    render_with(source, Limits::default())
}

/// The error `source` must end with; an internal error (a caught panic) never counts.
fn error_of(source: &str) -> RenderError {
    let err = render(source).expect_err(source);
    assert!(!err.message.contains("internal error"), "{source}: {err}");
    err
}

// Inputs that panicked.

#[test]
fn a_tag_made_of_one_percent_sign_is_a_syntax_error() {
    for source in ["{%} {% raw %}x{% endraw %}", "{% generation %}{%}", "{%}"] {
        assert_eq!(error_of(source).kind, RenderErrorKind::Syntax, "{source}");
    }
}

// CPython: 'a b'.rsplit() == ['a', 'b']; 'a b c'.rsplit(None, 1) == ['a b', 'c'];
// 'a b'.rsplit(1) raises TypeError: must be str or None, not int.
#[test]
fn rsplit_without_a_separator_splits_on_whitespace() {
    assert_eq!(
        render("{{ 'a b'.rsplit() }}|{{ 'a b c'.rsplit(None, 1) }}|{{ ' a  b '.rsplit(none) }}")
            .unwrap(),
        "['a', 'b']|['a b', 'c']|['a', 'b']"
    );
    let err = error_of("{{ 'a b'.rsplit(1) }}");
    assert!(
        err.message.contains("must be str or None, not int"),
        "{err}"
    );
    assert!(error_of("{{ 'ab'.rsplit('') }}")
        .message
        .contains("empty separator"));
}

// Template-controlled sizes are charged before allocating.

#[test]
fn template_chosen_widths_and_counts_are_refused_before_allocating() {
    let attacks = [
        "{{ 'x'|center(10**12) }}",
        "{{ 'x'|indent(10**12) }}",
        "{{ 'a\nb'|indent(10**11, true) }}",
        "{{ [1, [2]]|tojson(indent=10**12) }}",
        "{{ 'x'.zfill(10**12) }}",
        "{{ '%1000000000000s' % 'x' }}",
        "{{ '%.1000000000000f' % 1.5 }}",
        "{{ '%*s' % (10**12, 'x') }}",
        "{{ '{:>1000000000000}'.format('x') }}",
        "{{ '{:{}}'.format('x', 10**12) }}",
        "{{ '%1000000000000s'|format('x') }}",
        "{{ 'x'.ljust(10**12) }}",
        "{{ 'x'.rjust(10**12, '-') }}",
        "{{ 'x'.center(10**12) }}",
        "{{ 'x' * 10**12 }}",
        "{{ [1] * 10**12 }}",
        "{{ range(10**12)|list }}",
        "{{ [1]|batch(10**12, 'x')|list }}",
        "{{ [1, 2]|slice(10**12)|list }}",
        "{{ ('x' * 10000).replace('', 'y' * 100000) }}",
        "{{ ('x' * 10000)|replace('', 'y' * 100000) }}",
        "{{ ('x' * 10000).replace('x', 'y' * 100000, 10**12) }}",
        "{{ ('-' * 100000).join(['a'] * 100000) }}",
        "{{ ['a'] * 100000|join('-' * 100000) }}",
        "{{ 'x'|truncate(10**18) }}",
        "{{ 'x'|wordwrap(10**12) }}",
    ];
    for source in attacks {
        reset_thread_peak();
        let result = render(source);
        match &result {
            Ok(text) => assert!(text.len() < 1 << 20, "{source} made {} bytes", text.len()),
            Err(err) => assert!(!err.message.contains("internal error"), "{source}: {err}"),
        }
    }
}

#[test]
fn a_lazily_doubled_list_is_refused_before_it_is_collected() {
    let source = "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}\
                  {% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|tojson }}";
    let err = error_of(source);
    assert!(err.message.contains("too large"), "{err}");
    // Without a namespace, doubling through set statements.
    let mut chain = String::from("{% set l0 = [1] %}");
    for i in 1..=40 {
        chain.push_str(&format!("{{% set l{i} = l{} + l{} %}}", i - 1, i - 1));
    }
    let err = error_of(&format!("{chain}{{{{ l40|tojson }}}}"));
    assert!(err.message.contains("too large"), "{err}");
    // Doubled inside one expression: too long to print, refused before printing.
    let source = "{{ ([1] * 100000000 + [1] * 100000000)|string|length }}";
    let err = error_of(source);
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
}

// Recursion ends in an error, not a stack overflow.

#[test]
fn a_namespace_cannot_contain_itself() {
    for source in [
        "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}",
        "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|tojson }}",
        "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|string }}",
        "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|dictsort }}",
        "{% set a = namespace() %}{% set b = namespace() %}{% set a.x = a %}{% set b.x = b %}{{ a == b }}",
        "{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}{{ a }}",
        "{% set ns = namespace() %}{% set ns.l = [1, [ns]] %}{{ ns.l }}",
        "{% set ns = namespace() %}{% set ns.d = {'k': ns} %}{{ ns.d == ns.d }}",
    ] {
        let err = error_of(source);
        assert!(err.message.contains("namespace"), "{source}: {err}");
    }
}

#[test]
fn deep_nesting_ends_in_an_error() {
    let build = |depth: usize| {
        format!(
            "{{% set ns = namespace(l=[]) %}}{{% for i in range({depth}) %}}\
             {{% set ns.l = [ns.l] %}}{{% endfor %}}"
        )
    };
    // Python: RecursionError while getting the repr of a list nested 3,000 deep.
    let err = error_of(&format!("{}{{{{ ns.l }}}}", build(3000)));
    assert!(err.message.contains("RecursionError"), "{err}");
    let err = error_of(&format!("{}{{{{ ns.l|tojson }}}}", build(3000)));
    assert!(err.message.contains("RecursionError"), "{err}");
    // Deeper than a namespace may hold, or more work than the step budget.
    let err = error_of(&format!("{}{{{{ ns.l|length }}}}", build(50_000)));
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
}

#[test]
fn long_operator_chains_compile_or_fail_cleanly() {
    // Python's `~` chains are flat: 10,000 terms render.
    let chain = format!("{{% set x = 'a' %}}{{{{ x{} }}}}", " ~ x".repeat(9_999));
    assert_eq!(render(&chain).unwrap(), "a".repeat(10_000));
    let too_deep = format!("{{{{ 1{} }}}}", " + 1".repeat(200_000));
    let err = CompiledTemplate::compile(&too_deep, Limits::default()).unwrap_err();
    assert!(err.message.contains("nested 200,001 levels deep"), "{err}");
}

// A byte budget, separate from the step budget.

#[test]
fn the_byte_budget_bounds_what_a_render_holds() {
    let limits = Limits::default()
        .with_max_memory_bytes(16 << 20)
        .with_fuel(u64::MAX / 128);
    let grow = "{% set ns = namespace(s='') %}{% for i in range(1000) %}\
                {% set ns.s = ns.s ~ ('x' * 1000000) %}{% endfor %}{{ ns.s|length }}";
    let template = CompiledTemplate::compile(grow, limits).unwrap();
    reset_thread_peak();
    let err = template.render(&conversation()).unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
    assert!(
        err.message.contains("16 MiB") && err.message.contains("Limits::max_memory_bytes"),
        "{err}"
    );
    let peak = thread_peak_bytes();
    assert!(peak < 64 << 20, "the render held {peak} bytes");
}

#[test]
fn big_single_allocations_never_happen() {
    for source in [
        "{{ 'x'|center(10**9) }}",
        "{{ 'x'.zfill(10**9) }}",
        "{{ '%1000000000s' % 'x' }}",
        "{{ '{:>1000000000}'.format('x') }}",
    ] {
        let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
        reset_thread_peak();
        let err = template.render(&conversation()).unwrap_err();
        assert!(
            err.message.contains("Limits::max_memory_bytes"),
            "{source}: {err}"
        );
        assert!(
            thread_peak_bytes() < 16 << 20,
            "{source}: {}",
            thread_peak_bytes()
        );
    }
    // A loop over a 50 MB string costs steps, not a list of 50 million strings.
    let template = CompiledTemplate::compile(
        "{% for c in 'x' * 50000000 %}{% endfor %}",
        Limits::default(),
    )
    .unwrap();
    reset_thread_peak();
    assert_eq!(
        template.render(&conversation()).unwrap_err().kind,
        RenderErrorKind::Limit
    );
    assert!(thread_peak_bytes() < 128 << 20, "{}", thread_peak_bytes());
}

#[test]
fn string_operators_are_charged_before_they_allocate() {
    // A 16 MiB budget: MiniJinja's own `*` built 50 MB and its `~` 32 MB before the
    // next checkpoint compared them with it.
    let limits = Limits::default().with_max_memory_bytes(16 << 20);
    for source in [
        "{{ ('x' * 50000000)|length }}",
        "{% set n = 50000000 %}{{ (n * 'ab')|length }}",
        "{% set s = 'x' * 8000000 %}{{ (s ~ s ~ s ~ s)|length }}",
    ] {
        let template = CompiledTemplate::compile(source, limits).unwrap();
        reset_thread_peak();
        let err = template.render(&conversation()).unwrap_err();
        assert!(
            err.message.contains("Limits::max_memory_bytes"),
            "{source}: {err}"
        );
        let peak = thread_peak_bytes();
        assert!(peak < 24 << 20, "{source}: the render held {peak} bytes");
    }
}

// One call turned a big string into a list or a longer string without a
// checkpoint, reaching about 1 GB (split, rsplit, splitlines, escape, tojson) against the
// 256 MiB budget before the limit noticed.

#[test]
fn splitting_escaping_and_dumping_a_big_string_are_charged_before_they_grow() {
    let budget = 32 << 20;
    let limits = Limits::default()
        .with_max_memory_bytes(budget)
        .with_fuel(u64::MAX / 128);
    // Each makes more than the budget from an input of at most 12 MB.
    for source in [
        "{{ ('a ' * 3000000).split()|length }}",
        "{{ ('a ' * 3000000).split(' ')|length }}",
        "{{ ('a ' * 3000000).rsplit()|length }}",
        "{{ ('a ' * 3000000).rsplit(' ', 10**9)|length }}",
        "{{ ('a\n' * 3000000).splitlines()|length }}",
        "{{ ('a\n' * 3000000).splitlines(true)|length }}",
        "{{ ('<' * 10000000)|escape|length }}",
        "{{ ('<' * 10000000)|e|length }}",
        "{{ ('<' * 10000000)|forceescape|length }}",
        "{{ ('\x01' * 6000000)|tojson|length }}",
        "{{ ['\x01' * 6000000]|tojson|length }}",
        "{{ ('\"' * 12000000)|tojson|length }}",
    ] {
        let template = CompiledTemplate::compile(source, limits).unwrap();
        reset_thread_peak();
        let err = template.render(&conversation()).unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Limit, "{source}: {err}");
        assert!(
            err.message.contains("Limits::max_memory_bytes"),
            "{source}: {err}"
        );
        // Near the budget (the input itself is copied once when it is made), not at a
        // multiple of it.
        let peak = thread_peak_bytes();
        assert!(
            peak < budget as isize * 3 / 2,
            "{source}: held {peak} bytes"
        );
    }
    // What fits still renders, like Python.
    let fits = "{{ ('a ' * 100000).split()|length }} {{ ('<a>' * 2)|e }} \
                {{ 'x y\nz'.splitlines(true) }} {{ (('\x01' * 5000) ~ 'é')|tojson|length }}";
    assert_eq!(
        render_with(fits, limits).unwrap(),
        "100000 &lt;a&gt;&lt;a&gt; ['x y\\n', 'z'] 30003"
    );
}

// Filters that build a list in one call grew it past the limit before the
// next checkpoint; `sum(start=[])` copied the whole list again for every item, and a
// stopped render went on doing so.

#[test]
fn lists_built_in_one_call_are_charged_as_they_grow() {
    let budget = 32 << 20;
    let limits = Limits::default()
        .with_max_memory_bytes(budget)
        .with_fuel(u64::MAX / 128);
    for source in [
        "{{ ([[1] * 100000] * 100)|sum(start=[])|length }}",
        "{{ ([[1] * 10] * 1000000)|sum(start=[])|length }}",
        "{{ ([{'a': [1] * 100000}] * 100)|sum(attribute='a', start=[])|length }}",
        "{{ ([1] * 1300000)|map('string')|list|length }}",
        "{{ (['ab'] * 1300000)|join|length }}",
        "{{ ([1] * 1300000)|reverse|list|length }}",
    ] {
        let template = CompiledTemplate::compile(source, limits).unwrap();
        reset_thread_peak();
        let err = template.render(&conversation()).unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Limit, "{source}: {err}");
        let peak = thread_peak_bytes();
        assert!(
            peak < budget as isize * 3 / 2,
            "{source}: held {peak} bytes"
        );
    }
    // Linear, not quadratic: ten thousand small lists are one pass.
    let many = "{{ ([[1, 2]] * 10000)|sum(start=[])|length }}";
    assert_eq!(render_with(many, limits).unwrap(), "20000");
}

// Real conversations fit; every limit says how to raise it.

#[test]
fn the_step_budget_grows_with_the_conversation() {
    // For each message, scan every message: quadratic, like google-gemma-4.
    let source =
        "{% for m in messages %}{% for n in messages %}{% if n.role == m.role %}{% endif %}\
                  {% endfor %}{{ m.content }}{% endfor %}";
    let messages: Vec<_> = (0..1500)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": "x"}))
        .collect();
    let conversation = Conversation::new(messages);
    let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
    assert_eq!(template.render(&conversation).unwrap(), "x".repeat(1500));
    assert!(
        template.last_fuel_used() > Limits::default().fuel,
        "not quadratic enough"
    );
}

#[test]
fn every_limit_error_names_its_limit_value_and_setting() {
    let small = Limits::default()
        .with_fuel(10_000)
        .with_max_output_bytes(1000)
        .with_max_memory_bytes(1 << 20);
    let cases = [
        (
            "{% for i in range(100000) %}{% endfor %}",
            "10,010 steps",
            "Limits::fuel",
        ),
        (
            "{% for i in range(1000) %}0123456789{% endfor %}",
            "1,000 bytes",
            "Limits::max_output_bytes",
        ),
        (
            "{{ 'x'|center(10**7) }}",
            "1 MiB",
            "Limits::max_memory_bytes",
        ),
    ];
    for (source, value, setting) in cases {
        let err = render_with(source, small).unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Limit, "{source}");
        assert!(
            err.message.contains(value) && err.message.contains(setting),
            "{err}"
        );
        assert!(!err.message.contains("endless loop"), "{err}");
    }
    let err = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
    assert!(err.message.contains("200 levels"), "{err}");
}

// Only what transformers' environment has.

#[test]
fn templates_see_neither_debug_nor_chatplate_helpers() {
    for source in [
        "{{ debug() }}",
        "{{ __c_loop_iterable('ab') }}",
        "{{ 'ab'|__c_loop_iterable }}x",
        "{{ 1|__c_namespace_value }}x",
        "{{ 'a'|__c_markup_add('b') }}x",
        "{{ '%s'|__c_percent_format(1) }}x",
        "{% call __c_generation() %}x{% endcall %}",
        "{{ __c_now }}x",
        "{{ 'a b'|split }}",
        "{{ 'a'|bool }}",
        "{{ [1]|zip([2])|list }}",
        "{{ 'ab' is startingwith('a') }}",
    ] {
        match render(source) {
            Err(err) => assert!(!err.message.contains("internal"), "{source}: {err}"),
            // Undefined prints as nothing, as in Jinja2.
            Ok(text) => assert_eq!(text, "x", "{source}"),
        }
    }
    // Real templates still get the generation block, loops over strings, Markup and %.
    assert_eq!(
        render(
            "{% generation %}{% for c in 'ab' %}{{ loop.length }}{% endfor %}{% endgeneration %}"
        )
        .unwrap(),
        "22"
    );
    assert_eq!(render("{{ '%s-%d' % ('a', 1) }}").unwrap(), "a-1");
}

// Older guarantees.

#[test]
fn nested_loops_run_out_of_fuel() {
    let source = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    assert_eq!(error_of(source).kind, RenderErrorKind::Limit);
}

#[test]
fn unbounded_recursion_is_an_error() {
    let err = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
}

#[test]
fn templates_cannot_read_files() {
    for source in [
        "{% include '/etc/passwd' %}",
        "{% import '/etc/passwd' as x %}",
        "{% extends '/etc/passwd' %}",
    ] {
        let err = error_of(source);
        assert!(!err.message.contains("root:"), "{source} leaked a file");
    }
}

// Filters and methods that build a string from their input: each is charged with
// an estimate of its output before it allocates it. `wordwrap(1)` of a 60 MB text
// reached 567 MB against a 256 MiB budget; a case mapping, a repr, an indent or a
// field printed many times by `%` went past the budget in one call.

/// Each source makes more than a 32 MiB budget (its result or its working memory)
/// from an input of at most 12 MB: each must stop with the memory limit, having held
/// little more than the budget.
fn assert_charged_first(sources: &[&str]) {
    let budget = 32 << 20;
    let limits = Limits::default()
        .with_max_memory_bytes(budget)
        .with_fuel(u64::MAX / 128);
    let mut failures = Vec::new();
    for source in sources {
        let template = CompiledTemplate::compile(source, limits).unwrap();
        reset_thread_peak();
        let result = template.render(&conversation());
        let peak = thread_peak_bytes();
        let limited = matches!(&result, Err(err) if err.kind == RenderErrorKind::Limit);
        if !limited || peak >= budget as isize * 3 / 2 {
            let result = result.map(|prompt| prompt.len()).map_err(|err| err.message);
            failures.push(format!("{source}: {result:?}, held {peak} bytes"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn wordwrap_is_charged_before_it_allocates() {
    assert_charged_first(&[
        "{{ ('x ' * 3000000)|wordwrap(1)|length }}",
        "{{ ('x ' * 3000000)|wordwrap(1, wrapstring='-' * 20)|length }}",
        "{{ ('xxxx-' * 2000000)|wordwrap(3)|length }}",
        "{{ ('x ' * 3000000)|wordwrap(10**12, false)|length }}",
    ]);
    // What fits renders as Jinja2 does (3.1.6: these lengths), a run of 100,000
    // hyphens included (searched for em-dashes once, not once per hyphen).
    let fits = "{{ ('a' ~ ('-' * 100000) ~ 'b')|wordwrap(10)|length }} \
                {{ ('x ' * 300000)|wordwrap(1)|length }}";
    assert_eq!(render(fits).unwrap(), "110002 599999");
}

#[test]
fn case_mappings_are_charged_before_they_allocate() {
    // U+0390 (two bytes) upper-cases to three characters of two bytes each.
    assert_charged_first(&[
        "{{ ('\u{390}' * 5000000)|upper|length }}",
        "{{ ('\u{390}' * 5000000).upper()|length }}",
        "{{ ('\u{390}' * 5000000)|title|length }}",
        "{{ ('\u{390}' * 5000000).title()|length }}",
        "{{ ('\u{390}' * 5000000)|capitalize|length }}",
        "{{ ('\u{390}' * 5000000).capitalize()|length }}",
        "{{ ('\u{390}' * 5000000).swapcase()|length }}",
        "{{ ('\u{df}' * 5000000).casefold()|length }}",
    ]);
}

#[test]
fn reprs_and_formatting_are_charged_before_they_allocate() {
    assert_charged_first(&[
        "{{ ['\x01' * 8000000]|string|length }}",
        "{{ ('\x01' * 8000000)|pprint|length }}",
        "{{ ('%(a)s%(a)s%(a)s%(a)s' % {'a': 'x' * 10000000})|length }}",
        "{{ ('%s' % (['x' * 10000000] * 4,))|length }}",
        "{{ '{0}{0}{0}{0}'.format(['x' * 10000000])|length }}",
    ]);
}

#[test]
fn indent_and_xmlattr_are_charged_before_they_allocate() {
    assert_charged_first(&[
        "{{ ('a\n' * 3000000)|indent(20)|length }}",
        "{{ ('a\r' * 3000000)|indent(20)|length }}",
        "{{ ('a\n' * 1000000)|indent('-' * 40)|length }}",
        "{{ {'a': '\"' * 8000000}|xmlattr|length }}",
        "{{ ('x' * 10000000)|center(40000000)|length }}",
    ]);
}
