//! The rules that need only the template: each on a real template (the dev corpus, the
//! bundled templates) that has the defect and one that does not, and on crafted ones.

use chatplate_core::lint::{lint_with, Location, Rule, Severity, Surroundings};
use chatplate_render::Limits;

use crate::{
    assert_evidence, assert_lacks, bundled, common, corpus_lint, corpus_template, crafted, finding,
    rules,
};

/// A plain ChatML loop with a generation prompt: sound for inference.
const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n\
                      {% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

#[test]
fn a_sound_chatml_template_has_only_the_training_note() {
    let report = crafted(CHATML);
    assert_eq!(rules(&report), ["zero-mask"]);
    assert_eq!(report.findings[0].severity, Severity::Info);
}

#[test]
fn sandbox_escape_is_found_with_its_line_without_rendering() {
    let report = crafted("Hello\n{{ cycler.__init__.__globals__ }}");
    // Nothing else: the template was never rendered, so no render-based rule ran.
    assert_eq!(rules(&report), ["sandbox-escape"]);
    let escape = &report.findings[0];
    assert_eq!(escape.severity, Severity::Error);
    assert_eq!(
        escape.location,
        Some(Location {
            line: 2,
            column: 11
        })
    );
    assert!(
        escape.message.contains("\"__globals__\""),
        "{}",
        escape.message
    );
}

#[test]
fn sandbox_escape_in_a_real_template_poisoned_like_a_gguf() {
    let test = "sandbox_escape_in_a_real_template_poisoned_like_a_gguf";
    let Some(corpus) = common::corpus_dir(test) else {
        return;
    };
    let (mut template, options) = corpus_template(&corpus, "Qwen-Qwen3-0.6B");
    assert!(corpus_lint(test, "Qwen-Qwen3-0.6B")
        .is_some_and(|r| !rules(&r).contains(&"sandbox-escape")));
    let lines = template.source.lines().count();
    template.source.push_str(
        "\n{{ self._TemplateReference__context.joiner.__init__.__globals__.os.popen('id').read() }}",
    );
    let report = lint_with(
        &template,
        &Surroundings::default(),
        &options,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(rules(&report), ["sandbox-escape"]);
    assert_eq!(report.findings[0].location.map(|l| l.line), Some(lines + 1));
}

#[test]
fn crash_on_a_claimed_conversation_has_its_line() {
    // Tool results render, except after a system message.
    let source = "{% for m in messages %}{% if m.role == 'tool' and messages[0].role == 'system' %}\
                  {{ m.content.missing() }}{% endif %}<|im_start|>{{ m.role }}\n{{ m.content }}\
                  {% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}{{ c.function.arguments | tojson }}</tool_call>{% endfor %}\
                  <|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    let report = crafted(source);
    let crash = finding(&report, "crash");
    assert_eq!(crash.severity, Severity::Error);
    assert!(
        crash.message.contains("has no attribute 'missing'"),
        "{}",
        crash.message
    );
    assert!(
        crash.message.contains("two rounds of tool calls"),
        "{}",
        crash.message
    );
    assert_eq!(crash.location.map(|l| l.line), Some(1));
    assert!(crash
        .scenario
        .as_deref()
        .is_some_and(|s| s.starts_with("system →")));
}

#[test]
fn crash_when_a_real_template_hits_a_bound_and_not_otherwise() {
    let test = "crash_when_a_real_template_hits_a_bound_and_not_otherwise";
    let Some(corpus) = common::corpus_dir(test) else {
        return;
    };
    let (template, mut options) = corpus_template(&corpus, "meta-llama-Llama-3.1-8B-Instruct");
    let sound = lint_with(
        &template,
        &Surroundings::default(),
        &options,
        &Default::default(),
    )
    .unwrap();
    assert_lacks(&sound, "crash");
    // Its tool definitions block alone is over 1 KiB: the tools scenarios hit the bound.
    options.limits = Limits::default().with_max_output_bytes(1024);
    let bounded = lint_with(
        &template,
        &Surroundings::default(),
        &options,
        &Default::default(),
    )
    .unwrap();
    let crash = finding(&bounded, "crash");
    assert!(crash.message.contains("hits a bound"), "{}", crash.message);
    assert!(
        crash.message.contains("tool definitions"),
        "{}",
        crash.message
    );
}

#[test]
fn tool_args_given_as_a_string_encoded_twice_or_crashing() {
    let test = "tool_args_given_as_a_string_encoded_twice_or_crashing";
    let Some(llama) = corpus_lint(test, "meta-llama-Llama-3.1-8B-Instruct") else {
        return;
    };
    let twice = finding(&llama, "tool-args-string");
    assert!(
        twice.message.contains("JSON-encoded a second time"),
        "{}",
        twice.message
    );
    assert_evidence(twice, "\\\"argument_needle\\\"");
    let glm = corpus_lint(test, "GLM-4.7-Flash").unwrap();
    let crash = finding(&glm, "tool-args-string");
    assert!(
        crash.message.contains("crash the template"),
        "{}",
        crash.message
    );
    // Qwen3 prints a string as it is and an object through tojson: the same bytes.
    let qwen = corpus_lint(test, "Qwen-Qwen3-0.6B").unwrap();
    assert_lacks(&qwen, "tool-args-string");
}

#[test]
fn a_silently_dropped_system_message() {
    let dropped = crafted(
        "{% for m in messages if m.role != 'system' %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
         {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    );
    let finding = finding(&dropped, "system-dropped");
    assert_eq!(finding.severity, Severity::Error);
    assert!(finding
        .scenario
        .as_deref()
        .is_some_and(|s| s.starts_with("system → user")));
    // Raising on the role is an answer, not a silent drop (Gemma 2).
    let Some(gemma) = corpus_lint("a_silently_dropped_system_message", "google-gemma-2-2b-it")
    else {
        return;
    };
    assert_lacks(&gemma, "system-dropped");
    let merged = corpus_lint(
        "a_silently_dropped_system_message",
        "mistralai-Mistral-Nemo-Instruct-2407",
    )
    .unwrap();
    assert_lacks(&merged, "system-dropped");
}

#[test]
fn reasoning_dropped_from_history_and_kept() {
    let test = "reasoning_dropped_from_history_and_kept";
    let Some(qwen) = corpus_lint(test, "Qwen-Qwen3-0.6B") else {
        return;
    };
    let dropped = finding(&qwen, "reasoning-dropped");
    assert!(
        dropped
            .message
            .contains("differs from the cached prompt at byte 64"),
        "{}",
        dropped.message
    );
    assert_evidence(dropped, "Let me think about it.");
    // Kimi K2 Thinking keeps every turn's reasoning.
    let kimi = corpus_lint(test, "Kimi-K2-Thinking").unwrap();
    assert_lacks(&kimi, "reasoning-dropped");
}

#[test]
fn prefix_unstable_and_stable() {
    let test = "prefix_unstable_and_stable";
    // Phi-3.5 ends the last assistant turn with <|endoftext|>, which the next request
    // replaces with the next user turn.
    let Some(phi) = corpus_lint(test, "microsoft-Phi-3.5-mini-instruct") else {
        return;
    };
    let unstable = finding(&phi, "prefix-unstable");
    assert_evidence(unstable, "<|endoftext|>");
    let llama = corpus_lint(test, "meta-llama-Llama-3.1-8B-Instruct").unwrap();
    assert_lacks(&llama, "prefix-unstable");
    assert!(!rules(&crafted(CHATML)).contains(&"prefix-unstable"));
}

#[test]
fn marker_balance_on_real_and_crafted_templates() {
    let test = "marker_balance_on_real_and_crafted_templates";
    // Apertus closes an assistant turn only when a user turn follows.
    let Some(apertus) = corpus_lint(test, "Apertus-8B-Instruct") else {
        return;
    };
    let open = finding(&apertus, "marker-balance");
    assert!(
        open.message.contains("<|assistant_start|> opened at byte"),
        "{}",
        open.message
    );
    assert!(
        open.message.contains("never closed by <|assistant_end|>"),
        "{}",
        open.message
    );
    assert!(open.location.is_some());
    // Bielik 11B v3 closes a tool result's turn by looking at messages[loop.index0 + 1]
    // of the loop without the system message: one message off after a system message.
    let bielik = corpus_lint(test, "Bielik-11B-v3.0-Instruct").unwrap();
    let off = finding(&bielik, "marker-balance");
    assert!(
        off.message
            .contains("<|im_start|> opens again before <|im_end|>"),
        "{}",
        off.message
    );
    assert!(
        off.scenario
            .as_deref()
            .is_some_and(|s| s.starts_with("system →")),
        "{off:#?}"
    );
    assert_evidence(off, "ToolResultNeedle9021<|im_start|>assistant");
    // GigaChat mentions <instruction_priority> in prose before the block itself.
    for sound in [
        "Qwen-Qwen2.5-7B-Instruct",
        "GigaChat3-10B-A1.8B",
        "Qwen3-Coder",
        "openai-gpt-oss-120b",
    ] {
        let report = corpus_lint(test, sound).unwrap();
        assert!(
            !rules(&report).contains(&"marker-balance"),
            "{sound}: {:#?}",
            report.findings
        );
    }
    let unclosed = crafted(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% if m.role != 'assistant' %}<|im_end|>{% endif %}\n{% endfor %}\
         {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    );
    let finding = finding(&unclosed, "marker-balance");
    assert!(
        finding
            .message
            .contains("<|im_start|> opens again before <|im_end|>"),
        "{}",
        finding.message
    );
}

#[test]
fn generation_prompt_that_the_turn_does_not_start_with() {
    let test = "generation_prompt_that_the_turn_does_not_start_with";
    // R1's generation prompt opens <think>; its history shows no reasoning.
    let Some(r1) = corpus_lint(test, "deepseek-ai-DeepSeek-R1-Distill-Llama-8B") else {
        return;
    };
    let found = finding(&r1, "generation-prompt");
    assert!(
        found
            .evidence
            .as_deref()
            .is_some_and(|e| e.contains("<think>")),
        "{found:#?}"
    );
    // No generation prompt at all ([INST]...[/INST], then the reply) is consistent.
    for sound in [
        "Qwen-Qwen2.5-7B-Instruct",
        "mistralai-Mistral-Nemo-Instruct-2407",
    ] {
        let report = corpus_lint(test, sound).unwrap();
        assert!(
            !rules(&report).contains(&"generation-prompt"),
            "{sound}: {:#?}",
            report.findings
        );
    }
}

#[test]
fn zero_mask_without_generation_blocks_and_with_them() {
    let test = "zero_mask_without_generation_blocks_and_with_them";
    let Some(qwen) = corpus_lint(test, "Qwen-Qwen3-0.6B") else {
        return;
    };
    assert_eq!(finding(&qwen, "zero-mask").severity, Severity::Info);
    let lfm = corpus_lint(test, "LFM2.5-8B-A1B").unwrap();
    assert_lacks(&lfm, "zero-mask");
    // A block that leaves the reply out is a warning.
    let outside = crafted(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% generation %}<|im_end|>{% endgeneration %}\n{% endfor %}\
         {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    );
    assert_eq!(finding(&outside, "zero-mask").severity, Severity::Warning);
}

#[test]
fn mask_covering_what_the_generation_prompt_supplies() {
    let training =
        std::fs::read_to_string(common::repo().join("tests/fixtures/masks/qwen3-training.jinja"))
            .unwrap();
    let sound = crafted(&training);
    assert_lacks(&sound, "mask-untrained-prefix");
    // The same template with the turn header moved inside the block.
    let header_inside = training.replace(
        "{{- '<|im_start|>assistant\\n' }}\n        {%- generation %}",
        "{%- generation %}\n        {{- '<|im_start|>assistant\\n' }}",
    );
    assert_ne!(header_inside, training);
    let report = crafted(&header_inside);
    let found = finding(&report, "mask-untrained-prefix");
    assert!(
        found.message.contains("\"<|im_start|>assistant\\n\""),
        "{}",
        found.message
    );
    let Some(lfm) = corpus_lint(
        "mask_covering_what_the_generation_prompt_supplies",
        "LFM2.5-8B-A1B",
    ) else {
        return;
    };
    assert_lacks(&lfm, "mask-untrained-prefix");
}

#[test]
fn clock_dependent_prompts() {
    let test = "clock_dependent_prompts";
    let Some(llama32) = corpus_lint(test, "meta-llama-Llama-3.2-3B-Instruct") else {
        return;
    };
    let clock = finding(&llama32, "clock");
    assert_eq!(clock.severity, Severity::Info);
    assert!(clock.location.is_some());
    // 3.1 names a fixed date.
    let llama31 = corpus_lint(test, "meta-llama-Llama-3.1-8B-Instruct").unwrap();
    assert_lacks(&llama31, "clock");
}

#[test]
fn bundled_templates_pass_by_default() {
    for name in [
        "chatml-with-headers-tools",
        "gemma-3-tools",
        "qwen2.5-reasoning-tools",
    ] {
        let report = bundled(name);
        let errors: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        assert!(report.findings.iter().all(|f| f.rule != Rule::Crash));
    }
}

#[test]
fn portability_from_the_table_and_from_an_engine() {
    let test = "portability_from_the_table_and_from_an_engine";
    // Qwen3 strips with an argument (`.lstrip('\n')`), which @huggingface/jinja ignores.
    let Some(qwen) = corpus_lint(test, "Qwen-Qwen3-0.6B") else {
        return;
    };
    let table = finding(&qwen, "portability");
    assert!(
        table
            .message
            .starts_with(".lstrip(...) hf-jinja (0.5.11) renders differently"),
        "{}",
        table.message
    );
    assert!(table.location.is_some());
    let apertus = corpus_lint(test, "Apertus-8B-Instruct").unwrap();
    assert_lacks(&apertus, "portability");
    // GLM-4.6 passes ensure_ascii to tojson, which bare MiniJinja refuses: rendered there.
    let corpus = common::corpus_dir(test).unwrap();
    let (template, mut options) = corpus_template(&corpus, "GLM-4.6");
    options.engines = vec![chatplate_core::compare::Engine::MiniJinja];
    let report = lint_with(
        &template,
        &Surroundings::default(),
        &options,
        &Default::default(),
    )
    .unwrap();
    let rendered = finding(&report, "portability");
    assert!(
        rendered.message.starts_with("minijinja (minijinja 3.1.0"),
        "{}",
        rendered.message
    );
    assert!(
        rendered
            .evidence
            .as_deref()
            .is_some_and(|e| e.contains("minijinja:")),
        "{rendered:#?}"
    );
}
