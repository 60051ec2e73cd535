//! The session file watch: on the same timer as the template watch, the event loop
//! looks at the session file's size and modification time (a `stat`, cheap whatever
//! the file's size), and only when they changed reads it to compare its content with
//! what was last read or written. Another program's change is noticed when it happens,
//! not at the next save: the app asks what to do (overwrite, reload, save as) right
//! away. The app's own saves update the stamp, so they are never taken for a change.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Workspace;
use crate::tui::files::disk::Done;
use crate::tui::files::disk::FileStamp;

/// A file's size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    len: u64,
    modified: Option<SystemTime>,
}

impl FileMeta {
    fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileMeta {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// One look at the session file (file work).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCheck {
    path: PathBuf,
    seen: Option<FileMeta>,
}

impl SessionCheck {
    /// Stats the file; reads it only when its size or time changed since the last look.
    pub fn perform(self) -> Option<Done> {
        let meta = FileMeta::of(&self.path)?;
        if self.seen == Some(meta) {
            return None;
        }
        Some(Done::SessionChecked {
            stamp: FileStamp::of(&self.path),
            path: self.path,
            meta,
        })
    }
}

impl Workspace {
    /// The next look at the session file, when it has one.
    pub fn session_check(&self) -> Option<SessionCheck> {
        Some(SessionCheck {
            path: self.path.clone()?,
            seen: self.disk_meta,
        })
    }

    /// A look found `stamp`: whether the file now differs from what was last read or
    /// written (another program changed it). The first look only records the time.
    pub fn session_checked(
        &mut self,
        path: &Path,
        meta: FileMeta,
        stamp: Option<FileStamp>,
    ) -> bool {
        if self.path.as_deref() != Some(path) {
            return false;
        }
        let first = self.disk_meta.replace(meta).is_none();
        !first && stamp.is_some() && stamp != self.disk
    }
}
