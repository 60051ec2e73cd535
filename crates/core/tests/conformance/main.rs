//! chatplate against transformers' own output: the conformance corpus (prompts and
//! errors), long conversations, assistant masks and `response_template` parsing, each
//! compared with goldens transformers recorded.

/// The renderer's metered allocator, as the `chatplate` binary installs it, so every
/// render here is bounded and counted as in the binary.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../../../../tests/common/mod.rs"]
mod common;
#[cfg(feature = "tokens")]
#[path = "../../../../tests/tokens_support/mod.rs"]
mod tokens_support;

mod conformance;
mod error_parity;
mod input_corpus;
mod long_conversations;
#[cfg(feature = "tokens")]
mod masks;
mod parse_goldens;
mod stream_goldens;
