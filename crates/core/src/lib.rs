//! chatplate-core: chat-template sessions, template sources, inspection, tokens and
//! checking, on the [`chatplate_render`] engine.
//!
//! * [`session`]: the session file, which is also a golden fixture: the conversation, its
//!   settings, the template it names and the expected prompt ([`Session`]).
//! * [`catalog`]: where templates come from: files, bundled templates, model folders as
//!   transformers reads them, the local Hugging Face cache, the Hub (feature `hub`) and
//!   GGUF metadata ([`TemplateSource`]).
//! * [`check`]: fixtures as golden tests ([`check_all`], [`check_file`]).
//! * [`inspect`]: what a template does with a conversation: capabilities, which message
//!   produced which bytes, values it ignores, prefix stability.
//! * [`lint`]: a verdict on a template: rule ids, severities, where and how to fix.
//! * [`parse`]: a model's raw output back into a message, with a `response_template`.
//! * [`tokens`]: the model's tokenizer (feature `tokens`).
//! * [`machine_output`]: JSON and XML documents without raw control characters, for
//!   every machine-readable output.
//! * [`worker`]: a render worker on its own threads for interactive front ends: newest
//!   request wins, results arrive as messages, every job bounded.
//!
//! Nothing here knows about terminals or command lines. Reading a fixture:
//!
//! ```
//! use chatplate_core::Session;
//!
//! let session = Session::parse(
//!     r#"{"version": 1, "template": {"bundled": "gemma-3-tools"},
//!         "messages": [{"role": "user", "content": "Hi"}],
//!         "add_generation_prompt": true}"#,
//!     std::path::Path::new("example.json"),
//! )?;
//! assert_eq!(session.messages.len(), 1);
//! # Ok::<(), chatplate_core::SessionError>(())
//! ```
//!
//! `examples/render_fixture.rs` renders a fixture with its template and compares the
//! prompt with the one it expects.
//!
//! # Features
//!
//! * `hub` (default): fetching template files from the Hugging Face Hub (ureq).
//! * `tokens` (default): the model's tokenizer (Hugging Face `tokenizers`).
//!
//! serde_json's `arbitrary_precision` feature is enabled here, so that numbers in
//! sessions are kept as written (saving never rewrites `1.50` or a 30-digit integer).
//! Cargo unifies features across a build, so every crate linked with chatplate-core sees
//! serde_json with it on.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub use catalog::{CatalogError, Origin, TemplateAccess, TemplateSource};
pub use check::{check_all, check_file, CaseResult, CheckOptions, Outcome};
pub use session::{Expected, Session, SessionError, TemplateRef};

pub mod catalog;
pub mod check;
pub mod compare;
pub mod corpus;
pub mod diff;
pub mod files;
pub mod fixture;
pub mod gguf;
pub mod inspect;
pub mod json_text;
pub mod lint;
pub mod machine_output;
pub mod parse;
pub mod rendering;
pub mod request;
#[cfg(feature = "tokens")]
pub mod roundtrip;
pub mod session;
pub mod target;
pub mod tokens;
pub mod training;
pub mod worker;

/// The Rust examples of `docs/library.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
pub struct LibraryDocs;
