//! Which part of the prompt belongs to which message: a heuristic behind one function,
//! [`locate_messages`], so exact attribution can replace it without touching callers.
//!
//! Each message's content (or, without content, its first tool call's name) is searched
//! for in the prompt, in order, starting where the previous message's match ended.
//! Templates copy content verbatim, so this finds the right place unless a template
//! rewrites it (then that message simply gets no range).
//!
//! The work is bounded. A message that is not found would cost a scan to the end of the
//! prompt, and a template that rewrites every tool result would make that one rescan of a
//! megabyte-sized prompt per message. So searches scan to the end only while a budget of a
//! few prompt lengths lasts (enough for a large tool block before the first message);
//! after that each search looks a window ahead: room for the messages skipped since the
//! last match plus a margin of a few times the average prompt bytes per message so far. A hard cap on the bytes scanned in total ends the search
//! for pathological inputs (the remaining messages get no range).

use std::borrow::Borrow;
use std::ops::Range;

use serde_json::Value as Json;

/// Bytes that full scans (to the end of the prompt) may cover, per prompt byte.
const FULL_SCAN_FACTOR: usize = 4;
/// Bytes all searches together may cover, per prompt byte.
const TOTAL_SCAN_FACTOR: usize = 16;
/// Added to both budgets, so small prompts never run out.
const SCAN_EXTRA: usize = 1 << 20;
/// How far past the expected position a windowed search looks, at least.
const MARGIN: usize = 1024;
/// ... and in average message lengths.
const MARGIN_MESSAGES: usize = 4;
/// Template text expected around one message (role headers, special tokens).
const PER_MESSAGE: usize = 512;

/// Each message's byte range in `prompt`, when found (see the module docs).
pub fn locate_messages<M: Borrow<Json>>(prompt: &str, messages: &[M]) -> Vec<Option<Range<usize>>> {
    let mut search = Search::new(prompt);
    (messages.iter().enumerate())
        .map(|(index, message)| search.next(index, message.borrow()))
        .collect()
}

/// Where the search stands: the end of the last match, and what it may still scan.
pub(super) struct Search<'a> {
    prompt: &'a str,
    full_budget: usize,
    total_budget: usize,
    from: usize,
    /// Prompt bytes the messages skipped since the last match are expected to take.
    behind: usize,
}

impl<'a> Search<'a> {
    pub(super) fn new(prompt: &'a str) -> Self {
        Search {
            prompt,
            full_budget: prompt.len().saturating_mul(FULL_SCAN_FACTOR) + SCAN_EXTRA,
            total_budget: prompt.len().saturating_mul(TOTAL_SCAN_FACTOR) + SCAN_EXTRA,
            from: 0,
            behind: 0,
        }
    }

    /// Takes message `index` as found at `span` (or not found) by an earlier search,
    /// without searching: the next search starts after it.
    pub(super) fn skip(&mut self, message: &Json, span: Option<&Range<usize>>) {
        match (span, anchor(message)) {
            (Some(span), _) => {
                self.from = span.end;
                self.behind = 0;
            }
            (None, Some(needle)) => self.behind += needle.len() + PER_MESSAGE,
            (None, None) => self.behind += PER_MESSAGE,
        }
    }

    /// Looks for message `index` after the previous match.
    pub(super) fn next(&mut self, index: usize, message: &Json) -> Option<Range<usize>> {
        let Some(needle) = anchor(message) else {
            self.behind += PER_MESSAGE;
            return None;
        };
        let rest = self.prompt.get(self.from..)?;
        let full = rest.len() <= self.full_budget;
        let reach = if full {
            rest.len()
        } else {
            let average = self.from / (index + 1);
            self.behind + needle.len() + MARGIN + MARGIN_MESSAGES * average
        };
        let window = floor_char_boundary(rest, reach.min(self.total_budget));
        let found = rest[..window].find(needle);
        let scanned = found.map_or(window, |at| at + needle.len());
        self.total_budget -= scanned.min(self.total_budget);
        if full {
            self.full_budget -= scanned.min(self.full_budget);
        }
        let Some(at) = found else {
            self.behind += needle.len() + PER_MESSAGE;
            return None;
        };
        let start = self.from + at;
        self.from = start + needle.len();
        self.behind = 0;
        Some(start..self.from)
    }
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
    fn rewritten_messages_all_through_a_long_prompt_do_not_stop_the_rest() {
        // Every third message is rewritten by the template (like tool results that
        // Llama 3.1 re-serialises): 700 misses, each of which used to cost a scan to the
        // end of the prompt and, once a budget ran out, left every later message unfound.
        let mut prompt = String::new();
        let mut messages = Vec::new();
        for i in 0..2100 {
            if i % 3 == 2 {
                messages.push(user(&format!("{{\"result\": {i}}}")));
                prompt.push_str(&format!("<tool>result={i}</tool>\n"));
            } else {
                messages.push(user(&format!("message number {i} with some words")));
                prompt.push_str(&format!(
                    "<turn>message number {i} with some words</turn>\n"
                ));
            }
        }
        let spans = locate_messages(&prompt, &messages);
        let found = spans.iter().filter(|s| s.is_some()).count();
        assert_eq!(found, 1400);
        assert!(spans[2099].is_none() && spans[2098].is_some());
    }

    #[test]
    fn the_total_scan_is_capped() {
        // 1 MB prompt, 5,000 messages that are not in it: without the cap each one would
        // rescan the prompt (5 GB); with it the scans stop after a few dozen megabytes,
        // and a message after them is not looked for.
        let prompt = "x".repeat(1 << 20);
        let mut messages: Vec<Json> = (0..5000).map(|i| user(&format!("m{i}"))).collect();
        messages.push(user("xx"));
        let spans = locate_messages(&prompt, &messages);
        assert!(spans.iter().all(Option::is_none));
    }

    #[test]
    fn windows_end_on_character_boundaries() {
        assert_eq!(floor_char_boundary("aé", 2), 1);
        assert_eq!(floor_char_boundary("aé", 9), 3);
    }
}
