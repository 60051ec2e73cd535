//! The compiled template: one sandboxed MiniJinja environment per template, built from
//! the prepared and rewritten source, and what it tells about itself (its limits, its
//! source, its globals). Rendering it lives in `renders`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use minijinja::Environment;

use crate::{
    assertions, environment, has_generation_block, has_generation_tag, limits, rewrite, source,
    tags, watchdog, Limits, RenderError, RenderErrorKind,
};

/// Name under which the template is registered in its environment.
pub(crate) const TEMPLATE_NAME: &str = "chat_template";

/// Deepest expression nesting compiled (see [`CompiledTemplate::compile`]). MiniJinja's
/// compile time grows faster than the square of an operator chain's length, so this
/// also bounds compile time (BENCHMARKS.md, compile).
pub const MAX_EXPRESSION_DEPTH: usize = 12_000;

/// A chat template compiled into its own sandboxed environment. Cloning is cheap (the
/// compiled template is shared).
#[derive(Clone)]
pub struct CompiledTemplate {
    pub(crate) inner: Arc<Compiled>,
}

/// What the clones of a [`CompiledTemplate`] share.
pub(crate) struct Compiled {
    pub(crate) env: Environment<'static>,
    /// The user's source, newlines normalized: what error positions refer to.
    pub(crate) source: String,
    pub(crate) prepared: source::Prepared,
    pub(crate) rewritten: rewrite::Rewritten,
    pub(crate) limits: Limits,
    pub(crate) last_fuel: AtomicU64,
    /// The last prompt's length: the next render's output starts with that much room
    /// (renders of one template are mostly alike), instead of growing to it by doubling.
    pub(crate) last_output_len: AtomicUsize,
    /// The last finished render's time per input item, in nanoseconds: when the next
    /// one's answer is due (see `watchdog`).
    pub(crate) last_nanos_per_item: AtomicU64,
    /// The last shared conversation's template values (see
    /// [`CompiledTemplate::shared_input`]).
    pub(crate) converted: std::sync::Mutex<Option<crate::context::Converted>>,
}

impl std::fmt::Debug for CompiledTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTemplate")
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
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
                converted: std::sync::Mutex::new(None),
            }),
        })
    }

    /// Whether transformers' test for a `{% generation %}` tag passes
    /// ([`has_generation_tag`]); when it fails transformers only logs a warning.
    pub fn has_generation_tag(&self) -> bool {
        has_generation_tag(&self.inner.source)
    }

    /// Whether the template has a `{% generation %}` block in any spelling
    /// ([`has_generation_block`]): what makes transformers' assistant mask non-zero.
    pub fn has_generation_block(&self) -> bool {
        has_generation_block(&self.inner.source)
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
pub(crate) fn map_error(
    err: &minijinja::Error,
    source: &str,
    prepared: &source::Prepared,
    rewritten: &rewrite::Rewritten,
    limit_hint: Option<&str>,
) -> RenderError {
    let to_original = |offset| prepared.original_offset(rewritten.original_offset(offset));
    RenderError::from_minijinja(err, source, &to_original, limit_hint)
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
