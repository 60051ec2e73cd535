//! Assistant masks against transformers 5.23 (`scripts/make_mask_goldens.py` wrote
//! tests/fixtures/masks/goldens.json): the `{% generation %}` spans the renderer records
//! equal transformers' `generation_indices` (always run), and the token masks equal its
//! `assistant_masks` on the five real tokenizers (skipped without them, failing under CI).

use std::path::PathBuf;

use chatplate_core::tokens::{assistant_mask, ModelTokenizer, TokenizerFiles};
use chatplate_render::{CompiledTemplate, Conversation, GenerationSpan, Limits, RenderControl};
use serde_json::{Map, Value as Json};

use crate::common;
use crate::tokens_support::real_tokenizer;

const TOKENIZERS: [&str; 5] = ["qwen3", "llama3_1", "gemma3", "deepseek_v3", "gptoss"];

fn fixtures() -> PathBuf {
    common::repo().join("tests/fixtures/masks")
}

fn goldens() -> Vec<Json> {
    let text = std::fs::read_to_string(fixtures().join("goldens.json")).unwrap();
    let goldens: Json = serde_json::from_str(&text).unwrap();
    goldens["cases"].as_array().unwrap().clone()
}

/// The case's template text; `None` (skipped) for a corpus template without the corpus.
fn template(case: &Json) -> Option<String> {
    if let Some(text) = case["template"].as_str() {
        return Some(text.to_string());
    }
    if let Some(file) = case["template_file"].as_str() {
        return Some(std::fs::read_to_string(fixtures().join(file)).unwrap());
    }
    let file = case["corpus_template"].as_str().unwrap();
    let corpus = common::corpus_dir("masks: corpus template")?;
    Some(std::fs::read_to_string(corpus.join("templates").join(file)).unwrap())
}

fn conversation(case: &Json) -> Conversation {
    let mut variables = Map::new();
    for key in ["bos_token", "eos_token"] {
        variables.insert(key.into(), case[key].clone());
    }
    Conversation::new(case["messages"].as_array().unwrap().clone())
        .with_tools(case["tools"].as_array().cloned())
        .with_generation_prompt(case["add_generation_prompt"].as_bool().unwrap())
        .with_variables(variables)
}

fn spans(case: &Json) -> Vec<GenerationSpan> {
    case["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| GenerationSpan {
            start: pair[0].as_u64().unwrap() as usize,
            end: pair[1].as_u64().unwrap() as usize,
        })
        .collect()
}

/// Every case's prompt and spans, rendered with recording on.
fn rendered() -> Vec<(Json, String, Vec<GenerationSpan>)> {
    let mut out = Vec::new();
    for case in goldens() {
        let Some(source) = template(&case) else {
            continue;
        };
        let compiled = CompiledTemplate::compile(&source, Limits::default()).unwrap();
        let tracked = compiled
            .render_tracked(conversation(&case), &RenderControl::default())
            .unwrap_or_else(|err| panic!("{}: {err}", case["name"]));
        out.push((case, tracked.prompt, tracked.spans));
    }
    out
}

#[test]
fn generation_spans_equal_transformers_generation_indices() {
    let cases = rendered();
    assert!(cases.len() >= 22, "{} cases", cases.len());
    for (case, prompt, got) in &cases {
        let name = &case["name"];
        assert_eq!(prompt, case["prompt"].as_str().unwrap(), "{name}: prompt");
        assert_eq!(got, &spans(case), "{name}: spans");
    }
}

#[test]
fn assistant_masks_equal_transformers_on_real_tokenizers() {
    let cases = rendered();
    let mut compared = 0;
    for name in TOKENIZERS {
        let Some(folder) = real_tokenizer(name, "assistant masks") else {
            return;
        };
        let tokenizer = ModelTokenizer::load(&TokenizerFiles::locate(&folder).unwrap()).unwrap();
        for (case, prompt, spans) in &cases {
            let golden = &case["masks"][name];
            let tokenized = tokenizer.tokenize(prompt).unwrap();
            let label = format!("{} on {name}", case["name"]);
            match assistant_mask(prompt, &tokenized, spans) {
                Ok(mask) => {
                    let ids: Vec<u64> = tokenized.ids().iter().map(|&id| id.into()).collect();
                    assert_eq!(Json::from(ids), golden["ids"], "{label}: ids");
                    assert_eq!(Json::from(mask), golden["mask"], "{label}: mask");
                }
                Err(err) => {
                    let expected = golden["error"].as_str().unwrap_or_else(|| {
                        panic!("{label}: transformers gives a mask, chatplate: {err}")
                    });
                    assert!(err.to_string().starts_with(expected), "{label}: {err}");
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 110, "{compared} compared");
}

#[test]
fn continuing_the_final_message_is_refused_as_transformers_refuses_it() {
    let source =
        "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}";
    let compiled = CompiledTemplate::compile(source, Limits::default()).unwrap();
    let messages = vec![serde_json::json!({"role": "assistant", "content": "Hi"})];
    let conversation =
        Conversation::new(messages).with_continue_final(chatplate_render::ContinueFinal::content());
    let err = compiled
        .render_tracked(conversation, &RenderControl::default())
        .unwrap_err();
    assert_eq!(
        err.message,
        "continue_final_message is not compatible with return_assistant_tokens_mask."
    );
}

#[test]
fn a_failed_render_leaves_nothing_recorded_for_the_next() {
    // Render threads are reused: a render that fails after a block must not leave its
    // recording on for the next render on that thread.
    let source = "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}{% endif %}{% endfor %}";
    let compiled = CompiledTemplate::compile(source, Limits::default()).unwrap();
    let render = |content: &str| {
        let messages = vec![serde_json::json!({"role": "assistant", "content": content})];
        compiled.render_tracked(Conversation::new(messages), &RenderControl::default())
    };
    for _ in 0..4 {
        assert!(render("boom").is_err());
        let tracked = render("Hi").unwrap();
        assert_eq!(tracked.spans, [GenerationSpan { start: 0, end: 2 }]);
    }
    // Plain renders of the same template record nothing and are unchanged.
    let plain = compiled
        .render(&Conversation::new(vec![
            serde_json::json!({"role": "assistant", "content": "Hi"}),
        ]))
        .unwrap();
    assert_eq!(plain, "Hi");
}
