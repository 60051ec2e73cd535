//! Locating the messages in a new prompt after an edit, from where the previous
//! render's search left off.
//!
//! The content search ([`super::locate`]) scans the whole prompt for every render: at
//! 10,000 messages (Llama 3.1) it cost about a third of the render's own instructions,
//! on the way from a keystroke to the updated prompt. An edit of message `i` leaves the
//! prompt the same up to somewhere in message `i`'s turn, and the messages before it
//! the same, so the earlier ranges of those messages still hold: the search takes them
//! as they were and searches only from the first message that changed (or whose range
//! reaches past the unchanged bytes). Line starts are found again the same way, after
//! the unchanged bytes only. The resumed search gets its scanning budgets afresh, so on
//! a prompt where a whole search runs out of them it may find later messages that a
//! whole search would give up on; otherwise it finds what a whole search finds.

use std::ops::Range;
use std::sync::Arc;

use serde_json::Value as Json;

use super::line_starts;
use super::locate::Search;
use crate::inspect::text::common_prefix_len;

/// A render's prompt, the messages it was rendered from and where each was found.
#[derive(Debug)]
pub(super) struct Located {
    /// The prompt.
    pub(crate) prompt: Arc<str>,
    /// The messages (the worker's snapshot: unchanged messages are the same `Arc`s).
    pub(crate) messages: Arc<Vec<Arc<Json>>>,
    /// Each message's range in the prompt, when found.
    pub(crate) spans: Vec<Option<Range<usize>>>,
    /// Where each line of the prompt starts ([`super::line_starts`]).
    pub(crate) line_starts: Vec<usize>,
}

/// Each message's range in `prompt` and its line starts, reusing what `previous` found
/// in the bytes the two prompts share.
pub(super) fn locate_again(
    prompt: &str,
    messages: &[Arc<Json>],
    previous: Option<&Located>,
) -> (Vec<Option<Range<usize>>>, Vec<usize>) {
    let Some(previous) = previous else {
        return (relocate(prompt, messages, None), line_starts(prompt));
    };
    let unchanged = common_prefix_len(&previous.prompt, prompt);
    (
        relocate(prompt, messages, Some((previous, unchanged))),
        relines(prompt, &previous.line_starts, unchanged),
    )
}

/// [`line_starts`] of `prompt`, whose first `unchanged` bytes are those of the prompt
/// whose line starts are `earlier`.
fn relines(prompt: &str, earlier: &[usize], unchanged: usize) -> Vec<usize> {
    if unchanged == 0 {
        return line_starts(prompt);
    }
    // A start before `unchanged` follows a newline among the unchanged bytes; the
    // others follow a newline at `unchanged - 1` or later.
    let mut starts: Vec<usize> = earlier
        .iter()
        .copied()
        .take_while(|&s| s < unchanged)
        .collect();
    let from = (0..unchanged)
        .rev()
        .find(|&i| prompt.is_char_boundary(i))
        .unwrap_or(0);
    let later = prompt[from..]
        .match_indices('\n')
        .map(|(i, _)| from + i + 1);
    starts.extend(later.filter(|&s| s >= unchanged));
    if prompt.ends_with('\n') {
        starts.pop();
    }
    starts
}

/// Each message's range in `prompt`, reusing `previous`'s ranges of the leading
/// messages that did not change and lie in the first `unchanged` bytes, which the two
/// prompts share.
fn relocate(
    prompt: &str,
    messages: &[Arc<Json>],
    previous: Option<(&Located, usize)>,
) -> Vec<Option<Range<usize>>> {
    let mut search = Search::new(prompt);
    let mut spans = Vec::with_capacity(messages.len());
    if let Some((previous, unchanged)) = previous {
        let earlier = previous.messages.iter().zip(&previous.spans);
        for (message, (old, span)) in messages.iter().zip(earlier) {
            let same = Arc::ptr_eq(message, old) || message == old;
            if !same || span.as_ref().is_some_and(|span| span.end > unchanged) {
                break;
            }
            spans.push(span.clone());
        }
        // The search resumes after the last message found, counting the ones not found
        // since (looking at every message's text again cost more than the search).
        let found = spans.iter().rposition(Option::is_some);
        let after = found.unwrap_or(0);
        for (message, span) in messages[after..].iter().zip(&spans[after..]) {
            search.skip(message, span.as_ref());
        }
    }
    let reused = spans.len();
    for (index, message) in messages.iter().enumerate().skip(reused) {
        spans.push(search.next(index, message));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The last message's index: as long as the search's budgets last (a fresh search
    /// gives up on the later messages of longer ones; resumed, it would find them).
    const LAST: usize = 2099;

    /// A long prompt whose every tenth message the template rewrites (not found).
    fn conversation(last: &str) -> (String, Vec<Arc<Json>>) {
        let mut prompt = String::new();
        let mut messages = Vec::new();
        for i in 0..=LAST {
            let text = if i == LAST {
                last.to_string()
            } else {
                format!("message number {i}")
            };
            if i % 10 == 9 && i != LAST {
                prompt.push_str(&format!("<tool>result={i}</tool>\n"));
                messages.push(json!({"role": "tool", "content": format!("{{\"r\": {i}}}")}));
            } else {
                prompt.push_str(&format!("<turn>{text}</turn>\n"));
                messages.push(json!({"role": "user", "content": text}));
            }
        }
        (prompt, messages.into_iter().map(Arc::new).collect())
    }

    fn located(prompt: &str, messages: &[Arc<Json>]) -> Located {
        let (spans, line_starts) = locate_again(prompt, messages, None);
        Located {
            prompt: prompt.into(),
            messages: Arc::new(messages.to_vec()),
            spans,
            line_starts,
        }
    }

    /// What a search of the whole prompt finds.
    fn fresh(prompt: &str, messages: &[Arc<Json>]) -> (Vec<Option<Range<usize>>>, Vec<usize>) {
        (
            super::super::locate::locate_messages(prompt, messages),
            line_starts(prompt),
        )
    }

    #[test]
    fn an_edit_of_the_last_message_finds_what_a_fresh_search_finds() {
        let (prompt, messages) = conversation("the last one");
        let previous = located(&prompt, &messages);
        assert_eq!(
            (previous.spans.clone(), previous.line_starts.clone()),
            fresh(&prompt, &messages)
        );
        for last in ["the last one, edited", "the last\none é", "x"] {
            let (edited, mut changed) = conversation(last);
            // Unchanged messages are the same `Arc`s in the worker's snapshot.
            changed[..LAST].clone_from_slice(&messages[..LAST]);
            let again = locate_again(&edited, &changed, Some(&previous));
            assert!(again == fresh(&edited, &changed), "{last}");
            let spans = &again.0;
            assert!(
                spans[LAST].is_some() && spans[LAST - 1].is_some() && spans[LAST - 10].is_none()
            );
        }
    }

    #[test]
    fn a_message_changed_early_is_searched_again_from_there() {
        let (prompt, messages) = conversation("end");
        let previous = located(&prompt, &messages);
        let mut changed = messages.clone();
        changed[3] = Arc::new(json!({"role": "user", "content": "moved"}));
        let edited = prompt.replacen("message number 3<", "moved<", 1);
        let again = locate_again(&edited, &changed, Some(&previous));
        assert!(again == fresh(&edited, &changed));
        assert_eq!(
            again.0[3].as_ref().map(|r| &edited[r.clone()]),
            Some("moved")
        );
    }
}
