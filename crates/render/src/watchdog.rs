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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::civil::DateTime;
use minijinja::value::Value;

use super::affinity;
use super::memory;
use super::scope::{Deadline, Shared, Stop};
use super::threads;
use super::{CompiledTemplate, Conversation, RenderControl, RenderError};

/// Stack reserved for each render thread.
pub(crate) const RENDER_STACK_BYTES: usize = 256 << 20;

/// How often a waiting caller looks at the cancel token.
const POLL: Duration = Duration::from_millis(10);

/// How long before a render's expected end its waiting caller wakes up to look for the
/// answer (it looks for twice as long), at most: see [`wake_ahead`].
const WAKE_AHEAD: Duration = Duration::from_micros(200);

/// The share of a render's expected time its waiting caller may spend looking for the
/// answer awake: one part in this many.
const LOOK_SHARE: u32 = 32;

/// How long before a render expected to take `expected` its caller wakes up to look for
/// the answer awake (for twice as long): [`WAKE_AHEAD`], but never more than
/// 1/[`LOOK_SHARE`] of the render. The look runs on a second core beside the render, so
/// all of it is CPU the caller spends on top of the render's own: a fixed 400 µs look
/// beside a 1.4 ms render (1,000 messages) made every render cost a quarter more CPU
/// than the bare engine's (issue 38), and beside a 150 µs one (100 messages) about
/// twice. Bounded by the render's length, the look costs at most 1/16 of it; renders
/// up to [`SHORT_RENDER`] keep the full look.
fn wake_ahead(expected: Duration) -> Duration {
    if expected <= SHORT_RENDER {
        WAKE_AHEAD
    } else {
        WAKE_AHEAD.min(expected / LOOK_SHARE)
    }
}

/// Renders expected to take at most this long are looked for awake: from the start for
/// [`threads::SPIN`], and [`WAKE_AHEAD`] before their end. A sleep and its wake-up cost
/// about 40 µs of CPU on each side of the handoff here (two futex calls, and a thread
/// woken on a colder core); a look costs the render's whole length on the second core.
/// Measured on a quiet machine (load about 1), CPU per render through `bench`, looking
/// against sleeping: 10 messages (20-30 µs renders) 18-36 µs against 40-54 µs; Llama 3.1
/// at 30 messages (about 50 µs) 60-68 against 100-102; Nemotron 3 at 30 (about 100 µs)
/// 200-236 against 138-152; Qwen3 at 100 (about 150 µs) 218-266 against 180-194. The
/// look pays below about 60 µs, so only there.
const SHORT_RENDER: Duration = Duration::from_micros(60);

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
    template.render_controlled(conversation, &control)
}

/// The machine's cores: a caller only looks for its answer awake while a core is free
/// for it (the renders running have the others).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
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

/// What a render thread renders.
pub(super) enum RenderInput {
    /// Template values the caller built (from a borrowed conversation, or the
    /// inspector's prefix renders, which share message values between many renders).
    Values {
        /// The template's variables.
        context: Value,
        /// The render's "now".
        clock: DateTime,
        /// The text being continued (`continue_final_message`), to cut the prompt at.
        continued: Option<String>,
    },
    /// A conversation the render thread turns into template values itself: values
    /// built on the thread that reads them are in that core's cache, where values
    /// built by the caller would first have to cross from the caller's core (about
    /// 5% of a 1,000-message render).
    Conversation(Arc<Conversation>),
}

/// What goes back to the caller with the answer, for the caller to free: memory
/// allocated by one thread and freed by another stays in the freeing thread's cache,
/// and the allocating thread's next use would take the slow path of the allocator.
type GiveBack = Box<dyn std::any::Any + Send>;

impl RenderInput {
    /// The input's template values, its clock and the continued text
    /// (`continue_final_message`), built on the render thread, and what goes back.
    fn prepare(self, template: &CompiledTemplate) -> (Result<super::Input, RenderError>, GiveBack) {
        match self {
            RenderInput::Values {
                context,
                clock,
                continued,
            } => {
                let values: GiveBack = Box::new(context.clone());
                let input = super::Input {
                    context,
                    clock,
                    continued,
                };
                (Ok(input), values)
            }
            // A conversation no one else holds gives up its messages as they are
            // converted, so its JSON and its values are not both held in full.
            RenderInput::Conversation(conversation) => match Arc::try_unwrap(conversation) {
                Ok(mut conversation) => {
                    let messages = std::mem::take(&mut conversation.messages);
                    let input = template.input_from(
                        &conversation,
                        super::context::MessageSource::Owned(messages),
                    );
                    (input, Box::new(conversation))
                }
                Err(shared) => (template.shared_input(&shared), Box::new(shared)),
            },
        }
    }
}

/// Runs the render on a render thread of its own (a fresh one or one kept from an
/// earlier render, see [`super::threads`]) and waits for it, the control's token and its
/// deadline, whichever comes first. `items` (messages, tools and documents) sets the
/// step budget and the deadline's growth.
pub(super) fn run_on_own_thread(
    template: &CompiledTemplate,
    input: RenderInput,
    items: usize,
    control: &RenderControl,
) -> Result<String, RenderError> {
    run_recording_on_own_thread(template, input, items, control, false).map(|(prompt, _)| prompt)
}

/// [`run_on_own_thread`], recording the `{% generation %}` blocks when `record` is set.
pub(super) fn run_recording_on_own_thread(
    template: &CompiledTemplate,
    input: RenderInput,
    items: usize,
    control: &RenderControl,
    record: bool,
) -> Result<(String, Vec<super::generation::RawSpan>), RenderError> {
    // The deadline grows with the input; fixed now, for both sides.
    let deadline = control
        .base_deadline(&template.limits())
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
    // Whether this caller is looking for the answer awake (see `threads::Job`).
    let looking = Arc::new(AtomicBool::new(false));
    let caller_looking = Arc::clone(&looking);
    let job = Box::new(move |offer_thread: &mut dyn FnMut()| {
        let active = Active::start();
        let (result, give_back) = catch_unwind(AssertUnwindSafe(|| {
            let (prepared, give_back) = input.prepare(&worker);
            // The conversation's values are the input's, not the template's doing: the
            // hard cap counts from here.
            memory::watch_this_thread(hard_cap, worker_shared.flag());
            let rendered = prepared.and_then(|input| {
                let (prompt, spans) = worker.run_recording(
                    input.context,
                    items,
                    input.clock,
                    &worker_control.cancel,
                    &worker_shared,
                    record,
                )?;
                Ok((super::finish(Ok(prompt), input.continued)?, spans))
            });
            (rendered, Some(give_back))
        }))
        .unwrap_or_else(|payload| (Err(panicked(&*payload)), None));
        memory::unwatch_this_thread();
        // Ended before it answers, so a caller that waited sees it ended.
        drop(active);
        offer_thread();
        // The caller may have stopped waiting; nothing to report then.
        let _ = sender.send((result, give_back));
        caller_looking.load(Ordering::Relaxed)
    });
    let started = Instant::now();
    // Going by the template's last render (none yet: zero).
    let expected = template.expected_render_time(items);
    // A render known to be short, alone, runs on this caller's core (see `affinity`);
    // held there until it answers.
    let beside = (!expected.is_zero() && expected <= affinity::BESIDE && active_renders() == 0)
        .then(affinity::Beside::here)
        .flatten();
    let core = beside.as_ref().map(affinity::Beside::core);
    if threads::run(job, RENDER_STACK_BYTES, core).is_err() {
        return Err(RenderError::input("could not start a render thread"));
    }
    // A short render (or one of unknown length) may answer before a sleeping caller
    // would even have been woken (not when the deadline is nearer than the look: it
    // must be seen on time). A longer one is not looked for now: the look would only be
    // CPU spent beside it (see `wake_ahead`). Nor is a render beside its caller: on
    // their one core, the caller's sleep is what lets the render run.
    let may_look =
        beside.is_none() && deadline.is_none_or(|d| d.at > Instant::now() + threads::SPIN);
    let look_now = may_look && expected <= SHORT_RENDER;
    looking.store(look_now, Ordering::Relaxed);
    if let Some(Ok((result, give_back))) = look_now.then(|| threads::recv_soon(&receiver)).flatten()
    {
        drop(give_back);
        return result;
    }
    looking.store(false, Ordering::Relaxed);
    // A longer render: a sleeping core takes a while to wake (on a virtual machine, a
    // tenth of a millisecond or more), so the caller wakes itself a little before the
    // answer is due and looks for it awake, for a bounded share of the render.
    let ahead = wake_ahead(expected);
    let mut wake_at = (may_look && !ahead.is_zero())
        .then(|| started + expected)
        .and_then(|due| due.checked_sub(ahead))
        .filter(|at| *at > Instant::now());
    loop {
        let mut wait = match deadline {
            Some(deadline) => deadline
                .at
                .saturating_duration_since(Instant::now())
                .min(POLL),
            None => POLL,
        };
        if let Some(at) = wake_at {
            wait = wait.min(at.saturating_duration_since(Instant::now()));
        }
        let answer = match receiver.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) if wake_at.is_some_and(|at| Instant::now() >= at) => {
                wake_at = None;
                let spare_core = active_renders() < cores();
                looking.store(spare_core, Ordering::Relaxed);
                let answer = spare_core
                    .then(|| threads::recv_within(&receiver, 2 * ahead))
                    .flatten();
                // Found, the caller is still awake for the worker to see.
                if answer.is_none() {
                    looking.store(false, Ordering::Relaxed);
                }
                answer.map_or(Err(RecvTimeoutError::Timeout), |answer| {
                    answer.map_err(|_| RecvTimeoutError::Disconnected)
                })
            }
            answer => answer,
        };
        match answer {
            Ok((result, give_back)) => {
                drop(give_back);
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
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    RenderError::input(format!(
        "internal error while rendering: {message} (please report this template and input)"
    ))
}
