//! What fine-tuning with assistant-only loss would train on: whether the template marks
//! the assistant's output with `{% generation %}` (without it transformers' mask is all
//! zero and training learns nothing), and whether the end-of-turn marker after a reply is
//! inside the mask (without it the model never learns to stop).

use serde_json::Value as Json;

use super::capabilities::{Decided, Entry};
use super::content::ContentCaps;
use super::probe::{Probe, Prober};
use super::Cancelled;
use crate::training::{is_masked, masked_bytes};

const REPLY: &str = "ReplyNeedle5520";

/// The answers about training masks.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingCaps {
    /// The source has a `{% generation %}` tag (transformers' test).
    pub has_generation_markers: Decided<bool>,
    /// The text right after an assistant reply (its end-of-turn marker) is inside a
    /// generation block.
    pub stop_token_trained: Decided<bool>,
}

impl TrainingCaps {
    /// The report lines.
    pub(crate) fn entries(&self) -> Vec<Entry> {
        vec![
            Entry::flag("has_generation_markers", &self.has_generation_markers),
            Entry::flag("stop_token_trained", &self.stop_token_trained),
        ]
    }
}

/// Renders `[user, assistant]` with the generation spans recorded.
pub(crate) fn detect(prober: &Prober, content: &ContentCaps) -> Result<TrainingCaps, Cancelled> {
    let probe = Probe::of(vec![
        content.user("Question5519"),
        content.message("assistant", REPLY),
    ]);
    let described = probe.describe();
    let tracked = match prober.render_tracked(&probe)? {
        Ok(tracked) => tracked,
        Err(err) => {
            let observed = super::probe::failure_text(&err);
            return Ok(TrainingCaps {
                has_generation_markers: Decided::new(false, &described, &observed),
                stop_token_trained: Decided::new(false, described, observed),
            });
        }
    };
    // transformers' tag test only decides a warning: the mask comes from the blocks
    // recorded, whatever their spelling (`{%+ generation %}` too).
    if !tracked.has_generation_block && tracked.spans.is_empty() {
        let observed = "no {% generation %} block: transformers' assistant mask is all zero, assistant-only training learns nothing";
        return Ok(TrainingCaps {
            has_generation_markers: Decided::new(false, &described, observed),
            stop_token_trained: Decided::new(false, described, observed),
        });
    }
    let masked = masked_bytes(&tracked.prompt, &tracked.spans);
    let reply_masked = tracked
        .prompt
        .find(REPLY)
        .is_some_and(|at| is_masked(&masked, at));
    let missed = if tracked.has_generation_tag {
        ""
    } else {
        " (transformers' test for the tag misses this spelling and logs a warning; the mask \
         is made from the blocks all the same)"
    };
    let markers = Decided::new(
        true,
        &described,
        format!(
            "{} block(s) rendered; the reply is {}{missed}",
            tracked.spans.len(),
            if reply_masked {
                "inside the mask"
            } else {
                "outside the mask"
            }
        ),
    );
    Ok(TrainingCaps {
        has_generation_markers: markers,
        stop_token_trained: stop_token(&tracked.prompt, &masked, described),
    })
}

/// Whether the marker that closes the reply (the first text after it, past any
/// whitespace: `{{ m.content }} {{ '<|eot_id|>' }}` closes with `<|eot_id|>`) is masked.
fn stop_token(prompt: &str, masked: &[std::ops::Range<usize>], probe: String) -> Decided<bool> {
    let Some(end) = prompt.find(REPLY).map(|at| at + REPLY.len()) else {
        return Decided::new(false, probe, "the reply does not appear in the prompt");
    };
    let after = prompt[end..]
        .find(|ch: char| !ch.is_whitespace())
        .map_or(prompt.len(), |at| end + at);
    let closing: String = prompt[after..]
        .chars()
        .take_while(|ch| !ch.is_whitespace())
        .take(24)
        .collect();
    if closing.is_empty() {
        return Decided::new(
            false,
            probe,
            "nothing closes the reply (only whitespace, or the prompt's end, follows it)",
        );
    }
    let shown = Json::from(closing).to_string();
    if is_masked(masked, after) {
        Decided::new(
            true,
            probe,
            format!("{shown} after the reply is inside the mask"),
        )
    } else {
        Decided::new(
        false,
        probe,
        format!("{shown} after the reply is outside the mask: the model is never trained to end its turn"),
    )
    }
}
