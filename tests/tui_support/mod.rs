//! Shared helpers for the TUI tests: a deterministic app on the example session and
//! a whole-screen render into a `TestBackend`.

#![allow(dead_code)]

use std::path::Path;

use chatplate::tui::action::Action;
use chatplate::tui::app::driver;
use chatplate::tui::app::App;
use chatplate::tui::files::workspace::Workspace;
use chatplate::tui::panes::messages::conversation::example_session;
use chatplate::tui::ui;
use chatplate_core::catalog;
use chatplate_core::session::Session;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// The example session (fixed clock) on the default template; sessions go to `dir`.
pub fn example_app(dir: &Path) -> App {
    let template = catalog::default_template();
    let session = example_session(template.reference(dir));
    app_for(session, dir)
}

/// An app on `session` (default template unless the session names another).
pub fn app_for(session: Session, dir: &Path) -> App {
    let template = catalog::resolve(&session.template, dir, &catalog::TemplateAccess::Anywhere)
        .unwrap_or_else(|_| catalog::default_template());
    let workspace = Workspace::new(session, None, template, dir.to_path_buf());
    let mut app = App::new(workspace, catalog::bundled());
    start(&mut app);
    app.update(Action::Resize(80, 24));
    app.settle();
    app
}

/// An app on the session saved at `file` (opened as the app opens it), sessions going to
/// `sessions`.
pub fn app_on_file(file: &Path, sessions: &Path) -> App {
    let (workspace, _) = chatplate::tui::files::startup::open_session(file, sessions).unwrap();
    let mut app = App::new(workspace, catalog::bundled());
    start(&mut app);
    app.settle();
    app
}

/// The example session on the default template, saved as `dir/w.json`; its path.
pub fn saved_example(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("w.json");
    let template = catalog::default_template();
    example_session(template.reference(dir))
        .save(&file)
        .unwrap();
    file
}

/// The file work the event loop does before the first frame (the look for recovery
/// files an earlier run left).
pub fn start(app: &mut App) {
    driver::tick(app, std::time::Instant::now());
}

/// The screen as text, once the render worker has answered every change.
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    driver::settle(app);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|frame| ui::draw(frame, app)).expect("draw");
    terminal.backend().to_string()
}

/// A plain key press.
pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Ctrl + a character.
pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types each character of `text`.
pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
}

/// Draws without reading the screen back (TestBackend cannot print a 0-wide buffer).
pub fn draw_only(app: &mut App, width: u16, height: u16) {
    driver::settle(app);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|frame| ui::draw(frame, app)).expect("draw");
}
