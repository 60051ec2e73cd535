//! Narrowing every ambiguous run of a long conversation from a few traced renders.
//!
//! Narrowing one run (see `refine`) renders the prefix that covers it three times, each
//! as long as the prefix: a template that leaves a run ambiguous at every turn (Qwen3
//! brackets the last assistant turn differently) made that quadratic. Here the prefix
//! renders are predicted as in `one_render`: `P(k)` is what a traced render of the whole
//! conversation had written when message `k` was reached. The changed conversations
//! are two traced renders, each with every other candidate message's values wrapped
//! (the even ones, the odd ones), so no other wrapped message lies between a candidate
//! and the end of its run's prefix; a candidate's region is the difference of its
//! stretch (from where it was reached to where the prefix ends) in the two renders.
//! Like the prefix prediction, this is checked rather than trusted: the first and last
//! run of every kind (the shapes of the messages around it) are narrowed by real
//! renders, and the prediction is used for a kind only where it agrees with both.

use std::collections::BTreeMap;
use std::ops::Range;

use super::attribution::{Part, Span};
use super::one_render::{kind_of, marks, WORTH_PREDICTING};
use super::prefixes::Shared;
use super::refine::{candidates, changed_in, narrow, split, wrap};
use super::Cancelled;
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, RenderErrorKind};

/// One ambiguous run to narrow: its bytes and its possible producers.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// Bytes of the prompt.
    pub range: Range<usize>,
    /// The earliest possible producer.
    pub from: Part,
    /// The latest possible producer.
    pub to: Part,
}

/// Each of `runs` narrowed, as `refine::narrow` would, in a bounded number of renders.
pub(crate) fn narrow_all(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    runs: &[Run],
    cancel: &CancelToken,
) -> Result<Vec<Vec<Span>>, Cancelled> {
    let predicted = if runs.len() < WORTH_PREDICTING {
        vec![None; runs.len()]
    } else {
        predict(template, conversation, runs, cancel)?
    };
    // Runs by kind; a run without a prediction is narrowed by renders.
    let mut kinds: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, (run, guess)) in runs.iter().zip(&predicted).enumerate() {
        if let (Some(_), Part::Message(last)) = (guess, run.to) {
            let shape = format!(
                "{} | {} | {}",
                kind_of(conversation, last.max(1)),
                kind_of(conversation, last + 1),
                candidates(conversation, run.from, last).len()
            );
            kinds.entry(shape).or_default().push(index);
        }
    }
    let mut narrowed: Vec<Option<Vec<Span>>> = vec![None; runs.len()];
    for members in kinds.values() {
        let checks = [members[0], members[members.len() - 1]];
        let mut holds = true;
        for &index in &checks {
            let real = narrow_one(template, conversation, shared, &runs[index], cancel)?;
            holds &= predicted[index].as_ref() == Some(&real);
            narrowed[index] = Some(real);
        }
        if holds {
            for &index in members {
                if narrowed[index].is_none() {
                    narrowed[index] = predicted[index].clone();
                }
            }
        }
    }
    runs.iter()
        .zip(narrowed)
        .map(|(run, done)| match done {
            Some(spans) => Ok(spans),
            None => narrow_one(template, conversation, shared, run, cancel),
        })
        .collect()
}

fn narrow_one(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    run: &Run,
    cancel: &CancelToken,
) -> Result<Vec<Span>, Cancelled> {
    narrow(
        template,
        conversation,
        shared,
        run.range.clone(),
        run.from,
        run.to,
        cancel,
    )
}

/// A traced render's text and where it predicts each prefix ends.
struct Traced {
    text: String,
    marks: Vec<usize>,
}

fn traced(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<Option<Traced>, Cancelled> {
    match template.render_traced_prefix(conversation, cancel) {
        Ok(traced) => Ok(
            marks(template, conversation, &traced, cancel)?.map(|marks| Traced {
                text: traced.text,
                marks,
            }),
        ),
        Err(err) if err.kind == RenderErrorKind::Cancelled => Err(Cancelled),
        Err(_) => Ok(None),
    }
}

/// Each run's narrowing as predicted from three traced renders (`None` where it cannot
/// be predicted).
fn predict(
    template: &CompiledTemplate,
    conversation: &Conversation,
    runs: &[Run],
    cancel: &CancelToken,
) -> Result<Vec<Option<Vec<Span>>>, Cancelled> {
    let none = vec![None; runs.len()];
    let Some(base) = traced(template, conversation, cancel)? else {
        return Ok(none);
    };
    let mut parities: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for run in runs {
        if let Part::Message(last) = run.to {
            for candidate in candidates(conversation, run.from, last) {
                parities[candidate % 2].push(candidate);
            }
        }
    }
    let mut changed = Vec::with_capacity(2);
    for wrapping in &mut parities {
        wrapping.sort_unstable();
        wrapping.dedup();
        let mut conversation = conversation.clone();
        for &index in wrapping.iter() {
            wrap(&mut conversation, index);
        }
        changed.push(traced(template, &conversation, cancel)?);
    }
    Ok(runs
        .iter()
        .map(|run| {
            let Part::Message(last) = run.to else {
                return None;
            };
            let end = last + 1;
            let regions = candidates(conversation, run.from, last)
                .into_iter()
                .map(|candidate| {
                    let other = changed[candidate % 2].as_ref()?;
                    let mine = base.text.get(base.marks[candidate]..base.marks[end])?;
                    let theirs = other.text.get(other.marks[candidate]..other.marks[end])?;
                    let region = changed_in(mine, theirs);
                    let offset = base.marks[candidate];
                    Some((candidate, region.start + offset..region.end + offset))
                })
                .collect::<Option<Vec<_>>>()?;
            let ambiguous = super::attribution::Source::Ambiguous {
                from: run.from,
                to: run.to,
            };
            Some(split(run.range.clone(), &regions, ambiguous))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::attribution::Source;
    use chatplate_render::Limits;
    use serde_json::json;

    /// Like Qwen3: the last assistant turn carries a think block that earlier ones lose,
    /// so every prefix ending with an assistant message leaves a run ambiguous.
    const LAST_TURN_DIFFERS: &str = "{% for m in messages %}<|{{ m.role }}|>\
        {% if m.role == 'assistant' and loop.last %}<think></think>{% endif %}\
        {{ m.content }}\n{% endfor %}";

    fn conversation(count: usize) -> Conversation {
        Conversation::new(
            (0..count)
                .map(|i| {
                    let role = if i % 2 == 0 { "user" } else { "assistant" };
                    json!({"role": role, "content": format!("m{i}")})
                })
                .collect(),
        )
    }

    /// The ambiguous runs of the attribution's first step (before narrowing).
    fn runs(template: &CompiledTemplate, conversation: &Conversation) -> Vec<Run> {
        let prompt = template.render(conversation).unwrap();
        let counts: Vec<usize> = (0..=conversation.messages.len()).collect();
        let outcomes = super::super::prefixes::render_prefixes(
            template,
            conversation,
            &Shared::new(conversation, &prompt),
            &counts,
            &CancelToken::new(),
        )
        .unwrap();
        let bounds = super::super::prefixes::Bounds::new(&outcomes, conversation.messages.len());
        super::super::attribution::spans_from(&bounds, prompt.len(), conversation)
            .into_iter()
            .filter_map(|span| match span.source {
                Source::Ambiguous { from, to } => Some(Run {
                    range: span.range,
                    from,
                    to,
                }),
                _ => None,
            })
            .collect()
    }

    /// Every run narrowed with nothing rendered beforehand: one by one (the reference),
    /// or all together ([`narrow_all`]).
    fn narrowed(
        template: &CompiledTemplate,
        conversation: &Conversation,
        runs: &[Run],
        together: bool,
    ) -> Vec<Vec<Span>> {
        let prompt = template.render(conversation).unwrap();
        let shared = Shared::new(conversation, &prompt);
        let cancel = CancelToken::new();
        if together {
            return narrow_all(template, conversation, &shared, runs, &cancel).unwrap();
        }
        runs.iter()
            .map(|run| narrow_one(template, conversation, &shared, run, &cancel).unwrap())
            .collect()
    }

    #[test]
    fn every_run_of_a_long_conversation_is_predicted_as_rendered() {
        let template = CompiledTemplate::compile(LAST_TURN_DIFFERS, Limits::default()).unwrap();
        let conversation = conversation(60);
        let runs = runs(&template, &conversation);
        assert!(runs.len() >= WORTH_PREDICTING, "{} runs", runs.len());
        let wanted = narrowed(&template, &conversation, &runs, false);
        let predicted = predict(&template, &conversation, &runs, &CancelToken::new()).unwrap();
        let predicted: Vec<Vec<Span>> = predicted.into_iter().map(Option::unwrap).collect();
        assert_eq!(predicted, wanted);
        assert_eq!(narrowed(&template, &conversation, &runs, true), wanted);
    }

    #[test]
    fn a_wrong_prediction_is_caught_by_the_checks() {
        // Every message's content is printed again at the end: wrapping one changes
        // the bytes after the last message too, which its stretch does not show. The
        // checks see it and every run is narrowed by renders.
        let template = CompiledTemplate::compile(
            &format!(
                "{LAST_TURN_DIFFERS}{{% for m in messages %}}{{{{ m.content }}}}{{% endfor %}}"
            ),
            Limits::default(),
        )
        .unwrap();
        let conversation = conversation(60);
        let runs = runs(&template, &conversation);
        assert_eq!(
            narrowed(&template, &conversation, &runs, true),
            narrowed(&template, &conversation, &runs, false)
        );
    }
}
