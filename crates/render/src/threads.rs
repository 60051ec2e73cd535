//! The render threads, kept for the next render instead of started for each.
//!
//! Every render runs on a thread with a large stack (see [`super::watchdog`]). Starting
//! one per render cost a `clone` plus mapping and unmapping the stack: a seventh of
//! `chatplate check`'s time on the corpus, and more for the inspector's hundreds of
//! short prefix renders. A thread whose render has ended offers itself for the next
//! one; at most [`MAX_IDLE`] wait, the rest end. A render whose caller stopped waiting
//! keeps its thread until it reaches its next checkpoint, as before; one parked by the
//! memory meter never comes back, so a new thread is started in its place.

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::affinity::ThreadPlace;

/// One render, with everything it needs. It calls the function it is given once its
/// work is done and just before it answers: its thread then offers itself for the next
/// render. Offered only after the answer, the thread would often not be back yet when
/// a caller that renders again at once (`bench`, `check`, the inspector) looked, and a
/// fresh thread would start, with a cold stack and allocator arena (about 7% of a
/// 1,000-message render). It returns whether its caller was looking for the answer
/// awake: only then may the next job follow at once, so only then does the thread look
/// for it awake before it sleeps (a sleeping caller takes longer to wake than the look
/// lasts, and the look would only be CPU spent).
pub(crate) type Job = Box<dyn FnOnce(&mut dyn FnMut()) -> bool + Send>;

/// Most idle render threads kept waiting.
const MAX_IDLE: usize = 4;

/// How long a thread about to wait for the other side of a render's handoff first
/// looks for it without going to sleep. A short render takes tens of microseconds, but
/// waking a sleeping thread on an otherwise idle machine takes about as long again or
/// more (its core has gone to a deep idle state), twice per render: the job going out
/// and the answer coming back. Looking for a while first keeps back-to-back short
/// renders (`check`, `bench`, the inspector's prefixes) short; a render that takes
/// longer costs this much of one core's time on top, once.
pub(crate) const SPIN: Duration = Duration::from_micros(100);

/// What arrives on `receiver` within [`SPIN`], looked for without sleeping (the thread
/// yields between looks, so other work on a busy machine still gets the core).
/// `None` when nothing came in time; `Some(Err)` when the sender is gone.
pub(crate) fn recv_soon<T>(receiver: &Receiver<T>) -> Option<Result<T, mpsc::RecvError>> {
    recv_within(receiver, SPIN)
}

/// [`recv_soon`], looking for `within` instead of [`SPIN`].
pub(crate) fn recv_within<T>(
    receiver: &Receiver<T>,
    within: Duration,
) -> Option<Result<T, mpsc::RecvError>> {
    let started = Instant::now();
    loop {
        match receiver.try_recv() {
            Ok(item) => return Some(Ok(item)),
            Err(TryRecvError::Disconnected) => return Some(Err(mpsc::RecvError)),
            Err(TryRecvError::Empty) if started.elapsed() < within => std::thread::yield_now(),
            Err(TryRecvError::Empty) => return None,
        }
    }
}

/// A job for a waiting render thread, with the thread's place as its giver left it.
type Handed = (Job, ThreadPlace);

/// A waiting render thread: where to send its next job, and where it may run.
struct Idle {
    jobs: Sender<Handed>,
    place: ThreadPlace,
}

fn idle() -> &'static Mutex<Vec<Idle>> {
    static IDLE: OnceLock<Mutex<Vec<Idle>>> = OnceLock::new();
    IDLE.get_or_init(|| Mutex::new(Vec::new()))
}

/// Runs `job` on an idle render thread, or on a new one with `stack_bytes` of stack;
/// on `core` alone when one is given, else wherever the system puts it (see
/// [`super::affinity`]). `job` must catch its own panics (a panicking job would end its
/// thread, which is only a lost thread, not a lost answer: the caller sees its channel
/// disconnect).
pub(crate) fn run(job: Job, stack_bytes: usize, core: Option<usize>) -> std::io::Result<()> {
    let mut job = job;
    loop {
        let waiting = idle().lock().ok().and_then(|mut idle| idle.pop());
        let Some(Idle { jobs, mut place }) = waiting else {
            break;
        };
        // Moved while it sleeps, so it wakes where it is to run.
        place.settle(core);
        match jobs.send((job, place)) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError((back, _))) => job = back, // that thread is gone
        }
    }
    std::thread::Builder::new()
        .name("chatplate-render".into())
        .stack_size(stack_bytes)
        .spawn(move || serve(job, core))
        .map(drop)
}

/// A render thread's life: its first job, then whatever it is given while idle.
fn serve(first: Job, core: Option<usize>) {
    let (sender, jobs) = mpsc::channel::<Handed>();
    let mut place = ThreadPlace::of_this_thread();
    place.settle(core);
    let mut job = first;
    loop {
        let mut offered = None;
        let look = job(&mut || offered = Some(offer(&sender, place)));
        if !offered.unwrap_or_else(|| offer(&sender, place)) {
            return;
        }
        let soon = look.then(|| recv_soon(&jobs)).flatten();
        (job, place) = match soon.unwrap_or_else(|| jobs.recv()) {
            Ok(handed) => handed,
            Err(_) => return,
        };
    }
}

/// Puts this thread among the idle ones, unless [`MAX_IDLE`] already wait.
fn offer(jobs: &Sender<Handed>, place: ThreadPlace) -> bool {
    match idle().lock() {
        Ok(mut idle) if idle.len() < MAX_IDLE => {
            idle.push(Idle {
                jobs: jobs.clone(),
                place,
            });
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_and_threads_are_reused() {
        let (done, finished) = mpsc::channel();
        for round in 0..20 {
            let done = done.clone();
            let job: Job = Box::new(move |offer| {
                offer();
                let _ = done.send((round, std::thread::current().id()));
                round % 2 == 0
            });
            run(job, 1 << 20, None).unwrap();
            let (got, _) = finished
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap();
            assert_eq!(got, round);
        }
        // Sequential jobs find the previous thread idle (others tests may share the
        // pool, so only the outcome, not the thread count, is asserted).
        assert!(idle().lock().unwrap().len() <= MAX_IDLE);
    }

    #[test]
    fn a_quick_look_finds_what_is_there_and_gives_up_on_what_is_not() {
        let (sender, receiver) = mpsc::channel();
        assert!(recv_soon(&receiver).is_none());
        sender.send(7).unwrap();
        assert!(matches!(recv_soon(&receiver), Some(Ok(7))));
        drop(sender);
        assert!(matches!(recv_soon(&receiver), Some(Err(_))));
    }
}
