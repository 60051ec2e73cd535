//! Doing the file work: what [`perform()`] does for each [`Job`].

use std::fs;
use std::path::{Path, PathBuf};

use chatplate_core::catalog::{self, CatalogError, TemplateSource};
use chatplate_core::session::{write_atomically, SessionError};

use super::{
    stamp, Done, FileStamp, Guard, Job, Lookup, Open, OpenedSession, Outsider, Poll, RecoveryWrite,
    Reload, Removal, Save,
};
use crate::template_roots;
use crate::tui::files::recovery;
use crate::tui::files::recovery::Found;
use crate::tui::files::startup;
use crate::tui::files::workspace::Workspace;

/// Does `job`; returns what came of it (`None`: nothing to tell, as when the watched
/// template file did not change).
pub fn perform(job: Job) -> Option<Done> {
    Some(match job {
        Job::Save(save) => write_session(save),
        Job::WriteRecovery(write) => Done::RecoveryWritten {
            at: write.at,
            result: write_recovery(write),
        },
        Job::AllowRoot { folder, save } => allow_root_and_save(&folder, *save),
        Job::DiscardAndQuit(removal) => {
            remove(&removal);
            Done::Discarded
        }
        Job::DiscardFound { removal, lookup } => {
            remove(&removal);
            Done::DiscardedFound {
                path: removal.path,
                next: find_recovery(&lookup),
            }
        }
        Job::FindRecovery(lookup) => Done::RecoveryFound(find_recovery(&lookup)),
        Job::CheckSession(check) => return check.perform(),
        Job::ListOpenable(root) => {
            Done::Openable(crate::tui::dialogs::opener::list_openable(&root))
        }
        Job::ListFolder(typed) => Done::Folder {
            entries: crate::tui::dialogs::opener_paths::list_folder(&typed),
            typed,
        },
        Job::ReadTools(path) => Done::ToolsRead {
            result: crate::tui::dialogs::tool_skeleton::read_tools(&path),
            path,
        },
        Job::ListSessions(dir) => Done::Sessions {
            entries: session_files(&dir),
            dir,
        },
        Job::Open(open) => open_session(open),
        Job::Restore { recovery, place } => Done::Restored {
            result: (startup::restore(&place, &recovery).map(Box::new))
                .map_err(|err| format!("{err:#}")),
            path: recovery,
        },
        Job::Import {
            path,
            imported,
            sessions_dir,
        } => {
            let (workspace, notice) = startup::request_workspace(&path, *imported, sessions_dir);
            Done::Imported {
                path,
                workspace: Box::new(workspace),
                notice,
            }
        }
        Job::Poll(poll) => return look_at_template(poll),
        Job::NewSession {
            mut session,
            template,
            sessions_dir,
        } => {
            let template = *template;
            session.template = template.reference(&sessions_dir);
            let mut workspace = Workspace::new(*session, None, template.clone(), sessions_dir);
            workspace.set_template(template);
            Done::NewSession(Box::new(workspace))
        }
    })
}

fn write_session(save: Save) -> Done {
    let (done, discard) = write_unremoved(save);
    if let Some(removal) = &discard {
        remove(removal);
    }
    done
}

/// A save up to, not including, the removal of this run's recovery file (a kill at that
/// moment leaves what this leaves): what came of it, and that removal when it saved.
fn write_unremoved(save: Save) -> (Done, Option<Removal>) {
    let refused = match save.guard {
        Guard::Overwrite => None,
        Guard::Unchanged(known) => FileStamp::of(&save.target)
            .is_some_and(|now| now != known)
            .then_some(Done::Changed),
        Guard::Absent => (save.target.exists()).then(|| Done::Exists(save.target.clone())),
    };
    if let Some(refused) = refused {
        return (refused, None);
    }
    let (text, template) = match save.document.written(&folder_of(&save.target)) {
        Ok(written) => written,
        Err(refused) => {
            let outsider = Outsider {
                template: refused.template,
                folder: refused.folder,
                target: save.target,
                guard: save.guard,
                then_quit: save.then_quit,
            };
            return (Done::TemplateOutside(outsider), None);
        }
    };
    if let Some(removal) = &save.discard {
        hand_over(removal, &save.target, &text);
    }
    if let Err(cause) = write_atomically(&save.target, text.as_bytes()) {
        let path = save.target;
        let failed = SessionError::Io { path, cause }.to_string();
        return (Done::SaveFailed(failed), None);
    }
    let saved = Done::Saved {
        stamp: FileStamp::of_bytes(text.as_bytes()),
        target: save.target,
        template,
        note: None,
        then_quit: save.then_quit,
    };
    (saved, save.discard)
}

/// Before a save writes the session file: this run's recovery file takes the text being
/// saved. A kill between the save and the recovery file's removal then leaves a recovery
/// file equal to the saved session, which the next start drops ([`find_recovery`]),
/// instead of an older one that would be offered, and restored, over the newer typing
/// the save holds. A kill before the save leaves the recovery file holding that typing.
/// Only a recovery file beside the target can take its text (its template path is
/// relative to the target's folder); a failure here leaves the older file, as before.
fn hand_over(recovery: &Removal, target: &Path, text: &str) {
    if folder_of(&recovery.path) == folder_of(target) && recovery.path.exists() {
        let _ = write_atomically(&recovery.path, text.as_bytes());
    }
}

/// Allows `folder` as a template root (in the config file, so `check` and the next run
/// accept it too, and for this run), then saves.
fn allow_root_and_save(folder: &Path, save: Save) -> Done {
    match template_roots::remember(folder) {
        Ok(config) => {
            startup::allow_template_root(folder.to_path_buf());
            let note = format!(
                "template root {} allowed in {}",
                folder.display(),
                config.display()
            );
            match write_session(save) {
                Done::Saved {
                    target,
                    stamp,
                    template,
                    then_quit,
                    ..
                } => Done::Saved {
                    target,
                    stamp,
                    template,
                    note: Some(note),
                    then_quit,
                },
                other => other,
            }
        }
        Err(err) => Done::SaveFailed(format!("could not allow {}: {err}", folder.display())),
    }
}

/// The folder of a file at `path` (`.` for a bare file name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn write_recovery(write: RecoveryWrite) -> Result<PathBuf, String> {
    let path = (write.chosen).unwrap_or_else(|| recovery::free_path(&write.base));
    let (text, _) = (write.document)
        .written(&folder_of(&path))
        .map_err(|refused| format!("{} is not allowed", refused.template.display()))?;
    write_atomically(&path, text.as_bytes()).map_err(|err| err.to_string())?;
    Ok(path)
}

/// Where `files::workspace` keeps (or would now keep) unsaved changes: its own recovery file, or
/// the first free name (which takes a look at the disk).
pub fn recovery_path(workspace: &Workspace) -> PathBuf {
    let lookup = workspace.recovery_lookup();
    (lookup.own).unwrap_or_else(|| recovery::free_path(&lookup.base))
}

fn remove(removal: &Removal) {
    let _ = fs::remove_file(&removal.path);
    if removal.path.parent() == Some(removal.sessions_dir.as_path()) {
        // Fails, as it should, unless the folder is empty.
        let _ = fs::remove_dir(&removal.sessions_dir);
    }
}

/// The newest recovery file for `lookup` that is not this run's own, described for the
/// restore question. One that holds the saved session as it is (what a save killed
/// before it removed the recovery file leaves, see [`hand_over`]) is removed instead:
/// offering it could only take the session back to an older state.
fn find_recovery(lookup: &Lookup) -> Option<Found> {
    let mut found = recovery::existing(&lookup.base);
    found.retain(|path| Some(path) != lookup.own.as_ref());
    if let Some(saved) = &lookup.saved {
        found.retain(|path| {
            let redundant = recovery::holds_saved(path, saved);
            if redundant {
                let _ = fs::remove_file(path);
            }
            !redundant
        });
    }
    if found.is_empty() && lookup.elsewhere {
        found = recovery::untitled_others(&lookup.base);
        found.retain(|path| Some(path) != lookup.own.as_ref());
    }
    let newest = found.first()?;
    let mut described = recovery::describe(newest, found.len() - 1);
    if let Some(saved) = &lookup.saved {
        described.diff = crate::tui::dialogs::recovery_diff::between(saved, newest);
    }
    Some(described)
}

/// Session files in `dir` (recovery and hidden files left out), sorted.
pub fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name.ends_with(".json") && !name.ends_with(".recovery.json") && !name.starts_with('.')
    });
    found.sort();
    found
}

fn open_session(open: Open) -> Done {
    if let Some(removal) = &open.discard {
        remove(removal);
    }
    let result = startup::open_session(&open.path, &open.sessions_dir)
        .map(|(workspace, notice)| {
            let recovery = find_recovery(&workspace.recovery_lookup());
            Box::new(OpenedSession {
                workspace,
                notice,
                recovery,
            })
        })
        .map_err(|err| format!("{err:#}"));
    Done::Opened {
        path: open.path,
        result,
    }
}

fn look_at_template(poll: Poll) -> Option<Done> {
    let now = stamp(&poll.path);
    match poll.seen {
        None => Some(Done::TemplateSeen {
            path: poll.path,
            stamp: now,
        }),
        Some(seen) if seen == now => None,
        Some(_) => Some(Done::TemplateChanged {
            reloaded: reload(&poll.path, &poll.reload),
            path: poll.path,
            stamp: now,
        }),
    }
}

fn reload(path: &Path, how: &Reload) -> Result<Box<TemplateSource>, String> {
    let found = match how {
        Reload::Resolve { reference, dir } => {
            catalog::resolve(reference, dir, &startup::template_access(dir))
        }
        Reload::Named(name) => catalog::load_path(path).and_then(|all| {
            all.into_iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| CatalogError::Config {
                    path: path.to_path_buf(),
                    message: format!("{name} is no longer in this file"),
                })
        }),
    };
    found.map(Box::new).map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A save of an empty session on an inline template, which writes `new`'s JSON.
    fn save(target: &Path, guard: Guard, discard: Option<Removal>) -> Save {
        Save {
            target: target.to_path_buf(),
            document: super::super::Document {
                session: Box::new(new()),
                template: None,
                outside: super::super::Outside::Ask,
            },
            guard,
            discard,
            then_quit: false,
        }
    }

    fn new() -> chatplate_core::session::Session {
        chatplate_core::session::Session::new(chatplate_core::session::TemplateRef::Source(
            "new".into(),
        ))
    }

    #[test]
    fn a_save_writes_only_when_its_guard_holds() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.json");
        fs::write(&target, "old").unwrap();
        let known = FileStamp::of_bytes(b"old");
        let done = write_session(save(&target, Guard::Absent, None));
        assert!(matches!(done, Done::Exists(path) if path == target));
        fs::write(&target, "theirs").unwrap();
        let done = write_session(save(&target, Guard::Unchanged(known), None));
        assert!(matches!(done, Done::Changed));
        assert_eq!(fs::read_to_string(&target).unwrap(), "theirs");
        let done = write_session(save(&target, Guard::Overwrite, None));
        let Done::Saved { stamp, .. } = done else {
            panic!("not saved: {done:?}")
        };
        assert_eq!(fs::read_to_string(&target).unwrap(), new().to_json());
        assert_eq!(Some(stamp), FileStamp::of(&target));
    }

    #[test]
    fn the_recovery_file_goes_only_once_the_session_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let recovery = dir.path().join("s.recovery.json");
        fs::write(&recovery, "kept").unwrap();
        let removal = || {
            Some(Removal {
                path: recovery.clone(),
                sessions_dir: dir.path().to_path_buf(),
            })
        };
        // A file where the folder should be: the write fails.
        let blocked = dir.path().join("blocked");
        fs::write(&blocked, "").unwrap();
        let done = write_session(save(&blocked.join("s.json"), Guard::Overwrite, removal()));
        assert!(matches!(done, Done::SaveFailed(_)), "{done:?}");
        assert!(recovery.exists());
        let done = write_session(save(
            &dir.path().join("s.json"),
            Guard::Overwrite,
            removal(),
        ));
        assert!(matches!(done, Done::Saved { .. }), "{done:?}");
        assert!(!recovery.exists());
    }

    /// The session `content` on the inline template `new`.
    fn with_content(content: &str) -> chatplate_core::session::Session {
        let mut session = new();
        session.messages = vec![chatplate_core::session::Message::new("user", content)];
        session
    }

    /// A save killed after it wrote the session file and before it removed the recovery
    /// file used to leave the autosave's older text, which the next start offered over
    /// the newer typing the save held.
    #[test]
    fn a_save_killed_before_the_recovery_file_went_leaves_nothing_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (target, recovery) = (
            dir.path().join("s.json"),
            dir.path().join("s.recovery.json"),
        );
        with_content("saved").save(&target).unwrap();
        // The autosave holds "typed"; then "typed more" is typed and saved at once.
        with_content("typed").save(&recovery).unwrap();
        let removal = Removal {
            path: recovery.clone(),
            sessions_dir: dir.path().to_path_buf(),
        };
        let mut killed = save(&target, Guard::Overwrite, Some(removal));
        killed.document.session = Box::new(with_content("typed more"));
        let (Done::Saved { .. }, Some(_)) = write_unremoved(killed) else {
            panic!("not saved")
        };
        let lookup = Lookup {
            base: recovery.clone(),
            own: None,
            saved: Some(target.clone()),
            elsewhere: false,
        };
        let offered = find_recovery(&lookup);
        assert_eq!(offered.map(|found| found.path), None);
        assert!(!recovery.exists(), "the leftover is removed");
        let kept = chatplate_core::session::Session::load(&target).unwrap();
        assert_eq!(kept, with_content("typed more"));
        // A recovery file with changes the saved file lacks is still offered.
        with_content("typed even more").save(&recovery).unwrap();
        assert_eq!(
            find_recovery(&lookup).map(|found| found.path),
            Some(recovery)
        );
    }
}
