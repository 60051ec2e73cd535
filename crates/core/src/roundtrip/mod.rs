//! Token identity: whether the tokens a model sampled come back when the conversation is
//! rendered again with the message parsed from them, as training and agent stacks do
//! when they re-render the history (`chatplate roundtrip`, `assert_token_round_trip`,
//! the app's round-trip badges when a tokenizer is at hand).
//!
//! The sampled output is parsed into a message with the session's `response_template`
//! ([`crate::parse`]), the conversation is rendered with that message after it, and the
//! result is tokenized with the model's tokenizer ([`crate::tokens`]). The prompt's tokens
//! followed by the sampled ones must start that re-rendered conversation's tokens; the
//! first that does not is reported with both token strings and, when a known failure
//! explains it, its [`Cause`].
//!
//! ```no_run
//! use chatplate_core::roundtrip::{check_sample, Identity, Sample, Turn};
//! # fn demo(turn: &Turn) -> Result<(), Box<dyn std::error::Error>> {
//! let sample = Sample::from_text("Hello!<|im_end|>".into(), turn.tokenizer)?;
//! match check_sample(turn, &sample)? {
//!     Identity::Identical { tokens } => println!("identical ({tokens} tokens)"),
//!     Identity::Differs(difference) => println!("{:?}", difference.cause),
//! }
//! # Ok(()) }
//! ```

mod cause;
mod compare;
mod report;

use serde_json::Value;

use crate::parse::{generated_part, parse_response_within, ParseError, ParseLimits};
use crate::tokens::{ModelTokenizer, TokenizerError};
use chatplate_render::{CompiledTemplate, ContinueFinal, Conversation, RenderControl, RenderError};

pub use crate::parse::ResponseTemplate;
pub use cause::Cause;
pub use compare::{Position, ShownToken, TokenDifference};

/// What a model sampled: its tokens and the text they stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The text.
    pub text: String,
    /// The token ids, in order.
    pub ids: Vec<u32>,
    /// Each token's byte offset in `text`, when the ids came from tokenizing it.
    starts: Option<Vec<usize>>,
}

impl Sample {
    /// A raw output, tokenized with the model's tokenizer as the sampled tokens.
    pub fn from_text(text: String, tokenizer: &ModelTokenizer) -> Result<Self, TokenizerError> {
        let tokenized = tokenizer.tokenize(&text)?;
        Ok(Sample {
            starts: Some(compare::starts(&tokenized)),
            ids: tokenized.ids(),
            text,
        })
    }

    /// Sampled token ids, with the text they decode to.
    pub fn from_ids(ids: Vec<u32>, tokenizer: &ModelTokenizer) -> Result<Self, TokenizerError> {
        Ok(Sample {
            text: tokenizer.decode(&ids)?,
            ids,
            starts: None,
        })
    }

    /// The byte offset in `text` where token `n` starts.
    fn offset_of(&self, tokenizer: &ModelTokenizer, n: usize) -> Result<usize, TokenizerError> {
        if let Some(at) = self.starts.as_ref().and_then(|s| s.get(n)) {
            return Ok(*at);
        }
        let before = tokenizer.decode(&self.ids[..n.min(self.ids.len())])?;
        Ok(cause::common_prefix(&before, &self.text))
    }
}

/// The conversation before the output, and what checking it needs.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The chat template.
    pub template: &'a CompiledTemplate,
    /// The conversation the output answers (rendered with the generation prompt).
    pub conversation: &'a Conversation,
    /// The `response_template` that parses the output.
    pub parser: &'a ResponseTemplate,
    /// The model's tokenizer.
    pub tokenizer: &'a ModelTokenizer,
    /// Cancellation and the deadline of each render and parse.
    pub control: &'a RenderControl,
}

/// Whether the sampled tokens survive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The re-rendered conversation has every sampled token, in place.
    Identical {
        /// How many sampled tokens.
        tokens: usize,
    },
    /// The first token that differs.
    Differs(Box<TokenDifference>),
}

/// Why the round trip could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenRoundTripError {
    /// The conversation before the output does not render.
    #[error("rendering the conversation before the output failed: {0}")]
    Prompt(RenderError),
    /// The output does not parse with the `response_template`.
    #[error("the output does not parse: {0}")]
    Parse(ParseError),
    /// The conversation with the parsed message does not render.
    #[error("rendering the conversation with the parsed message failed: {0}")]
    Render(RenderError),
    /// The assistant message's render does not extend the render before it with the
    /// generation prompt, so there is no generated text to cut out.
    #[error("the render up to this message, with the generation prompt, is not a prefix of the render including it")]
    NotAPrefix,
    /// Tokenizing failed.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
}

/// Parses `sample` as the answer to `turn`'s conversation, renders the conversation with
/// the parsed message, and compares the tokens.
pub fn check_sample(turn: &Turn, sample: &Sample) -> Result<Identity, TokenRoundTripError> {
    let before = with_messages(turn.conversation, turn.conversation.messages.len(), true);
    let prompt = render(turn, &before).map_err(TokenRoundTripError::Prompt)?;
    identity(turn, &before, &prompt, sample, None)
}

/// Each assistant message of `turn`'s conversation, rendered and cut out as the model
/// would have generated it (as [`crate::parse::check_round_trip`] does), taken as the
/// sampled output of the conversation before it: its index and whether its tokens
/// survive.
pub fn check_each(turn: &Turn) -> Vec<(usize, Result<Identity, TokenRoundTripError>)> {
    let conversation = turn.conversation;
    (conversation.messages.iter().enumerate())
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(|(index, _)| (index, check_message(turn, index)))
        .collect()
}

/// [`check_each`] for message `index` alone (an assistant message).
pub fn check_message(turn: &Turn, index: usize) -> Result<Identity, TokenRoundTripError> {
    let before = with_messages(turn.conversation, index, true);
    let prompt = render(turn, &before).map_err(TokenRoundTripError::Prompt)?;
    let with = with_messages(turn.conversation, index + 1, false);
    let full = render(turn, &with).map_err(TokenRoundTripError::Render)?;
    let tail = full
        .strip_prefix(&prompt)
        .ok_or(TokenRoundTripError::NotAPrefix)?;
    let generated = generated_part(tail, turn.conversation);
    let sample = Sample::from_text(generated.to_string(), turn.tokenizer)?;
    let original = &turn.conversation.messages[index];
    identity(turn, &before, &prompt, &sample, Some((original, &full)))
}

/// The comparison once the prompt is rendered (`before` ends with the generation prompt).
/// `known` is a message with its render after `before`: when the parse gives that
/// message, keys in the same order (a template may iterate them), its render is the
/// re-render.
fn identity(
    turn: &Turn,
    before: &Conversation,
    prompt: &str,
    sample: &Sample,
    known: Option<(&Value, &str)>,
) -> Result<Identity, TokenRoundTripError> {
    let tools = before.tools.clone().unwrap_or_default();
    let deadline = (turn.control.deadline).unwrap_or(turn.template.limits().deadline);
    let limits = ParseLimits::new(deadline).with_cancel(turn.control.cancel.clone());
    let parsed = parse_response_within(&sample.text, turn.parser, prompt, &tools, &limits)
        .map_err(TokenRoundTripError::Parse)?;
    let rendered = match known {
        Some((message, render)) if same_json(message, &parsed) => render.to_string(),
        _ => {
            let mut after = before.clone();
            after.messages.push(parsed);
            after.add_generation_prompt = false;
            render(turn, &after).map_err(TokenRoundTripError::Render)?
        }
    };
    Ok(
        match compare::first_difference(turn.tokenizer, prompt, sample, &rendered)? {
            None => Identity::Identical {
                tokens: sample.ids.len(),
            },
            Some(difference) => Identity::Differs(Box::new(difference)),
        },
    )
}

/// Whether two messages are the same, key order included.
fn same_json(a: &Value, b: &Value) -> bool {
    a == b && serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

/// `conversation`'s first `count` messages, with or without the generation prompt.
fn with_messages(conversation: &Conversation, count: usize, prompt: bool) -> Conversation {
    let mut part = conversation.clone();
    part.messages.truncate(count);
    part.add_generation_prompt = prompt;
    part.continue_final_message = ContinueFinal::Off;
    part
}

fn render(turn: &Turn, conversation: &Conversation) -> Result<String, RenderError> {
    turn.template.render_controlled(conversation, turn.control)
}
