//! The rendering engine: one configured MiniJinja environment that behaves like
//! transformers' `apply_chat_template` (Python Jinja2 in an immutable sandbox).
//!
//! Compile once with [`CompiledTemplate::compile`], render many times with
//! [`CompiledTemplate::render`]. Nothing here knows about terminals or files.

mod cancel;
mod conversation;
mod data;
mod error;
mod filters;
mod generators;
mod globals;
mod literals;
mod markup;
mod methods;
mod none;
mod percent;
mod predicates;
mod prefix;
mod pyfloat;
mod pyjson;
mod pyrepr;
mod pystr;
mod pytype;
pub(crate) mod rewrite;
mod source;
mod textfilters;
mod watchdog;

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use jiff::civil::DateTime;
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};

pub use cancel::CancelToken;
pub use conversation::{effective_messages, ContinueFinal, Conversation, CONTINUE_TAG};
pub use error::{RenderError, RenderErrorKind, SourcePosition};
pub use prefix::PreparedMessages;
pub use pyjson::{dumps as python_json_dumps, DumpOptions};
pub use source::prepare as prepare_source;
pub use watchdog::render_with_deadline;

use data::json_to_value;
use none::python_none;

/// Name under which the template is registered in its environment.
const TEMPLATE_NAME: &str = "chat_template";

/// Bounds on what an untrusted template may do in one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MiniJinja fuel: roughly one unit per executed instruction.
    pub fuel: u64,
    /// Largest prompt, in bytes.
    pub max_output_bytes: usize,
    /// Deepest macro / include / loop recursion.
    pub recursion: usize,
    /// Wall-clock bound for callers that use [`render_with_deadline`].
    pub deadline: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        // Fuel is MiniJinja's work meter: 1 per instruction, and 1/64 per byte a string or
        // list operation allocates. A 1,000-message Llama 3.1 render uses about 43,000, so
        // 5,000,000 leaves a hundredfold headroom while capping what one render can
        // allocate near 320 MB and stopping an endless loop in well under a second.
        Limits {
            fuel: 5_000_000,
            max_output_bytes: 32 * 1024 * 1024,
            recursion: 200,
            deadline: std::time::Duration::from_secs(5),
        }
    }
}

/// A chat template compiled into its own sandboxed environment.
pub struct CompiledTemplate {
    env: Environment<'static>,
    prepared_source: String,
    rewritten: rewrite::Rewritten,
    limits: Limits,
    last_fuel: AtomicU64,
}

impl std::fmt::Debug for CompiledTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTemplate")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl CompiledTemplate {
    /// Parses `source` with transformers' settings; syntax errors carry their position.
    pub fn compile(source: &str, limits: Limits) -> Result<Self, RenderError> {
        let prepared_source = source::prepare(source);
        let mut env = build_environment(limits);
        let rewritten = rewrite::rewrite(&prepared_source, env.syntax());
        env.add_template_owned(TEMPLATE_NAME, rewritten.text.clone())
            .map_err(|err| {
                let to_original = |offset| rewritten.original_offset(offset);
                RenderError::from_minijinja(&err, &prepared_source, &to_original, None)
            })?;
        Ok(CompiledTemplate {
            env,
            prepared_source,
            rewritten,
            limits,
            last_fuel: AtomicU64::new(0),
        })
    }

    /// Renders `conversation` exactly as `apply_chat_template(..., tokenize=False)` would.
    pub fn render(&self, conversation: &Conversation) -> Result<String, RenderError> {
        self.render_cancellable(conversation, &CancelToken::new())
    }

    /// Like [`CompiledTemplate::render`], but gives up with
    /// [`RenderErrorKind::Cancelled`] once `cancel` is cancelled.
    pub fn render_cancellable(
        &self,
        conversation: &Conversation,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        if cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let result = self.render_uncancelled(conversation);
        if cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        result
    }

    /// The names of the environment's globals (`raise_exception`, `namespace`, the
    /// helpers the source rewrites call, ...): what a template reads without them
    /// coming from its context.
    pub fn global_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.env.globals().map(|(name, _)| name.into()).collect();
        names.push(globals::CLOCK_VARIABLE.into());
        names
    }

    fn render_uncancelled(&self, conversation: &Conversation) -> Result<String, RenderError> {
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
        let Some(field) = continuing else {
            return self.render_messages(conversation, &conversation.messages);
        };
        let mut messages = effective_messages(&conversation.messages);
        let continued = Some(continuation::tag_final_message(
            &mut messages,
            field,
            &self.prepared_source,
        )?);
        let rendered = self.render_messages(conversation, &messages)?;
        match continued {
            Some(final_text) => continuation::cut_at_tag(rendered, &final_text),
            None => Ok(rendered),
        }
    }

    fn render_messages(
        &self,
        conversation: &Conversation,
        messages: &[serde_json::Value],
    ) -> Result<String, RenderError> {
        let messages = messages.iter().map(conversation::message_value).collect();
        self.render_with(conversation, messages, conversation.add_generation_prompt)
    }

    /// Renders with `messages` already converted to template values.
    fn render_with(
        &self,
        conversation: &Conversation,
        messages: Value,
        add_generation_prompt: bool,
    ) -> Result<String, RenderError> {
        let context = build_context(conversation, messages, add_generation_prompt)?;
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|err| self.error(&err, None))?;
        let mut output = LimitedWriter::new(self.limits.max_output_bytes);
        let fuel_used = match template.render_captured_to(context, &mut output) {
            Ok(captured) => captured.state().fuel_levels().map_or(0, |(used, _)| used),
            Err(err) => {
                let hint = limit_hint(&err, &self.limits);
                return Err(self.error(&err, hint.as_deref()));
            }
        };
        self.last_fuel.store(fuel_used, Ordering::Relaxed);
        String::from_utf8(output.buffer)
            .map_err(|_| RenderError::input("the template produced invalid UTF-8"))
    }

    /// A MiniJinja error with its position mapped back to the user's source.
    fn error(&self, err: &minijinja::Error, limit_hint: Option<&str>) -> RenderError {
        let to_original = |offset| self.rewritten.original_offset(offset);
        RenderError::from_minijinja(err, &self.prepared_source, &to_original, limit_hint)
    }

    /// Fuel the most recent successful render used (see [`Limits::fuel`]).
    pub fn last_fuel_used(&self) -> u64 {
        self.last_fuel.load(Ordering::Relaxed)
    }

    /// The bounds this template was compiled with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The source as compiled (newlines normalized), which error positions refer to.
    pub fn prepared_source(&self) -> &str {
        &self.prepared_source
    }
}

fn limit_hint(err: &minijinja::Error, limits: &Limits) -> Option<String> {
    match err.kind() {
        minijinja::ErrorKind::OutOfFuel => Some(format!(
            "the template ran more than {} steps (possible endless loop)",
            limits.fuel
        )),
        minijinja::ErrorKind::WriteFailure => Some(format!(
            "the prompt grew beyond {} bytes",
            limits.max_output_bytes
        )),
        _ => None,
    }
}

/// transformers' Jinja2 syntax settings (`trim_blocks`, `lstrip_blocks`), for parsing a
/// template's syntax tree the way the engine compiles it.
pub fn syntax_config() -> SyntaxConfig {
    SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .expect("default delimiters are valid")
}

fn build_environment(limits: Limits) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(syntax_config());
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(|out, _state, value| {
        // Strings are written as they are; everything else the way Python's str() prints.
        match value.as_str() {
            Some(text) if value.kind() == minijinja::value::ValueKind::String => {
                out.write_str(text)?
            }
            _ if value.is_undefined() => {}
            _ => out.write_str(&pyrepr::to_str(value))?,
        }
        Ok(())
    });
    env.set_unknown_method_callback(methods::call_method);
    filters::register(&mut env);
    generators::register(&mut env);
    textfilters::register(&mut env);
    predicates::register(&mut env);
    globals::register(&mut env);
    markup::register(&mut env);
    percent::register(&mut env);
    rewrite::register(&mut env);
    env
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
    pairs.push((
        Value::from(globals::CLOCK_VARIABLE),
        Value::from(clock_text(conversation.clock)),
    ));
    Ok(data::dict(pairs))
}

fn clock_text(clock: Option<DateTime>) -> String {
    clock
        .unwrap_or_else(|| jiff::Zoned::now().datetime())
        .to_string()
}

mod continuation;

/// An `io::Write` that refuses to grow past a byte budget.
struct LimitedWriter {
    buffer: Vec<u8>,
    budget: usize,
}

impl LimitedWriter {
    fn new(budget: usize) -> Self {
        LimitedWriter {
            buffer: Vec::new(),
            budget,
        }
    }
}

impl io::Write for LimitedWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buffer.len() + bytes.len() > self.budget {
            return Err(io::Error::other("output limit"));
        }
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
