//! On-screen first: an attribution that renders in bulk only the prefixes around the
//! messages a user is looking at.
//!
//! Where the traced render predicts the prefixes (see `one_render`), a whole attribution
//! costs a few renders. Where it cannot (a template that builds its prompt in a
//! namespace string, such as Reka Edge, or a kind of prefix no shift explains), every
//! prefix of that kind is rendered: quadratic in the conversation's length, seconds at
//! 1,000 messages. A focused attribution renders only `P(k)` for `k` from the first
//! message in focus to just past the last (and, always, the shortest prefixes and
//! `P(n)`), so the messages in focus are exact at once; the others are left as ambiguous
//! runs between the bounds those renders prove, never a wrong producer. The result says
//! it is partial ([`super::Attribution::partial`], with how many prefixes it left out, so
//! the cost of the rest can be estimated) and the app asks for the rest next.

use std::borrow::Cow;
use std::ops::{Range, RangeInclusive};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::attribution::{Part, Partial};

/// Prefixes this short are rendered whatever the focus: they are cheap, and they make
/// the preamble and the first messages (where tool definitions often go) exact.
const ALWAYS: usize = 4;

/// Which prefixes an attribution renders in bulk, and whether it left any out.
#[derive(Debug, Default)]
pub(crate) struct Focus {
    /// The message counts `k` whose `P(k)` is rendered in bulk (`None`: every one), and
    /// the conversation's message count.
    counts: Option<(RangeInclusive<usize>, usize)>,
    /// The messages in focus, as asked.
    messages: Option<Range<usize>>,
    /// How many prefixes outside the focus were not rendered.
    left_out: AtomicUsize,
}

impl Focus {
    /// Every prefix (an attribution that is never partial).
    pub(crate) fn everything() -> Self {
        Self::default()
    }

    /// The prefixes around `messages` of a conversation of `n` messages: `P(k)` for `k`
    /// from `messages.start` (where the first of them begins) to `messages.end` (where
    /// the last ends).
    pub(crate) fn on(messages: Range<usize>, n: usize) -> Self {
        let start = messages.start.min(n);
        let end = messages.end.clamp(start, n);
        Focus {
            counts: Some((start..=end, n)),
            messages: Some(start..end),
            left_out: AtomicUsize::new(0),
        }
    }

    /// Of `counts`, the prefixes to render in bulk; any left out is noted.
    pub(crate) fn bulk<'a>(&self, counts: &'a [usize]) -> Cow<'a, [usize]> {
        let Some((focus, n)) = &self.counts else {
            return Cow::Borrowed(counts);
        };
        let kept: Vec<usize> = counts
            .iter()
            .copied()
            .filter(|k| *k <= ALWAYS || k == n || focus.contains(k))
            .collect();
        if kept.len() == counts.len() {
            return Cow::Borrowed(counts);
        }
        (self.left_out).fetch_add(counts.len() - kept.len(), Ordering::Relaxed);
        Cow::Owned(kept)
    }

    /// Whether a prefix outside the focus was left out: the attribution is partial.
    pub(crate) fn left_out(&self) -> bool {
        self.left_out.load(Ordering::Relaxed) > 0
    }

    /// What a partial attribution covers and left out (`None`: it is whole).
    pub(crate) fn partial(&self) -> Option<Partial> {
        let left_out = self.left_out.load(Ordering::Relaxed);
        let focus = self.messages.clone().filter(|_| left_out > 0)?;
        Some(Partial { focus, left_out })
    }

    /// Whether an ambiguous run whose latest possible producer is `to` is one a partial
    /// attribution narrows: one that ends in focus (always, when nothing was left out). A template that prints the system prompt in
    /// the last user turn (Mistral) leaves runs from message 1 to each user message;
    /// the others (a run from the messages before the focus to its first, or from its
    /// last to the end) span prefixes that were not rendered, and are left for the
    /// whole attribution.
    pub(crate) fn covers(&self, to: Part) -> bool {
        let Some((focus, _)) = self.counts.as_ref().filter(|_| self.left_out()) else {
            return true;
        };
        // The rendered counts `a..=b` end messages `a - 1..b`; a run may end at message
        // `b` when `P(b + 1)` was rendered to check a prediction.
        matches!(to, Part::Message(i) if focus.contains(&i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::incremental::reusable;
    use crate::inspect::{
        attribute_by_prefixes, attribute_focused, attribute_prepared, Attribution, Previous, Source,
    };
    use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits, PreparedMessages};
    use serde_json::json;

    fn conversation(count: usize) -> Conversation {
        let messages = (0..count)
            .map(|i| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                json!({"role": role, "content": format!("message {i}")})
            })
            .collect();
        Conversation::new(messages).with_generation_prompt(true)
    }

    /// The focused attribution of `conversation`'s prompt, and the all-prefix one.
    fn both(source: &str, conversation: &Conversation, on: Range<usize>) -> [Attribution; 2] {
        let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
        let prompt = template.render(conversation).unwrap();
        let cancel = CancelToken::new();
        let prepared = PreparedMessages::new(conversation);
        let focused = attribute_focused(
            &template,
            conversation,
            &prepared,
            &prompt,
            None,
            on,
            &cancel,
        )
        .unwrap();
        let whole = attribute_by_prefixes(&template, conversation, &cancel).unwrap();
        [focused, whole]
    }

    /// Every byte `partial` names one producer of is named the same by `whole`.
    fn never_contradicts(partial: &Attribution, whole: &Attribution) {
        for span in &partial.spans {
            if matches!(span.source, Source::Ambiguous { .. } | Source::Unattributed) {
                continue;
            }
            for offset in span.range.clone() {
                assert_eq!(whole.source_at(offset), Some(span.source), "byte {offset}");
            }
        }
    }

    /// The prompt is built in a namespace string, as Reka Edge's is: the traced render
    /// cannot tell where each message's turn ends.
    const UNTRACEABLE: &str = "{%- set ns = namespace(out='') -%}{%- for m in messages -%}\
        {%- set ns.out = ns.out ~ '<' ~ m.role ~ '>' ~ m.content ~ '\n' -%}\
        {%- endfor -%}{{ ns.out }}{% if add_generation_prompt %}<assistant>{% endif %}";

    #[test]
    fn an_untraceable_template_is_exact_in_focus_first() {
        let conversation = conversation(60);
        let [partial, whole] = both(UNTRACEABLE, &conversation, 30..35);
        assert_eq!(
            partial.partial.as_ref().map(|p| p.focus.clone()),
            Some(30..35)
        );
        assert!(partial.prefixes.is_empty(), "not one outcome per prefix");
        assert_eq!(whole.partial, None);
        for i in [0, 1, 30, 32, 34] {
            assert_eq!(partial.ranges_of(i), whole.ranges_of(i), "message {i}");
        }
        assert!(
            partial.ranges_of(45).is_empty(),
            "outside the focus: not yet known"
        );
        assert_eq!(
            partial.bytes_of(Source::GenerationPrompt),
            whole.bytes_of(Source::GenerationPrompt)
        );
        never_contradicts(&partial, &whole);
    }

    #[test]
    fn a_partial_attribution_is_reused_after_an_edit_as_a_whole_one_is() {
        let template = CompiledTemplate::compile(UNTRACEABLE, Limits::default()).unwrap();
        let cancel = CancelToken::new();
        let before = conversation(60);
        let old_prompt = template.render(&before).unwrap();
        let prepared = PreparedMessages::new(&before);
        let partial = attribute_focused(
            &template,
            &before,
            &prepared,
            &old_prompt,
            None,
            40..59,
            &cancel,
        )
        .unwrap();
        assert!(partial.partial.is_some());
        let mut after = before.clone();
        after.messages[59]["content"] = json!("edited");
        let prompt = template.render(&after).unwrap();
        let previous = Previous {
            conversation: &before,
            prompt: &old_prompt,
            attribution: &partial,
        };
        // What the partial attribution rendered is reused, up to the edited message.
        let reused = reusable(&previous, 59, 60, &prompt);
        let known: Vec<usize> = (0..=60).filter(|&k| reused[k].is_some()).collect();
        assert_eq!(
            known,
            [0, 1, 2, 3, 4]
                .into_iter()
                .chain(40..=59)
                .collect::<Vec<_>>()
        );
        let prepared = PreparedMessages::new(&after);
        let whole = attribute_by_prefixes(&template, &after, &cancel).unwrap();
        let focused = attribute_focused(
            &template,
            &after,
            &prepared,
            &prompt,
            Some(previous),
            40..60,
            &cancel,
        )
        .unwrap();
        assert_eq!(focused.ranges_of(59), whole.ranges_of(59));
        never_contradicts(&focused, &whole);
        // The whole attribution from the partial one is the all-prefix method's.
        let from_partial = attribute_prepared(
            &template,
            &after,
            &prepared,
            &prompt,
            Some(previous),
            &cancel,
        )
        .unwrap();
        assert_eq!(from_partial, whole);
    }

    #[test]
    fn a_predicted_template_is_attributed_whole_whatever_the_focus() {
        let source = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}\
                      {% if add_generation_prompt %}<assistant>{% endif %}";
        let conversation = conversation(60);
        let [focused, whole] = both(source, &conversation, 30..35);
        assert_eq!(focused, whole);
    }

    #[test]
    fn everything_keeps_every_prefix_and_is_never_partial() {
        let focus = Focus::everything();
        let counts: Vec<usize> = (0..=100).collect();
        assert_eq!(focus.bulk(&counts).len(), 101);
        assert!(!focus.left_out());
        assert_eq!(focus.partial(), None);
        assert!(focus.covers(Part::End));
    }

    #[test]
    fn a_focus_keeps_its_prefixes_the_shortest_and_the_whole() {
        let focus = Focus::on(40..45, 100);
        let counts: Vec<usize> = (0..=100).collect();
        let kept = focus.bulk(&counts).into_owned();
        assert_eq!(kept, vec![0, 1, 2, 3, 4, 40, 41, 42, 43, 44, 45, 100]);
        let partial = focus.partial().expect("partial");
        assert_eq!((partial.focus, partial.left_out), (40..45, 101 - 12));
        assert!(focus.covers(Part::Message(40)));
        assert!(focus.covers(Part::Message(44)));
        assert!(!focus.covers(Part::Message(39)));
        assert!(focus.covers(Part::Message(45)));
        assert!(!focus.covers(Part::Message(46)));
        assert!(!focus.covers(Part::End));
    }

    #[test]
    fn a_focus_that_leaves_nothing_out_is_not_partial() {
        let focus = Focus::on(0..1000, 10);
        let counts: Vec<usize> = (0..=10).collect();
        assert_eq!(focus.bulk(&counts).len(), 11);
        assert_eq!(focus.partial(), None);
        assert!(focus.covers(Part::End));
    }
}
