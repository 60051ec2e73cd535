//! Memory on large session files and request bodies, measured through the metered
//! allocator on this thread (the test's own allocations only, so the bounds are
//! structural, not timings): a file is read into values at their exact sizes, never
//! more than a few times its size (denser files are refused, see `compact.rs`'s own
//! tests), and token ids as ids.

use std::path::Path;

use chatplate_core::request;
use chatplate_core::session::Session;
use chatplate_render::{is_metered, reset_thread_peak, thread_live_bytes, thread_peak_bytes};

/// A session of `count` short messages (about 80 bytes of text each): the most
/// values per byte a conversation of text has.
fn short_messages(count: usize) -> String {
    let messages: Vec<String> = (0..count)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            format!(
                r#"{{"role": "{role}", "content": "Message {i}: the quick brown fox jumps over the lazy dog, again."}}"#
            )
        })
        .collect();
    format!(
        r#"{{"version": 1, "template": {{"bundled": "gemma-3-tools"}}, "messages": [{}]}}"#,
        messages.join(", ")
    )
}

/// The most this thread held while `read` ran, and what it still holds after,
/// beyond what it held before (the result is kept).
fn held_by<T>(read: impl FnOnce() -> T) -> (T, usize, usize) {
    assert!(
        is_metered(),
        "the test binary installs the metered allocator"
    );
    let before = thread_live_bytes();
    reset_thread_peak();
    let result = read();
    let peak = usize::try_from(thread_peak_bytes() - before).unwrap_or(0);
    let live = usize::try_from(thread_live_bytes() - before).unwrap_or(0);
    (result, peak, live)
}

/// What serde_json's own reading of `text` holds.
fn serde_json_holds(text: &str) -> usize {
    let (tree, _, live) = held_by(|| serde_json::from_str::<serde_json::Value>(text).unwrap());
    drop(tree);
    live
}

#[test]
fn a_session_of_short_messages_is_held_in_less_than_serde_json_takes() {
    let text = short_messages(20_000);
    let (session, peak, live) = held_by(|| Session::parse(&text, Path::new("long.json")));
    assert_eq!(session.unwrap().messages.len(), 20_000);
    // serde_json's tree leaves room for more keys in every message object.
    let theirs = serde_json_holds(&text);
    assert!(
        live * 10 < theirs * 9,
        "{live} bytes held, serde_json {theirs}"
    );
    // The densest text a conversation has (80-byte messages) takes about four times
    // its size while it is read; a file this dense is refused past two and a half
    // times its size (LOAD_HALVES) once it is large.
    assert!(peak < 5 * text.len(), "{peak} bytes at the peak");
}

#[test]
fn a_request_body_is_held_in_less_than_serde_json_takes() {
    // The same messages as a request body.
    let text = short_messages(20_000).replacen(
        r#""version": 1, "template": {"bundled": "gemma-3-tools"}"#,
        r#""model": "m""#,
        1,
    );
    let (body, peak, live) = held_by(|| request::parse_body(&text, Path::new("body.json")));
    assert!(request::looks_like_request(&body.unwrap()));
    let theirs = serde_json_holds(&text);
    assert!(
        live * 10 < theirs * 9,
        "{live} bytes held, serde_json {theirs}"
    );
    assert!(peak < 5 * text.len(), "{peak} bytes at the peak");
}

#[test]
fn expected_token_ids_are_held_as_ids() {
    let ids: Vec<String> = (0..100_000).map(|i| (i % 50_000).to_string()).collect();
    let text = format!(
        r#"{{"version": 1, "template": {{"bundled": "gemma-3-tools"}},
            "messages": [{{"role": "user", "content": "hi"}}], "expected_tokens": [{}]}}"#,
        ids.join(", ")
    );
    let (session, peak, _) = held_by(|| Session::parse(&text, Path::new("ids.json")));
    let session = session.unwrap();
    assert!(session.expected_tokens.is_some());
    // Four bytes an id (the list), not a JSON value of 80 bytes and a string each.
    assert!(
        peak < 2 * text.len(),
        "reading {} bytes held {peak} bytes",
        text.len()
    );
}
