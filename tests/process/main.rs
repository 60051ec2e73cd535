//! Tests that measure the whole process: render threads still alive and resident memory
//! after a render is stopped. In a binary of their own, so that no other test's renders
//! or allocations are counted.

/// The renderer's metered allocator, as the `chatplate` binary installs it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

mod stopping;
