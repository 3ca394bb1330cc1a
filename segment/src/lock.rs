//! [`DirLock`]: the exclusive lock a [`Log`](crate::Log) holds on its partition directory
//! (Kafka's `.lock` file, `FileLock` in `LogManager.lockLogDirs`).
//!
//! The lock is an advisory `flock`-style lock (std's [`File::try_lock`]) on the file
//! [`LOCK_FILE`] inside the directory. It is held by an open file description, so it
//! excludes a second [`Log::open`](crate::Log::open) of the same directory from **another
//! process and from the same process** alike, and the operating system releases it when
//! the holder closes the file or dies (no stale lock after a crash). The holder writes its
//! process id into the file, so the error of a refused open can name it.
//!
//! Read-only tools (`dump-log`) never take the lock: they do not write and may inspect a
//! directory a broker or another `Log` owns.
//!
//! Like every advisory lock, it binds only processes that take it: a process that writes
//! or truncates the files without opening the directory through [`Log`](crate::Log) is not
//! stopped (see the SIGBUS limit in the [`Log`](crate::Log) docs).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, SegmentError};

/// Name of the lock file inside a partition directory (Kafka's `LogManager.LockFileName`).
pub const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a partition directory, released when dropped.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Creates (if needed) `dir/.lock`, takes an exclusive lock on it without waiting and
    /// writes this process's id into it.
    ///
    /// # Errors
    /// [`SegmentError::DirLocked`] if another open file description holds the lock (another
    /// process, or another [`Log`](crate::Log) in this one), with the holder's pid when the
    /// file records one; [`SegmentError::NotARegularFile`] if `dir/.lock` is a directory,
    /// FIFO, socket, device or dangling symlink; [`SegmentError::Io`] if the file cannot be
    /// created or locked.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        // A `.lock` that is a FIFO would block the holder's-pid read below forever, and a
        // directory or device is no lock file: refuse them before opening (a symlink to a
        // regular file is followed).
        crate::fs::check_regular_file(&path)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| SegmentError::io("open", &path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                // The holder's pid is informative only: a read failure leaves it unknown.
                let holder_pid = file
                    .read_to_string(&mut text)
                    .ok()
                    .and_then(|_| text.trim().parse::<u32>().ok());
                return Err(SegmentError::DirLocked { path, holder_pid });
            }
            Err(TryLockError::Error(e)) => return Err(SegmentError::io("lock", &path, e)),
        }
        let pid = std::process::id();
        (|| {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            writeln!(file, "{pid}")
        })()
        .map_err(|e| SegmentError::io("write", &path, e))?;
        Ok(DirLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Closing the file releases the lock as well; unlocking first makes the release
        // independent of other handles to the same file description.
        let _ = self.file.unlock();
    }
}
