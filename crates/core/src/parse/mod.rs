//! Parsing a model's raw output back into an assistant message with a declarative
//! `response_template` (format version 1), exactly as transformers 5.23's
//! `tokenizer.parse_response(response, schema, prefix=, tools=)` does: the same message
//! (same keys, same order, same values) and, for an invalid template or an output it
//! cannot parse, the same Python exception class and message.
//!
//! ```
//! use chatplate_core::parse::{parse_response, ResponseTemplate};
//! use serde_json::json;
//!
//! let template = ResponseTemplate::load(&json!({
//!     "defaults": {"role": "assistant"},
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "reasoning_content": {"open": "<think>", "close": "</think>"},
//!         "content": {"close": "<|im_end|>"},
//!     },
//! }))?;
//! let message = parse_response("<think>hm</think>Hi!<|im_end|>", &template, "", &[])?;
//! assert_eq!(message, json!({"role": "assistant", "reasoning_content": "hm", "content": "Hi!"}));
//! # Ok::<(), chatplate_core::parse::ParseError>(())
//! ```
//!
//! Patterns are Python regexes run on fancy-regex; where the two differ, and where
//! Python's `json` gives what a JSON value cannot hold, see docs/parse.md ("Differences
//! from Python") and the notes at the top of `pattern.rs` and `pyjson.rs`.
//!
//! Unlike Python, a parse is bounded: the input's size ([`MAX_INPUT_BYTES`]) and its
//! time ([`ParseLimits`]), which a hostile pattern cannot escape (`backtracking.rs`).

mod backtracking;
mod chunkings;
mod coerce;
mod content;
mod error;
mod limits;
mod parser;
mod partial;
mod pattern;
mod pattern_error;
mod pyjson;
mod pynum;
mod pyvalue;
mod round_trip;
mod searches;
mod shape;
mod source;
mod stream;
mod template;
mod transform;

use serde_json::Value;

pub use chunkings::{check_chunkings, stream_parse, Chunking, ChunkingDifference, StreamRun};
pub use error::{ParseError, LIMIT_CLASS};
pub use limits::ParseLimits;
#[cfg(feature = "tokens")]
pub(crate) use round_trip::generated_part;
pub use round_trip::{
    check_round_trip, check_stream_round_trip, round_trip_each, RoundTripFailure,
};
pub use source::{model_schema, read_schema_file, session_schema, SchemaFound, SchemaSourceError};
pub use stream::{ResponseParser, StreamEvent};
pub use template::ResponseTemplate;

/// Largest prefix plus response parsed, in bytes: far beyond any real conversation,
/// small enough that a hostile input cannot exhaust memory.
pub const MAX_INPUT_BYTES: usize = 64 << 20;

/// `parse_response(text, template, prefix=prefix, tools=tools)`: the assistant message
/// that `text` (the model's output) stands for, within the default [`ParseLimits`].
///
/// `prefix` is the prompt before generation; the part after the template's last start
/// anchor is parsed before `text`, since templates often write the start of the message
/// (`<think>\n`) themselves. Pass `""` when `text` holds the whole message. `tools` are
/// the tools as `apply_chat_template` takes them; tool-call arguments are cast with
/// their JSON schemas.
pub fn parse_response(
    text: &str,
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
) -> Result<Value, ParseError> {
    parse_response_within(text, template, prefix, tools, &ParseLimits::default())
}

/// [`parse_response`] within `limits`: past its deadline, or once cancelled, the parse
/// stops with an error of class [`LIMIT_CLASS`].
pub fn parse_response_within(
    text: &str,
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    limits: &ParseLimits,
) -> Result<Value, ParseError> {
    check_input_size(prefix.len().saturating_add(text.len()))?;
    let clock = limits.start();
    let mut buffer = template.truncate_prefix(prefix, &clock)?.to_string();
    buffer.push_str(text);
    parser::Parser::new(template, tools, clock).finish(&buffer)
}

/// Fails when a prefix and response of `bytes` in all are more than a parse takes.
pub fn check_input_size(bytes: usize) -> Result<(), ParseError> {
    if bytes > MAX_INPUT_BYTES {
        return Err(ParseError::limit(format!(
            "the prefix and response are {bytes} bytes; the limit is {MAX_INPUT_BYTES}"
        )));
    }
    Ok(())
}

/// [`parse_response`] with the template still to be loaded: the outcome as transformers
/// gives it, or its error (for the goldens and the command line).
pub fn parse_with_spec(
    text: &str,
    spec: &Value,
    prefix: &str,
    tools: &[Value],
) -> Result<Value, ParseError> {
    let template = ResponseTemplate::load(spec)?;
    parse_response(text, &template, prefix, tools)
}
