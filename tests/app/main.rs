//! App tests: the terminal app's state and update, screens on ratatui's TestBackend
//! (insta snapshots), the docs' key table, and end-to-end runs of the real binary in a
//! pseudo-terminal.

#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "tui")]
#[path = "../e2e_support/mod.rs"]
mod e2e_support;
#[path = "../hf_support/mod.rs"]
mod hf_support;
#[cfg(feature = "tui")]
#[path = "../llama_support/mod.rs"]
mod llama_support;
#[cfg(feature = "tokens")]
#[path = "../tokens_support/mod.rs"]
mod tokens_support;
#[cfg(feature = "tui")]
#[path = "../tui_support/mod.rs"]
mod tui_support;

mod app_new;
mod app_open;
mod e2e_author;
mod e2e_busy;
mod e2e_compare;
mod e2e_edits;
mod e2e_exits;
mod e2e_open;
mod e2e_paste;
mod e2e_paste_output;
mod e2e_pty;
mod e2e_recovery;
mod e2e_roots;
mod fuzz_input;
mod key_docs;
mod tui_clean;
mod tui_compare;
mod tui_compare_sources;
mod tui_config;
mod tui_copy_code;
mod tui_excerpt;
mod tui_explain;
mod tui_files;
mod tui_generation_marks;
mod tui_help;
mod tui_info;
mod tui_knobs;
mod tui_legend;
mod tui_lint;
mod tui_log;
mod tui_masks;
mod tui_matrix;
mod tui_mouse;
mod tui_needs;
mod tui_open;
mod tui_opener;
mod tui_paste_output;
mod tui_range;
mod tui_round_trip_badges;
mod tui_search;
mod tui_session_watch;
mod tui_snapshots;
mod tui_token_badges;
mod tui_tokens;
mod tui_tools;
mod tui_update;
mod workbench;
