//! chatplate: see exactly what prompt a chat template produces for a conversation.
//!
//! The engine (`render`, `session`, `catalog`, `check`) knows nothing of terminals; the
//! TUI (`tui`) and the headless CLI (`cli`) both sit on it.

pub mod catalog;
pub mod check;
pub mod cli;
pub mod corpus;
pub mod diff;
pub mod render;
pub mod session;
pub mod tui;
pub mod visible;
