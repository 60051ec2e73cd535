//! The newest typing wins: the real binary in a pty, killed with SIGKILL again and again
//! (no handler runs, nothing is written on the way out) while it types, autosaves and
//! saves. After each restart the app must hold the newest text any file holds, and
//! everything it had written to disk before the kill.
//!
//! Each round restarts the app, restores what it offers, saves (so the session file
//! shows what the app holds), types two words into the user message, and ends one of
//! three ways: a kill right after typing, a kill the moment a save lands in the session
//! file (before the app removes its recovery file: a stale recovery file was offered
//! there), or a kill a few milliseconds after a save was asked for.
//! `CHATPLATE_KILL_ROUNDS` sets the number of rounds (default 12).

#![cfg(feature = "tui")]
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::fuzzing::setting;
use crate::e2e_support::{message_content, weather_session, Tui, DEADLINE};

/// The user message's text in the session file and every recovery file beside it, as
/// they are now (`None` for a file that cannot be read).
fn on_disk(sessions: &Path) -> Vec<(PathBuf, Option<String>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sessions)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("weather") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = chatplate_core::session::Session::load(&path)
                .ok()
                .map(|_| message_content(&path, 1));
            (path, text)
        })
        .collect()
}

/// The newest text on disk: words are only ever added, so every file holds a prefix of
/// the newest one, which is the longest.
fn newest(files: &[(PathBuf, Option<String>)]) -> String {
    let texts: Vec<&String> = files.iter().filter_map(|(_, t)| t.as_ref()).collect();
    let longest = texts
        .iter()
        .max_by_key(|t| t.len())
        .expect("a session file");
    for text in &texts {
        assert!(longest.starts_with(text.as_str()), "{files:?}");
    }
    (*longest).clone()
}

/// Polls until `path`'s user message ends with `word`, as fast as it can read.
fn wait_on_disk(path: &Path, word: &str) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(word) && message_content(path, 1).ends_with(word) {
            return;
        }
        assert!(Instant::now() < deadline, "{word} never reached {path:?}");
        std::thread::yield_now();
    }
}

/// Starts the app on the session, restores a recovery file it offers, and saves: the
/// session file then holds what the app holds after the restart.
fn restart(dir: &Path, session: &Path) -> (Tui, bool) {
    let mut tui = Tui::start(dir, "sessions/weather.json");
    // The footer is drawn last: once it shows the panes' keys, the whole first frame is
    // on screen, and the restore question would be in it.
    tui.wait_for("the first frame", |s| {
        s.contains("Recovery file found") || s.lines().last().is_some_and(|l| l.contains("? help"))
    });
    let offered = tui.screen().contains("Recovery file found");
    if offered {
        tui.send("y");
        tui.wait_for("the restore", |s| s.contains("unsaved changes restored"));
    }
    tui.send("\x13"); // Ctrl+S
    tui.wait_for("the save", |s| s.contains("saved sessions/weather.json"));
    assert!(session.exists());
    (tui, offered)
}

/// Leaves the editor and asks for a save.
fn save(tui: &mut Tui) {
    tui.send("\x1b"); // Esc
    tui.wait_for("the editor to close", |s| s.contains("#2 fields"));
    tui.send("\x13"); // Ctrl+S
}

#[test]
fn the_newest_typing_survives_repeated_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let session = weather_session(dir.path());
    let sessions = session.parent().unwrap().to_path_buf();
    let recovery = sessions.join("weather.recovery.json");
    let rounds = setting("CHATPLATE_KILL_ROUNDS", 12) as usize;
    // What was on disk (so acknowledged by the app) before the last kill.
    let mut acknowledged = message_content(&session, 1);
    let mut restored = 0;
    for round in 0..=rounds {
        let before = on_disk(&sessions);
        let want = newest(&before);
        let (mut tui, offered) = restart(dir.path(), &session);
        restored += usize::from(offered);
        let held = message_content(&session, 1);
        assert_eq!(
            held, want,
            "round {round}: the app holds an older text than the disk had: {before:?}"
        );
        assert!(
            held.starts_with(&acknowledged),
            "round {round}: lost typing"
        );
        if round == rounds {
            break;
        }
        tui.edit_user_message();
        let (first, second) = (format!(" r{round}a"), format!(" r{round}b"));
        tui.send(&first);
        match round % 3 {
            0 => {
                wait_on_disk(&recovery, &first);
                tui.send(&second);
                tui.wait_for("the word on screen", |s| s.contains(&second));
            }
            1 => {
                wait_on_disk(&recovery, &first);
                tui.send(&second);
                save(&mut tui);
                // Killed between the session file's write and the recovery file's removal,
                // most of the time.
                wait_on_disk(&session, &second);
            }
            _ => {
                save(&mut tui);
                std::thread::sleep(Duration::from_millis(round as u64 % 7 * 3));
            }
        }
        tui.kill("KILL");
        tui.wait_exit();
        acknowledged = newest(&on_disk(&sessions));
    }
    eprintln!("{rounds} kills, {restored} recovery files restored");
}

/// A plain `chatplate` opens the default template, whose untitled session has a
/// recovery file of its own name: with none of its own, one left by an untitled session
/// on another template is offered, and restoring it brings that template back.
#[test]
fn a_plain_start_offers_an_untitled_recovery_file_of_another_template() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(dir.path().join("mine.jinja"), "{{ messages[0].content }}").unwrap();
    let mut session = chatplate_core::session::Session::new(
        chatplate_core::session::TemplateRef::Path("../mine.jinja".into()),
    );
    session
        .messages
        .push(chatplate_core::session::Message::new("user", "kept"));
    let kept = sessions.join(".untitled-mine-1a2b3c4d.recovery.json");
    session.save(&kept).unwrap();
    let launch = crate::e2e_support::Launch {
        size: (24, 200),
        ..crate::e2e_support::Launch::args(&[])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the restore question", |s| {
        s.contains(".untitled-mine-1a2b3c4d.recovery.json") && s.contains("../mine.jinja")
    });
    tui.send("y");
    // The conversation is back; its template, outside the sessions folder, is shown as
    // not allowed until its folder is (the rule every session path follows).
    tui.wait_for("the restored session", |s| {
        s.contains("unsaved changes restored from")
            && s.contains("2 user  kept")
            && s.contains("template path \"../mine.jinja\"")
    });
    assert!(
        kept.exists(),
        "restored, and still the file its changes go to"
    );
}
