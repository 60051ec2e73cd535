//! chatplate's `response_template` parser against transformers 5.23's `parse_response`:
//! every case of tests/data/parse/goldens.json (written by scripts/make_parse_goldens.py
//! from transformers itself) must give the same message, or the same error class and
//! message, byte for byte once serialised.

use chatplate_core::parse::parse_with_spec;
use serde_json::Value;

const GOLDENS: &str = include_str!("../../../../tests/data/parse/goldens.json");

/// The outcome as the goldens write it: the message, or `{"error": {...}}`.
fn outcome(case: &Value, goldens: &Value) -> Value {
    let schema = &goldens["schemas"][case["schema"].as_str().unwrap()]["schema"];
    // `true`: the shared tools; a list: the case's own; `false`: none.
    let tools: Vec<Value> = match &case["tools"] {
        Value::Bool(true) => goldens["tools"].as_array().unwrap().clone(),
        Value::Array(own) => own.clone(),
        _ => Vec::new(),
    };
    let text = case["response"].as_str().unwrap();
    let prefix = case["prefix"].as_str().unwrap();
    parse_with_spec(text, schema, prefix, &tools).unwrap_or_else(|e| e.to_json())
}

#[test]
fn every_golden_matches_transformers() {
    let goldens: Value = serde_json::from_str(GOLDENS).unwrap();
    let cases = goldens["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for case in cases {
        let got = outcome(case, &goldens);
        // Compared as text: key order and number spelling are part of the contract.
        let text = |value: &Value| serde_json::to_string(value).unwrap();
        if text(&got) != text(&case["expected"]) {
            failures.push(format!(
                "{}\n  expected {}\n  got      {}",
                case["id"], case["expected"], got
            ));
        }
    }
    println!(
        "parse goldens: {}/{} match transformers 5.23",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_goldens_cover_the_shipped_schemas_and_the_realistic_outputs() {
    let goldens: Value = serde_json::from_str(GOLDENS).unwrap();
    let ids: Vec<&str> = goldens["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for needle in [
        "transformers/qwen2:",
        "transformers/gemma4:",
        "trl/gptoss:",
        "chatplate/mistral-tool-calls:",
        ":parallel",
        ":text-before-call",
        ":malformed",
        ":truncated",
        ":casting",
        ":reasoning",
        "edge/type/content-list",
        "edge/type/string-delims-",
        "edge/hostile/variable-look-behind",
    ] {
        assert!(
            ids.iter().any(|id| id.contains(needle)),
            "no golden case for {needle}"
        );
    }
}

#[test]
fn every_bundled_template_ships_a_schema_the_goldens_check() {
    // templates/NAME.response_template.json, built into the binary, must be the schema
    // transformers ran as `chatplate/NAME` when the goldens were written.
    let goldens: Value = serde_json::from_str(GOLDENS).unwrap();
    for template in chatplate_core::catalog::bundled() {
        let name = &template.name;
        let text = chatplate_core::catalog::bundled_schema(name)
            .unwrap_or_else(|| panic!("{name} ships no response_template"));
        let shipped: Value = serde_json::from_str(text).unwrap();
        let checked = &goldens["schemas"][format!("chatplate/{name}")]["schema"];
        assert_eq!(&shipped, checked, "{name}");
    }
}
