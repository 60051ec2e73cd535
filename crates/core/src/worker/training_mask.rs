//! The assistant mask for the app's token mode, computed on the worker with the tokens:
//! the template renders once more with its `{% generation %}` spans recorded (only when
//! it has such a block; without one transformers' mask is all zero and nothing is
//! rendered).

use std::ops::Range;

/// The mask as the prompt pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownMask {
    /// The bytes of the trained tokens, merged into ranges, in order.
    pub trained: Vec<Range<usize>>,
    /// How many tokens are trained on.
    pub trained_tokens: usize,
    /// The template has `{% generation %}`.
    pub has_generation_tag: bool,
    /// The conversation has an assistant turn.
    pub assistant_turns: bool,
}

impl ShownMask {
    /// A conversation with assistant turns that trains on nothing: transformers' silent
    /// failure, which the title warns about.
    pub fn silently_empty(&self) -> bool {
        self.trained_tokens == 0 && self.assistant_turns
    }
}

/// The mask of `prompt` (tokenized as `tokenized`) by `template`; `None` when the
/// template does not compile, the render differs from `prompt` (the conversation moved
/// on) or transformers would fail (an empty block at the prompt's start).
#[cfg(feature = "tokens")]
pub(super) fn compute(
    template: &super::Template,
    prompt: &str,
    tokenized: &crate::tokens::Tokenized,
    conversation: &chatplate_render::Conversation,
    cancel: &chatplate_render::CancelToken,
) -> Option<ShownMask> {
    use crate::training::{has_assistant_turn, TrainingMask};
    use chatplate_render::{RenderControl, TrackedRender};
    let compiled = template.compiled().ok()?;
    // Any spelling of the tag: transformers records `{%+ generation %}` blocks too.
    let tracked = if compiled.has_generation_block() {
        let control = RenderControl::new(cancel.clone());
        compiled.render_tracked(conversation, &control).ok()?
    } else {
        TrackedRender::untracked(prompt.to_string())
    };
    if tracked.prompt != prompt {
        return None;
    }
    let mask = TrainingMask::of(&tracked, tokenized).ok()?;
    Some(ShownMask {
        trained: trained_ranges(tokenized, &mask.tokens),
        trained_tokens: mask.trained(),
        has_generation_tag: mask.has_generation_tag,
        assistant_turns: has_assistant_turn(&conversation.messages),
    })
}

/// The bytes of the tokens whose flag is 1, adjacent ones merged.
#[cfg(feature = "tokens")]
fn trained_ranges(tokenized: &crate::tokens::Tokenized, flags: &[u8]) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (token, _) in (tokenized.tokens.iter().zip(flags)).filter(|(_, &flag)| flag == 1) {
        match ranges.last_mut() {
            Some(last) if last.end >= token.start => last.end = last.end.max(token.end),
            _ => ranges.push(token.start..token.end),
        }
    }
    ranges
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    use super::*;
    use crate::tokens::{Token, Tokenized};

    #[test]
    fn trained_tokens_merge_into_ranges() {
        let token = |start, end| Token {
            id: 1,
            start,
            end,
            special: false,
        };
        let tokenized = Tokenized {
            tokens: vec![token(0, 2), token(2, 5), token(5, 6), token(6, 9)],
        };
        assert_eq!(trained_ranges(&tokenized, &[1, 1, 0, 1]), vec![0..5, 6..9]);
    }
}
