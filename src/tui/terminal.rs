//! The terminal side: set-up and guaranteed restore, the event loop, signals, the
//! clipboard escape and suspending the UI for an external editor.
//!
//! The loop waits for input at most [`POLL`] at a time so the template file watch and
//! the recovery autosave run while the user is idle, and SIGTERM / SIGHUP are noticed
//! promptly; either signal writes the recovery file and restores the terminal.

use std::io::{self, Write};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event, KeyEventKind};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::DefaultTerminal;

use super::action::{Action, Effect};
use super::app::App;
use super::clipboard;
use super::ui;

/// Longest wait for input before periodic work runs.
const POLL: Duration = Duration::from_millis(250);

/// Most queued events handled before the next frame (keeps pastes fast without
/// starving the screen).
const BATCH: usize = 64;

/// Runs `app` in the terminal until it quits or a signal arrives.
pub fn run(mut app: App) -> anyhow::Result<()> {
    let stop = install_signal_flag()?;
    exit_on_hangup();
    // ratatui::init installs a panic hook that restores the terminal first.
    let mut terminal = ratatui::init();
    let _ = execute!(io::stdout(), EnableBracketedPaste);
    let result = event_loop(&mut terminal, &mut app, &stop);
    let _ = execute!(io::stdout(), DisableBracketedPaste);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let size = terminal.size()?;
    app.update(Action::Resize(size.width, size.height));
    loop {
        terminal.draw(|frame| ui::draw(frame, app))?;
        let mut budget = BATCH;
        let mut wait = POLL;
        while budget > 0 && event::poll(wait)? {
            if let Some(effect) = handle_event(app, event::read()?) {
                if perform(terminal, app, effect)? {
                    return Ok(());
                }
            }
            budget -= 1;
            wait = Duration::ZERO;
        }
        if stop.load(Ordering::Relaxed) {
            app.emergency_save();
            return Ok(());
        }
        app.tick(Instant::now());
    }
}

fn handle_event(app: &mut App, event: Event) -> Option<Effect> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => app.handle_key(key),
        Event::Paste(text) => app.update(Action::Paste(text)),
        Event::Resize(width, height) => app.update(Action::Resize(width, height)),
        _ => None,
    }
}

/// Carries out an effect; returns true when the app should exit.
fn perform(terminal: &mut DefaultTerminal, app: &mut App, effect: Effect) -> anyhow::Result<bool> {
    match effect {
        Effect::Quit => return Ok(true),
        Effect::Copy(text) => {
            let mut out = io::stdout();
            out.write_all(clipboard::osc52(&text, clipboard::in_tmux()).as_bytes())?;
            out.flush()?;
        }
        Effect::EditExternally { text, suffix } => match edit_externally(terminal, &text, suffix) {
            Ok(edited) => {
                app.update(Action::ExternalEdited(edited));
            }
            Err(err) => app.warn(format!("external editor: {err:#}")),
        },
    }
    Ok(false)
}

/// Suspends the UI, edits `text` in `$VISUAL` / `$EDITOR` (default `vi`) and returns
/// the saved text. The terminal is restored whatever the editor does.
fn edit_externally(
    terminal: &mut DefaultTerminal,
    text: &str,
    suffix: &str,
) -> anyhow::Result<String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path =
        std::env::temp_dir().join(format!("chatplate-{}-{stamp}{suffix}", std::process::id()));
    std::fs::write(&path, text)?;
    execute!(io::stdout(), DisableBracketedPaste, LeaveAlternateScreen)?;
    disable_raw_mode()?;
    let status = editor_command(&path).status();
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
    terminal.clear()?;
    let edited = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    match status {
        Ok(status) if status.success() => Ok(edited?),
        Ok(status) => anyhow::bail!("editor exited with {status}; edit ignored"),
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

#[cfg(unix)]
fn install_signal_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&flag))?;
    }
    Ok(flag)
}

/// Ends the process when the terminal hangs up without a SIGHUP (a dropped connection
/// can close the pty under us). crossterm then reads end-of-file in an endless loop
/// inside `event::poll`, where the event loop never regains control, so this waits on
/// the terminal from a thread of its own. The debounced autosave has already written
/// the recovery file by then.
#[cfg(unix)]
fn exit_on_hangup() {
    use rustix::event::{poll, PollFd, PollFlags};
    if !rustix::termios::isatty(io::stdin()) {
        return;
    }
    std::thread::spawn(|| loop {
        let stdin = io::stdin();
        let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
        // With no events requested, poll returns only for hang-up and errors.
        if poll(&mut fds, None).is_ok()
            && fds[0]
                .revents()
                .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL)
        {
            std::process::exit(129);
        }
    });
}

#[cfg(not(unix))]
fn exit_on_hangup() {}

#[cfg(not(unix))]
fn install_signal_flag() -> anyhow::Result<Arc<AtomicBool>> {
    Ok(Arc::new(AtomicBool::new(false)))
}
