//! Which part of the prompt belongs to which message: a heuristic behind one function,
//! [`locate_messages`], so exact attribution can replace it without touching callers.
//!
//! Each message's content (or, without content, its first tool call's name) is searched
//! for in the prompt, in order, starting where the previous message's match ended.
//! Templates copy content verbatim, so this finds the right place unless a template
//! rewrites it (then that message simply gets no range).
//!
//! The work is bounded: a message that is not found costs a scan to the end of the
//! prompt, so the total bytes scanned are capped at a few times the prompt's length.
//! Once the budget is spent the remaining messages get no range instead of rescanning a
//! megabyte-sized prompt once per message.

use std::ops::Range;

use serde_json::Value as Json;

/// Scans allowed, in multiples of the prompt length (plus [`SCAN_EXTRA`]); a handful of
/// rewritten messages still leaves the rest located.
const SCAN_FACTOR: usize = 4;
/// Extra scan budget so small prompts never run out.
const SCAN_EXTRA: usize = 1 << 20;

/// Each message's byte range in `prompt`, when found (see the module docs).
pub fn locate_messages(prompt: &str, messages: &[Json]) -> Vec<Option<Range<usize>>> {
    let mut budget = prompt.len().saturating_mul(SCAN_FACTOR) + SCAN_EXTRA;
    let mut from = 0;
    messages
        .iter()
        .map(|message| {
            let needle = anchor(message)?;
            let rest = prompt.get(from..)?;
            let window = floor_char_boundary(rest, budget);
            let found = rest[..window].find(needle);
            budget -= found.map_or(window, |at| at + needle.len()).min(budget);
            let start = from + found?;
            from = start + needle.len();
            Some(start..from)
        })
        .collect()
}

/// The longest prefix length of `text` that is at most `limit` bytes and ends on a
/// character boundary.
fn floor_char_boundary(text: &str, limit: usize) -> usize {
    if limit >= text.len() {
        return text.len();
    }
    (0..=limit)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The text a message is recognised by: its trimmed content (or first text part), else
/// its first tool call's function name.
fn anchor(message: &Json) -> Option<&str> {
    let content = match message.get("content") {
        Some(Json::String(text)) => text.trim(),
        Some(Json::Array(parts)) => parts
            .iter()
            .find_map(|p| p.get("text").and_then(Json::as_str))
            .unwrap_or_default()
            .trim(),
        _ => "",
    };
    if !content.is_empty() {
        return Some(content);
    }
    message
        .get("tool_calls")
        .and_then(Json::as_array)
        .and_then(|calls| calls.first())
        .and_then(|call| call.pointer("/function/name").or_else(|| call.get("name")))
        .and_then(Json::as_str)
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(text: &str) -> Json {
        json!({"role": "user", "content": text})
    }

    #[test]
    fn messages_are_found_in_order() {
        let messages = [user("hi"), json!({"role": "assistant", "content": " hi "})];
        let spans = locate_messages("<u>hi</u><a>hi</a>", &messages);
        assert_eq!(spans, vec![Some(3..5), Some(12..14)]);
    }

    #[test]
    fn tool_calls_are_found_by_name_and_misses_do_not_stop_the_rest() {
        let call = json!({"role": "assistant", "content": null,
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {}}}]});
        let messages = [user("rewritten"), call, user("after")];
        let spans = locate_messages("<call>get_weather</call> after", &messages);
        assert_eq!(spans, vec![None, Some(6..17), Some(25..30)]);
    }

    #[test]
    fn a_spent_scan_budget_leaves_later_messages_unlocated() {
        // 1 MB prompt, 5,000 messages that are not in it: without the budget each one
        // rescans the whole prompt (5 GB); with it, the scans stop after a few megabytes.
        let prompt = "x".repeat(1 << 20);
        let messages: Vec<Json> = (0..5000).map(|i| user(&format!("m{i}"))).collect();
        let mut last = user("x");
        last["content"] = json!("xx");
        let mut all = messages;
        all.push(last);
        let spans = locate_messages(&prompt, &all);
        assert!(spans.iter().all(Option::is_none), "budget spent on misses");
    }

    #[test]
    fn windows_end_on_character_boundaries() {
        assert_eq!(floor_char_boundary("aé", 2), 1);
        assert_eq!(floor_char_boundary("aé", 9), 3);
    }
}
