//! Prompt injection through the tokenizer: user, tool or document text that becomes a
//! special token (a `<|im_end|>` typed by a user ends the turn for the model), and what
//! transformers' `split_special_tokens` setting would change about it.
//!
//! Two ways in:
//! * [`find_in_texts`]: each untrusted text tokenized on its own. Needs no knowledge of
//!   where the text sits in the prompt ([`untrusted_texts`] collects them from a
//!   conversation); offsets are within each text.
//! * [`find_in_spans`]: the prompt's own tokens, given the byte span each untrusted text
//!   occupies in the prompt (from exact attribution). Offsets are within the prompt, and a
//!   special token formed across the edge of a span is caught too.
//!
//! Non-special added tokens (Qwen's `<tool_call>`, say) are reported as well, with
//! `special: false`: they are not control tokens, but the model reads them as the
//! template's own markup, and `split_special_tokens` does not affect them.

use std::fmt;
use std::ops::Range;

use serde_json::Value as Json;

use super::load::ModelTokenizer;
use super::ranges::overlapping;
use super::tokenized::{Token, Tokenized};
use super::TokenizerError;
use chatplate_render::Conversation;

/// Message roles whose content the template's author does not control.
pub(crate) const UNTRUSTED_ROLES: [&str; 4] = ["user", "tool", "ipython", "function"];

/// Where an untrusted text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextSource {
    /// A message's content (index into the messages, and its role).
    Message {
        /// 0-based index into `messages`.
        index: usize,
        /// The message's role.
        role: String,
    },
    /// A retrieval document (0-based index into `documents`).
    Document {
        /// 0-based index into `documents`.
        index: usize,
    },
}

impl fmt::Display for TextSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextSource::Message { index, role } => write!(f, "messages[{index}] ({role})"),
            TextSource::Document { index } => write!(f, "documents[{index}]"),
        }
    }
}

/// One piece of untrusted text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntrustedText {
    /// Where it comes from.
    pub(crate) source: TextSource,
    /// The text.
    pub(crate) text: String,
}

/// Untrusted text at a known place in the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentSpan {
    /// Where it comes from.
    pub source: TextSource,
    /// Its bytes in the prompt.
    pub range: Range<usize>,
}

/// Untrusted text that the tokenizer turns into an added token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// Where the text comes from.
    pub source: TextSource,
    /// The matched bytes: within the source text ([`find_in_texts`]) or within the prompt
    /// ([`find_in_spans`]). Includes whitespace the token strips (`lstrip`/`rstrip`).
    pub range: Range<usize>,
    /// The token id it becomes.
    pub id: u32,
    /// The token's vocabulary string.
    pub token: String,
    /// A special token (else a non-special added token).
    pub special: bool,
    /// Whether the model gets this token with the configured `split_special_tokens`
    /// (false only for a special token under `split_special_tokens: true`).
    pub active: bool,
    /// The ids of the same text with `split_special_tokens: true`: ordinary text tokens
    /// for a special token; `[id]` for a non-special one, which that setting leaves alone.
    pub split_ids: Vec<u32>,
}

/// The user, tool and document texts of a conversation: string contents, the `text` of
/// content parts, and every string inside a document.
pub fn untrusted_texts(conversation: &Conversation) -> Vec<UntrustedText> {
    let mut texts = Vec::new();
    for (index, message) in conversation.messages.iter().enumerate() {
        let role = message.get("role").and_then(Json::as_str).unwrap_or("");
        if !UNTRUSTED_ROLES.contains(&role) {
            continue;
        }
        let source = TextSource::Message {
            index,
            role: role.to_string(),
        };
        for text in content_texts(message.get("content")) {
            texts.push(UntrustedText {
                source: source.clone(),
                text: text.to_string(),
            });
        }
    }
    for (index, document) in conversation.documents.iter().flatten().enumerate() {
        let mut strings = Vec::new();
        collect_strings(document, &mut strings);
        texts.extend(strings.into_iter().map(|text| UntrustedText {
            source: TextSource::Document { index },
            text: text.to_string(),
        }));
    }
    texts
}

fn content_texts(content: Option<&Json>) -> Vec<&str> {
    match content {
        Some(Json::String(text)) => vec![text],
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.as_str().or_else(|| part.get("text")?.as_str()))
            .collect(),
        _ => Vec::new(),
    }
}

fn collect_strings<'a>(value: &'a Json, out: &mut Vec<&'a str>) {
    match value {
        Json::String(text) => out.push(text),
        Json::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Json::Object(fields) => fields.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// Added tokens in each text tokenized on its own, with special tokens matched (as
/// `split_special_tokens: false`, transformers' default) so that a config with `true` still
/// shows what it guards against ([`Injection::active`] is false there).
pub fn find_in_texts(
    tokenizer: &ModelTokenizer,
    texts: &[UntrustedText],
) -> Result<Vec<Injection>, TokenizerError> {
    let mut found = Vec::new();
    for piece in texts {
        let tokenized = tokenizer.tokenize_split(&piece.text, false)?;
        for token in &tokenized.tokens {
            if let Some(injection) = injection(tokenizer, &piece.source, &piece.text, token)? {
                found.push(injection);
            }
        }
    }
    Ok(found)
}

/// Added tokens among the prompt's tokens that cover a non-blank byte of an untrusted span
/// (a template token that merely swallows the content's trailing whitespace is not one).
/// `tokenized` is `prompt` as the tokenizer is configured.
pub fn find_in_spans(
    tokenizer: &ModelTokenizer,
    prompt: &str,
    tokenized: &Tokenized,
    spans: &[ContentSpan],
) -> Result<Vec<Injection>, TokenizerError> {
    let mut found = Vec::new();
    for span in spans {
        for token in overlapping(&tokenized.tokens, &span.range) {
            let shared = token.start.max(span.range.start)..token.end.min(span.range.end);
            let blank = prompt.get(shared).is_none_or(|text| text.trim().is_empty());
            if blank {
                continue;
            }
            if let Some(injection) = injection(tokenizer, &span.source, prompt, token)? {
                found.push(injection);
            }
        }
    }
    Ok(found)
}

/// An [`Injection`] when `token` (of `text`) is an added token.
fn injection(
    tokenizer: &ModelTokenizer,
    source: &TextSource,
    text: &str,
    token: &Token,
) -> Result<Option<Injection>, TokenizerError> {
    let Some(special) = tokenizer.added_token(token.id) else {
        return Ok(None);
    };
    let matched = text.get(token.start..token.end).unwrap_or_default();
    let split_ids = if special {
        tokenizer.tokenize_split(matched, true)?.ids()
    } else {
        vec![token.id]
    };
    Ok(Some(Injection {
        source: source.clone(),
        range: token.start..token.end,
        id: token.id,
        token: tokenizer.token_string(token.id).unwrap_or_default(),
        special,
        active: !special || !tokenizer.split_special_tokens(),
        split_ids,
    }))
}

/// What flipping `split_special_tokens` does to the whole prompt: the setting applies to
/// the template's own special tokens too, so turning it on to defuse injected text also
/// splits every turn marker the template wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitEffect {
    /// The configured `split_special_tokens`.
    pub configured: bool,
    /// Tokens in the prompt as configured.
    pub tokens: usize,
    /// Special tokens among them.
    pub special: usize,
    /// Tokens with the setting flipped.
    pub flipped_tokens: usize,
    /// Special tokens with the setting flipped.
    pub flipped_special: usize,
}

/// Tokenizes `prompt` with `split_special_tokens` flipped and compares with `tokenized`
/// (the prompt as configured), within `max_memory` (see
/// [`ModelTokenizer::tokenize_within`]).
pub fn split_effect(
    tokenizer: &ModelTokenizer,
    prompt: &str,
    tokenized: &Tokenized,
    max_memory: usize,
) -> Result<SplitEffect, TokenizerError> {
    let configured = tokenizer.split_special_tokens();
    let flipped = tokenizer.tokenize_split_within(prompt, !configured, max_memory)?;
    Ok(SplitEffect {
        configured,
        tokens: tokenized.len(),
        special: tokenized.special_count(),
        flipped_tokens: flipped.len(),
        flipped_special: flipped.special_count(),
    })
}
