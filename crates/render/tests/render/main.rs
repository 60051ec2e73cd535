//! The renderer through its public API: Python-compatibility cases recorded from
//! transformers, stored slices, and untrusted templates against every limit.

/// The renderer's metered allocator, as the `chatplate` binary installs it: the memory
/// limit tests measure through it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

mod corpus_conversation;
mod handoff;
mod limits;
mod python_compat;
mod reuse;
mod scans;
mod slices;
mod speed;
