//! Finding a Python that has the `gguf` package, and writing large GGUF files by hand.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// `$CHATPLATE_PYTHON`, else `python3`, when it can `import gguf`; prints that `test` is
/// skipped otherwise.
pub fn python_with_gguf(test: &str) -> Option<String> {
    let python = std::env::var("CHATPLATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let works = Command::new(&python)
        .args(["-c", "import gguf, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    crate::common::skip_unless_ci(
        test,
        &format!("{python} cannot import gguf (pip install gguf, or set CHATPLATE_PYTHON)"),
    );
    None
}

/// Writes a GGUF v3 header for a model with `vocabulary` tokens (bos 1, eos the last),
/// a chat template, and a token score array, then extends the file to `total_bytes`
/// (sparse: the "tensor data" takes no disk space). Returns the metadata's end.
pub fn write_large(path: &Path, vocabulary: usize, total_bytes: u64) -> u64 {
    let mut out: Vec<u8> = Vec::new();
    out.extend_from_slice(b"GGUF");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes());
    out.extend_from_slice(&5u64.to_le_bytes());
    let string = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    string(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(vocabulary as u64).to_le_bytes());
    for index in 0..vocabulary {
        string(&mut out, &format!("<tok{index}>"));
    }
    string(&mut out, "tokenizer.ggml.scores");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&6u32.to_le_bytes());
    out.extend_from_slice(&(vocabulary as u64).to_le_bytes());
    out.extend(std::iter::repeat_n(0u8, vocabulary * 4));
    for (key, id) in [
        ("tokenizer.ggml.bos_token_id", 1u32),
        ("tokenizer.ggml.eos_token_id", vocabulary as u32 - 1),
    ] {
        string(&mut out, key);
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
    }
    string(&mut out, "tokenizer.chat_template");
    out.extend_from_slice(&8u32.to_le_bytes());
    string(
        &mut out,
        "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}",
    );
    let metadata_end = out.len() as u64;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&out).unwrap();
    file.set_len(total_bytes).unwrap();
    metadata_end
}
