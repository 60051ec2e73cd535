//! Engine tests that need the root package: the `chatplate` binary or the app. The engine's
//! own integration tests live in the engine crates (`crates/render/tests`,
//! `crates/core/tests`), so `cargo test -p chatplate-render -p chatplate-core` runs them.

#[cfg(feature = "hub")]
#[path = "../hub_support/mod.rs"]
mod hub_support;

mod hub_cli;
mod request_bodies;
