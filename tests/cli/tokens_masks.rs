//! `chatplate tokens` with assistant masks, as a user runs it: `assistant_mask` equals
//! transformers 5.23's `assistant_masks` (the goldens of `scripts/make_mask_goldens.py`,
//! on the real Qwen3 tokenizer, skipped without it), trained tokens are marked in the
//! table, and a conversation whose mask is all zero gets a warning.

#![cfg(feature = "tokens")]

use std::path::Path;

use crate::common::binary::{chatplate, stderr, stdout};
use crate::tokens_support::{real_tokenizer, write_tiny_tokenizer, CHATML};
use serde_json::{json, Value as Json};

fn golden(name: &str) -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/masks/goldens.json");
    let goldens: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = goldens["cases"].as_array().unwrap();
    cases.iter().find(|c| c["name"] == name).unwrap().clone()
}

/// A session of the golden case `name` in `dir`, its template copied beside it.
fn golden_session(dir: &Path, name: &str) -> Json {
    let case = golden(name);
    let file = case["template_file"].as_str().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/masks");
    std::fs::copy(fixtures.join(file), dir.join(file)).unwrap();
    let session = json!({
        "version": 1,
        "template": {"path": file},
        "messages": case["messages"],
        "tools": case["tools"],
        "add_generation_prompt": case["add_generation_prompt"],
        "variables": {"bos_token": case["bos_token"], "eos_token": case["eos_token"]},
    });
    std::fs::write(dir.join("f.json"), session.to_string()).unwrap();
    case
}

fn json_line(dir: &Path, args: &[&str]) -> Json {
    let output = chatplate(args, dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_str(stdout(&output).trim()).unwrap()
}

#[test]
fn assistant_mask_equals_transformers_on_a_training_template() {
    let Some(qwen3) = real_tokenizer("qwen3", "tokens --json assistant_mask") else {
        return;
    };
    for name in ["qwen3-training/tools", "llama3.1-training/chat"] {
        let dir = tempfile::tempdir().unwrap();
        let case = golden_session(dir.path(), name);
        let tokenizer = qwen3.to_str().unwrap();
        let got = json_line(
            dir.path(),
            &["tokens", "f.json", "--json", "--tokenizer", tokenizer],
        );
        assert_eq!(got["ids"], case["masks"]["qwen3"]["ids"], "{name}");
        assert_eq!(
            got["assistant_mask"], case["masks"]["qwen3"]["mask"],
            "{name}"
        );
        assert_eq!(got["has_generation_markers"], true);
    }
}

/// A fixture on the tiny tokenizer with `template`.
fn tiny_fixture(dir: &Path, template: &str, messages: Json) {
    write_tiny_tokenizer(&dir.join("model"), &Json::Null);
    let session = json!({
        "version": 1,
        "template": {"source": template},
        "tokenizer": "model",
        "messages": messages,
    });
    std::fs::write(dir.join("f.json"), session.to_string()).unwrap();
}

#[test]
fn without_markers_the_mask_is_all_zero_and_markers_covering_nothing_warn() {
    let dir = tempfile::tempdir().unwrap();
    let chat = json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hi w"}]);
    tiny_fixture(dir.path(), CHATML, chat.clone());
    let output = chatplate(&["tokens", "f.json", "--json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "",
        "inference prompts are not warned about"
    );
    let got: Json = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(got["has_generation_markers"], false);
    let mask = got["assistant_mask"].as_array().unwrap();
    assert_eq!(mask.len(), got["count"].as_u64().unwrap() as usize);
    assert!(mask.iter().all(|flag| flag == 0));

    // An empty block at the prompt's end: transformers finds no start token.
    tiny_fixture(
        dir.path(),
        &format!("{CHATML}{{% generation %}}{{% endgeneration %}}"),
        chat,
    );
    let output = chatplate(&["tokens", "f.json", "--json"], dir.path());
    assert!(
        stderr(&output).contains("warning: f.json: the assistant mask is all zero (the template's {% generation %} blocks cover no token)"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn trained_tokens_are_marked_in_the_table_and_an_empty_span_at_0_fails() {
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}{{ m.role }}:{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}";
    let chat = json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hi"}]);
    tiny_fixture(dir.path(), template, chat.clone());
    let output = chatplate(&["tokens", "f.json"], dir.path());
    let text = stdout(&output);
    assert!(text.contains("\"Hi\"  trained"), "{text}");
    assert!(text.contains("\"<|im_end|>\"  special  trained"), "{text}");
    assert!(text.contains("(1 special, 2 trained, "), "{text}");

    // transformers asks for character -1 and Python raises OverflowError.
    let empty =
        "{% generation %}{% endgeneration %}{% for m in messages %}{{ m.content }}{% endfor %}";
    tiny_fixture(dir.path(), empty, chat);
    let output = chatplate(&["tokens", "f.json", "--json"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("OverflowError"),
        "{}",
        stderr(&output)
    );
    let got: Json = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(got["assistant_mask"], Json::Null);
}
