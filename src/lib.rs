//! chatplate: see exactly what prompt a chat template produces for a conversation.
//!
//! The engine (`render`, `session`, `catalog`, `check`) knows nothing of terminals and
//! builds alone (`default-features = false`); the headless CLI (`cli`, feature `cli`) and
//! the terminal app (`tui`, feature `tui`, on by default) both sit on it.

pub mod catalog;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod corpus;
pub mod diff;
pub mod files;
pub mod render;
pub mod session;
#[cfg(feature = "tui")]
pub mod tui;
pub mod visible;
