//! Attribution, dropped fields and prefix stability, on purpose-built templates and on
//! real ones from the conformance corpus.

use crate::common;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chatplate_core::inspect::{
    attribute, dropped_fields, message_span, prefix_stability, source_at, Attribution,
    EarlierPrompt, Part, Source, ToolsBlock,
};
use chatplate_core::session::Session;
use chatplate_render::{CancelToken, CompiledTemplate, ContinueFinal, Conversation, Limits};
use serde_json::json;

fn compile(source: &str) -> CompiledTemplate {
    CompiledTemplate::compile(source, Limits::default()).expect("compiles")
}

fn conversation(messages: serde_json::Value) -> Conversation {
    Conversation::new(messages.as_array().unwrap().clone())
}

/// The text of each span, with its source.
fn pieces<'p>(attribution: &Attribution, prompt: &'p str) -> Vec<(Source, &'p str)> {
    attribution
        .spans
        .iter()
        .map(|s| (s.source, &prompt[s.range.clone()]))
        .collect()
}

fn assert_covers(attribution: &Attribution) {
    let mut at = 0;
    for span in &attribution.spans {
        assert_eq!(span.range.start, at, "spans are contiguous");
        assert!(!span.range.is_empty());
        at = span.range.end;
    }
    assert_eq!(at, attribution.prompt_len, "spans cover the prompt");
}

const CHAT: &str =
    "<s>{% if tools %}[TOOLS {% for t in tools %}{{ t.name }}{% endfor %}]{% endif %}\
{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}\
{% if add_generation_prompt %}<assistant>{% endif %}";

#[test]
fn a_monotone_template_is_attributed_exactly() {
    let template = compile(CHAT);
    let mut input = conversation(json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]));
    input.tools = Some(vec![json!({"name": "search"})]);
    input.add_generation_prompt = true;
    let prompt = template.render(&input).unwrap();
    let attribution = attribute(&template, &input, &CancelToken::new()).unwrap();
    assert!(attribution.monotone());
    assert_covers(&attribution);
    assert_eq!(
        pieces(&attribution, &prompt),
        vec![
            (Source::Preamble, "<s>"),
            (Source::Tools, "[TOOLS search]"),
            (Source::Message(0), "<system>Be brief.</system>"),
            (Source::Message(1), "<user>Hi</user>"),
            (Source::Message(2), "<assistant>Hello</assistant>"),
            (Source::Message(3), "<user>Bye</user>"),
            (Source::GenerationPrompt, "<assistant>"),
        ]
    );
    assert_eq!(attribution.message_bytes(), vec![26, 15, 28, 16]);
    assert_eq!(attribution.source_at(4), Some(Source::Tools));
    assert_eq!(attribution.ranges_of(1), vec![43..58]);
}

#[test]
fn a_template_that_rewrites_the_last_message_is_not_monotone() {
    // The last message is marked; once another follows, the mark moves.
    let source = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% if loop.last %} (latest){% endif %}\n{% endfor %}";
    let template = compile(source);
    let input = conversation(json!([
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]));
    let prompt = template.render(&input).unwrap();
    let attribution = attribute(&template, &input, &CancelToken::new()).unwrap();
    assert!(!attribution.monotone());
    assert_eq!(attribution.breaks(), vec![1, 2]);
    assert_covers(&attribution);
    let got = pieces(&attribution, &prompt);
    // Each message's own text is still exact; the markup between two messages is only
    // known to belong to one of the two.
    assert!(got.contains(&(Source::Message(0), "<user>one")), "{got:?}");
    assert!(got.contains(&(Source::Message(1), "two")), "{got:?}");
    assert!(got.contains(&(Source::Message(2), "three")), "{got:?}");
    // " (latest)" first appears with message 2, but the first message alone was marked
    // too: only a range can be proven.
    assert!(got.contains(&(
        Source::Ambiguous {
            from: Part::Message(0),
            to: Part::Message(2)
        },
        " (latest)"
    )));
    assert!(got.contains(&(
        Source::Ambiguous {
            from: Part::Message(0),
            to: Part::Message(1)
        },
        "<assistant>"
    )));
    assert!(attribution.ambiguous_bytes() > 0);
}

#[test]
fn a_continued_final_message_is_the_continuation() {
    let template = compile(CHAT);
    let mut input = conversation(json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hel"},
    ]));
    input.continue_final_message = ContinueFinal::content();
    let prompt = template.render(&input).unwrap();
    assert!(prompt.ends_with("<assistant>Hel"));
    let attribution = attribute(&template, &input, &CancelToken::new()).unwrap();
    let got = pieces(&attribution, &prompt);
    assert_eq!(
        got.last(),
        Some(&(Source::Continuation(1), "<assistant>Hel"))
    );
}

#[test]
fn unused_values_are_found_by_perturbation() {
    let source = "{% for m in messages %}{{ m.role }}: {{ m.content }}{% for c in m.tool_calls or [] %} call {{ c.function.name }}({{ c.function.arguments }}){% endfor %}\n{% endfor %}";
    let template = compile(source);
    let mut input = conversation(json!([
        {"role": "user", "content": "Weather?", "name": "ann", "mood": "curious"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call1", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
        {"role": "tool", "tool_call_id": "call1", "content": "cold"},
    ]));
    input.tools = Some(vec![
        json!({"type": "function", "function": {"name": "weather"}}),
    ]);
    input
        .variables
        .insert("enable_thinking".into(), json!(true));
    let dropped = dropped_fields(&template, &input, &CancelToken::new()).unwrap();
    let unused: Vec<String> = dropped
        .unused()
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    assert_eq!(
        unused,
        vec![
            "messages[0].name",
            "messages[0].mood",
            "messages[1].tool_calls[0].id",
            "messages[2].tool_call_id",
            "tools[0]",
            "variables.enable_thinking",
        ]
    );
    assert_eq!(dropped.checks.len(), 11);
    assert_eq!(dropped.unused_in_message(2).len(), 1);
}

#[test]
fn a_length_check_is_a_use() {
    // Rotating keeps the length, so the second change (appending) must catch this.
    let source = "{% for m in messages %}{{ m.content | length }}{% endfor %}";
    let template = compile(source);
    let input = conversation(json!([{"role": "user", "content": "abc"}]));
    let dropped = dropped_fields(&template, &input, &CancelToken::new()).unwrap();
    assert!(dropped.unused().is_empty());
}

#[test]
fn stripping_past_reasoning_breaks_prefix_stability() {
    let source = "{% set ns = namespace(last=0) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}\
        {% for m in messages %}<{{ m.role }}>{% if m.reasoning_content and loop.index0 > ns.last %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}\n{% endfor %}\
        {% if add_generation_prompt %}<assistant>{% endif %}";
    let template = compile(source);
    let input = conversation(json!([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "greet"},
    ]));
    let stability = prefix_stability(&template, &input, &CancelToken::new()).unwrap();
    assert!(!stability.stable());
    let history = &stability.checks[0];
    assert_eq!(
        history.earlier_prompt,
        EarlierPrompt::WithoutGenerationPrompt
    );
    assert_eq!(history.differs_at, Some(20));
    assert_eq!(history.responsible, Some(Source::Message(1)));
    assert!(history.earlier[20..].starts_with("<think>greet"));
    let request = &stability.checks[1];
    assert_eq!(
        request.differs_at, None,
        "the request itself stays a prefix"
    );

    let plain = compile(CHAT);
    let stability = prefix_stability(&plain, &input, &CancelToken::new()).unwrap();
    assert!(stability.stable());
}

/// The corpus as fixtures, imported once for this test binary (an import writes 798
/// files).
fn corpus_fixtures(corpus: &Path) -> &'static [PathBuf] {
    static FIXTURES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect-corpus");
        chatplate_core::corpus::import(corpus, &dir).expect("corpus imports")
    })
}

/// The session of one corpus case.
fn corpus_session(path: &Path) -> (CompiledTemplate, Conversation) {
    let session = Session::load(path).unwrap();
    let source = chatplate_core::catalog::resolve(
        &session.template,
        path.parent().unwrap(),
        &chatplate_core::catalog::TemplateAccess::Anywhere,
    )
    .unwrap()
    .source;
    (compile(&source), session.conversation().unwrap())
}

fn corpus_case(corpus: &Path, stem: &str, scenario: &str) -> (CompiledTemplate, Conversation) {
    let path = corpus_fixtures(corpus)
        .iter()
        .find(|p| p.ends_with(format!("{stem}/{scenario}.json")))
        .expect("case exists");
    corpus_session(path)
}

#[test]
fn llama_tools_are_found_in_the_system_and_first_user_turns() {
    let Some(corpus) = common::corpus_dir("llama_tools_are_found") else {
        return;
    };
    let (template, input) = corpus_case(
        &corpus,
        "meta-llama-Llama-3.1-8B-Instruct",
        "05_tool_call_args_object",
    );
    let prompt = template.render(&input).unwrap();
    let attribution = attribute(&template, &input, &CancelToken::new()).unwrap();
    assert!(attribution.monotone());
    assert_covers(&attribution);
    let ToolsBlock::Located(ranges) = &attribution.tools else {
        panic!("tools not located: {:?}", attribution.tools);
    };
    assert_eq!(&prompt[ranges[0].clone()], "Environment: ipython\n");
    assert!(prompt[ranges[1].clone()].contains("Given the following functions"));
    for (index, message) in input.messages.iter().enumerate() {
        let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) else {
            continue;
        };
        // Tool results are printed as JSON strings, so search for their longest word.
        let word = text
            .split(|c: char| !c.is_alphanumeric())
            .max_by_key(|w| w.len())
            .unwrap_or(text);
        let at = prompt.find(text).or_else(|| prompt.rfind(word)).unwrap();
        assert_eq!(
            attribution.source_at(at),
            Some(Source::Message(index)),
            "{text}"
        );
    }
}

#[test]
fn qwen3_reasoning_makes_it_non_monotone_but_contents_stay_exact() {
    let Some(corpus) = common::corpus_dir("qwen3_non_monotone") else {
        return;
    };
    let (template, input) = corpus_case(&corpus, "Qwen-Qwen3-0.6B", "12_reasoning_content");
    let prompt = template.render(&input).unwrap();
    let attribution = attribute(&template, &input, &CancelToken::new()).unwrap();
    assert!(!attribution.monotone());
    assert_eq!(attribution.breaks(), vec![2]);
    assert_covers(&attribution);
    for (index, message) in input.messages.iter().enumerate() {
        let text = message["content"].as_str().unwrap();
        let at = prompt.find(text).unwrap();
        assert_eq!(attribution.source_at(at), Some(Source::Message(index)));
    }
    let stability = prefix_stability(&template, &input, &CancelToken::new()).unwrap();
    assert!(
        !stability.stable(),
        "Qwen3 rewrites the last assistant turn"
    );
}

#[test]
fn dropped_ids_and_prefix_stability_on_real_templates() {
    let Some(corpus) = common::corpus_dir("dropped_ids_on_real_templates") else {
        return;
    };
    let unused = |stem: &str| -> Vec<String> {
        let (template, input) = corpus_case(&corpus, stem, "07_parallel_tool_calls");
        let dropped = dropped_fields(&template, &input, &CancelToken::new()).unwrap();
        dropped
            .unused()
            .iter()
            .map(std::string::ToString::to_string)
            .collect()
    };
    // Qwen2.5 never prints tool-call ids; Mistral Nemo prints both.
    let qwen = unused("Qwen-Qwen2.5-7B-Instruct");
    for id in [
        "messages[2].tool_calls[0].id",
        "messages[2].tool_calls[1].id",
        "messages[3].tool_call_id",
    ] {
        assert!(qwen.contains(&id.to_string()), "{qwen:?}");
    }
    let nemo = unused("mistralai-Mistral-Nemo-Instruct-2407");
    assert!(
        !nemo
            .iter()
            .any(|f| f.ends_with(".id") || f.ends_with("tool_call_id")),
        "{nemo:?}"
    );
    // It puts the system prompt into the last user message, so a conversation that
    // ends with tool results loses it.
    assert!(
        nemo.contains(&"messages[0].content".to_string()),
        "{nemo:?}"
    );

    let stable = |stem: &str| {
        let (template, input) = corpus_case(&corpus, stem, "03_multi_turn");
        prefix_stability(&template, &input, &CancelToken::new()).unwrap()
    };
    assert!(stable("meta-llama-Llama-3.1-8B-Instruct").stable());
    let r1 = stable("deepseek-ai-DeepSeek-R1-Distill-Llama-8B");
    let request = &r1.checks[1];
    assert_eq!(request.earlier_prompt, EarlierPrompt::WithGenerationPrompt);
    assert!(
        request.earlier.ends_with("<think>\n"),
        "the generation prompt opens <think>"
    );
    assert_eq!(request.responsible, Some(Source::GenerationPrompt));
}

/// On every corpus template, the cheap queries never contradict the full attribution.
#[test]
fn queries_agree_with_the_full_attribution() {
    let Some(corpus) = common::corpus_dir("queries_agree") else {
        return;
    };
    let cancel = CancelToken::new();
    let mut checked = 0;
    let cases = corpus_fixtures(&corpus).iter();
    for path in cases.filter(|p| p.ends_with("03_multi_turn.json")) {
        let (template, input) = corpus_session(path);
        let Ok(prompt) = template.render(&input) else {
            continue;
        };
        let full = attribute(&template, &input, &cancel).unwrap();
        for index in 0..input.messages.len() {
            if let Some(range) = message_span(&template, &input, &prompt, index, &cancel).unwrap() {
                for offset in range {
                    let found = full.source_at(offset);
                    assert!(
                        matches!(found, Some(Source::Message(i)) if i == index)
                            || found == Some(Source::Tools),
                        "{}: byte {offset}: span query says message {index}, full says {found:?}",
                        path.display()
                    );
                }
            }
        }
        for offset in (0..prompt.len()).step_by(29) {
            if let Some(source) = source_at(&template, &input, &prompt, offset, &cancel).unwrap() {
                let found = full.source_at(offset);
                assert!(
                    found == Some(source) || found == Some(Source::Tools),
                    "{}: byte {offset}: query says {source:?}, full says {found:?}",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} offsets answered");
}
