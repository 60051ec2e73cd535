//! The engine matrix (`M` in the Prompt pane): every engine's verdict on the session,
//! kept current through the worker as the session is edited, Enter opening a row's diff.
//! The engines run for real: bare MiniJinja in process, the CI venv's transformers as
//! `python`, a plug-in that takes its time.

#![cfg(feature = "tui")]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{common, tui_support};
use chatplate::tui::action::{Action, CompareAction, Direction, MessageAction, Pane, Step};
use chatplate::tui::app::App;
use chatplate::tui::compare::SideChoice;
use chatplate::tui::jobs::matrix::{EngineRow, Verdict};
use chatplate_core::compare::{Engine, EngineSetup};
use chatplate_core::session::Session;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tui_support::{app_for, example_app, key, screen, type_text};

/// Engines whose programs are not there: `python` names none, `hf-jinja`'s Node is a
/// path that does not exist, so their rows say so the same way on every machine.
fn without_external_engines(dir: &Path) -> EngineSetup {
    let mut setup = EngineSetup::default();
    setup.python = None;
    setup.node = dir.join("no-node-here");
    setup
}

/// Opens the matrix from the Prompt pane.
fn open_matrix(app: &mut App) {
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('M')));
    assert!(app.matrix().is_open());
}

fn row(app: &App, engine: Engine) -> EngineRow {
    let rows = app.matrix().rows();
    let found = rows.iter().find(|row| row.engine == engine);
    found.cloned().expect("a row for the engine")
}

/// The example session's matrix, the external engines missing.
fn example_matrix(dir: &Path, width: u16, height: u16) -> App {
    let mut app = example_app(dir);
    app.set_engines(without_external_engines(dir));
    app.update(Action::Resize(width, height));
    open_matrix(&mut app);
    app
}

#[test]
fn matrix_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_matrix(dir.path(), 80, 24);
    let text = screen(&mut app, 80, 24).replace(&dir.path().display().to_string(), "[DIR]");
    assert_snapshot!("matrix_80x24", text);
}

#[test]
fn matrix_at_120x40() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_matrix(dir.path(), 120, 40);
    let text = screen(&mut app, 120, 40).replace(&dir.path().display().to_string(), "[DIR]");
    assert_snapshot!("matrix_120x40", text);
}

/// A session on a template that prints the last message as JSON: MiniJinja's `tojson`
/// escapes `'` as `\u0027` where transformers writes it as it is.
fn tojson_app(dir: &Path) -> App {
    let session: Session = serde_json::from_value(serde_json::json!({
        "version": 1,
        "template": {"source": "{{ messages[-1].content | tojson }}"},
        "messages": [{"role": "user", "content": "Hi"}],
    }))
    .unwrap();
    let mut app = app_for(session, dir);
    app.set_engines(without_external_engines(dir));
    app
}

/// `text` with each run of spaces as one: the matrix pads engine names to one width.
fn squeezed(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in text.split(' ').filter(|p| !p.is_empty()) {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

/// Edits the first message's content, typing `text` at its end.
fn type_into_first_message(app: &mut App, text: &str) {
    app.update(Action::Focus(Pane::Messages));
    app.update(Action::Message(MessageAction::Select(Step::First)));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(app, text);
}

#[test]
fn the_matrix_follows_an_edit_with_bare_minijinja() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = tojson_app(dir.path());
    open_matrix(&mut app);
    let text = squeezed(&screen(&mut app, 80, 24));
    assert_eq!(row(&app, Engine::MiniJinja).verdict, Some(Verdict::Same));
    assert!(text.contains("minijinja same"), "{text}");

    type_into_first_message(&mut app, " it's");
    let text = squeezed(&screen(&mut app, 80, 24));
    let prompt = app.preview().output.clone().expect("the session renders");
    assert_eq!(&*prompt, "\"Hi it's\"", "transformers keeps the quote");
    let byte = prompt.find('\'').unwrap();
    let minijinja = row(&app, Engine::MiniJinja);
    assert!(!minijinja.waiting(app.generation()), "{minijinja:?}");
    let want = Verdict::Differs {
        byte,
        line: 1,
        column: byte + 1,
    };
    assert_eq!(minijinja.verdict, Some(want), "{text}");
    assert!(
        text.contains(&format!(
            "minijinja differs at byte {byte} (line 1:{})",
            byte + 1
        )),
        "{text}"
    );
    // The other engines' rows say why they could not run, and llama.cpp what it needs.
    assert!(text.contains("python could not run"), "{text}");
    assert!(text.contains("llama.cpp no server"), "{text}");
}

#[test]
fn the_matrix_follows_an_edit_with_the_users_transformers() {
    let test = "the_matrix_follows_an_edit_with_the_users_transformers";
    let Some(python) = std::env::var_os("CHATPLATE_PYTHON") else {
        return common::skip_unless_ci(test, "CHATPLATE_PYTHON names no Python with transformers");
    };
    let dir = tempfile::tempdir().unwrap();
    let mut app = tojson_app(dir.path());
    let mut setup = without_external_engines(dir.path());
    setup.python = Some(python.into());
    app.set_engines(setup);
    open_matrix(&mut app);
    type_into_first_message(&mut app, " it's");
    let text = squeezed(&screen(&mut app, 80, 24));
    let python = row(&app, Engine::Python);
    assert!(!python.waiting(app.generation()), "{python:?}");
    assert_eq!(python.verdict, Some(Verdict::Same), "{text}");
    assert!(python.version.contains("5.23"), "{}", python.version);
    assert!(text.contains("python same"), "{text}");
}

#[test]
fn enter_opens_the_rows_diff_and_esc_gives_the_matrix_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = tojson_app(dir.path());
    type_into_first_message(&mut app, " it's");
    app.handle_key(key(KeyCode::Esc));
    open_matrix(&mut app);
    screen(&mut app, 120, 40);
    app.handle_key(key(KeyCode::Enter));
    let side = app.other_side().expect("the compare view");
    assert_eq!(side.choice, SideChoice::Engine(Engine::MiniJinja));
    assert!(side.answer().is_some(), "the matrix's answer, at once");
    let text = squeezed(&screen(&mut app, 120, 40));
    assert!(text.contains("Prompt vs minijinja"), "{text}");
    assert!(text.contains("\\u0027"), "{text}");

    app.handle_key(key(KeyCode::Esc));
    assert!(app.other_side().is_none());
    assert!(app.matrix().is_open(), "back to the matrix");
    let text = squeezed(&screen(&mut app, 120, 40));
    assert!(text.contains("Engines: "), "{text}");
    app.handle_key(key(KeyCode::Esc));
    assert!(!app.matrix().is_open());
    // M opens it again, and closes it.
    app.update(Action::Compare(CompareAction::Matrix));
    assert!(app.matrix().is_open());
    app.update(Action::Compare(CompareAction::Matrix));
    assert!(!app.matrix().is_open());
}

#[test]
fn the_cursor_moves_between_rows_and_enter_on_llama_cpp_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_matrix(dir.path(), 80, 24);
    screen(&mut app, 80, 24);
    for _ in 0..7 {
        app.update(Action::Prompt(
            chatplate::tui::action::PromptAction::Scroll(Step::Line(Direction::Down)),
        ));
    }
    assert_eq!(app.matrix().cursor, 5, "the last row: llama.cpp");
    app.handle_key(key(KeyCode::Enter));
    assert!(app.other_side().is_none());
    let status = app.status().expect("a warning").text.clone();
    assert!(status.contains("o in the Prompt pane"), "{status}");
}

/// A plug-in that takes its time shows `…` in its row while the rest answers: the
/// session's render and minijinja's row are current long before it ends.
#[test]
fn a_slow_engine_shows_an_ellipsis_and_holds_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = tojson_app(dir.path());
    let slow = Engine::plugin(Some("slow"), "cmd:sleep 30", dir.path()).unwrap();
    app.add_plugin_engines(vec![slow]);
    open_matrix(&mut app);
    type_into_first_message(&mut app, " it's");
    let patience = Instant::now() + Duration::from_secs(60);
    let done =
        |app: &App| !app.is_stale() && !row(app, Engine::MiniJinja).waiting(app.generation());
    while !done(&app) && Instant::now() < patience {
        app.request_render();
        app.collect();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(done(&app), "minijinja answered");
    assert!(
        row(&app, slow).waiting(app.generation()),
        "the plug-in still runs"
    );
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| chatplate::tui::ui::draw(frame, &app))
        .unwrap();
    let text = squeezed(&terminal.backend().to_string());
    assert!(text.contains("slow …"), "{text}");
    assert!(text.contains("minijinja differs at byte"), "{text}");
    // The title counts the rows still waiting.
    assert!(text.contains(" … · "), "{text}");
}

/// Types `url` as the compare view's side (`o`), then closes the compare view: the
/// matrix's `llama.cpp` row follows that server.
fn name_server(app: &mut App, url: &str) {
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('o')));
    type_text(app, url);
    app.handle_key(key(KeyCode::Enter));
    screen(app, 80, 24);
    app.handle_key(key(KeyCode::Esc));
    assert!(app.other_side().is_none());
}

/// A real llama-server on the session's template: llama.cpp prints `1/3` with six
/// digits where Python prints sixteen, and the row says where that starts.
#[test]
fn the_llama_cpp_row_follows_the_server_named_with_o() {
    let test = "the_llama_cpp_row_follows_the_server_named_with_o";
    let Some(files) = crate::llama_support::server_files(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}{{ m.content }} {{ 1/3 }}\n{% endfor %}";
    let file = dir.path().join("t.jinja");
    std::fs::write(&file, template).unwrap();
    let server = crate::llama_support::start(&files, Some(&file), &dir.path().join("log"));
    let session: Session = serde_json::from_value(serde_json::json!({
        "version": 1,
        "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi"}],
    }))
    .unwrap();
    let mut app = app_for(session, dir.path());
    app.set_engines(without_external_engines(dir.path()));
    open_matrix(&mut app);
    screen(&mut app, 80, 24);
    assert_eq!(row(&app, Engine::LlamaCpp).verdict, Some(Verdict::NoServer));
    name_server(&mut app, &server.url);
    let text = squeezed(&screen(&mut app, 80, 24));
    // "Hi 0.333333" against "Hi 0.3333333333333333": they part after six 3s.
    let byte = "Hi 0.333333".len();
    let want = Verdict::Differs {
        byte,
        line: 1,
        column: byte + 1,
    };
    assert_eq!(row(&app, Engine::LlamaCpp).verdict, Some(want), "{text}");
    assert!(text.contains("llama.cpp differs at byte 11"), "{text}");
}

/// A server nobody runs is `could not run`, not a difference.
#[test]
fn an_unreachable_server_could_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = tojson_app(dir.path());
    open_matrix(&mut app);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    name_server(&mut app, &format!("http://127.0.0.1:{port}"));
    let text = squeezed(&screen(&mut app, 80, 24));
    let verdict = row(&app, Engine::LlamaCpp).verdict.expect("a verdict");
    assert!(verdict.could_not_run(), "{verdict:?}");
    assert!(
        verdict
            .text()
            .starts_with("could not run: cannot reach llama-server"),
        "{verdict:?}"
    );
    assert!(text.contains("llama.cpp could not run"), "{text}");
}
