//! The `chatplate` app and command line, built on the engine crates
//! `chatplate-render` (the renderer) and `chatplate-core` (sessions, template sources,
//! inspection, tokens, checking).
//!
//! This library exists so the binary, its integration tests and its benchmarks share one
//! build of the front ends; it is not a stable API. Library users depend on the engine
//! crates instead (docs/library.md).

pub mod cli;
pub mod config_file;
pub mod engines_config;
pub mod hub_token;
pub mod lint_config;
pub mod template_roots;
#[cfg(feature = "tui")]
pub mod tui;
