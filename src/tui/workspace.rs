//! The document being edited: the session, where it lives, its template, whether it has
//! unsaved changes, the recovery file that protects those changes, and the template
//! file watch.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::catalog::{self, CatalogError, TemplateSource};
use crate::session::{write_atomically, Session, SessionError};

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
            session,
            path,
            template,
            dirty: false,
            sessions_dir,
            pending: None,
            watch: None,
        };
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
        self.session.template = self.template.reference(&self.session_dir());
        self.watch_template();
    }

    /// Saves to `path` (or the current path); clears the dirty flag and the recovery
    /// files. Returns the path written.
    pub fn save(&mut self, path: Option<PathBuf>) -> Result<PathBuf, SessionError> {
        let old_recovery = self.recovery_path();
        let target = path
            .or_else(|| self.path.clone())
            .unwrap_or_else(|| self.sessions_dir.join("untitled.json"));
        self.path = Some(target.clone());
        self.session.template = self.template.reference(&self.session_dir());
        self.session.save(&target)?;
        self.dirty = false;
        self.pending = None;
        let _ = fs::remove_file(&old_recovery);
        let _ = fs::remove_file(self.recovery_path());
        Ok(target)
    }

    /// Where unsaved changes are kept: `<stem>.recovery.json` beside the session, or
    /// `.untitled.recovery.json` in the sessions folder.
    pub fn recovery_path(&self) -> PathBuf {
        recovery_path_for(self.path.as_deref(), &self.sessions_dir)
    }

    /// Writes the recovery file now (atomically) if there are unsaved changes.
    pub fn write_recovery(&mut self) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        self.session.template = self.template.reference(&self.session_dir());
        write_atomically(&self.recovery_path(), self.session.to_json().as_bytes())?;
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

    /// Deletes the recovery file (after the user discarded the changes).
    pub fn discard_recovery(&mut self) {
        self.pending = None;
        let _ = fs::remove_file(self.recovery_path());
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

/// The recovery file for a session at `path` (or an untitled one).
pub fn recovery_path_for(path: Option<&Path>, sessions_dir: &Path) -> PathBuf {
    match path {
        Some(path) => {
            let stem = path
                .file_stem()
                .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
            path.with_file_name(format!("{stem}.recovery.json"))
        }
        None => sessions_dir.join(".untitled.recovery.json"),
    }
}

/// Modification time and size: the size catches a rewrite within the clock's
/// resolution on file systems with coarse timestamps.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}
