//! A conversation rendered again through the same `Arc` reuses its template values
//! (`CompiledTemplate::shared_input`): the prompt must be the one a fresh conversion
//! gives, and a changed conversation must never see the old values.

use std::sync::Arc;

use chatplate_render::{CompiledTemplate, Conversation, Limits, RenderControl};
use serde_json::json;

fn conversation(contents: &[&str]) -> Conversation {
    Conversation::new(
        contents
            .iter()
            .map(|content| json!({"role": "user", "content": content}))
            .collect(),
    )
}

fn compiled(source: &str) -> CompiledTemplate {
    CompiledTemplate::compile(source, Limits::default()).unwrap()
}

#[test]
fn a_shared_conversation_renders_the_same_every_time() {
    let template = compiled("{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}");
    let shared = Arc::new(conversation(&["a", "b"]));
    let control = RenderControl::default();
    let fresh = template.render(&shared).unwrap();
    for _ in 0..3 {
        let again = template.render_controlled(Arc::clone(&shared), &control);
        assert_eq!(again.unwrap(), fresh);
    }
    assert_eq!(fresh, "[user:a][user:b]");
}

#[test]
fn a_changed_conversation_is_converted_again() {
    let template = compiled("{% for m in messages %}{{ m.content }};{% endfor %}");
    let control = RenderControl::default();
    let mut shared = Arc::new(conversation(&["first"]));
    let keep = Arc::clone(&shared);
    assert_eq!(
        template
            .render_controlled(Arc::clone(&shared), &control)
            .unwrap(),
        "first;"
    );
    // `make_mut` must copy: the render keeps a weak reference to the original.
    Arc::make_mut(&mut shared).messages = vec![json!({"role": "user", "content": "second"})];
    assert!(!Arc::ptr_eq(&shared, &keep));
    assert_eq!(
        template
            .render_controlled(Arc::clone(&shared), &control)
            .unwrap(),
        "second;"
    );
    assert_eq!(
        template
            .render_controlled(Arc::clone(&keep), &control)
            .unwrap(),
        "first;"
    );
    // Dropped and replaced by a new conversation: never the old values.
    drop(keep);
    let other = Arc::new(conversation(&["third"]));
    assert_eq!(
        template.render_controlled(other, &control).unwrap(),
        "third;"
    );
}
