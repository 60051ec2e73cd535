//! chatplate: see exactly what prompt a chat template produces for a conversation.
//!
//! The engine (`render`, `session`, `catalog`, `check`, `gguf`, `request`, `tokens`,
//! `inspect`, `worker`) knows nothing of terminals and
//! builds alone (`default-features = false`); the headless CLI (`cli`, feature `cli`) and
//! the terminal app (`tui`, feature `tui`, on by default) both sit on it.

pub mod catalog;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod corpus;
pub mod diff;
pub mod files;
pub mod gguf;
pub mod inspect;
pub mod render;
pub mod request;
pub mod session;
pub mod target;
pub mod tokens;
#[cfg(feature = "tui")]
pub mod tui;
pub mod visible;
pub mod worker;
