//! Prefix renders and what they prove about who produced each byte of a prompt.
//!
//! `P(k)` is the conversation's first `k` messages rendered without generation prompt
//! (`P(0)`: no messages, the preamble); `F` is the prompt being explained. For each `k`,
//! `agrees(k)` is the length of the common prefix of `P(k)` and `F`, and `P(k)` is
//! *consistent* when it is a prefix of `F` (`agrees(k) == len P(k)`).
//!
//! Slots number the producers: 0 the preamble, `k` message `k - 1`, `n + 1` what comes
//! after the last message (generation prompt). A byte at offset `x` of `F`:
//! * lies before `agrees(k)`: the first `k` messages alone reproduce it, so its slot is
//!   at most `k`;
//! * lies at or after `len P(k)` of a consistent `P(k)`: everything the first `k`
//!   messages produce ends before it, so its slot is at least `k + 1`.
//!
//! When the bounds meet, the byte's producer is exact. On a prefix-monotone template
//! (every `P(k)` a prefix of `F`) they always meet; elsewhere some bytes get a range of
//! possible producers, never a wrong one.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Mutex;

use super::focus::Focus;
use super::text::common_prefix_len;
use super::Cancelled;
use chatplate_render::{
    CancelToken, CompiledTemplate, Conversation, PreparedMessages, RenderError, RenderErrorKind,
};

/// What rendering one prefix showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixOutcome {
    /// It rendered: its length and how much of it agrees with the prompt.
    Rendered {
        /// Length of `P(k)`.
        len: usize,
        /// Length of the common prefix of `P(k)` and the prompt.
        agrees: usize,
    },
    /// The template failed on this prefix (it may insist on a final user message).
    Failed,
}

impl PrefixOutcome {
    /// `Some(len)` when the prefix is a prefix of the prompt.
    pub(crate) fn consistent_len(self) -> Option<usize> {
        match self {
            PrefixOutcome::Rendered { len, agrees } if len == agrees => Some(len),
            _ => None,
        }
    }
}

/// What the renders of one attribution share: the prompt they explain, the
/// conversation's messages converted once (converting 10,000 messages takes
/// milliseconds, and an attribution renders several times), and the longest prefix
/// render made so far, which narrowing would otherwise render again.
pub(crate) struct Shared<'a> {
    /// Which prefixes are rendered in bulk (see `focus`).
    pub focus: Focus,
    /// The prompt being explained.
    pub prompt: &'a str,
    /// The conversation's messages, converted (here, or by the app's worker for its
    /// render).
    pub prepared: Cow<'a, PreparedMessages>,
    /// `(k, P(k))` for the largest `k` rendered.
    longest: Mutex<Option<(usize, String)>>,
}

impl<'a> Shared<'a> {
    /// For explaining `prompt`, the render of `conversation`.
    pub(crate) fn new(conversation: &Conversation, prompt: &'a str) -> Self {
        Self::with_prepared(Cow::Owned(PreparedMessages::new(conversation)), prompt)
    }

    /// For explaining `prompt`, the render of the conversation whose messages `prepared`
    /// holds converted.
    pub(crate) fn with_prepared(prepared: Cow<'a, PreparedMessages>, prompt: &'a str) -> Self {
        Shared {
            focus: Focus::everything(),
            prompt,
            prepared,
            longest: Mutex::new(None),
        }
    }

    /// These renders, rendering in bulk only the prefixes `focus` keeps.
    pub(crate) fn focused(self, focus: Focus) -> Self {
        Shared { focus, ..self }
    }

    /// `P(count)`, if it is the longest prefix rendered so far.
    pub(crate) fn prefix_text(&self, count: usize) -> Option<String> {
        let longest = self
            .longest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*longest {
            Some((k, text)) if *k == count => Some(text.clone()),
            _ => None,
        }
    }

    /// Keeps `P(count)` if no longer prefix has been kept.
    fn keep(&self, count: usize, text: String) {
        let mut longest = self
            .longest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if longest.as_ref().is_none_or(|(k, _)| *k < count) {
            *longest = Some((count, text));
        }
    }
}

/// `messages` with one tool, twice: with the generation prompt, and continuing the final
/// message (the renders that copy a continued conversation take another path).
#[cfg(test)]
pub(crate) fn with_tools_both_endings(messages: Vec<serde_json::Value>) -> [Conversation; 2] {
    use chatplate_render::ContinueFinal;
    let conversation =
        Conversation::new(messages).with_tools(Some(vec![serde_json::json!({"type": "function"})]));
    [
        conversation.clone().with_generation_prompt(true),
        conversation.with_continue_final(ContinueFinal::content()),
    ]
}

/// Renders `P(k)` for each of `counts`, on all cores, comparing each with the prompt and
/// keeping only lengths (the renders themselves would take quadratic memory), and the
/// longest render (see [`Shared`]).
pub(crate) fn render_prefixes(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    counts: &[usize],
    cancel: &CancelToken,
) -> Result<Vec<(usize, PrefixOutcome)>, Cancelled> {
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, counts.len().max(1));
    if cancel.is_cancelled() {
        return Err(Cancelled);
    }
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    // Interleaved so each worker gets short and long prefixes alike.
                    let mine = counts.iter().skip(worker).step_by(workers);
                    mine.map(|&k| {
                        let rendered = template.render_prepared_prefix(
                            conversation,
                            &shared.prepared,
                            k,
                            cancel,
                        );
                        let found = outcome(&rendered, shared.prompt)?;
                        if let Ok(text) = rendered {
                            shared.keep(k, text);
                        }
                        Ok((k, found))
                    })
                    .collect::<Result<Vec<_>, Cancelled>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or(Err(Cancelled)))
            .collect::<Vec<_>>()
    });
    let mut all = Vec::with_capacity(counts.len());
    for part in results {
        all.extend(part?);
    }
    all.sort_by_key(|(k, _)| *k);
    Ok(all)
}

/// Renders and compares one prefix.
pub(crate) fn render_one(
    template: &CompiledTemplate,
    conversation: &Conversation,
    count: usize,
    prompt: &str,
    cancel: &CancelToken,
) -> Result<PrefixOutcome, Cancelled> {
    outcome(&template.render_prefix(conversation, count, cancel), prompt)
}

/// A prefix render compared with the prompt.
fn outcome(
    rendered: &Result<String, RenderError>,
    prompt: &str,
) -> Result<PrefixOutcome, Cancelled> {
    match rendered {
        Ok(text) => Ok(PrefixOutcome::Rendered {
            len: text.len(),
            agrees: common_prefix_len(text, prompt),
        }),
        Err(err) if err.kind == RenderErrorKind::Cancelled => Err(Cancelled),
        Err(_) => Ok(PrefixOutcome::Failed),
    }
}

/// The slot bounds that a set of prefix renders proves, for every offset.
pub(crate) struct Bounds {
    /// `(prefix maximum of agrees(k), k)` for rendered `k`, ascending in `k`.
    upper: Vec<(usize, usize)>,
    /// `(len P(k), prefix maximum of k + 1)` for consistent `k`, ascending in length.
    lower: Vec<(usize, usize)>,
    /// Slot of the bytes after the last message.
    end_slot: usize,
}

impl Bounds {
    /// Bounds from `(k, outcome)` pairs of a conversation with `messages` messages.
    pub(super) fn new(outcomes: &[(usize, PrefixOutcome)], messages: usize) -> Self {
        let mut upper = Vec::new();
        let mut best = 0;
        let mut sorted: Vec<_> = outcomes.to_vec();
        sorted.sort_by_key(|(k, _)| *k);
        for (k, outcome) in &sorted {
            if let PrefixOutcome::Rendered { agrees, .. } = outcome {
                best = best.max(*agrees);
                upper.push((best, *k));
            }
        }
        let mut consistent: Vec<(usize, usize)> = sorted
            .iter()
            .filter_map(|(k, o)| o.consistent_len().map(|len| (len, k + 1)))
            .collect();
        consistent.sort_unstable();
        let mut lower = Vec::with_capacity(consistent.len());
        let mut best = 0;
        for (len, slot) in consistent {
            best = best.max(slot);
            lower.push((len, best));
        }
        Bounds {
            upper,
            lower,
            end_slot: messages + 1,
        }
    }

    /// `(lowest, highest)` slot that can have produced the byte at `offset`.
    pub(crate) fn at(&self, offset: usize) -> (usize, usize) {
        let upper = self.upper.partition_point(|(agrees, _)| *agrees <= offset);
        let hi = self.upper.get(upper).map_or(self.end_slot, |(_, k)| *k);
        let lower = self.lower.partition_point(|(len, _)| *len <= offset);
        let lo = lower.checked_sub(1).map_or(0, |i| self.lower[i].1);
        (lo, hi)
    }

    /// Maximal runs of `0..len` with the same bounds.
    pub(crate) fn runs(&self, len: usize) -> Vec<(Range<usize>, (usize, usize))> {
        let mut cuts: Vec<usize> = self.upper.iter().map(|(a, _)| *a).collect();
        cuts.extend(self.lower.iter().map(|(l, _)| *l));
        cuts.push(0);
        cuts.retain(|&c| c < len);
        cuts.sort_unstable();
        cuts.dedup();
        let mut runs: Vec<(Range<usize>, (usize, usize))> = Vec::new();
        for (i, &start) in cuts.iter().enumerate() {
            let end = cuts.get(i + 1).copied().unwrap_or(len);
            let bounds = self.at(start);
            match runs.last_mut() {
                Some((range, last)) if *last == bounds => range.end = end,
                _ => runs.push((start..end, bounds)),
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(len: usize, agrees: usize) -> PrefixOutcome {
        PrefixOutcome::Rendered { len, agrees }
    }

    #[test]
    fn monotone_prefixes_give_exact_slots() {
        // prompt "PPaaBBgg": preamble 2, message 0 2, message 1 2, generation prompt 2.
        let outcomes = [
            (0, rendered(2, 2)),
            (1, rendered(4, 4)),
            (2, rendered(6, 6)),
        ];
        let bounds = Bounds::new(&outcomes, 2);
        let runs = bounds.runs(8);
        assert_eq!(
            runs,
            vec![
                (0..2, (0, 0)),
                (2..4, (1, 1)),
                (4..6, (2, 2)),
                (6..8, (3, 3))
            ]
        );
    }

    #[test]
    fn a_rewritten_message_leaves_a_range() {
        // P(2) renders message 1 as "bb+" but the full prompt has "bc": bytes from the
        // first difference until P(3) (consistent) are messages 1 or 2.
        let outcomes = [
            (0, rendered(0, 0)),
            (1, rendered(2, 2)),
            (2, rendered(5, 3)),
            (3, rendered(7, 7)),
        ];
        let bounds = Bounds::new(&outcomes, 3);
        assert_eq!(bounds.at(2), (2, 2));
        assert_eq!(bounds.at(3), (2, 3));
        assert_eq!(bounds.at(6), (2, 3));
        assert_eq!(bounds.at(7), (4, 4));
    }

    #[test]
    fn failed_prefixes_widen_bounds() {
        let outcomes = [(0, PrefixOutcome::Failed), (1, rendered(3, 3))];
        let bounds = Bounds::new(&outcomes, 1);
        assert_eq!(bounds.at(0), (0, 1));
        assert_eq!(bounds.at(3), (2, 2));
    }
}
