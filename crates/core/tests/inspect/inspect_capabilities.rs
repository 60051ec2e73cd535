//! Every capability and reasoning format, decided on purpose-built templates that have
//! (or lack) exactly that feature.

use chatplate_core::inspect::{
    inspect_template, ProbeSettings, ReasoningFormat, RoleHandling, SystemRole, TemplateReport,
    VariableDefault,
};
use chatplate_render::{CancelToken, CompiledTemplate, Limits};

fn report(source: &str) -> TemplateReport {
    let template = CompiledTemplate::compile(source, Limits::default()).expect("compiles");
    inspect_template(&template, &ProbeSettings::default(), &CancelToken::new()).expect("runs")
}

/// A plain template: every role as `role: content`, nothing else.
const PLAIN: &str = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}";

/// Role markers, system as its own turn, tools in a preamble, tool calls with raw
/// arguments, tool results with their ids.
const FULL: &str = "{% if tools %}TOOLS {% for t in tools %}{{ t.function.name }} {% endfor %}\n{% endif %}\
{% for m in messages %}<{{ m.role }}>\
{% if m.content is string %}{{ m.content }}{% endif %}\
{% for c in m.tool_calls or [] %}CALL {{ c.id }} {{ c.function.name }} {{ c.function.arguments }};{% endfor %}\
{% if m.tool_call_id %} for {{ m.tool_call_id }}{% endif %}\n{% endfor %}\
{% if add_generation_prompt %}<assistant>{% endif %}";

#[test]
fn a_plain_template_renders_roles_but_no_tools() {
    let caps = report(PLAIN).capabilities;
    assert!(caps.content.renders_user_message.value);
    assert!(caps.roles.supports_system_role.value);
    assert_eq!(caps.roles.system_role.value, SystemRole::OwnTurn);
    assert!(!caps.roles.requires_alternation.value);
    assert!(!caps.tools.supports_tools.value);
    assert!(!caps.tools.supports_tool_calls.value);
    // minja only counts tool responses when tool calls render.
    assert!(!caps.tools.supports_tool_responses.value);
    assert_eq!(caps.tools.tool_role.handling.value, RoleHandling::Renders);
    assert!(!caps.reasoning.supports_reasoning.value);
    assert_eq!(caps.reasoning.reasoning_format.value, ReasoningFormat::None);
    assert!(!caps.uses_clock.value);
    for entry in caps.entries() {
        assert!(!entry.probe.is_empty(), "{} has no probe", entry.key);
        assert!(
            !entry.observed.is_empty(),
            "{} has no observation",
            entry.key
        );
    }
}

#[test]
fn a_full_tool_template_renders_definitions_calls_ids_and_results() {
    let tools = report(FULL).capabilities.tools;
    assert!(tools.supports_tools.value);
    assert!(tools.supports_tool_calls.value);
    assert!(tools.accepts_string_arguments.value);
    assert!(!tools.requires_object_arguments.value);
    assert!(tools.supports_parallel_tool_calls.value);
    assert!(tools.supports_tool_responses.value);
    assert!(tools.supports_tool_call_id.value);
    assert!(tools.renders_tool_call_ids.value);
}

#[test]
fn tojson_arguments_require_objects() {
    let source = FULL.replace(
        "{{ c.function.arguments }}",
        "{{ c.function.arguments | tojson }}",
    );
    let tools = report(&source).capabilities.tools;
    assert!(tools.supports_tool_calls.value);
    assert!(tools.requires_object_arguments.value);
    assert!(!tools.accepts_string_arguments.value);
    assert!(tools
        .requires_object_arguments
        .observed
        .contains("JSON-encoded a second time"));
}

#[test]
fn a_template_that_prints_only_the_first_call_has_no_parallel_calls() {
    let source = FULL.replace(
        "{% for c in m.tool_calls or [] %}",
        "{% for c in (m.tool_calls or [])[:1] %}",
    );
    let tools = report(&source).capabilities.tools;
    assert!(tools.supports_tool_calls.value);
    assert!(!tools.supports_parallel_tool_calls.value);
}

#[test]
fn ids_that_are_never_printed_are_reported() {
    let source = FULL.replace("CALL {{ c.id }} ", "CALL ").replace(
        "{% if m.tool_call_id %} for {{ m.tool_call_id }}{% endif %}",
        "",
    );
    let tools = report(&source).capabilities.tools;
    assert!(tools.supports_tool_responses.value);
    assert!(!tools.supports_tool_call_id.value);
    assert!(!tools.renders_tool_call_ids.value);
}

#[test]
fn system_messages_merged_dropped_or_rejected() {
    let merged = "{% set sys = messages[0].content if messages[0].role == 'system' else '' %}\
        {% for m in messages if m.role != 'system' %}<{{ m.role }}>{% if loop.first %}{{ sys }} {% endif %}{{ m.content }}{% endfor %}";
    assert_eq!(
        report(merged).capabilities.roles.system_role.value,
        SystemRole::Merged
    );
    let dropped = "{% for m in messages if m.role != 'system' %}{{ m.content }}{% endfor %}";
    let roles = report(dropped).capabilities.roles;
    assert_eq!(roles.system_role.value, SystemRole::Dropped);
    assert!(!roles.supports_system_role.value);
    let raises = "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m.content }}{% endfor %}";
    let roles = report(raises).capabilities.roles;
    assert_eq!(roles.system_role.value, SystemRole::Raises);
    assert!(roles
        .system_role
        .observed
        .contains("System role not supported"));
}

#[test]
fn strict_alternation_and_rejected_roles() {
    let source = "{% for m in messages %}\
        {% if m.role not in ['system', 'user', 'assistant', 'tool'] %}{{ raise_exception('Unknown role ' + m.role) }}{% endif %}\
        {% if m.role in ['user', 'assistant'] and (m.role == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate') }}{% endif %}\
        {{ m.content }}{% endfor %}";
    let roles = report(source).capabilities.roles;
    assert!(roles.requires_alternation.value);
    assert!(roles
        .requires_alternation
        .observed
        .contains("must alternate"));
    let handling = |role: &str| {
        roles
            .roles
            .iter()
            .find(|r| r.role == role)
            .map(|r| r.handling.value)
    };
    assert_eq!(handling("developer"), Some(RoleHandling::Raises));
    assert_eq!(handling("narrator"), Some(RoleHandling::Raises));
    assert_eq!(handling("assistant"), Some(RoleHandling::Renders));
}

#[test]
fn null_content_and_typed_content() {
    let non_null = "{% for m in messages %}{{ '<' + m.role + '>' + m.content }}{% endfor %}";
    let content = report(non_null).capabilities.content;
    assert!(content.requires_non_null_content.value);
    let typed_only = "{% for m in messages %}{% for p in m.content %}{% if p is mapping %}{{ p.text }}{% endif %}{% endfor %}{% endfor %}";
    let content = report(typed_only).capabilities.content;
    assert!(content.requires_typed_content.value);
    assert!(content.accepts_content_parts.value);
    let stringifies = "{% for m in messages %}{{ m.content }}{% endfor %}";
    let content = report(stringifies).capabilities.content;
    assert!(!content.requires_typed_content.value);
    assert!(
        !content.accepts_content_parts.value,
        "a printed list is not read as text"
    );
}

#[test]
fn a_template_that_needs_a_tools_list_gets_one() {
    let source = "{% for t in tools %}{{ t.function.name }}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}";
    let caps = report(source).capabilities;
    assert!(caps.content.requires_tools_list.value);
    assert!(caps.content.renders_user_message.value);
    assert!(
        caps.roles.supports_system_role.value,
        "later probes render with tools=[]"
    );
}

/// Assistant turns print reasoning from `field` (or a content block), then content.
fn reasoning_template(reasoning: &str) -> String {
    format!(
        "{{% for m in messages %}}<{{{{ m.role }}}}>{reasoning}{{% if m.content is string %}}{{{{ m.content }}}}{{% endif %}}{{% endfor %}}"
    )
}

#[test]
fn each_reasoning_format_is_recognised() {
    let cases = [
        (
            "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}",
            ReasoningFormat::ReasoningContentField,
        ),
        (
            "{% if m.thinking %}<think>{{ m.thinking }}</think>{% endif %}",
            ReasoningFormat::ThinkingField,
        ),
        (
            "{% if m.thought %}<think>{{ m.thought }}</think>{% endif %}",
            ReasoningFormat::ThoughtField,
        ),
        (
            "{% if m.content is not string %}{% for p in m.content %}{% if p.type == 'thinking' %}{{ p.thinking }}{% elif p.type == 'text' %}{{ p.text }}{% endif %}{% endfor %}{% endif %}",
            ReasoningFormat::ThinkingContentBlock,
        ),
        (
            "{% if m.content is not string %}{% for p in m.content %}{% if p.type == 'thoughts' %}{{ p.text }}{% endif %}{% endfor %}{% endif %}",
            ReasoningFormat::ThoughtsContentBlock,
        ),
    ];
    for (reasoning, format) in cases {
        let reasoning_caps = report(&reasoning_template(reasoning))
            .capabilities
            .reasoning;
        assert_eq!(reasoning_caps.reasoning_format.value, format, "{reasoning}");
        assert!(reasoning_caps.supports_reasoning.value);
        assert!(!reasoning_caps.reasoning_requires_tools.value);
    }
}

#[test]
fn tool_plan_and_reasoning_only_with_tool_calls() {
    let plan = "{% for m in messages %}<{{ m.role }}>{% if m.tool_calls %}{{ m.tool_plan }}{% for c in m.tool_calls %}{{ c.function.name }}{{ c.function.arguments }}{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}";
    let caps = report(plan).capabilities.reasoning;
    assert_eq!(caps.reasoning_format.value, ReasoningFormat::ToolPlanField);
    assert!(caps.reasoning_requires_tools.value);
    let with_calls = plan.replace("m.tool_plan", "m.reasoning_content");
    let caps = report(&with_calls).capabilities.reasoning;
    assert_eq!(
        caps.reasoning_format.value,
        ReasoningFormat::ReasoningContentField
    );
    assert!(caps.reasoning_requires_tools.value);
}

#[test]
fn past_reasoning_kept_or_stripped() {
    let keeps = reasoning_template(
        "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}",
    );
    assert_eq!(
        report(&keeps)
            .capabilities
            .reasoning
            .keeps_past_reasoning
            .value,
        Some(true)
    );
    // Reasoning only after the last user message, as Qwen3 does.
    let strips = "{% set ns = namespace(last=0) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}\
        {% for m in messages %}<{{ m.role }}>{% if m.reasoning_content and loop.index0 > ns.last %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}{% endfor %}";
    let caps = report(strips).capabilities.reasoning;
    assert_eq!(caps.keeps_past_reasoning.value, Some(false));
    assert!(caps.keeps_past_reasoning.observed.contains("stripped"));
}

#[test]
fn thinking_switches_are_found() {
    let source =
        "{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<a>\
        {% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}\
        {% if reasoning_effort %}effort={{ reasoning_effort }}{% endif %}{% endif %}";
    let caps = report(source).capabilities.reasoning;
    assert!(caps.honours_enable_thinking.value);
    assert!(caps
        .honours_enable_thinking
        .observed
        .contains("<think></think>"));
    assert_eq!(
        caps.thinking_switches.value,
        vec![
            "enable_thinking".to_string(),
            "reasoning_effort".to_string()
        ]
    );
    let plain = report(PLAIN).capabilities.reasoning;
    assert!(!plain.honours_enable_thinking.value);
    assert!(plain.thinking_switches.value.is_empty());
}

#[test]
fn the_clock_and_template_variables() {
    let source = "{% if not date_string is defined %}{% set date_string = strftime_now('%d %b %Y') %}{% endif %}\
        Today: {{ date_string }}\n{% if tools_in_user_message | default(true) %}T{% endif %}\
        {% for m in messages %}{{ m.content }}{% endfor %}";
    let report = report(source);
    assert!(report.capabilities.uses_clock.value);
    assert!(report
        .capabilities
        .uses_clock
        .observed
        .contains("15 Jan 2026"));
    let names: Vec<(&str, &VariableDefault)> = report
        .variables
        .iter()
        .map(|v| (v.variable.name.as_str(), &v.variable.default))
        .collect();
    assert_eq!(
        names,
        vec![
            (
                "date_string",
                &VariableDefault::Expression("strftime_now('%d %b %Y')".into())
            ),
            (
                "tools_in_user_message",
                &VariableDefault::Value(serde_json::json!(true))
            ),
        ]
    );
    let date = &report.variables[0].effect.value;
    assert!(date.printed, "a string value is printed");
    let tools_flag = &report.variables[1].effect.value;
    assert!(tools_flag.toggles);
    assert_eq!(tools_flag.behaves_as, Some(true));
}

#[test]
fn probes_stop_when_cancelled() {
    let template = CompiledTemplate::compile(FULL, Limits::default()).unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    assert!(inspect_template(&template, &ProbeSettings::default(), &cancel).is_err());
}

#[test]
fn a_template_that_exhausts_its_fuel_is_not_probed_again_and_again() {
    let endless =
        "{% set ns = namespace(i=0) %}{% for x in range(100000) %}{% for y in range(100000) %}\
        {% set ns.i = ns.i + 1 %}{% endfor %}{% endfor %}{{ ns.i }}";
    let caps = report(endless).capabilities;
    assert!(!caps.content.renders_user_message.value);
    assert!(caps.content.renders_user_message.observed.contains("steps"));
    assert_eq!(
        caps.failures.len(),
        3,
        "three probes ran out of fuel, the rest were skipped"
    );
    assert!(caps.roles.system_role.observed.contains("not run"));
}
