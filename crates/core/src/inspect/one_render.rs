//! Every prefix's outcome from one traced render, instead of one render per prefix.
//!
//! A traced render of all messages (`P(n)`, see
//! [`chatplate_render::CompiledTemplate::render_traced_prefix`]) notes where a `for`
//! loop last reached each message, and where the template first looked at each. When
//! one of them is in message order (the loop reaches first), the prediction is that the
//! render of the first `k` messages, `P(k)`, is what `P(n)` had written when message
//! `k` was reached: the template writes a message's
//! turn only once it has reached that message, and nothing more once no message is
//! left. Templates that defeat this (they look at later messages early, print
//! something after the last message, treat the last message differently) are caught
//! three ways: the looks must come in message order; the shortest prefixes are
//! rendered for real, as are the first and the last prefix of every *kind* (the role and
//! keys of the message it ends with and of the one after it), since templates decide
//! by role and by the presence of keys; and the prediction is used for a kind only
//! where it agrees with both of that kind's real renders (the other kinds' prefixes are
//! all rendered). A template that takes the final message off the list and writes it
//! after its loop (NVIDIA's Nemotron Nano 2) reaches every message in order but that
//! one: where its loop ended, the end of `P(n - 1)`, is then taken from one real render.
//! The tests in `crates/core/tests/inspect/attribution_corpus.rs` show the result equal to the
//! prefix-render method's on every case of the conformance corpus.

use std::collections::BTreeMap;

use super::prefixes::{render_prefixes, PrefixOutcome, Shared};
use super::text::common_prefix_len;
use super::Cancelled;
use chatplate_render::{
    CancelToken, CompiledTemplate, Conversation, RenderErrorKind, TracedRender,
};

/// Prefixes this short are always rendered for real: they are cheap, and where
/// templates treat the first messages specially (system prompts, tool definitions in the
/// first user turn).
const SHORT: usize = 4;

/// Below this many prefixes to explain, rendering them all is as cheap as predicting.
pub(crate) const WORTH_PREDICTING: usize = 16;

/// `P(k)`'s outcome against `prompt` for every `k` in `1..=n`, predicted from one
/// traced render; `None` when the template did not look at the messages in order (or
/// the traced render failed, which the real renders will then show).
pub fn predict(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prompt: &str,
    cancel: &CancelToken,
) -> Result<Option<Vec<PrefixOutcome>>, Cancelled> {
    let traced = match template.render_traced_prefix(conversation, cancel) {
        Ok(traced) => traced,
        Err(err) if err.kind == RenderErrorKind::Cancelled => return Err(Cancelled),
        Err(_) => return Ok(None),
    };
    let Some(mut ends) = marks(template, conversation, &traced, cancel)? else {
        return Ok(None);
    };
    // Nothing written while the loop went from the first message to the last: the
    // template builds its prompt elsewhere (Reka Edge, in a namespace string, printed
    // after the loop), and every prediction would be the same wrong length, which the
    // checks would learn at the price of two renders per kind of prefix.
    let n = conversation.messages.len();
    if n > SHORT && ends[1] == ends[n - 1] {
        return Ok(None);
    }
    // P(k) ends where message k was reached; P(n) is the whole render.
    ends.remove(0);
    let agrees = common_prefix_len(&traced.text, prompt);
    Ok(Some(
        ends.into_iter()
            .map(|len| PrefixOutcome::Rendered {
                len,
                agrees: len.min(agrees),
            })
            .collect(),
    ))
}

/// Where a traced render of `n` messages reached each message, and its length: the
/// predicted end of `P(k)` is mark `k`. `None` when the marks are not in message order.
fn prefix_marks(traced: &TracedRender, n: usize) -> Option<Vec<usize>> {
    // Where the main loop reached each message, else where each was first looked at.
    let reached = reached_or_looked(traced);
    let ends = [&reached, &traced.first_look]
        .into_iter()
        .filter_map(|marks| marks.iter().copied().collect::<Option<Vec<usize>>>())
        .map(|mut marks| {
            marks.push(traced.text.len());
            marks
        })
        .find(|marks| {
            n > 0 && marks.len() == n + 1 && marks.windows(2).all(|pair| pair[0] <= pair[1])
        });
    ends
}

/// Per message, where the main loop reached it, or for a message no loop reached (such
/// as a system prompt printed before the loop) where it was first looked at.
fn reached_or_looked(traced: &TracedRender) -> Vec<Option<usize>> {
    (traced.last_reach.iter().zip(&traced.first_look))
        .map(|(reach, look)| reach.or(*look))
        .collect()
}

/// The predicted end of every prefix `P(k)`, `k` in `0..=n`, from a traced render of
/// `conversation` ([`prefix_marks`], or for a template that writes the final message
/// after its loop, [`reached_but_the_last`]); `None` when the trace cannot tell.
pub(super) fn marks(
    template: &CompiledTemplate,
    conversation: &Conversation,
    traced: &TracedRender,
    cancel: &CancelToken,
) -> Result<Option<Vec<usize>>, Cancelled> {
    let n = conversation.messages.len();
    let last_after_loop = match reached_but_the_last(traced, n) {
        Some(marks) => with_last_rendered(template, conversation, marks, traced, cancel)?,
        None => None,
    };
    Ok(last_after_loop.or_else(|| prefix_marks(traced, n)))
}

/// The marks of a template that writes the final message after its main loop (NVIDIA's
/// Nemotron Nano 2 takes it off the list first): every other message is reached in
/// order, the final one only by an earlier scan, so it looks reached before the others.
/// `None` for any other shape. The end of `P(n - 1)` is then not in the trace (see
/// [`with_last_rendered`]).
fn reached_but_the_last(traced: &TracedRender, n: usize) -> Option<Vec<usize>> {
    let marks: Vec<usize> = reached_or_looked(traced)
        .into_iter()
        .collect::<Option<_>>()?;
    if n < 2 || marks.len() != n {
        return None;
    }
    let others_in_order = marks[..n - 1].windows(2).all(|pair| pair[0] <= pair[1]);
    let last_early = marks[n - 1] < marks[n - 2];
    (others_in_order && last_early && marks[n - 2] <= traced.text.len()).then_some(marks)
}

/// `marks` (from [`reached_but_the_last`]) completed as [`prefix_marks`] does, with the
/// final message's mark taken from a real render of `P(n - 1)`: where the loop ended.
/// `None` when that render does not fall between the marks around it.
fn with_last_rendered(
    template: &CompiledTemplate,
    conversation: &Conversation,
    mut marks: Vec<usize>,
    traced: &TracedRender,
    cancel: &CancelToken,
) -> Result<Option<Vec<usize>>, Cancelled> {
    let n = marks.len();
    let len = match template.render_prefix(conversation, n - 1, cancel) {
        Ok(prefix) => prefix.len(),
        Err(err) if err.kind == RenderErrorKind::Cancelled => return Err(Cancelled),
        Err(_) => return Ok(None),
    };
    if len < marks[n - 2] || len > traced.text.len() {
        return Ok(None);
    }
    marks[n - 1] = len;
    marks.push(traced.text.len());
    Ok(Some(marks))
}

/// The outcomes of `P(k)` for each of `counts`: predicted for the kinds of prefix
/// where the prediction held on every prefix rendered to check it, rendered for the
/// others (see the module docs).
#[cfg(test)]
pub(crate) fn outcomes(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    counts: &[usize],
    cancel: &CancelToken,
) -> Result<Vec<(usize, PrefixOutcome)>, Cancelled> {
    outcomes_reusing(template, conversation, shared, (counts, &[]), cancel)
}

/// [`outcomes`], taking `if_declined[k]` (when some) as `P(k)`'s outcome instead of
/// rendering it where the prefixes are rendered rather than predicted (an earlier
/// partial attribution's, see `incremental`).
pub(crate) fn outcomes_reusing(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    (counts, if_declined): (&[usize], &[Option<PrefixOutcome>]),
    cancel: &CancelToken,
) -> Result<Vec<(usize, PrefixOutcome)>, Cancelled> {
    let known = |k: usize| if_declined.get(k).copied().flatten();
    let missing: Vec<usize> = counts
        .iter()
        .copied()
        .filter(|&k| known(k).is_none())
        .collect();
    // The missing ones rendered (all, or those `bulk` keeps), with the known ones.
    let rendered = |to_render: &[usize]| -> Result<Vec<(usize, PrefixOutcome)>, Cancelled> {
        let mut all = render_prefixes(template, conversation, shared, to_render, cancel)?;
        all.extend(counts.iter().filter_map(|&k| known(k).map(|o| (k, o))));
        all.sort_by_key(|(k, _)| *k);
        Ok(all)
    };
    // So few that rendering them is as cheap as predicting, and never worth leaving out.
    if missing.len() < WORTH_PREDICTING {
        return rendered(&missing);
    }
    let Some(predicted) = predict(template, conversation, shared.prompt, cancel)? else {
        return rendered(&shared.focus.bulk(&missing));
    };
    let kinds = kinds(conversation, counts);
    // The shortest prefixes, and the first and last of each kind.
    let mut checks: Vec<usize> = counts.iter().copied().filter(|&k| k <= SHORT).collect();
    for members in kinds.values() {
        checks.extend([members[0], members[members.len() - 1]]);
    }
    checks.sort_unstable();
    checks.dedup();
    let mut all = render_prefixes(template, conversation, shared, &checks, cancel)?;
    // A template may treat its first messages specially (Llama 3.1 looks at the first
    // user message early, to put the tool definitions in it) without that saying
    // anything about the others: the shortest prefixes are rendered either way.
    let wrong: Vec<usize> = all
        .iter()
        .filter(|&&(k, outcome)| k > 0 && predicted[k - 1] != outcome)
        .map(|&(k, _)| k)
        .collect();
    // The predicted length of every prefix, P(0) included.
    let mut ends = vec![0];
    ends.extend(predicted.iter().map(|outcome| match outcome {
        PrefixOutcome::Rendered { len, .. } => *len,
        PrefixOutcome::Failed => 0,
    }));
    for members in kinds.values() {
        let holds = !wrong.contains(&members[0]) && !wrong.contains(&members[members.len() - 1]);
        let unchecked: Vec<usize> = members
            .iter()
            .copied()
            .filter(|k| !checks.contains(k))
            .collect();
        if holds {
            all.extend(unchecked.iter().map(|&k| (k, predicted[k - 1])));
        } else {
            // Mispredicted: often by the same shift throughout (see `shifted`).
            all.extend(super::shifted::outcomes(
                template,
                conversation,
                shared,
                &unchecked,
                &ends,
                cancel,
            )?);
        }
    }
    all.sort_by_key(|(k, _)| *k);
    Ok(all)
}

/// The prefixes of `counts` longer than [`SHORT`], by kind, each kind's ascending.
fn kinds(conversation: &Conversation, counts: &[usize]) -> BTreeMap<String, Vec<usize>> {
    let mut kinds: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut sorted: Vec<usize> = counts.iter().copied().filter(|&k| k > SHORT).collect();
    sorted.sort_unstable();
    for k in sorted {
        kinds.entry(kind_of(conversation, k)).or_default().push(k);
    }
    kinds
}

/// What kind of prefix `P(k)` is: the role and keys of its last message and of the
/// message after it (none after the last).
pub(super) fn kind_of(conversation: &Conversation, k: usize) -> String {
    let shape = |index: usize| match conversation.messages.get(index) {
        Some(serde_json::Value::Object(fields)) => {
            let role = fields.get("role").and_then(|r| r.as_str()).unwrap_or("");
            let mut keys: Vec<&str> = fields
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(key, _)| key.as_str())
                .collect();
            keys.sort_unstable();
            format!("{role}:{}", keys.join(","))
        }
        Some(_) => "?".to_string(),
        None => "-".to_string(),
    };
    format!("{} {}", shape(k - 1), shape(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

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

    fn all_rendered(
        template: &CompiledTemplate,
        conversation: &Conversation,
    ) -> Vec<PrefixOutcome> {
        let prompt = template.render(conversation).unwrap();
        let counts: Vec<usize> = (1..=conversation.messages.len()).collect();
        render_prefixes(
            template,
            conversation,
            &Shared::new(conversation, &prompt),
            &counts,
            &CancelToken::new(),
        )
        .unwrap()
        .into_iter()
        .map(|(_, o)| o)
        .collect()
    }

    #[test]
    fn an_in_order_template_is_predicted_exactly() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
             {% if add_generation_prompt %}<|assistant|>{% endif %}",
            Limits::default(),
        )
        .unwrap();
        let mut conversation = conversation(30);
        conversation.add_generation_prompt = true;
        let prompt = template.render(&conversation).unwrap();
        let predicted = predict(&template, &conversation, &prompt, &CancelToken::new())
            .unwrap()
            .expect("in order");
        assert_eq!(predicted, all_rendered(&template, &conversation));
    }

    #[test]
    fn a_template_that_reaches_the_messages_backwards_is_not_predicted() {
        let template = CompiledTemplate::compile(
            "{% for m in messages|reverse %}{{ m.content }}{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let conversation = conversation(30);
        let prompt = template.render(&conversation).unwrap();
        let predicted = predict(&template, &conversation, &prompt, &CancelToken::new()).unwrap();
        assert_eq!(predicted, None);
    }

    /// Like NVIDIA's Nemotron Nano 2: the final message is taken off the list and written
    /// after the loop (and read before it).
    const FINAL_AFTER_THE_LOOP: &str = "{% set last = messages[-1] %}\
        {% set closing = '[last ' ~ last.role ~ ']' ~ last.content %}\
        {% for m in messages[:-1] %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}{{ closing }}";

    #[test]
    fn a_final_message_written_after_the_loop_takes_its_mark_from_a_render() {
        let template = CompiledTemplate::compile(FINAL_AFTER_THE_LOOP, Limits::default()).unwrap();
        let conversation = conversation(30);
        let cancel = CancelToken::new();
        let traced = template
            .render_traced_prefix(&conversation, &cancel)
            .unwrap();
        // Read before the loop, the final message looks reached first.
        assert_eq!(traced.first_look[29], Some(0));
        let marks = marks(&template, &conversation, &traced, &cancel)
            .unwrap()
            .expect("marks");
        assert_eq!(marks.len(), 31);
        assert!(marks.windows(2).all(|pair| pair[0] <= pair[1]), "{marks:?}");
        let before_last = template.render_prefix(&conversation, 29, &cancel).unwrap();
        assert_eq!(marks[29], before_last.len());
        assert_eq!(marks[30], traced.text.len());

        let prompt = template.render(&conversation).unwrap();
        let counts: Vec<usize> = (0..=30).collect();
        let shared = Shared::new(&conversation, &prompt);
        let got = outcomes(&template, &conversation, &shared, &counts, &cancel).unwrap();
        let wanted = render_prefixes(&template, &conversation, &shared, &counts, &cancel).unwrap();
        assert_eq!(got, wanted);
    }

    #[test]
    fn a_wrong_prediction_is_caught_by_the_checks() {
        // Something after the last message: every shorter prefix also ends with "!",
        // which the traced render cannot know. The checks render some prefixes and see
        // it; every outcome is then rendered.
        let template = CompiledTemplate::compile(
            "{% for m in messages %}{{ m.content }}{% endfor %}!",
            Limits::default(),
        )
        .unwrap();
        let conversation = conversation(30);
        let prompt = template.render(&conversation).unwrap();
        let counts: Vec<usize> = (0..=30).collect();
        let shared = Shared::new(&conversation, &prompt);
        let got = outcomes(
            &template,
            &conversation,
            &shared,
            &counts,
            &CancelToken::new(),
        )
        .unwrap();
        let wanted = render_prefixes(
            &template,
            &conversation,
            &shared,
            &counts,
            &CancelToken::new(),
        )
        .unwrap();
        assert_eq!(got, wanted);
    }
}
