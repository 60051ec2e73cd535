//! The app's side of its files: saving (asking for a name, or what to do when another
//! program changed the file), the recovery autosave and the restore question, opening
//! sessions, and the template file watch. None of it touches the disk: each asks for a
//! [`Job`] in an [`Effect::Disk`], which the event loop performs ([`crate::tui::files::disk`]), and
//! [`App::update`] takes the [`Done`] that comes back in here.

pub mod disk;
pub mod new_session;
pub mod recovery;
pub mod startup;
pub mod workspace;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::tui::app::action::Effect;
use crate::tui::app::{current_template, preview_for, App};
use crate::tui::dialogs::{Confirm, Overlay, Picker};
use crate::tui::files::disk::{Done, Guard, Job, Open, OpenedSession, Outside};
use crate::tui::files::recovery::Found;
use crate::tui::files::workspace::Workspace;
use crate::tui::panes::messages::MessagesPane;

/// How often the template file is checked for changes.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// The periodic file work's bookkeeping.
#[derive(Debug, Default)]
pub struct Chores {
    /// When the template file was last looked at.
    last_watch: Option<Instant>,
    /// Recovery files earlier runs left were looked for (once, at the first tick).
    looked_for_recovery: bool,
}

impl App {
    /// Quits, or asks first when there are unsaved changes.
    pub(in crate::tui) fn request_quit(&mut self) -> Option<Effect> {
        if !self.workspace.dirty {
            return Some(Effect::Quit);
        }
        self.overlay = Some(Overlay::Confirm(Confirm::Quit));
        None
    }

    /// The preview for the workspace's (reloaded) template.
    pub(in crate::tui) fn reload_preview(&mut self) {
        self.preview = preview_for(&self.workspace);
    }

    /// Replaces the workspace (after opening or restoring a session).
    pub fn load(&mut self, workspace: Workspace) {
        self.preview = preview_for(&workspace);
        if let Some(template) = current_template(&workspace) {
            self.templates.remember(template);
        }
        self.workspace = workspace;
        // Steps recorded in the old session would splice its messages into this one.
        self.workbench.forget_history();
        self.editor = None;
        self.messages = MessagesPane::default();
        self.prompt.new_session();
        self.invalidate();
    }

    /// Saves to `path` (or the current file); asks for a name the first time. The event
    /// loop writes the file unless another program changed it since it was read, which
    /// brings up the question of what to do.
    pub fn save(&mut self, path: Option<PathBuf>) -> Option<Effect> {
        self.save_then(path, false)
    }

    /// [`App::save`], then quit once saved when `then_quit`.
    pub(in crate::tui) fn save_then(
        &mut self,
        path: Option<PathBuf>,
        then_quit: bool,
    ) -> Option<Effect> {
        if path.is_none() && self.workspace.path.is_none() {
            self.overlay = Some(Overlay::save_as(&self.workspace.sessions_dir, then_quit));
            return None;
        }
        let same_file = path.is_none() || path == self.workspace.path;
        let guard = match same_file {
            true => self.workspace.unchanged_guard(),
            false => Guard::Overwrite,
        };
        self.write_session(path, guard, then_quit)
    }

    /// Saves under the name typed in the save dialog, which must not be another file's.
    pub(in crate::tui) fn save_as(&mut self, path: PathBuf, then_quit: bool) -> Option<Effect> {
        let guard = match Some(&path) == self.workspace.path.as_ref() {
            true => self.workspace.unchanged_guard(),
            false => Guard::Absent,
        };
        self.write_session(Some(path), guard, then_quit)
    }

    /// Writes the session file, whatever is on disk.
    pub(in crate::tui) fn overwrite(&mut self) -> Option<Effect> {
        self.write_session(None, Guard::Overwrite, false)
    }

    fn write_session(
        &mut self,
        path: Option<PathBuf>,
        guard: Guard,
        then_quit: bool,
    ) -> Option<Effect> {
        let job = self
            .workspace
            .save_job(path, guard, then_quit, Outside::Ask);
        Some(Effect::Disk(Job::Save(job)))
    }

    /// Opens the session file at `path` in place of this one, deleting this run's
    /// recovery file first when `discard` (the user gave up the changes).
    pub(in crate::tui) fn open_session(&mut self, path: PathBuf, discard: bool) -> Option<Effect> {
        let discard = discard.then(|| self.workspace.discard_recovery()).flatten();
        let sessions_dir = self.workspace.sessions_dir.clone();
        Some(Effect::Disk(Job::Open(Open {
            path,
            sessions_dir,
            discard,
        })))
    }

    /// File work that is due at `now`: the first look for recovery files earlier runs
    /// left, the template file watch (every half second, and at once for a file not
    /// looked at yet), the recovery autosave. The event loop does it
    /// ([`crate::tui::app::driver::tick`]).
    pub fn tick(&mut self, now: Instant) -> Vec<Job> {
        let mut work = Vec::new();
        if !std::mem::replace(&mut self.chores.looked_for_recovery, true) {
            work.push(Job::FindRecovery(self.workspace.recovery_lookup()));
        }
        let watch_due =
            (self.chores.last_watch).is_none_or(|last| now.duration_since(last) >= WATCH_INTERVAL);
        if watch_due || self.workspace.watch_unseen() {
            self.chores.last_watch = Some(now);
            work.extend(self.workspace.poll_job().map(Job::Poll));
            // Not while a dialog is open: what it would ask waits for the next look.
            if self.overlay.is_none() {
                work.extend(self.workspace.session_check().map(Job::CheckSession));
            }
        }
        work.extend(self.workspace.autosave_job(now).map(Job::WriteRecovery));
        work
    }

    /// When [`App::tick`] next has work to do.
    pub fn next_tick(&self, now: Instant) -> Instant {
        if !self.chores.looked_for_recovery || self.workspace.watch_unseen() {
            return now;
        }
        let watch = (self.chores.last_watch).map_or(now, |last| last + WATCH_INTERVAL);
        self.workspace
            .autosave_due()
            .map_or(watch, |due| due.min(watch))
    }

    /// The recovery file's job when the app is ending abnormally (`None`: nothing
    /// unsaved); see [`crate::tui::app::driver::emergency_save`].
    pub fn emergency_job(&mut self) -> Option<Job> {
        let job = self.workspace.recovery_job(Instant::now())?;
        Some(Job::WriteRecovery(job))
    }

    /// Takes in what came of file work.
    pub(in crate::tui) fn take_in(&mut self, done: Done) -> Option<Effect> {
        match done {
            Done::Saved {
                target,
                stamp,
                template,
                note,
                then_quit,
            } => {
                let note = note.map_or(String::new(), |note| format!(" · {note}"));
                self.notify(format!("saved {}{note}", target.display()));
                self.workspace.saved(target, stamp, template);
                return then_quit.then_some(Effect::Quit);
            }
            Done::TemplateOutside(outsider) => {
                self.overlay = Some(Overlay::Confirm(Confirm::TemplateOutside(outsider)))
            }
            Done::Changed => self.overlay = Some(Overlay::Confirm(Confirm::Changed)),
            Done::Exists(path) => {
                self.warn(format!("{} exists; choose another name", path.display()))
            }
            Done::SaveFailed(err) => self.warn(format!("not saved: {err}")),
            Done::RecoveryWritten { result, at } => self.recovery_written(result, at),
            Done::Discarded => return Some(Effect::Quit),
            Done::DiscardedFound { path, next } => {
                self.notify(format!("discarded {}", path.display()));
                self.offer_recovery(next);
            }
            Done::RecoveryFound(found) => self.offer_recovery(found),
            Done::Sessions { dir, entries } => self.show_picker(dir, entries),
            Done::Opened { path, result } => self.opened_session(path, result),
            Done::Restored { path, result } => match result {
                Ok(workspace) => {
                    self.load(*workspace);
                    self.notify(format!("unsaved changes restored from {}", path.display()));
                }
                Err(err) => self.warn(format!("could not restore: {err}")),
            },
            Done::Imported {
                path,
                workspace,
                notice,
            } => self.imported(path, *workspace, notice),
            Done::NewSession(workspace) => self.new_session_made(*workspace),
            Done::ToolsRead { path, result } => self.tools_read(&path, result),
            Done::Openable(files) => self.openable_listed(files),
            Done::Folder { typed, entries } => self.folder_listed(typed, entries),
            Done::SessionChecked { path, meta, stamp } => {
                if self.workspace.session_checked(&path, meta, stamp) && self.overlay.is_none() {
                    self.overlay = Some(Overlay::Confirm(Confirm::Changed));
                }
            }
            Done::TemplateSeen { path, stamp } => self.workspace.template_seen(&path, stamp),
            Done::TemplateChanged {
                path,
                stamp,
                reloaded,
            } => {
                let reloaded = self.workspace.template_changed(&path, stamp, reloaded);
                self.template_changed(reloaded);
            }
        }
        None
    }

    fn recovery_written(&mut self, result: Result<PathBuf, String>, at: Instant) {
        if let Err(err) = self.workspace.recovery_written(result, at) {
            // An error already on show (a failed save, most likely for the same reason:
            // a full disk) stays; it is the one the user must not miss.
            if !self.status.as_ref().is_some_and(|s| s.error) {
                self.warn(format!("recovery file not written: {err}"));
            }
        }
    }

    /// Asks about the newest recovery file an earlier run left, if any.
    fn offer_recovery(&mut self, found: Option<Found>) {
        if let Some(found) = found {
            self.overlay = Some(Overlay::Confirm(Confirm::Restore(found)));
        }
    }

    fn show_picker(&mut self, dir: PathBuf, entries: Vec<PathBuf>) {
        if entries.is_empty() {
            let dir = dir.display();
            return self.warn(format!("no sessions in {dir}/ yet (Ctrl+S saves one)"));
        }
        self.overlay = Some(Overlay::Picker(Picker::new(entries, dir)));
    }

    fn opened_session(&mut self, path: PathBuf, result: Result<Box<OpenedSession>, String>) {
        let opened = match result {
            Ok(opened) => *opened,
            Err(err) => return self.warn(format!("could not open: {err}")),
        };
        self.load(opened.workspace);
        match opened.notice {
            Some(text) => self.warn(text),
            None => self.notify(format!("opened {}", path.display())),
        }
        self.offer_recovery(opened.recovery);
    }

    fn imported(&mut self, path: PathBuf, workspace: Workspace, notice: Option<String>) {
        self.load(workspace);
        self.opening.set = None;
        match notice {
            Some(text) => self.warn(text),
            None => self.notify(format!("imported {}", path.display())),
        }
    }

    fn template_changed(
        &mut self,
        reloaded: Option<Result<chatplate_core::catalog::TemplateSource, String>>,
    ) {
        match reloaded {
            Some(Ok(template)) => {
                self.reload_preview();
                self.templates.remember(&template);
                self.invalidate();
                self.notify(format!("reloaded {} from disk", template.name));
            }
            Some(Err(err)) => self.warn(format!("template reload failed: {err}")),
            None => {}
        }
    }
}
