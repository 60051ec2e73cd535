//! `inspect`'s training answers agree with transformers' assistant masks: for every
//! small template of the mask goldens (tests/fixtures/masks/goldens.json, written by
//! `scripts/make_mask_goldens.py` from transformers 5.23), rendered with `[user "Hi",
//! assistant "Hello there"]`,
//!
//! * a template whose mask trains a token on some real tokenizer has generation markers
//!   (`{%+ generation %}` included: transformers' tag test misses it, but only warns);
//! * `stop_token_trained` is whether transformers' `generation_indices` cover the first
//!   text after the reply, past any whitespace (`{{ m.content }} {{ '<|eot_id|>' }}`
//!   inside the block trains `<|eot_id|>`).

use chatplate_core::inspect::{inspect_template, ProbeSettings};
use chatplate_render::{CancelToken, CompiledTemplate, Limits};
use serde_json::Value as Json;

/// The assistant's reply in the goldens' short conversation.
const REPLY: &str = "Hello there";

fn edge_cases() -> Vec<Json> {
    let path = crate::common::repo().join("tests/fixtures/masks/goldens.json");
    let goldens: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    goldens["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["name"].as_str().unwrap().starts_with("edge/"))
        .cloned()
        .collect()
}

/// Whether transformers' mask trains any token, on any of the real tokenizers.
fn trains_something(case: &Json) -> bool {
    case["masks"].as_object().unwrap().values().any(|m| {
        m["mask"]
            .as_array()
            .is_some_and(|mask| mask.contains(&Json::from(1)))
    })
}

/// transformers' answer: whether its spans cover the first non-whitespace character after
/// the reply; `None` when the reply is not in the prompt as written.
fn stop_trained(case: &Json) -> Option<bool> {
    let prompt = case["prompt"].as_str().unwrap();
    let end = prompt.find(REPLY)? + REPLY.len();
    let Some(offset) = prompt[end..].find(|ch: char| !ch.is_whitespace()) else {
        return Some(false);
    };
    let at = prompt[..end + offset].chars().count();
    let spans = case["spans"].as_array().unwrap();
    Some(spans.iter().any(|span| {
        let (start, stop) = (span[0].as_u64().unwrap(), span[1].as_u64().unwrap());
        (start..stop).contains(&(at as u64))
    }))
}

#[test]
fn inspect_s_training_answers_agree_with_transformers_masks() {
    let cases = edge_cases();
    assert!(cases.len() >= 19, "{} edge cases", cases.len());
    let mut stop_compared = 0;
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let template =
            CompiledTemplate::compile(case["template"].as_str().unwrap(), Limits::default())
                .unwrap();
        let report =
            inspect_template(&template, &ProbeSettings::default(), &CancelToken::new()).unwrap();
        let training = &report.capabilities.training;
        if trains_something(case) {
            assert!(
                training.has_generation_markers.value,
                "{name}: transformers trains tokens, inspect says no markers ({})",
                training.has_generation_markers.observed
            );
        }
        if let Some(trained) = stop_trained(case) {
            assert_eq!(
                training.stop_token_trained.value, trained,
                "{name}: {}",
                training.stop_token_trained.observed
            );
            stop_compared += 1;
        }
    }
    assert!(stop_compared >= 15, "{stop_compared} compared");
}
