//! Writing fetched files into the cache exactly as `huggingface_hub` lays it out:
//! `blobs/<etag>` holds the bytes, `snapshots/<commit>/<file>` is a relative symlink to
//! the blob (a copy where symlinks are not possible), `refs/<revision>` holds the commit.
//! Every write goes to a temporary file first and is renamed into place, so a reader
//! (or a concurrent Python tool) never sees half a file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::super::hf_cache::{repo_dir, ModelId};
use super::super::Snapshot;
use super::HubError;

/// Stores one file of `id` at `commit`.
pub(crate) fn store(
    cache: &Path,
    id: &ModelId,
    commit: &str,
    file: &str,
    etag: &str,
    bytes: &[u8],
) -> Result<(), HubError> {
    let repo = repo_dir(cache, &id.repo);
    let blob_name = blob_name(etag, bytes);
    let blob = repo.join("blobs").join(&blob_name);
    if !blob.is_file() {
        write_atomically(&blob, bytes)?;
    }
    let pointer = repo.join("snapshots").join(commit).join(file);
    let depth = file.matches('/').count();
    let target = PathBuf::from("../".repeat(depth + 2))
        .join("blobs")
        .join(&blob_name);
    link(&target, &blob, &pointer)?;
    if id.revision() != commit {
        write_atomically(&repo.join("refs").join(id.revision()), commit.as_bytes())?;
    }
    Ok(())
}

/// The snapshot the files were stored in.
pub(super) fn snapshot(cache: &Path, id: &ModelId, commit: &str) -> Snapshot {
    Snapshot {
        id: id.repo.clone(),
        revision: id.revision().to_string(),
        commit: commit.to_string(),
        dir: repo_dir(cache, &id.repo).join("snapshots").join(commit),
    }
}

/// The etag when it is a plain name (the Hub sends a git or sha256 hash); otherwise a
/// hash of the bytes, so a strange header can never name a path.
fn blob_name(etag: &str, bytes: &[u8]) -> String {
    let plain = !etag.is_empty()
        && etag.len() <= 128
        && etag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        return etag.to_string();
    }
    // FNV-1a, 64 bits: only needs to tell blobs apart within one repository.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("chatplate-{hash:016x}")
}

fn link(target: &Path, blob: &Path, pointer: &Path) -> Result<(), HubError> {
    let io = |cause| HubError::Io {
        path: pointer.to_path_buf(),
        cause,
    };
    if let Some(parent) = pointer.parent() {
        fs::create_dir_all(parent).map_err(io)?;
    }
    let _ = fs::remove_file(pointer);
    #[cfg(unix)]
    if std::os::unix::fs::symlink(target, pointer).is_ok() {
        return Ok(());
    }
    let _ = target;
    fs::copy(blob, pointer).map(|_| ()).map_err(io)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), HubError> {
    let io = |cause| HubError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        "{}.{}-{}.incomplete",
        name.unwrap_or_default(),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(io)
}
