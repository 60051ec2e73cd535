//! The three panes: Templates, Messages and Prompt. Each owns its state, handles its own
//! actions through [`crate::tui::context::PaneContext`] and draws what `ui` hands it.

pub mod messages;
pub mod prompt;
pub mod templates;
