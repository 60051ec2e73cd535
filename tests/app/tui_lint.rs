//! The lint in the app: the Templates pane lints its templates on the worker (update
//! never waits), shows the most serious finding's rule id as a badge on the row, and
//! lists every finding with its fix at the top of the info view (`i`); as update tests
//! and snapshots at 80x24 and 120x40.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::App;
use chatplate::tui::panes::templates::lint::LintState;
use chatplate_core::catalog::{Origin, TemplateSource};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{example_app, key, screen};

/// A ChatML template that silently leaves system messages out.
const DROPS_SYSTEM: &str =
    "{% for m in messages if m.role != 'system' %}<|im_start|>{{ m.role }}\n\
                            {{ m.content }}<|im_end|>\n{% endfor %}\
                            {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// The example app with the faulty template added and selected in the Templates pane.
fn lint_app(dir: &std::path::Path) -> App {
    let mut app = example_app(dir);
    let faulty = TemplateSource::new("drops-system", DROPS_SYSTEM, Origin::Inline);
    app.add_template(&faulty);
    app.update(Action::Focus(Pane::Templates));
    app
}

fn verdict(app: &App) -> Option<LintState> {
    let pane = app.templates();
    pane.lints.get(pane.selected()?).cloned()
}

#[test]
fn the_selected_template_is_linted_on_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = lint_app(dir.path());
    app.handle_key(key(KeyCode::Char('i')));
    // update never waits: nothing is known yet, the lint is on its way or queued.
    assert!(verdict(&app).is_none());
    app.settle();
    let Some(LintState::Done(report)) = verdict(&app) else {
        panic!("no verdict: {:?}", verdict(&app));
    };
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule.id()).collect();
    assert_eq!(rules, ["system-dropped", "zero-mask"]);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("error system-dropped"), "{text}");
    assert!(text.contains("fix: print the system"), "{text}");
    // The row's badge, where the row has room for it (the pane zoomed).
    app.handle_key(key(KeyCode::Char('z')));
    let text = screen(&mut app, 120, 40);
    assert!(
        text.contains("drops-system") && text.contains("✗system-dropped"),
        "{text}"
    );
}

#[test]
fn lint_info_view_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = lint_app(dir.path());
    app.handle_key(key(KeyCode::Char('i')));
    app.handle_key(key(KeyCode::Char('z')));
    app.settle();
    assert_snapshot!(screen(&mut app, 80, 24));
}

#[test]
fn lint_info_view_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = lint_app(dir.path());
    app.update(Action::Resize(120, 40));
    app.handle_key(key(KeyCode::Char('i')));
    app.handle_key(key(KeyCode::Char('z')));
    app.settle();
    assert_snapshot!(screen(&mut app, 120, 40));
}

/// The status summary marks a double BOS (lint's rule, on the shown prompt): the
/// template prints it and the model folder's tokenizer config says the tokenizer adds it.
#[test]
fn the_status_line_marks_a_double_bos() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir_all(&model).unwrap();
    let template = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}";
    let config = |adds: bool| {
        serde_json::json!({"chat_template": template, "bos_token": "<s>", "add_bos_token": adds})
            .to_string()
    };
    std::fs::write(model.join("tokenizer_config.json"), config(true)).unwrap();
    let mut session = chatplate_core::session::Session::new(
        chatplate_core::session::TemplateRef::Path("model".into()),
    );
    session.messages = vec![chatplate_core::session::Message::new("user", "Hi")];
    // As opening the model sets it.
    session.bos_token = Some("<s>".into());
    let mut app = crate::tui_support::app_for(session.clone(), dir.path());
    let shown = crate::tui_support::screen(&mut app, 80, 24);
    assert!(
        shown.contains("✓ 5 bytes · ⚠ double BOS · no expected outcome"),
        "{shown}"
    );
    assert!(app.double_bos().unwrap().contains("add_bos_token: true"));
    std::fs::write(model.join("tokenizer_config.json"), config(false)).unwrap();
    let mut app = crate::tui_support::app_for(session, dir.path());
    let shown = crate::tui_support::screen(&mut app, 80, 24);
    assert!(!shown.contains("double BOS"), "{shown}");
}
