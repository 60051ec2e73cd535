//! What chatplate reads: session files and the example sessions, request bodies, model
//! folders, the Hugging Face cache and Hub, GGUF files, and tokenizers.

/// The renderer's metered allocator, as the `chatplate` binary installs it: the GGUF
/// reading test measures through it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../../../../tests/common/mod.rs"]
mod common;
#[path = "../../../../tests/gguf_support/mod.rs"]
mod gguf_support;
#[path = "../../../../tests/hf_support/mod.rs"]
mod hf_support;
#[cfg(feature = "hub")]
#[path = "../../../../tests/hub_support/mod.rs"]
mod hub_support;
#[cfg(feature = "tokens")]
#[path = "../../../../tests/tokens_support/mod.rs"]
mod tokens_support;

mod gguf_files;
mod gguf_large;
mod hf_cache;
mod hub;
mod large_sessions;
mod model_folders;
mod request_bodies;
mod session_file;
mod sessions;
mod tokens;
mod tokens_real;
