//! Renders on a thread of their own, so the caller always gets an answer in time.
//!
//! The render checks at every checkpoint (see [`super::scope`]) whether it was
//! cancelled, ran past its deadline or went over its byte budget, and stops there,
//! freeing what it built. The caller does not wait for that: it returns as soon as the
//! render finishes or the control says stop, so even a render stuck in an engine loop
//! without checkpoints cannot hold it up (unless its token is
//! [`CancelToken::waiting`](super::CancelToken::waiting): then it returns once the
//! render has stopped). Such a render is still bounded by its step
//! budget, and on this thread by the memory meter's hard cap (see [`super::memory`]).
//!
//! The thread has a large stack: deeply nested templates and data recurse in the
//! parser and the engine, and an overflow would abort the process. The memory is only
//! reserved; what is used is all that is ever touched.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::civil::DateTime;
use minijinja::value::Value;

use super::memory;
use super::scope::{Deadline, Shared, Stop};
use super::threads;
use super::{CompiledTemplate, Conversation, RenderControl, RenderError};

/// Stack reserved for each render thread.
pub(crate) const RENDER_STACK_BYTES: usize = 256 << 20;

/// How often a waiting caller looks at the cancel token.
const POLL: Duration = Duration::from_millis(10);

/// Render threads that have not finished yet.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// How many render threads are still running, including renders whose caller has
/// stopped waiting (they end at their next checkpoint).
pub fn active_renders() -> usize {
    ACTIVE.load(Ordering::SeqCst)
}

/// Renders `conversation` on a thread of its own, giving up after `deadline` grown for
/// the conversation ([`super::Limits::deadline_for`]): the caller gets
/// [`super::RenderErrorKind::Timeout`] then, and the render stops at its next
/// checkpoint.
pub fn render_with_deadline(
    template: &Arc<CompiledTemplate>,
    conversation: Conversation,
    deadline: Duration,
) -> Result<String, RenderError> {
    let control = RenderControl::default().with_deadline(deadline);
    template.render_controlled(&conversation, &control)
}

/// Counts a render thread from its start to its end.
struct Active;

impl Active {
    fn start() -> Self {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs the render on a render thread of its own (a fresh one or one kept from an
/// earlier render, see [`super::threads`]) and waits for it, the control's token and its
/// deadline, whichever comes first.
pub(super) fn run_on_own_thread(
    template: &CompiledTemplate,
    context: Value,
    items: usize,
    clock: DateTime,
    control: &RenderControl,
) -> Result<String, RenderError> {
    run_recording_on_own_thread(template, context, items, clock, control, false)
        .map(|(prompt, _)| prompt)
}

/// [`run_on_own_thread`], recording the `{% generation %}` blocks when `record` is set.
pub(super) fn run_recording_on_own_thread(
    template: &CompiledTemplate,
    context: Value,
    items: usize,
    clock: DateTime,
    control: &RenderControl,
    record: bool,
) -> Result<(String, Vec<super::generation::RawSpan>), RenderError> {
    // The deadline grows with the input; fixed now, for both sides.
    let deadline = control
        .deadline
        .and_then(|base| Deadline::start(template.limits().with_deadline(base), items));
    let shared = Arc::new(Shared::new(deadline));
    if let Some(written) = &control.written {
        shared.publish_written(Arc::clone(written));
    }
    // One answer, so one slot: an unbounded channel allocates (and zeroes) a block of
    // 31 answer-sized slots per render.
    let (sender, receiver) = mpsc::sync_channel(1);
    let worker = template.clone();
    let worker_shared = Arc::clone(&shared);
    let worker_control = control.clone();
    let hard_cap = hard_cap(template.limits().max_memory_bytes);
    let job = Box::new(move || {
        let active = Active::start();
        // The conversation's values go back with the answer, so the caller's thread,
        // which allocated them, frees them too: memory freed on another thread stays
        // in that thread's cache, and the caller's next conversion would have to take
        // the slow path of the allocator for every value.
        let values = context.clone();
        memory::watch_this_thread(hard_cap, worker_shared.flag());
        let result = catch_unwind(AssertUnwindSafe(|| {
            worker.run_recording(
                context,
                items,
                clock,
                &worker_control.cancel,
                &worker_shared,
                record,
            )
        }))
        .unwrap_or_else(|payload| Err(panicked(&*payload)));
        memory::unwatch_this_thread();
        // Ended before it answers, so a caller that waited sees it ended.
        drop(active);
        // The caller may have stopped waiting; nothing to report then.
        let _ = sender.send((result, values));
    });
    if threads::run(job, RENDER_STACK_BYTES).is_err() {
        return Err(RenderError::input("could not start a render thread"));
    }
    // A short render answers before a sleeping caller would even have been woken (not
    // when the deadline is nearer than the look: it must be seen on time).
    let far = deadline.is_none_or(|d| d.at > Instant::now() + threads::SPIN);
    if let Some(Ok((result, values))) = far.then(|| threads::recv_soon(&receiver)).flatten() {
        drop(values);
        return result;
    }
    loop {
        let wait = match deadline {
            Some(deadline) => deadline
                .at
                .saturating_duration_since(Instant::now())
                .min(POLL),
            None => POLL,
        };
        match receiver.recv_timeout(wait) {
            Ok((result, values)) => {
                drop(values);
                return result;
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(RenderError::input(
                    "internal error while rendering (please report this template and input)",
                ))
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        let stop = if control.cancel.is_cancelled() {
            Some(Stop::Cancelled)
        } else if deadline.is_some_and(|d| Instant::now() >= d.at) {
            Some(Stop::Deadline)
        } else {
            shared.stop().filter(|s| *s == Stop::Memory)
        };
        if let Some(stop) = stop {
            // Tell the render (it stops at its next checkpoint) and answer now, or once
            // it has stopped when the caller counts running renders.
            shared.set_stop(stop);
            if control.cancel.waits() && stop != Stop::Memory {
                wait_until_ended(&receiver, &shared);
            }
            return Err(template.stopped(stop, &shared, items));
        }
    }
}

/// Waits for a stopped render's thread to end (it answers at its next checkpoint), or to
/// be parked for good by the memory meter.
fn wait_until_ended<T>(receiver: &mpsc::Receiver<T>, shared: &Shared) {
    while let Err(RecvTimeoutError::Timeout) = receiver.recv_timeout(POLL) {
        if shared.parked() {
            return;
        }
    }
}

/// How much a render thread may hold before the allocator parks it: its byte budget,
/// plus as much again for what the budget does not see (the prompt being written,
/// the engine's own bookkeeping).
fn hard_cap(max_memory: usize) -> usize {
    max_memory.saturating_mul(2).max(64 << 20)
}

fn panicked(payload: &(dyn std::any::Any + Send)) -> RenderError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    RenderError::input(format!(
        "internal error while rendering: {message} (please report this template and input)"
    ))
}
