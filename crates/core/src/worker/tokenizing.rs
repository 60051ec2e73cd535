//! Tokenizing jobs on the worker: the shown prompt through the session's tokenizer, so
//! the app's token mode never tokenizes (or reads tokenizer files) on its own thread.
//! Tokenizers are loaded once per process ([`crate::tokens::shared`]).
//!
//! The same job looks for injected special tokens: user, tool and document text that the
//! tokenizer turns into an added token ([`crate::tokens::injection`]). A message whose
//! content is found in the prompt is checked on the prompt's own tokens
//! (`find_in_spans`, which also catches a token formed across the content's edge); the
//! rest (content the template rewrites, documents) is tokenized on its own
//! (`find_in_texts`, as `chatplate tokens` does).

use std::path::PathBuf;
use std::sync::Arc;

use chatplate_render::{CancelToken, Conversation, RenderError, RenderErrorKind};

use super::Output;

/// Which tokenizer to use: the session's `tokenizer` field (already joined with the
/// session's folder), else the `tokenizer.json` beside the template file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenizerChoice {
    /// An explicit tokenizer path (a folder or file).
    pub explicit: Option<PathBuf>,
    /// The explicit path as the session wrote it, for messages.
    pub written: Option<String>,
    /// Where a session-named tokenizer may lead (the rule for its template path), or
    /// `None` when the user named the path themselves.
    pub access: Option<crate::catalog::TemplateAccess>,
    /// The template's file, when it lives on disk.
    pub template_file: Option<PathBuf>,
}

/// A tokenized prompt with the tokenizer that made it (for token strings on screen).
#[cfg(feature = "tokens")]
#[derive(Debug)]
pub struct TokenizedPrompt {
    /// The prompt's tokens.
    pub tokenized: crate::tokens::Tokenized,
    /// The tokenizer (shared, cheap to hold).
    pub tokenizer: Arc<crate::tokens::ModelTokenizer>,
    /// Length of the prompt tokenized, in bytes (a sanity check against the shown one).
    pub prompt_len: usize,
    /// Untrusted text that becomes an added token, in conversation order.
    pub injections: Vec<crate::tokens::injection::Injection>,
    /// What `split_special_tokens` flipped would do to the prompt (only computed when
    /// an injected special token was found).
    pub split_effect: Option<crate::tokens::injection::SplitEffect>,
    /// The assistant mask (see [`super::training_mask`]), when the job named the template
    /// and transformers would compute one.
    pub mask: Option<super::training_mask::ShownMask>,
}

#[cfg(feature = "tokens")]
impl TokenizedPrompt {
    /// The injections found in message `index`'s content.
    pub fn injections_in(
        &self,
        index: usize,
    ) -> impl Iterator<Item = &crate::tokens::injection::Injection> {
        use crate::tokens::injection::TextSource;
        (self.injections.iter()).filter(
            move |i| matches!(i.source, TextSource::Message { index: at, .. } if at == index),
        )
    }
}

/// Without the `tokens` feature nothing is ever tokenized.
#[cfg(not(feature = "tokens"))]
#[derive(Debug)]
pub struct TokenizedPrompt;

/// Tokenizes `prompt`; a newer render cancels the job (checked once tokenizing ends:
/// the tokenizer itself cannot be interrupted, and its result is then dropped).
pub(super) fn tokenize(
    choice: &TokenizerChoice,
    prompt: &str,
    template: Option<&super::Template>,
    conversation: &Conversation,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    // The memory bound of the template's renders bounds the tokenizer's work too.
    let max_memory = template.map_or(chatplate_render::Limits::default().max_memory_bytes, |t| {
        t.limits.max_memory_bytes
    });
    #[cfg_attr(not(feature = "tokens"), allow(unused_mut))]
    let mut tokenized = run(choice, prompt, conversation, max_memory)?;
    #[cfg(feature = "tokens")]
    if let Some(template) = template {
        let mask = super::training_mask::compute(
            template,
            prompt,
            &tokenized.tokenized,
            conversation,
            token,
        );
        tokenized.mask = mask;
    }
    #[cfg(not(feature = "tokens"))]
    let _ = template;
    if token.is_cancelled() {
        return Err(RenderError::new(
            RenderErrorKind::Cancelled,
            "cancelled: a newer request replaced it",
        ));
    }
    Ok(Output::Tokens(Arc::new(tokenized)))
}

#[cfg(feature = "tokens")]
fn run(
    choice: &TokenizerChoice,
    prompt: &str,
    conversation: &Conversation,
    max_memory: usize,
) -> Result<TokenizedPrompt, RenderError> {
    use crate::tokens::injection::split_effect;
    let tokenizer = tokenizer(choice).map_err(input)?;
    let tokenized = tokenizer
        .tokenize_within(prompt, max_memory)
        .map_err(input)?;
    let injections = injections(&tokenizer, prompt, &tokenized, conversation).map_err(input)?;
    let split_effect = if injections.iter().any(|i| i.special) {
        Some(split_effect(&tokenizer, prompt, &tokenized, max_memory).map_err(input)?)
    } else {
        None
    };
    Ok(TokenizedPrompt {
        tokenized,
        tokenizer,
        prompt_len: prompt.len(),
        injections,
        split_effect,
        mask: None,
    })
}

/// The tokenizer `choice` names, loaded once per process.
#[cfg(feature = "tokens")]
pub(super) fn tokenizer(
    choice: &TokenizerChoice,
) -> Result<Arc<crate::tokens::ModelTokenizer>, crate::tokens::TokenizerError> {
    use crate::tokens::{shared, TokenizerError, TokenizerFiles};
    let files = match (&choice.explicit, &choice.template_file) {
        (Some(path), _) => match &choice.access {
            Some(access) => {
                let written = choice
                    .written
                    .clone()
                    .unwrap_or_else(|| path.display().to_string());
                TokenizerFiles::locate_within(path, &written, access)
            }
            None => TokenizerFiles::locate(path),
        },
        (None, Some(file)) => TokenizerFiles::beside(file).ok_or(TokenizerError::Unspecified),
        (None, None) => Err(TokenizerError::Unspecified),
    };
    files.and_then(|f| shared(&f))
}

/// Injected added tokens: on the prompt's tokens where the content is found in the
/// prompt (the message's located span holds exactly its trimmed text), else in the text
/// tokenized on its own. The conversation may be newer than the prompt (the app drops
/// such a result by generation); the text check keeps a span from pointing elsewhere.
#[cfg(feature = "tokens")]
fn injections(
    tokenizer: &crate::tokens::ModelTokenizer,
    prompt: &str,
    tokenized: &crate::tokens::Tokenized,
    conversation: &Conversation,
) -> Result<Vec<crate::tokens::injection::Injection>, crate::tokens::TokenizerError> {
    use crate::tokens::injection::{find_in_spans, find_in_texts, untrusted_texts};
    use crate::tokens::injection::{ContentSpan, TextSource};
    let texts = untrusted_texts(conversation);
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let located = super::locate::locate_messages(prompt, &conversation.messages);
    let (mut spans, mut loose) = (Vec::new(), Vec::new());
    for text in texts {
        let range = match &text.source {
            TextSource::Message { index, .. } => located.get(*index).cloned().flatten(),
            TextSource::Document { .. } => None,
        };
        match range.filter(|r| prompt.get(r.clone()) == Some(text.text.trim())) {
            Some(range) => spans.push(ContentSpan {
                source: text.source,
                range,
            }),
            None => loose.push(text),
        }
    }
    let mut found = find_in_spans(tokenizer, prompt, tokenized, &spans)?;
    found.extend(find_in_texts(tokenizer, &loose)?);
    found.sort_by_key(|i| match i.source {
        TextSource::Message { index, .. } => (0, index),
        TextSource::Document { index } => (1, index),
    });
    Ok(found)
}

#[cfg(not(feature = "tokens"))]
fn run(
    _choice: &TokenizerChoice,
    _prompt: &str,
    _conversation: &Conversation,
    _max_memory: usize,
) -> Result<TokenizedPrompt, RenderError> {
    Err(input(crate::tokens::TokenizerError::Unsupported))
}

fn input(error: crate::tokens::TokenizerError) -> RenderError {
    RenderError::input(error.to_string())
}
