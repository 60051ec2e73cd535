//! The assistant mask in `chatplate tokens`: what fine-tuning with assistant-only loss
//! trains on (see `chatplate_core::training`), as JSON keys, a table mark and a warning.

use serde::ser::SerializeMap;
use serde_json::Value as Json;

use super::output;
use chatplate_core::tokens::{MaskError, Tokenized};
use chatplate_core::training::TrainingMask;
use chatplate_render::TrackedRender;

/// The mask of one rendered input, or why there is none.
pub(super) struct MaskReport {
    /// The mask, or transformers' failure to compute it.
    pub(super) mask: Result<TrainingMask, MaskError>,
    /// Whether the conversation has an assistant turn.
    pub(super) assistant_turns: bool,
}

impl MaskReport {
    /// The mask of `tracked` tokenized as `tokenized`.
    pub(super) fn new(
        tracked: &TrackedRender,
        tokenized: &Tokenized,
        assistant_turns: bool,
    ) -> Self {
        MaskReport {
            mask: TrainingMask::of(tracked, tokenized),
            assistant_turns,
        }
    }

    /// Whether token `index` is trained on.
    pub(super) fn trained(&self, index: usize) -> bool {
        self.mask
            .as_ref()
            .is_ok_and(|mask| mask.tokens.get(index) == Some(&1))
    }

    /// The error or the all-zero warning for `input`, on stderr; whether it was an error.
    /// A template without `{% generation %}` gets no warning here (most prompts are for
    /// inference; `inspect` says it), only `has_generation_markers: false`.
    pub(super) fn warn(&self, input: &str) -> bool {
        match &self.mask {
            Err(err) => {
                output::note(&format!("error: {input}: assistant mask: {err}"));
                true
            }
            Ok(mask)
                if mask.has_generation_block && mask.trained() == 0 && self.assistant_turns =>
            {
                output::note(&format!("warning: {input}: the assistant mask is all zero (the template's {{% generation %}} blocks cover no token): assistant-only training learns nothing from this conversation"));
                false
            }
            Ok(_) => false,
        }
    }

    /// The JSON keys: `has_generation_markers`, `assistant_mask`, `assistant_spans`.
    pub(super) fn serialize_entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match &self.mask {
            Ok(mask) => {
                map.serialize_entry("has_generation_markers", &mask.has_generation_tag)?;
                map.serialize_entry("assistant_mask", &mask.tokens)?;
                let spans: Vec<[usize; 2]> = mask.bytes.iter().map(|r| [r.start, r.end]).collect();
                map.serialize_entry("assistant_spans", &spans)
            }
            Err(_) => {
                map.serialize_entry("has_generation_markers", &true)?;
                map.serialize_entry("assistant_mask", &Json::Null)?;
                map.serialize_entry("assistant_spans", &Json::Null)
            }
        }
    }

    /// ", N trained" for the total line, when the template has generation blocks.
    pub(super) fn total(&self) -> String {
        match &self.mask {
            Ok(mask) if mask.has_generation_block => format!(", {} trained", mask.trained()),
            _ => String::new(),
        }
    }
}
