//! Command-line tests: the real `chatplate` binary run headless (render, check, inspect,
//! tokens, sources, standard input, hostile files, saves killed mid-write).

#[path = "../common/mod.rs"]
mod common;
#[cfg(feature = "tui")]
#[path = "../e2e_support/mod.rs"]
mod e2e_support;
#[path = "../gguf_support/mod.rs"]
mod gguf_support;
#[path = "../hf_support/mod.rs"]
mod hf_support;
#[path = "../llama_support/mod.rs"]
mod llama_support;
#[cfg(feature = "tokens")]
#[path = "../tokens_support/mod.rs"]
mod tokens_support;

mod check_engines_cli;
mod check_watch;
mod cli;
mod cli_conventions;
mod cli_tokens;
mod compare_cli;
mod compare_llama;
mod compare_report_cli;
mod compare_sides_cli;
mod deadlines;
mod doc_examples;
mod drift_cli;
mod engines_fenced;
mod escapes;
mod files_input;
mod fixture_fidelity;
mod fuzz_config;
mod inspect_cli;
mod inspect_masks;
mod knobs_cli;
mod lint_cli;
mod lint_portability;
mod minijinja_profiles;
mod parse_cli;
mod parse_stream_cli;
mod plugin_engines;
mod round_trip_cli;
#[cfg(feature = "tokens")]
mod roundtrip_cli;
mod session_save;
mod sources_cli;
mod token_engines;
mod tokens_masks;
mod untrusted;
mod untrusted_templates;
