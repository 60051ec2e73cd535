//! The render in progress on this thread: its cancel token, deadline, byte budget and
//! clock, reachable from chatplate's filters, functions and loop helper without
//! passing anything through MiniJinja.
//!
//! MiniJinja's fuel meter is internal: nothing outside can drain it. Instead every
//! checkpoint ([`tick`]) asks whether the render should stop (cancelled, past its
//! deadline, over its byte budget) and, if so, fails with an error and exhausts the
//! fuel so the engine stops at its very next instruction. Checkpoints run for every
//! loop item, every `{{ }}` and every chatplate filter, method and helper call, which is
//! everything a long or large render does. The reason is kept in a [`Shared`] the
//! caller can see, so the final error says what happened rather than "out of fuel".

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use jiff::civil::DateTime;
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::memory;
use super::{CancelToken, Limits};

/// Why a render was stopped from outside the template's own logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Its cancel token was cancelled.
    Cancelled = 1,
    /// It ran past its deadline.
    Deadline = 2,
    /// It held more memory than its byte budget.
    Memory = 3,
}

/// When a render must have finished: its base deadline grown for its input
/// ([`Limits::deadline_for`]), fixed when the render is asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    /// The instant the render is stopped at.
    pub(crate) at: Instant,
    /// The limits (with the caller's base deadline) it was computed from, so the
    /// timeout message names the bound applied.
    pub(crate) limits: Limits,
}

impl Deadline {
    /// The deadline of a render of `items` input items asked for now; `None` when it is
    /// too far away to represent (as good as none).
    pub(crate) fn start(limits: Limits, items: usize) -> Option<Self> {
        let at = Instant::now().checked_add(limits.deadline_for(items))?;
        Some(Deadline { at, limits })
    }
}

/// What the render thread and whoever waits for it share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    stop: AtomicU8,
    /// The largest allocation refused or the memory held when stopped, for the message.
    memory: AtomicUsize,
    /// When the render must have finished, if it has a deadline.
    deadline: Option<Deadline>,
    /// Where a traced render publishes how many bytes it has written (see `traced`).
    written: std::sync::OnceLock<Arc<AtomicUsize>>,
}

impl Shared {
    /// Shared state for a render with `deadline`.
    pub(crate) fn new(deadline: Option<Deadline>) -> Self {
        Shared {
            deadline,
            ..Shared::default()
        }
    }

    /// The render's deadline, if it has one.
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        self.deadline
    }

    /// Makes the render publish its output length to `written` after every write.
    pub(crate) fn publish_written(&self, written: Arc<AtomicUsize>) {
        let _ = self.written.set(written);
    }

    /// Where the render publishes its output length, if it is traced.
    pub(crate) fn written(&self) -> Option<Arc<AtomicUsize>> {
        self.written.get().cloned()
    }

    /// Why the render stopped, if it was stopped.
    pub(crate) fn stop(&self) -> Option<Stop> {
        match self.stop.load(Ordering::SeqCst) {
            1 => Some(Stop::Cancelled),
            2 => Some(Stop::Deadline),
            3 | memory::STOPPED_AT_CAP => Some(Stop::Memory),
            _ => None,
        }
    }

    /// Records the first reason only.
    pub(crate) fn set_stop(&self, stop: Stop) {
        let _ = self
            .stop
            .compare_exchange(0, stop as u8, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether the memory meter parked the render thread for good (it never ends).
    pub(crate) fn parked(&self) -> bool {
        self.stop.load(Ordering::SeqCst) == memory::STOPPED_AT_CAP
    }

    /// The flag the allocator sets when a render thread hits its hard cap.
    pub(crate) fn flag(&self) -> &AtomicU8 {
        &self.stop
    }

    /// Bytes involved in a memory stop.
    pub(crate) fn memory(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }
}

/// One render's bounds, as the checkpoints see them.
pub(crate) struct Scope {
    /// Shared with the caller.
    pub shared: Arc<Shared>,
    /// Asks the render to stop.
    pub cancel: CancelToken,
    /// Byte budget for what the template holds.
    pub max_memory: usize,
    /// The render's "now" for `strftime_now`.
    pub clock: DateTime,
    live_at_start: isize,
    ticks: Cell<u32>,
}

impl Scope {
    /// A scope starting now on this thread.
    pub(crate) fn new(
        shared: Arc<Shared>,
        cancel: CancelToken,
        max_memory: usize,
        clock: DateTime,
    ) -> Self {
        Scope {
            shared,
            cancel,
            max_memory,
            clock,
            live_at_start: memory::thread_live_bytes(),
            ticks: Cell::new(0),
        }
    }

    fn held(&self) -> usize {
        usize::try_from(memory::thread_live_bytes() - self.live_at_start).unwrap_or(0)
    }

    /// Whether the render must stop now, and why (recorded in `shared`).
    #[inline]
    fn should_stop(&self) -> Option<Stop> {
        if let Some(stop) = self.shared.stop() {
            return Some(stop);
        }
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        let stop = if self.cancel.is_cancelled() {
            Some(Stop::Cancelled)
        } else if self.held() > self.max_memory {
            self.shared.memory.store(self.held(), Ordering::Relaxed);
            Some(Stop::Memory)
        } else if ticks.is_multiple_of(64)
            && self.shared.deadline.is_some_and(|d| Instant::now() >= d.at)
        {
            Some(Stop::Deadline)
        } else {
            None
        };
        if let Some(stop) = stop {
            self.shared.set_stop(stop);
        }
        stop
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Makes `scope` the current render on this thread until the guard is dropped.
pub(crate) fn enter(scope: Scope) -> ScopeGuard {
    let previous = CURRENT.with(|c| c.replace(Some(scope)));
    ScopeGuard { previous }
}

/// Restores the previous scope (normally none) when dropped.
pub(crate) struct ScopeGuard {
    previous: Option<Scope>,
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let _ = CURRENT.try_with(|c| c.replace(previous));
    }
}

/// The error a stopped render fails with; the caller replaces it with the real
/// reason from [`Shared::stop`].
fn stopped(state: Option<&State>) -> Error {
    if let Some(state) = state {
        // Exhaust the fuel: whatever catches this error, the engine stops at its next
        // instruction.
        let _ = state.consume_fuel(u64::MAX);
    }
    Error::new(ErrorKind::InvalidOperation, "the render was stopped")
}

/// Whether the render on this thread is a traced one (its dicts may carry probes, see
/// `traced`): loops tell the messages they reach only then.
pub(crate) fn traced() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|scope| scope.shared.written.get().is_some())
    })
}

/// A checkpoint: fails when the current render must stop.
#[inline]
pub(crate) fn tick(state: Option<&State>) -> Result<(), Error> {
    let stop = CURRENT.with(|c| c.borrow().as_ref().and_then(Scope::should_stop));
    match stop {
        Some(_) => Err(stopped(state)),
        None => Ok(()),
    }
}

/// How many more bytes the current render may hold: its memory budget less what it
/// holds (without a render scope, the default budget). Field widths are checked
/// against it before any padding is built.
pub(crate) fn remaining_bytes() -> usize {
    CURRENT.with(|c| match c.borrow().as_ref() {
        Some(scope) => scope.max_memory.saturating_sub(scope.held()),
        None => super::Limits::default().max_memory_bytes,
    })
}

/// Checks, before allocating `bytes`, that the render may hold them; fails (and stops
/// the render) when they would take it over its byte budget. Outside a render the
/// default budget applies, so no single allocation can be absurd.
pub(crate) fn reserve(state: Option<&State>, bytes: usize) -> Result<(), Error> {
    let over = CURRENT.with(|c| match c.borrow().as_ref() {
        Some(scope) => {
            let total = scope.held().saturating_add(bytes);
            if total > scope.max_memory {
                scope.shared.memory.store(total, Ordering::Relaxed);
                scope.shared.set_stop(Stop::Memory);
                return true;
            }
            scope.should_stop().is_some()
        }
        None => bytes > super::Limits::default().max_memory_bytes,
    });
    if over {
        return Err(stopped(state));
    }
    Ok(())
}

/// [`reserve`] for `count` items of `each` bytes.
pub(crate) fn reserve_items(state: Option<&State>, count: usize, each: usize) -> Result<(), Error> {
    reserve(state, count.saturating_mul(each))
}

/// Whether the render on this thread was stopped (cancelled, past its deadline, over
/// its budget): one look at the flag the render's waiting caller sets, cheap enough for
/// every item of a loop inside one call (a containment test over millions of items).
pub(crate) fn is_stopped() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|scope| scope.shared.stop().is_some())
    })
}

/// `value` for one of MiniJinja's own filters that walks it in one call (`sort`,
/// `unique`, `list`, `min`, ...): a list or iterable whose walk ends early once the
/// render is stopped, so a stopped render leaves the call at once instead of after
/// millions of items (the render then fails at its next checkpoint; what the cut
/// walk gave is never used). Anything else, and any value outside a render, as it is.
pub(crate) fn stoppable(value: Value) -> Value {
    if !matches!(value.kind(), ValueKind::Seq | ValueKind::Iterable) {
        return value;
    }
    let Some(shared) = CURRENT.with(|c| c.borrow().as_ref().map(|s| Arc::clone(&s.shared))) else {
        return value;
    };
    Value::make_object_iterable(value, move |value| {
        let shared = Arc::clone(&shared);
        match value.try_iter() {
            Ok(items) => Box::new(items.take_while(move |_| shared.stop().is_none())),
            Err(_) => Box::new(std::iter::empty()),
        }
    })
}

/// Appends `text` to `out`, checking before `out` grows that the render may hold the
/// room it grows to (see [`make_room`]). For output built piece by piece from a
/// template's input (`wordwrap`, `indent`).
pub(crate) fn push_charged(
    state: Option<&State>,
    out: &mut String,
    text: &str,
) -> Result<(), Error> {
    make_room(state, out, text.len())?;
    out.push_str(text);
    Ok(())
}

/// Makes room in `out` for `extra` more bytes, checking first that the render may hold
/// the room it grows to (doubling, as `String` does) while the old room is still held.
pub(crate) fn make_room(
    state: Option<&State>,
    out: &mut String,
    extra: usize,
) -> Result<(), Error> {
    let needed = out.len().saturating_add(extra);
    if needed > out.capacity() {
        let room = needed.max(out.capacity().saturating_mul(2)).max(64);
        reserve(state, room)?;
        out.reserve_exact(room - out.len());
    }
    Ok(())
}

/// The current render's clock, if a render is in progress.
pub(crate) fn clock() -> Option<DateTime> {
    CURRENT.with(|c| c.borrow().as_ref().map(|s| s.clock))
}
