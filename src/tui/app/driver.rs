//! Running an [`App`] without a terminal: applying messages and doing the file work they
//! ask for ([`crate::tui::files::disk`]) the way the event loop does. The event loop uses these for
//! everything but the terminal's own effects; tests and benchmarks use them to drive
//! the app as a user would.

use std::time::Instant;

use crate::tui::context::Effect;

use crate::tui::app::App;
use crate::tui::app::Message;
use crate::tui::files::disk;
use crate::tui::files::disk::Done;
use crate::tui::files::disk::Job;

/// Does `job` and gives `update` what came of it; returns the effect that leads to, if
/// any.
pub fn run_job(app: &mut App, job: Job) -> Option<Effect> {
    disk::perform(job).and_then(|done| app.update(done))
}

/// Carries `effect` out while it is file work; returns the first effect that needs the
/// terminal (quit, copy, an external editor), if any.
pub fn follow(app: &mut App, mut effect: Option<Effect>) -> Option<Effect> {
    while let Some(Effect::Disk(job)) = effect {
        effect = run_job(app, job);
    }
    effect
}

/// [`App::update`], then the file work it asks for.
pub fn apply(app: &mut App, message: impl Into<Message>) -> Option<Effect> {
    let effect = app.update(message);
    follow(app, effect)
}

/// [`App::handle_key`], then the file work it asks for.
pub fn press(app: &mut App, key: crossterm::event::KeyEvent) -> Option<Effect> {
    let effect = app.handle_key(key);
    follow(app, effect)
}

/// Does the periodic file work that is due at `now` ([`App::tick`]); returns whether
/// anything came of it (the screen may have changed).
pub fn tick(app: &mut App, now: Instant) -> bool {
    let mut changed = app.working_changed(now);
    for job in app.tick(now) {
        if let Some(done) = disk::perform(job) {
            changed = true;
            let effect = app.update(done);
            // Only a save ends in a quit; the periodic work never needs the terminal.
            debug_assert!(effect.is_none(), "{effect:?} from periodic file work");
        }
    }
    changed
}

/// [`tick`] as the event loop does it: the recovery autosave is written on another
/// thread ([`Autosave`](crate::tui::app::autosave::Autosave)), the rest in place.
pub fn tick_aside(
    app: &mut App,
    now: Instant,
    autosave: &mut crate::tui::app::autosave::Autosave,
) -> bool {
    let mut changed = app.working_changed(now) | autosave.collect(app);
    for job in app.tick(now) {
        if matches!(job, Job::WriteRecovery(_)) {
            changed |= autosave.start(app, job);
        } else if let Some(done) = disk::perform(job) {
            changed = true;
            let effect = app.update(done);
            debug_assert!(effect.is_none(), "{effect:?} from periodic file work");
        }
    }
    changed
}

/// [`App::settle`], doing the file work the worker's replies lead to (opening a session)
/// and waiting again for what that changed; returns the effects that need a terminal.
pub fn settle(app: &mut App) -> Vec<Effect> {
    let mut left = Vec::new();
    loop {
        let effects = app.settle();
        let more = effects.iter().any(|e| matches!(e, Effect::Disk(_)));
        for effect in effects {
            left.extend(follow(app, Some(effect)));
        }
        if !more {
            return left;
        }
    }
}

/// When the app is ending abnormally: keeps unsaved changes in the recovery file, now.
/// Returns the file written (`None`: nothing unsaved) or the error.
pub fn emergency_save(app: &mut App) -> Result<Option<String>, String> {
    let Some(job) = app.emergency_job() else {
        return Ok(None);
    };
    let Some(Done::RecoveryWritten { result, at }) = disk::perform(job) else {
        return Err("the recovery file was not written".into());
    };
    let written = result.clone().map(|path| Some(path.display().to_string()));
    app.update(Done::RecoveryWritten { result, at });
    written
}
