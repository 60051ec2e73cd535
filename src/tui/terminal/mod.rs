//! The terminal side: set-up, and a restore that happens however the app ends.
//!
//! Every exit goes through [`run`]: a quit, a signal (SIGHUP 129, SIGINT 130, SIGQUIT
//! 131, SIGTERM 143), the terminal hanging up or failing to read or write (129), or a
//! panic on the UI thread (101). Except after a plain quit, unsaved changes are written to the recovery
//! file first, synchronously and from the current state; then the terminal is restored.
//! A panic on any other thread (a render worker) is caught there and shown in the prompt
//! pane, so the panic hook installed here stays silent for those threads.

pub mod burst;
pub mod clipboard;
pub mod event_loop;
pub mod events;
pub mod input_wait;
pub mod mouse;
pub mod mouse_select;
pub mod sgr;

use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::tui::app::App;
use crate::tui::terminal::event_loop::Exit;
use crate::tui::terminal::events::Events;

/// The terminal the app draws on.
/// Colours go out as basic SGR codes (see [`crate::tui::terminal::sgr`]).
pub type Term = Terminal<CrosstermBackend<crate::tui::terminal::sgr::BasicColors<io::Stdout>>>;

/// Runs `app` until it exits; returns the process exit status.
pub fn run(mut app: App) -> anyhow::Result<i32> {
    let events = Events::start()?;
    let hook = PanicHook::install();
    enter()?;
    let mut terminal = match Terminal::new(CrosstermBackend::new(
        crate::tui::terminal::sgr::BasicColors::new(io::stdout()),
    )) {
        Ok(terminal) => terminal,
        Err(err) => {
            leave();
            drop(hook.uninstall());
            return Err(err.into());
        }
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        events.start_input()?;
        app.set_waker(events.worker_waker());
        event_loop::run(&mut terminal, &mut app, &events)
    }));
    let exit = match outcome {
        Ok(Ok(exit)) => Ok(exit),
        Ok(Err(err)) => Err(err),
        Err(_) => Ok(Exit::Panic),
    };
    let saved = match &exit {
        Ok(Exit::Quit) => None,
        _ => Some(save_recovery(&mut app)),
    };
    leave();
    // ratatui's Drop prints with eprintln! when it cannot show the cursor, which panics
    // when the terminal is gone; leave() has shown it already.
    std::mem::forget(terminal);
    let panic_text = hook.uninstall();
    let exit = exit?;
    report(&exit, panic_text, saved);
    Ok(exit.code())
}

/// Raw mode, the alternate screen and bracketed paste.
pub fn enter() -> io::Result<()> {
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
    if crate::tui::terminal::mouse::enabled() {
        execute!(io::stdout(), crossterm::event::EnableMouseCapture)?;
    }
    Ok(())
}

/// Back to the shell's terminal; errors are ignored (the terminal may be gone).
pub fn leave() {
    let _ = execute!(
        io::stdout(),
        crossterm::event::DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = io::stdout().flush();
}

/// Writes the recovery file, even if the app state is damaged by a panic; returns
/// where it went, or why it could not be written.
fn save_recovery(app: &mut App) -> Result<Option<String>, String> {
    panic::catch_unwind(AssertUnwindSafe(|| {
        crate::tui::app::driver::emergency_save(app)
    }))
    .unwrap_or_else(|_| Err("the app state could not be saved".into()))
}

/// One line on stderr about an abnormal exit (nothing after a quit).
fn report(exit: &Exit, panic_text: Option<String>, saved: Option<Result<Option<String>, String>>) {
    let why = match exit {
        Exit::Quit => return,
        Exit::Signal(number) => format!("stopped by signal {number}"),
        Exit::HangUp => "the terminal hung up".into(),
        Exit::TerminalLost(err) => format!("the terminal went away ({err})"),
        Exit::Panic => format!(
            "crashed ({}); please report this",
            panic_text.unwrap_or_else(|| "no message".into())
        ),
    };
    let kept = match saved {
        Some(Ok(Some(path))) => format!("; unsaved changes are in {path}"),
        Some(Err(err)) => format!("; the recovery file could not be written: {err}"),
        _ => String::new(),
    };
    // The terminal may be gone (hang-up): a failed write is not worth a panic.
    let _ = writeln!(io::stderr(), "chatplate: {why}{kept}");
}

/// A panic hook for the app's lifetime: a panic on the UI thread is remembered (and
/// printed after the terminal is restored, not over the screen); panics on other
/// threads print nothing, because their threads report them (a render worker turns
/// one into an error in the prompt pane).
struct PanicHook {
    ui: ThreadId,
    text: Arc<Mutex<Option<String>>>,
}

impl PanicHook {
    fn install() -> Self {
        let hook = PanicHook {
            ui: thread::current().id(),
            text: Arc::default(),
        };
        let (ui, text) = (hook.ui, Arc::clone(&hook.text));
        panic::set_hook(Box::new(move |info| {
            if thread::current().id() == ui {
                if let Ok(mut slot) = text.lock() {
                    *slot = Some(info.to_string().replace('\n', " "));
                }
            }
        }));
        hook
    }

    /// Puts the default hook back; returns the UI thread's panic message, if any.
    fn uninstall(self) -> Option<String> {
        drop(panic::take_hook());
        self.text.lock().ok().and_then(|mut slot| slot.take())
    }
}
