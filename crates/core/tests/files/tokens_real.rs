//! The five real tokenizers (`scripts/fetch_tokenizers.sh`; each test says SKIPPED when
//! they are absent): each loads and tokenizes to the ids transformers 5.23 gives
//! (`AutoTokenizer.from_pretrained(folder)(text, add_special_tokens=False)`, recorded
//! below). Loading them also guards against serde_json feature unification (e.g.
//! `arbitrary_precision`) breaking the `tokenizers` crate's own deserialization.
//! `scripts/verify_tokens.py` is the full differential over the corpus.

#![cfg(feature = "tokens")]

use crate::common;
use crate::tokens_support;
use std::path::Path;

use chatplate_core::check::render_session;
use chatplate_core::session::Session;
use chatplate_core::tokens::{ModelTokenizer, TokenizerFiles};
use tokens_support::real_tokenizer;

fn load(folder: &Path) -> ModelTokenizer {
    ModelTokenizer::load(&TokenizerFiles::locate(folder).unwrap()).unwrap()
}

/// The probe text with `eos` (the model's end-of-turn token) in the middle.
fn probe(eos: &str) -> String {
    format!("Hello, wörld! 12345 {eos} don't\n\n  日本語 😀")
}

/// (tokenizer, its eos token, transformers' ids for the probe).
const EXPECTED: [(&str, &str, &[u32]); 5] = [
    (
        "qwen3",
        "<|im_end|>",
        &[
            9707, 11, 289, 9416, 507, 0, 220, 16, 17, 18, 19, 20, 220, 151645, 1513, 944, 271, 220,
            75402, 21894, 102819, 90316,
        ],
    ),
    (
        "llama3_1",
        "<|eot_id|>",
        &[
            9906, 11, 289, 9603, 509, 0, 220, 4513, 1774, 220, 128009, 1541, 956, 271, 220, 105180,
            102158, 91416,
        ],
    ),
    (
        "gemma3",
        "<end_of_turn>",
        &[
            9259, 236764, 515, 4010, 671, 236888, 236743, 236770, 236778, 236800, 236812, 236810,
            236743, 106, 1537, 236789, 236745, 108, 138, 94951, 163543,
        ],
    ),
    (
        "deepseek_v3",
        "<｜end▁of▁sentence｜>",
        &[
            19923, 14, 281, 6136, 514, 3, 223, 6895, 1883, 223, 1, 2090, 1664, 271, 262, 88768,
            53769, 225,
        ],
    ),
    (
        "gptoss",
        "<|return|>",
        &[
            13225, 11, 286, 2877, 582, 0, 220, 7633, 2548, 220, 200002, 4128, 279, 220, 17428,
            40909, 88038,
        ],
    ),
];

#[test]
fn each_real_tokenizer_loads_and_matches_transformers() {
    for (name, eos, expected) in EXPECTED {
        let Some(folder) =
            real_tokenizer(name, "each_real_tokenizer_loads_and_matches_transformers")
        else {
            continue;
        };
        let tokenizer = load(&folder);
        let tokenized = tokenizer.tokenize(&probe(eos)).unwrap();
        assert_eq!(tokenized.ids(), expected, "{name}");
        let eos_token = tokenized.tokens.iter().find(|t| t.special).expect("eos");
        assert_eq!(tokenizer.token_string(eos_token.id).as_deref(), Some(eos));
        assert_eq!(
            tokenized.special_count(),
            1,
            "{name}: only the eos is special"
        );
    }
}

#[test]
fn llama_bench_prompt_has_transformers_token_count() {
    let test = "llama_bench_prompt_has_transformers_token_count";
    let (Some(folder), Some(_)) = (real_tokenizer("llama3_1", test), common::corpus_dir(test))
    else {
        return;
    };
    let path = common::repo().join("tests/fixtures/bench/llama-3.1-1000.json");
    let session = Session::load(&path).unwrap();
    let access = chatplate_core::catalog::TemplateAccess::Anywhere;
    let prompt = render_session(
        &session,
        path.parent().unwrap(),
        &access,
        chatplate_render::Limits::default(),
    )
    .unwrap();
    let tokenized = load(&folder).tokenize(&prompt).unwrap();
    // transformers 5.23: len(tokenizer(prompt, add_special_tokens=False)["input_ids"]).
    assert_eq!(tokenized.len(), 19_471);
    assert_eq!(tokenized.tokens.last().map(|t| t.end), Some(prompt.len()));
}

/// Markup of every model family, each in the contexts where a cut before it could go
/// wrong: after a word, after spaces, before a word, doubled, at a line's start. In a
/// tokenizer that does not have one, it is ordinary text.
const MARKUP: [&str; 12] = [
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<|return|>",
    "<|start|>",
    "<|end|>",
    "<tool_call>",
];

/// A prompt of about `bytes`, made of numbered turns mixing markup, words, digits and
/// scripts, so that the tokenizer cuts it many times.
fn long_prompt(bytes: usize) -> String {
    let mut text = String::new();
    let mut turn = 0usize;
    while text.len() < bytes {
        let mark = MARKUP[turn % MARKUP.len()];
        let next = MARKUP[(turn * 7 + 3) % MARKUP.len()];
        text.push_str(&format!(
            "{mark}user\nTurn {turn}: wörld{next}word  {mark}  don't 日本語 😀 {turn}{turn}\n\n{next}{mark}\
             x{mark}\n  \t{next} Paris, 12.5°C{mark}",
        ));
        turn += 1;
    }
    text
}

#[test]
fn a_long_prompt_tokenized_in_pieces_gives_transformers_ids() {
    let test = "a_long_prompt_tokenized_in_pieces_gives_transformers_ids";
    let python = std::env::var("CHATPLATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = std::process::Command::new(&python)
        .args(["-c", "import transformers"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::skip_unless_ci(test, &format!("{python} has no transformers"));
        return;
    }
    // Longer than a piece (1 MiB), so that it is cut at its special tokens.
    let prompt = long_prompt(3 << 19);
    let dir = tempfile::tempdir().unwrap();
    let text_file = dir.path().join("prompt.txt");
    std::fs::write(&text_file, &prompt).unwrap();
    let script = "import json, sys; from transformers import AutoTokenizer; \
                  t = AutoTokenizer.from_pretrained(sys.argv[1]); \
                  print(json.dumps(t(open(sys.argv[2], encoding='utf-8').read(), add_special_tokens=False)['input_ids']))";
    for name in tokens_support::REAL {
        let Some(folder) = real_tokenizer(name, test) else {
            continue;
        };
        let ours = load(&folder).tokenize(&prompt).unwrap();
        let output = std::process::Command::new(&python)
            .args([
                "-c",
                script,
                folder.to_str().unwrap(),
                text_file.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let theirs: Vec<u32> = serde_json::from_slice(&output.stdout).unwrap();
        let at = ours
            .ids()
            .iter()
            .zip(&theirs)
            .take_while(|(a, b)| a == b)
            .count();
        assert!(
            ours.ids() == theirs,
            "{name}: {} ids against transformers' {}, first difference at token {at}",
            ours.len(),
            theirs.len()
        );
        assert_eq!(
            ours.tokens.last().map(|t| t.end),
            Some(prompt.len()),
            "{name}"
        );
    }
}

#[test]
fn a_long_stretch_without_special_tokens_is_refused_past_the_memory_bound() {
    let test = "a_long_stretch_without_special_tokens_is_refused_past_the_memory_bound";
    let Some(folder) = real_tokenizer("qwen3", test) else {
        return;
    };
    let tokenizer = load(&folder);
    let text = "word ".repeat(1 << 19);
    let error = tokenizer.tokenize_within(&text, 64 << 20).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("with no special token to cut them at would take about 320 MiB, more than the 64 MiB memory bound; raise it with"),
        "{error}"
    );
    // Raised, the bound lets it through, whole.
    let tokenized = tokenizer.tokenize_within(&text, 512 << 20).unwrap();
    assert_eq!(tokenized.tokens.last().map(|t| t.end), Some(text.len()));
}
