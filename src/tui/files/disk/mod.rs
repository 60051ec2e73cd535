//! The app's file work. `update` never touches the disk: it describes what it needs as a
//! [`Job`] (inside [`Effect::Disk`](crate::tui::context::Effect::Disk)), the event loop hands the
//! job to [`perform()`] and feeds the [`Done`] back to `update` (see [`crate::tui::app::driver`]).
//!
//! Saving stays safe: files are replaced atomically, a session file another program
//! changed since it was read is not overwritten without asking (its size and content
//! hash are compared), a new name never replaces another file, and this run's recovery
//! file is deleted only once the session it protects is written.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use chatplate_core::catalog::TemplateSource;
use chatplate_core::request::Imported;
use chatplate_core::session::{Session, TemplateRef};

use crate::tui::files::recovery::Found;
use crate::tui::files::workspace::Place;
use crate::tui::files::workspace::Workspace;

mod document;
mod perform;

pub use document::{Document, Outside, Outsider};
pub use perform::{perform, recovery_path, session_files};

/// Enough of a file's state to tell that another program rewrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    len: usize,
    hash: u64,
}

impl FileStamp {
    /// The stamp of `bytes` (what was just written).
    pub fn of_bytes(bytes: &[u8]) -> Self {
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash: u64, &b| {
            (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        FileStamp {
            len: bytes.len(),
            hash,
        }
    }

    /// The stamp of the file at `path` (read whole), if it can be read as a session file
    /// (a regular file of at most [`chatplate_core::files::MAX_SESSION_BYTES`]: a FIFO
    /// swapped in for it cannot block the read).
    pub fn of(path: &Path) -> Option<Self> {
        chatplate_core::files::read_bytes(path, chatplate_core::files::MAX_SESSION_BYTES)
            .ok()
            .map(|bytes| Self::of_bytes(&bytes))
    }
}

/// A file's modification time and size (`None`: no such file). The size catches a
/// rewrite within the clock's resolution on file systems with coarse timestamps.
pub type Stamp = Option<(SystemTime, u64)>;

/// The [`Stamp`] of `path` now.
pub fn stamp(path: &Path) -> Stamp {
    let meta = fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// File work `update` asks the event loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// Write the session file.
    Save(Save),
    /// Write the recovery file (the autosave, or the emergency save on the way out).
    WriteRecovery(RecoveryWrite),
    /// Delete this run's recovery file, then quit (the user discarded the changes).
    DiscardAndQuit(Removal),
    /// Delete an earlier run's recovery file, then look for the next one to offer.
    DiscardFound {
        /// The file.
        removal: Removal,
        /// Where the others would be.
        lookup: Lookup,
    },
    /// Look for recovery files earlier runs left.
    FindRecovery(Lookup),
    /// List the session files in a folder (the session picker).
    ListSessions(PathBuf),
    /// Open a session file in place of the current session.
    Open(Open),
    /// Read a recovery file back as the session.
    Restore {
        /// The recovery file.
        recovery: PathBuf,
        /// Where the current session lives (the restored one stays there).
        place: Place,
    },
    /// Make an imported request body the session (its template may be a file to read).
    Import {
        /// The body's file.
        path: PathBuf,
        /// The session and the import's report.
        imported: Box<Imported>,
        /// Where new sessions are saved.
        sessions_dir: PathBuf,
    },
    /// Look at the template file for changes (the file watch).
    Poll(Poll),
    /// Allow a template root (in the config file and for this run), then save.
    AllowRoot {
        /// The folder.
        folder: PathBuf,
        /// The save that waits for it.
        save: Box<Save>,
    },
    /// Look whether another program changed the session file (see `session_watch`).
    CheckSession(crate::tui::files::workspace::SessionCheck),
    /// List the openable files below a folder (the opener's matches, see `dialogs::opener`).
    ListOpenable(PathBuf),
    /// List the folder a path typed in the opener names, as typed (`~/` for the home
    /// folder; see `dialogs::opener_paths`).
    ListFolder(String),
    /// Read tool definitions from a JSON file (see `dialogs::tool_skeleton`).
    ReadTools(PathBuf),
    /// Make the workspace for a new, untitled session.
    NewSession {
        /// The session.
        session: Box<Session>,
        /// Its template.
        template: Box<TemplateSource>,
        /// Where new sessions are saved.
        sessions_dir: PathBuf,
    },
}

/// Writing the session file.
#[derive(Debug, Clone, PartialEq)]
pub struct Save {
    /// Where.
    pub target: PathBuf,
    /// The session, with its template reference still to be made.
    pub document: Document,
    /// What must hold before the file is written.
    pub guard: Guard,
    /// This run's recovery file, deleted once the session is written.
    pub discard: Option<Removal>,
    /// Quit once saved.
    pub then_quit: bool,
}

/// What a save checks before it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: the user chose to overwrite.
    Overwrite,
    /// The file is as it was last read or written (a deleted file counts as unchanged:
    /// saving recreates it).
    Unchanged(FileStamp),
    /// No file is there (saving under a new name never replaces another file).
    Absent,
}

/// A recovery file to delete; a sessions folder left empty by that goes too (it was made
/// for the recovery file, and an empty folder is clutter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The file.
    pub path: PathBuf,
    /// The sessions folder.
    pub sessions_dir: PathBuf,
}

/// Writing the recovery file.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryWrite {
    /// The file this run writes, once chosen.
    pub chosen: Option<PathBuf>,
    /// The first-choice name; until a file is chosen, the first free variant of it is
    /// taken, so a file an earlier run left is never overwritten.
    pub base: PathBuf,
    /// The session, with its template reference still to be made.
    pub document: Document,
    /// When it was asked for (a failure waits a debounce period from then).
    pub at: Instant,
}

/// Where recovery files for a session are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The first-choice name (its numbered variants count too).
    pub base: PathBuf,
    /// This run's own file, which is not offered.
    pub own: Option<PathBuf>,
    /// The saved session the recovery files are of (`None` for an untitled one): what
    /// the restore question diffs them against.
    pub saved: Option<PathBuf>,
    /// With none of its own, offer the newest untitled session's recovery file of
    /// another template (a plain `chatplate`, whose untitled session is the default
    /// template's, would never meet those otherwise).
    pub elsewhere: bool,
}

/// Opening a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The file.
    pub path: PathBuf,
    /// Where new sessions are saved.
    pub sessions_dir: PathBuf,
    /// This run's recovery file, deleted first (the user discarded the changes).
    pub discard: Option<Removal>,
}

/// A look at the watched template file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    /// The file.
    pub path: PathBuf,
    /// Its stamp at the last look; `None` before the first look, which only takes it.
    pub seen: Option<Stamp>,
    /// How to read the template again when the file changed.
    pub reload: Reload,
}

/// How a changed template file is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// The template of this name in the file.
    Named(String),
    /// The session's reference, which could not be resolved before (a missing file).
    Resolve {
        /// The session's template reference.
        reference: TemplateRef,
        /// The session's folder.
        dir: PathBuf,
    },
}

/// What came of a [`Job`], for `update` to take in.
#[derive(Debug)]
pub enum Done {
    /// The session was written.
    Saved {
        /// Where.
        target: PathBuf,
        /// What was written.
        stamp: FileStamp,
        /// The template reference written.
        template: TemplateRef,
        /// Something to tell beside "saved" (a template root allowed).
        note: Option<String>,
        /// Quit now.
        then_quit: bool,
    },
    /// Not saved yet: its template is where the session may not name it (see
    /// [`Outside`]); the user decides.
    TemplateOutside(Outsider),
    /// Not saved: another program changed the file since it was read or saved.
    Changed,
    /// Not saved: a file with the new name exists.
    Exists(PathBuf),
    /// Not saved: why.
    SaveFailed(String),
    /// The recovery file was written (where), or why not.
    RecoveryWritten {
        /// The file, or the error.
        result: Result<PathBuf, String>,
        /// When it was asked for.
        at: Instant,
    },
    /// This run's recovery file is gone: quit.
    Discarded,
    /// An earlier run's recovery file is gone; the next one, if any.
    DiscardedFound {
        /// The deleted file.
        path: PathBuf,
        /// The next file to offer.
        next: Option<Found>,
    },
    /// The newest recovery file an earlier run left, if any.
    RecoveryFound(Option<Found>),
    /// The session files in a folder.
    Sessions {
        /// The folder.
        dir: PathBuf,
        /// The files, sorted.
        entries: Vec<PathBuf>,
    },
    /// A session file was opened, or why not.
    Opened {
        /// The file.
        path: PathBuf,
        /// The session, or the error.
        result: Result<Box<OpenedSession>, String>,
    },
    /// A recovery file was read back, or why not.
    Restored {
        /// The recovery file.
        path: PathBuf,
        /// The restored session, or the error.
        result: Result<Box<Workspace>, String>,
    },
    /// A request body became the session.
    Imported {
        /// The body's file.
        path: PathBuf,
        /// The new session.
        workspace: Box<Workspace>,
        /// What the user should know about the import.
        notice: Option<String>,
    },
    /// The workspace for a new, untitled session.
    NewSession(Box<Workspace>),
    /// The openable files below the working directory.
    Openable(Vec<String>),
    /// The entries of a folder typed in the opener.
    Folder {
        /// The folder, as typed.
        typed: String,
        /// Its entries' names, folders with a `/` after them.
        entries: Vec<String>,
    },
    /// The session file's size or time changed: its stamp now.
    SessionChecked {
        /// The file.
        path: PathBuf,
        /// Its size and time now.
        meta: crate::tui::files::workspace::FileMeta,
        /// Its content's stamp now (`None`: gone or unreadable).
        stamp: Option<FileStamp>,
    },
    /// Tool definitions read from a file, or why not.
    ToolsRead {
        /// The file.
        path: PathBuf,
        /// The tools.
        result: Result<Vec<serde_json::Value>, String>,
    },
    /// The first look at a newly watched template file.
    TemplateSeen {
        /// The file.
        path: PathBuf,
        /// Its stamp.
        stamp: Stamp,
    },
    /// The watched template file changed: the template read again, or why not.
    TemplateChanged {
        /// The file.
        path: PathBuf,
        /// Its new stamp.
        stamp: Stamp,
        /// The template, or the error.
        reloaded: Result<Box<TemplateSource>, String>,
    },
}

/// An opened session file and what the user should know about it.
#[derive(Debug)]
pub struct OpenedSession {
    /// The session and its files.
    pub workspace: Workspace,
    /// A problem that did not stop it (its template is missing).
    pub notice: Option<String>,
    /// The newest recovery file an earlier run left for it.
    pub recovery: Option<Found>,
}
