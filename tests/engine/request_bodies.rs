//! OpenAI Chat Completions request bodies, in the shapes vLLM, llama.cpp's server and
//! SGLang document (`tests/fixtures/requests/`), imported as sessions, rendered, and
//! exported back without losing a key.

use std::path::PathBuf;

use chatplate_core::catalog::{self, TemplateSource};
use chatplate_core::check::render_with;
use chatplate_core::request::{self, ImportOptions, Imported};
use chatplate_core::session::{ContinueSetting, TemplateRef};
use serde_json::{json, Value as Json};

fn body(name: &str) -> Json {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/requests")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn import(name: &str) -> Imported {
    request::import(body(name), &ImportOptions::default()).unwrap()
}

fn template_of(imported: &Imported) -> TemplateSource {
    catalog::resolve_for(
        &imported.session,
        std::path::Path::new("."),
        &catalog::TemplateAccess::Anywhere,
    )
    .unwrap()
}

#[test]
fn a_vllm_tool_call_body_maps_every_key_and_keeps_the_rest() {
    let imported = import("vllm-tools.json");
    let session = &imported.session;
    assert_eq!(session.messages.len(), 4);
    assert_eq!(session.messages[3].0["tool_call_id"], "call_1");
    assert_eq!(session.tools.as_ref().map(Vec::len), Some(1));
    assert_eq!(session.documents.as_ref().map(Vec::len), Some(1));
    assert_eq!(session.variables["enable_thinking"], false);
    assert!(session.add_generation_prompt);
    assert_eq!(
        imported.kept,
        [
            "model",
            "tool_choice",
            "temperature",
            "max_tokens",
            "stream"
        ]
    );
    // The arguments stay the JSON string the body has, and the user is told.
    let call = &session.messages[2].0["tool_calls"][0]["function"]["arguments"];
    assert_eq!(call, "{\"city\": \"Paris\"}");
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.contains("1 tool-call arguments are JSON strings")),
        "{:?}",
        imported.notes
    );
    // Qwen/Qwen3-8B is not in this machine's test cache: the bundled default, said so.
    assert!(matches!(
        session.template,
        TemplateRef::Bundled(_) | TemplateRef::Model { .. }
    ));
    let prompt = render_with(session, &template_of(&imported), Default::default()).unwrap();
    assert!(prompt.contains("18°C, cloudy"), "{prompt}");
}

#[test]
fn string_arguments_can_be_parsed_like_vllm() {
    let options = ImportOptions {
        parse_arguments: true,
        ..ImportOptions::default()
    };
    let imported = request::import(body("vllm-tools.json"), &options).unwrap();
    let call = &imported.session.messages[2].0["tool_calls"][0]["function"]["arguments"];
    assert_eq!(call, &json!({"city": "Paris"}));
}

#[test]
fn a_llama_cpp_body_keeps_content_parts_reasoning_and_server_options() {
    let imported = import("llamacpp-parts.json");
    let session = &imported.session;
    assert!(session.messages[0].0["content"].is_array());
    assert_eq!(
        session.messages[1].0["reasoning_content"],
        "One word: vast."
    );
    assert_eq!(session.variables["enable_thinking"], true);
    assert!(!session.variables.contains_key("add_generation_prompt"));
    assert!(session.add_generation_prompt, "the servers' default");
    assert_eq!(
        imported.kept,
        [
            "model",
            "n_predict",
            "cache_prompt",
            "id_slot",
            "response_format",
            "chat_template_kwargs"
        ]
    );
    assert!(imported
        .notes
        .iter()
        .any(|n| n.contains("chat_template_kwargs add_generation_prompt would override")));
    assert_eq!(
        session.request["chat_template_kwargs"],
        json!({"add_generation_prompt": false})
    );
}

#[test]
fn an_sglang_body_with_its_own_template_continues_the_final_message() {
    let imported = import("sglang-continue.json");
    let session = &imported.session;
    assert!(matches!(session.template, TemplateRef::Source(_)));
    assert_eq!(session.continue_final_message, ContinueSetting::Flag(true));
    assert!(!session.add_generation_prompt);
    assert_eq!(imported.kept, ["model", "separate_reasoning", "stream"]);
    let prompt = render_with(session, &template_of(&imported), Default::default()).unwrap();
    // As transformers renders it (trim_blocks eats the newline after the block tag).
    assert_eq!(
        prompt,
        "[user:ada] Write a haiku about rust.[assistant] Iron wakes to red,"
    );
}

#[test]
fn export_writes_back_every_key_of_the_body() {
    for name in [
        "vllm-tools.json",
        "llamacpp-parts.json",
        "sglang-continue.json",
    ] {
        let original = body(name);
        let imported = import(name);
        let exported = request::export(&imported.session, &template_of(&imported));
        let Json::Object(fields) = &original else {
            panic!()
        };
        for (key, value) in fields {
            // A body's own template goes back as it came; a bundled fallback is added.
            assert_eq!(exported.body.get(key), Some(value), "{name}: {key}");
        }
        let extra: Vec<&String> = exported
            .body
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !fields.contains_key(*k))
            .collect();
        for key in extra {
            assert!(
                ["add_generation_prompt", "chat_template"].contains(&key.as_str()),
                "{name}: added {key}"
            );
        }
    }
}

#[test]
fn bad_bodies_are_clear_errors() {
    let err = |body: Json| {
        request::import(body, &ImportOptions::default())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err(json!([1])), "a request body must be a JSON object");
    assert_eq!(
        err(json!({"model": "x"})),
        "\"messages\" must be a list of messages"
    );
    let no_role = err(json!({"messages": [{"role": "user", "content": "a"}, {"content": "b"}]}));
    assert!(
        no_role.starts_with("messages[1]: message has no \"role\""),
        "{no_role}"
    );
    assert_eq!(
        err(json!({"messages": [], "tools": {}})),
        "\"tools\" must be a list"
    );
    assert!(!request::looks_like_request(
        &json!({"version": 1, "messages": []})
    ));
    assert!(request::looks_like_request(&body("vllm-tools.json")));
}

#[cfg(feature = "tui")]
#[test]
fn the_app_opens_a_body_as_a_new_session() {
    use chatplate::tui::files::startup::open;
    use chatplate::tui::TuiOptions;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/requests/sglang-continue.json");
    let opened = open(&TuiOptions {
        file: Some(path),
        ..TuiOptions::default()
    })
    .unwrap();
    assert_eq!(opened.workspace.path, None, "never saved over the body");
    assert_eq!(opened.workspace.session.messages.len(), 2);
    assert!(opened
        .workspace
        .template
        .origin_label()
        .starts_with("request "));
    let notice = opened.notice.unwrap_or_default();
    assert!(
        notice.contains("kept from the request: model, separate_reasoning, stream"),
        "{notice}"
    );
}
