//! What a failed render reports: the first failure is examined more closely before it is
//! turned into a [`RenderError`], so its message can be Jinja2's. The extra runs stay
//! inside the failed render's scope and bounds, and only failed renders pay for them.

use minijinja::value::Value;
use minijinja::Environment;

use super::environment::LimitedWriter;
use super::error::full_detail;
use super::scope::Shared;
use super::{
    diagnose, lookups, pyerror, undefined, CompiledTemplate, RenderError, RenderErrorKind,
    TEMPLATE_NAME,
};

impl CompiledTemplate {
    /// The error of a failed render. A runtime error is rendered again with MiniJinja's
    /// debug mode on, in which undefined values remember the expression that produced
    /// them; Jinja2's hints (`'dict object' has no attribute 'content'`) are built from
    /// that. Debug mode slows every render down, so only failed ones pay for it. Limit,
    /// stop and raise errors are answered from the first run.
    pub(super) fn render_error(
        &self,
        env: &Environment<'static>,
        err: &minijinja::Error,
        context: Value,
        items: usize,
        shared: &Shared,
    ) -> RenderError {
        let first = self.error(err, items, shared);
        if first.kind != RenderErrorKind::Runtime {
            return first;
        }
        let mut env = env.clone();
        env.set_debug(true);
        undefined::start_noting();
        let mut output = LimitedWriter::new(self.inner.limits.max_output_bytes);
        let again = env.get_template(TEMPLATE_NAME).and_then(|template| {
            template
                .render_captured_to(context.clone(), &mut output)
                .map(drop)
        });
        if shared.stop().is_some() {
            return first;
        }
        let err = match &again {
            Err(again) if again.kind() == err.kind() => again,
            _ => err,
        };
        let mut error = self.error(err, items, shared);
        if let Some(hint) = self.lookup_hint(&error, err, &env, context.clone(), shared) {
            error.message = hint;
        }
        if let Some(python) = self.operand_types(err, &env, context, items, shared) {
            (error.exception, error.message) = (python.exception, python.message);
        }
        error
    }

    /// For an undefined value made by a lookup (`x.content[0].text`): renders once more
    /// with every lookup noting the type of the object it missed on (see [`lookups`]),
    /// and returns Jinja2's hint built from that (`'str object' has no attribute
    /// 'text'`).
    fn lookup_hint(
        &self,
        error: &RenderError,
        err: &minijinja::Error,
        env: &Environment<'static>,
        context: Value,
        shared: &Shared,
    ) -> Option<String> {
        if error.exception != Some("UndefinedError") {
            return None;
        }
        let detail = full_detail(err);
        let expr = pyerror::undefined_expression(&detail)?;
        if !undefined::is_lookup(expr) {
            return None;
        }
        let text = lookups::instrument(&self.inner.rewritten.text, env.syntax())?;
        let mut env = env.clone();
        lookups::register(&mut env);
        env.add_template_owned("diagnosis", text).ok()?;
        undefined::start_noting();
        let mut output = LimitedWriter::new(self.inner.limits.max_output_bytes);
        let rendered = env
            .get_template("diagnosis")
            .and_then(|template| template.render_captured_to(context, &mut output).map(drop));
        if shared.stop().is_some() || rendered.is_ok() {
            return None;
        }
        Some(undefined::hint(expr))
    }

    /// Renders once more with the failing operator routed through a helper that knows
    /// the operands' Python types (see [`diagnose`]); its `TypeError`, if it raised one,
    /// or the `UndefinedError` Python raises first for an undefined operand.
    fn operand_types(
        &self,
        err: &minijinja::Error,
        env: &Environment<'static>,
        context: Value,
        items: usize,
        shared: &Shared,
    ) -> Option<RenderError> {
        if !diagnose::needs_types(err) {
            return None;
        }
        let text = diagnose::instrument(&self.inner.rewritten.text, err.range()?, env.syntax())?;
        let mut env = env.clone();
        diagnose::register(&mut env);
        env.add_template_owned("diagnosis", text).ok()?;
        let mut output = LimitedWriter::new(self.inner.limits.max_output_bytes);
        let failed = env
            .get_template("diagnosis")
            .and_then(|template| template.render_captured_to(context, &mut output).map(drop))
            .err()?;
        if shared.stop().is_some() {
            return None;
        }
        let python = self.error(&failed, items, shared);
        matches!(python.exception, Some("TypeError" | "UndefinedError")).then_some(python)
    }
}
