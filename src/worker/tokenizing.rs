//! Tokenizing jobs on the worker: the shown prompt through the session's tokenizer, so
//! the app's token mode never tokenizes (or reads tokenizer files) on its own thread.
//! Tokenizers are loaded once per process ([`crate::tokens::shared`]).

use std::path::PathBuf;
use std::sync::Arc;

use crate::render::{CancelToken, RenderError, RenderErrorKind};

use super::Output;

/// Which tokenizer to use: the session's `tokenizer` field (already joined with the
/// session's folder), else the `tokenizer.json` beside the template file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenizerChoice {
    /// An explicit tokenizer path (a folder or file).
    pub explicit: Option<PathBuf>,
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
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let tokenized = run(choice, prompt)?;
    if token.is_cancelled() {
        return Err(RenderError {
            exception: None,
            kind: RenderErrorKind::Cancelled,
            message: "cancelled: a newer request replaced it".into(),
            position: None,
        });
    }
    Ok(Output::Tokens(Arc::new(tokenized)))
}

#[cfg(feature = "tokens")]
fn run(choice: &TokenizerChoice, prompt: &str) -> Result<TokenizedPrompt, RenderError> {
    use crate::tokens::{shared, TokenizerError, TokenizerFiles};
    let files = match (&choice.explicit, &choice.template_file) {
        (Some(path), _) => TokenizerFiles::locate(path),
        (None, Some(file)) => TokenizerFiles::beside(file).ok_or(TokenizerError::Unspecified),
        (None, None) => Err(TokenizerError::Unspecified),
    };
    let tokenizer = files.and_then(|f| shared(&f)).map_err(input)?;
    let tokenized = tokenizer.tokenize(prompt).map_err(input)?;
    Ok(TokenizedPrompt {
        tokenized,
        tokenizer,
        prompt_len: prompt.len(),
    })
}

#[cfg(not(feature = "tokens"))]
fn run(_choice: &TokenizerChoice, _prompt: &str) -> Result<TokenizedPrompt, RenderError> {
    Err(input(crate::tokens::TokenizerError::Unsupported))
}

fn input(error: crate::tokens::TokenizerError) -> RenderError {
    RenderError::input(error.to_string())
}
