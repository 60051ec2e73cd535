//! Short renders run on their caller's core (Linux).
//!
//! A render runs on a render thread of its own (see [`super::watchdog`]) and its caller
//! sleeps until the answer comes. Handing the job over and the answer back wakes a
//! sleeping thread twice, and the kernel wakes each on the other, idle core: an
//! interrupt to that core and its way out of idle, about 40 µs of CPU per wake-up on
//! this project's virtual machines, where a 100-message render takes about 100 µs.
//! On one core the same handoff is two plain context switches: the caller's `send`
//! queues the render thread behind it and its sleep switches to it; the answer queues
//! the caller behind the render thread, whose wait for its next job switches back.
//! Measured on a quiet machine (`taskset -c 1 chatplate bench`, 100 messages): SmolLM3
//! 87 µs of CPU per render against 143 µs with the threads free, Qwen3 134 against 189.
//!
//! So a render expected to be short ([`BESIDE`] or less), while no other render runs,
//! is placed beside its caller: the caller is held to the core it is on for the
//! render's length ([`Beside`], which gives the caller back its own set of cores when
//! dropped), and the render thread is held to the same core ([`ThreadPlace`]). A render
//! thread that later takes a long render, or one beside another caller's core, is moved
//! first. Only short renders: a long one held to one core could not move away from a
//! busy one, and two renders at once each need a core.
//!
//! Elsewhere (and where the calls fail: a container that forbids them) renders run as
//! before, on whatever core the system picks.

use std::time::Duration;

/// Renders expected to take at most this long run beside their caller. Above it the
/// handoff is at most 2% of the render.
pub(crate) const BESIDE: Duration = Duration::from_millis(5);

#[cfg(target_os = "linux")]
mod linux {
    use std::mem::MaybeUninit;

    /// A set of cores, as the kernel takes it.
    pub(crate) type Cores = libc::cpu_set_t;

    /// The calling thread's kernel id.
    pub(crate) fn thread_id() -> libc::pid_t {
        // SAFETY: no arguments, cannot fail.
        unsafe { libc::gettid() }
    }

    /// The core the calling thread runs on.
    pub(crate) fn current_core() -> Option<usize> {
        // SAFETY: no arguments; -1 on failure.
        let core = unsafe { libc::sched_getcpu() };
        usize::try_from(core).ok()
    }

    /// The cores thread `tid` may run on (0: the calling thread).
    pub(crate) fn allowed(tid: libc::pid_t) -> Option<Cores> {
        let mut set = MaybeUninit::<Cores>::zeroed();
        // SAFETY: `set` is a writable cpu_set_t of the size passed.
        let done =
            unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<Cores>(), set.as_mut_ptr()) };
        // SAFETY: zeroed is a valid cpu_set_t, filled in on success.
        (done == 0).then(|| unsafe { set.assume_init() })
    }

    /// Holds thread `tid` (0: the calling thread) to `cores`. Whether it worked.
    pub(crate) fn hold(tid: libc::pid_t, cores: &Cores) -> bool {
        // SAFETY: `cores` is a valid cpu_set_t of the size passed.
        unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<Cores>(), cores) == 0 }
    }

    /// The set of the one core `core`; `None` past what a set can hold.
    pub(crate) fn only(core: usize) -> Option<Cores> {
        if core >= 8 * std::mem::size_of::<Cores>() {
            return None;
        }
        // SAFETY: an all-zero cpu_set_t is the empty set, and `core` is within it.
        let mut set: Cores = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(core, &mut set) };
        Some(set)
    }
}

/// The calling thread held to the core it runs on, for one render beside it; dropping
/// it gives the thread back the cores it had. The caller's [`ThreadPlace`], settled on
/// its own core: the same moves a render thread makes.
pub(crate) struct Beside {
    place: ThreadPlace,
    core: usize,
}

impl Beside {
    /// Holds the calling thread where it is; `None` where that is not possible.
    pub(crate) fn here() -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            let core = linux::current_core()?;
            let mut place = ThreadPlace::of_this_thread();
            place.settle(Some(core));
            (place.held == Some(core)).then_some(Beside { place, core })
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// The core the caller is held to.
    pub(crate) fn core(&self) -> usize {
        self.core
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        self.place.settle(None);
    }
}

/// Where a render thread may run: what it was started with, and the one core it is
/// held to, if any. Travels with the thread's jobs, so whoever hands it the next job
/// can move it first.
#[derive(Clone, Copy)]
pub(crate) struct ThreadPlace {
    #[cfg(target_os = "linux")]
    tid: libc::pid_t,
    #[cfg(target_os = "linux")]
    own: Option<linux::Cores>,
    held: Option<usize>,
}

impl ThreadPlace {
    /// The calling thread's place, as it is now (its cores are what it was started
    /// with: those of the caller that started it).
    pub(crate) fn of_this_thread() -> Self {
        ThreadPlace {
            #[cfg(target_os = "linux")]
            tid: linux::thread_id(),
            #[cfg(target_os = "linux")]
            own: linux::allowed(0),
            held: None,
        }
    }

    /// Moves the thread to `core` alone, or back to its own cores for `None`; nothing
    /// when it is there already. A thread that cannot be moved stays where it is.
    pub(crate) fn settle(&mut self, core: Option<usize>) {
        if self.held == core {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            let moved = match (core, &self.own) {
                (Some(core), Some(_)) => {
                    linux::only(core).is_some_and(|only| linux::hold(self.tid, &only))
                }
                (None, Some(own)) => linux::hold(self.tid, own),
                (_, None) => false,
            };
            if moved {
                self.held = core;
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_caller_beside_a_render_gets_its_cores_back() {
        let before = linux::allowed(0).unwrap();
        let beside = Beside::here().expect("sched_setaffinity works here");
        let held = linux::allowed(0).unwrap();
        assert_eq!(unsafe { libc::CPU_COUNT(&held) }, 1);
        assert!(unsafe { libc::CPU_ISSET(beside.core(), &held) });
        drop(beside);
        assert!(unsafe { libc::CPU_EQUAL(&before, &linux::allowed(0).unwrap()) });
    }

    #[test]
    fn a_render_thread_is_held_and_let_go() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            sender.send(ThreadPlace::of_this_thread()).unwrap();
            finished.recv().unwrap();
        });
        let mut place = receiver.recv().unwrap();
        let own = place.own.unwrap();
        // A core this test may use (a container may not offer core 0).
        let core = linux::current_core().unwrap();
        place.settle(Some(core));
        assert_eq!(place.held, Some(core));
        let held = linux::allowed(place.tid).unwrap();
        assert!(unsafe { libc::CPU_EQUAL(&held, &linux::only(core).unwrap()) });
        place.settle(None);
        assert_eq!(place.held, None);
        assert!(unsafe { libc::CPU_EQUAL(&own, &linux::allowed(place.tid).unwrap()) });
        done.send(()).unwrap();
        thread.join().unwrap();
    }
}
