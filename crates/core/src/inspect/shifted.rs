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
        let shifts: Vec<Option<Shift>> = real
            .iter()
            .map(|&(k, outcome)| Shift::of(outcome, ends, k))
            .collect();
        all.extend(real);
        let shift = match shifts.as_slice() {
            [Some(first), others @ ..] if others.iter().all(|s| *s == Some(*first)) => *first,
            _ => {
                rest.extend(group.iter().filter(|k| !checks.contains(k)));
                continue;
            }
        };
        for &k in group.iter().filter(|k| !checks.contains(k)) {
            match shift.apply(ends, k, prompt.len()) {
                Some(outcome) => all.push((k, outcome)),
                None => rest.push(k),
            }
        }
    }
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

/// How a real prefix render differs from the traced render's prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shift {
    /// Real length minus predicted length.
    len: isize,
    /// Where it stops agreeing with the prompt, from where its last message was reached.
    agrees: isize,
}

impl Shift {
    fn of(outcome: PrefixOutcome, ends: &[usize], k: usize) -> Option<Shift> {
        let PrefixOutcome::Rendered { len, agrees } = outcome else {
            return None;
        };
        Some(Shift {
            len: len as isize - ends[k] as isize,
            agrees: agrees as isize - ends[k - 1] as isize,
        })
    }

    fn apply(self, ends: &[usize], k: usize, prompt_len: usize) -> Option<PrefixOutcome> {
        let len = usize::try_from(ends[k] as isize + self.len).ok()?;
        let agrees = usize::try_from(ends[k - 1] as isize + self.agrees).ok()?;
        (agrees <= len && agrees <= prompt_len).then_some(PrefixOutcome::Rendered { len, agrees })
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
}
