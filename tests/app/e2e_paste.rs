//! Pastes without bracketed paste, on the real binary in a pty: a terminal that does not
//! mark pastes sends the text as if typed, in one burst. All of it must arrive (not only
//! the first read's 1,024 bytes), survive a hang-up, and keep its line feeds as line
//! breaks (a line feed is also Ctrl+J, the editor's "delete to line start").

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::Path;

use e2e_support::{message_content, weather_session, Tui};

/// The user message as the weather session has it.
const ORIGINAL: &str = "What's the weather in Paris?";

/// Opens the weather session with the user message's editor open.
fn editing(dir: &Path) -> Tui {
    weather_session(dir);
    let mut tui = Tui::start(dir, "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.edit_user_message();
    tui
}

fn user_content(path: &Path) -> String {
    message_content(path, 1)
}

/// `words` numbered words and an end marker: more than 1,024 bytes for 200 words.
fn long_paste(words: usize) -> String {
    let mut text: String = (1..=words).map(|n| format!(" w{n:04}")).collect();
    text.push_str(" PASTE-END");
    text
}

#[test]
fn an_unbracketed_paste_over_1024_bytes_arrives_whole_and_survives_a_hang_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut tui = editing(dir.path());
    let pasted = long_paste(400);
    assert!(pasted.len() > 2_000, "{} bytes", pasted.len());
    tui.send(&pasted); // one write, no paste markers
                       // Before the fix the app read 1,024 bytes and waited for the next key for the rest.
    tui.wait_for("the end of the paste", |s| s.contains("PASTE-END"));
    tui.close_terminal();
    assert_eq!(tui.wait_exit(), 129);
    let recovered = user_content(&dir.path().join("sessions/weather.recovery.json"));
    assert_eq!(recovered, format!("{ORIGINAL}{pasted}"));
}

#[test]
fn line_feeds_in_an_unbracketed_paste_are_line_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let mut tui = editing(dir.path());
    // Line feeds as a file piped to the terminal sends them, a blank line and a line
    // feed first and last included: each is Ctrl+J to the key reader.
    tui.send("\nline one\nline two\n\nline three\n");
    tui.wait_for("the paste", |s| s.contains("line three"));
    tui.send("\x1b");
    tui.wait_for("the editor closed", |s| s.contains("#2 fields"));
    tui.send("\x13");
    tui.wait_for("the save", |s| s.contains("saved sessions/"));
    let file = dir.path().join("sessions/weather.json");
    assert_eq!(
        user_content(&file),
        format!("{ORIGINAL}\nline one\nline two\n\nline three\n")
    );
}
