//! Keystroke-to-frame latency on a 1,000-message session: one typed character goes
//! through the real keymap and `App::update` (which re-renders the prompt), then a
//! frame is drawn into a 120x40 `TestBackend`.

use std::hint::black_box;

use chatplate::catalog;
use chatplate::session::Message;
use chatplate::tui::action::Action;
use chatplate::tui::app::App;
use chatplate::tui::conversation::{add_tool_call, example_session};
use chatplate::tui::ui;
use chatplate::tui::workspace::Workspace;
use criterion::{criterion_group, criterion_main, Criterion};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// Alternating user / assistant turns; every tenth assistant turn calls a tool and is
/// answered by a tool result.
fn big_app(dir: &std::path::Path) -> App {
    let template = catalog::default_template();
    let mut session = example_session(template.reference(dir));
    session.messages.truncate(1);
    while session.messages.len() < 1000 {
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
    app
}

fn keystroke(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("chatplate-bench-{}", std::process::id()));
    let mut app = big_app(&dir);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    // Select the last message and open its content editor.
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    assert!(app.editor.is_some(), "editor open");
    c.bench_function("keystroke_to_frame_1000_messages", |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
