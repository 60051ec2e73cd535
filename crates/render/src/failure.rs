//! What a failed render reports: the first failure is examined more closely before it is
//! turned into a [`RenderError`], so its message can be Jinja2's. The extra runs stay
//! inside the failed render's scope and bounds, and only failed renders pay for them.

use minijinja::value::Value;
use minijinja::Environment;

use super::environment::LimitedWriter;
use super::scope::Shared;
use super::{diagnose, undefined, CompiledTemplate, RenderError, RenderErrorKind, TEMPLATE_NAME};

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
        undefined::reset();
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
        if let Some(python) = self.operand_types(err, &env, context, items, shared) {
            (error.exception, error.message) = (python.exception, python.message);
        }
        error
    }

    /// Renders once more with the failing operator routed through a helper that knows
    /// the operands' Python types (see [`diagnose`]); its `TypeError`, if it raised one.
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
        (python.exception == Some("TypeError")).then_some(python)
    }
}
