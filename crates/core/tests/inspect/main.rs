//! Inspection: what a template supports, the variables it reads, which message produced
//! each part of the prompt and the values it ignores, on small templates and on the
//! conformance corpus's real ones.

/// The renderer's metered allocator, as the `chatplate` binary installs it, so every
/// render here is bounded and counted as in the binary.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../../../../tests/common/mod.rs"]
mod common;

mod attribution_corpus;
mod inspect_capabilities;
mod inspect_conversation;
mod inspect_corpus;
mod inspect_masks;
