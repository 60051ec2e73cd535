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

mod assertions;
mod boundmethods;
mod bytes;
mod cancel;
mod closures;
mod conversation;
mod conversions;
mod data;
mod diagnose;
mod edits;
mod environment;
mod error;
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
pub(crate) mod rewrite;
mod scalars;
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

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::civil::DateTime;
use minijinja::value::Value;
use minijinja::Environment;

pub use cancel::{CancelToken, RenderControl};
pub use continuation::{cut_at_tag, tag_final_message};
pub use conversation::{
    effective_messages, ContinueFinal, Conversation, ConversationInput, CONTINUE_TAG,
};
pub use error::{RenderError, RenderErrorKind, SourcePosition};
pub use generation::{has_generation_tag, GenerationSpan, TrackedRender};
pub use limits::{Bound, Limits, STEPS_PER_ITEM_PAIR};
pub use memory::{
    is_metered, reset_thread_peak, thread_live_bytes, thread_peak_bytes, MeteredAllocator,
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
    pub use crate::rewrite::children;
    pub use crate::syntax_config;
}

use data::json_to_value;
use none::python_none;
use scope::{Scope, Shared, Stop};

/// Name under which the template is registered in its environment.
const TEMPLATE_NAME: &str = "chat_template";

/// Deepest expression nesting compiled (see [`CompiledTemplate::compile`]). MiniJinja's
/// compile time grows faster than the square of an operator chain's length, so this
/// also bounds compile time (BENCHMARKS.md, compile).
pub const MAX_EXPRESSION_DEPTH: usize = 12_000;

/// A chat template compiled into its own sandboxed environment. Cloning is cheap (the
/// compiled template is shared).
#[derive(Clone)]
pub struct CompiledTemplate {
    inner: Arc<Compiled>,
}

struct Compiled {
    env: Environment<'static>,
    /// The user's source, newlines normalized: what error positions refer to.
    source: String,
    prepared: source::Prepared,
    rewritten: rewrite::Rewritten,
    limits: Limits,
    last_fuel: AtomicU64,
    /// The last prompt's length: the next render's output starts with that much room
    /// (renders of one template are mostly alike), instead of growing to it by doubling.
    last_output_len: AtomicUsize,
    /// The last finished render's time per input item, in nanoseconds: when the next
    /// one's answer is due (see `watchdog`).
    last_nanos_per_item: AtomicU64,
}

impl std::fmt::Debug for CompiledTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTemplate")
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

/// A conversation turned into what the template is rendered with.
struct Input {
    context: Value,
    clock: DateTime,
    /// The text being continued (`continue_final_message`), to cut the prompt at.
    continued: Option<String>,
}

impl CompiledTemplate {
    /// Parses `source` with transformers' settings; syntax errors carry their position.
    ///
    /// Compiling recurses through the template's expressions, so it runs on a large
    /// stack (a fresh one when the caller's has less than 64 MiB left); expressions nested deeper than [`MAX_EXPRESSION_DEPTH`] are
    /// refused (Python's compiler gives up on `+` chains near 1,000; its `~` chains are
    /// flat, and a 10,000-term one compiles here too).
    pub fn compile(source: &str, limits: Limits) -> Result<Self, RenderError> {
        // On a thread with less stack left than that, compile on a fresh segment.
        stacker::maybe_grow(64 << 20, watchdog::RENDER_STACK_BYTES, || {
            Self::compile_here(source, limits)
        })
    }

    fn compile_here(source: &str, limits: Limits) -> Result<Self, RenderError> {
        let source = source::normalize_newlines(source);
        let (prepared, helpers) = source::prepare(&source);
        let mut env = environment::build(limits, &helpers);
        // One parse serves the rewrites and Jinja2's compile-time checks; a template that
        // does not parse is compiled as it is, so MiniJinja reports the syntax error.
        let ast =
            minijinja::machinery::parse(&prepared.text, TEMPLATE_NAME, env.syntax().clone()).ok();
        let rewritten = rewrite::rewrite(&prepared.text, ast.as_ref(), &helpers);
        if rewritten.depth > MAX_EXPRESSION_DEPTH {
            return Err(RenderError::limit(
                RenderErrorKind::Syntax,
                format!(
                    "an expression is nested {} levels deep, more than the {MAX_EXPRESSION_DEPTH} \
                     chatplate compiles (a chain of operators counts one level per operator)",
                    limits::group(rewritten.depth as u64)
                ),
            ));
        }
        if let Err(err) = env.add_template_owned(TEMPLATE_NAME, rewritten.text.clone()) {
            let error = map_error(&err, &source, &prepared, &rewritten, None);
            return Err(match tags::check(&source) {
                // Jinja2 reports whichever problem its parser meets first.
                Some(found)
                    if error.kind == RenderErrorKind::Syntax
                        && (!error.is_before(&source, found.offset)
                            || err
                                .detail()
                                .is_some_and(|d| d.starts_with("unexpected end of input"))) =>
                {
                    RenderError::syntax(found.message, &source, found.offset)
                }
                _ => error,
            });
        }
        // MiniJinja accepts one tag Jinja2 (as transformers sets it up) rejects: `do`.
        if let Some(found) = tags::has_do_tag(&source)
            .then(|| tags::check(&source))
            .flatten()
        {
            return Err(RenderError::syntax(found.message, &source, found.offset));
        }
        if let Some((message, offset)) = ast.as_ref().and_then(|ast| unknown_names(&prepared, ast))
        {
            return Err(RenderError {
                exception: Some("TemplateAssertionError"),
                ..RenderError::syntax(message, &source, offset)
            });
        }
        Ok(CompiledTemplate {
            inner: Arc::new(Compiled {
                env,
                source,
                prepared,
                rewritten,
                limits,
                last_fuel: AtomicU64::new(0),
                last_output_len: AtomicUsize::new(0),
                last_nanos_per_item: AtomicU64::new(0),
            }),
        })
    }

    /// Renders `conversation` exactly as `apply_chat_template(..., tokenize=False)` would,
    /// on the calling thread. Bounded by the step, output and byte budgets; for
    /// untrusted templates prefer [`CompiledTemplate::render_controlled`], which also
    /// keeps a deadline and can always be abandoned.
    pub fn render(&self, conversation: &Conversation) -> Result<String, RenderError> {
        let input = self.input(conversation)?;
        let result = self.run(
            input.context,
            conversation.items(),
            input.clock,
            &CancelToken::new(),
            &Arc::default(),
        );
        finish(result, input.continued)
    }

    /// Like [`CompiledTemplate::render_controlled`] with no deadline: gives up with
    /// [`RenderErrorKind::Cancelled`] once `cancel` is cancelled.
    pub fn render_cancellable<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        let control = RenderControl::new(cancel.clone()).without_deadline();
        self.render_controlled(conversation, &control)
    }

    /// Renders on a thread of its own, and returns as soon as the render finishes, is
    /// cancelled, runs past its deadline (the template's [`Limits::deadline`] unless the
    /// control names another, grown for the conversation: [`Limits::deadline_for`]) or
    /// goes over its byte budget. A
    /// stopped render stops at its next checkpoint (every loop item, every `{{ }}`,
    /// every filter or method call) and frees its memory; see [`watchdog`].
    ///
    /// Takes the conversation borrowed, owned or in an `Arc` (see [`ConversationInput`]:
    /// given owned or shared, the render thread builds its template values itself).
    pub fn render_controlled<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        control: &RenderControl,
    ) -> Result<String, RenderError> {
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (input, items) = self.thread_input(conversation.into())?;
        watchdog::run_on_own_thread(self, input, items, control)
    }

    /// What a render thread renders for `conversation`, and its input items.
    fn thread_input(
        &self,
        conversation: ConversationInput<'_>,
    ) -> Result<(watchdog::RenderInput, usize), RenderError> {
        let items = conversation.conversation().items();
        let input = match conversation {
            ConversationInput::Borrowed(conversation) => {
                let input = self.input(conversation)?;
                watchdog::RenderInput::Values {
                    context: input.context,
                    clock: input.clock,
                    continued: input.continued,
                }
            }
            ConversationInput::Shared(conversation) => {
                watchdog::RenderInput::Conversation(conversation)
            }
        };
        Ok((input, items))
    }

    /// Renders like [`CompiledTemplate::render_controlled`] and also returns where the
    /// template's `{% generation %}` blocks landed, as transformers records them for
    /// `return_assistant_tokens_mask=True` (see [`GenerationSpan`]). A template whose
    /// source never says `generation` renders as usual, with no spans and no recording
    /// cost. transformers records blocks whatever its tag test ([`has_generation_tag`])
    /// says (it only logs a warning), so `{%+ generation %}` is recorded too. Like
    /// transformers, refuses `continue_final_message`.
    pub fn render_tracked<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        control: &RenderControl,
    ) -> Result<TrackedRender, RenderError> {
        let conversation = conversation.into();
        if conversation
            .conversation()
            .continue_final_message
            .field()
            .is_some()
        {
            return Err(RenderError::input(
                "continue_final_message is not compatible with return_assistant_tokens_mask.",
            ));
        }
        if !self.inner.source.contains("generation") {
            let prompt = self.render_controlled(conversation, control)?;
            return Ok(TrackedRender::untracked(prompt));
        }
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (input, items) = self.thread_input(conversation)?;
        let (prompt, raw) =
            watchdog::run_recording_on_own_thread(self, input, items, control, true)?;
        let spans = generation::in_chars(&prompt, &raw);
        Ok(TrackedRender {
            prompt,
            spans,
            has_generation_tag: self.has_generation_tag(),
        })
    }

    /// Whether transformers would compute an assistant mask with this template: its
    /// source has a `{% generation %}` tag ([`has_generation_tag`]).
    pub fn has_generation_tag(&self) -> bool {
        has_generation_tag(&self.inner.source)
    }

    /// The names of the environment's globals (`raise_exception`, `namespace`, the
    /// helpers the source rewrites call, ...): what a template reads without them
    /// coming from its context.
    pub fn global_names(&self) -> Vec<String> {
        self.inner
            .env
            .globals()
            .map(|(name, _)| name.into())
            .collect()
    }

    /// Renders `messages` (`count` of them, already template values) with
    /// `conversation`'s tools, documents and variables, on a render thread of its own
    /// (see [`watchdog`]): the inspector's prefix and perturbation renders.
    fn render_values(
        &self,
        conversation: &Conversation,
        messages: (Value, usize),
        add_generation_prompt: bool,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        // The inspector bounds all its renders together, through the token.
        let control = RenderControl::new(cancel.clone()).without_deadline();
        self.render_values_controlled(conversation, messages, add_generation_prompt, &control)
    }

    /// [`CompiledTemplate::render_values`] under `control`.
    fn render_values_controlled(
        &self,
        conversation: &Conversation,
        messages: (Value, usize),
        add_generation_prompt: bool,
        control: &RenderControl,
    ) -> Result<String, RenderError> {
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (messages, count) = messages;
        let items = count
            + conversation.tools.as_ref().map_or(0, Vec::len)
            + conversation.documents.as_ref().map_or(0, Vec::len);
        let clock = conversation
            .clock
            .unwrap_or_else(|| jiff::Zoned::now().datetime());
        let context = build_context(conversation, messages, add_generation_prompt)?;
        watchdog::run_on_own_thread(
            self,
            watchdog::RenderInput::Values {
                context,
                clock,
                continued: None,
            },
            items,
            control,
        )
    }

    /// Validates the conversation and builds the template's variables.
    fn input(&self, conversation: &Conversation) -> Result<Input, RenderError> {
        let continuing = conversation.continue_final_message.field();
        if continuing.is_some() && conversation.add_generation_prompt {
            return Err(RenderError::input(
                "continue_final_message and add_generation_prompt are not compatible",
            ));
        }
        if conversation.messages.is_empty() {
            return Err(RenderError::input(
                "Cannot apply chat template to an empty conversation. Provide at least one message.",
            ));
        }
        let clock = conversation
            .clock
            .unwrap_or_else(|| jiff::Zoned::now().datetime());
        let Some(field) = continuing else {
            let context = build_context(
                conversation,
                message_values(&conversation.messages),
                conversation.add_generation_prompt,
            )?;
            return Ok(Input {
                context,
                clock,
                continued: None,
            });
        };
        let mut messages = effective_messages(&conversation.messages);
        let continued = continuation::tag_final_message(&mut messages, field, &self.inner.source)?;
        Ok(Input {
            context: build_context(
                conversation,
                message_values(&messages),
                conversation.add_generation_prompt,
            )?,
            clock,
            continued: Some(continued),
        })
    }

    /// Runs the template on this thread, inside a render scope (see [`scope`]).
    fn run(
        &self,
        context: Value,
        items: usize,
        clock: DateTime,
        cancel: &CancelToken,
        shared: &Arc<Shared>,
    ) -> Result<String, RenderError> {
        self.run_recording(context, items, clock, cancel, shared, false)
            .map(|(prompt, _)| prompt)
    }

    /// [`CompiledTemplate::run`], recording the `{% generation %}` blocks when `record`
    /// is set (see [`generation`]).
    fn run_recording(
        &self,
        context: Value,
        items: usize,
        clock: DateTime,
        cancel: &CancelToken,
        shared: &Arc<Shared>,
        record: bool,
    ) -> Result<(String, Vec<generation::RawSpan>), RenderError> {
        let limits = self.inner.limits;
        let _scope = scope::enter(Scope::new(
            Arc::clone(shared),
            cancel.clone(),
            limits.max_memory_bytes,
            clock,
        ));
        // The step budget depends on the input, so each render gets its own copy of the
        // environment (a few shared pointers) with its own fuel.
        let mut env = self.inner.env.clone();
        env.set_fuel(Some(limits.step_budget(items)));
        let template = env
            .get_template(TEMPLATE_NAME)
            .map_err(|err| self.error(&err, items, shared))?;
        // One published output length serves both a traced render and the recording of
        // generation blocks: each reads where top-level output stands.
        let recording = record.then(|| generation::Recording::start(shared.written()));
        let written = shared
            .written()
            .or_else(|| recording.as_ref().map(generation::Recording::counter));
        // The last prompt's length and an eighth more, so an edit that makes the prompt a
        // little longer does not end the render by copying it into a buffer twice its size
        // (pages reserved and never written cost nothing; the writer caps the room at the
        // output limit).
        let last = self.inner.last_output_len.load(Ordering::Relaxed);
        let mut output = environment::LimitedWriter::new(limits.max_output_bytes)
            .with_room(last.saturating_add(last / 8))
            .publishing(written);
        undefined::reset();
        let started = Instant::now();
        let rendered = template.render_captured_to(context.clone(), &mut output);
        let per_item = started.elapsed().as_nanos() / items.max(1) as u128;
        self.inner.last_nanos_per_item.store(
            u64::try_from(per_item).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let spans = recording.map(generation::Recording::finish);
        if let Some(stop) = shared.stop() {
            return Err(self.stopped(stop, shared, items));
        }
        let fuel_used = match rendered {
            Ok(captured) => captured.state().fuel_levels().map_or(0, |(used, _)| used),
            Err(err) => return Err(self.render_error(&env, &err, context, items, shared)),
        };
        self.inner.last_fuel.store(fuel_used, Ordering::Relaxed);
        let output_len = output.buffer.len();
        self.inner
            .last_output_len
            .store(output_len, Ordering::Relaxed);
        let prompt = String::from_utf8(output.buffer)
            .map_err(|_| RenderError::input("the template produced invalid UTF-8"))?;
        Ok((prompt, spans.unwrap_or_default()))
    }

    /// A MiniJinja error with its position mapped back to the user's source, and limit
    /// errors named with their limit.
    pub(crate) fn error(
        &self,
        err: &minijinja::Error,
        items: usize,
        shared: &Shared,
    ) -> RenderError {
        if let Some(stop) = shared.stop() {
            return self.stopped(stop, shared, items);
        }
        let limits = &self.inner.limits;
        let bound = match err.kind() {
            minijinja::ErrorKind::OutOfFuel => Some(limits.steps_bound(items)),
            minijinja::ErrorKind::WriteFailure => Some(Bound::Output {
                max: limits.max_output_bytes,
            }),
            _ if err.to_string().contains("recursion limit") => Some(Bound::Recursion {
                depth: limits.recursion,
            }),
            _ => None,
        };
        let inner = &self.inner;
        let hint = bound.map(|bound| bound.message());
        let mapped = map_error(
            err,
            &inner.source,
            &inner.prepared,
            &inner.rewritten,
            hint.as_deref(),
        );
        RenderError { bound, ..mapped }
    }

    /// The error for a render stopped from outside the template's logic.
    fn stopped(&self, stop: Stop, shared: &Shared, items: usize) -> RenderError {
        let limits = &self.inner.limits;
        match stop {
            Stop::Cancelled => RenderError::cancelled(),
            Stop::Deadline => {
                // The bound this render was given, which the caller's base set.
                let applied = shared.deadline().map_or(*limits, |d| d.limits);
                RenderError::bounded(RenderErrorKind::Timeout, applied.deadline_bound(items))
            }
            Stop::Memory => {
                RenderError::bounded(RenderErrorKind::Limit, limits.memory_bound(shared.memory()))
            }
        }
    }

    /// How long a render of `items` input items is expected to take, going by the last
    /// render of this template (zero before the first).
    pub(crate) fn expected_render_time(&self, items: usize) -> Duration {
        let per_item = self.inner.last_nanos_per_item.load(Ordering::Relaxed);
        Duration::from_nanos(per_item.saturating_mul(items.max(1) as u64))
    }

    /// Fuel the most recent successful render used (see [`Limits::fuel`]).
    pub fn last_fuel_used(&self) -> u64 {
        self.inner.last_fuel.load(Ordering::Relaxed)
    }

    /// The bounds this template was compiled with.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The source as MiniJinja parses it, before the AST-guided rewrites: literals
    /// decoded, `{% generation %}` turned into a call block. What the inspector analyses.
    pub fn prepared_source(&self) -> &str {
        &self.inner.prepared.text
    }

    /// The template as the user wrote it, newlines normalized: the text error positions
    /// refer to.
    pub fn source(&self) -> &str {
        &self.inner.source
    }
}

/// The text MiniJinja compiles for `source`: prepared (see
/// [`CompiledTemplate::prepared_source`]), parsed and passed through chatplate's
/// AST-guided rewrites ([`rewrite`]), without compiling it. For benchmarks of the
/// rewrite pass and for debugging a rewrite.
#[doc(hidden)]
pub fn rewritten_source(source: &str) -> String {
    let source = source::normalize_newlines(source);
    let (prepared, helpers) = source::prepare(&source);
    let ast = minijinja::machinery::parse(&prepared.text, TEMPLATE_NAME, syntax_config()).ok();
    rewrite::rewrite(&prepared.text, ast.as_ref(), &helpers).text
}

/// Jinja2's compile-time check for unknown filters and tests (see [`assertions`]), with
/// the offset mapped to the user's source.
fn unknown_names(
    prepared: &source::Prepared,
    ast: &minijinja::machinery::ast::Stmt,
) -> Option<(String, usize)> {
    let (message, offset) = assertions::check(ast)?;
    Some((message, prepared.original_offset(offset)))
}

/// Converts a MiniJinja error, mapping its position back through both rewrites to the
/// user's own source.
fn map_error(
    err: &minijinja::Error,
    source: &str,
    prepared: &source::Prepared,
    rewritten: &rewrite::Rewritten,
    limit_hint: Option<&str>,
) -> RenderError {
    let to_original = |offset| prepared.original_offset(rewritten.original_offset(offset));
    RenderError::from_minijinja(err, source, &to_original, limit_hint)
}

/// The prompt, cut where the continued message ends when one is continued.
fn finish(
    rendered: Result<String, RenderError>,
    continued: Option<String>,
) -> Result<String, RenderError> {
    match (rendered, continued) {
        (Ok(prompt), Some(final_text)) => continuation::cut_at_tag(prompt, &final_text),
        (result, _) => result,
    }
}

/// Messages as transformers hands them to the template, as template values.
fn message_values(messages: &[serde_json::Value]) -> Value {
    messages.iter().map(conversation::message_value).collect()
}

/// transformers' Jinja2 syntax settings (`trim_blocks`, `lstrip_blocks`), for parsing a
/// template's syntax tree the way the engine compiles it.
pub fn syntax_config() -> minijinja::syntax::SyntaxConfig {
    minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .expect("default delimiters are valid")
}

/// The variables the template sees: `messages`, `tools`, `documents`,
/// `add_generation_prompt`, then every extra variable (bos/eos tokens included).
fn build_context(
    conversation: &Conversation,
    messages: Value,
    add_generation_prompt: bool,
) -> Result<Value, RenderError> {
    let reserved = ["messages", "tools", "documents", "add_generation_prompt"];
    if let Some(clash) = conversation
        .variables
        .keys()
        .find(|key| reserved.contains(&key.as_str()))
    {
        return Err(RenderError::input(format!(
            "variable {clash:?} is set by chatplate itself; edit it in the conversation instead"
        )));
    }
    let optional_list = |list: &Option<Vec<serde_json::Value>>| match list {
        Some(items) => items.iter().map(json_to_value).collect(),
        None => python_none(),
    };
    let mut pairs: Vec<(Value, Value)> = vec![
        ("messages".into(), messages),
        ("tools".into(), optional_list(&conversation.tools)),
        ("documents".into(), optional_list(&conversation.documents)),
        (
            "add_generation_prompt".into(),
            Value::from(add_generation_prompt),
        ),
    ];
    for (key, value) in &conversation.variables {
        pairs.push((Value::from(key.as_str()), json_to_value(value)));
    }
    Ok(data::dict(pairs))
}

mod continuation;

#[cfg(test)]
mod tests {
    /// Library users share one compiled template across threads.
    #[test]
    fn compiled_templates_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::CompiledTemplate>();
        shareable::<super::RenderError>();
    }
}
