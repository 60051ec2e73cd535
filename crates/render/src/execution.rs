//! Running a compiled template on the current thread inside a render scope, and turning
//! what stopped it (a MiniJinja error, a limit, the deadline, a cancel) into a
//! [`RenderError`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::civil::DateTime;
use minijinja::value::Value;

use crate::compiled::{map_error, TEMPLATE_NAME};
use crate::scope::{self, Scope, Shared, Stop};
use crate::{
    environment, generation, undefined, Bound, CancelToken, CompiledTemplate, RenderError,
    RenderErrorKind,
};

impl CompiledTemplate {
    /// Runs the template on this thread, inside a render scope (see [`scope`]).
    pub(crate) fn run(
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
    pub(crate) fn run_recording(
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
    pub(crate) fn stopped(&self, stop: Stop, shared: &Shared, items: usize) -> RenderError {
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
}
