//! Round-trip badges with a tokenizer at hand: ✓ means the tokens survive too, and a
//! message whose text comes back as other tokens is marked ✗ with the first differing
//! token (the cases of `tests/data/roundtrip/goldens.json`, made with transformers 5.23).

#![cfg(all(feature = "tui", feature = "tokens"))]

use crate::{common, tokens_support, tui_support};
use std::path::Path;

use chatplate::tui::action::{Action, Direction, MessageAction, Pane, Step};
use chatplate::tui::app::App;
use chatplate_core::session::Session;
use insta::assert_snapshot;
use serde_json::{json, Value as Json};
use tui_support::{app_for, screen};

fn read(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// An app on golden case `id` in `dir`: its conversation with the parsed message as the
/// answer, its template and schema, and the qwen3 tokenizer copied beside the session.
fn token_app(dir: &Path, id: &str, test: &str) -> Option<App> {
    let tokenizer = tokens_support::real_tokenizer("qwen3", test)?;
    let data = common::repo().join("tests/data");
    let goldens = read(&data.join("roundtrip/goldens.json"));
    let parse = read(&data.join("parse/goldens.json"));
    let case = goldens["cases"]
        .as_array()?
        .iter()
        .find(|c| c["id"] == id)?;
    let template = match case["template_source"].as_str() {
        Some(source) => source.to_string(),
        None => {
            let corpus = common::corpus_dir(test)?;
            let name = case["template"].as_str()?;
            std::fs::read_to_string(corpus.join("templates").join(name)).unwrap()
        }
    };
    let schema = match &case["schema_source"] {
        Json::Null => parse["schemas"][case["schema"].as_str()?]["schema"].clone(),
        inline => inline.clone(),
    };
    std::fs::create_dir(dir.join("tok")).unwrap();
    for file in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(tokenizer.join(file), dir.join("tok").join(file)).unwrap();
    }
    let mut messages = case["messages"].as_array()?.clone();
    messages.push(case["parsed"].clone());
    let session = json!({
        "version": 1,
        // The source itself: the Templates pane shows no temporary path.
        "template": {"source": template},
        "response_template": schema,
        "tokenizer": "tok",
        "messages": messages,
        "tools": parse["tools"],
    });
    let session: Session = serde_json::from_value(session).expect("a session");
    let mut app = app_for(session, dir);
    app.update(Action::Focus(Pane::Messages));
    app.update(Action::Message(MessageAction::Select(Step::Last)));
    app.update(Action::Message(MessageAction::Select(Step::Line(
        Direction::Up,
    ))));
    app.settle();
    Some(app)
}

#[test]
fn a_message_whose_tokens_merge_at_the_boundary_is_marked_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut app) = token_app(dir.path(), "boundary-merge", "tui_token_badge_merge") else {
        return;
    };
    let shown = screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(1), Some(false), "{shown}");
    assert_eq!(
        app.round_trip_note(1),
        [
            "✗ round trip: tokens differ at the prompt's last token: sampled \"Ġ\", re-rendered \
          \"ĠSunny\" (a boundary merge)"
        ]
    );
    assert_snapshot!("token_badge_merge_80x24", shown);
    assert_snapshot!("token_badge_merge_120x40", screen(&mut app, 120, 40));
}

#[test]
fn a_message_whose_tokens_survive_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut app) = token_app(dir.path(), "qwen35-clean", "tui_token_badge_clean") else {
        return;
    };
    let shown = screen(&mut app, 80, 24);
    assert_eq!(app.round_trip_of(1), Some(true), "{shown}");
    assert_eq!(app.round_trip_note(1), ["✓ round trip: text and tokens"]);
}
