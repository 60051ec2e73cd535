//! The app opening an OpenAI Chat Completions request body as a new session. The
//! engine's own request-body tests (import, render, export) are in
//! crates/core/tests/files/request_bodies.rs.

#![cfg(feature = "tui")]

use std::path::PathBuf;

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
