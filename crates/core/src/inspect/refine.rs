//! Narrowing ambiguous runs of an attribution by changing message values.
//!
//! Where prefix renders only bound a run of bytes to a range of messages (a template
//! that renders the last message differently, or whose preamble depends on the first
//! message), the two latest candidate messages get their values wrapped in new
//! characters (see `perturb`), one at a time, and the prefix render that covers the run
//! is repeated. Bytes that change with exactly one candidate's values are that
//! message's (its content, reasoning, tool calls); the rest, typically the turn markers
//! between two messages, stay ambiguous.

use std::borrow::Cow;
use std::ops::Range;

use super::attribution::{Part, Source, Span};
use super::narrow_batch::{narrow_all, Run};
use super::perturb::{perturb, Change};
use super::prefixes::Shared;
use super::text::{common_prefix_len, common_suffix_len};
use super::Cancelled;
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, RenderError, RenderErrorKind};

/// How many candidate messages (the latest ones of a range) are changed.
const CANDIDATES: usize = 2;

/// One ambiguous run and what narrowing it gave, kept so the next attribution after an
/// edit can reuse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Narrowed {
    range: Range<usize>,
    from: Part,
    to: Part,
    spans: Vec<Span>,
}

/// Earlier narrowings that still hold: those whose renders involved only the first
/// `unchanged` messages, which (with the settings) are the same as before the edit.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reuse<'a> {
    /// The earlier attribution's narrowings.
    pub narrowed: &'a [Narrowed],
    /// How many leading messages are unchanged (0 when the settings changed).
    pub unchanged: usize,
}

impl Reuse<'_> {
    /// The earlier result of narrowing this run, if its renders are unchanged: they
    /// render the first `to + 1` messages, with candidates among them changed.
    fn get(&self, range: &Range<usize>, from: Part, to: Part) -> Option<Vec<Span>> {
        let Part::Message(last) = to else {
            return None;
        };
        if last >= self.unchanged {
            return None;
        }
        let earlier = self
            .narrowed
            .partition_point(|n| n.range.start < range.start);
        let found = self.narrowed.get(earlier)?;
        (found.range == *range && found.from == from && found.to == to).then(|| found.spans.clone())
    }
}

/// How ambiguous runs are narrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrowing {
    /// Each by its own renders of the prefix that covers it (the reference).
    EachByRenders,
    /// Together, predicted from a few traced renders and checked (`narrow_batch`).
    Batched,
}

/// `spans` with ambiguous runs split where a single candidate's values show, and each
/// narrowing made (to reuse after an edit).
pub(crate) fn refine(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    spans: Vec<Span>,
    reuse: Reuse,
    how: Narrowing,
    cancel: &CancelToken,
) -> Result<(Vec<Span>, Vec<Narrowed>), Cancelled> {
    // The runs no earlier narrowing answers, narrowed together (see `narrow_batch`).
    let mut runs = Vec::new();
    for span in &spans {
        if let Source::Ambiguous { from, to } = span.source {
            if shared.focus.covers(to) && reuse.get(&span.range, from, to).is_none() {
                runs.push(Run {
                    range: span.range.clone(),
                    from,
                    to,
                });
            }
        }
    }
    let mut fresh = match how {
        Narrowing::Batched => narrow_all(template, conversation, shared, &runs, cancel)?,
        Narrowing::EachByRenders => runs
            .iter()
            .map(|run| {
                narrow(
                    template,
                    conversation,
                    shared,
                    run.range.clone(),
                    run.from,
                    run.to,
                    cancel,
                )
            })
            .collect::<Result<_, _>>()?,
    }
    .into_iter();
    let mut refined = Vec::with_capacity(spans.len());
    let mut narrowed = Vec::new();
    for span in spans {
        match span.source {
            // Outside what a partial attribution rendered: left for the whole one.
            Source::Ambiguous { to, .. } if !shared.focus.covers(to) => refined.push(span),
            Source::Ambiguous { from, to } => {
                let split = match reuse.get(&span.range, from, to) {
                    Some(split) => split,
                    None => fresh.next().unwrap_or_else(|| {
                        vec![Span {
                            range: span.range.clone(),
                            source: span.source,
                        }]
                    }),
                };
                refined.extend(split.iter().cloned());
                narrowed.push(Narrowed {
                    range: span.range,
                    from,
                    to,
                    spans: split,
                });
            }
            _ => refined.push(span),
        }
    }
    Ok((merge(refined), narrowed))
}

/// Narrows one run by rendering the prefix that covers it, and that prefix with each
/// candidate's values wrapped. The prefix itself is often rendered already: the whole
/// prompt, or the longest prefix the attribution rendered (see [`Shared`]).
pub(super) fn narrow(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    range: Range<usize>,
    from: Part,
    to: Part,
    cancel: &CancelToken,
) -> Result<Vec<Span>, Cancelled> {
    let n = conversation.messages.len();
    let ambiguous = Source::Ambiguous { from, to };
    let (last, count) = match to {
        Part::Preamble => {
            return Ok(vec![Span {
                range,
                source: ambiguous,
            }])
        }
        Part::Message(i) => (i, Some(i + 1)),
        Part::End => (n.saturating_sub(1), None),
    };
    let base = match count {
        None => Some(Cow::Borrowed(shared.prompt)),
        Some(count) => match shared.prefix_text(count) {
            Some(text) => Some(Cow::Owned(text)),
            None => found(template.render_prepared_prefix(
                conversation,
                &shared.prepared,
                count,
                cancel,
            ))?
            .map(Cow::Owned),
        },
    };
    let Some(base) = base else {
        return Ok(vec![Span {
            range,
            source: ambiguous,
        }]);
    };
    // The candidates' renders are independent: side by side, on two cores.
    let wrapped: Vec<(usize, Result<Option<String>, Cancelled>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = candidates(conversation, from, last)
            .into_iter()
            .map(|candidate| {
                scope.spawn(move || {
                    let text =
                        render_wrapped(template, conversation, shared, candidate, count, cancel);
                    (candidate, text)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut regions = Vec::new();
    for (candidate, text) in wrapped {
        if let Some(text) = text? {
            regions.push((candidate, changed_in(&base, &text)));
        }
    }
    Ok(split(range, &regions, ambiguous))
}

/// The messages whose values are changed to narrow a run from `from` to message `last`,
/// latest first.
pub(super) fn candidates(conversation: &Conversation, from: Part, last: usize) -> Vec<usize> {
    let first = match from {
        Part::Preamble => 0,
        Part::Message(i) => i,
        Part::End => conversation.messages.len(),
    };
    (first..=last).rev().take(CANDIDATES).collect()
}

/// A narrowing render's text; `None` when the template failed on it (the run then
/// stays ambiguous).
fn found(result: Result<String, RenderError>) -> Result<Option<String>, Cancelled> {
    match result {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind == RenderErrorKind::Cancelled => Err(Cancelled),
        Err(_) => Ok(None),
    }
}

/// The first `count` messages (`None`: everything) rendered with message `index`'s
/// values wrapped: the shared converted messages with that one replaced, rather than a
/// copy of the conversation converted again.
fn render_wrapped(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    index: usize,
    count: Option<usize>,
    cancel: &CancelToken,
) -> Result<Option<String>, Cancelled> {
    let Some(message) = conversation.messages.get(index) else {
        return Ok(None);
    };
    // A continued final message is rendered from the conversation's own messages
    // (`render_prepared` would ignore the wrapped one).
    if count.is_none() && conversation.continue_final_message.field().is_some() {
        let mut changed = conversation.clone();
        wrap(&mut changed, index);
        return found(template.render_cancellable(&changed, cancel));
    }
    let prepared = shared.prepared.replaced(index, &wrapped_message(message));
    found(match count {
        Some(count) => template.render_prepared_prefix(conversation, &prepared, count, cancel),
        None => template.render_prepared(conversation, &prepared, cancel),
    })
}

/// Wraps message `index`'s values (everything but its role) in place.
pub(super) fn wrap(conversation: &mut Conversation, index: usize) {
    if let Some(message) = conversation.messages.get_mut(index) {
        *message = wrapped_message(message);
    }
}

/// `message` with its values (everything but its role) wrapped.
fn wrapped_message(message: &serde_json::Value) -> serde_json::Value {
    let mut message = message.clone();
    if let serde_json::Value::Object(fields) = &mut message {
        for (key, value) in fields.iter_mut() {
            if key != "role" {
                *value = perturb(value, Change::Wrap);
            }
        }
    }
    message
}

/// The range of `base` that differs in `changed`.
pub(super) fn changed_in(base: &str, changed: &str) -> Range<usize> {
    let start = common_prefix_len(base, changed);
    let suffix = common_suffix_len(base, changed, start);
    start..base.len() - suffix
}

/// Splits `range`: bytes inside exactly one candidate's region become that message's.
pub(super) fn split(
    range: Range<usize>,
    regions: &[(usize, Range<usize>)],
    ambiguous: Source,
) -> Vec<Span> {
    let mut cuts = vec![range.start, range.end];
    for (_, region) in regions {
        for cut in [region.start, region.end] {
            if range.contains(&cut) {
                cuts.push(cut);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|pair| {
            let owners: Vec<usize> = regions
                .iter()
                .filter(|(_, r)| r.start <= pair[0] && pair[1] <= r.end)
                .map(|(i, _)| *i)
                .collect();
            let source = match owners.as_slice() {
                [only] => Source::Message(*only),
                _ => ambiguous,
            };
            Span {
                range: pair[0]..pair[1],
                source,
            }
        })
        .collect()
}

/// Joins neighbouring spans with the same source.
pub(crate) fn merge(spans: Vec<Span>) -> Vec<Span> {
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if last.source == span.source && last.range.end == span.range.start => {
                last.range.end = span.range.end;
            }
            _ => merged.push(span),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::prefixes::with_tools_both_endings;
    use chatplate_render::Limits;
    use serde_json::json;

    /// Renders with one message wrapped from the shared converted messages are the
    /// renders of a wrapped copy of the conversation, for prefixes and the whole
    /// conversation, with and without a continued final message.
    #[test]
    fn wrapped_renders_from_shared_values_equal_renders_of_a_wrapped_copy() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ m.thinking }}|{% endfor %}\
             {% if tools %}T{{ tools | length }}{% endif %}{% if add_generation_prompt %}<assistant>{% endif %}",
            Limits::default(),
        )
        .unwrap();
        let cancel = CancelToken::new();
        for conversation in with_tools_both_endings(vec![
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b", "thinking": "t"}),
            json!({"role": "user", "content": "c"}),
        ]) {
            let continuing = conversation.continue_final_message.field().is_some();
            let prompt = template.render(&conversation).unwrap();
            let shared = Shared::new(&conversation, &prompt);
            for index in 0..3 {
                let mut copy = conversation.clone();
                wrap(&mut copy, index);
                for count in [Some(index + 1), Some(3), None] {
                    let wanted = match count {
                        Some(count) => template.render_prefix(&copy, count, &cancel),
                        None => template.render_cancellable(&copy, &cancel),
                    }
                    .unwrap();
                    let got =
                        render_wrapped(&template, &conversation, &shared, index, count, &cancel)
                            .unwrap()
                            .expect("renders");
                    assert_eq!(
                        got, wanted,
                        "message {index}, count {count:?}, continuing {continuing}"
                    );
                }
            }
        }
    }

    #[test]
    fn bytes_of_one_candidate_become_its_own() {
        let ambiguous = Source::Ambiguous {
            from: Part::Message(1),
            to: Part::Message(2),
        };
        let spans = split(10..30, &[(2, 20..26), (1, 5..14)], ambiguous);
        assert_eq!(
            spans,
            vec![
                Span {
                    range: 10..14,
                    source: Source::Message(1)
                },
                Span {
                    range: 14..20,
                    source: ambiguous
                },
                Span {
                    range: 20..26,
                    source: Source::Message(2)
                },
                Span {
                    range: 26..30,
                    source: ambiguous
                },
            ]
        );
    }
}
