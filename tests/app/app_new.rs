//! `chatplate --new [TEMPLATE]`: an empty, untitled session on the template named (the
//! default template without one); a session file is refused.

#![cfg(feature = "tui")]

use std::path::PathBuf;

use chatplate::tui::files::new_session::open_new;
use chatplate::tui::TuiOptions;

fn new_on(target: Option<&str>) -> anyhow::Result<chatplate::tui::files::startup::Opened> {
    open_new(&TuiOptions {
        file: target.map(PathBuf::from),
        ..TuiOptions::default()
    })
}

#[test]
fn new_without_a_template_is_empty_on_the_default_template() {
    let opened = new_on(None).unwrap();
    let workspace = &opened.workspace;
    assert!(workspace.session.messages.is_empty());
    assert!(workspace.session.tools.is_none());
    assert!(workspace.path.is_none(), "untitled: saving asks for a name");
    assert!(!workspace.dirty, "nothing to lose yet");
    let default = chatplate_core::catalog::default_template();
    assert_eq!(workspace.template.name, default.name);
}

#[test]
fn new_on_a_bundled_name_or_a_template_file() {
    let opened = new_on(Some("gemma-3-tools")).unwrap();
    assert_eq!(opened.workspace.template.name, "gemma-3-tools");
    assert!(opened.workspace.session.messages.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.jinja");
    std::fs::write(&file, "{% for m in messages %}{{ m.content }}{% endfor %}").unwrap();
    let opened = new_on(Some(file.to_str().unwrap())).unwrap();
    assert_eq!(
        opened.workspace.template.source,
        std::fs::read_to_string(&file).unwrap()
    );
    assert!(opened.workspace.session.messages.is_empty());
}

#[test]
fn new_on_a_session_is_refused_with_what_to_do() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/sessions/example.json");
    let err = new_on(Some(example)).expect_err("refused");
    assert!(
        format!("{err:#}").contains("a session; --new starts an empty session on a template"),
        "{err:#}"
    );
}

#[test]
fn new_on_a_model_folder_picks_its_default_template_as_there_are_no_tools() {
    let folder = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/models/additional"
    );
    let opened = new_on(Some(folder)).unwrap();
    assert_eq!(opened.workspace.template.name, "additional#default");
    assert!(opened.workspace.session.tools.is_none());
    let gguf = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gguf/named.gguf"
    );
    let opened = new_on(Some(gguf)).unwrap();
    assert_eq!(opened.workspace.template.name, "named#default");
}
