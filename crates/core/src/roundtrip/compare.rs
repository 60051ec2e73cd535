//! The token comparison: the prompt's tokens followed by the sampled ones, against the
//! tokens of the re-rendered conversation, up to the first that differs.
//!
//! Only the tail of the prompt is tokenized again: both texts are cut at the last place
//! before the output where the tokenizer cuts anyway (just before an added token such as
//! `<|im_start|>`) and where they still agree, since the tokens before such a cut do not
//! depend on what follows it. A long conversation costs one turn's tokenizing, not the
//! whole prompt's.

use super::cause::{self, Cause, Texts};
use super::Sample;
use crate::tokens::{ModelTokenizer, Tokenized, TokenizerError};

/// One token: its id and its vocabulary string (`convert_ids_to_tokens`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownToken {
    /// The token id.
    pub id: u32,
    /// The vocabulary string, e.g. `ĠFalse` (empty for an id without one).
    pub token: String,
}

/// Where the first differing token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// Token `n` (0-based) of the sampled output.
    Output(usize),
    /// One of the prompt's last tokens (`from_end` 1 is its last): the re-render
    /// tokenizes the end of the prompt differently (a boundary merge).
    Prompt {
        /// How many tokens before the output's first.
        from_end: usize,
    },
}

/// The first token where the re-rendered conversation departs from the sampled one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenDifference {
    /// Where it is.
    pub position: Position,
    /// The sampled token there (a prompt token for [`Position::Prompt`]).
    pub sampled: ShownToken,
    /// The re-rendered token there; `None` when the re-render ends before it.
    pub rendered: Option<ShownToken>,
    /// Why, when a known failure explains it.
    pub cause: Option<Cause>,
    /// The sampled text from the differing token on (a few dozen characters).
    pub sampled_text: String,
    /// The re-rendered text from its differing token on.
    pub rendered_text: String,
}

/// How much text around the difference is kept for the report.
const EXCERPT_CHARS: usize = 40;

/// The first difference between the prompt's tokens followed by `sample`'s and the
/// tokens of `rendered`; `None` when `rendered`'s tokens start with them all.
pub(super) fn first_difference(
    tokenizer: &ModelTokenizer,
    prompt: &str,
    sample: &Sample,
    rendered: &str,
) -> Result<Option<TokenDifference>, TokenizerError> {
    let cut = shared_cut(tokenizer, prompt, rendered);
    let (tail, rendered) = (&prompt[cut..], &rendered[cut..]);
    let prompt_tokens = tokenizer.tokenize(tail)?;
    let rendered_tokens = tokenizer.tokenize(rendered)?;
    let expected: Vec<u32> = prompt_tokens
        .ids()
        .into_iter()
        .chain(sample.ids.iter().copied())
        .collect();
    let Some(index) = expected
        .iter()
        .zip(rendered_tokens.ids())
        .position(|(a, b)| *a != b)
        .or((rendered_tokens.len() < expected.len()).then_some(rendered_tokens.len()))
    else {
        return Ok(None);
    };
    let sampled_text = format!("{tail}{}", sample.text);
    let sampled_start = match index.checked_sub(prompt_tokens.len()) {
        None => prompt_tokens.tokens[index].start,
        Some(n) => tail.len() + sample.offset_of(tokenizer, n)?,
    };
    let rendered_span = rendered_tokens.tokens.get(index).map(|t| (t.start, t.end));
    let texts = Texts {
        sampled: &sampled_text,
        rendered,
        output_start: tail.len(),
    };
    let shown = |id: u32| ShownToken {
        id,
        token: tokenizer.token_string(id).unwrap_or_default(),
    };
    Ok(Some(TokenDifference {
        position: match index.checked_sub(prompt_tokens.len()) {
            Some(n) => Position::Output(n),
            None => Position::Prompt {
                from_end: prompt_tokens.len() - index,
            },
        },
        sampled: shown(expected[index]),
        rendered: rendered_tokens.tokens.get(index).map(|t| shown(t.id)),
        cause: cause::cause(&texts, rendered_span),
        sampled_text: excerpt(&sampled_text, sampled_start),
        rendered_text: excerpt(rendered, rendered_span.map_or(rendered.len(), |s| s.0)),
    }))
}

/// The last offset before the output where both texts may be cut and still agree.
fn shared_cut(tokenizer: &ModelTokenizer, prompt: &str, rendered: &str) -> usize {
    let agree = cause::common_prefix(prompt, rendered);
    let theirs = tokenizer.cut_points(rendered);
    (tokenizer.cut_points(prompt).into_iter().rev())
        .find(|at| *at < agree && theirs.binary_search(at).is_ok())
        .unwrap_or(0)
}

/// Up to [`EXCERPT_CHARS`] characters of `text` from byte `start` (clamped to a
/// character boundary).
fn excerpt(text: &str, start: usize) -> String {
    let mut start = start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    text[start..].chars().take(EXCERPT_CHARS).collect()
}

/// The byte offsets of a tokenized text's tokens, for a [`Sample`] made from text.
pub(super) fn starts(tokenized: &Tokenized) -> Vec<usize> {
    tokenized.tokens.iter().map(|t| t.start).collect()
}
