//! Engine tests: rendering against the transformers corpus, Python semantics, limits and
//! untrusted input, fixtures, template sources, inspection and tokens, through the engine
//! crates' public API.

/// The renderer's metered allocator, as the `chatplate` binary installs it: the memory
/// limit tests and the GGUF reading test measure through it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../common/mod.rs"]
mod common;
#[path = "../gguf_support/mod.rs"]
mod gguf_support;
#[path = "../hf_support/mod.rs"]
mod hf_support;
#[cfg(feature = "tokens")]
#[path = "../tokens_support/mod.rs"]
mod tokens_support;

mod attribution_corpus;
mod conformance;
mod error_parity;
mod fuzz;
mod fuzz_inputs;
mod gguf_files;
mod gguf_large;
mod hf_cache;
mod hub;
mod inspect_capabilities;
mod inspect_conversation;
mod inspect_corpus;
mod limits;
mod long_conversations;
#[cfg(feature = "tokens")]
mod masks;
mod model_folders;
mod parse_goldens;
mod python_compat;
mod request_bodies;
mod session_file;
mod sessions;
mod slices;
mod tokens;
mod tokens_real;
