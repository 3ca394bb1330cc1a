//! Small file-system helpers: directory fsync, atomic small-file writes, mtimes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Result, SegmentError};

/// fsyncs a directory so that creations, renames and deletions inside it are durable.
///
/// # Errors
/// [`SegmentError::Io`] if the directory cannot be opened or synced.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(|e| SegmentError::io("open dir", dir, e))?;
    d.sync_all()
        .map_err(|e| SegmentError::io("fsync dir", dir, e))
}

/// Writes `bytes` to `path` atomically: write `path.tmp`, fsync it, rename over `path`,
/// fsync the directory. A crash leaves either the old or the new content.
///
/// # Errors
/// [`SegmentError::Io`] on any failure (the temporary file may be left behind).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| SegmentError::io("create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| SegmentError::io("write", &tmp, e))?;
        f.sync_all()
            .map_err(|e| SegmentError::io("fsync", &tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| SegmentError::io("rename", &tmp, e))?;
    if let Some(dir) = path.parent() {
        fsync_dir(dir)?;
    }
    Ok(())
}

/// The file's last-modified time in milliseconds since the epoch (0 if unknown).
///
/// # Errors
/// [`SegmentError::Io`] if the file cannot be stat'ed.
pub fn last_modified_ms(path: &Path) -> Result<i64> {
    let m = std::fs::metadata(path).map_err(|e| SegmentError::io("stat", path, e))?;
    let t = m
        .modified()
        .map_err(|e| SegmentError::io("stat mtime", path, e))?;
    Ok(t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0))
}

/// Sets the file's last-modified time (milliseconds since the epoch; negative is clamped
/// to 0).
///
/// # Errors
/// [`SegmentError::Io`] if the file cannot be opened or its time set.
pub fn set_last_modified_ms(path: &Path, ms: i64) -> Result<()> {
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| SegmentError::io("open", path, e))?;
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    f.set_modified(t)
        .map_err(|e| SegmentError::io("set mtime", path, e))
}

/// Milliseconds since the epoch of the system clock.
pub fn system_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Removes a file, treating "not found" as success. Returns whether a file was removed.
///
/// # Errors
/// [`SegmentError::Io`] for any other failure.
pub fn remove_if_exists(path: &Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(SegmentError::io("delete", path, e)),
    }
}
