//! Fuzzing what a user types and configures: random key sequences and unbracketed or
//! bracketed pastes (control characters, escape bytes, CR and LF, wide characters)
//! against the real app state and its frames at three sizes, and random `config.json`
//! text. The property: no panic, and every frame draws. Bounded like the engine's
//! fuzzing (`CHATPLATE_FUZZ_CASES`, fixed seed under CI).

#![cfg(feature = "tui")]

use std::path::Path;
use std::time::{Duration, Instant};

use chatplate::tui::action::Action;
use chatplate::tui::{app::driver, config};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;

use crate::common::fuzzing::{config as fuzz_config, setting};
use crate::tui_support::{example_app, screen};

/// One thing the user does: a key (with modifiers) or a paste.
#[derive(Debug, Clone)]
enum Input {
    Key(KeyEvent),
    Paste(String),
}

fn key_code() -> impl Strategy<Value = KeyCode> {
    prop_oneof![
        4 => prop::char::range(' ', '~').prop_map(KeyCode::Char),
        1 => any::<char>().prop_map(KeyCode::Char),
        1 => prop::sample::select(vec![
            KeyCode::Enter, KeyCode::Esc, KeyCode::Tab, KeyCode::BackTab, KeyCode::Backspace,
            KeyCode::Delete, KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right,
            KeyCode::Home, KeyCode::End, KeyCode::PageUp, KeyCode::PageDown, KeyCode::Insert,
        ]),
        1 => (1u8..13).prop_map(KeyCode::F),
    ]
}

fn modifiers() -> impl Strategy<Value = KeyModifiers> {
    prop::sample::select(vec![
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    ])
}

fn paste_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,12}",
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\t".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("<|im_end|>".to_string()),
        Just("{\"a\": [1, 2]}".to_string()),
        ".{0,4}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|parts| parts.concat())
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        12 => (key_code(), modifiers()).prop_map(|(code, mods)| Input::Key(KeyEvent::new(code, mods))),
        1 => paste_text().prop_map(Input::Paste),
    ]
}

/// Applies `inputs` as the event loop would (file work done, terminal effects dropped:
/// no editor is started and nothing quits), drawing a frame every few inputs.
fn drive(dir: &Path, inputs: &[Input]) {
    let mut app = example_app(dir);
    for (i, input) in inputs.iter().enumerate() {
        let effect = match input {
            Input::Key(key) => driver::press(&mut app, *key),
            Input::Paste(text) => driver::apply(&mut app, Action::Paste(text.clone())),
        };
        let _ = driver::follow(&mut app, effect);
        if i % 8 == 7 {
            let _ = screen(&mut app, 80, 24);
        }
    }
    for (width, height) in [(80, 24), (120, 40), (30, 8)] {
        app.update(Action::Resize(width, height));
        let _ = screen(&mut app, width, height);
    }
}

/// Whether this target's time budget (`CHATPLATE_FUZZ_SECONDS`, default 60) is spent.
fn over_budget(started: Instant) -> bool {
    started.elapsed() > Duration::from_secs(setting("CHATPLATE_FUZZ_SECONDS", 60))
}

#[test]
fn random_keys_and_pastes_never_panic_and_every_frame_draws() {
    let started = Instant::now();
    let mut runner = proptest::test_runner::TestRunner::new(fuzz_config());
    let strategy = prop::collection::vec(input(), 1..60);
    let result = runner.run(&strategy, |inputs| {
        if over_budget(started) {
            return Ok(());
        }
        let dir = tempfile::tempdir().unwrap();
        drive(dir.path(), &inputs);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

fn json_fragment() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("5".to_string()),
        Just("true".to_string()),
        Just("[]".to_string()),
        "\"[a-z+\\-]{0,10}\"",
        Just("\"ctrl+s\"".to_string()),
        Just("\"light-blue\"".to_string()),
        Just("[\"f2\", \"ctrl+x\"]".to_string()),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::vec(("\"[a-z.\\-]{0,10}\"", inner), 0..4).prop_map(|entries| {
            let body: Vec<String> = entries.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{{{}}}", body.join(", "))
        })
    })
}

fn config_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (json_fragment(), json_fragment())
            .prop_map(|(keys, colors)| format!("{{\"keys\": {keys}, \"colors\": {colors}}}")),
        1 => json_fragment(),
        1 => ".{0,64}",
    ]
}

#[test]
fn random_config_files_never_panic_and_name_the_file_in_each_problem() {
    let mut runner = proptest::test_runner::TestRunner::new(fuzz_config());
    let result = runner.run(&config_text(), |text| {
        let settings = config::from_text(&text, Path::new("config.json"));
        for problem in &settings.problems {
            prop_assert!(problem.starts_with("config.json"), "{problem}");
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}
