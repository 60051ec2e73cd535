//! Cheap attribution questions, answered without rendering every prefix.
//!
//! * [`message_span`]: where message `i` is, from the renders of its two neighbouring
//!   prefixes (`P(i)` and `P(i + 1)`).
//! * [`source_at`]: who produced byte `x`, by binary search over prefix renders: the
//!   smallest `k` whose render still agrees with the prompt past `x`. The search assumes
//!   a prefix-monotone template; the answer is then checked with the bounds of
//!   `prefixes`, so a non-monotone template yields `None`, never a wrong message.
//!
//! Both take the prompt the caller already has (the app's last render).

use std::ops::Range;

use super::attribution::{source_of, Source};
use super::prefixes::{render_one, Bounds, PrefixOutcome};
use super::Cancelled;
use chatplate_render::{CancelToken, CompiledTemplate, Conversation};

/// The exact byte range message `index` produced in `prompt`, or `None` when its
/// neighbouring prefixes are not prefixes of the prompt (then only the full
/// attribution can say what is known).
pub fn message_span(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prompt: &str,
    index: usize,
    cancel: &CancelToken,
) -> Result<Option<Range<usize>>, Cancelled> {
    let n = conversation.messages.len();
    if index >= n {
        return Ok(None);
    }
    let mut outcomes = Vec::with_capacity(2);
    for k in [index, index + 1] {
        outcomes.push((k, render_one(template, conversation, k, prompt, cancel)?));
    }
    let slot = index + 1;
    let bounds = Bounds::new(&outcomes, n);
    Ok(bounds
        .runs(prompt.len())
        .into_iter()
        .find(|(_, bounds)| *bounds == (slot, slot))
        .map(|(range, _)| range))
}

/// Who produced the byte at `offset` of `prompt`, when prefix renders prove it.
pub fn source_at(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prompt: &str,
    offset: usize,
    cancel: &CancelToken,
) -> Result<Option<Source>, Cancelled> {
    let n = conversation.messages.len();
    if offset >= prompt.len() {
        return Ok(None);
    }
    let mut outcomes: Vec<(usize, PrefixOutcome)> = Vec::new();
    let mut render = |k: usize| -> Result<PrefixOutcome, Cancelled> {
        let outcome = render_one(template, conversation, k, prompt, cancel)?;
        outcomes.push((k, outcome));
        Ok(outcome)
    };
    // The smallest k in 0..=n whose render agrees with the prompt beyond `offset`
    // (n + 1 when none does).
    let (mut low, mut high) = (0, n + 1);
    while low < high {
        let mid = usize::midpoint(low, high);
        match render(mid)? {
            PrefixOutcome::Rendered { agrees, .. } if agrees > offset => high = mid,
            _ => low = mid + 1,
        }
    }
    if low >= 1 {
        render(low - 1)?;
    }
    let (lo, hi) = Bounds::new(&outcomes, n).at(offset);
    let continuing = conversation.continue_final_message.field().is_some();
    Ok((lo == hi).then(|| source_of(lo, hi, n, continuing)))
}
