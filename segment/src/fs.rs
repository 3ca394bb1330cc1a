//! File-system helpers and the file-system seam.
//!
//! # The seam
//!
//! Every write-side file operation of [`LogFile`](crate::LogFile),
//! [`LogSegment`](crate::LogSegment) and [`Log`](crate::Log) goes through a
//! [`FileSystem`]: `.log` appends, truncations and fsyncs, renames and deletions,
//! checkpoint files, the clean-shutdown marker and directory fsyncs. The default,
//! [`RealFs`], performs them with `std`. Tests (and users who want to test their own
//! failure handling) pass a different implementation at open time, e.g. [`FaultyFs`],
//! which fails chosen operations with a chosen `errno` (`ENOSPC`, `EIO`, ...), the way
//! raft-engine's file-system seam does.
//!
//! Index files (`.index`, `.timeindex`, `.txnindex`) are memory-mapped and resized by the
//! index crates, not by this crate, so their operations cannot be *performed* by the seam.
//! Instead the segment reports each of them to [`FileSystem::before`] just before it
//! happens (trim, resize, msync, rename, delete); an error returned there is returned to
//! the caller exactly as if the operation itself had failed.
//!
//! The seam is a cheap `Arc<dyn FileSystem>` chosen once when a log or segment is opened;
//! it is not on the lookup path (reads use positioned reads and mappings directly).

use crate::pio::FileExt;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::error::{Result, SegmentError};

/// A file-system operation, as reported to a [`FileSystem`] (used to match faults).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FsOp {
    /// A positioned write into a `.log` file (an append).
    Write,
    /// An fsync of a file's data (`.log`, checkpoint temp file, marker).
    Sync,
    /// Changing a `.log` file's length (preallocation, truncation, trim).
    SetLen,
    /// Renaming a `.log` file or a checkpoint temp file.
    Rename,
    /// Deleting a file.
    Remove,
    /// An fsync of a directory.
    SyncDir,
    /// Creating (or replacing) and writing a small file in full: a checkpoint's temp file
    /// or the clean-shutdown marker. Followed by [`FsOp::Sync`] of the same path.
    WriteFile,
    /// Trimming an offset or time index file to its entries (reported via
    /// [`FileSystem::before`]).
    IndexTrim,
    /// Resizing (growing, resetting) an offset or time index file (reported).
    IndexResize,
    /// `msync` of an index mapping or fsync of a transaction index (reported).
    IndexFlush,
    /// Renaming an index file (reported).
    IndexRename,
    /// Deleting an index file (reported).
    IndexRemove,
}

/// The file-system seam: the write-side operations of this crate. Every method has a
/// default that performs the operation with `std` (what [`RealFs`] uses), so an
/// implementation overrides only what it wants to observe or fail. Paths are given for
/// context and fault matching; the `File` handles are already open.
pub trait FileSystem: fmt::Debug + Send + Sync {
    /// Writes all of `buf` at byte position `pos` of `file` (the `.log` at `path`).
    ///
    /// # Errors
    /// The OS error; part of `buf` may have been written.
    fn write_all_at(&self, path: &Path, file: &File, buf: &[u8], pos: u64) -> io::Result<()> {
        let _ = path;
        file.write_all_at(buf, pos)
    }

    /// fsyncs the data of `file` (at `path`).
    ///
    /// # Errors
    /// The OS error.
    fn sync_data(&self, path: &Path, file: &File) -> io::Result<()> {
        let _ = path;
        file.sync_data()
    }

    /// Sets the length of `file` (at `path`) to `len` bytes.
    ///
    /// # Errors
    /// The OS error.
    fn set_len(&self, path: &Path, file: &File, len: u64) -> io::Result<()> {
        let _ = path;
        file.set_len(len)
    }

    /// Renames `from` to `to` (`rename(2)`, replacing `to`).
    ///
    /// # Errors
    /// The OS error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    /// Deletes the file at `path`.
    ///
    /// # Errors
    /// The OS error (including `NotFound`, which callers may tolerate).
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    /// fsyncs the directory `dir` (making creations, renames and deletions durable).
    ///
    /// # Errors
    /// The OS error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    /// Creates or truncates `path`, writes `bytes` and fsyncs the file.
    ///
    /// # Errors
    /// The OS error (the file may be left partially written).
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    }

    /// Called just before an operation that another crate performs on a file of a
    /// segment (index trim, resize, flush, rename, delete); an error cancels it and is
    /// returned to the caller. The default does nothing.
    ///
    /// # Errors
    /// The error to report instead of performing the operation.
    fn before(&self, op: FsOp, path: &Path) -> io::Result<()> {
        let _ = (op, path);
        Ok(())
    }
}

/// The real file system (every [`FileSystem`] default).
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

impl FileSystem for RealFs {}

/// A shared handle to a [`FileSystem`], chosen at open time.
pub type FsRef = Arc<dyn FileSystem>;

/// The shared [`RealFs`] handle (one allocation per process).
pub fn real() -> FsRef {
    static REAL: OnceLock<FsRef> = OnceLock::new();
    REAL.get_or_init(|| Arc::new(RealFs)).clone()
}

/// `errno` for "no space left on device".
pub const ENOSPC: i32 = 28;
/// `errno` for an I/O error.
pub const EIO: i32 = 5;

/// One fault rule of a [`FaultyFs`]: fail operations of kind `op` on paths containing
/// `path_contains`, after letting `skip` matching operations through, at most `times`
/// times, with OS error `errno`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The operation kind to fail.
    pub op: FsOp,
    /// Substring the path (its display form) must contain; empty matches every path.
    pub path_contains: String,
    /// Matching operations to let through before failing.
    pub skip: u64,
    /// How many matching operations to fail after the skipped ones (`u64::MAX` = all).
    pub times: u64,
    /// The raw OS error to return (e.g. [`ENOSPC`], [`EIO`]).
    pub errno: i32,
    /// For [`FsOp::Write`]: write the first half of the buffer before failing (a torn
    /// write). Ignored for other operations.
    pub partial_write: bool,
}

impl Fault {
    /// Fails every `op` on every path with `errno`.
    pub fn new(op: FsOp, errno: i32) -> Self {
        Fault {
            op,
            path_contains: String::new(),
            skip: 0,
            times: u64::MAX,
            errno,
            partial_write: false,
        }
    }

    /// Only paths containing `s`.
    pub fn on_path(mut self, s: impl Into<String>) -> Self {
        self.path_contains = s.into();
        self
    }

    /// Lets the first `n` matching operations through.
    pub fn after(mut self, n: u64) -> Self {
        self.skip = n;
        self
    }

    /// Fails at most `n` matching operations.
    pub fn times(mut self, n: u64) -> Self {
        self.times = n;
        self
    }

    /// Writes half of the buffer before failing a [`FsOp::Write`].
    pub fn partial(mut self) -> Self {
        self.partial_write = true;
        self
    }
}

#[derive(Debug)]
struct Rule {
    fault: Fault,
    seen: u64,
    fired: u64,
}

/// A [`FileSystem`] that performs operations with [`RealFs`] except those matched by an
/// injected [`Fault`], which fail with the fault's OS error. Counts every operation.
///
/// ```
/// use segment::fs::{Fault, FaultyFs, FsOp, ENOSPC};
/// let fs = FaultyFs::new();
/// fs.inject(Fault::new(FsOp::WriteFile, ENOSPC).on_path("recovery-point").times(1));
/// ```
#[derive(Debug, Default)]
pub struct FaultyFs {
    rules: Mutex<Vec<Rule>>,
    counts: Mutex<std::collections::HashMap<FsOp, u64>>,
    injected: std::sync::atomic::AtomicU64,
}

impl FaultyFs {
    /// A fault-free instance.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a fault rule (rules are checked in insertion order; the first that fires
    /// wins).
    pub fn inject(&self, fault: Fault) {
        self.rules.lock().push(Rule {
            fault,
            seen: 0,
            fired: 0,
        });
    }

    /// Removes every fault rule.
    pub fn clear(&self) {
        self.rules.lock().clear();
    }

    /// Operations of kind `op` seen so far (failed ones included).
    pub fn count(&self, op: FsOp) -> u64 {
        self.counts.lock().get(&op).copied().unwrap_or(0)
    }

    /// Operations failed so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts `op` and returns the fault that fails it, if any.
    fn check(&self, op: FsOp, path: &Path) -> Option<Fault> {
        *self.counts.lock().entry(op).or_insert(0) += 1;
        let mut rules = self.rules.lock();
        let shown = path.to_string_lossy();
        for r in rules.iter_mut() {
            if r.fault.op != op || !shown.contains(r.fault.path_contains.as_str()) {
                continue;
            }
            r.seen += 1;
            if r.seen > r.fault.skip && r.fired < r.fault.times {
                r.fired += 1;
                self.injected
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Some(r.fault.clone());
            }
        }
        None
    }

    fn gate(&self, op: FsOp, path: &Path) -> io::Result<()> {
        match self.check(op, path) {
            Some(f) => Err(io::Error::from_raw_os_error(f.errno)),
            None => Ok(()),
        }
    }
}

impl FileSystem for FaultyFs {
    fn write_all_at(&self, path: &Path, file: &File, buf: &[u8], pos: u64) -> io::Result<()> {
        if let Some(f) = self.check(FsOp::Write, path) {
            if f.partial_write {
                RealFs.write_all_at(path, file, &buf[..buf.len() / 2], pos)?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        RealFs.write_all_at(path, file, buf, pos)
    }
    fn sync_data(&self, path: &Path, file: &File) -> io::Result<()> {
        self.gate(FsOp::Sync, path)?;
        RealFs.sync_data(path, file)
    }
    fn set_len(&self, path: &Path, file: &File, len: u64) -> io::Result<()> {
        self.gate(FsOp::SetLen, path)?;
        RealFs.set_len(path, file, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.gate(FsOp::Rename, from)?;
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.gate(FsOp::Remove, path)?;
        RealFs.remove_file(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.gate(FsOp::SyncDir, dir)?;
        RealFs.sync_dir(dir)
    }
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.gate(FsOp::WriteFile, path)?;
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        f.write_all(bytes)?;
        self.gate(FsOp::Sync, path)?;
        f.sync_all()
    }
    fn before(&self, op: FsOp, path: &Path) -> io::Result<()> {
        self.gate(op, path)
    }
}

/// Reports `op` on `path` to `fs` ([`FileSystem::before`]), mapping a refusal to
/// [`SegmentError::Io`].
///
/// # Errors
/// [`SegmentError::Io`] if the seam refuses the operation.
pub fn before(fs: &dyn FileSystem, op: FsOp, path: &Path) -> Result<()> {
    fs.before(op, path)
        .map_err(|e| SegmentError::io(op_name(op), path, e))
}

fn op_name(op: FsOp) -> &'static str {
    match op {
        FsOp::Write => "write",
        FsOp::Sync => "fsync",
        FsOp::SetLen => "truncate",
        FsOp::Rename => "rename",
        FsOp::Remove => "delete",
        FsOp::SyncDir => "fsync dir",
        FsOp::WriteFile => "write file",
        FsOp::IndexTrim => "trim index",
        FsOp::IndexResize => "resize index",
        FsOp::IndexFlush => "flush index",
        FsOp::IndexRename => "rename index",
        FsOp::IndexRemove => "delete index",
    }
}

/// fsyncs a directory so that creations, renames and deletions inside it are durable.
///
/// # Errors
/// [`SegmentError::Io`] if the directory cannot be opened or synced.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    fsync_dir_with(&RealFs, dir)
}

/// [`fsync_dir`] through the seam `fs`.
///
/// # Errors
/// [`SegmentError::Io`].
pub fn fsync_dir_with(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    fs.sync_dir(dir)
        .map_err(|e| SegmentError::io("fsync dir", dir, e))
}

/// Writes `bytes` to `path` atomically: write `path.tmp`, fsync it, rename over `path`,
/// fsync the directory. A crash leaves either the old or the new content.
///
/// # Errors
/// [`SegmentError::Io`] on any failure (the temporary file may be left behind).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(&RealFs, path, bytes)
}

/// [`write_atomically`] through the seam `fs`.
///
/// # Errors
/// [`SegmentError::Io`] on any failure (the temporary file may be left behind; `path`
/// keeps its old content).
pub fn write_atomically_with(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    fs.write_file(&tmp, bytes)
        .map_err(|e| SegmentError::io("write", &tmp, e))?;
    fs.rename(&tmp, path)
        .map_err(|e| SegmentError::io("rename", &tmp, e))?;
    if let Some(dir) = path.parent() {
        fsync_dir_with(fs, dir)?;
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

/// [`remove_if_exists`] through the seam `fs`.
///
/// # Errors
/// [`SegmentError::Io`] for failures other than "not found".
pub fn remove_if_exists_with(fs: &dyn FileSystem, path: &Path) -> Result<bool> {
    match fs.remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(SegmentError::io("delete", path, e)),
    }
}
