//! chatplate's streaming `ResponseParser` against transformers 5.23's: every case of
//! tests/data/parse/stream_goldens.json (written by scripts/make_stream_goldens.py from
//! transformers itself) fed in every recorded chunking must give the same events, from
//! the same call, and the same final message or error.

use chatplate_core::parse::{
    parse_with_spec, ParseError, ResponseParser, ResponseTemplate, StreamEvent,
};
use serde_json::{json, Value};

const GOLDENS: &str = include_str!("../../../../tests/data/parse/stream_goldens.json");

/// The run as the goldens write it: `events` as [call, event], then `message` or `error`.
fn replay(case: &Value, goldens: &Value, cuts: &[usize]) -> Value {
    let schema = &goldens["schemas"][case["schema"].as_str().unwrap()]["schema"];
    let tools: Vec<Value> = match &case["tools"] {
        Value::Bool(true) => goldens["tools"].as_array().unwrap().clone(),
        Value::Array(own) => own.clone(),
        _ => Vec::new(),
    };
    let response = case["response"].as_str().unwrap();
    let prefix = case["prefix"].as_str().unwrap();
    let mut events = Vec::new();
    let failed = |events: Vec<Value>, e: &ParseError, call: usize| json!({"events": events, "error": {"class": e.class, "message": e.message, "call": call}});
    let template = match ResponseTemplate::load(schema) {
        Ok(template) => template,
        Err(e) => return failed(events, &e, 0),
    };
    let mut parser = match ResponseParser::new(&template, prefix, &tools, &Default::default()) {
        Ok(parser) => parser,
        Err(e) => return failed(events, &e, 0),
    };
    let record = |events: &mut Vec<Value>, call: usize, got: &[StreamEvent]| {
        events.extend(got.iter().map(|e| json!([call, e.to_json()])));
    };
    record(&mut events, 0, parser.initial_events());
    let bytes = byte_offsets(response);
    for (call, pair) in cuts.windows(2).enumerate() {
        let chunk = &response[bytes[pair[0]]..bytes[pair[1]]];
        match parser.feed(chunk) {
            Ok(got) => record(&mut events, call + 1, &got),
            Err(e) => return failed(events, &e, call + 1),
        }
    }
    let last = cuts.len();
    match parser.finalize() {
        Ok((message, got)) => {
            record(&mut events, last, &got);
            json!({"events": events, "message": message})
        }
        Err(e) => failed(events, &e, last),
    }
}

/// The byte offset of every character offset (and of the end).
fn byte_offsets(text: &str) -> Vec<usize> {
    let mut offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    offsets.push(text.len());
    offsets
}

#[test]
fn every_chunking_of_every_golden_matches_transformers() {
    let goldens: Value = serde_json::from_str(GOLDENS).unwrap();
    let cases = goldens["cases"].as_array().unwrap();
    let (mut runs, mut failures) = (0, Vec::new());
    for case in cases {
        for (name, expected) in case["chunkings"].as_object().unwrap() {
            runs += 1;
            let cuts: Vec<usize> = serde_json::from_value(expected["cuts"].clone()).unwrap();
            // The cuts first, as the goldens write them.
            let mut got = json!({"cuts": expected["cuts"]});
            let run = replay(case, &goldens, &cuts);
            got.as_object_mut()
                .unwrap()
                .extend(run.as_object().unwrap().clone());
            let text = |value: &Value| serde_json::to_string(value).unwrap();
            if name == "whole" {
                whole_path_agrees(case, &goldens, expected, &mut failures);
            }
            if text(&got) != text(expected) {
                failures.push(format!(
                    "{} [{name}]\n  expected {}\n  got      {}",
                    case["id"],
                    text(expected),
                    text(&got)
                ));
            }
        }
    }
    println!(
        "stream goldens: {}/{runs} chunkings of {} cases match transformers 5.23",
        runs - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {runs} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `parse_response` (the one-pass parse `chatplate parse` runs on a whole output) gives
/// the message or error transformers' whole run gives: the `tools=` casting and `prefix=`
/// cases of the stream goldens check it too.
fn whole_path_agrees(case: &Value, goldens: &Value, expected: &Value, failures: &mut Vec<String>) {
    let schema = &goldens["schemas"][case["schema"].as_str().unwrap()]["schema"];
    let tools: Vec<Value> = match &case["tools"] {
        Value::Bool(true) => goldens["tools"].as_array().unwrap().clone(),
        Value::Array(own) => own.clone(),
        _ => Vec::new(),
    };
    let response = case["response"].as_str().unwrap();
    let prefix = case["prefix"].as_str().unwrap();
    let got = match parse_with_spec(response, schema, prefix, &tools) {
        Ok(message) => message,
        Err(e) => json!({"class": e.class, "message": e.message}),
    };
    let want = if let Some(message) = expected.get("message") {
        message.clone()
    } else {
        let error = &expected["error"];
        json!({"class": error["class"], "message": error["message"]})
    };
    if got != want {
        failures.push(format!(
            "{} [parse_response]\n  expected {want}\n  got      {got}",
            case["id"]
        ));
    }
}
