//! The message log (`L`): every notice and error the status line showed, kept with its
//! time; a notice cut at 80 columns points to it; the log scrolls and filters.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{Action, Pane};
use chatplate::tui::app::driver;
use chatplate::tui::dialogs::Overlay;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use tui_support::{ctrl, example_app, key, screen, type_text};

/// The screen with each `HH:MM:SS` clock shown as `hh:mm:ss`: the log's times are the
/// wall clock's.
fn without_clock(screen: &str) -> String {
    let chars: Vec<char> = screen.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let digit = |j: usize| chars.get(j).is_some_and(char::is_ascii_digit);
    while i < chars.len() {
        let clock = [0, 1, 3, 4, 6, 7].iter().all(|&k| digit(i + k))
            && chars.get(i + 2) == Some(&':')
            && chars.get(i + 5) == Some(&':');
        if clock {
            out.push_str("hh:mm:ss");
            i += 8;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// A path long enough that what the opener says of it does not fit 80 columns.
const LONG: &str = "/nowhere/a-folder-with-a-rather-long-name/and-another-one-below-it/model.jinja";

/// Asks the opener for `LONG`: the status line says it is not there.
fn open_missing(app: &mut chatplate::tui::app::App) -> String {
    driver::press(app, ctrl('p'));
    type_text(app, LONG);
    driver::press(app, key(KeyCode::Enter));
    let status = app.status().expect("the opener says why").text.clone();
    assert!(status.contains(LONG), "{status}");
    status
}

#[test]
fn a_cut_notice_points_to_the_log_which_keeps_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    let opening = open_missing(&mut app);
    // The worker's answer: the path is not there, too long for 80 columns.
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("… (L for the log)"), "{shown}");
    let said = app.status().expect("the opener's answer").clone();
    assert!(said.error && said.text.chars().count() > 80, "{said:?}");
    let said = said.text;
    // The next key clears the status line; the log still has both.
    app.handle_key(key(KeyCode::Char('j')));
    assert!(app.status().is_none());
    let kept: Vec<&str> = app.log().entries().map(|e| e.text.as_str()).collect();
    assert_eq!(kept, [opening.as_str(), said.as_str()]);
    app.handle_key(key(KeyCode::Char('L')));
    assert!(matches!(app.overlay(), Some(Overlay::Log(_))));
    let log = screen(&mut app, 80, 24);
    // The entry whole, wrapped under the list.
    let flat: String = log.replace(['│', '"'], "");
    let flat: String = flat.split_whitespace().collect::<Vec<_>>().concat();
    let want: String = said.split_whitespace().collect::<Vec<_>>().concat();
    assert!(flat.contains(&want), "{log}");
    assert_snapshot!("log_one_cut_notice_80x24", without_clock(&log));
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_none(), "Esc closes an unfiltered log");
}

#[test]
fn a_short_notice_is_shown_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    open_missing(&mut app);
    let shown = screen(&mut app, 200, 24);
    assert!(!shown.contains("for the log"), "{shown}");
}

#[test]
fn the_log_keeps_every_notice_in_order_and_filters_as_you_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    open_missing(&mut app);
    app.handle_key(key(KeyCode::Char('u'))); // nothing to undo: a notice
    let undo = app.status().expect("undo says something").text.clone();
    open_missing(&mut app); // the same again: counted, not repeated
                            // The same notice twice in a row is one entry, counted.
    let texts: Vec<(String, u32)> = app
        .log()
        .entries()
        .map(|e| (e.text.clone(), e.count))
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[1].0, undo);
    app.handle_key(key(KeyCode::Char('u')));
    app.handle_key(key(KeyCode::Char('u')));
    let last = app.log().entries().last().unwrap();
    assert_eq!((last.text.as_str(), last.count), (undo.as_str(), 2));
    app.handle_key(key(KeyCode::Char('L')));
    assert_snapshot!(
        "log_entries_120x40",
        without_clock(&screen(&mut app, 120, 40))
    );
    type_text(&mut app, "UNDO");
    let Some(Overlay::Log(log)) = app.overlay() else {
        panic!("the log is open")
    };
    let shown: Vec<&str> = log.shown().iter().map(|e| e.text.as_str()).collect();
    assert_eq!(shown, [undo.as_str(), undo.as_str()], "any case, in order");
    assert_snapshot!(
        "log_filtered_80x24",
        without_clock(&screen(&mut app, 80, 24))
    );
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_some(), "Esc clears the filter first");
    app.handle_key(key(KeyCode::Esc));
    assert!(app.overlay().is_none());
}

#[test]
fn the_log_is_empty_at_first_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::MessageLog);
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("nothing was said yet"), "{shown}");
}

/// The texts the log keeps, with their counts.
fn kept(app: &chatplate::tui::app::App) -> Vec<(String, u32)> {
    app.log()
        .entries()
        .map(|e| (e.text.clone(), e.count))
        .collect()
}

#[test]
fn a_live_find_keeps_what_enter_found_not_every_keystroke() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "weather");
    let typing = app.status().expect("the find says what it found").clone();
    assert!(typing.transient, "{typing:?}");
    assert_eq!(kept(&app), [], "no entry per keystroke");
    app.handle_key(key(KeyCode::Enter));
    let found = app.status().expect("Enter's find").text.clone();
    assert_eq!(kept(&app), [(found, 1)]);
}

#[test]
fn notices_that_differ_only_in_numbers_are_one_entry_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "e");
    app.handle_key(key(KeyCode::Enter));
    for _ in 0..3 {
        app.handle_key(key(KeyCode::Char('n')));
    }
    let last = app.status().expect("n says where it is").text.clone();
    let entries = kept(&app);
    assert_eq!(
        entries,
        [(last, 4)],
        "Enter and three n: one line, the newest text"
    );
}
