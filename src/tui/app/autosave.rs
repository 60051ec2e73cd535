//! The recovery autosave, written on a thread of its own by the event loop. At 10,000
//! messages writing the recovery file (serialising 1-2 MB, `fsync`, the rename) took
//! 10-30 ms of the UI thread, half a second after the last edit: a key typed after such
//! a pause waited for it (scripts/measure_app_latency.py `--interval 505`).
//!
//! One write at a time: while one is under way the app asks for no other
//! ([`App::recovery_in_flight`]). The file it writes is chosen before it starts, so a
//! save asked for meanwhile removes that file. Every other file job waits for it first
//! ([`Autosave::finish`]): a late write must not bring back what a save removed. Tests drive the app
//! with [`super::driver::tick`], which writes in place.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::tui::app::App;
use crate::tui::files::disk::{self, Done, Job};
use crate::tui::files::recovery;

/// The write under way, if any.
pub struct Autosave {
    writing: Option<JoinHandle<Option<Done>>>,
    /// Wakes the event loop when a write is done, so its outcome is taken in at once.
    wake: Arc<Mutex<Box<dyn Fn() + Send>>>,
}

impl std::fmt::Debug for Autosave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Autosave")
            .field("writing", &self.writing.is_some())
            .finish_non_exhaustive()
    }
}

impl Autosave {
    /// No write under way; `wake` is called from the writing thread when it is done.
    pub fn new(wake: impl Fn() + Send + 'static) -> Self {
        Autosave {
            writing: None,
            wake: Arc::new(Mutex::new(Box::new(wake))),
        }
    }

    /// Writes `job` (a recovery write) on another thread; in place when no thread can
    /// be started. Returns whether `app` changed (only when written in place).
    pub fn start(&mut self, app: &mut App, mut job: Job) -> bool {
        self.finish(app);
        if let Job::WriteRecovery(write) = &mut job {
            // The file is chosen now, not by the write: a save asked for while it is under
            // way must know the file to remove (its job is made before this write ends).
            let path = (write.chosen.take()).unwrap_or_else(|| recovery::free_path(&write.base));
            write.chosen = Some(path.clone());
            app.adopt_recovery(path);
        }
        let wake = Arc::clone(&self.wake);
        let (sender, receiver) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("chatplate-autosave".into())
            .spawn(move || {
                let job = receiver.recv().ok()?;
                let done = disk::perform(job);
                (wake.lock().unwrap_or_else(PoisonError::into_inner))();
                done
            });
        let job = match spawned {
            Ok(handle) => match sender.send(job) {
                Ok(()) => {
                    self.writing = Some(handle);
                    app.recovery_in_flight(true);
                    return false;
                }
                Err(std::sync::mpsc::SendError(job)) => job,
            },
            Err(_) => job,
        };
        disk::perform(job).is_some_and(|done| {
            app.update(done);
            true
        })
    }

    /// Takes in the outcome of a finished write; returns whether there was one.
    pub fn collect(&mut self, app: &mut App) -> bool {
        if self.writing.as_ref().is_some_and(JoinHandle::is_finished) {
            self.finish(app);
            return true;
        }
        false
    }

    /// Waits for the write under way, if any, and takes its outcome in.
    pub fn finish(&mut self, app: &mut App) {
        let Some(handle) = self.writing.take() else {
            return;
        };
        app.recovery_in_flight(false);
        if let Ok(Some(done)) = handle.join() {
            app.update(done);
        }
    }
}

/// Unwinding from a panic of the UI thread: the write ends before the emergency save
/// starts, so the two never write the same temporary file at once.
impl Drop for Autosave {
    fn drop(&mut self) {
        if let Some(handle) = self.writing.take() {
            let _ = handle.join();
        }
    }
}
