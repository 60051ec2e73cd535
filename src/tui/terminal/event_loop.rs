//! The event loop: wait for the next event, apply it and every event already queued
//! behind it, send one render request, draw one frame. Nothing is drawn when nothing
//! changed, so an idle app sleeps until input, a worker reply, a signal or its next
//! timer (the template file watch, the recovery autosave). File work `update` asks for
//! is done here, between updates ([`crate::tui::app::driver`]).

use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEventKind};

use crate::tui::action::Action;

use crate::tui::app::autosave::Autosave;
use crate::tui::app::driver;
use crate::tui::app::App;
use crate::tui::context::Effect;
use crate::tui::screen::Status;
use crate::tui::terminal;
use crate::tui::terminal::burst::Burst;
use crate::tui::terminal::clipboard;
use crate::tui::terminal::events::AppEvent;
use crate::tui::terminal::events::Events;
use crate::tui::terminal::Term;
use crate::tui::ui;

/// Most events applied before a frame is drawn, so a huge unbracketed paste still
/// shows progress.
const MAX_BATCH: usize = 4096;

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The user quit.
    Quit,
    /// A terminating signal arrived (its number).
    Signal(i32),
    /// The terminal hung up.
    HangUp,
    /// The terminal could not be read or written any more (it went away).
    TerminalLost(String),
    /// The UI thread panicked.
    Panic,
}

impl Exit {
    /// The process exit status: 0, 128 + the signal, 129 for a hang-up, 101 for a panic.
    pub fn code(&self) -> i32 {
        match self {
            Exit::Quit => 0,
            Exit::Signal(number) => 128 + number,
            Exit::HangUp | Exit::TerminalLost(_) => 129,
            Exit::Panic => 101,
        }
    }
}

/// Runs until the app quits or something ends it.
pub fn run(terminal: &mut Term, app: &mut App, events: &Events) -> anyhow::Result<Exit> {
    let mut autosave = Autosave::new(events.worker_waker());
    let exit = run_with(terminal, app, events, &mut autosave);
    // Its outcome names the recovery file an emergency save after this overwrites.
    autosave.finish(app);
    exit
}

fn run_with(
    terminal: &mut Term,
    app: &mut App,
    events: &Events,
    autosave: &mut Autosave,
) -> anyhow::Result<Exit> {
    let size = terminal.size()?;
    app.update(Action::Resize(size.width, size.height));
    // The first look for recovery files and at the template file, before the first frame.
    driver::tick(app, Instant::now());
    let mut dirty = true;
    loop {
        app.request_render();
        let (changed, effects) = app.collect();
        dirty |= changed;
        let performed = !effects.is_empty();
        for effect in effects {
            if let Some(exit) = perform(terminal, app, (events, autosave), effect)? {
                return Ok(exit);
            }
        }
        if performed {
            // An opened session replaced the old one: ask for its render now rather
            // than at the next wake-up.
            app.request_render();
        }
        if std::mem::take(&mut dirty) {
            // Writing to a terminal fails only when it is gone (a hang-up racing its
            // signal): that is an ending like the signal, not an error to report.
            if let Err(err) = terminal.draw(|frame| ui::draw(frame, app)) {
                return Ok(Exit::TerminalLost(err.to_string()));
            }
        }
        let now = Instant::now();
        let wait = app.next_tick(now).saturating_duration_since(now);
        if let Some(first) = events.recv_timeout(wait.max(Duration::from_millis(1))) {
            let batch = std::iter::once(first).chain(std::iter::from_fn(|| events.try_recv()));
            let mut typed = Burst::default();
            for event in batch.take(MAX_BATCH) {
                if let AppEvent::Input(Event::Key(key)) = &event {
                    if typed.push(app, key) {
                        continue;
                    }
                }
                if let Some(effect) = typed.flush(app) {
                    if let Some(exit) = perform(terminal, app, (events, autosave), effect)? {
                        return Ok(exit);
                    }
                }
                match event {
                    AppEvent::Input(input) => {
                        dirty = true;
                        if let Some(effect) = handle_input(app, input) {
                            if let Some(exit) = perform(terminal, app, (events, autosave), effect)?
                            {
                                return Ok(exit);
                            }
                        }
                    }
                    // Collected at the top of the loop, after the whole batch.
                    AppEvent::Worker => {}
                    AppEvent::Signal(number) => return Ok(Exit::Signal(number)),
                    AppEvent::HangUp => return Ok(Exit::HangUp),
                    AppEvent::InputEnded(err) => return Ok(Exit::TerminalLost(err)),
                }
            }
            dirty |= !typed.is_empty();
            if let Some(effect) = typed.flush(app) {
                if let Some(exit) = perform(terminal, app, (events, autosave), effect)? {
                    return Ok(exit);
                }
            }
        }
        dirty |= driver::tick_aside(app, Instant::now(), autosave);
    }
}

fn handle_input(app: &mut App, event: Event) -> Option<Effect> {
    #[cfg(debug_assertions)]
    test_panic(&event);
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => app.handle_key(key),
        Event::Paste(text) => app.update(Action::Paste(text)),
        Event::Mouse(event) => match crate::tui::action::MouseInput::from_event(&event) {
            Some(input) => app.update(Action::Mouse(input)),
            None => None,
        },
        Event::Resize(width, height) => app.update(Action::Resize(width, height)),
        _ => None,
    }
}

/// Debug builds only: pasting exactly `$CHATPLATE_TEST_UI_PANIC` panics on the UI
/// thread, so tests can prove the crash path saves and restores (nothing in the app is
/// known to panic there).
#[cfg(debug_assertions)]
fn test_panic(event: &Event) {
    let marker = std::env::var("CHATPLATE_TEST_UI_PANIC").unwrap_or_default();
    if matches!(event, Event::Paste(text) if !marker.is_empty() && *text == marker) {
        panic!("test panic requested through CHATPLATE_TEST_UI_PANIC");
    }
}

/// Carries out an effect; returns how the app exits when it should.
fn perform(
    terminal: &mut Term,
    app: &mut App,
    (events, autosave): (&Events, &mut Autosave),
    effect: Effect,
) -> anyhow::Result<Option<Exit>> {
    match effect {
        Effect::Disk(job) => {
            // A save removes the recovery file: a write still under way must not bring
            // it back afterwards.
            autosave.finish(app);
            if let Some(next) = driver::run_job(app, job) {
                return perform(terminal, app, (events, autosave), next);
            }
        }
        Effect::Quit => return Ok(Some(Exit::Quit)),
        Effect::Copy { text, what } => match clipboard::copy(&text) {
            Ok(how) => app.tell(Status::info(format!("{what} ({} B) → {how}", text.len()))),
            Err(err) => app.tell(Status::error(format!("not copied: {err}"))),
        },
        Effect::EditFile(path) => {
            events.suspend_input();
            let edited = edit_file(terminal, &path);
            events.resume_input();
            match edited {
                Ok(()) => app.tell(Status::info(format!(
                    "edited {}; reloaded when changed",
                    path.display()
                ))),
                Err(err) => app.tell(Status::error(format!("external editor: {err:#}"))),
            }
        }
        Effect::EditExternally { text, suffix } => {
            events.suspend_input();
            let edited = edit_externally(terminal, &text, suffix);
            events.resume_input();
            match edited {
                Ok(edited) => {
                    app.update(Action::ExternalEdited(edited));
                }
                Err(err) => app.tell(Status::error(format!("external editor: {err:#}"))),
            }
        }
    }
    Ok(None)
}

/// Suspends the UI, edits `text` in `$VISUAL` / `$EDITOR` (default `vi`) and returns
/// the saved text. The terminal is set up again whatever the editor does.
fn edit_externally(terminal: &mut Term, text: &str, suffix: &str) -> anyhow::Result<String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path =
        std::env::temp_dir().join(format!("chatplate-{}-{stamp}{suffix}", std::process::id()));
    std::fs::write(&path, text)?;
    terminal::leave();
    let status = editor_command(&path).status();
    terminal::enter()?;
    // Not Terminal::clear: it asks the terminal for the cursor position and waits up to
    // two seconds for an answer some terminals never send. A resize clears the screen
    // and makes the next frame a full redraw without asking anything.
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
    // Read as strangers' files are: an editor that left a FIFO or a device there, or
    // hundreds of megabytes, is refused at once instead of freezing the app.
    let edited = chatplate_core::files::read_text(&path, chatplate_core::files::MAX_EDIT_BYTES);
    let _ = std::fs::remove_file(&path);
    match status {
        Ok(status) if status.success() => Ok(edited?),
        Ok(status) => anyhow::bail!("editor exited with {status}; edit ignored"),
        Err(err) => anyhow::bail!("could not start the editor: {err}"),
    }
}

/// Suspends the UI and runs `$VISUAL` / `$EDITOR` on `path` itself; the template watch
/// notices the saved file.
fn edit_file(terminal: &mut Term, path: &std::path::Path) -> anyhow::Result<()> {
    terminal::leave();
    let status = editor_command(path).status();
    terminal::enter()?;
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => anyhow::bail!("editor exited with {status}"),
        Err(err) => anyhow::bail!("could not start the editor: {err}"),
    }
}

fn editor_command(path: &std::path::Path) -> Command {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    if cfg!(unix) {
        // Through the shell, so EDITOR="code --wait" works.
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("chatplate")
            .arg(path);
        command
    } else {
        let mut command = Command::new(editor);
        command.arg(path);
        command
    }
}
