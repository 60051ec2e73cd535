//! Pinned inspection results for real templates from the conformance corpus, each with
//! the reason the template behaves that way (checked against the template source).

use crate::common;
use std::path::Path;

use chatplate_core::corpus::CorpusTemplate;
use chatplate_core::inspect::{inspect_template, ProbeSettings};
use chatplate_render::{CancelToken, CompiledTemplate, Limits};
use serde_json::{json, Value as Json};

/// The JSON report of corpus template `stem`, probed with its corpus variables.
fn report(corpus: &Path, stem: &str) -> Json {
    let path = corpus.join("templates").join(format!("{stem}.jinja"));
    let read = CorpusTemplate::read(&path).unwrap();
    let settings = ProbeSettings {
        variables: read.variables_with_tokens(),
        ..ProbeSettings::default()
    };
    let source = read.source;
    let template = CompiledTemplate::compile(&source, Limits::default()).unwrap();
    inspect_template(&template, &settings, &CancelToken::new())
        .unwrap()
        .to_json()
}

/// (template, expected values, why).
fn pinned() -> Vec<(&'static str, Json, &'static str)> {
    vec![
        (
            "meta-llama-Llama-3.1-8B-Instruct",
            json!({"supports_tools": true, "requires_object_arguments": true,
                   "supports_parallel_tool_calls": false, "supports_tool_call_id": false,
                   "uses_clock": false, "reasoning_format": "NONE"}),
            "arguments go through `| tojson` (a string is encoded twice); a second call \
             raises 'This model only supports single tool-calls at once!'; ids are never \
             printed; the date is the fixed default date_string '26 Jul 2024'",
        ),
        (
            "meta-llama-Llama-3.2-3B-Instruct",
            json!({"uses_clock": true, "supports_tools": true}),
            "date_string defaults to strftime_now('%d %b %Y')",
        ),
        (
            "Qwen-Qwen3-0.6B",
            json!({"reasoning_format": "REASONING_CONTENT_FIELD", "keeps_past_reasoning": false,
                   "honours_enable_thinking": true, "requires_object_arguments": false,
                   "requires_non_null_content": true, "supports_parallel_tool_calls": true}),
            "reasoning_content is shown only after the last user query; enable_thinking=false \
             adds an empty <think></think> to the generation prompt; string arguments are \
             printed as they are; `'\\n' + content` fails on a missing content",
        ),
        (
            "openai-gpt-oss-120b",
            json!({"reasoning_format": "THINKING_FIELD", "uses_clock": true,
                   "keeps_past_reasoning": false}),
            "the analysis channel reads message.thinking, dropped for turns before the last \
             user message; the system block prints strftime_now's date",
        ),
        (
            "google-gemma-2-2b-it",
            json!({"supports_system_role": false, "system_role": "raises",
                   "requires_alternation": true, "supports_tools": false}),
            "raise_exception('System role not supported') and 'Conversation roles must \
             alternate'",
        ),
        (
            "mistralai-Mistral-Nemo-Instruct-2407",
            json!({"system_role": "merged", "requires_alternation": true,
                   "supports_tool_call_id": true, "requires_object_arguments": true}),
            "the system prompt is put into the last user message; tool results print their \
             tool_call_id; the call's function object goes through tojson, so string \
             arguments are encoded twice",
        ),
        (
            "Kimi-K2-Instruct",
            json!({"supports_tool_calls": false, "supports_tools": true}),
            "its tool-call branch calls list.append, which transformers' immutable sandbox \
             refuses (the corpus records a SecurityError for every tool-call scenario)",
        ),
        (
            "CohereForAI-c4ai-command-r-plus-tool_use",
            json!({"requires_tools_list": true, "supports_tools": true}),
            "loops over `tools` without a guard: tools=None fails, tools=[] renders",
        ),
        (
            "mistralai-Ministral-3-14B-Reasoning-2512",
            json!({"reasoning_format": "THINKING_CONTENT_BLOCK", "requires_alternation": true}),
            "assistant content chunks of type 'thinking' are wrapped in [THINK]...[/THINK]",
        ),
        (
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
            json!({"reasoning_format": "REASONING_CONTENT_FIELD", "reasoning_requires_tools": true,
                   "honours_enable_thinking": true}),
            "reasoning_content is printed only inside <|START_THINKING|> of a message with \
             tool calls; without enable_thinking an empty thinking block closes the prompt",
        ),
        (
            "HuggingFaceTB-SmolLM3-3B",
            json!({"supports_tools": false, "honours_enable_thinking": true}),
            "this version of the template never reads `tools`; enable_thinking picks /think \
             or /no_think in the system block and the generation prompt",
        ),
        (
            "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
            json!({"supports_reasoning": false, "supports_tools": false,
                   "supports_tool_calls": true}),
            "reasoning is cut out of the content at </think>, no reasoning field is read; tool \
             calls are printed but tool definitions never are",
        ),
        (
            "NVIDIA-Nemotron-Nano-v2",
            json!({"system_role": "shown"}),
            "a system-only conversation fails (an undefined value), so own turn and merged \
             cannot be told apart",
        ),
    ]
}

#[test]
fn real_templates_have_their_known_capabilities() {
    let Some(corpus) = common::corpus_dir("real_templates_have_their_known_capabilities") else {
        return;
    };
    let mut failures = Vec::new();
    for (stem, expected, why) in pinned() {
        let report = report(&corpus, stem);
        for (key, value) in expected.as_object().unwrap() {
            if &report[key] != value {
                failures.push(format!(
                    "{stem}: {key} = {} (expected {value}: {why})\n  evidence: {}",
                    report[key], report["evidence"][key]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn real_template_variables_and_their_defaults() {
    let Some(corpus) = common::corpus_dir("real_template_variables_and_their_defaults") else {
        return;
    };
    let names = |stem: &str| -> Vec<(String, Json)> {
        let report = report(&corpus, stem);
        report["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap().to_string(),
                    v["default"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        names("meta-llama-Llama-3.1-8B-Instruct"),
        vec![
            ("builtin_tools".into(), Json::Null),
            ("custom_tools".into(), Json::Null),
            ("date_string".into(), json!({"value": "26 Jul 2024"})),
            ("tools_in_user_message".into(), json!({"value": true})),
        ]
    );
    assert_eq!(
        names("openai-gpt-oss-120b"),
        vec![
            ("builtin_tools".into(), Json::Null),
            (
                "model_identity".into(),
                json!({"value": "You are ChatGPT, a large language model trained by OpenAI."})
            ),
            ("reasoning_effort".into(), json!({"value": "medium"})),
        ]
    );
    assert_eq!(
        names("meta-llama-Llama-3.2-3B-Instruct")[1],
        (
            "date_string".into(),
            json!({"expression": "strftime_now(\"%d %b %Y\")"})
        )
    );
}
