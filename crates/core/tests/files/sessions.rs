//! The example sessions in `sessions/` as a test: each must still render to its recorded
//! `expected` (the prompts were verified against transformers with
//! `scripts/verify_sessions.py`), and every bundled template must have at least one.

use std::path::PathBuf;

use chatplate_core::catalog;
use chatplate_core::check::{check_all, collect_fixtures, report, CheckOptions};
use chatplate_core::session::{Session, TemplateRef};

use crate::common;

fn sessions_dir() -> PathBuf {
    common::repo().join("sessions")
}

#[test]
fn every_session_matches_its_expected_prompt() {
    let fixtures = collect_fixtures(&[sessions_dir()]).fixtures;
    assert!(!fixtures.is_empty(), "no sessions found");
    let failures: Vec<String> = check_all(&fixtures, &CheckOptions::default())
        .iter()
        .filter(|r| !r.outcome.passed())
        .map(report)
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_bundled_template_has_a_session() {
    let used: Vec<String> = collect_fixtures(&[sessions_dir()])
        .fixtures
        .iter()
        .filter_map(
            |fixture| match Session::load(&fixture.path).ok()?.template {
                TemplateRef::Bundled(name) => Some(name),
                _ => None,
            },
        )
        .collect();
    let missing: Vec<String> = catalog::bundled()
        .into_iter()
        .map(|t| t.name)
        .filter(|name| !used.contains(name))
        .collect();
    assert!(missing.is_empty(), "no session uses {missing:?}");
}

#[test]
fn the_default_session_is_a_tool_calling_showcase() {
    let session = Session::load(&sessions_dir().join("example.json")).expect("example.json");
    assert_eq!(
        session.template,
        TemplateRef::Bundled(catalog::DEFAULT_TEMPLATE.into())
    );
    let roles: Vec<&str> = session
        .messages
        .iter()
        .map(chatplate_core::session::Message::role)
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    assert!(session.messages[2].0.contains_key("tool_calls"));
    assert!(session.tools.is_some_and(|tools| !tools.is_empty()));
}
