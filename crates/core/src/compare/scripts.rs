//! The small programs chatplate carries for the external engines, embedded in the binary
//! and passed to the interpreter on its command line (`python -c`, `node -e`), so no file
//! is written and nothing is installed beside the user's own engine.

/// `python`: the user's transformers' `render_jinja_template`.
pub(super) const PYTHON: &str = include_str!("render_python.py");

/// `hf-jinja`: @huggingface/jinja's `Template`, loaded from the folder chatplate found it
/// in (see [`super::hf_jinja`]).
pub(super) const HF_JINJA: &str = include_str!("render_hf_jinja.js");

/// `py:`: a vendor's Python encoder function, called with the conversation.
pub(super) const PY_ENCODER: &str = include_str!("run_encoder.py");

/// `mistral-common`: its encoder and tokenizer, on the request and on the reference's
/// prompt.
pub(super) const MISTRAL_COMMON: &str = include_str!("run_mistral_common.py");
