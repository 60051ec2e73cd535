//! Loading a tokenizer the way transformers 5.23 does for a model folder: `tokenizer.json`
//! as the `tokenizers` library reads it, then the config's added and special tokens and
//! `split_special_tokens`, with truncation and padding off (a plain
//! `tokenizer(prompt, add_special_tokens=False)` call neither truncates nor pads).

use std::collections::HashMap;
use std::sync::OnceLock;

use tokenizers::{AddedToken, Tokenizer};

use super::config::{AddedTokenSpec, TokenizerConfig};
use super::files::TokenizerFiles;
use super::pieces::{Cuts, MEMORY_PER_BYTE, PIECE_BYTES};
use super::tokenized::{Token, Tokenized};
use super::TokenizerError;
use crate::files::{read_bytes, read_text, MAX_CONFIG_BYTES, MAX_TOKENIZER_BYTES};

/// A loaded tokenizer. Tokenizing takes `&self`, so one instance behind an `Arc` serves
/// every thread.
pub struct ModelTokenizer {
    files: TokenizerFiles,
    /// As configured (`split_special_tokens` from the config).
    inner: Tokenizer,
    /// The same tokenizer with `split_special_tokens` the other way, made on first use (for
    /// "what would that setting change").
    flipped: OnceLock<Tokenizer>,
    /// Every added token's id, with whether it is special.
    added: HashMap<u32, bool>,
    /// Where a long text may be cut and tokenized in pieces.
    cuts: Cuts,
}

/// The memory bound of [`ModelTokenizer::tokenize`]: the render's default.
pub const DEFAULT_MAX_MEMORY: usize = 256 << 20;

impl std::fmt::Debug for ModelTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTokenizer")
            .field("files", &self.files)
            .field("split_special_tokens", &self.split_special_tokens())
            .finish_non_exhaustive()
    }
}

impl ModelTokenizer {
    /// Reads `tokenizer.json` and applies the config beside it, if any.
    pub fn load(files: &TokenizerFiles) -> Result<Self, TokenizerError> {
        let invalid = |path: &std::path::Path, message: String| TokenizerError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        // Read here, not by `Tokenizer::from_file`: regular files only, never blocking on
        // a FIFO, and capped (a fixture's tokenizer may be `/dev/zero`).
        let bytes = read_bytes(&files.tokenizer, MAX_TOKENIZER_BYTES)?;
        let mut inner = super::parse::tokenizer(&bytes, &files.tokenizer)?;
        drop(bytes);
        inner
            .with_truncation(None)
            .map_err(|err| invalid(&files.tokenizer, err.to_string()))?;
        inner.with_padding(None);
        if let Some(path) = &files.config {
            let text = read_text(path, MAX_CONFIG_BYTES)?;
            let config = TokenizerConfig::parse(&text).map_err(|message| invalid(path, message))?;
            apply_config(&mut inner, &config).map_err(|err| invalid(path, err.to_string()))?;
        }
        let added = inner
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, token)| (id, token.special))
            .collect();
        let cuts = Cuts::new(&inner);
        Ok(ModelTokenizer {
            files: files.clone(),
            inner,
            flipped: OnceLock::new(),
            added,
            cuts,
        })
    }

    /// The files this tokenizer came from.
    pub fn files(&self) -> &TokenizerFiles {
        &self.files
    }

    /// transformers' `split_special_tokens` as configured: true means special tokens'
    /// text in the input is tokenized as ordinary text.
    pub fn split_special_tokens(&self) -> bool {
        self.inner.get_encode_special_tokens()
    }

    /// Tokens of `text` exactly as `tokenizer(text, add_special_tokens=False)`, within
    /// [`DEFAULT_MAX_MEMORY`].
    pub fn tokenize(&self, text: &str) -> Result<Tokenized, TokenizerError> {
        self.tokenize_within(text, DEFAULT_MAX_MEMORY)
    }

    /// [`ModelTokenizer::tokenize`] holding at most about `max_memory` bytes while it
    /// works: a long text is tokenized in pieces cut where the tokenizer cuts it anyway
    /// (before its special tokens), with the same result; a stretch too long for the bound
    /// with nowhere to cut is refused ([`TokenizerError::TooLarge`]).
    pub fn tokenize_within(
        &self,
        text: &str,
        max_memory: usize,
    ) -> Result<Tokenized, TokenizerError> {
        self.encode_with(&self.inner, text, max_memory)
    }

    /// Tokens of `text` with `split_special_tokens` set to `split`, whatever the config
    /// says, within [`DEFAULT_MAX_MEMORY`].
    pub fn tokenize_split(&self, text: &str, split: bool) -> Result<Tokenized, TokenizerError> {
        self.tokenize_split_within(text, split, DEFAULT_MAX_MEMORY)
    }

    /// [`ModelTokenizer::tokenize_split`] within `max_memory` (see
    /// [`ModelTokenizer::tokenize_within`]).
    pub fn tokenize_split_within(
        &self,
        text: &str,
        split: bool,
        max_memory: usize,
    ) -> Result<Tokenized, TokenizerError> {
        if split == self.split_special_tokens() {
            return self.tokenize_within(text, max_memory);
        }
        let flipped = self.flipped.get_or_init(|| {
            let mut copy = self.inner.clone();
            copy.set_encode_special_tokens(split);
            copy
        });
        self.encode_with(flipped, text, max_memory)
    }

    /// The vocabulary string of a token id (`convert_ids_to_tokens`), e.g. `Ġhello`.
    pub fn token_string(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The text of `ids`, as `decode(ids, skip_special_tokens=False,
    /// clean_up_tokenization_spaces=False)` gives it: what sampled tokens stand for. An id
    /// outside the vocabulary is an error, not skipped.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        if let Some(unknown) = ids.iter().find(|&&id| self.inner.id_to_token(id).is_none()) {
            return Err(TokenizerError::Encode(format!(
                "token id {unknown} is not in the vocabulary"
            )));
        }
        self.inner
            .decode(ids, false)
            .map_err(|err| TokenizerError::Encode(err.to_string()))
    }

    /// Every byte offset of `text` where its tokenization may be cut without changing
    /// its tokens (just before an added token the library always isolates): the tokens
    /// before such an offset do not depend on what follows it.
    pub(crate) fn cut_points(&self, text: &str) -> Vec<usize> {
        self.cuts.cuts(text, 0, self.split_special_tokens())
    }

    /// Where `text` may be cut at or before byte `limit` so that its tokens before the
    /// cut are those of any text sharing `text[..limit]` (0 when nowhere): the start of
    /// the last isolated added token inside it (see `pieces`). The turn cost tokenizes
    /// only what follows it.
    pub fn cut_within(&self, text: &str, limit: usize) -> usize {
        (self.cuts).last_cut_within(text, limit, self.split_special_tokens())
    }

    /// `Some(special)` when `id` is an added token (special or not), `None` otherwise.
    pub(crate) fn added_token(&self, id: u32) -> Option<bool> {
        self.added.get(&id).copied()
    }

    /// Whether `id` is a special token, as the tokenizer's files declare it.
    pub(crate) fn is_special(&self, id: u32) -> bool {
        self.added_token(id) == Some(true)
    }

    fn encode_with(
        &self,
        tokenizer: &Tokenizer,
        text: &str,
        max_memory: usize,
    ) -> Result<Tokenized, TokenizerError> {
        let split = tokenizer.get_encode_special_tokens();
        let cuts = self.cuts.cuts(text, PIECE_BYTES, split);
        let mut tokens = Vec::new();
        let mut start = 0;
        for end in cuts.into_iter().chain([text.len()]) {
            let piece = &text[start..end];
            let needed = piece.len().saturating_mul(MEMORY_PER_BYTE);
            if needed > max_memory {
                return Err(TokenizerError::TooLarge {
                    bytes: piece.len(),
                    needed,
                    max_memory,
                });
            }
            let encoding = tokenizer
                .encode(piece, false)
                .map_err(|err| TokenizerError::Encode(err.to_string()))?;
            tokens.extend(encoding.get_ids().iter().zip(encoding.get_offsets()).map(
                |(&id, &(from, to))| Token {
                    id,
                    start: start + from,
                    end: start + to,
                    special: self.is_special(id),
                },
            ));
            start = end;
        }
        Ok(Tokenized { tokens })
    }
}

/// Adds the config's tokens the way `TokenizersBackend.__init__` does: every
/// `added_tokens_decoder` entry (an identical existing token is left alone, a changed one
/// takes the new flags), then each special token that is not an added token yet.
fn apply_config(tokenizer: &mut Tokenizer, config: &TokenizerConfig) -> tokenizers::Result<()> {
    tokenizer.add_tokens(config.added_tokens.iter().map(added_token))?;
    let present = tokenizer.get_added_vocabulary().get_vocab().clone();
    let mut missing: Vec<&AddedTokenSpec> = Vec::new();
    for token in &config.special_tokens {
        let known = present.contains_key(&token.content)
            || missing.iter().any(|m| m.content == token.content);
        if !known {
            missing.push(token);
        }
    }
    tokenizer.add_tokens(missing.into_iter().map(added_token))?;
    tokenizer.set_encode_special_tokens(config.split_special_tokens);
    Ok(())
}

fn added_token(spec: &AddedTokenSpec) -> AddedToken {
    AddedToken::from(spec.content.clone(), spec.special)
        .single_word(spec.single_word)
        .lstrip(spec.lstrip)
        .rstrip(spec.rstrip)
        .normalized(spec.normalized)
}
