//! Shared helpers for the token tests: a tiny tokenizer the tests build themselves (always
//! available), and the real tokenizers that `scripts/fetch_tokenizers.sh` caches.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{AddedToken, Tokenizer};

/// Special tokens of the tiny tokenizer, in its `tokenizer.json`.
pub const IM_START: &str = "<|im_start|>";
/// Ends a turn.
pub const IM_END: &str = "<|im_end|>";
/// A special token that strips whitespace on its left (`lstrip`).
pub const EOT: &str = "<|eot|>";

/// The chat template the tiny tokenizer's fixtures use (ChatML).
pub const CHATML: &str =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";

/// Writes a tiny byte-level BPE tokenizer into `dir`: one token per byte, merges for
/// "Hi" and " w", and the special tokens above. With `config` not null, writes it as
/// `tokenizer_config.json` too. Returns `dir/tokenizer.json`.
pub fn write_tiny_tokenizer(dir: &Path, config: &Json) -> PathBuf {
    let mut alphabet: Vec<String> = ByteLevel::alphabet()
        .into_iter()
        .map(String::from)
        .collect();
    alphabet.sort();
    let mut vocab: Vocab = alphabet
        .iter()
        .enumerate()
        .map(|(id, piece)| (piece.clone(), id as u32))
        .collect();
    let merges = vec![
        ("H".to_string(), "i".to_string()),
        ("Ġ".to_string(), "w".to_string()),
    ];
    for (left, right) in &merges {
        let id = vocab.len() as u32;
        vocab.insert(format!("{left}{right}"), id);
    }
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .expect("tiny BPE builds");
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer.with_pre_tokenizer(Some(ByteLevel::default().add_prefix_space(false)));
    tokenizer.with_decoder(Some(ByteLevel::default()));
    tokenizer
        .add_special_tokens([
            AddedToken::from(IM_START, true),
            AddedToken::from(IM_END, true),
            AddedToken::from(EOT, true).lstrip(true),
        ])
        .expect("special tokens added");
    std::fs::create_dir_all(dir).expect("tokenizer dir");
    let path = dir.join("tokenizer.json");
    tokenizer.save(&path, true).expect("tiny tokenizer saved");
    if !config.is_null() {
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).expect("config");
    }
    path
}

/// The five real tokenizers `scripts/fetch_tokenizers.sh` fetches.
pub const REAL: [&str; 5] = ["qwen3", "llama3_1", "gemma3", "deepseek_v3", "gptoss"];

/// A real tokenizer's folder in the cache ($CHATPLATE_TOKENIZERS, else target/tokenizers),
/// or `None` after printing that `test` is skipped.
pub fn real_tokenizer(name: &str, test: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("CHATPLATE_TOKENIZERS").map_or_else(
        || crate::common::repo().join("target/tokenizers"),
        PathBuf::from,
    );
    let folder = cache.join(name);
    if folder.join("tokenizer.json").is_file() {
        return Some(folder);
    }
    crate::common::skip_unless_ci(
        test,
        &format!(
            "no {name} tokenizer at {} (run scripts/fetch_tokenizers.sh)",
            folder.display()
        ),
    );
    None
}
