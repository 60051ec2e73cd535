//! chatplate: render LLM chat templates exactly as Hugging Face transformers does.
//!
//! The engine renders a chat template (Jinja) for a conversation byte for byte like
//! transformers 5.23's `apply_chat_template(..., tokenize=False)`, which runs Python's
//! Jinja2. It is checked against a corpus of 798 renders recorded from transformers, and
//! where transformers raises, it raises the same Python exception class with the same
//! message. Differences that remain are listed in `src/render/COMPATIBILITY.md`.
//!
//! # Using the engine
//!
//! Compile a template once, render it for many conversations:
//!
//! ```
//! use chatplate::{CompiledTemplate, Conversation, Limits};
//! use serde_json::json;
//!
//! let template = CompiledTemplate::compile(
//!     "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!      {% if add_generation_prompt %}<|assistant|>{% endif %}",
//!     Limits::default(),
//! )?;
//! let conversation = Conversation {
//!     messages: vec![json!({"role": "user", "content": "Hi!"})],
//!     add_generation_prompt: true,
//!     ..Conversation::default()
//! };
//! assert_eq!(template.render(&conversation)?, "<|user|>Hi!\n<|assistant|>");
//! # Ok::<(), chatplate::RenderError>(())
//! ```
//!
//! Errors carry Python's exception class and message, the position in the template and
//! an excerpt of it:
//!
//! ```
//! use chatplate::{CompiledTemplate, Conversation, Limits};
//!
//! let source = "{{ messages[0].content + 1 }}";
//! let conversation = Conversation {
//!     messages: vec![serde_json::json!({"role": "user", "content": "hi"})],
//!     ..Conversation::default()
//! };
//! let err = CompiledTemplate::compile(source, Limits::default())?
//!     .render(&conversation)
//!     .unwrap_err();
//! assert_eq!(err.exception, Some("TypeError"));
//! assert_eq!(err.message, "can only concatenate str (not \"int\") to str");
//! assert!(err.excerpt(source, 1).unwrap().contains("^"));
//! # Ok::<(), chatplate::RenderError>(())
//! ```
//!
//! Session fixtures (a conversation, its template and the expected prompt, as JSON)
//! are read with [`Session`], templates found with [`catalog`], and whole directories of
//! fixtures checked with [`check_all`]. `examples/render_fixture.rs` renders a fixture
//! through this API.
//!
//! # Features
//!
//! * `cli`: the `chatplate` command line (clap, anyhow, clap_complete, clap_mangen).
//! * `tui` (default, implies `cli`): the terminal app (ratatui, crossterm).
//! * `hub` (default): fetching template files from the Hugging Face Hub (ureq).
//! * `tokens` (default): the model's tokenizer (Hugging Face `tokenizers`).
//!
//! A library user who only renders templates depends on chatplate with
//! `default-features = false`: the engine, the fixture format, the template catalog,
//! the inspector and the checker build without any of them.
//!
//! Every render is bounded ([`Limits`]: steps, output size, memory, recursion, a
//! wall-clock deadline; [`CompiledTemplate::render_controlled`] also takes a
//! [`CancelToken`]), so untrusted templates cannot hang or exhaust the caller.
//!
//! The other public modules (`gguf`, `request`, `target`, `tokens`, `inspect`, `worker`,
//! `files`) are the engine parts the app and the command line are built from; they
//! are public for them and documented, but their API is less settled than the items
//! re-exported here.

// The public API, re-exported so most users need one `use`. Add new items here.
pub use catalog::{CatalogError, Origin, TemplateAccess, TemplateSource};
pub use check::{check_all, check_file, CaseResult, CheckOptions, Outcome};
pub use render::{
    render_with_deadline, CancelToken, CompiledTemplate, ContinueFinal, Conversation, Limits,
    RenderControl, RenderError, RenderErrorKind, SourcePosition,
};
pub use session::{Expected, Session, SessionError, TemplateRef};

// The engine and the formats it works with.
pub mod catalog;
pub mod check;
pub mod corpus;
pub mod files;
pub mod gguf;
pub mod inspect;
pub mod render;
pub mod request;
pub mod session;
pub mod target;
pub mod tokens;
pub mod worker;

// The command line and the terminal app (cargo features `cli` and `tui`).
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "tui")]
pub mod tui;

// Helpers shared by the checker, the command line and the app; not part of the API.
#[doc(hidden)]
pub mod diff;
#[doc(hidden)]
pub mod visible;
