//! [`LogFile`]: a segment's `.log` file (Kafka's `FileRecords`, docs/kafka-behaviour.md#log-file).

use crate::pio::FileExt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::error::{Result, SegmentError};
use crate::fs::{FsRef, OpenMode};
use crate::region::{CutLog, FileRegion};

/// The largest logical size of a `.log` file, in bytes: positions are 32-bit signed in
/// Kafka (`Integer.MAX_VALUE`).
pub const MAX_LOG_FILE_SIZE: u64 = i32::MAX as u64;

/// How [`LogFile::open`] opens a `.log` file (the `mutable`, `fileAlreadyExists`,
/// `initFileSize` and `preallocate` arguments of Kafka's `FileRecords.open`, as one value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFileMode {
    /// Read-only; the file must exist. The logical size is the file length.
    ReadOnly,
    /// Read-write, created empty if missing. The logical size is the file length.
    ReadWrite,
    /// Read-write for a **new** segment: the file (created if missing) is set to this many
    /// bytes (sparse, at most [`MAX_LOG_FILE_SIZE`]) and the logical size starts at 0, as
    /// Kafka does with `preallocate=true`. Any bytes an existing file held are past the
    /// logical size, so never read; use it only for a segment that has no data yet.
    Preallocate(u64),
}

/// A `.log` file of record batches with a logical size that may be smaller than the
/// physical file length (preallocation).
///
/// * Reads use positioned I/O (`pread`), so readers never wait for the writer.
/// * Appends serialise on a writer lock and publish the new logical size afterwards
///   (`Release`), so a reader that sees a size sees the bytes below it.
/// * The logical size never exceeds [`MAX_LOG_FILE_SIZE`].
///
/// Batch-level searches (`search_for_offset_with_size`, `search_for_timestamp`, ...) are
/// provided by [`LogSegment`](crate::LogSegment) through its
/// [`BatchFormat`](crate::format::BatchFormat); this type only moves bytes.
///
/// Deleting the file ([`delete_if_exists`](Self::delete_if_exists)) also closes its handle,
/// so an unlinked file's disk space is freed even while `Arc`s of its segment live on
/// (readers, deferred reclamation of the segment map); later reads and appends get
/// [`SegmentError::SegmentDeleted`].
#[derive(Debug)]
pub struct LogFile {
    path: RwLock<PathBuf>,
    /// The open handle; `None` once the file was deleted. Shared with the
    /// [`FileRegion`]s taken of it, which keep the descriptor open.
    file: RwLock<Option<Arc<File>>>,
    /// Every truncation of the file, for the regions taken before it.
    cuts: Arc<CutLog>,
    size: AtomicU64,
    mutable: bool,
    closed: AtomicBool,
    writer: Mutex<()>,
    fs: FsRef,
}

impl LogFile {
    /// Opens or creates a `.log` file (Kafka's `FileRecords.open`), as `mode` says: see
    /// [`LogFileMode`] for the logical size each mode starts at.
    ///
    /// # Errors
    /// [`SegmentError::Io`] on open/stat/set_len failure (for [`LogFileMode::ReadOnly`],
    /// also when the file is missing); [`SegmentError::Corrupt`] if an existing file is
    /// longer than [`MAX_LOG_FILE_SIZE`].
    pub fn open(path: impl Into<PathBuf>, mode: LogFileMode) -> Result<Self> {
        Self::open_with_fs(path, mode, crate::fs::real())
    }

    /// [`open`](Self::open) with the file-system seam `fs`: appends, truncations,
    /// fsyncs, renames and deletion of this file go through it (see [`crate::fs`]).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_fs(path: impl Into<PathBuf>, mode: LogFileMode, fs: FsRef) -> Result<Self> {
        let path = path.into();
        let mutable = !matches!(mode, LogFileMode::ReadOnly);
        let open_mode = if mutable {
            OpenMode::Create
        } else {
            OpenMode::Read
        };
        let file = fs
            .open_file(&path, open_mode)
            .map_err(|e| SegmentError::io("open", &path, e))?;
        let preallocated = matches!(mode, LogFileMode::Preallocate(_));
        if let LogFileMode::Preallocate(init_file_size) = mode {
            let len = init_file_size.min(MAX_LOG_FILE_SIZE);
            fs.set_len(&path, &file, len)
                .map_err(|e| SegmentError::io("preallocate", &path, e))?;
        }
        let len = file
            .metadata()
            .map_err(|e| SegmentError::io("stat", &path, e))?
            .len();
        if len > MAX_LOG_FILE_SIZE && !preallocated {
            return Err(SegmentError::Corrupt {
                path,
                reason: format!(
                    "the file is {len} bytes, larger than the maximum {MAX_LOG_FILE_SIZE}"
                ),
            });
        }
        let size = if preallocated { 0 } else { len };
        Ok(LogFile {
            path: RwLock::new(path),
            file: RwLock::new(Some(Arc::new(file))),
            cuts: Arc::default(),
            size: AtomicU64::new(size),
            mutable,
            closed: AtomicBool::new(false),
            writer: Mutex::new(()),
            fs,
        })
    }

    /// The current path of the file.
    pub fn path(&self) -> PathBuf {
        self.path.read().clone()
    }

    /// Runs `op` on the open handle; [`SegmentError::SegmentDeleted`] once the file was
    /// deleted.
    fn with_file<T>(&self, op: impl FnOnce(&File) -> Result<T>) -> Result<T> {
        match self.file.read().as_ref() {
            Some(f) => op(f),
            None => Err(SegmentError::SegmentDeleted { path: self.path() }),
        }
    }

    /// Asks the kernel to start reading `len` bytes from `position` into the page cache
    /// without waiting (`posix_fadvise(WILLNEED)`,
    /// [`advise_range_will_need`](index_core::sys::advise_range_will_need)). Only a hint:
    /// failures, and a closed file, are ignored.
    pub(crate) fn advise_will_need(&self, position: u64, len: u64) {
        if let Some(f) = self.file.read().as_ref() {
            let _ = index_core::sys::advise_range_will_need(f, position, len);
        }
    }

    /// The logical size in bytes (Kafka's `sizeInBytes`).
    pub fn size_in_bytes(&self) -> u64 {
        self.size.load(Ordering::Acquire)
    }

    /// The physical file length in bytes (≥ the logical size when preallocated).
    ///
    /// # Errors
    /// [`SegmentError::Io`] if the file cannot be stat'ed.
    pub fn file_length(&self) -> Result<u64> {
        self.with_file(|f| {
            Ok(f.metadata()
                .map_err(|e| SegmentError::io("stat", self.path(), e))?
                .len())
        })
    }

    /// Appends `bytes` at the logical end; returns the number of bytes written.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if the size would exceed [`MAX_LOG_FILE_SIZE`] or
    /// the file is read-only/closed; [`SegmentError::Io`] on write failure (the logical size
    /// is then unchanged, so the partial write is invisible and overwritten next time).
    pub fn append(&self, bytes: &[u8]) -> Result<u64> {
        if !self.mutable || self.closed.load(Ordering::Acquire) {
            return Err(SegmentError::arg(format!(
                "append to a read-only or closed log file {}",
                self.path().display()
            )));
        }
        let _w = self.writer.lock();
        let pos = self.size.load(Ordering::Acquire);
        let new_size = pos + bytes.len() as u64;
        if new_size > MAX_LOG_FILE_SIZE {
            return Err(SegmentError::arg(format!(
                "appending {} bytes to {} at size {pos} would exceed the maximum file size {MAX_LOG_FILE_SIZE}",
                bytes.len(),
                self.path().display()
            )));
        }
        self.with_file(|f| {
            let path = self.path.read();
            self.fs
                .write_all_at(&path, f, bytes, pos)
                .map_err(|e| SegmentError::io("write", &*path, e))
        })?;
        self.size.store(new_size, Ordering::Release);
        Ok(bytes.len() as u64)
    }

    /// Reads `len` bytes at `position` (clamped to the logical size).
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `position` is past the logical end;
    /// [`SegmentError::Io`] on read failure.
    pub fn read(&self, position: u64, len: u64) -> Result<Vec<u8>> {
        let size = self.size_in_bytes();
        if position > size {
            return Err(SegmentError::arg(format!(
                "slice position {position} is past the end {size} of {}",
                self.path().display()
            )));
        }
        let n = len.min(size - position) as usize;
        // Read into a new buffer's spare capacity: no zero-fill of bytes about to be read.
        let mut buf = Vec::new();
        self.with_file(|f| {
            index_core::sys::read_exact_at_into(f, &mut buf, n, position)
                .map_err(|e| SegmentError::io("read", self.path(), e))
        })?;
        Ok(buf)
    }

    /// A [`FileRegion`] of `len` bytes at `position` (clamped to the logical size): an
    /// owned handle of the open file, valid after the file is renamed or deleted (Kafka's
    /// `FileRecords.slice`). See [`crate::region`] for what it answers once a truncation
    /// cut its bytes.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `position` is past the logical end;
    /// [`SegmentError::SegmentDeleted`] once the file was deleted.
    pub fn slice(&self, position: u64, len: u64) -> Result<FileRegion> {
        // The cut sequence first: a truncation after it fails the region.
        let seq = self.cuts.seq();
        let size = self.size_in_bytes();
        if position > size {
            return Err(SegmentError::arg(format!(
                "slice position {position} is past the end {size} of {}",
                self.path().display()
            )));
        }
        let file = match self.file.read().as_ref() {
            Some(f) => f.clone(),
            None => return Err(SegmentError::SegmentDeleted { path: self.path() }),
        };
        Ok(FileRegion::new(
            file,
            self.cuts.clone(),
            seq,
            position,
            len.min(size - position),
        ))
    }

    /// Fills `buf` from `position` with positioned reads.
    ///
    /// # Errors
    /// [`SegmentError::Io`] (including `UnexpectedEof` when the file is shorter).
    pub fn read_exact_at(&self, buf: &mut [u8], position: u64) -> Result<()> {
        self.with_file(|f| {
            f.read_exact_at(buf, position)
                .map_err(|e| SegmentError::io("read", self.path(), e))
        })
    }

    /// Truncates the logical size to `target_size` bytes (Kafka's `truncateTo`); the file
    /// is shrunk only if `target_size` is below its physical length, so a no-op truncation
    /// does not touch the file's mtime (KAFKA-3802, field case B9). Returns the bytes removed from the
    /// logical size.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `target_size` is larger than the logical size;
    /// [`SegmentError::Io`].
    pub fn truncate_to(&self, target_size: u64) -> Result<u64> {
        let _w = self.writer.lock();
        let size = self.size.load(Ordering::Acquire);
        if target_size > size {
            return Err(SegmentError::arg(format!(
                "attempt to truncate {} to {target_size} bytes, larger than its size {size}",
                self.path().display()
            )));
        }
        let shrink_file = target_size < self.file_length()?;
        if target_size < size {
            // The smaller size first, then the cut, both before any byte changes: a region
            // taken before the cut covers cut bytes only with an older cut sequence, and
            // fails from here on instead of reading what a later append writes there; a
            // region taken after it sees the smaller size (`slice`).
            self.size.store(target_size, Ordering::Release);
            self.cuts.record(target_size);
        }
        if shrink_file {
            let shrunk = self.with_file(|f| {
                let path = self.path.read();
                self.fs
                    .set_len(&path, f, target_size)
                    .map_err(|e| SegmentError::io("truncate", &*path, e))
            });
            if let Err(e) = shrunk {
                // As before the cut was published: the logical size is unchanged.
                self.size.store(size, Ordering::Release);
                return Err(e);
            }
        }
        self.size.store(target_size, Ordering::Release);
        Ok(size - target_size)
    }

    /// Drops a preallocated tail: `truncate_to(size_in_bytes())`.
    ///
    /// # Errors
    /// As [`truncate_to`](Self::truncate_to).
    pub fn trim(&self) -> Result<()> {
        if !self.mutable {
            return Ok(());
        }
        self.truncate_to(self.size_in_bytes()).map(|_| ())
    }

    /// fsyncs the file's data.
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn flush(&self) -> Result<()> {
        if !self.mutable {
            return Ok(());
        }
        self.with_file(|f| {
            let path = self.path.read();
            self.fs
                .sync_data(&path, f)
                .map_err(|e| SegmentError::io("fsync", &*path, e))
        })
    }

    /// Trims and flushes (Kafka's `close`, which flushes first); later appends fail.
    /// Reads keep working.
    ///
    /// # Errors
    /// As [`flush`](Self::flush) and [`trim`](Self::trim).
    pub fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if crate::fs::mutated!(FlushBeforeTrim) {
            self.flush()?;
            return self.trim();
        }
        // Trim first, then fsync, so that the trimmed length is durable before the
        // clean-shutdown marker (KAFKA-21000: Kafka flushes first, and a power cut after
        // a clean shutdown can leave the preallocated, zero-filled tail behind).
        self.trim()?;
        self.flush()
    }

    /// Renames the file (the open handle stays valid).
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn rename_to(&self, to: &Path) -> Result<()> {
        let mut p = self.path.write();
        self.fs
            .rename(&p, to)
            .map_err(|e| SegmentError::io("rename", &*p, e))?;
        *p = to.to_path_buf();
        Ok(())
    }

    /// Changes the parent directory of the stored path, without I/O.
    pub fn update_parent_dir(&self, dir: &Path) {
        let mut p = self.path.write();
        if let Some(name) = p.file_name().map(|n| n.to_owned()) {
            *p = dir.join(name);
        }
    }

    /// Deletes the file if it exists, then closes the handle (so the file's disk space is
    /// freed at once); whether it was deleted. Later reads, appends, flushes and
    /// truncations get [`SegmentError::SegmentDeleted`].
    ///
    /// # Errors
    /// [`SegmentError::Io`] for failures other than "not found" (the handle then stays
    /// open, and a retry can delete the file).
    pub fn delete_if_exists(&self) -> Result<bool> {
        self.closed.store(true, Ordering::Release);
        let deleted = crate::fs::remove_if_exists_with(&*self.fs, &self.path())?;
        *self.file.write() = None;
        Ok(deleted)
    }

    /// A read-only mapping of the file's first [`size_in_bytes`](Self::size_in_bytes)
    /// bytes, for a whole-file scan that reads the page cache in place instead of
    /// copying it (recovery, docs/kafka-behaviour.md#recovery-mapped-scan). The mapping
    /// holds this file's writer lock, so no append and no truncation by this process runs
    /// while it lives: the file stays at least as long as the mapped range (a truncation
    /// by another process would raise `SIGBUS`, the exposure of every mapped index).
    /// `None` when the file is empty or cannot be mapped (the caller reads it instead).
    ///
    /// # Errors
    /// [`SegmentError::SegmentDeleted`] once the file was deleted.
    pub(crate) fn map_for_scan(&self) -> Result<Option<MappedLog<'_>>> {
        let guard = self.writer.lock();
        let size = self.size.load(Ordering::Acquire);
        let Ok(len) = usize::try_from(size) else {
            return Ok(None);
        };
        if len == 0 {
            return Ok(None);
        }
        let mapping = self.with_file(|f| Ok(index_core::sys::Mapping::map_sequential(f, len)))?;
        Ok(mapping.ok().map(|mapping| MappedLog {
            _writer: guard,
            mapping,
        }))
    }

    /// The file-system seam this file writes through.
    pub fn fs(&self) -> &FsRef {
        &self.fs
    }

    /// Last-modified time of the file, ms since epoch.
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn last_modified(&self) -> Result<i64> {
        crate::fs::last_modified_ms(&self.path())
    }
}

/// A read-only mapping of a [`LogFile`]'s logical bytes ([`LogFile::map_for_scan`]),
/// holding the file's writer lock while it lives.
pub(crate) struct MappedLog<'a> {
    _writer: parking_lot::MutexGuard<'a, ()>,
    mapping: index_core::sys::Mapping,
}

impl MappedLog<'_> {
    /// The mapped bytes: the file's logical size when it was mapped.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.mapping.bytes(self.mapping.len())
    }
}
