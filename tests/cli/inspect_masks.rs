//! `chatplate inspect` on training masks: `has_generation_markers`, `stop_token_trained`,
//! and the warning for an all-zero mask (a template without `{% generation %}`, or a
//! fixture whose assistant turns its blocks do not cover).

use std::path::Path;

use crate::common::binary::{chatplate, stderr, stdout};
use serde_json::{json, Value as Json};

fn training_template() -> String {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/masks");
    fixtures.join("qwen3-training.jinja").display().to_string()
}

fn inspect_json(args: &[&str], dir: &Path) -> (Json, String) {
    let output = chatplate(args, dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (
        serde_json::from_str(&stdout(&output)).unwrap(),
        stderr(&output),
    )
}

#[test]
fn a_training_template_trains_on_its_replies_and_their_end_of_turn() {
    let dir = tempfile::tempdir().unwrap();
    let template = training_template();
    let (report, err) = inspect_json(&["inspect", &template, "--json"], dir.path());
    assert_eq!(report["has_generation_markers"], true);
    assert_eq!(report["stop_token_trained"], true);
    let observed = report["evidence"]["stop_token_trained"]["observed"]
        .as_str()
        .unwrap();
    assert!(
        observed.starts_with("\"<|im_end|>\" after the reply is inside"),
        "{observed}"
    );
    assert_eq!(err, "");
}

#[test]
fn a_stop_token_outside_the_blocks_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let source = "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}";
    std::fs::write(dir.path().join("t.jinja"), source).unwrap();
    let (report, _) = inspect_json(&["inspect", "t.jinja", "--json"], dir.path());
    assert_eq!(report["has_generation_markers"], true);
    assert_eq!(report["stop_token_trained"], false);
    let observed = report["evidence"]["stop_token_trained"]["observed"]
        .as_str()
        .unwrap();
    assert!(
        observed.contains("never trained to end its turn"),
        "{observed}"
    );
}

#[test]
fn a_template_without_blocks_warns_that_the_mask_is_all_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (report, err) = inspect_json(
        &["inspect", "qwen2.5-reasoning-tools", "--json"],
        dir.path(),
    );
    assert_eq!(report["has_generation_markers"], false);
    assert_eq!(report["stop_token_trained"], false);
    assert!(
        err.contains("warning: qwen2.5-reasoning-tools: the assistant mask is all zero for every conversation (no {% generation %} block)"),
        "{err}"
    );
}

#[test]
fn a_fixture_whose_assistant_turns_are_not_covered_warns() {
    let dir = tempfile::tempdir().unwrap();
    let blocks_elsewhere =
        "{% for m in messages %}{{ m.content }}{% endfor %}{% generation %}{% endgeneration %}";
    let session = |messages: Json| {
        json!({"version": 1, "template": {"source": blocks_elsewhere}, "messages": messages})
            .to_string()
    };
    let chat =
        json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]);
    std::fs::write(dir.path().join("f.json"), session(chat)).unwrap();
    let (_, err) = inspect_json(&["inspect", "--fixture", "f.json", "--json"], dir.path());
    assert!(
        err.contains("the assistant mask is all zero for this conversation (its {% generation %} blocks cover nothing)"),
        "{err}"
    );
    // No assistant turn: nothing to train on, nothing to warn about.
    let user_only = json!([{"role": "user", "content": "Hi"}]);
    std::fs::write(dir.path().join("f.json"), session(user_only)).unwrap();
    let (_, err) = inspect_json(&["inspect", "--fixture", "f.json", "--json"], dir.path());
    assert_eq!(err, "");
}

/// transformers' tag test misses `{%+ generation %}` and only logs a warning: its mask
/// still trains the block (tests/fixtures/masks/goldens.json, `edge/plus-markers-only`),
/// and so does `tokens`. `inspect` must not call that mask all zero.
#[test]
fn a_plus_marked_block_trains_and_is_not_called_all_zero() {
    let dir = tempfile::tempdir().unwrap();
    let source = "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{%+ generation %}{{ m.content }}<|im_end|>{%+ endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}";
    std::fs::write(dir.path().join("t.jinja"), source).unwrap();
    let (report, err) = inspect_json(&["inspect", "t.jinja", "--json"], dir.path());
    assert_eq!(report["has_generation_markers"], true);
    assert_eq!(report["stop_token_trained"], true);
    let observed = report["evidence"]["has_generation_markers"]["observed"]
        .as_str()
        .unwrap();
    assert!(observed.contains("misses this spelling"), "{observed}");
    assert_eq!(err, "");
}
