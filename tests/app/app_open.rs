//! What the app opens at launch: a model folder, a file in one, a `.gguf`, with or
//! without `--template-name` (the engine's `target::open`, as the app calls it).

#![cfg(feature = "tui")]

use std::path::PathBuf;

use chatplate::tui::files::startup::open;
use chatplate::tui::TuiOptions;

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

fn opened(path: &str, name: Option<&str>) -> chatplate::tui::files::startup::Opened {
    open(&TuiOptions {
        file: Some(fixture(path)),
        template_name: name.map(String::from),
        ..TuiOptions::default()
    })
    .unwrap_or_else(|err| panic!("{path}: {err:#}"))
}

#[test]
fn a_model_folder_opens_on_the_template_its_tools_choose() {
    let app = opened("models/additional", None);
    // The new session has tools, so transformers would use tool_use.
    assert_eq!(app.workspace.template.name, "additional#tool_use");
    assert_eq!(app.workspace.session.bos_token.as_deref(), Some("<s>"));
    let names: Vec<&str> = app.catalog.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"additional#default") && names.contains(&"additional#rag"),
        "{names:?}"
    );
    let pinned = opened("models/additional", Some("rag"));
    assert_eq!(pinned.workspace.template.name, "additional#rag");
    let file = opened(
        "models/additional/additional_chat_templates/rag.jinja",
        None,
    );
    assert_eq!(file.workspace.template.name, "additional#rag");
}

#[test]
fn a_gguf_opens_with_its_bos_and_eos() {
    let app = opened("gguf/named.gguf", None);
    assert_eq!(app.workspace.template.name, "named#tool_use");
    assert_eq!(app.workspace.session.eos_token.as_deref(), Some("</s>"));
    assert!(app.workspace.template.origin_label().starts_with("GGUF "));
}

#[test]
fn what_cannot_be_opened_says_why() {
    let err = open(&TuiOptions {
        file: Some(fixture("gguf/version1.gguf")),
        ..TuiOptions::default()
    })
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("GGUF version 1 is not supported"),
        "{err:#}"
    );
    let err = open(&TuiOptions {
        file: Some(fixture("models/additional")),
        template_name: Some("nope".into()),
        ..TuiOptions::default()
    })
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("no chat template named \"nope\""),
        "{err:#}"
    );
}

#[test]
fn a_bundled_name_opened_is_listed_once() {
    let app = open(&TuiOptions {
        file: Some(PathBuf::from("gemma-3-tools")),
        ..TuiOptions::default()
    })
    .expect("a bundled template");
    assert_eq!(app.workspace.template.name, "gemma-3-tools");
    let listed = app.catalog.iter().filter(|t| t.name == "gemma-3-tools");
    assert_eq!(listed.count(), 1);
}
