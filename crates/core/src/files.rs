//! Reading files that strangers may have put in place: fixtures and templates arrive in
//! pull requests, so a path may name a FIFO, a device, a huge file or a folder that
//! links to itself.
//!
//! * [`read_bytes`] / [`read_text`] read regular files only, up to a size cap. The file
//!   is opened without blocking (a FIFO would otherwise wait forever in `open`) and
//!   checked on the opened handle, so what is read is what was checked.
//! * Each kind of file has its cap (`MAX_*`): templates, configs, sessions, request
//!   bodies, tokenizers, and for front ends what an external editor writes back and the
//!   app's config ([`read_optional_text`] reads a file that may be absent).
//! * [`walk`] lists the files under a folder in name order, following folder links
//!   only while they stay inside the folder and never into a cycle, each file once.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest template file (`.jinja`): real chat templates are a few to a few dozen KB.
pub const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

/// Largest JSON file holding templates (`tokenizer_config.json`), which can carry
/// thousands of added-token entries beside the template.
pub(crate) const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// Largest fixture, session or messages file: long conversations are large, but not
/// this large.
pub const MAX_SESSION_BYTES: u64 = 256 << 20;

/// Largest request body: OpenAI's API takes at most 50 MB per request (images
/// included), and a body's JSON takes several times its size in memory once parsed.
pub const MAX_REQUEST_BYTES: u64 = 64 << 20;

/// Largest `tokenizer.json`: the largest real ones (Gemma 3's) are 33 MB, and loading
/// one takes 9 to 16 times its size in memory, so this bounds a load near 1 GB.
pub const MAX_TOKENIZER_BYTES: u64 = 64 << 20;

/// Largest text an external editor (`$EDITOR`) may hand back to the app: a message, a
/// field or a template. No prompt renders past the default 32 MiB output cap, so a
/// larger edit could not be shown anyway.
pub const MAX_EDIT_BYTES: u64 = 32 << 20;

/// Largest app config file (`config.json`: key overrides and colours, a few KB).
pub const MAX_APP_CONFIG_BYTES: u64 = 1 << 20;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The operating system refused (missing file, no permission, ...).
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (shown in the message, so not chained as a `source` too).
        cause: std::io::Error,
    },
    /// A FIFO, device, socket or folder where a file was expected.
    #[error("{}: is a {kind}, not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// Larger than the cap for this kind of file.
    #[error("{}: {size} bytes is more than the {limit} bytes allowed for this kind of file", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size (at least this many bytes).
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// Not valid UTF-8; `line`/`column` (1-based) point at the first bad byte.
    #[error("{}:{line}:{column}: not valid UTF-8 (byte 0x{byte:02x})", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The first byte that is not valid UTF-8.
        byte: u8,
    },
}

/// Opens a regular file for reading (never blocking on a FIFO), with its size; for
/// files read in part (a GGUF header), which have no overall cap.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), FileError> {
    let io = |cause| FileError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let file = open_nonblocking(path).map_err(io)?;
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&metadata.file_type()),
        });
    }
    Ok((file, metadata.len()))
}

/// Reads a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let (file, size) = open_regular(path)?;
    if size > limit {
        return Err(too_large(path, size, limit));
    }
    // The file may grow between the check and the read: the stream read stops at the cap.
    read_capped(file, path, limit, size as usize)
}

/// Reads a stream (standard input for `-`) to its end, at most `limit` bytes; `name`
/// names it in errors, `expected` is a capacity hint.
pub fn read_capped(
    stream: impl Read,
    name: &Path,
    limit: u64,
    expected: usize,
) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::with_capacity(expected);
    stream
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|cause| FileError::Io {
            path: name.to_path_buf(),
            cause,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(name, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// Reads a regular UTF-8 text file of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, FileError> {
    utf8_text(path, read_bytes(path, limit)?)
}

/// [`read_text`] for a file that may be absent (a config file): `None` when there is
/// nothing at `path`. A FIFO, device or oversized file is still an error, found without
/// blocking, so a front end can read it on its event loop's thread.
pub fn read_optional_text(path: &Path, limit: u64) -> Result<Option<String>, FileError> {
    match read_text(path, limit) {
        Ok(text) => Ok(Some(text)),
        Err(FileError::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// `bytes` as text, or where the first invalid UTF-8 byte is.
pub fn utf8_text(path: &Path, bytes: Vec<u8>) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|err| {
        let valid = err.utf8_error().valid_up_to();
        let bytes = err.as_bytes();
        let before = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        FileError::NotUtf8 {
            path: path.to_path_buf(),
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            byte: bytes[valid],
        }
    })
}

fn too_large(path: &Path, size: u64, limit: u64) -> FileError {
    FileError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
    }
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

fn kind_of(file_type: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "device";
        }
        if file_type.is_socket() {
            return "socket";
        }
    }
    if file_type.is_dir() {
        "folder"
    } else {
        "special file"
    }
}

/// What [`walk`] found under a folder.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Regular files (and links to regular files inside the folder), in name order,
    /// each file once.
    pub(crate) files: Vec<PathBuf>,
    /// Entries left out, with why (a link cycle, a link leading out of the folder, an
    /// unreadable folder).
    pub(crate) skipped: Vec<(PathBuf, String)>,
}

/// Every file under `root` for which `wanted` says yes, depth first in name order.
/// Folder links are followed only while they stay inside `root`; a link back to a
/// folder being walked is skipped, and a file reached by two paths is listed once.
/// `descend` decides which folders to enter.
pub(crate) fn walk(
    root: &Path,
    descend: impl Fn(&Path) -> bool,
    wanted: impl Fn(&Path) -> bool,
) -> Walk {
    let boundary = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let inside = |path: &Path| fs::canonicalize(path).is_ok_and(|real| real.starts_with(&boundary));
    let skipped = std::cell::RefCell::new(Vec::new());
    let outside = |path: &Path| {
        let why = format!("leads outside {} (not followed)", root.display());
        skipped.borrow_mut().push((path.to_path_buf(), why));
    };
    let entries = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            if entry.depth() == 0 || !entry.file_type().is_dir() {
                return true;
            }
            if entry.path_is_symlink() && !inside(entry.path()) {
                outside(entry.path());
                return false;
            }
            descend(entry.path())
        });
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let path = err.path().unwrap_or(root).to_path_buf();
                let why = match err.loop_ancestor() {
                    Some(_) => "a link back to a folder above it (not followed)".to_string(),
                    None => err.to_string(),
                };
                skipped.borrow_mut().push((path, why));
                continue;
            }
        };
        if entry.file_type().is_dir() || !wanted(entry.path()) {
            continue;
        }
        match fs::canonicalize(entry.path()) {
            Ok(real) if !real.starts_with(&boundary) => outside(entry.path()),
            Ok(real) => {
                if seen.insert(real) {
                    files.push(entry.into_path());
                }
            }
            Err(err) => skipped
                .borrow_mut()
                .push((entry.into_path(), err.to_string())),
        }
    }
    Walk {
        files,
        skipped: skipped.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn fifos_and_oversized_files_are_refused_and_absent_ones_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("edited.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // No writer ever opens it: a blocking read would never return.
        let err = read_text(&fifo, MAX_EDIT_BYTES).unwrap_err();
        assert!(
            matches!(err, FileError::NotRegular { kind: "FIFO", .. }),
            "{err}"
        );
        let config = dir.path().join("config.json");
        assert!(read_optional_text(&config, MAX_APP_CONFIG_BYTES)
            .unwrap()
            .is_none());
        fs::write(&config, "x".repeat(MAX_APP_CONFIG_BYTES as usize + 1)).unwrap();
        let err = read_optional_text(&config, MAX_APP_CONFIG_BYTES).unwrap_err();
        assert!(matches!(err, FileError::TooLarge { .. }), "{err}");
        fs::write(&config, "{}").unwrap();
        let text = read_optional_text(&config, MAX_APP_CONFIG_BYTES).unwrap();
        assert_eq!(text.as_deref(), Some("{}"));
    }

    #[test]
    fn utf8_errors_point_at_the_bad_byte() {
        let err = utf8_text(Path::new("f"), b"ab\ncd\xffe".to_vec()).unwrap_err();
        assert_eq!(err.to_string(), "f:2:3: not valid UTF-8 (byte 0xff)");
    }
}
