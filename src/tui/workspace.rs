//! The document being edited: the session, where it lives, its template, whether it has
//! unsaved changes, the recovery file that protects those changes (named by
//! [`super::recovery`]), and the template file watch.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use chatplate_core::catalog::{self, CatalogError, TemplateSource};
use chatplate_core::session::{write_atomically, Session, SessionError};

use super::recovery;

/// Quiet time after the last change before the recovery file is written.
const RECOVERY_DEBOUNCE: Duration = Duration::from_secs(1);
/// Longest a change waits for the recovery file during continuous typing.
const RECOVERY_MAX_DELAY: Duration = Duration::from_secs(5);

/// The session under edit and everything about its files.
#[derive(Debug)]
pub struct Workspace {
    /// The session.
    pub session: Session,
    /// Where it was loaded from / saved to; `None` until the first save.
    pub path: Option<PathBuf>,
    /// The template in use.
    pub template: TemplateSource,
    /// Unsaved changes exist.
    pub dirty: bool,
    /// Where new sessions are saved and looked for.
    pub sessions_dir: PathBuf,
    pending: Option<Pending>,
    watch: Option<Watch>,
    /// What an untitled session's recovery file is named after (what was opened).
    untitled_key: String,
    /// The recovery file this run writes: chosen at the first write, and never one an
    /// earlier run left that the user has not decided on.
    recovery: Option<PathBuf>,
    /// The session file's size and content hash when it was last read or written.
    disk: Option<FileStamp>,
    /// The session's template could not be loaded: why. The session keeps its
    /// reference (saving does not switch it) until the user picks another template.
    pub missing_template: Option<String>,
}

/// Enough of a file's state to tell that another program rewrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: usize,
    hash: u64,
}

impl FileStamp {
    fn of(path: &Path) -> Option<Self> {
        let bytes = fs::read(path).ok()?;
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash: u64, &b| {
            (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Some(FileStamp {
            len: bytes.len(),
            hash,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    first: Instant,
    last: Instant,
}

#[derive(Debug, Clone)]
struct Watch {
    path: PathBuf,
    stamp: Option<(SystemTime, u64)>,
}

impl Workspace {
    /// A workspace for `session` rendered with `template`.
    pub fn new(
        session: Session,
        path: Option<PathBuf>,
        template: TemplateSource,
        sessions_dir: PathBuf,
    ) -> Self {
        let mut workspace = Workspace {
            untitled_key: recovery::untitled_key(&template),
            session,
            path,
            template,
            dirty: false,
            sessions_dir,
            pending: None,
            watch: None,
            recovery: None,
            disk: None,
            missing_template: None,
        };
        workspace.disk = workspace.path.as_deref().and_then(FileStamp::of);
        workspace.watch_template();
        workspace
    }

    /// The folder relative template paths are written against.
    pub fn session_dir(&self) -> PathBuf {
        match self.path.as_deref().and_then(Path::parent) {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            Some(_) => PathBuf::from("."),
            None => self.sessions_dir.clone(),
        }
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
        self.session.template = self.template.reference(&self.session_dir());
        self.watch_template();
    }

    /// The template reference could not be resolved: keep it as it is, render nothing,
    /// and watch for the file to appear.
    pub fn template_missing(&mut self, why: String) {
        self.missing_template = Some(why);
        self.watch = match &self.session.template {
            chatplate_core::session::TemplateRef::Path(path)
            | chatplate_core::session::TemplateRef::Named { path, .. } => Some(Watch {
                path: self.session_dir().join(path),
                stamp: stamp(&self.session_dir().join(path)),
            }),
            _ => None,
        };
    }

    /// Whether another program changed the session file since it was read or saved
    /// (a deleted file does not count: saving recreates it).
    pub fn changed_on_disk(&self) -> bool {
        match (&self.path, self.disk) {
            (Some(path), Some(known)) => FileStamp::of(path).is_some_and(|now| now != known),
            _ => false,
        }
    }

    /// Saves to `path` (or the current path); clears the dirty flag and this run's
    /// recovery file. Returns the path written.
    pub fn save(&mut self, path: Option<PathBuf>) -> Result<PathBuf, SessionError> {
        let target = path
            .or_else(|| self.path.clone())
            .unwrap_or_else(|| self.sessions_dir.join("untitled.json"));
        let previous = self.path.replace(target.clone());
        self.refer_to_template();
        if let Err(err) = self.session.save(&target) {
            self.path = previous;
            return Err(err);
        }
        self.disk = FileStamp::of(&target);
        self.dirty = false;
        self.pending = None;
        self.discard_recovery();
        Ok(target)
    }

    /// Points the session at its template, relative to where it is saved; a missing
    /// template keeps the reference it was loaded with.
    fn refer_to_template(&mut self) {
        if self.missing_template.is_none() {
            self.session.template = self.template.reference(&self.session_dir());
        }
    }

    /// Where this run keeps unsaved changes (see [`super::recovery`]).
    pub fn recovery_path(&self) -> PathBuf {
        self.recovery
            .clone()
            .unwrap_or_else(|| recovery::free_path(&self.recovery_base()))
    }

    fn recovery_base(&self) -> PathBuf {
        recovery::base_path(self.path.as_deref(), &self.sessions_dir, &self.untitled_key)
    }

    /// Recovery files earlier runs left for this session, newest first.
    pub fn found_recovery(&self) -> Vec<PathBuf> {
        let mut found = recovery::existing(&self.recovery_base());
        found.retain(|path| Some(path) != self.recovery.as_ref());
        found
    }

    /// Names recovery files after what `other` was opened from (a restored untitled
    /// session keeps its key even if its template changed).
    pub fn keep_recovery_key(&mut self, other: &Workspace) {
        self.untitled_key = other.untitled_key.clone();
    }

    /// The restored recovery file becomes this run's own (its contents are now the
    /// session's, so later autosaves may overwrite it).
    pub fn adopt_recovery(&mut self, path: PathBuf) {
        self.recovery = Some(path);
    }

    /// Writes the recovery file now (atomically) if there are unsaved changes.
    pub fn write_recovery(&mut self) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let path = self.recovery_path();
        self.refer_to_template();
        write_atomically(&path, self.session.to_json().as_bytes())?;
        self.recovery = Some(path);
        self.pending = None;
        Ok(())
    }

    /// When the recovery file is next due, if there are changes it does not hold yet.
    pub fn autosave_due(&self) -> Option<Instant> {
        self.pending
            .map(|p| (p.last + RECOVERY_DEBOUNCE).min(p.first + RECOVERY_MAX_DELAY))
    }

    /// Writes the recovery file when the debounce time has passed. After a failure the
    /// next attempt waits another debounce period instead of retrying at once.
    pub fn autosave(&mut self, now: Instant) -> std::io::Result<bool> {
        let due = self.autosave_due().is_some_and(|due| now >= due);
        if due {
            if let Err(err) = self.write_recovery() {
                self.pending = Some(Pending {
                    first: now,
                    last: now,
                });
                return Err(err);
            }
        }
        Ok(due)
    }

    /// Deletes this run's recovery file (after a save, or when the user discarded the
    /// changes). Files kept from earlier runs are left alone.
    pub fn discard_recovery(&mut self) {
        self.pending = None;
        if let Some(path) = self.recovery.take() {
            self.remove_recovery(&path);
        }
    }

    /// Deletes a recovery file; a sessions folder left empty by that goes too (it was
    /// made for the recovery file, and an empty folder is clutter).
    pub fn remove_recovery(&mut self, path: &Path) {
        let _ = fs::remove_file(path);
        if path.parent() == Some(self.sessions_dir.as_path()) {
            // Fails, as it should, unless the folder is empty.
            let _ = fs::remove_dir(&self.sessions_dir);
        }
    }

    fn watch_template(&mut self) {
        self.watch = self.template.watched_path().map(|path| Watch {
            path: path.to_path_buf(),
            stamp: stamp(path),
        });
    }

    /// When the template file changed on disk, reloads and returns it.
    pub fn poll_template(&mut self) -> Option<Result<TemplateSource, CatalogError>> {
        let watch = self.watch.as_mut()?;
        let now = stamp(&watch.path);
        if now == watch.stamp {
            return None;
        }
        watch.stamp = now;
        let path = watch.path.clone();
        if self.missing_template.is_some() {
            let dir = self.session_dir();
            let found = catalog::resolve(
                &self.session.template,
                &dir,
                &super::startup::template_access(&dir),
            );
            if let Ok(template) = &found {
                self.template = template.clone();
                self.missing_template = None;
                self.watch_template();
            }
            return Some(found);
        }
        let reloaded = catalog::load_path(&path).map(|all| {
            let name = &self.template.name;
            all.into_iter().find(|t| &t.name == name)
        });
        Some(match reloaded {
            Ok(Some(template)) => {
                self.template = template.clone();
                Ok(template)
            }
            Ok(None) => Err(CatalogError::Config {
                path,
                message: format!("{} is no longer in this file", self.template.name),
            }),
            Err(err) => Err(err),
        })
    }
}

/// Modification time and size: the size catches a rewrite within the clock's
/// resolution on file systems with coarse timestamps.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}
