//! Bounded fuzzing (proptest) of the engine: templates, sessions, the files chatplate
//! reads and what the other engines answer, mutated. No panic, no abort, no hang, memory
//! bounded.

/// The renderer's metered allocator, as the `chatplate` binary installs it: the memory
/// bounds are measured through it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../../../../tests/common/mod.rs"]
mod common;
#[cfg(feature = "tokens")]
#[path = "../../../../tests/tokens_support/mod.rs"]
mod tokens_support;

mod fuzz;
mod fuzz_engines;
mod fuzz_inputs;
mod fuzz_parse;
