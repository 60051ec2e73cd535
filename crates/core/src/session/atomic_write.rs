//! Saving a file atomically: readers see the old file or the new one, never a partial
//! one, and a failed save leaves the previous file as it was.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that readers see either the old or the new file, never a
/// partial one: a temporary file beside the target, synced, then renamed over it, and
/// the folder synced so the rename survives a crash.
///
/// The file keeps what it was: a symlink stays a symlink (the file it points to is
/// replaced), and an existing file's permissions and (where allowed) owner are kept.
/// Temporary files that interrupted saves of the same file left behind are removed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = follow_symlinks(path)?;
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = target
        .file_name()
        .map_or_else(|| "session".into(), |n| n.to_string_lossy().into_owned());
    remove_stale_temporaries(dir, &name);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let previous = fs::metadata(&target).ok();
    let result = (|| {
        let mut file = create_private(&temp, previous.is_some())?;
        file.write_all(bytes)?;
        if let Some(previous) = &previous {
            keep_permissions(&file, previous)?;
        }
        file.sync_all()?;
        fs::rename(&temp, &target)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The file a chain of symlinks ends at (which may not exist yet).
fn follow_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(link),
                    None => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// A new temporary file; readable by the owner only while it replaces an existing file
/// (whose permissions it gets before the rename), else with the default permissions.
fn create_private(temp: &Path, replacing: bool) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if replacing {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = replacing;
    options.open(temp)
}

/// Gives `file` the permissions (and on Unix the owner, where the OS allows) of the file
/// it replaces.
fn keep_permissions(file: &fs::File, previous: &fs::Metadata) -> std::io::Result<()> {
    file.set_permissions(previous.permissions())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Only root may give a file away; others keep what they can (the group, if they
        // belong to it). A refused change is not worth failing the save.
        let _ = std::os::unix::fs::fchown(file, Some(previous.uid()), Some(previous.gid()));
        let _ = std::os::unix::fs::fchown(file, None, Some(previous.gid()));
    }
    Ok(())
}

/// Makes a rename in `dir` durable (best effort: not every platform can sync a folder).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Removes `.NAME.PID.tmp` files left by interrupted saves of `name` in `dir`, except
/// those of processes still running (they may be saving right now).
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.filter_map(Result::ok) {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = file
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !process_running(pid)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (this one always does; elsewhere only Linux can tell,
/// so other systems treat every other process's leftover as stale).
fn process_running(pid: u32) -> bool {
    pid == std::process::id()
        || (cfg!(target_os = "linux") && Path::new("/proc").join(pid.to_string()).exists())
}
