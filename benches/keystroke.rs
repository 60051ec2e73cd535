//! The UI thread's cost per keystroke: one typed character goes through the real keymap
//! and `App::update`, one render request goes to the worker, whatever replies are ready
//! are taken in, and a frame is drawn into a 120x40 `TestBackend`. The render itself runs
//! on the worker, concurrently, so the figure does not depend on the template's speed:
//! it is measured at 1,000 and 10,000 messages on the default template, and at 1,000 on
//! Gemma 4 (about a quarter of a second per render) when the corpus is present.
//!
//! `keystroke_to_result/*` and `ui_thread/*` (issue 13) cover the corpus' Llama 3.1,
//! Qwen3 and Gemma 4 templates at 1,000 and 10,000 messages: a typed character until
//! its render is shown (the worker's whole job: the update, converting the edited
//! message, the render, locating the messages) and the UI thread's own part of it.
//! Gemma 4 at 10,000 messages renders for seconds (its template is quadratic), so only
//! its UI-thread figure is taken there.
//!
//! Conversations are generated here, not committed.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use chatplate::catalog::{self, TemplateSource};
use chatplate::session::Message;
use chatplate::tui::action::Action;
use chatplate::tui::app::App;
use chatplate::tui::burst::Burst;
use chatplate::tui::conversation::{add_tool_call, example_session};
use chatplate::tui::ui;
use chatplate::tui::workspace::Workspace;
use criterion::{criterion_group, criterion_main, Criterion};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const GEMMA_4: &str = "../shared/conformance/dev/templates/google-gemma-4-31B-it.jinja";

/// Alternating user / assistant turns; every tenth assistant turn calls a tool and is
/// answered by a tool result.
fn big_app(dir: &Path, template: TemplateSource, count: usize) -> App {
    let mut session = example_session(template.reference(dir));
    session.messages.truncate(1);
    while session.messages.len() < count {
        let turn = session.messages.len();
        session.messages.push(Message::new(
            "user",
            &format!("Question {turn}: how warm is it in city {turn}?"),
        ));
        let mut answer = Message::new(
            "assistant",
            &format!("Answer {turn}: it is {} degrees.", turn % 30),
        );
        if turn % 20 == 1 {
            add_tool_call(&mut answer, session.tools.as_deref());
            session.messages.push(answer);
            let mut result = Message::new("tool", "{\"temperature\": 18}");
            result.0.insert("tool_call_id".into(), "call_1".into());
            session.messages.push(result);
        } else {
            session.messages.push(answer);
        }
    }
    let workspace = Workspace::new(session, None, template, dir.to_path_buf());
    let mut app = App::new(workspace, catalog::bundled());
    app.update(Action::Resize(120, 40));
    app.settle();
    app
}

fn bench_typing(c: &mut Criterion, name: &str, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    // Select the last message and open its content editor.
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    assert!(app.editor.is_some(), "editor open");
    c.bench_function(name, |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

/// Two hundred characters arriving at once (a paste in a terminal without bracketed
/// paste, or fast typing over a slow link): all applied, one render request, one frame.
fn bench_burst(c: &mut Criterion, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    c.bench_function("burst_of_200_keys_to_frame_1000_messages", |b| {
        b.iter(|| {
            // As the event loop does: one batch of input, collected into one insert.
            let mut burst = Burst::default();
            for _ in 0..200 {
                let key = black_box(press(KeyCode::Char('x')));
                if !burst.push(&app, &key) {
                    app.handle_key(key);
                }
            }
            burst.flush(&mut app);
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

/// A key typed after a 5 MB single-line paste into the message being edited.
fn bench_after_huge_paste(c: &mut Criterion, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    app.update(Action::Paste("0123456789".repeat(500_000)));
    app.settle();
    c.bench_function("keystroke_to_frame_after_5mb_paste", |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

const CORPUS_TEMPLATES: [(&str, &str); 3] = [
    ("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct"),
    ("qwen3", "Qwen-Qwen3-0.6B"),
    ("gemma-4", "google-gemma-4-31B-it"),
];

/// A typed character until the render that includes it has been taken in and drawn.
fn bench_to_result(c: &mut Criterion, name: &str, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    let mut group = c.benchmark_group("keystroke_to_result");
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.settle();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    group.finish();
}

/// Both figures for the corpus' Llama 3.1, Qwen3 and Gemma 4 templates.
fn corpus_templates(c: &mut Criterion, dir: &Path) {
    for (short, name) in CORPUS_TEMPLATES {
        let path = format!("../shared/conformance/dev/templates/{name}.jinja");
        let template = match catalog::load_path(Path::new(&path)) {
            Ok(found) if !found.is_empty() => found[0].clone(),
            _ => {
                println!("SKIPPED {short} keystroke benches: {path} not found");
                continue;
            }
        };
        for count in [1000, 10_000] {
            let id = format!("{short}_{count}_messages");
            bench_typing(
                c,
                &format!("ui_thread/{id}"),
                big_app(dir, template.clone(), count),
            );
            if short != "gemma-4" || count < 10_000 {
                bench_to_result(c, &id, big_app(dir, template.clone(), count));
            }
        }
    }
}

fn keystroke(c: &mut Criterion) {
    let dir: PathBuf = std::env::temp_dir().join(format!("chatplate-bench-{}", std::process::id()));
    let default = catalog::default_template();
    for count in [1000, 10_000] {
        let app = big_app(&dir, default.clone(), count);
        bench_typing(c, &format!("keystroke_to_frame_{count}_messages"), app);
    }
    match catalog::load_path(Path::new(GEMMA_4)) {
        Ok(found) if !found.is_empty() => {
            let app = big_app(&dir, found[0].clone(), 1000);
            bench_typing(c, "keystroke_to_frame_1000_messages_gemma4", app);
        }
        _ => println!("SKIPPED gemma4 keystroke bench: {GEMMA_4} not found"),
    }
    bench_burst(c, big_app(&dir, default.clone(), 1000));
    bench_after_huge_paste(c, big_app(&dir, default, 1000));
    corpus_templates(c, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
