//! Fuzzing the files chatplate reads besides fixtures and templates: GGUF
//! headers, `tokenizer.json` with its config, and request bodies, each made by mutating
//! real ones (bytes, and odd values at the places that matter). The property: no panic,
//! no hang, memory bounded; every input ends in a value or a clear error.
//!
//! Bounded like `fuzz.rs` (see there): `CHATPLATE_FUZZ_CASES` inputs per target,
//! `CHATPLATE_FUZZ_SECONDS` each, a fixed seed under CI, `CHATPLATE_FUZZ_LOG` keeps the
//! input being tried.

use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, Instant};

use chatplate_core::check::render_session;
use chatplate_core::gguf;
use chatplate_core::request::{self, ImportOptions};
use chatplate_core::session::Session;
use chatplate_core::TemplateAccess;
use chatplate_render::thread_live_bytes;
use proptest::prelude::*;
#[cfg(feature = "tokens")]
use serde_json::json;
use serde_json::Value as Json;

/// How an input ended: read (0) or refused with an error (1).
const ENDS: [&str; 4] = ["read", "refused", "-", "-"];

use crate::fuzz::{config, last_input, mutation, odd_value, small_limits, Budget};

/// GGUF files written by llama.cpp's own `gguf` package (see `gguf_files.rs`).
const GGUF_SEEDS: &[&[u8]] = &[
    include_bytes!("../../../../tests/fixtures/gguf/chat.gguf"),
    include_bytes!("../../../../tests/fixtures/gguf/named.gguf"),
    include_bytes!("../../../../tests/fixtures/gguf/big-endian.gguf"),
    include_bytes!("../../../../tests/fixtures/gguf/no-template.gguf"),
    include_bytes!("../../../../tests/fixtures/gguf/bad-token-id.gguf"),
];

/// One change to a GGUF file's bytes.
#[derive(Debug, Clone)]
enum ByteEdit {
    /// Replace `len` bytes at a place with these.
    Splice(prop::sample::Index, usize, Vec<u8>),
    /// Write a length or count (huge, zero, off by one) over 8 bytes at a place.
    Number(prop::sample::Index, u64),
    /// Cut the file there.
    Truncate(prop::sample::Index),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    let numbers = prop::sample::select(
        &[
            0,
            1,
            2,
            7,
            8,
            12,
            255,
            1 << 16,
            u32::MAX as u64,
            1 << 40,
            u64::MAX - 7,
            u64::MAX,
        ][..],
    );
    prop_oneof![
        (
            any::<prop::sample::Index>(),
            0usize..8,
            prop::collection::vec(any::<u8>(), 0..16)
        )
            .prop_map(|(at, len, bytes)| ByteEdit::Splice(at, len, bytes)),
        (any::<prop::sample::Index>(), numbers).prop_map(|(at, n)| ByteEdit::Number(at, n)),
        any::<prop::sample::Index>().prop_map(ByteEdit::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: ByteEdit) {
    match edit {
        ByteEdit::Splice(at, len, insert) => {
            let start = at.index(bytes.len() + 1);
            let end = (start + len).min(bytes.len());
            bytes.splice(start..end, insert);
        }
        ByteEdit::Number(at, number) if bytes.len() >= 8 => {
            let start = at.index(bytes.len() - 7);
            bytes[start..start + 8].copy_from_slice(&number.to_le_bytes());
        }
        ByteEdit::Number(..) => {}
        ByteEdit::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
    }
}

/// A tiny tokenizer's `tokenizer.json`, made once (the same one the token tests use).
#[cfg(feature = "tokens")]
fn tokenizer_seed() -> &'static str {
    static SEED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::tokens_support::write_tiny_tokenizer(dir.path(), &Json::Null);
        std::fs::read_to_string(path).unwrap()
    })
}

/// Where odd values go in a `tokenizer.json`.
#[cfg(feature = "tokens")]
const TOKENIZER_POINTERS: &[&str] = &[
    "/model",
    "/model/type",
    "/model/vocab",
    "/model/vocab/H",
    "/model/merges",
    "/model/merges/0",
    "/model/unk_token",
    "/model/dropout",
    "/model/byte_fallback",
    "/added_tokens",
    "/added_tokens/0",
    "/added_tokens/0/id",
    "/added_tokens/0/content",
    "/added_tokens/1/special",
    "/normalizer",
    "/pre_tokenizer",
    "/post_processor",
    "/decoder",
    "/truncation",
    "/padding",
];

/// Models of every kind, some of them empty.
#[cfg(feature = "tokens")]
fn model_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(json!({"type": "Unigram", "unk_id": null, "vocab": []})),
        Just(json!({"type": "Unigram", "unk_id": 0, "vocab": [["a", -1.0]]})),
        Just(
            json!({"type": "Unigram", "unk_id": 5, "vocab": [["a", -1.0]], "byte_fallback": true})
        ),
        Just(json!({"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"})),
        Just(json!({"type": "WordPiece", "vocab": {}, "unk_token": "[UNK]"})),
        Just(json!({"type": "BPE", "vocab": {}, "merges": [["a", "b"]]})),
        Just(json!({"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"})),
        odd_value(),
    ]
}

/// Normalizers, pre-tokenizers and decoders the crate reads in its own ways.
#[cfg(feature = "tokens")]
fn part_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(json!({"type": "Precompiled", "precompiled_charsmap": "junk"})),
        Just(json!({"type": "Precompiled", "precompiled_charsmap": ""})),
        Just(
            json!({"type": "Sequence", "normalizers": [{"type": "Precompiled", "precompiled_charsmap": "AAAA"}]})
        ),
        Just(json!({"type": "Sequence", "decoders": [{"type": "Sequence", "decoders": 1}]})),
        Just(json!({"type": "Replace", "pattern": {"Regex": "("}, "content": "x"})),
        Just(
            json!({"type": "Split", "pattern": {"Regex": "(?<!"}, "behavior": "Isolated", "invert": false})
        ),
        Just(json!({"type": "Metaspace", "replacement": "", "prepend_scheme": "always"})),
        Just(json!({"type": "ByteFallback"})),
        Just(json!({"type": "Strip", "content": " ", "start": 99, "stop": 99})),
        Just(json!({"type": "NFKC"})),
        odd_value(),
    ]
}

/// A `tokenizer_config.json` beside it, or none.
#[cfg(feature = "tokens")]
fn tokenizer_config() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Null),
        Just(json!({"split_special_tokens": true})),
        Just(json!({"added_tokens_decoder": {"5": {"content": "<x>", "special": true}}})),
        Just(json!({"added_tokens_decoder": {"999999999": {"content": "", "special": true}}})),
        Just(json!({"bos_token": {"content": "<|im_start|>"}, "eos_token": 7})),
        odd_value().prop_map(|value| json!({"added_tokens_decoder": {"3": value}})),
        odd_value(),
    ]
}

/// Request bodies as vLLM, SGLang and llama.cpp's server log them.
const REQUEST_SEEDS: &[&str] = &[
    include_str!("../../../../tests/fixtures/requests/vllm-tools.json"),
    include_str!("../../../../tests/fixtures/requests/sglang-continue.json"),
    include_str!("../../../../tests/fixtures/requests/llamacpp-parts.json"),
];

/// Where odd values go in a request body.
const REQUEST_POINTERS: &[&str] = &[
    "/messages",
    "/messages/0",
    "/messages/0/role",
    "/messages/0/content",
    "/messages/1/tool_calls",
    "/messages/1/tool_calls/0/function/arguments",
    "/tools",
    "/documents",
    "/chat_template_kwargs",
    "/chat_template_kwargs/messages",
    "/chat_template",
    "/add_generation_prompt",
    "/continue_final_message",
    "/model",
];

/// Sets `pointer` in `json` to `value`, adding the last key when its parent exists.
fn set(json: &mut Json, pointer: &str, value: Json) {
    if let Some(slot) = json.pointer_mut(pointer) {
        *slot = value;
    } else if let Some((parent, key)) = pointer.rsplit_once('/') {
        if let Some(Json::Object(map)) = json.pointer_mut(parent) {
            map.insert(key.to_string(), value);
        }
    }
}

/// Imports a request body's text as the command line does, renders the session and
/// saves it back: each step ends in a value or an error.
fn import_text(text: &str, parse_arguments: bool, dir: &Path) -> usize {
    let name = dir.join("body.json");
    if !request::may_be_request(text) {
        return 1;
    }
    let Ok(body) = request::parse_body(text, &name) else {
        return 1;
    };
    let options = ImportOptions {
        parse_arguments,
        ..ImportOptions::default()
    };
    let Ok(imported) = request::import(body, &options) else {
        return 1;
    };
    let session = imported.session;
    let access = TemplateAccess::within(dir);
    let _ = render_session(&session, dir, &access, small_limits());
    // What `import --out` writes must load again as a fixture.
    let saved = session.to_json();
    if let Err(err) = Session::parse(&saved, &dir.join("saved.json")) {
        panic!("an imported body does not load back: {err}\n{saved}");
    }
    0
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn gguf_headers_end_in_metadata_or_an_error(
        seed in 0usize..GGUF_SEEDS.len(),
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("gguf", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut bytes = GGUF_SEEDS[seed].to_vec();
        for edit in edits {
            apply(&mut bytes, edit);
        }
        last_input(&String::from_utf8_lossy(&bytes));
        let (started, before) = (Instant::now(), thread_live_bytes());
        let len = bytes.len() as u64;
        let read = gguf::read_metadata(Cursor::new(&bytes), len);
        prop_assert!(started.elapsed() < Duration::from_secs(5), "slow: {bytes:?}");
        prop_assert!(thread_live_bytes() - before < 1 << 20, "memory kept");
        if let Ok(found) = &read {
            // Nothing read is longer than the file it came from.
            let template = found.chat_template.as_deref().unwrap_or_default();
            prop_assert!(template.len() as u64 <= len);
        }
        budget.ended(usize::from(read.is_err()));
    }

    #[test]
    fn request_bodies_end_in_a_session_or_an_error(
        seed in 0usize..REQUEST_SEEDS.len(),
        edits in prop::option::weighted(0.5, prop::collection::vec((any::<prop::sample::Index>(), 0usize..8, mutation()), 1..4)),
        changes in prop::collection::vec((prop::sample::select(REQUEST_POINTERS), odd_value()), 0..3),
        parse_arguments in any::<bool>(),
    ) {
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("request bodies", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut json: Json = serde_json::from_str(REQUEST_SEEDS[seed]).unwrap();
        for (pointer, value) in changes {
            set(&mut json, pointer, value);
        }
        let mut text = serde_json::to_string_pretty(&json).unwrap().into_bytes();
        for (at, len, insert) in edits.into_iter().flatten() {
            let start = at.index(text.len() + 1);
            let end = (start + len).min(text.len());
            text.splice(start..end, insert.into_bytes());
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        last_input(&text);
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let how = import_text(&text, parse_arguments, dir.path());
        prop_assert!(started.elapsed() < Duration::from_secs(30), "slow: {text}");
        budget.ended(how);
    }
}

#[cfg(feature = "tokens")]
proptest! {
    #![proptest_config(config())]

    #[test]
    fn tokenizers_load_and_tokenize_or_fail_clearly(
        edits in prop::option::weighted(0.3, prop::collection::vec((any::<prop::sample::Index>(), 0usize..8, mutation()), 1..3)),
        changes in prop::collection::vec((prop::sample::select(TOKENIZER_POINTERS), odd_value()), 0..2),
        model in prop::option::of(model_value()),
        parts in prop::collection::vec((prop::sample::select(&["/normalizer", "/pre_tokenizer", "/decoder"][..]), part_value()), 0..3),
        config in tokenizer_config(),
    ) {
        use chatplate_core::tokens::{ModelTokenizer, TokenizerFiles};
        static BUDGET: std::sync::OnceLock<Budget> = std::sync::OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("tokenizers", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        let mut json: Json = serde_json::from_str(tokenizer_seed()).unwrap();
        if let Some(model) = model {
            set(&mut json, "/model", model);
        }
        for (pointer, value) in changes.into_iter().chain(parts) {
            set(&mut json, pointer, value);
        }
        let mut text = serde_json::to_string(&json).unwrap().into_bytes();
        for (at, len, insert) in edits.into_iter().flatten() {
            let start = at.index(text.len() + 1);
            let end = (start + len).min(text.len());
            text.splice(start..end, insert.into_bytes());
        }
        last_input(&format!("{}\n{config}", String::from_utf8_lossy(&text)));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), &text).unwrap();
        if !config.is_null() {
            std::fs::write(dir.path().join("tokenizer_config.json"), config.to_string()).unwrap();
        }
        let started = Instant::now();
        let files = TokenizerFiles::locate(dir.path()).unwrap();
        let how = match ModelTokenizer::load(&files) {
            Ok(tokenizer) => {
                for prompt in ["Hi <|im_start|>user\nwé<|eot|> w", "", "\u{0}\u{fffd}"] {
                    let _ = tokenizer.tokenize(prompt);
                    let _ = tokenizer.tokenize_split(prompt, !tokenizer.split_special_tokens());
                }
                0
            }
            Err(_) => 1,
        };
        prop_assert!(started.elapsed() < Duration::from_secs(10), "slow");
        budget.ended(how);
    }
}
