//! What fine-tuning with assistant-only loss trains on: a session rendered with its
//! `{% generation %}` spans recorded, and the assistant mask by token and by byte
//! (see [`crate::tokens::mask`] for how transformers maps spans to tokens).
//!
//! Without the tag transformers only logs a warning and returns an all-zero mask, so
//! "all zero for a conversation with assistant turns" is the silent failure worth saying
//! out loud ([`TrainingMask::silently_empty`]).

use chatplate_render::{GenerationSpan, Limits, RenderControl, TrackedRender};

use crate::catalog::{self, TemplateSource};
use crate::rendering::{compiled, RenderFailure};
use crate::session::Session;

/// Renders a session with its resolved template, as [`crate::rendering::render_with`] does,
/// recording the generation spans.
pub fn render_tracked_with(
    session: &Session,
    template: &TemplateSource,
    limits: Limits,
) -> Result<TrackedRender, RenderFailure> {
    let conversation = catalog::conversation_for(session, template)
        .map_err(|e| RenderFailure::load(e.to_string()))?;
    let control = RenderControl::default();
    compiled::shared(&template.source, limits)
        .and_then(|compiled| compiled.render_tracked(conversation, &control))
        .map_err(|err| RenderFailure::render(&err, &template.source))
}

/// Whether `messages` has an assistant turn: what a training example learns from.
pub fn has_assistant_turn(messages: &[serde_json::Value]) -> bool {
    messages.iter().any(|m| m["role"] == "assistant")
}

/// The mask by character: for each span transformers keeps (see
/// [`crate::tokens::mask`]), the byte range of the prompt it covers, clamped to the
/// prompt. A span starting at or past the prompt's end ends the list, as transformers
/// stops there.
pub fn masked_bytes(prompt: &str, spans: &[GenerationSpan]) -> Vec<std::ops::Range<usize>> {
    let mut starts: Vec<usize> = prompt.char_indices().map(|(at, _)| at).collect();
    starts.push(prompt.len());
    spans
        .iter()
        .map_while(|span| {
            let start = starts.get(span.start).filter(|&&at| at < prompt.len())?;
            let end = starts.get(span.end).copied().unwrap_or(prompt.len());
            Some(*start..end.max(*start))
        })
        .collect()
}

/// Whether byte `at` of the prompt is trained on.
pub fn is_masked(ranges: &[std::ops::Range<usize>], at: usize) -> bool {
    ranges.iter().any(|range| range.contains(&at))
}

/// The assistant mask of one tokenized prompt.
#[cfg(feature = "tokens")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingMask {
    /// One `0`/`1` per token: transformers' `assistant_masks`.
    pub tokens: Vec<u8>,
    /// The prompt bytes inside the spans transformers keeps (the mask by character).
    pub bytes: Vec<std::ops::Range<usize>>,
    /// Whether transformers' test finds the `{% generation %}` tag (it only warns when
    /// it does not).
    pub has_generation_tag: bool,
    /// Whether the template has a generation block in any spelling (`{%+ generation %}`
    /// too): the blocks the mask is made from.
    pub has_generation_block: bool,
}

#[cfg(feature = "tokens")]
impl TrainingMask {
    /// The mask of `tracked`'s prompt, tokenized as `tokenized`.
    pub fn of(
        tracked: &TrackedRender,
        tokenized: &crate::tokens::Tokenized,
    ) -> Result<Self, crate::tokens::MaskError> {
        Ok(TrainingMask {
            tokens: crate::tokens::assistant_mask(&tracked.prompt, tokenized, &tracked.spans)?,
            bytes: masked_bytes(&tracked.prompt, &tracked.spans),
            has_generation_tag: tracked.has_generation_tag,
            has_generation_block: tracked.has_generation_block,
        })
    }

    /// How many tokens are trained on.
    pub fn trained(&self) -> usize {
        self.tokens.iter().filter(|&&flag| flag == 1).count()
    }

    /// Whether a conversation with assistant turns trains on nothing.
    pub fn silently_empty(&self, messages: &[serde_json::Value]) -> bool {
        self.trained() == 0 && has_assistant_turn(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_bytes_stop_at_a_span_at_the_end() {
        let span = |start, end| GenerationSpan { start, end };
        let spans = [span(1, 2), span(3, 3), span(0, 1)];
        assert_eq!(masked_bytes("éab", &spans), vec![(2..3)]);
        assert_eq!(masked_bytes("éab", &[span(2, 40)]), vec![(3..4)]);
    }
}
