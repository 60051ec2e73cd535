//! Copying through the terminal with OSC 52, which works over SSH because the text
//! travels in the output stream to the user's own terminal. Inside tmux the sequence is
//! wrapped in tmux's DCS passthrough.

use base64::Engine;

/// The escape sequence that puts `text` on the clipboard; `tmux` wraps it for tmux.
pub fn osc52(text: &str, tmux: bool) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let sequence = format!("\x1b]52;c;{encoded}\x07");
    if tmux {
        // Inside a DCS passthrough every ESC of the wrapped sequence is doubled.
        format!("\x1bPtmux;{}\x1b\\", sequence.replace('\x1b', "\x1b\x1b"))
    } else {
        sequence
    }
}

/// True when running inside tmux.
pub fn in_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::osc52;

    #[test]
    fn plain_and_tmux_sequences() {
        assert_eq!(osc52("hi", false), "\x1b]52;c;aGk=\x07");
        assert_eq!(osc52("hi", true), "\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\");
    }
}
