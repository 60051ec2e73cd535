//! The assistant mask: which tokens (and characters) of a prompt fine-tuning with
//! assistant-only loss trains on, computed as transformers 5.23 computes
//! `apply_chat_template(..., return_assistant_tokens_mask=True)["assistant_masks"]`
//! from the `{% generation %}` spans the renderer records
//! ([`chatplate_render::GenerationSpan`]).
//!
//! transformers maps each span through `char_to_token` (the first token whose character
//! offsets hold the character) and keeps its quirks, which training code inherits:
//!
//! * the span's last token is the one holding its last character, so a token straddling
//!   either edge is trained on whole;
//! * when the end's token is missing *or is token 0* (`if end_token` is false for 0),
//!   everything from the start's token to the end of the prompt is masked: a span that
//!   ends inside the first token trains on the whole rest of the conversation;
//! * when the start's token is missing (an empty span at the prompt's end, a span that
//!   was rendered into a discarded `{% set %}` block past the end), that span and every
//!   span after it are skipped;
//! * an empty span at character 0 asks for character -1, and Python raises
//!   `OverflowError`.

use chatplate_render::GenerationSpan;

use super::tokenized::Tokenized;

/// transformers' error for an empty `{% generation %}` block at the prompt's start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OverflowError: can't convert negative int to unsigned (an empty {{% generation %}} block at the start of the prompt; transformers fails the same way)")]
pub struct MaskError;

/// The assistant mask of a tokenized prompt: one `0`/`1` per token, equal to
/// transformers' `assistant_masks` for the same spans and tokens.
pub fn assistant_mask(
    prompt: &str,
    tokenized: &Tokenized,
    spans: &[GenerationSpan],
) -> Result<Vec<u8>, MaskError> {
    let chars = CharIndex::new(prompt);
    let mut mask = vec![0u8; tokenized.len()];
    for span in spans {
        let last_char = span.end.checked_sub(1).ok_or(MaskError)?;
        let Some(first) = char_to_token(tokenized, &chars, span.start) else {
            // transformers: "start_token is out of bounds maybe due to truncation".
            break;
        };
        let end = match char_to_token(tokenized, &chars, last_char) {
            Some(token) if token > 0 => token + 1,
            _ => mask.len(),
        };
        for flag in mask.iter_mut().take(end).skip(first) {
            *flag = 1;
        }
    }
    Ok(mask)
}

/// `Encoding.char_to_token`: the first token whose offsets hold character `at`.
fn char_to_token(tokenized: &Tokenized, chars: &CharIndex, at: usize) -> Option<usize> {
    let byte = chars.byte_of(at)?;
    if byte >= chars.len {
        return None;
    }
    tokenized.token_at(byte)
}

/// Byte offsets of a text's characters, for character positions from Python.
pub(crate) struct CharIndex {
    /// Byte offset of each character, then the text's length.
    starts: Vec<usize>,
    len: usize,
}

impl CharIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
        starts.push(text.len());
        CharIndex {
            starts,
            len: text.len(),
        }
    }

    /// The byte offset of character `at` (the text's length for one past the end);
    /// `None` beyond that.
    pub(crate) fn byte_of(&self, at: usize) -> Option<usize> {
        self.starts.get(at).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Token;

    /// "HiHello there" as Qwen3 splits it: "Hi", "Hello", " there".
    fn tokens() -> Tokenized {
        let token = |id, start, end| Token {
            id,
            start,
            end,
            special: false,
        };
        Tokenized {
            tokens: vec![token(13048, 0, 2), token(9707, 2, 7), token(1052, 7, 13)],
        }
    }

    fn span(start: usize, end: usize) -> GenerationSpan {
        GenerationSpan { start, end }
    }

    #[test]
    fn an_empty_span_after_token_0_masks_to_the_end_and_one_past_the_end_stops() {
        // transformers 5.23 on Qwen3: [[(2, 2), (13, 13)]] gives [0, 1, 1].
        let mask = assistant_mask("HiHello there", &tokens(), &[span(2, 2), span(13, 13)]);
        assert_eq!(mask, Ok(vec![0, 1, 1]));
    }

    #[test]
    fn a_span_ending_in_token_0_masks_everything_after_it() {
        let mask = assistant_mask("HiHello there", &tokens(), &[span(0, 1)]);
        assert_eq!(mask, Ok(vec![1, 1, 1]));
    }

    #[test]
    fn straddling_tokens_are_masked_whole_and_an_empty_span_at_0_fails() {
        let mask = assistant_mask("HiHello there", &tokens(), &[span(3, 8)]);
        assert_eq!(mask, Ok(vec![0, 1, 1]));
        assert_eq!(
            assistant_mask("HiHello there", &tokens(), &[span(0, 0)]),
            Err(MaskError)
        );
    }
}
