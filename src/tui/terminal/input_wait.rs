//! Waiting for terminal input without spinning.
//!
//! The input thread wakes every [`crate::tui::terminal::events`] poll interval to see whether it should
//! pause (an external editor is about to own the terminal). crossterm's
//! `event::poll(timeout)` hands its remaining time to `poll(2)` in whole milliseconds,
//! rounded down, so the last fraction of a millisecond of every timeout is a loop of
//! `poll(…, 0)`: busy CPU on every wake-up, for an app that should use none while idle. [`InputWait`] waits on the terminal and on `SIGWINCH` itself
//! (to the microsecond), so crossterm is asked only once something has arrived.

use std::time::Duration;

/// Waits until the terminal has input, the window was resized, or time is up.
#[derive(Debug)]
pub struct InputWait {
    inner: imp::Wait,
}

impl InputWait {
    /// Watches the terminal crossterm reads (stdin when it is one, else `/dev/tty`);
    /// `None` when that cannot be done here, and crossterm's own wait serves.
    pub fn new() -> Option<InputWait> {
        imp::Wait::new().map(|inner| InputWait { inner })
    }

    /// Returns once the terminal is readable, a resize signal arrived, or after
    /// `timeout`: true unless the time ran out with nothing there (an error counts as
    /// something, so that crossterm is asked and reports it).
    pub fn wait(&self, timeout: Duration) -> bool {
        self.inner.wait(timeout)
    }
}

#[cfg(unix)]
mod imp {
    use std::io::{self, Read};
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use signal_hook::consts::SIGWINCH;
    use signal_hook::SigId;

    #[derive(Debug)]
    pub(in crate::tui) struct Wait {
        tty: OwnedFd,
        /// Written to by the `SIGWINCH` handler (crossterm keeps its own, which this
        /// does not replace).
        resized: UnixStream,
        handler: SigId,
    }

    impl Wait {
        pub(in crate::tui) fn new() -> Option<Wait> {
            Wait::watching(terminal()?)
        }

        /// Waits on `tty` (and on `SIGWINCH`).
        pub(in crate::tui) fn watching(tty: OwnedFd) -> Option<Wait> {
            let (resized, writer) = UnixStream::pair().ok()?;
            resized.set_nonblocking(true).ok()?;
            writer.set_nonblocking(true).ok()?;
            let handler = signal_hook::low_level::pipe::register(SIGWINCH, writer).ok()?;
            Some(Wait {
                tty,
                resized,
                handler,
            })
        }

        pub(in crate::tui) fn wait(&self, timeout: Duration) -> bool {
            let Ok(timeout) = Timespec::try_from(timeout) else {
                return true;
            };
            let mut fds = [
                PollFd::new(&self.tty, PollFlags::IN),
                PollFd::new(&self.resized, PollFlags::IN),
            ];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => false,
                Ok(_) => {
                    if fds[1].revents().contains(PollFlags::IN) {
                        // Drained, or the next wait would return at once.
                        let mut drain = [0u8; 64];
                        while matches!((&self.resized).read(&mut drain), Ok(n) if n > 0) {}
                    }
                    true
                }
                Err(_) => true,
            }
        }
    }

    impl Drop for Wait {
        fn drop(&mut self) {
            signal_hook::low_level::unregister(self.handler);
        }
    }

    /// The terminal crossterm reads: stdin when it is one, else `/dev/tty`.
    fn terminal() -> Option<OwnedFd> {
        let stdin = io::stdin();
        if rustix::termios::isatty(&stdin) {
            return stdin.as_fd().try_clone_to_owned().ok();
        }
        let tty = std::fs::File::open("/dev/tty").ok()?;
        Some(tty.into())
    }
}

#[cfg(not(unix))]
mod imp {
    use std::time::Duration;

    #[derive(Debug)]
    pub(in crate::tui) struct Wait;

    impl Wait {
        pub(in crate::tui) fn new() -> Option<Wait> {
            None
        }

        pub(in crate::tui) fn wait(&self, _timeout: Duration) -> bool {
            true
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::sync::{Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    use super::imp::Wait;

    /// `SIGWINCH` goes to the whole process, and every `Wait` listens for it: a test that
    /// raises it would end another test's wait early. The tests here take turns.
    fn one_at_a_time() -> MutexGuard<'static, ()> {
        static SIGNALS: Mutex<()> = Mutex::new(());
        SIGNALS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A wait on one end of a socket pair standing in for the terminal, and the other end.
    fn on_a_socket() -> (Wait, UnixStream) {
        let (tty, typing) = UnixStream::pair().unwrap();
        (Wait::watching(tty.into()).unwrap(), typing)
    }

    #[test]
    fn nothing_arriving_waits_the_whole_timeout() {
        let _turn = one_at_a_time();
        let (wait, _typing) = on_a_socket();
        let started = Instant::now();
        assert!(!wait.wait(Duration::from_millis(50)));
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn input_or_a_resize_ends_the_wait() {
        let _turn = one_at_a_time();
        let (wait, mut typing) = on_a_socket();
        typing.write_all(b"x").unwrap();
        let started = Instant::now();
        assert!(wait.wait(Duration::from_secs(60)));
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "input did not end the wait"
        );

        let (wait, _typing) = on_a_socket();
        signal_hook::low_level::raise(signal_hook::consts::SIGWINCH).unwrap();
        let started = Instant::now();
        assert!(wait.wait(Duration::from_secs(60)));
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a resize did not end the wait"
        );
        // The signal was drained: the next wait lasts its timeout.
        let started = Instant::now();
        assert!(!wait.wait(Duration::from_millis(50)));
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
