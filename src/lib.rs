//! chatplate: see exactly what prompt a chat template produces for a conversation.
//!
//! The engine (`render`, `session`, `catalog`, `check`) knows nothing of terminals; the
//! TUI (`tui`) and the headless CLI (`cli`) both sit on it.

pub mod render;
pub mod catalog;
pub mod session;
pub mod tui;
pub mod visible;
pub mod check;
pub mod corpus;
pub mod cli;
