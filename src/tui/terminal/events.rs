//! Everything the event loop waits for, on one channel: terminal input (read on a thread
//! of its own, pausable while an external editor owns the terminal), render-worker
//! replies, signals and the terminal hanging up.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crossterm::event::{self, Event};

/// How long the input thread waits for input before checking whether it should pause.
/// It never reads while paused, so an external editor gets every keystroke.
const INPUT_POLL: Duration = Duration::from_millis(100);

/// How long crossterm is given once input has arrived: it reads what is there at once,
/// and spins at most this long when nothing is.
const ASK_CROSSTERM: Duration = Duration::from_millis(1);

/// Something the event loop must react to.
#[derive(Debug)]
pub enum AppEvent {
    /// A key, paste or resize from the terminal.
    Input(Event),
    /// The render worker has a reply ready.
    Worker,
    /// SIGHUP, SIGTERM, SIGINT or SIGQUIT arrived (the number).
    Signal(i32),
    /// The terminal went away without a signal.
    HangUp,
    /// Reading the terminal failed for good.
    InputEnded(String),
}

/// The pause handshake between the event loop and the input thread.
#[derive(Debug, Default)]
struct InputGate {
    state: Mutex<Gate>,
    changed: Condvar,
}

#[derive(Debug, Default, Clone, Copy)]
struct Gate {
    /// The loop asked the thread to stop reading.
    paused: bool,
    /// The thread is parked and not reading.
    parked: bool,
}

/// The channel and the threads that feed it.
#[derive(Debug)]
pub struct Events {
    sender: Sender<AppEvent>,
    receiver: Receiver<AppEvent>,
    gate: Arc<InputGate>,
    editing: Arc<AtomicBool>,
}

impl Events {
    /// Starts listening for signals (before the terminal is touched, so none is missed)
    /// and for the terminal hanging up. Input is read once [`Events::start_input`] runs.
    pub fn start() -> io::Result<Events> {
        let (sender, receiver) = mpsc::channel();
        let editing = Arc::new(AtomicBool::new(false));
        signals::forward(sender.clone(), Arc::clone(&editing))?;
        signals::watch_hangup(sender.clone());
        Ok(Events {
            sender,
            receiver,
            gate: Arc::default(),
            editing,
        })
    }

    /// Starts the input thread.
    pub fn start_input(&self) -> io::Result<()> {
        let sender = self.sender.clone();
        let gate = Arc::clone(&self.gate);
        std::thread::Builder::new()
            .name("chatplate-input".into())
            .spawn(move || read_input(&sender, &gate))
            .map(drop)
    }

    /// A function that tells the loop a worker reply is ready.
    pub fn worker_waker(&self) -> impl Fn() + Send + 'static {
        let sender = self.sender.clone();
        move || {
            let _ = sender.send(AppEvent::Worker);
        }
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<AppEvent> {
        self.receiver.recv_timeout(timeout).ok()
    }

    /// An event that is already queued.
    pub fn try_recv(&self) -> Option<AppEvent> {
        self.receiver.try_recv().ok()
    }

    /// Stops the input thread reading (it may be inside a poll for up to
    /// [`INPUT_POLL`]) and ignores Ctrl+C / Ctrl+\ signals meant for the editor.
    pub fn suspend_input(&self) {
        self.editing.store(true, Ordering::SeqCst);
        let Ok(mut gate) = self.gate.state.lock() else {
            return;
        };
        gate.paused = true;
        while !gate.parked {
            match self.gate.changed.wait_timeout(gate, INPUT_POLL * 10) {
                Ok((next, timeout)) if !timeout.timed_out() => gate = next,
                // The thread has ended (or is stuck in a hung-up terminal): nothing reads.
                _ => return,
            }
        }
    }

    /// Lets the input thread read again.
    pub fn resume_input(&self) {
        if let Ok(mut gate) = self.gate.state.lock() {
            gate.paused = false;
        }
        self.gate.changed.notify_all();
        self.editing.store(false, Ordering::SeqCst);
    }
}

fn read_input(sender: &Sender<AppEvent>, gate: &InputGate) {
    let waiter = crate::tui::terminal::input_wait::InputWait::new();
    // Whether crossterm may hold more: it parses a whole read at once (a paste, or
    // Esc and Ctrl+S typed together), and its buffer is not visible from here.
    let mut more = true;
    loop {
        if !wait_while_paused(gate) {
            return;
        }
        // crossterm's own wait spins through its last millisecond (see `terminal::input_wait`):
        // it is asked only when something has arrived or may be buffered (with a zero
        // timeout it would not read at all), or where the terminal cannot be watched.
        let ready = match &waiter {
            Some(waiter) if !more && !waiter.wait(INPUT_POLL) => continue,
            Some(_) => event::poll(ASK_CROSSTERM),
            None => event::poll(INPUT_POLL),
        };
        more = matches!(ready, Ok(true));
        let event = match ready {
            Ok(false) => continue,
            Ok(true) => event::read(),
            Err(err) => Err(err),
        };
        let message = match event {
            Ok(event) => AppEvent::Input(event),
            Err(err) => AppEvent::InputEnded(err.to_string()),
        };
        let ended = matches!(message, AppEvent::InputEnded(_));
        if sender.send(message).is_err() || ended {
            return;
        }
    }
}

/// Parks while the loop has input paused; false when the gate is broken.
fn wait_while_paused(gate: &InputGate) -> bool {
    let Ok(mut state) = gate.state.lock() else {
        return false;
    };
    while state.paused {
        state.parked = true;
        gate.changed.notify_all();
        state = match gate.changed.wait(state) {
            Ok(state) => state,
            Err(_) => return false,
        };
    }
    state.parked = false;
    true
}

#[cfg(unix)]
mod signals {
    //! Signals and hang-ups become events; the loop writes the recovery file and exits.

    use std::io;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::Sender;
    use std::sync::Arc;
    use std::time::Duration;

    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    use signal_hook::iterator::Signals;

    use super::AppEvent;

    /// How long the loop gets to save and restore after a hang-up before the watcher
    /// ends the process itself (the recovery autosave has the edits up to then).
    const HANGUP_GRACE: Duration = Duration::from_secs(5);

    /// Forwards the four terminating signals. While an external editor runs, SIGINT and
    /// SIGQUIT are the user's Ctrl+C / Ctrl+\ in that editor (it shares the terminal's
    /// process group) and are ignored.
    pub fn forward(sender: Sender<AppEvent>, editing: Arc<AtomicBool>) -> io::Result<()> {
        let mut signals = Signals::new([SIGHUP, SIGTERM, SIGINT, SIGQUIT])?;
        std::thread::Builder::new()
            .name("chatplate-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    let for_editor = matches!(signal, SIGINT | SIGQUIT);
                    if for_editor && editing.load(Ordering::SeqCst) {
                        continue;
                    }
                    if sender.send(AppEvent::Signal(signal)).is_err() {
                        return;
                    }
                }
            })
            .map(drop)
    }

    /// Reports the terminal hanging up without a SIGHUP (a dropped connection can close
    /// the pty under us; crossterm then reads end-of-file in a loop and never errors).
    pub fn watch_hangup(sender: Sender<AppEvent>) {
        use rustix::event::{poll, PollFd, PollFlags};
        if !rustix::termios::isatty(io::stdin()) {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("chatplate-hangup".into())
            .spawn(move || loop {
                let stdin = io::stdin();
                let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
                // With no events requested, poll returns only for hang-up and errors.
                let hung_up = poll(&mut fds, None).is_ok()
                    && fds[0]
                        .revents()
                        .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL);
                if hung_up {
                    let _ = sender.send(AppEvent::HangUp);
                    std::thread::sleep(HANGUP_GRACE);
                    std::process::exit(129);
                }
            });
    }
}

#[cfg(not(unix))]
mod signals {
    //! Without Unix signals only the event loop's own exits apply.

    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc::Sender;
    use std::sync::Arc;

    use super::AppEvent;

    pub fn forward(_sender: Sender<AppEvent>, _editing: Arc<AtomicBool>) -> std::io::Result<()> {
        Ok(())
    }

    pub fn watch_hangup(_sender: Sender<AppEvent>) {}
}
