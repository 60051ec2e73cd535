//! The document being edited: the session, where it lives, its template, whether it has
//! unsaved changes, the recovery file that protects those changes (named by
//! [`crate::tui::files::recovery`]), and the template file watch.
//!
//! Nothing here touches the disk after construction: saving, the recovery file and the
//! watch hand out [`crate::tui::files::disk`] jobs and take their outcomes in.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chatplate_core::catalog::TemplateSource;
use chatplate_core::session::{Session, TemplateRef};

use crate::tui::files::disk;

use crate::tui::files::disk::Document;

use crate::tui::files::disk::FileStamp;

use crate::tui::files::disk::Guard;

use crate::tui::files::disk::Lookup;

use crate::tui::files::disk::Outside;

use crate::tui::files::disk::RecoveryWrite;

use crate::tui::files::disk::Removal;

use crate::tui::files::disk::Save;

use crate::tui::files::disk::Stamp;
use crate::tui::files::recovery;

mod session_watch;
mod watch;

pub use session_watch::{FileMeta, SessionCheck};

/// Quiet time after the last change before the recovery file is written: short, so a
/// dropped connection loses less and the app is idle within a second of an edit (the
/// write is the last thing an edit costs), long enough to skip the pauses within a word.
const RECOVERY_DEBOUNCE: Duration = Duration::from_millis(500);
/// Longest a change waits for the recovery file during continuous typing.
const RECOVERY_MAX_DELAY: Duration = Duration::from_secs(5);

/// The session under edit and everything about its files.
#[derive(Debug)]
pub struct Workspace {
    /// The session. Its template reference is the one last read or written: what the
    /// session renders with is [`Workspace::template`], and every write refers to that
    /// anew from the file's folder ([`disk::Document`]), outside `update`.
    pub session: Session,
    /// Where it was loaded from / saved to; `None` until the first save.
    pub path: Option<PathBuf>,
    /// The template in use.
    pub template: TemplateSource,
    /// Unsaved changes exist.
    pub dirty: bool,
    /// The session as last opened or saved, when the file holds it: undoing back to it
    /// leaves nothing unsaved (see [`Workspace::clean_again`]).
    clean: Option<Session>,
    /// Where new sessions are saved and looked for.
    pub sessions_dir: PathBuf,
    pending: Option<Pending>,
    watch: Option<Watch>,
    /// What an untitled session's recovery file is named after (what was opened).
    untitled_key: String,
    /// The restore question may offer an untitled session's recovery file of another
    /// template (a plain `chatplate`; see [`Lookup::elsewhere`]).
    pub offer_elsewhere: bool,
    /// The recovery file this run writes: chosen at the first write, and never one an
    /// earlier run left that the user has not decided on.
    recovery: Option<PathBuf>,
    /// The session file's size and content hash when it was last read or written.
    disk: Option<FileStamp>,
    /// The session file's size and modification time at the last look of the session
    /// watch (see `session_watch`).
    disk_meta: Option<session_watch::FileMeta>,
    /// The session's template could not be loaded: why. The session keeps its
    /// reference (saving does not switch it) until the user picks another template.
    pub missing_template: Option<String>,
    /// The template's file may not be named from the session's folder, and the user
    /// chose to save its text instead: later writes do the same, until another template
    /// is picked.
    inline_template: bool,
    /// The template's file could not be read again since it was loaded: the version
    /// read before is still in use (shown until the file is back or another template is
    /// picked).
    pub template_file: Option<FileProblem>,
}

/// What is wrong with the template's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileProblem {
    /// It is gone.
    Deleted,
    /// It is there but could not be read as a template.
    Unreadable,
}

/// Where a workspace lives: what a session restored from a recovery file keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The session file, if saved.
    pub path: Option<PathBuf>,
    /// The folder relative template paths are written against.
    pub session_dir: PathBuf,
    /// Where new sessions are saved.
    pub sessions_dir: PathBuf,
    /// What an untitled session's recovery file is named after.
    pub untitled_key: String,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    first: Instant,
    last: Instant,
}

/// The template file being watched.
#[derive(Debug, Clone)]
struct Watch {
    path: PathBuf,
    /// The file's stamp at the last look; `None` until the event loop first looks.
    seen: Option<Stamp>,
}

impl Workspace {
    /// The session's template, unless it is missing (then there is none to select or
    /// to read a schema from).
    pub fn current_template(&self) -> Option<&TemplateSource> {
        self.missing_template.is_none().then_some(&self.template)
    }

    /// A workspace for `session` rendered with `template`. It looks at the disk (the
    /// session file's content and the template file's stamp, so changes other programs
    /// make later show; the canonical path that names an untitled session's recovery
    /// file), so only the code that opens files makes one, never `update`.
    pub fn new(
        session: Session,
        path: Option<PathBuf>,
        template: TemplateSource,
        sessions_dir: PathBuf,
    ) -> Self {
        let mut workspace = Self::unread(session, path, template, sessions_dir);
        workspace.disk = workspace.path.as_deref().and_then(FileStamp::of);
        if let Some(watch) = &mut workspace.watch {
            watch.seen = Some(disk::stamp(&watch.path));
        }
        workspace
    }

    fn unread(
        session: Session,
        path: Option<PathBuf>,
        template: TemplateSource,
        sessions_dir: PathBuf,
    ) -> Self {
        let mut workspace = Workspace {
            untitled_key: recovery::untitled_key(&template),
            offer_elsewhere: false,
            session,
            path,
            template,
            dirty: false,
            clean: None,
            sessions_dir,
            pending: None,
            watch: None,
            recovery: None,
            disk: None,
            disk_meta: None,
            missing_template: None,
            inline_template: false,
            template_file: None,
        };
        workspace.watch_template();
        workspace.clean = workspace.path.is_some().then(|| workspace.session.clone());
        workspace
    }

    /// After an undo or redo: back at what the file holds, nothing is unsaved (and no
    /// recovery file is due).
    pub fn clean_again(&mut self) {
        if self.dirty && self.clean.as_ref() == Some(&self.session) {
            self.dirty = false;
            self.pending = None;
        }
    }

    /// Marks the session unsaved although nothing was edited (imported, restored): no
    /// undo makes it clean.
    pub fn unsaved(&mut self) {
        self.dirty = true;
        self.clean = None;
    }

    /// The folder relative template paths are written against.
    pub fn session_dir(&self) -> PathBuf {
        folder_of(self.path.as_deref(), &self.sessions_dir)
    }

    /// The display name: the file name, or "untitled".
    pub fn name(&self) -> String {
        self.path
            .as_deref()
            .and_then(Path::file_name)
            .map_or_else(|| "untitled".into(), |n| n.to_string_lossy().into_owned())
    }

    /// Records a change: marks the session dirty and schedules the recovery file.
    pub fn touch(&mut self) {
        let now = Instant::now();
        self.dirty = true;
        let first = self.pending.map_or(now, |p| p.first);
        self.pending = Some(Pending { first, last: now });
    }

    /// Uses `template` from now on and points the session at it.
    pub fn set_template(&mut self, template: TemplateSource) {
        if let Some(bos) = &template.bos_token {
            self.session.bos_token = Some(bos.clone());
        }
        if let Some(eos) = &template.eos_token {
            self.session.eos_token = Some(eos.clone());
        }
        self.template = template;
        self.missing_template = None;
        self.inline_template = false;
        self.template_file = None;
        self.watch_template();
    }

    /// The template reference could not be resolved: keep it as it is, render nothing,
    /// and watch for the file to appear (its state is read now: this runs where the
    /// session is opened).
    pub fn template_missing(&mut self, why: String) {
        self.missing_template = Some(why);
        self.watch = match &self.session.template {
            chatplate_core::session::TemplateRef::Path(path)
            | chatplate_core::session::TemplateRef::Named { path, .. } => {
                let path = self.session_dir().join(path);
                Some(Watch {
                    seen: Some(disk::stamp(&path)),
                    path,
                })
            }
            _ => None,
        };
    }

    /// What the missing template is called on screen ("template not found", "template
    /// not allowed"): the name of the placeholder that stands in for it, without its
    /// mark.
    pub fn missing_label(&self) -> Option<&str> {
        let name = self.template.name.as_str();
        (self.missing_template.as_ref()).map(|_| name.trim_start_matches("✗ "))
    }

    /// The check a save of this session's own file makes: that no other program changed
    /// it since it was read or saved (nothing to check before the first read).
    pub fn unchanged_guard(&self) -> Guard {
        self.disk.map_or(Guard::Overwrite, Guard::Unchanged)
    }

    /// The job that saves to `path` (or the current path, or `untitled.json` in the
    /// sessions folder) after checking `guard`. The session's template reference is
    /// made relative to where it goes, by the job; `outside` says what to do when the
    /// template may not be named from there.
    pub fn save_job(
        &self,
        path: Option<PathBuf>,
        guard: Guard,
        then_quit: bool,
        outside: Outside,
    ) -> Save {
        let target = path
            .or_else(|| self.path.clone())
            .unwrap_or_else(|| self.sessions_dir.join("untitled.json"));
        Save {
            document: self.document(outside),
            target,
            guard,
            discard: self.recovery.clone().map(|path| self.removal(path)),
            then_quit,
        }
    }

    /// The session as it goes to a file; a missing template keeps the reference it was
    /// loaded with.
    fn document(&self, outside: Outside) -> Document {
        let template = (self.missing_template.is_none()).then(|| Box::new(self.template.clone()));
        Document {
            session: Box::new(self.session.clone()),
            template,
            outside: match self.inline_template {
                true => Outside::Inline,
                false => outside,
            },
        }
    }

    /// The session was written to `target`, naming its template as `template`: no
    /// unsaved changes, and this run's recovery file is gone (the save deleted it).
    pub fn saved(&mut self, target: PathBuf, stamp: FileStamp, template: TemplateRef) {
        let from_file = self.template.watched_path().is_some();
        self.inline_template = from_file && matches!(template, TemplateRef::Source(_));
        self.path = Some(target);
        self.disk = Some(stamp);
        self.session.template = template;
        if self.missing_template.is_none() {
            // What the file now records (see `Document::refer`).
            self.session.record_template(&self.template.source);
        }
        self.dirty = false;
        self.clean = Some(self.session.clone());
        self.pending = None;
        self.recovery = None;
    }

    /// Where to look for recovery files (see [`crate::tui::files::recovery`]).
    pub fn recovery_lookup(&self) -> Lookup {
        Lookup {
            base: recovery::base_path(self.path.as_deref(), &self.sessions_dir, &self.untitled_key),
            own: self.recovery.clone(),
            saved: self.path.clone(),
            // Only into an untitled session: a restored file takes this one's place.
            elsewhere: self.offer_elsewhere && self.path.is_none(),
        }
    }

    /// Where this workspace lives, for restoring a recovery file in its place.
    pub fn place(&self) -> Place {
        Place {
            path: self.path.clone(),
            session_dir: self.session_dir(),
            sessions_dir: self.sessions_dir.clone(),
            untitled_key: self.untitled_key.clone(),
        }
    }

    /// Names recovery files after `key` (a restored untitled session keeps the key of
    /// what was opened, even if its template changed).
    pub fn keep_recovery_key(&mut self, key: &str) {
        self.untitled_key = key.to_string();
    }

    /// The restored recovery file becomes this run's own (its contents are now the
    /// session's, so later autosaves may overwrite it).
    pub fn adopt_recovery(&mut self, path: PathBuf) {
        self.recovery = Some(path);
    }

    /// The job that writes the recovery file now, if there are unsaved changes.
    pub fn recovery_job(&mut self, now: Instant) -> Option<RecoveryWrite> {
        if !self.dirty {
            return None;
        }
        self.pending = None;
        Some(RecoveryWrite {
            chosen: self.recovery.clone(),
            base: self.recovery_lookup().base,
            document: self.document(Outside::Keep),
            at: now,
        })
    }

    /// When the recovery file is next due, if there are changes it does not hold yet.
    pub fn autosave_due(&self) -> Option<Instant> {
        self.pending
            .map(|p| (p.last + RECOVERY_DEBOUNCE).min(p.first + RECOVERY_MAX_DELAY))
    }

    /// The recovery file's job when the debounce time has passed at `now`.
    pub fn autosave_job(&mut self, now: Instant) -> Option<RecoveryWrite> {
        let due = self.autosave_due().is_some_and(|due| now >= due);
        due.then(|| self.recovery_job(now)).flatten()
    }

    /// Takes the recovery write's outcome in. After a failure the next attempt waits
    /// another debounce period (from when it was asked for) instead of retrying at once.
    pub fn recovery_written(
        &mut self,
        result: Result<PathBuf, String>,
        at: Instant,
    ) -> Result<(), String> {
        match result {
            Ok(path) => {
                self.recovery = Some(path);
                Ok(())
            }
            Err(err) => {
                self.pending = Some(Pending {
                    first: at,
                    last: at,
                });
                Err(err)
            }
        }
    }

    /// Forgets this run's recovery file (the user discarded the changes); returns its
    /// removal for the event loop to do. Files kept from earlier runs are left alone.
    pub fn discard_recovery(&mut self) -> Option<Removal> {
        self.pending = None;
        self.recovery.take().map(|path| self.removal(path))
    }

    /// The removal of recovery file `path`.
    pub fn removal(&self, path: PathBuf) -> Removal {
        Removal {
            path,
            sessions_dir: self.sessions_dir.clone(),
        }
    }
}

/// The folder of a session file at `path` (the sessions folder while there is none).
fn folder_of(path: Option<&Path>, sessions_dir: &Path) -> PathBuf {
    match path.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        Some(_) => PathBuf::from("."),
        None => sessions_dir.to_path_buf(),
    }
}
