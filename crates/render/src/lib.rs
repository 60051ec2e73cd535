//! chatplate-render: render LLM chat templates exactly as Hugging Face transformers does.
//!
//! One configured MiniJinja environment that behaves like transformers 5.23's
//! `apply_chat_template(..., tokenize=False)`, which runs Python's Jinja2 in an immutable
//! sandbox: byte for byte the same prompt, and where transformers raises, the same Python
//! exception class and message. Known differences are listed in the repository's
//! `COMPATIBILITY.md`. Nothing here knows about terminals, files or fixtures.
//!
//! Compile once with [`CompiledTemplate::compile`], render many times with
//! [`CompiledTemplate::render`]:
//!
//! ```
//! use chatplate_render::{CompiledTemplate, Conversation, Limits};
//! use serde_json::json;
//!
//! let template = CompiledTemplate::compile(
//!     "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!      {% if add_generation_prompt %}<|assistant|>{% endif %}",
//!     Limits::default(),
//! )?;
//! let conversation = Conversation::new(vec![json!({"role": "user", "content": "Hi!"})])
//!     .with_generation_prompt(true);
//! assert_eq!(template.render(&conversation)?, "<|user|>Hi!\n<|assistant|>");
//! # Ok::<(), chatplate_render::RenderError>(())
//! ```
//!
//! Errors carry Python's exception class and message, the position in the template and
//! an excerpt of it:
//!
//! ```
//! use chatplate_render::{CompiledTemplate, Conversation, Limits};
//!
//! let source = "{{ messages[0].content + 1 }}";
//! let conversation =
//!     Conversation::new(vec![serde_json::json!({"role": "user", "content": "hi"})]);
//! let err = CompiledTemplate::compile(source, Limits::default())?
//!     .render(&conversation)
//!     .unwrap_err();
//! assert_eq!(err.exception, Some("TypeError"));
//! assert_eq!(err.message, "can only concatenate str (not \"int\") to str");
//! assert!(err.excerpt(source, 1).unwrap().contains("^"));
//! # Ok::<(), chatplate_render::RenderError>(())
//! ```
//!
//! # Bounded work
//!
//! A template is code from the internet. Every render is bounded by [`Limits`] (steps,
//! output size, memory, recursion, a wall-clock deadline that grows with the
//! conversation); [`CompiledTemplate::render_controlled`] also takes a [`CancelToken`].
//!
//! The memory budget counts what each thread allocates through [`MeteredAllocator`]. It
//! is enforced only in a binary that installs it as its global allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;
//! ```
//!
//! Without it ([`is_metered`] says which) steps, output size, recursion and the deadline
//! still hold, and the byte limit is not checked.
//!
//! # Features
//!
//! * `mimalloc` (off by default): [`MeteredAllocator`] counts on top of mimalloc instead
//!   of the system allocator (faster for MiniJinja's many small allocations, but a C
//!   library to compile). The chatplate binary turns it on.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

mod affinity;
mod appends;
mod assertions;
mod boundmethods;
mod bytes;
mod cancel;
mod closures;
mod compiled;
mod concat;
mod context;
mod continuation;
mod conversation;
mod conversions;
mod data;
mod diagnose;
mod edits;
mod environment;
mod equality;
mod error;
mod execution;
pub(crate) mod extent;
mod failure;
mod filters;
mod generation;
mod generators;
mod globals;
mod groups;
mod guards;
mod helpers;
mod htmlfilters;
mod humanize;
mod limits;
mod listsum;
mod literals;
mod lookups;
mod loops;
mod markup;
mod markupvars;
mod membership;
mod memory;
mod methods;
mod none;
mod offsets;
mod percent;
mod predicates;
mod prefix;
mod printf;
mod pyerror;
mod pyfloat;
mod pyjson;
mod pyrepr;
mod pystr;
mod pytype;
pub mod remedy;
mod renders;
mod repeat;
pub(crate) mod rewrite;
mod scalars;
mod scans;
mod scope;
mod scopes;
mod sized;
mod slices;
mod source;
mod splitting;
mod strmethods;
mod subexpressions;
mod syntax;
mod tags;
mod textfilters;
mod threads;
mod traced;
mod undefined;
pub mod visible;
mod watchdog;
mod wordwrap;

pub use cancel::{CancelToken, RenderControl};
pub use compiled::{rewritten_source, syntax_config, CompiledTemplate, MAX_EXPRESSION_DEPTH};
pub use continuation::{cut_at_tag, tag_final_message};
pub use conversation::{
    effective_messages, ContinueFinal, Conversation, ConversationInput, CONTINUE_TAG,
};
pub use error::{RenderError, RenderErrorKind, SourcePosition};
pub use generation::{has_generation_block, has_generation_tag, GenerationSpan, TrackedRender};
pub use limits::{Bound, Limits, MAX_GROWN_DEADLINE, STEPS_PER_ITEM_PAIR};
pub use memory::{
    is_metered, reset_thread_peak, thread_allocated_bytes, thread_live_bytes, thread_peak_bytes,
    MeteredAllocator,
};
pub use prefix::PreparedMessages;
pub use pyfloat::repr_float as python_float_repr;
pub use pyjson::{dumps as python_json_dumps, DumpOptions};
pub use pyrepr::write_str_repr as python_str_repr;
pub use source::normalize_newlines;
pub use traced::TracedRender;
pub use watchdog::{active_renders, render_with_deadline};

/// Reading a template's syntax tree as the renderer parses it (with [`syntax_config`]):
/// what an inspector needs to find the variables and inputs a template reads.
pub mod syntax_tree {
    pub use crate::extent::expression_source;
    pub use crate::rewrite::{argument, children};
    pub use crate::syntax_config;
}

// Crate-wide names for the modules that render (`failure`, `watchdog`).
use compiled::TEMPLATE_NAME;
use context::Input;
use renders::finish;
