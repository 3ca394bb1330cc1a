//! File-system helpers and the file-system seam.
//!
//! # The seam
//!
//! Every file operation of [`LogFile`](crate::LogFile), [`LogSegment`](crate::LogSegment)
//! and [`Log`](crate::Log) that opens, creates, writes, resizes, syncs, renames or
//! deletes a file goes through a [`FileSystem`], or is reported to it:
//!
//! * **performed by the seam** (a method with a `std` default): opening and creating
//!   `.log` files ([`FileSystem::open_file`], [`FsOp::Open`]), `.log` appends,
//!   truncations, trims and fsyncs, renames and deletions of `.log`, checkpoint and
//!   snapshot files, the checkpoints' and producer snapshots' temp files and the
//!   clean-shutdown marker ([`FileSystem::write_file`]), directory fsyncs, and the
//!   opens of every file the loader reads (checkpoints, producer snapshots, the
//!   leader-epoch checkpoint, an unmapped index read or fsynced through a plain handle);
//! * **reported** (the index crates perform them on files they own): opening or creating
//!   an offset or time index ([`FsOp::Open`]; the index is created and preallocated when
//!   missing), opening a `.txnindex`, index trims, resizes, `msync`s and `.txnindex`
//!   fsyncs, renames and deletions, and `.txnindex` appends, truncations and resets
//!   ([`FsOp::TxnWrite`]). The segment calls [`FileSystem::before`] just before each of
//!   them (an error returned there is returned to the caller exactly as if the operation
//!   itself had failed, so [`FaultyFs`] fails them like performed ones) and
//!   [`FileSystem::after`] once it succeeded (with the new path of a rename), so that a
//!   recorder can read the bytes the operation left on disk.
//!
//! What stays outside, on purpose: the directory lock (`.lock`, an advisory `flock`
//! whose content does not matter, [`crate::lock`]), creating the log directory itself
//! (`create_dir_all` in [`Log::open`](crate::Log::open); its durability is the parent
//! directory's concern), read-only directory listings and `stat`s (the loader's
//! `read_dir`, file-type checks and the clean-open check's two positioned reads of each
//! index's first and last entries in `validate`, modification times), the positioned reads
//! of an open `.log` (the read path must not pay for the seam), the `mtime` setter
//! [`set_last_modified_ms`] (a test and retention helper, no data), and the `dump`
//! module and `dump-log` binary, which only read.
//!
//! The default, [`RealFs`], performs everything with `std` and ignores the reports: its
//! methods are the trait defaults and its `before`/`after` are empty, so after inlining
//! it costs one indirect call per operation. Tests (and users who want to test their own
//! failure handling) pass a different implementation at open time, e.g. [`FaultyFs`],
//! which fails chosen operations with a chosen `errno` (`ENOSPC`, `EIO`, `EMFILE`, ...),
//! the way raft-engine's file-system seam does, or `cargo xtask crash`'s recorder, which
//! performs each operation and logs it to build crash states
//! (`docs/kafka-behaviour.md#crash-persistence-model`).
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

/// Deliberately weakened builds for `cargo xtask crash --mutant NAME` and
/// `cargo xtask lin --mutant NAME`, which must then report violations (the checkers can
/// fail). Compiled only with the non-default `crash-mutants` feature; one build serves
/// every mutant (selected at run time).
#[cfg(feature = "crash-mutants")]
#[doc(hidden)]
pub mod mutant {
    use std::sync::atomic::{AtomicU8, Ordering};

    /// A weakening of the durability protocol (`cargo xtask crash`) or of the rules
    /// concurrent reads see (`cargo xtask lin`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    pub enum Mutant {
        /// No directory is fsynced ([`fsync_dir_with`](super::fsync_dir_with) does
        /// nothing), so a new segment's creation is never made durable.
        NoDirFsync = 1,
        /// `Log::flush` writes the checkpoints before fsyncing the data they cover.
        CheckpointBeforeData,
        /// A segment's close does not fsync the index trims (KAFKA-20979).
        NoTrimFsync,
        /// A `.log` is fsynced before it is trimmed on close (KAFKA-21000).
        FlushBeforeTrim,
        /// A clean's replacement does not fsync the directory between renaming the
        /// cleaned segment `.swap` and renaming the replaced segments `.deleted`
        /// (`docs/kafka-behaviour.md#cleaner-swap`).
        CleanSwapNoDirFsync,
        /// `Log::clean` writes its `cleaner-offset-checkpoint` before it swaps the cleaned
        /// segments in.
        CleanCheckpointBeforeSwap,
        /// The loader's split of an overflowed legacy segment does not fsync the
        /// directory between renaming its pieces `.cleaned` → `.swap` and renaming the
        /// split segment `.deleted`, as Kafka's `replaceSegments` does not
        /// (`docs/kafka-behaviour.md#split-partial-swap`).
        SplitSwapNoDirFsync,
        /// The loader's split renames its pieces `.swap` → final with one directory fsync
        /// at the end, as Kafka's `replaceSegments` does, not one after each piece
        /// (`docs/kafka-behaviour.md#split-partial-swap`).
        SplitRenameNoDirFsync,
        /// `Log::delete_local_through` deletes one segment more than the uploaded prefix
        /// (when it is not the active one): a segment not wholly uploaded goes
        /// (`docs/kafka-behaviour.md#delete-local-through`).
        LocalDeleteOneTooMany,
        /// `Log::open` of a log with remote storage starts the log at its first local
        /// segment, as without remote storage: the offsets only the remote tier holds
        /// leave the log (`docs/kafka-behaviour.md#local-log-start-offset`).
        TieredOpenMovesLogStart,
        /// `update_high_watermark` does not clamp a high watermark above the log end.
        LinHwUnclamped,
        /// A bounded read's bound (high watermark, last stable offset) is one offset
        /// higher: one batch past it is served.
        LinReadPastBound,
        /// A `read_committed` fetch's aborted list loses its last entry.
        LinAbortedDrop,
        /// `truncate_to` leaves the high watermark above the new log end.
        LinTruncateKeepsHw,
        /// An append publishes its log end before the producer state has its batches
        /// (issue 37's first race, `docs/kafka-behaviour.md#one-moment-bounds`).
        LinPublishBeforeState,
        /// `truncate_to` rebuilds the producer state only after its fsync and checkpoint
        /// (issue 37's second race).
        LinTruncateLateState,
    }

    impl Mutant {
        /// Every mutant of `cargo xtask crash`.
        pub const ALL: [Mutant; 10] = [
            Mutant::NoDirFsync,
            Mutant::CheckpointBeforeData,
            Mutant::NoTrimFsync,
            Mutant::FlushBeforeTrim,
            Mutant::CleanSwapNoDirFsync,
            Mutant::CleanCheckpointBeforeSwap,
            Mutant::SplitSwapNoDirFsync,
            Mutant::SplitRenameNoDirFsync,
            Mutant::LocalDeleteOneTooMany,
            Mutant::TieredOpenMovesLogStart,
        ];

        /// Every mutant of `cargo xtask lin`.
        pub const LIN: [Mutant; 6] = [
            Mutant::LinHwUnclamped,
            Mutant::LinReadPastBound,
            Mutant::LinAbortedDrop,
            Mutant::LinTruncateKeepsHw,
            Mutant::LinPublishBeforeState,
            Mutant::LinTruncateLateState,
        ];

        /// The `--mutant` name.
        pub fn name(self) -> &'static str {
            match self {
                Mutant::NoDirFsync => "no-dir-fsync",
                Mutant::CheckpointBeforeData => "checkpoint-before-data",
                Mutant::NoTrimFsync => "no-trim-fsync",
                Mutant::FlushBeforeTrim => "flush-before-trim",
                Mutant::CleanSwapNoDirFsync => "clean-swap-no-dir-fsync",
                Mutant::CleanCheckpointBeforeSwap => "clean-checkpoint-before-swap",
                Mutant::SplitSwapNoDirFsync => "split-swap-no-dir-fsync",
                Mutant::SplitRenameNoDirFsync => "split-rename-no-dir-fsync",
                Mutant::LocalDeleteOneTooMany => "local-delete-one-too-many",
                Mutant::TieredOpenMovesLogStart => "tiered-open-moves-log-start",
                Mutant::LinHwUnclamped => "lin-hw-unclamped",
                Mutant::LinReadPastBound => "lin-read-past-bound",
                Mutant::LinAbortedDrop => "lin-aborted-drop",
                Mutant::LinTruncateKeepsHw => "lin-truncate-keeps-hw",
                Mutant::LinPublishBeforeState => "lin-publish-before-state",
                Mutant::LinTruncateLateState => "lin-truncate-late-state",
            }
        }

        /// Parses a `cargo xtask crash --mutant` name.
        pub fn parse(s: &str) -> Option<Mutant> {
            Mutant::ALL.into_iter().find(|m| m.name() == s)
        }
    }

    static ACTIVE: AtomicU8 = AtomicU8::new(0);

    /// Selects the mutant of the whole process (`None`: the real build).
    pub fn select(m: Option<Mutant>) {
        ACTIVE.store(m.map_or(0, |m| m as u8), Ordering::SeqCst);
    }

    /// Whether `m` is selected.
    pub fn active(m: Mutant) -> bool {
        ACTIVE.load(Ordering::Relaxed) == m as u8
    }
}

/// `true` when the named [`mutant`] is selected; the constant `false` without the
/// `crash-mutants` feature.
#[cfg(feature = "crash-mutants")]
macro_rules! mutated {
    ($m:ident) => {
        $crate::fs::mutant::active($crate::fs::mutant::Mutant::$m)
    };
}
#[cfg(not(feature = "crash-mutants"))]
macro_rules! mutated {
    ($m:ident) => {
        false
    };
}
pub(crate) use mutated;

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
    /// Opening a file: a `.log` (created when missing) and the files the loader reads
    /// (performed, [`FileSystem::open_file`]); an offset or time index (created and
    /// preallocated when missing) or a `.txnindex` (reported).
    Open,
    /// An append to, or a truncation or reset of, a `.txnindex` (reported; the first
    /// append creates the file).
    TxnWrite,
}

/// How [`FileSystem::open_file`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpenMode {
    /// Read-only; the file must exist.
    Read,
    /// Read and write, creating the file if it is missing, never truncating it.
    Create,
}

impl OpenMode {
    /// Opens `path` this way with `std`.
    ///
    /// # Errors
    /// The OS error.
    pub fn open(self, path: &Path) -> io::Result<File> {
        match self {
            OpenMode::Read => File::open(path),
            OpenMode::Create => OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path),
        }
    }
}

/// The file-system seam: the write-side operations of this crate. Every method has a
/// default that performs the operation with `std` (what [`RealFs`] uses), so an
/// implementation overrides only what it wants to observe or fail. Paths are given for
/// context and fault matching; the `File` handles are already open.
pub trait FileSystem: fmt::Debug + Send + Sync {
    /// Opens `path` as `mode` says ([`FsOp::Open`]).
    ///
    /// # Errors
    /// The OS error (`NotFound`, `EMFILE`, ...).
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<File> {
        mode.open(path)
    }

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

    /// Called just after an operation reported to [`before`](Self::before) succeeded;
    /// `to` is the new path of a rename ([`FsOp::IndexRename`]), `None` otherwise. Not
    /// called when the operation failed. The default does nothing.
    fn after(&self, op: FsOp, path: &Path, to: Option<&Path>) {
        let _ = (op, path, to);
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
/// `errno` for "too many open files" (the process's descriptor limit).
pub const EMFILE: i32 = 24;

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
    /// For [`FsOp::Write`] and [`FsOp::WriteFile`]: write the first half of the bytes
    /// before failing (a torn write; a `WriteFile` leaves the half-written file behind).
    /// Ignored for other operations.
    pub partial_write: bool,
    /// If set, the rule is dormant until an operation of this kind on a path containing
    /// this substring was seen (e.g. the directory fsync that follows a checkpoint's
    /// rename: `Fault::new(FsOp::SyncDir, EIO).armed_by(FsOp::Rename, "recovery-point")`).
    pub armed_by: Option<(FsOp, String)>,
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
            armed_by: None,
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

    /// Writes half of the bytes before failing a [`FsOp::Write`] or [`FsOp::WriteFile`].
    pub fn partial(mut self) -> Self {
        self.partial_write = true;
        self
    }

    /// Dormant until an `op` on a path containing `s` was seen (see [`Fault::armed_by`]).
    pub fn armed_by(mut self, op: FsOp, s: impl Into<String>) -> Self {
        self.armed_by = Some((op, s.into()));
        self
    }
}

#[derive(Debug)]
struct Rule {
    fault: Fault,
    seen: u64,
    fired: u64,
    /// Whether the `armed_by` operation was seen (always `true` without one).
    armed: bool,
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
        let armed = fault.armed_by.is_none();
        self.rules.lock().push(Rule {
            fault,
            seen: 0,
            fired: 0,
            armed,
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
            if !r.armed {
                if let Some((aop, apath)) = &r.fault.armed_by {
                    r.armed = *aop == op && shown.contains(apath.as_str());
                }
                continue;
            }
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
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<File> {
        self.gate(FsOp::Open, path)?;
        RealFs.open_file(path, mode)
    }
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
        if let Some(f) = self.check(FsOp::WriteFile, path) {
            if f.partial_write {
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)?
                    .write_all(&bytes[..bytes.len() / 2])?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
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

/// Reads the whole file at `path`, opening it through the seam `fs`
/// ([`FileSystem::open_file`]).
///
/// # Errors
/// The OS error of the open or the read.
pub fn read_file_with(fs: &dyn FileSystem, path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    fs.open_file(path, OpenMode::Read)?
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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
        FsOp::Open => "open",
        FsOp::TxnWrite => "write transaction index",
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
    if mutated!(NoDirFsync) {
        return Ok(());
    }
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

/// Checks, without opening it, that `path` is a regular file or a symlink to one.
/// `Ok(false)` if nothing is there.
///
/// # Errors
/// [`SegmentError::NotARegularFile`] naming the path and what it is;
/// [`SegmentError::Io`] if it cannot be stat'ed.
pub(crate) fn check_regular_file(path: &Path) -> Result<bool> {
    use crate::pio::FileTypeExt;
    // The link itself first: one `stat` for the usual answers (absent, a regular file);
    // a symlink is then followed.
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SegmentError::NotARegularFile {
                    path: path.to_path_buf(),
                    file_type: "dangling symlink",
                })
            }
            Err(e) => return Err(SegmentError::io("stat", path, e)),
        },
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(SegmentError::io("stat", path, e)),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(true);
    }
    let file_type = if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else {
        "special file"
    };
    Err(SegmentError::NotARegularFile {
        path: path.to_path_buf(),
        file_type,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchBuilder, ControlRecordType};

    use crate::{Log, LogConfig};

    /// Logs every open, report and completion (file names only).
    #[derive(Debug, Default)]
    struct Events {
        events: Mutex<Vec<(&'static str, FsOp, String)>>,
    }

    fn name(p: &Path) -> String {
        p.file_name().unwrap().to_string_lossy().into_owned()
    }

    impl FileSystem for Events {
        fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<File> {
            self.events.lock().push(("open", FsOp::Open, name(path)));
            mode.open(path)
        }
        fn before(&self, op: FsOp, path: &Path) -> io::Result<()> {
            self.events.lock().push(("before", op, name(path)));
            Ok(())
        }
        fn after(&self, op: FsOp, path: &Path, _to: Option<&Path>) {
            self.events.lock().push(("after", op, name(path)));
        }
    }

    fn abort_txn(log: &Log<crate::KafkaBatchFormat>) {
        let o = log.log_end_offset();
        let data = BatchBuilder::new(o)
            .producer(7, 0, 0)
            .transactional(true)
            .record(1, None, Some(b"v"))
            .build()
            .unwrap();
        log.append(&data).unwrap();
        let marker = BatchBuilder::new(o + 1)
            .producer(7, 0, -1)
            .build_end_txn_marker(ControlRecordType::Abort, 0, 2)
            .unwrap();
        log.append(&marker).unwrap();
    }

    /// Every file class is opened through the seam (performed or reported), `.txnindex`
    /// appends are reported, and each reported operation is followed by `after`.
    #[test]
    fn opens_and_txnindex_writes_go_through_the_seam() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Arc::new(Events::default());
        let log = Log::options()
            .fs(rec.clone())
            .open(dir.path(), LogConfig::default())
            .unwrap();
        abort_txn(&log);
        log.flush().unwrap();
        log.close().unwrap();
        let log = Log::options()
            .fs(rec.clone())
            .open(dir.path(), LogConfig::default())
            .unwrap();
        drop(log);
        let ev = rec.events.lock();
        let seen = |kind: &str, op: FsOp, suffix: &str| {
            ev.iter()
                .any(|(k, o, n)| *k == kind && *o == op && n.ends_with(suffix))
        };
        for suffix in [".log", "recovery-point", ".snapshot"] {
            assert!(
                seen("open", FsOp::Open, suffix),
                "no open of {suffix}: {ev:?}"
            );
        }
        for suffix in [".index", ".timeindex", ".txnindex"] {
            assert!(
                seen("before", FsOp::Open, suffix),
                "no open of {suffix}: {ev:?}"
            );
            assert!(seen("after", FsOp::Open, suffix), "{suffix}: {ev:?}");
        }
        assert!(seen("before", FsOp::TxnWrite, ".txnindex"), "{ev:?}");
        assert!(seen("after", FsOp::TxnWrite, ".txnindex"), "{ev:?}");
        let befores = ev.iter().filter(|e| e.0 == "before").count();
        let afters = ev.iter().filter(|e| e.0 == "after").count();
        assert_eq!(
            befores, afters,
            "every reported operation completed: {ev:?}"
        );
    }

    /// `EMFILE` on opening an index is a typed I/O error naming the file.
    #[test]
    fn an_index_open_can_fail_with_emfile() {
        let dir = tempfile::tempdir().unwrap();
        let fs = Arc::new(FaultyFs::new());
        fs.inject(Fault::new(FsOp::Open, EMFILE).on_path(".timeindex"));
        let log = Log::options()
            .fs(fs.clone())
            .open(dir.path(), LogConfig::default());
        let err = match log {
            Ok(log) => {
                let b = BatchBuilder::new(0)
                    .record(1, None, Some(b"v"))
                    .build()
                    .unwrap();
                log.append(&b).and_then(|_| log.flush()).unwrap_err()
            }
            Err(e) => e,
        };
        assert!(err.to_string().contains(".timeindex"), "{err}");
        assert!(fs.count(FsOp::Open) > 0);
        assert!(fs.injected() > 0);
    }
}
