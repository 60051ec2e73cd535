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
