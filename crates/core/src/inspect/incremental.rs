//! Attribution after an edit, reusing the prefix renders that still hold.
//!
//! A prefix render `P(k)` depends only on the first `k` messages and the settings
//! (tools, documents, variables, clock); what was learnt from it (its length and how
//! far it agrees with the prompt) still holds for a new prompt when the first `k`
//! messages are unchanged and the comparison ended before the first byte where the old
//! and new prompts differ. Typing in message `i` of a long conversation then re-renders
//! only the prefixes from `i` on: the last messages, the ones usually edited, are cheap.

use super::attribution::{attribute_from, render_full, Attribution, Renders};
use super::focus::Focus;
use super::prefixes::{render_prefixes, PrefixOutcome, Shared};
use super::refine::{Narrowing, Reuse};
use super::text::common_prefix_len;
use super::{Cancelled, InspectError};
use std::borrow::Cow;
use std::ops::Range;

use chatplate_render::{CancelToken, CompiledTemplate, Conversation, PreparedMessages};

/// An earlier attribution by the same template, with what it was computed from.
#[derive(Debug, Clone, Copy)]
pub struct Previous<'a> {
    /// The conversation it explained.
    pub conversation: &'a Conversation,
    /// Its prompt.
    pub prompt: &'a str,
    /// The attribution.
    pub attribution: &'a Attribution,
}

/// Attributes `conversation`'s prompt, reusing what still holds from `previous` (which
/// must come from the same compiled template).
pub fn attribute_incremental(
    template: &CompiledTemplate,
    conversation: &Conversation,
    previous: Option<Previous>,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    attribute_incremental_with_prompt(template, conversation, previous, cancel).map(|(a, _)| a)
}

/// [`attribute_incremental`], with the prompt it explains (rendered once, for both).
pub fn attribute_incremental_with_prompt(
    template: &CompiledTemplate,
    conversation: &Conversation,
    previous: Option<Previous>,
    cancel: &CancelToken,
) -> Result<(Attribution, String), InspectError> {
    let prompt = render_full(template, conversation, cancel)?;
    let attribution = attribute_rendered(template, conversation, &prompt, previous, cancel)?;
    Ok((attribution, prompt))
}

/// [`attribute_incremental`] of a prompt already rendered: `prompt` must be
/// `conversation`'s render by `template` (the app's worker has just rendered it to show
/// it; rendering it again cost a whole render per edit).
///
/// After an edit of the last messages this renders the prefixes from the first edited
/// message on (one, for the last message) and, when the conversation has tools, the
/// conversation without them; the two run side by side.
pub fn attribute_rendered(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prompt: &str,
    previous: Option<Previous>,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    attribute_rendered_from(
        template,
        conversation,
        None,
        (prompt, Focus::everything()),
        previous,
        cancel,
    )
}

/// [`attribute_rendered`] with `conversation`'s messages already converted (`prepared`,
/// as the app's worker keeps them for its renders): the attribution's renders read
/// them instead of converting every message again.
pub fn attribute_prepared(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prepared: &PreparedMessages,
    prompt: &str,
    previous: Option<Previous>,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    attribute_rendered_from(
        template,
        conversation,
        Some(prepared),
        (prompt, Focus::everything()),
        previous,
        cancel,
    )
}

/// [`attribute_prepared`] on screen first: where the prefixes cannot be predicted and
/// would all be rendered, only those around the messages `focus` (the ones on screen)
/// are, and the result is [`Attribution::partial`] (see `focus`); the whole attribution
/// is then another call without a focus. Where they are predicted, the result is the
/// whole attribution, as [`attribute_prepared`]'s.
pub fn attribute_focused(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prepared: &PreparedMessages,
    prompt: &str,
    previous: Option<Previous>,
    focus: Range<usize>,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    let focus = Focus::on(focus, conversation.messages.len());
    attribute_rendered_from(
        template,
        conversation,
        Some(prepared),
        (prompt, focus),
        previous,
        cancel,
    )
}

fn attribute_rendered_from(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prepared: Option<&PreparedMessages>,
    (prompt, focus): (&str, Focus),
    previous: Option<Previous>,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    let n = conversation.messages.len();
    // Compared once (10,000 messages take a while), for the prefixes and the narrowings.
    let unchanged = previous.and_then(|previous| unchanged_messages(&previous, conversation));
    let earlier = match (previous, unchanged) {
        (Some(previous), Some(unchanged)) => reusable(&previous, unchanged, n, prompt),
        _ => vec![None; n + 1],
    };
    // A partial attribution's outcomes are reused only where the prefixes are rendered
    // (the prediction declined): the prediction's checks pick the first and last prefix
    // of each kind among those to explain, and a sparse set (a partial one's gaps) can
    // leave out the prefix that shows a kind mispredicted (it did on Qwen3.5 and Step
    // 3.5 in the corpus tests). Its narrowings are not reused either: it narrowed only
    // the runs in focus, and the batch's checks depend on the runs batched.
    let partial = previous.is_some_and(|p| p.attribution.partial.is_some());
    let (reused, if_declined) = if partial {
        (vec![None; n + 1], earlier)
    } else {
        (earlier, Vec::new())
    };
    let reuse = match previous.filter(|_| !partial) {
        Some(previous) => Reuse {
            narrowed: &previous.attribution.narrowed,
            unchanged: unchanged.unwrap_or(0),
        },
        None => Reuse::default(),
    };
    // Comparing with the previous conversation took a while at 10,000 messages; a render
    // may have been asked for meanwhile.
    if cancel.is_cancelled() {
        return Err(InspectError::Cancelled(Cancelled));
    }
    let counts: Vec<usize> = (0..=n).filter(|&k| reused[k].is_none()).collect();
    // Every render below reads the messages converted once.
    let shared = &match prepared {
        Some(prepared) => Shared::with_prepared(Cow::Borrowed(prepared), prompt),
        None => Shared::new(conversation, prompt),
    }
    .focused(focus);
    // The render without tools does not depend on the prefix renders: on its own
    // thread, it takes no wall time after an edit (one prefix render runs meanwhile).
    let (outcomes, without_tools) = std::thread::scope(|scope| {
        let without = scope
            .spawn(|| super::tools_block::without_tools(template, conversation, shared, cancel));
        let outcomes = super::one_render::outcomes_reusing(
            template,
            conversation,
            shared,
            (&counts, &if_declined),
            cancel,
        );
        let without = without
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (outcomes, without)
    });
    let mut outcomes = outcomes?;
    let without_tools = without_tools?;
    outcomes.extend(
        reused
            .into_iter()
            .enumerate()
            .filter_map(|(k, outcome)| outcome.map(|o| (k, o))),
    );
    outcomes.sort_by_key(|(k, _)| *k);
    attribute_from(
        template,
        conversation,
        shared,
        Renders {
            outcomes,
            without_tools,
        },
        reuse,
        Narrowing::Batched,
        cancel,
    )
}

/// Attributes `conversation`'s prompt from a render of every prefix, never from a
/// prediction (see `one_render`): the reference the faster way is tested against.
pub fn attribute_by_prefixes(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    let prompt = render_full(template, conversation, cancel)?;
    let counts: Vec<usize> = (0..=conversation.messages.len()).collect();
    let shared = &Shared::new(conversation, &prompt);
    let outcomes = render_prefixes(template, conversation, shared, &counts, cancel)?;
    let without_tools = super::tools_block::without_tools(template, conversation, shared, cancel)?;
    attribute_from(
        template,
        conversation,
        shared,
        Renders {
            outcomes,
            without_tools,
        },
        Reuse::default(),
        Narrowing::EachByRenders,
        cancel,
    )
}

/// For each `k` in `0..=n`, the earlier outcome of `P(k)` when it still holds, given
/// that the first `same_messages` messages and the settings are unchanged.
pub(crate) fn reusable(
    previous: &Previous,
    same_messages: usize,
    n: usize,
    prompt: &str,
) -> Vec<Option<PrefixOutcome>> {
    let unchanged = common_prefix_len(previous.prompt, prompt);
    (0..=n)
        .map(|k| {
            let outcome = previous.attribution.prefix(k)?;
            (k <= same_messages && still_holds(outcome, unchanged)).then_some(outcome)
        })
        .collect()
}

/// How many leading messages are the same as in `previous`'s conversation; `None` when
/// a setting the prefix renders read (tools, documents, variables, clock) changed.
fn unchanged_messages(previous: &Previous, conversation: &Conversation) -> Option<usize> {
    let old = previous.conversation;
    let same_settings = old.tools == conversation.tools
        && old.documents == conversation.documents
        && old.variables == conversation.variables
        && old.clock == conversation.clock;
    same_settings.then(|| {
        old.messages
            .iter()
            .zip(&conversation.messages)
            .take_while(|(a, b)| a == b)
            .count()
    })
}

/// Whether `outcome` is the same against a prompt whose first `unchanged` bytes are
/// those of the prompt it was measured against.
fn still_holds(outcome: PrefixOutcome, unchanged: usize) -> bool {
    match outcome {
        PrefixOutcome::Failed => true,
        PrefixOutcome::Rendered { len, agrees } if agrees == len => len <= unchanged,
        PrefixOutcome::Rendered { agrees, .. } => agrees < unchanged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

    #[test]
    fn an_edit_of_the_last_message_rerenders_only_its_prefix() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let before = Conversation::new(vec![
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b"}),
            json!({"role": "user", "content": "c"}),
        ]);
        let cancel = CancelToken::new();
        let old = super::super::attribute(&template, &before, &cancel).unwrap();
        let old_prompt = template.render(&before).unwrap();
        let mut after = before.clone();
        after.messages[2]["content"] = json!("cc");
        let new_prompt = template.render(&after).unwrap();
        let previous = Previous {
            conversation: &before,
            prompt: &old_prompt,
            attribution: &old,
        };
        let unchanged = unchanged_messages(&previous, &after).expect("same settings");
        let reused = reusable(&previous, unchanged, after.messages.len(), &new_prompt);
        assert_eq!(
            reused.iter().filter(|o| o.is_none()).count(),
            1,
            "only P(3)"
        );
        let incremental =
            attribute_incremental(&template, &after, Some(previous), &cancel).unwrap();
        assert_eq!(
            incremental,
            super::super::attribute(&template, &after, &cancel).unwrap()
        );
    }

    #[test]
    fn narrowings_of_unchanged_messages_are_reused_and_the_result_is_the_same() {
        // Not prefix-monotone: the last message is bracketed differently, so every
        // message boundary is an ambiguous run that refine narrows.
        let template = CompiledTemplate::compile(
            "{% for m in messages %}{% if loop.last %}[{{ m.content }}]\
             {% else %}<{{ m.content }}>{% endif %}{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let before = Conversation::new(
            (0..40)
                .map(|i| json!({"role": "user", "content": format!("m{i}")}))
                .collect(),
        );
        let cancel = CancelToken::new();
        let old = super::super::attribute(&template, &before, &cancel).unwrap();
        assert!(!old.narrowed.is_empty(), "there are ambiguous runs");
        let old_prompt = template.render(&before).unwrap();
        let mut after = before.clone();
        after.messages[39]["content"] = json!("edited");
        let previous = Previous {
            conversation: &before,
            prompt: &old_prompt,
            attribution: &old,
        };
        let incremental =
            attribute_incremental(&template, &after, Some(previous), &cancel).unwrap();
        let reference = attribute_by_prefixes(&template, &after, &cancel).unwrap();
        assert_eq!(incremental, reference);
        // As the app's worker asks, with the messages it converted for its render.
        let prompt = template.render(&after).unwrap();
        let prepared = PreparedMessages::new(&after);
        let from_prepared = attribute_prepared(
            &template,
            &after,
            &prepared,
            &prompt,
            Some(previous),
            &cancel,
        )
        .unwrap();
        assert_eq!(from_prepared, reference);
    }
}
