//! The prompt as the model's tokenizer sees it: token ids, byte offsets and which tokens
//! are special, from the model's own `tokenizer.json` (Hugging Face's `tokenizers` crate,
//! pure-Rust build) with the `tokenizer_config.json` beside it.
//!
//! Token ids equal transformers 5.23's `tokenizer(prompt, add_special_tokens=False)` for
//! the same files (`scripts/verify_tokens.py` proves it on the conformance prompts).
//!
//! * [`TokenizerFiles`] finds the files from a folder or file; [`shared`] loads them once
//!   per process and hands out an `Arc` (cheap to send to a worker thread).
//! * [`ModelTokenizer::tokenize`] gives a [`Tokenized`] prompt; [`count_in_ranges`] counts
//!   tokens per message from byte ranges.
//! * [`mask`] computes the assistant mask from the `{% generation %}` spans.
//! * [`injection`] finds user, tool and document text that becomes a special token.
//! * [`expect`] checks a fixture's `expected_tokens`.
//!
//! Locating files and reading configs always compiles; everything that tokenizes needs the
//! `tokens` cargo feature (on by default).

mod config;
pub mod expect;
mod files;

#[cfg(feature = "tokens")]
mod cache;
#[cfg(feature = "tokens")]
pub mod injection;
#[cfg(feature = "tokens")]
mod load;
#[cfg(feature = "tokens")]
pub mod mask;
#[cfg(feature = "tokens")]
mod parse;
#[cfg(feature = "tokens")]
mod pieces;
#[cfg(feature = "tokens")]
mod ranges;
#[cfg(feature = "tokens")]
mod tokenized;

use std::path::PathBuf;

use crate::catalog::OutsideError;
use crate::files::FileError;

pub use config::{AddedTokenSpec, TokenizerConfig};
pub use files::{TokenizerFiles, CONFIG_FILE, TOKENIZER_FILE};

#[cfg(feature = "tokens")]
pub use cache::shared;
#[cfg(feature = "tokens")]
pub use load::{ModelTokenizer, DEFAULT_MAX_MEMORY};
#[cfg(feature = "tokens")]
pub use mask::{assistant_mask, MaskError};
#[cfg(feature = "tokens")]
pub use ranges::{count_in_ranges, RangeCount};
#[cfg(feature = "tokens")]
pub use tokenized::{Token, Tokenized};

/// Why a tokenizer could not be found, loaded or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenizerError {
    /// No `tokenizer.json` at or beside this path.
    #[error("{path}: no tokenizer.json there")]
    NotFound {
        /// What was looked at.
        path: PathBuf,
    },
    /// A file could not be read, or is not one chatplate reads: a FIFO or device, larger
    /// than its cap ([`crate::files::MAX_TOKENIZER_BYTES`] for `tokenizer.json`).
    #[error(transparent)]
    File(#[from] FileError),
    /// A session's `tokenizer` path (or a file found from it) leads outside the folders
    /// the session may read from, the same rule as for its template path.
    #[error(transparent)]
    Outside(#[from] OutsideError),
    /// The `tokenizers` library rejected a `tokenizer.json`, or its config is malformed.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The session names no tokenizer and its template's folder has none. The message
    /// says what every reader of a session accepts, in 80 columns (the app's status line);
    /// `chatplate tokens` adds its `--tokenizer`.
    #[error("no tokenizer: tokenizer.json beside the template, or \"tokenizer\" in the session")]
    Unspecified,
    /// This build has no tokenizer support (cargo feature `tokens`).
    #[error("this chatplate was built without tokenizer support (cargo feature \"tokens\")")]
    Unsupported,
    /// The tokenizer failed on the text.
    #[error("tokenizing failed: {0}")]
    Encode(String),
    /// A stretch of text with no special token to cut at is too long to tokenize within
    /// the memory bound (the library holds about a hundred bytes per byte of text).
    #[error("tokenizing {bytes} bytes of text with no special token to cut them at would take about {} MiB, more than the {} MiB memory bound; raise it with {}", .needed >> 20, .max_memory >> 20, chatplate_render::remedy::means(chatplate_render::remedy::Knob::MaxMemory))]
    TooLarge {
        /// The stretch's length.
        bytes: usize,
        /// About how much memory tokenizing it takes.
        needed: usize,
        /// The bound.
        max_memory: usize,
    },
}
