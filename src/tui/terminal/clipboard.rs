//! Copying from a terminal app, which works over SSH because the text travels to the
//! user's own terminal, not to a clipboard on the machine the app runs on.
//!
//! * Plain terminals get OSC 52 (crossterm's `CopyToClipboard`). Whether it reaches the
//!   clipboard is the terminal's decision (some ask, some refuse); the app cannot know.
//! * Inside tmux, applications' OSC 52 is ignored with tmux's default
//!   `set-clipboard external` (tmux 3.3), and the passthrough-wrapped form is dropped
//!   unless `allow-passthrough` is on. So the text goes through `tmux load-buffer -w -`:
//!   that fills a tmux paste buffer (`prefix ]` pastes it) and, under the default
//!   setting, tmux itself forwards it to the outer terminal's clipboard. If that command
//!   fails, both escape forms are sent as a fallback.
//! * Inside GNU screen the sequence is wrapped in screen's DCS passthrough.

use std::io::{self, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::clipboard::CopyToClipboard;
use crossterm::Command as _;

/// The multiplexer between the app and the terminal, from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplexer {
    /// None: the sequence goes straight to the terminal.
    None,
    /// tmux (`$TMUX`).
    Tmux,
    /// GNU screen (`$STY`).
    Screen,
}

impl Multiplexer {
    /// The one this process runs under.
    pub fn detect() -> Self {
        let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if set("TMUX") {
            Multiplexer::Tmux
        } else if set("STY") {
            Multiplexer::Screen
        } else {
            Multiplexer::None
        }
    }
}

/// Copies `text`; returns what was done, worded so it claims no more than is known.
pub fn copy(text: &str) -> Result<String, String> {
    let how = match Multiplexer::detect() {
        Multiplexer::Tmux => match tmux_load_buffer(text) {
            Ok(()) => {
                let how = "tmux buffer, and the terminal clipboard if it allows";
                let setting = tmux_set_clipboard();
                match tmux_hint(setting.as_deref(), &TOLD_TMUX) {
                    Some(hint) => format!("tmux buffer ({hint})"),
                    None => how.into(),
                }
            }
            Err(err) => {
                write_out(&format!("{}{}", osc52(text), tmux_wrap(&osc52(text))))?;
                format!("OSC 52 (tmux load-buffer failed: {err}); needs set-clipboard on")
            }
        },
        Multiplexer::Screen => {
            write_out(&screen_wrap(&osc52(text)))?;
            "OSC 52 via screen: on the clipboard if the terminal allows it".into()
        }
        Multiplexer::None => match remote_multiplexer(&|name| std::env::var(name).ok()) {
            // Over ssh into a tmux or screen on the user's machine: the sequence meets
            // that multiplexer first; send the forms it may pass on.
            Some(Multiplexer::Tmux) => {
                write_out(&format!("{}{}", osc52(text), tmux_wrap(&osc52(text))))?;
                SSH_TMUX.into()
            }
            Some(_) => {
                // `screen…` is also tmux's TERM before 3.5: the plain form for a tmux,
                // the passthrough for a GNU screen (each ignores the other's).
                write_out(&format!("{}{}", osc52(text), screen_wrap(&osc52(text))))?;
                SSH_SCREEN.into()
            }
            None => {
                write_out(&osc52(text))?;
                "OSC 52: on the clipboard if the terminal allows it".into()
            }
        },
    };
    Ok(how)
}

/// Where a copy went over ssh into tmux, and the one-line fix when it did not arrive.
pub const SSH_TMUX: &str =
    "OSC 52 over ssh to your tmux: dropped unless it has set -g set-clipboard on";

/// Where a copy went over ssh into screen (or a tmux that calls itself `screen`).
pub const SSH_SCREEN: &str =
    "OSC 52 over ssh to your tmux/screen: tmux drops it unless set -g set-clipboard on";

/// The multiplexer on the user's side of an ssh link, read from `var` (the environment):
/// `$SSH_TTY` or `$SSH_CONNECTION` says the app runs over ssh, and a `TERM` of `tmux…`
/// or `screen…` that the session runs inside one there (tmux and screen set it; ssh
/// passes it on). `None` when not over ssh or not inside one.
pub fn remote_multiplexer(var: &dyn Fn(&str) -> Option<String>) -> Option<Multiplexer> {
    let set = |name| var(name).is_some_and(|v| !v.is_empty());
    if !set("SSH_TTY") && !set("SSH_CONNECTION") {
        return None;
    }
    let term = var("TERM").unwrap_or_default();
    if term.starts_with("tmux") {
        Some(Multiplexer::Tmux)
    } else if term.starts_with("screen") {
        Some(Multiplexer::Screen)
    } else {
        None
    }
}

/// Whether this run said how to let tmux pass copies to the terminal's clipboard.
static TOLD_TMUX: AtomicBool = AtomicBool::new(false);

/// What to tell, once a run, about tmux's `set-clipboard` (`setting`, as `tmux show
/// -gv set-clipboard` prints it; `None` when it could not be asked): unless it is `on`,
/// the copy may stop at tmux's buffer, so say how to let it through.
pub fn tmux_hint(setting: Option<&str>, told: &AtomicBool) -> Option<&'static str> {
    if setting.map(str::trim) == Some("on") || told.swap(true, Ordering::Relaxed) {
        return None;
    }
    Some("for the clipboard: set -g set-clipboard on")
}

/// tmux's `set-clipboard` option, when tmux answers.
fn tmux_set_clipboard() -> Option<String> {
    let output = Command::new("tmux")
        .args(["show-options", "-gv", "set-clipboard"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The OSC 52 sequence that puts `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    let mut sequence = String::new();
    // Writing into a String cannot fail.
    let _ = CopyToClipboard::to_clipboard_from(text).write_ansi(&mut sequence);
    sequence
}

/// tmux's DCS passthrough: every ESC of the wrapped sequence doubled.
pub fn tmux_wrap(sequence: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", sequence.replace('\x1b', "\x1b\x1b"))
}

/// GNU screen's DCS passthrough (the sequence's own terminator is kept as BEL, which
/// screen passes through inside a DCS string).
pub fn screen_wrap(sequence: &str) -> String {
    let inner = sequence.strip_suffix("\x1b\\").unwrap_or(sequence);
    format!("\x1bP{inner}\x07\x1b\\")
}

fn write_out(bytes: &str) -> Result<(), String> {
    let mut out = io::stdout();
    out.write_all(bytes.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|err| err.to_string())
}

/// `tmux load-buffer -w -` with `text` on its stdin.
fn tmux_load_buffer(text: &str) -> io::Result<()> {
    let mut child = Command::new("tmux")
        .args(["load-buffer", "-w", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes())?;
    }
    let status = child.wait()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("tmux exited with {status}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tmux_hint_is_given_once_and_not_when_set_clipboard_is_on() {
        let told = AtomicBool::new(false);
        assert_eq!(tmux_hint(Some("on\n"), &told), None);
        let hint = tmux_hint(Some("external\n"), &told).unwrap();
        assert!(hint.contains("set -g set-clipboard on"), "{hint}");
        assert_eq!(tmux_hint(Some("external\n"), &told), None, "once a run");
        assert!(tmux_hint(None, &AtomicBool::new(false)).is_some());
    }

    #[test]
    fn over_ssh_a_tmux_or_screen_term_is_the_users_multiplexer() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                (pairs.iter())
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_string())
            }
        };
        let tmux = env(&[("SSH_TTY", "/dev/pts/3"), ("TERM", "tmux-256color")]);
        assert_eq!(remote_multiplexer(&tmux), Some(Multiplexer::Tmux));
        let screen = env(&[
            ("SSH_CONNECTION", "10.0.0.1 5 10.0.0.2 22"),
            ("TERM", "screen"),
        ]);
        assert_eq!(remote_multiplexer(&screen), Some(Multiplexer::Screen));
        let plain = env(&[("SSH_TTY", "/dev/pts/3"), ("TERM", "xterm-256color")]);
        assert_eq!(remote_multiplexer(&plain), None);
        let local = env(&[("TERM", "tmux-256color")]);
        assert_eq!(remote_multiplexer(&local), None, "not over ssh");
        assert!(SSH_TMUX.contains("set -g set-clipboard on"));
    }

    #[test]
    fn sequences() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x1b\\");
        assert_eq!(
            tmux_wrap(&osc52("hi")),
            "\x1bPtmux;\x1b\x1b]52;c;aGk=\x1b\x1b\\\x1b\\"
        );
        assert_eq!(screen_wrap(&osc52("hi")), "\x1bP\x1b]52;c;aGk=\x07\x1b\\");
    }
}
