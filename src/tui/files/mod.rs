//! The app's side of its files: saving (asking for a name, or what to do when another
//! program changed the file), the recovery autosave and the restore question, opening
//! sessions, and the template file watch. None of it touches the disk: each asks for a
//! [`Job`] in an [`Effect::Disk`], which the event loop performs ([`crate::tui::files::disk`]), and
//! the [`Done`] that comes back is taken in here.
//!
//! [`FileWork`] owns the periodic work's bookkeeping. The app hands it a [`FileRequest`]
//! or a [`Done`] with a [`PaneContext`]; it asks there for what only the app can do
//! (replace the session, show a reloaded template, open a dialog).

pub mod disk;
pub mod new_session;
pub mod recovery;
pub mod startup;
pub mod workspace;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chatplate_core::catalog::TemplateSource;

use crate::tui::context::Effect;
use crate::tui::context::PaneContext;
use crate::tui::dialogs::Confirm;
use crate::tui::dialogs::Overlay;
use crate::tui::dialogs::Picker;
use crate::tui::files::disk::Done;
use crate::tui::files::disk::Guard;
use crate::tui::files::disk::Job;
use crate::tui::files::disk::Open;
use crate::tui::files::disk::OpenedSession;
use crate::tui::files::disk::Outside;
use crate::tui::files::recovery::Found;
use crate::tui::files::workspace::Workspace;

/// How often the template file is checked for changes.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// The file work: what the user asked of the session's file, what came of the work the
/// event loop did, and the periodic work's bookkeeping.
#[derive(Debug, Default)]
pub struct FileWork {
    /// When the template file was last looked at.
    last_watch: Option<Instant>,
    /// Recovery files earlier runs left were looked for (once, at the first tick).
    looked_for_recovery: bool,
    /// A recovery write is under way on another thread (the event loop's
    /// [`crate::tui::app::autosave::Autosave`]): the next one waits for its outcome, which
    /// names the file it wrote.
    pub recovery_in_flight: bool,
}

/// What the user (through a key or a dialog) asks of the session's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRequest {
    /// Quit, or ask first when there are unsaved changes.
    Quit,
    /// Save to `path` (or the current file), asking for a name the first time; quit once
    /// saved when `then_quit`.
    Save {
        /// Where, when not the current file.
        path: Option<PathBuf>,
        /// Quit once saved.
        then_quit: bool,
    },
    /// Save under the name typed in the save dialog, which must not be another file's.
    SaveAs {
        /// The new name.
        path: PathBuf,
        /// Quit once saved.
        then_quit: bool,
    },
    /// Write the session file, whatever is on disk.
    Overwrite,
    /// Open the session file at `path` in place of this one, deleting this run's
    /// recovery file first when `discard` (the user gave up the changes).
    Open {
        /// The session file.
        path: PathBuf,
        /// Give up the unsaved changes.
        discard: bool,
    },
}

impl FileWork {
    /// Does `request`; the file work it leads to, if any.
    pub fn handle(&mut self, request: FileRequest, ctx: &mut PaneContext) -> Option<Effect> {
        match request {
            FileRequest::Quit => quit(ctx),
            FileRequest::Save { path, then_quit } => save(ctx, path, then_quit),
            FileRequest::SaveAs { path, then_quit } => {
                let guard = match Some(&path) == ctx.workspace.path.as_ref() {
                    true => ctx.workspace.unchanged_guard(),
                    false => Guard::Absent,
                };
                write_session(ctx.workspace, Some(path), guard, then_quit)
            }
            FileRequest::Overwrite => write_session(ctx.workspace, None, Guard::Overwrite, false),
            FileRequest::Open { path, discard } => open_session(ctx.workspace, path, discard),
        }
    }

    /// File work that is due at `now`: the first look for recovery files earlier runs
    /// left, the template file watch (every half second, and at once for a file not
    /// looked at yet), the recovery autosave. The event loop does it
    /// ([`crate::tui::app::driver::tick`]); the session file is not checked while a
    /// dialog is open, since what it would ask waits for the next look.
    pub fn tick(&mut self, now: Instant, workspace: &mut Workspace, dialog_open: bool) -> Vec<Job> {
        let mut work = Vec::new();
        if !std::mem::replace(&mut self.looked_for_recovery, true) {
            work.push(Job::FindRecovery(workspace.recovery_lookup()));
        }
        let watch_due =
            (self.last_watch).is_none_or(|last| now.duration_since(last) >= WATCH_INTERVAL);
        if watch_due || workspace.watch_unseen() {
            self.last_watch = Some(now);
            work.extend(workspace.poll_job().map(Job::Poll));
            if !dialog_open {
                work.extend(workspace.session_check().map(Job::CheckSession));
            }
        }
        if !self.recovery_in_flight {
            work.extend(workspace.autosave_job(now).map(Job::WriteRecovery));
        }
        work
    }

    /// When [`FileWork::tick`] next has work to do.
    pub fn next_tick(&self, now: Instant, workspace: &Workspace) -> Instant {
        if !self.looked_for_recovery || workspace.watch_unseen() {
            return now;
        }
        let watch = (self.last_watch).map_or(now, |last| last + WATCH_INTERVAL);
        let autosave = workspace
            .autosave_due()
            .filter(|_| !self.recovery_in_flight);
        autosave.map_or(watch, |due| due.min(watch))
    }

    /// The recovery file's job when the app is ending abnormally (`None`: nothing
    /// unsaved); see [`crate::tui::app::driver::emergency_save`].
    pub fn emergency_job(workspace: &mut Workspace) -> Option<Job> {
        let job = workspace.recovery_job(Instant::now())?;
        Some(Job::WriteRecovery(job))
    }

    /// Takes in what came of file work (the dialogs' own answers, a new session's
    /// workspace, a tool file and the openable files, are the app's to route).
    pub fn take_in(
        &mut self,
        done: Done,
        ctx: &mut PaneContext,
        dialog_open: bool,
    ) -> Option<Effect> {
        match done {
            Done::Saved {
                target,
                stamp,
                template,
                note,
                then_quit,
            } => {
                let note = note.map_or(String::new(), |note| format!(" · {note}"));
                ctx.notify(format!("saved {}{note}", target.display()));
                ctx.workspace.saved(target, stamp, template);
                return then_quit.then_some(Effect::Quit);
            }
            Done::TemplateOutside(outsider) => {
                ctx.open(Overlay::Confirm(Confirm::TemplateOutside(outsider)))
            }
            Done::Changed => ctx.open(Overlay::Confirm(Confirm::Changed)),
            Done::Exists(path) => {
                ctx.warn(format!("{} exists; choose another name", path.display()))
            }
            Done::SaveFailed(err) => ctx.warn(format!("not saved: {err}")),
            Done::RecoveryWritten { result, at } => recovery_written(ctx, result, at),
            Done::Discarded => return Some(Effect::Quit),
            Done::DiscardedFound { path, next } => {
                ctx.notify(format!("discarded {}", path.display()));
                offer_recovery(ctx, next);
            }
            Done::RecoveryFound(found) => offer_recovery(ctx, found),
            Done::Sessions { dir, entries } => show_picker(ctx, dir, entries),
            Done::Opened { path, result } => opened_session(ctx, path, result),
            Done::Restored { path, result } => match result {
                Ok(workspace) => {
                    ctx.load(*workspace);
                    ctx.notify(format!("unsaved changes restored from {}", path.display()));
                }
                Err(err) => ctx.warn(format!("could not restore: {err}")),
            },
            Done::Imported {
                path,
                workspace,
                notice,
            } => imported(ctx, path, *workspace, notice),
            Done::SessionChecked { path, meta, stamp } => {
                if ctx.workspace.session_checked(&path, meta, stamp) && !dialog_open {
                    ctx.open(Overlay::Confirm(Confirm::Changed));
                }
            }
            Done::TemplateSeen { path, stamp } => ctx.workspace.template_seen(&path, stamp),
            Done::TemplateChanged {
                path,
                stamp,
                reloaded,
            } => {
                let reloaded = ctx.workspace.template_changed(&path, stamp, reloaded);
                template_changed(ctx, reloaded);
            }
            Done::NewSession(_)
            | Done::ToolsRead { .. }
            | Done::Openable(_)
            | Done::Folder { .. } => {}
        }
        None
    }
}

/// Quits, or asks first when there are unsaved changes.
fn quit(ctx: &mut PaneContext) -> Option<Effect> {
    if !ctx.workspace.dirty {
        return Some(Effect::Quit);
    }
    ctx.open(Overlay::Confirm(Confirm::Quit));
    None
}

/// Saves to `path` (or the current file); asks for a name the first time. The event
/// loop writes the file unless another program changed it since it was read, which
/// brings up the question of what to do.
fn save(ctx: &mut PaneContext, path: Option<PathBuf>, then_quit: bool) -> Option<Effect> {
    let workspace = &mut *ctx.workspace;
    if path.is_none() && workspace.path.is_none() {
        ctx.open(Overlay::save_as(&ctx.workspace.sessions_dir, then_quit));
        return None;
    }
    let same_file = path.is_none() || path == workspace.path;
    let guard = match same_file {
        true => workspace.unchanged_guard(),
        false => Guard::Overwrite,
    };
    write_session(workspace, path, guard, then_quit)
}

fn write_session(
    workspace: &mut Workspace,
    path: Option<PathBuf>,
    guard: Guard,
    then_quit: bool,
) -> Option<Effect> {
    let job = workspace.save_job(path, guard, then_quit, Outside::Ask);
    Some(Effect::Disk(Job::Save(job)))
}

fn open_session(workspace: &mut Workspace, path: PathBuf, discard: bool) -> Option<Effect> {
    let discard = discard.then(|| workspace.discard_recovery()).flatten();
    let sessions_dir = workspace.sessions_dir.clone();
    Some(Effect::Disk(Job::Open(Open {
        path,
        sessions_dir,
        discard,
    })))
}

fn recovery_written(ctx: &mut PaneContext, result: Result<PathBuf, String>, at: Instant) {
    if let Err(err) = ctx.workspace.recovery_written(result, at) {
        // An error already on show (a failed save, most likely for the same reason:
        // a full disk) stays; it is the one the user must not miss.
        if !ctx.showing_error() {
            ctx.warn(format!("recovery file not written: {err}"));
        }
    }
}

/// Asks about the newest recovery file an earlier run left, if any.
fn offer_recovery(ctx: &mut PaneContext, found: Option<Found>) {
    if let Some(found) = found {
        ctx.open(Overlay::Confirm(Confirm::Restore(found)));
    }
}

fn show_picker(ctx: &mut PaneContext, dir: PathBuf, entries: Vec<PathBuf>) {
    if entries.is_empty() {
        let dir = dir.display();
        return ctx.warn(format!("no sessions in {dir}/ yet (Ctrl+S saves one)"));
    }
    ctx.open(Overlay::Picker(Picker::new(entries, dir)));
}

fn opened_session(
    ctx: &mut PaneContext,
    path: PathBuf,
    result: Result<Box<OpenedSession>, String>,
) {
    let opened = match result {
        Ok(opened) => *opened,
        Err(err) => return ctx.warn(format!("could not open: {err}")),
    };
    ctx.load(opened.workspace);
    match opened.notice {
        Some(text) => ctx.warn(text),
        None => ctx.notify(format!("opened {}", path.display())),
    }
    offer_recovery(ctx, opened.recovery);
}

fn imported(ctx: &mut PaneContext, path: PathBuf, workspace: Workspace, notice: Option<String>) {
    ctx.load(workspace);
    ctx.forget_template_set();
    match notice {
        Some(text) => ctx.warn(text),
        None => ctx.notify(format!("imported {}", path.display())),
    }
}

fn template_changed(ctx: &mut PaneContext, reloaded: Option<Result<TemplateSource, String>>) {
    match reloaded {
        Some(Ok(template)) => {
            ctx.notify(format!("reloaded {} from disk", template.name));
            ctx.reloaded(template);
        }
        Some(Err(err)) => ctx.warn(format!("template reload failed: {err}")),
        None => {}
    }
}
