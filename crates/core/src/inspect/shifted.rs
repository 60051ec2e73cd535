//! Prefix outcomes of a kind the traced render mispredicts by a fixed shift.
//!
//! Some templates render the last message of a conversation differently (Qwen3 opens a
//! `<think>` block in the last assistant turn, which earlier turns lose): a prefix that
//! ends with such a message does not agree with the prompt, so the traced render's
//! prediction (see `one_render`) fails for that whole kind of prefix, and rendering
//! every one of them was quadratic (half the prefixes of a Qwen3 conversation). The
//! difference is the same for every prefix of the kind when the last message's values
//! (other than its content, which both renders print) have the same sizes: the prefix
//! stops agreeing at the same distance after that message is reached, and is longer or
//! shorter than predicted by the same amount. So the prefixes of a kind are grouped by
//! those sizes; three of each group (the first, the middle and the last) are rendered,
//! and when they show the same shift, the others are predicted with it.
//!
//! Where the difference is at the end of the last turn instead (gpt-oss closes it with
//! `<|return|>` where earlier turns have `<|end|>`; Phi-3.5, Command R7B and Apriel
//! close it differently too), the distance from the turn's start grows with the
//! content, and the same distance is found from the turn's end: a shift is measured
//! from either end of the turn, whichever the three renders agree on.

use std::collections::BTreeMap;

use super::prefixes::{render_prefixes, PrefixOutcome, Shared};
use super::Cancelled;
use chatplate_render::{CancelToken, CompiledTemplate, Conversation};

/// Groups smaller than this are rendered: predicting them saves nothing.
const WORTH_SHIFTING: usize = 4;

/// The outcomes of the prefixes `members` (all of one kind, ascending, each past the
/// first), where `ends[k]` is the traced render's predicted length of `P(k)`.
pub(super) fn outcomes(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    members: &[usize],
    ends: &[usize],
    cancel: &CancelToken,
) -> Result<Vec<(usize, PrefixOutcome)>, Cancelled> {
    let prompt = shared.prompt;
    let mut groups: BTreeMap<Vec<(String, usize)>, Vec<usize>> = BTreeMap::new();
    for &k in members {
        groups
            .entry(sizes(conversation, k - 1))
            .or_default()
            .push(k);
    }
    let mut all = Vec::with_capacity(members.len());
    let mut rest = Vec::new();
    for group in groups.values() {
        if group.len() < WORTH_SHIFTING {
            rest.extend_from_slice(group);
            continue;
        }
        let checks = [group[0], group[group.len() / 2], group[group.len() - 1]];
        let real = render_prefixes(template, conversation, shared, &checks, cancel)?;
        let shift = [Anchor::TurnStart, Anchor::TurnEnd]
            .into_iter()
            .find_map(|anchor| Shift::common(&real, ends, anchor));
        all.extend(real);
        let Some(shift) = shift else {
            rest.extend(group.iter().filter(|k| !checks.contains(k)));
            continue;
        };
        for &k in group.iter().filter(|k| !checks.contains(k)) {
            match shift.apply(ends, k, prompt.len()) {
                Some(outcome) => all.push((k, outcome)),
                None => rest.push(k),
            }
        }
    }
    let rest = shared.focus.bulk(&rest);
    all.extend(render_prefixes(
        template,
        conversation,
        shared,
        &rest,
        cancel,
    )?);
    all.sort_by_key(|(k, _)| *k);
    Ok(all)
}

/// Which end of a prefix's last turn (in the prompt) a [`Shift`] is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// Where the prefix's last message was reached: a difference where its turn opens.
    TurnStart,
    /// Where the message after it was reached: a difference where the turn closes.
    TurnEnd,
}

/// How a real prefix render differs from the traced render's prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shift {
    /// Real length minus predicted length.
    len: isize,
    /// Where it stops agreeing with the prompt, from the anchor.
    agrees: isize,
    anchor: Anchor,
}

impl Shift {
    /// The shift all of `real` (at least two prefix renders) show, measured from
    /// `anchor`; `None` when they differ or one failed.
    fn common(real: &[(usize, PrefixOutcome)], ends: &[usize], anchor: Anchor) -> Option<Shift> {
        let mut shifts = real
            .iter()
            .map(|&(k, outcome)| Shift::of(outcome, ends, k, anchor));
        let first = shifts.next()??;
        shifts.all(|shift| shift == Some(first)).then_some(first)
    }

    fn of(outcome: PrefixOutcome, ends: &[usize], k: usize, anchor: Anchor) -> Option<Shift> {
        let PrefixOutcome::Rendered { len, agrees } = outcome else {
            return None;
        };
        Some(Shift {
            len: len as isize - ends[k] as isize,
            agrees: agrees as isize - Shift::anchored(ends, k, anchor) as isize,
            anchor,
        })
    }

    /// Where `anchor` lies for the prefix of `k` messages.
    fn anchored(ends: &[usize], k: usize, anchor: Anchor) -> usize {
        match anchor {
            Anchor::TurnStart => ends[k - 1],
            Anchor::TurnEnd => ends[k],
        }
    }

    fn apply(self, ends: &[usize], k: usize, prompt_len: usize) -> Option<PrefixOutcome> {
        let len = usize::try_from(ends[k] as isize + self.len).ok()?;
        let from = Shift::anchored(ends, k, self.anchor);
        let agrees = usize::try_from(from as isize + self.agrees).ok()?;
        // Measured from the turn's end, a turn shorter than the distance back would
        // put the difference before the turn began: not the same case, so rendered.
        let within = self.anchor == Anchor::TurnStart || agrees >= ends[k - 1];
        (within && agrees <= len && agrees <= prompt_len)
            .then_some(PrefixOutcome::Rendered { len, agrees })
    }
}

/// The sizes of message `index`'s values other than its role and content.
fn sizes(conversation: &Conversation, index: usize) -> Vec<(String, usize)> {
    match conversation.messages.get(index) {
        Some(serde_json::Value::Object(fields)) => fields
            .iter()
            .filter(|(key, _)| *key != "role" && *key != "content")
            .map(|(key, value)| (key.clone(), value.to_string().len()))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::one_render::outcomes as all_outcomes;
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

    fn outcomes_both_ways(source: &str, reasoning: impl Fn(usize) -> String) {
        let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
        let conversation = Conversation::new(
            (0..60)
                .map(|i| match i % 2 {
                    0 => json!({"role": "user", "content": format!("q{i}")}),
                    _ => json!({"role": "assistant", "content": format!("a{i}"),
                                "reasoning_content": reasoning(i)}),
                })
                .collect(),
        );
        let prompt = template.render(&conversation).unwrap();
        let counts: Vec<usize> = (0..=60).collect();
        let cancel = CancelToken::new();
        let shared = Shared::new(&conversation, &prompt);
        let wanted = render_prefixes(&template, &conversation, &shared, &counts, &cancel).unwrap();
        let got = all_outcomes(&template, &conversation, &shared, &counts, &cancel).unwrap();
        assert_eq!(got, wanted);
    }

    /// Like Qwen3: the last assistant turn shows its reasoning, earlier ones do not.
    const LAST_TURN_THINKS: &str = "{% for m in messages %}<|{{ m.role }}|>\
        {% if m.role == 'assistant' and loop.last %}<think>{{ m.reasoning_content }}</think>\
        {% endif %}{{ m.content }}\n{% endfor %}";

    #[test]
    fn a_last_turn_shown_differently_is_predicted_by_its_shift() {
        outcomes_both_ways(LAST_TURN_THINKS, |_| "same size".to_string());
    }

    #[test]
    fn reasoning_of_different_sizes_is_grouped_or_rendered() {
        outcomes_both_ways(LAST_TURN_THINKS, |i| "r".repeat(i % 5));
    }

    /// Like gpt-oss: the last turn closes with another token than earlier ones.
    const LAST_TURN_CLOSES: &str = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\
        {% if loop.last %}<|return|>{% else %}<|end|>{% endif %}\n{% endfor %}";

    #[test]
    fn a_last_turn_closed_differently_is_predicted_from_the_turn_end() {
        // The contents grow from "a1" to "a59": measured from where the turn opens, the
        // difference moves with them; from where it closes, it stays.
        outcomes_both_ways(LAST_TURN_CLOSES, |_| String::new());
    }

    #[test]
    fn a_shift_is_taken_from_the_end_the_checks_agree_on() {
        // Predicted turns [10, 20), [30, 45) and [50, 62): each prefix render is 3 bytes
        // longer and leaves the prompt 5 bytes before its turn ends.
        let ends = [0, 10, 20, 30, 45, 50, 62];
        let rendered = |k: usize, agrees: usize| {
            let len = ends[k] + 3;
            (k, PrefixOutcome::Rendered { len, agrees })
        };
        let real = [rendered(2, 15), rendered(4, 40), rendered(6, 57)];
        assert_eq!(Shift::common(&real, &ends, Anchor::TurnStart), None);
        let shift = Shift::common(&real, &ends, Anchor::TurnEnd).expect("from the end");
        assert_eq!((shift.len, shift.agrees), (3, -5));
        assert_eq!(
            shift.apply(&ends, 3, 100),
            Some(PrefixOutcome::Rendered {
                len: 33,
                agrees: 25
            })
        );
        // A turn shorter than five bytes would leave the prompt before it began.
        let short = [0, 10, 20, 30, 32];
        assert_eq!(shift.apply(&short, 4, 100), None);
    }
}
