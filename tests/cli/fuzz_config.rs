//! Fuzzing the user's config file, which every command reads for its template roots and
//! the app for its keys and colours: real configs mutated (odd values where entries go,
//! bytes spliced in, deep nesting, a byte order mark). The property: no panic, no hang,
//! and every problem says where it is, `config.json:LINE:COL: ...`, at a place inside the
//! file; a problem with an entry points at that entry's value.
//!
//! Bounded like the engine's fuzzing (`crates/core/tests/fuzz`): `CHATPLATE_FUZZ_CASES`
//! inputs, `CHATPLATE_FUZZ_SECONDS` at most, a fixed seed under CI.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{json, Value as Json};

use crate::common::fuzzing::{config as fuzz_config, setting};

/// Configs as users write them.
fn seeds() -> Vec<Json> {
    vec![
        json!({"template_roots": ["/srv/templates", "rel"]}),
        json!({"keys": {"save": "ctrl+w", "messages.edit": ["x", "d"]}, "colors": {"user": "light-blue"}}),
        json!({"mouse": false, "keys": {"quit": "f10"}, "template_roots": []}),
        json!({}),
    ]
}

/// Where odd values go.
const POINTERS: &[&str] = &[
    "",
    "/template_roots",
    "/template_roots/0",
    "/keys",
    "/keys/save",
    "/keys/messages.edit",
    "/keys/nosuch",
    "/colors",
    "/colors/user",
    "/colors/nosuch",
    "/mouse",
    "/colours",
];

fn odd_value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        Just(json!(true)),
        Just(json!(-1)),
        Just(json!(1e308)),
        Just(json!("")),
        Just(json!("ctrl+")),
        Just(json!("hyper+x")),
        Just(json!("\u{9b}2J\u{0}\u{202e}")),
        Just(json!("k\"\\\n")),
        "[a-z+.\\-]{0,12}".prop_map(Json::from),
        any::<String>().prop_map(Json::from),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Json::from),
            prop::collection::vec(("[a-z.]{0,6}", inner), 0..3)
                .prop_map(|entries| Json::Object(entries.into_iter().collect())),
        ]
    })
}

/// Bytes that break JSON in interesting places.
fn splice() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\\u00".to_string()),
        Just("\\ud800".to_string()),
        Just("{".to_string()),
        Just("[".to_string()),
        Just("}".to_string()),
        Just(",".to_string()),
        Just(":".to_string()),
        Just("\u{feff}".to_string()),
        Just("\u{0}".to_string()),
        Just("\r\n".to_string()),
        Just("é".to_string()),
        Just("\"keys\": 1, \"keys\"".to_string()),
        Just("[".repeat(5000)),
        ".{0,6}",
    ]
}

/// One config file's text: a seed with odd values set, maybe spliced, maybe behind a
/// byte order mark.
fn config_text() -> impl Strategy<Value = String> {
    (
        0..seeds().len(),
        prop::collection::vec((prop::sample::select(POINTERS), odd_value()), 0..3),
        prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, splice()), 0..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(seed, changes, splices, pretty, bom)| {
            let mut value = seeds().swap_remove(seed);
            for (pointer, odd) in changes {
                set(&mut value, pointer, odd);
            }
            let mut text = match pretty {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => value.to_string(),
            };
            for (at, len, piece) in splices {
                let chars: Vec<char> = text.chars().collect();
                let start = at.index(chars.len() + 1);
                let end = (start + len).min(chars.len());
                text = chars[..start].iter().collect::<String>()
                    + &piece
                    + &chars[end..].iter().collect::<String>();
            }
            match bom {
                true => format!("\u{feff}{text}"),
                false => text,
            }
        })
}

/// Sets `pointer` in `json` to `value`, adding the last key when its parent is an object.
fn set(json: &mut Json, pointer: &str, value: Json) {
    if let Some(slot) = json.pointer_mut(pointer) {
        *slot = value;
    } else if let Some((parent, key)) = pointer.rsplit_once('/') {
        if let Some(Json::Object(map)) = json.pointer_mut(parent) {
            map.insert(key.to_string(), value);
        }
    }
}

/// The place a problem about `file` names, checked to be inside `text`; `None` when the
/// problem has no place.
fn place(problem: &str, file: &str, text: &str) -> Result<Option<(usize, usize)>, String> {
    let rest = problem
        .strip_prefix(file)
        .ok_or_else(|| format!("does not start with {file}: {problem}"))?;
    let mut parts = rest.splitn(4, ':');
    let (Some(""), Some(line), Some(column)) = (parts.next(), parts.next(), parts.next()) else {
        return Ok(None);
    };
    let (Ok(line), Ok(column)) = (line.parse::<usize>(), column.parse::<usize>()) else {
        return Ok(None);
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let inside = line >= 1
        && line <= lines.len()
        && column >= 1
        && column <= lines[line - 1].chars().count() + 1;
    if !inside {
        return Err(format!("{line}:{column} is outside the file: {problem}"));
    }
    Ok(Some((line, column)))
}

/// The character at 1-based `line` and `column` of `text`.
fn char_at(text: &str, (line, column): (usize, usize)) -> Option<char> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.split('\n').nth(line - 1)?.chars().nth(column - 1)
}

/// Every problem has a place inside the file; a problem with an entry (the text is
/// JSON) points at the start of a value.
fn check(problems: &[String], file: &str, text: &str) -> Result<(), String> {
    let is_json = serde_json::from_str::<Json>(text.strip_prefix('\u{feff}').unwrap_or(text));
    for problem in problems {
        let Some(at) = place(problem, file, text)? else {
            return Err(format!("no place: {problem}"));
        };
        if is_json.is_ok() {
            let first = char_at(text, at);
            let starts_value = first.is_some_and(|c| "{[\"tfn-0123456789".contains(c));
            if !starts_value {
                return Err(format!("{problem}: points at {first:?}, not a value"));
            }
        }
    }
    Ok(())
}

/// Whether this target's time budget (`CHATPLATE_FUZZ_SECONDS`, default 60) is spent.
fn over_budget(started: Instant) -> bool {
    started.elapsed() > Duration::from_secs(setting("CHATPLATE_FUZZ_SECONDS", 60))
}

#[test]
fn hostile_config_files_never_panic_and_every_problem_has_a_place() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let file = path.display().to_string();
    let mut runner = proptest::test_runner::TestRunner::new(fuzz_config());
    let result = runner.run(&config_text(), |text| {
        if over_budget(started) {
            return Ok(());
        }
        std::fs::write(&path, &text).unwrap();
        let tried = Instant::now();
        let roots = chatplate::template_roots::configured(&path);
        prop_assert!(tried.elapsed() < Duration::from_secs(5), "slow: {text:?}");
        if let Err(problem) = &roots {
            check(std::slice::from_ref(problem), &file, &text).map_err(TestCaseError::fail)?;
        }
        #[cfg(feature = "tui")]
        {
            let name = std::path::Path::new("config.json");
            let settings = chatplate::tui::config::from_text(&text, name);
            check(&settings.problems, "config.json", &text).map_err(TestCaseError::fail)?;
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}
