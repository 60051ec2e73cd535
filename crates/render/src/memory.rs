//! Counting the memory a render holds, so the byte budget covers everything the
//! template makes MiniJinja allocate, not only what chatplate's own filters charge.
//!
//! [`MeteredAllocator`] wraps mimalloc (feature `mimalloc`; the system allocator
//! without it) and keeps, per thread, the bytes
//! allocated minus the bytes freed on that thread. A render runs on one thread, so the
//! growth of that number during the render is what the template holds; the render's
//! checkpoints (every loop item, every `{{ }}`, every chatplate filter) compare it with
//! the budget and stop the render cleanly.
//!
//! A few MiniJinja operations allocate in a loop of their own without a checkpoint
//! (materialising a list doubled with `l + l` dozens of times, repeating a tuple).
//! On a render thread
//! started by chatplate (see [`super::CompiledTemplate::render_controlled`]) the
//! allocator is the last line of defence: once such a thread holds more than its hard
//! cap, the allocation does not happen at all and the thread is parked for good,
//! holding what it has (at most the cap) until the process ends, while its caller
//! reports the error. That keeps the process alive where the alternative is an
//! out-of-memory abort.
//!
//! The allocator only counts when installed as the global allocator; the chatplate
//! binary does that. Without it the budget is enforced by the explicit checks alone.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// The allocator underneath: mimalloc when the binary asks for it (feature `mimalloc`),
/// else the system's, so a library user of the renderer compiles no C.
#[cfg(feature = "mimalloc")]
use mimalloc::MiMalloc as Inner;
#[cfg(not(feature = "mimalloc"))]
use std::alloc::System as Inner;

/// mimalloc (feature `mimalloc`) or the system allocator, counting live bytes per thread
/// (see the module docs). mimalloc where it can: MiniJinja's parser and VM make many
/// small allocations, which it serves faster than glibc's malloc (BENCHMARKS.md, "The
/// allocator").
///
/// ```
/// #[global_allocator]
/// static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;
/// # fn main() {}
/// ```
pub struct MeteredAllocator;

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// This thread's counters, kept together so that each allocation reaches them with one
/// thread-local access (the allocator runs on every `malloc` and `free` of a render).
struct Meter {
    /// Bytes allocated minus bytes freed on this thread.
    live: Cell<isize>,
    /// The highest `live` since [`reset_thread_peak`].
    peak: Cell<isize>,
    /// Hard cap on `live` for a chatplate render thread (0: none).
    hard_cap: Cell<isize>,
    /// Where to report that the hard cap was hit (a render's stop flag).
    on_cap: Cell<*const AtomicU8>,
    /// `live` when [`watch_this_thread`] began watching the current render.
    watched_from: Cell<isize>,
    /// Every byte ever allocated on this thread (a realloc counts its growth): the
    /// bytes copied into new blocks, which tests compare without timing anything.
    allocated: Cell<u64>,
}

thread_local! {
    static METER: Meter = const {
        Meter {
            live: Cell::new(0),
            peak: Cell::new(0),
            hard_cap: Cell::new(0),
            on_cap: Cell::new(std::ptr::null()),
            watched_from: Cell::new(0),
            allocated: Cell::new(0),
        }
    };
}

/// The value written to the `on_cap` flag when the hard cap is hit.
pub(crate) const STOPPED_AT_CAP: u8 = u8::MAX;

unsafe impl GlobalAlloc for MeteredAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        Inner.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        Inner.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        Inner.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grow(new_size - layout.size());
        } else {
            shrink(layout.size() - new_size);
        }
        Inner.realloc(ptr, layout, new_size)
    }
}

fn grow(bytes: usize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    let _ = METER.try_with(|meter| {
        // Wrapping: a thread's live bytes stay far from isize's bounds (this runs on
        // every allocation).
        let now = meter.live.get().wrapping_add(bytes as isize);
        meter.live.set(now);
        meter
            .allocated
            .set(meter.allocated.get().wrapping_add(bytes as u64));
        if now > meter.peak.get() {
            meter.peak.set(now);
        }
        let cap = meter.hard_cap.get();
        if cap > 0 && now > cap {
            park_for_good();
        }
    });
}

fn shrink(bytes: usize) {
    let _ = METER.try_with(|meter| {
        meter
            .live
            .set(meter.live.get().wrapping_sub(bytes as isize));
    });
}

/// The render thread went over its hard cap inside MiniJinja: report it and never
/// return (returning would mean allocating; failing would abort the process).
#[cold]
fn park_for_good() -> ! {
    let flag = METER
        .try_with(|meter| meter.on_cap.get())
        .unwrap_or(std::ptr::null());
    if !flag.is_null() {
        // SAFETY: set by `watch_this_thread` from an `Arc` the render thread keeps alive
        // for as long as it runs, and this thread never returns from here.
        unsafe { (*flag).store(STOPPED_AT_CAP, Ordering::SeqCst) };
    }
    loop {
        // `sleep` makes a system call and allocates nothing.
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// Whether [`MeteredAllocator`] is the global allocator (it has counted something).
pub fn is_metered() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Bytes allocated minus bytes freed on this thread so far (0 when not metered).
pub fn thread_live_bytes() -> isize {
    METER.try_with(|meter| meter.live.get()).unwrap_or(0)
}

/// Every byte allocated on this thread so far (a realloc counts what it grew by; 0 when
/// not metered). The growth of this number over a render is the work of building its
/// values, measured without a clock: `tests/render/speed.rs` compares it between
/// versions of the renderer, so a change that copies more is caught on any machine.
pub fn thread_allocated_bytes() -> u64 {
    METER.try_with(|meter| meter.allocated.get()).unwrap_or(0)
}

/// The most this thread held since the last [`reset_thread_peak`], counted like
/// [`thread_live_bytes`] (for measuring what a render on this thread needed).
pub fn thread_peak_bytes() -> isize {
    METER.try_with(|meter| meter.peak.get()).unwrap_or(0)
}

/// Starts a new peak measurement at what this thread holds now.
pub fn reset_thread_peak() {
    let live = thread_live_bytes();
    let _ = METER.try_with(|meter| meter.peak.set(live));
}

/// Makes this thread a render thread with a hard cap: past `cap` live bytes (counted
/// from now) it is parked for good and `flag` is set to [`STOPPED_AT_CAP`]. `flag`
/// must outlive the thread (keep the `Arc` it lives in on this thread's stack).
pub(super) fn watch_this_thread(cap: usize, flag: &AtomicU8) {
    let live = thread_live_bytes();
    let limit = live.saturating_add(isize::try_from(cap).unwrap_or(isize::MAX));
    let _ = METER.try_with(|meter| {
        meter.on_cap.set(std::ptr::from_ref::<AtomicU8>(flag));
        meter.hard_cap.set(limit.max(1));
        meter.watched_from.set(live);
        meter.peak.set(live);
    });
}

/// What a render may have held at its peak before its thread hands the freed memory
/// back to the system at once (see [`unwatch_this_thread`]).
const RETURN_ABOVE_BYTES: isize = 64 << 20;

/// Ends [`watch_this_thread`] (the render finished, or stopped at a checkpoint), once
/// the render's values are freed. A render that held more than [`RETURN_ABOVE_BYTES`]
/// gives the memory back to the system now: mimalloc returns freed pages only after a
/// delay, at its next allocation or free on this thread, and a render thread may then
/// sit idle for a long time holding hundreds of megabytes of a stopped template's data.
/// Smaller renders keep their pages for the next render, which is what makes mimalloc
/// fast here (returning them after every render costs 8% at 10,000 messages).
pub(super) fn unwatch_this_thread() {
    let held = METER
        .try_with(|meter| {
            meter.hard_cap.set(0);
            meter.on_cap.set(std::ptr::null());
            meter.peak.get() - meter.watched_from.get()
        })
        .unwrap_or(0);
    if held > RETURN_ABOVE_BYTES {
        return_freed_memory();
    }
}

/// Hands freed pages back to the system now.
#[cfg(feature = "mimalloc")]
fn return_freed_memory() {
    // SAFETY: a plain call into mimalloc, which is this process's allocator; it only
    // frees what no one holds.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// The system allocator returns freed memory on its own terms: nothing to ask.
#[cfg(not(feature = "mimalloc"))]
fn return_freed_memory() {}
