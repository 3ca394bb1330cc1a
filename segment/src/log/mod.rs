//! [`Log`]: a partition directory of segments with Kafka's loader, recovery, append, roll,
//! read, truncation and retention (kafka-behaviour §9.10, kafka-behaviour §10, kafka-behaviour §11).
//!
//! # Files in the directory
//!
//! Besides the segment files, a `Log` keeps three small files of its own:
//!
//! * `.kafka_cleanshutdown` — the clean-shutdown marker. Kafka keeps it in the parent
//!   (log) directory for all partitions; this single-directory library keeps it in the
//!   partition directory. [`Log::close`] writes it **last**, after everything was flushed
//!   and the checkpoints written; [`Log::open`] removes it (and fsyncs the directory)
//!   **before** any other write, so a crash during loading is never mistaken for a clean
//!   shutdown (KAFKA-10471, field case B12).
//! * `recovery-point` — the recovery-point checkpoint: two text lines, the format version
//!   `0` and the offset below which all data was flushed. Written atomically (temp file,
//!   fsync, rename, fsync dir) by [`Log::flush`] and [`Log::close`], and after recovery.
//!   It never exceeds the flushed offset.
//! * `log-start-offset` — the log start offset checkpoint, same format. Retention and
//!   [`Log::delete_records`] write it (and raise `recovery-point` to it) before any segment
//!   leaves the log.
//! * `<offset>.snapshot` — Kafka's producer-state snapshots ([`crate::snapshot`]), taken on
//!   roll (at the new segment's base offset), on close (at the log end offset) and after
//!   loading or truncation; recovery of a segment starts from the latest one at or below
//!   its base offset, so a transaction that began before it is still known. Retention
//!   deletes the snapshot of each deleted segment, truncation those above the new end.
//! * `leader-epoch-checkpoint` — Kafka's leader-epoch cache (version line, count line,
//!   `epoch start_offset` lines), rewritten whenever the cache changes.
//! * `.lock` — the directory lock ([`DirLock`]): [`Log::open`] locks it exclusively and
//!   records its process id in it; a second open, from this process or another, fails
//!   with [`SegmentError::DirLocked`] until the log is closed or dropped (or its process
//!   dies). Read-only tools such as `dump-log` do not take it.
//!
//! A checkpoint that cannot be read (garbage, wrong version, not a regular file) is
//! warned about and treated as missing ([`crate::checkpoint`]), as Kafka does. A marker
//! that is not a regular file is not trusted (a FIFO or dangling symlink is removed and
//! the log recovered; a directory is [`SegmentError::NotARegularFile`]).
//!
//! Segments that leave the log are renamed `<name>.deleted` and removed
//! [`LogConfig::file_delete_delay_ms`] later (see [`deleter`](crate::deleter)).
//!
//! # The one limit: external truncation of a mapped index (SIGBUS)
//!
//! The `.index` and `.timeindex` files of a segment are memory-mapped. If another process
//! **shrinks** such a file while it is mapped here, the next access to a mapped page past
//! the new end raises `SIGBUS`, which kills the process: the operating system gives no
//! error a library could return, and Kafka's brokers have the same limit. The directory
//! lock keeps every cooperating process (anything that opens the directory through
//! [`Log::open`]) from doing it: a second `Log` cannot open the directory, recover it or
//! trim its indexes at close. It cannot stop a process that ignores the lock (`truncate`,
//! `rm` and rewrite, another program): do not modify a partition directory that a `Log`
//! has open, except through that `Log`. Copying files out, and `dump-log` (which reads
//! and never truncates the sources), are safe.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use index_txn::AbortedTxn;
use parking_lot::Mutex;

use crate::checkpoint::write_checkpoint;
use crate::config::{LogConfig, RollParams};
use crate::deleter::SegmentDeleter;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat, KafkaBatchFormat};
use crate::fs::FsRef;
use crate::lock::DirLock;
use crate::names::{self, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
use crate::producer::{LeaderEpochCache, ProducerStateManager};
use crate::scan::TimestampAndOffset;
use crate::segment::{FetchDataInfo, LogOffsetMetadata, LogSegment};
use crate::segments::LogSegments;
use crate::time::Clock;

mod options;
mod pstate;

pub use options::LogOptions;

/// Name of the clean-shutdown marker file inside the log directory.
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";
/// Name of the recovery-point checkpoint file inside the log directory.
pub const RECOVERY_POINT_FILE: &str = "recovery-point";
/// Name of the log-start-offset checkpoint file inside the log directory.
pub const LOG_START_OFFSET_FILE: &str = "log-start-offset";

/// Counters describing what the log did (instrumentation for tests and operators).
///
/// The counters start at 0 when the [`Log`] is opened and count from then on; the
/// recovery counters therefore tell what [`Log::open`] recovered. Read them with
/// `load(Ordering::Relaxed)`:
///
/// ```
/// # use segment::{Log, LogConfig};
/// use std::sync::atomic::Ordering;
/// # let dir = tempfile::tempdir()?;
/// let log = Log::open(dir.path(), LogConfig::default())?;
/// let stats = log.stats();
/// let (segments, bytes) = (stats.scanned_segments(), stats.bytes_truncated.load(Ordering::Relaxed));
/// assert_eq!((segments, bytes), (0, 0)); // a new log: nothing to recover
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct LogStats {
    /// Segments whose batches were scanned and validated by recovery.
    pub segments_recovered: AtomicU64,
    /// Bytes truncated from torn or corrupt tails by recovery: the sum over the recovered
    /// segments of the bytes cut after their last valid batch. Segments deleted because an
    /// earlier one was truncated are counted in `segments_deleted`, not here.
    pub bytes_truncated: AtomicU64,
    /// Segments below the recovery point (or of a cleanly shut down log) whose files
    /// failed a load-time check (index order, or the consistency check of
    /// [`Log::open`] step 4) and were recovered from their `.log` (Kafka would have
    /// trusted them).
    pub indexes_rebuilt: AtomicU64,
    /// Segments rolled.
    pub rolls: AtomicU64,
    /// Segments deleted (retention, truncation, recovery).
    pub segments_deleted: AtomicU64,
    /// First offset recovery removed (−1 if it removed none): the log end offset right
    /// after the first truncated segment. See [`truncated_offsets`](Self::truncated_offsets).
    pub first_truncated_offset: AtomicI64,
    /// One past the last offset recovery removed (−1 if none), as far as the removed data
    /// tells: the largest next offset readable, before recovery, in the truncated segment
    /// and in the later segments deleted after it (a batch whose header is cut cannot tell
    /// its offsets).
    pub end_truncated_offset: AtomicI64,
    /// Empty segments removed because they lay inside the offsets of the segment
    /// before them (a file that holds nothing never costs valid records).
    pub empty_overlapping_segments_removed: AtomicU64,
    /// Cuts of a segment whose batches overlapped the next segment (see
    /// [`overlaps_cut`](Self::overlaps_cut)).
    overlaps: Mutex<Vec<(i64, std::ops::Range<i64>)>>,
    /// What the `.swap` files completed by the open replaced, if any (see
    /// [`swap_replacement`](Self::swap_replacement)).
    swap: Mutex<Option<SwapReplacement>>,
}

/// Largest number of ranges [`SwapReplacement::removed_offsets`] lists; the rest are
/// counted in [`SwapReplacement::removed_ranges_omitted`].
pub const MAX_REPORTED_SWAP_RANGES: usize = 1024;

/// What [`Log::open`] did when it completed the `.swap` files an interrupted replacement
/// left (the commit point of Kafka's cleaner and of the loader's split): which segments
/// they replaced and which offsets are no longer in the log because of it
/// (`docs/kafka-behaviour.md#swap-refusal`). A cleaned segment legitimately holds fewer
/// records than the segments it replaces, so removed offsets are not an error; a swap
/// that fails validation or holds offsets outside the replaced segments is refused
/// instead ([`SegmentError::SwapRefused`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwapReplacement {
    /// Base offsets of the `.log.swap` files completed (renamed to `.log`), increasing.
    pub swap_base_offsets: Vec<i64>,
    /// Base offsets of the segments whose files were deleted or overwritten: those
    /// with a base offset from the lowest swap base to the largest swap end (Kafka's
    /// rule), and those at a swap's own base offset. Increasing.
    pub replaced_base_offsets: Vec<i64>,
    /// The offsets the replaced segments held that the swaps do not hold, as increasing,
    /// disjoint `start..end` ranges (end exclusive), at batch granularity: an offset
    /// counts as held when a batch's `base..=last` spans it (read from the batch
    /// headers). At most [`MAX_REPORTED_SWAP_RANGES`] ranges.
    pub removed_offsets: Vec<std::ops::Range<i64>>,
    /// Ranges beyond [`MAX_REPORTED_SWAP_RANGES`] not listed in `removed_offsets`.
    pub removed_ranges_omitted: u64,
    /// Number of offsets in all removed ranges, listed or not.
    pub removed_offset_count: u64,
}

impl SwapReplacement {
    fn new(plan: crate::validate::SwapPlan) -> Self {
        let removed_offset_count = plan.removed.iter().map(|&(s, e)| (e - s) as u64).sum();
        let omitted = plan.removed.len().saturating_sub(MAX_REPORTED_SWAP_RANGES) as u64;
        SwapReplacement {
            swap_base_offsets: plan.swap_bases,
            replaced_base_offsets: plan.replaced,
            removed_offsets: plan
                .removed
                .into_iter()
                .take(MAX_REPORTED_SWAP_RANGES)
                .map(|(s, e)| s..e)
                .collect(),
            removed_ranges_omitted: omitted,
            removed_offset_count,
        }
    }
}

impl Default for LogStats {
    fn default() -> Self {
        LogStats {
            segments_recovered: AtomicU64::new(0),
            bytes_truncated: AtomicU64::new(0),
            indexes_rebuilt: AtomicU64::new(0),
            rolls: AtomicU64::new(0),
            segments_deleted: AtomicU64::new(0),
            first_truncated_offset: AtomicI64::new(-1),
            end_truncated_offset: AtomicI64::new(-1),
            empty_overlapping_segments_removed: AtomicU64::new(0),
            overlaps: Mutex::new(Vec::new()),
            swap: Mutex::new(None),
        }
    }
}

impl LogStats {
    /// [`LogStats::segments_recovered`] as a number.
    pub fn scanned_segments(&self) -> u64 {
        self.segments_recovered.load(Ordering::Relaxed)
    }

    /// The offsets recovery removed from the log, `first..end` (end exclusive), or `None`
    /// if it removed none: from the log end offset after the truncation to the largest
    /// next offset the removed batches held (their headers, read before recovery, without
    /// checksum checks). With gaps in the offsets, not every offset of the range held a
    /// record; an offset of a batch whose header was cut is not counted.
    pub fn truncated_offsets(&self) -> Option<std::ops::Range<i64>> {
        let first = self.first_truncated_offset.load(Ordering::Relaxed);
        let end = self.end_truncated_offset.load(Ordering::Relaxed);
        (first >= 0 && end > first).then_some(first..end)
    }

    /// The overlaps between segments the open resolved by cutting the earlier segment at
    /// the later one's base offset: `(base offset of the cut segment, offsets cut)` (as
    /// far as the cut segment's batch headers tell, end exclusive). The later segment
    /// keeps the offsets from its base offset on, so no offset is held twice; offsets of
    /// the range it does not hold are gone. The bytes cut are counted in
    /// [`bytes_truncated`](Self::bytes_truncated).
    pub fn overlaps_cut(&self) -> Vec<(i64, std::ops::Range<i64>)> {
        self.overlaps.lock().clone()
    }

    /// What the `.swap` files the open completed replaced, or `None` if there were none
    /// (see [`SwapReplacement`]).
    pub fn swap_replacement(&self) -> Option<SwapReplacement> {
        self.swap.lock().clone()
    }

    fn note_truncated(&self, first: i64, end_before: Option<i64>) {
        if self.first_truncated_offset.load(Ordering::Relaxed) < 0 {
            self.first_truncated_offset.store(first, Ordering::Relaxed);
        }
        if let Some(end) = end_before {
            self.end_truncated_offset.fetch_max(end, Ordering::Relaxed);
        }
    }
}

/// What [`Log::append`] appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendInfo {
    /// First offset of the first batch.
    pub first_offset: i64,
    /// Last offset of the last batch.
    pub last_offset: i64,
    /// Largest batch max timestamp (ms since epoch; −1 if none).
    pub max_timestamp: i64,
    /// Last offset of the first batch that holds `max_timestamp`.
    pub offset_of_max_timestamp: i64,
    /// Bytes appended.
    pub size: u64,
    /// Number of batches.
    pub batches: usize,
    /// Base offset of the segment the data went to.
    pub segment_base_offset: i64,
}

/// A partition directory of segments (Kafka's `UnifiedLog`/`LocalLog`, with its producer
/// state and leader-epoch cache, without replication or the cleaner).
///
/// Mutations (append, roll, truncate, retention, flush, close) serialise on an internal
/// lock; reads use the lock-free segment map and may run concurrently, with the contract
/// of [`read`](Log::read) (`docs/kafka-behaviour.md#concurrent-reads`).
///
/// The batch format is a type parameter (static dispatch). [`Log::open`] opens a log of
/// Kafka's record batches, with no annotation; `LogOptions::<MyFormat>::new().open(..)`
/// opens one of your own [`BatchFormat`] (a complete example is in the
/// [`format`](mod@format) module docs).
///
/// Offsets are assigned by the caller: [`append`](Log::append) stores batches that carry
/// their offsets, the next one starting at [`log_end_offset`](Log::log_end_offset).
/// [`read`](Log::read) returns the stored bytes of whole batches, which you decode with
/// your format ([`format::scan`]).
///
/// See the [module docs](self) for the files the log keeps in its directory, its
/// directory lock, and the SIGBUS limit of memory-mapped indexes truncated by another
/// process.
///
/// Durability: `append` writes to the `.log` file but does not fsync; [`flush`](Log::flush)
/// does, and moves the recovery point. [`close`](Log::close) flushes and marks a clean
/// shutdown. Dropping a `Log` (or [`close_handlers`](Log::close_handlers)) does neither,
/// like a crash: the next [`open`](Log::open) recovers every segment from the recovery
/// point on, and [`stats`](Log::stats) tells what it truncated.
#[derive(Debug)]
pub struct Log<F: BatchFormat = KafkaBatchFormat> {
    dir: PathBuf,
    config: LogConfig,
    clock: Clock,
    segments: LogSegments<F>,
    log_end_offset: AtomicI64,
    log_start_offset: AtomicI64,
    recovery_point: AtomicI64,
    lock: Mutex<()>,
    stats: LogStats,
    epoch_cache: Mutex<LeaderEpochCache>,
    producer_state: Mutex<ProducerStateManager>,
    active_ready: std::sync::atomic::AtomicBool,
    /// Set when an append changed the leader-epoch cache but could not write
    /// `leader-epoch-checkpoint`: the next flush writes it before the recovery point moves
    /// (`docs/kafka-behaviour.md#offline-rule`).
    epochs_pending: std::sync::atomic::AtomicBool,
    fs: FsRef,
    /// Set when a flush failed: after a failed fsync the kernel may have dropped dirty
    /// pages, so a later successful fsync proves nothing; the log refuses further writes
    /// until it is reopened (and recovered).
    offline: std::sync::atomic::AtomicBool,
    /// Why the log went offline (set once, before `offline`), for the refusals' errors.
    offline_reason: parking_lot::Mutex<Option<String>>,
    /// The exclusive lock on the directory, held until the log is closed or dropped.
    dir_lock: DirLock,
    /// Segments renamed `.deleted`, waiting for `file.delete.delay.ms`.
    deleter: SegmentDeleter<F>,
}

/// Whether `e` says that a file (or the directory) could not be **opened** — no
/// descriptor left (`EMFILE`, `ENFILE`), no such file, no permission — as opposed to a
/// failed fsync. `fsync(2)`, `fdatasync(2)` and `msync(2)` never fail with these, so such an
/// error means nothing was synced through a failing descriptor and no dirty page was
/// dropped: the fsyncgate rule (take the log offline) does not apply
/// (`docs/kafka-behaviour.md#offline-rule`).
fn is_open_failure(e: &SegmentError) -> bool {
    match e {
        SegmentError::Io { source, .. } => is_open_failure_io(source),
        SegmentError::Index(index_core::IndexError::Io { source, .. }) => {
            is_open_failure_io(source)
        }
        SegmentError::TxnIndex(index_txn::TxnIndexError::Io { source, .. }) => {
            is_open_failure_io(source)
        }
        _ => false,
    }
}

/// [`is_open_failure`] of an OS error.
fn is_open_failure_io(source: &std::io::Error) -> bool {
    /// `ENFILE` and `EMFILE` (the same numbers on Linux, the BSDs and macOS).
    const NO_DESCRIPTOR: [i32; 2] = [23, 24];
    matches!(
        source.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
    ) || (cfg!(unix)
        && source
            .raw_os_error()
            .is_some_and(|n| NO_DESCRIPTOR.contains(&n)))
}

impl Log<KafkaBatchFormat> {
    /// Opens (creating if needed) the log in `dir`, of Kafka's record batches — Kafka's loader (kafka-behaviour §10):
    ///
    /// 0. the directory's `.lock` file is locked exclusively ([`DirLock`]) before anything
    ///    else is read or written; the lock is held until the log is closed or dropped;
    /// 1. the clean-shutdown marker is read and **removed** (directory fsynced) first;
    /// 2. `*.deleted` files are deleted, `.cleaned`/`.swap` files are resolved, orphan
    ///    index files are deleted;
    /// 3. segments are opened in offset order; their indexes stay unmapped (lazy), except
    ///    that a missing `.index`, a corrupt `.txnindex` or — stricter than Kafka — an
    ///    index whose first/last entries are out of order (an untrimmed zero-padded index,
    ///    field case B1/B3) makes the segment be recovered from its `.log`;
    ///    every file named like a segment file is checked to be a regular file (symlinks
    ///    followed) **before** anything is opened: anything else is
    ///    [`SegmentError::NotARegularFile`], never skipped and never opened;
    /// 4. before the clean-shutdown marker or the recovery point is trusted for a segment,
    ///    a cheap check without mapping (`segment/src/validate.rs`) confirms that its last
    ///    index entries lie inside the `.log`, its first and last batch headers are
    ///    readable and fit, and offsets increase, also across segment boundaries. A
    ///    segment that fails is recovered from its `.log` (later segments are kept; an
    ///    overlap with the next segment is cut at the next segment's base offset, or, if
    ///    the next segment is empty, that empty segment is removed; both reported in
    ///    [`LogStats`]), and the log end never goes below the checkpointed recovery point
    ///    (the log end at a clean shutdown, the flushed offset otherwise: a new segment is
    ///    started there if recovery cut below it), so no offset handed out is reused.
    ///    Stricter than Kafka, which trusts the marker. Recovery stops at a batch whose
    ///    offsets go backwards, as at a corrupt one;
    /// 5. without a clean shutdown, every segment from the one holding the recovery point
    ///    on is recovered; after the first one that truncated bytes all later segments are
    ///    deleted; recovered segments are flushed and the recovery point moved to the log
    ///    end;
    /// 6. the active segment's indexes are resized to `max_index_size`.
    ///
    /// A legacy segment (written before Kafka 2.0) holding offsets that are not
    /// representable relative to its base offset (B5d) is **split** into several
    /// segments when recovery meets it, as Kafka's loader does: the pieces are written as
    /// `.cleaned` files ([`LogSegment::append_from_file`]), renamed to `.swap` (highest
    /// base first), the old segment is deleted and the `.swap` suffixes dropped. A crash at
    /// any point is resolved by step 2 of the next open: leftover `.cleaned` files (and
    /// `.swap` files at or above them) are deleted — the old segment is still complete —
    /// and a complete set of `.swap` files replaces what is left of the old segment.
    ///
    /// What recovery did is in [`Log::stats`] (segments scanned, bytes truncated). Opening
    /// never applies retention: segments are deleted only by
    /// [`delete_old_segments`](Self::delete_old_segments) and the calls built on it.
    ///
    /// The log uses the system clock and the real file system; [`Log::options`] sets
    /// others ([`LogOptions`]).
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] if `config` fails [`LogConfig::validate`] (nothing
    /// is touched then); [`SegmentError::DirLocked`] if another `Log` (in this process or
    /// another) has the directory open;
    /// I/O errors (no marker is ever written by a failed open; an unreadable checkpoint is
    /// not an error: it is warned about and treated as missing, see [`crate::checkpoint`]);
    /// [`SegmentError::OffsetOverflow`] only if a split cannot make progress; a
    /// [`SegmentError::Format`] that is not a corruption
    /// ([`FormatError::Unsupported`](crate::format::FormatError::Unsupported)) met by
    /// recovery.
    pub fn open(dir: impl Into<PathBuf>, config: LogConfig) -> Result<Self> {
        Self::options().open(dir, config)
    }

    /// Options to open a log of Kafka's record batches with another clock or file-system
    /// seam: `Log::options().clock(clock).fs(fs).open(dir, config)`. For another
    /// [`BatchFormat`], start from [`LogOptions::new`].
    pub fn options() -> LogOptions<KafkaBatchFormat> {
        LogOptions::new()
    }
}

impl<F: BatchFormat> Log<F> {
    /// The loader behind [`LogOptions::open`] (see [`Log::open`]).
    fn open_with(dir: PathBuf, config: LogConfig, clock: Clock, fs: FsRef) -> Result<Self> {
        config.validate()?;
        std::fs::create_dir_all(&dir).map_err(|e| SegmentError::io("create dir", &dir, e))?;
        let dir_lock = DirLock::acquire(&dir)?;
        let marker = dir.join(CLEAN_SHUTDOWN_FILE);
        let clean = crate::validate::take_clean_marker(&*fs, &marker)?;
        crate::fs::fsync_dir_with(&*fs, &dir)?;
        let checkpoints = crate::checkpoint::load_checkpoints(
            &*fs,
            &dir,
            RECOVERY_POINT_FILE,
            LOG_START_OFFSET_FILE,
            clean,
        )?;

        let log = Log {
            dir,
            config: config.clone(),
            clock: clock.clone(),
            segments: LogSegments::new(),
            log_end_offset: AtomicI64::new(0),
            log_start_offset: AtomicI64::new(checkpoints.log_start_offset),
            recovery_point: AtomicI64::new(checkpoints.recovery_point),
            lock: Mutex::new(()),
            stats: LogStats::default(),
            epoch_cache: Mutex::new(LeaderEpochCache::new()),
            producer_state: Mutex::new(ProducerStateManager::new()),
            active_ready: std::sync::atomic::AtomicBool::new(false),
            epochs_pending: std::sync::atomic::AtomicBool::new(false),
            fs,
            offline: std::sync::atomic::AtomicBool::new(false),
            offline_reason: parking_lot::Mutex::new(None),
            dir_lock,
            deleter: SegmentDeleter::new(config.file_delete_delay_ms, clock.clone()),
        };
        log.remove_temp_files_and_swap()?;
        let epochs_usable = log.load_leader_epoch_checkpoint()?;
        let mut flagged = log.load_segments()?;
        // Segments split so far. A segment that would be split a second time made no
        // progress: its overflow is an error, never a loop. There is no count limit, so a
        // directory of any number of overflowed legacy segments opens.
        let mut split_bases = std::collections::HashSet::new();
        // After a split, recovery resumes at the split segment: the segments below it
        // were recovered already (recovering them again made an open of N overflowed
        // segments cost O(N^2) segment recoveries).
        let mut resume_from = i64::MIN;
        loop {
            flagged.sort_unstable();
            flagged.dedup();
            match log.recover_log(&checkpoints, flagged.clone(), resume_from) {
                Err(SegmentError::OffsetOverflow {
                    path,
                    base_offset,
                    offset,
                }) => {
                    let seg = log
                        .segments
                        .get(base_offset)
                        .filter(|s| s.log_path() == path && split_bases.insert(base_offset));
                    let Some(seg) = seg else {
                        return Err(SegmentError::OffsetOverflow {
                            path,
                            base_offset,
                            offset,
                        });
                    };
                    let recheck = log.split_overflowed_segment(&seg)?;
                    flagged.retain(|&b| b >= base_offset);
                    flagged.extend(recheck);
                    resume_from = base_offset;
                }
                r => {
                    r?;
                    break;
                }
            }
        }
        // Nothing can be reading the segments recovery removed: delete their files now.
        log.deleter.delete_all()?;
        log.load_producer_state(epochs_usable, checkpoints.log_start_offset)?;
        Ok(log)
    }

    /// Kafka's `splitOverflowedSegment` + `replaceSegments`: copies the batches of `seg`
    /// into new `.cleaned` segments, each starting at the base offset of its first batch
    /// and holding the batches representable relative to it; any bytes after the last
    /// complete, well-framed batch (a torn or corrupt tail) are copied verbatim to the end
    /// of the last piece, so the pieces together hold exactly the old bytes and recovery
    /// treats that tail as it would have. The pieces are trimmed, flushed and given the
    /// old `.log`'s mtime; then renamed `.cleaned` → `.swap` (highest base first), the old
    /// segment is deleted, and the pieces renamed `.swap` → final. Returns the base
    /// offsets to recover (all pieces: their transaction indexes are rebuilt, and the last
    /// one may end in an invalid tail).
    fn split_overflowed_segment(&self, seg: &Arc<LogSegment<F>>) -> Result<Vec<i64>> {
        use crate::scan::Scanner;
        let src = seg.log();
        let size = src.size_in_bytes();
        tracing::warn!(segment = %src.path().display(), size, "splitting a segment with relative offset overflow");
        let mut pieces: Vec<LogSegment<F>> = Vec::new();
        let mut recheck = Vec::new();
        let built = (|| -> Result<()> {
            let mut position = 0u64;
            while position < size {
                let first = Scanner::<F>::new(src, position)
                    .next_batch()?
                    .map(|(info, _)| info.base_offset);
                let Some(base) = first else { break };
                for kind in names::FileKind::ALL {
                    let p = names::segment_file(&self.dir, base, kind, CLEANED_FILE_SUFFIX);
                    crate::fs::remove_if_exists_with(&*self.fs, &p)?;
                }
                let piece = self.open_segment(base, false, CLEANED_FILE_SUFFIX)?;
                let n = piece.append_from_file(src, position);
                pieces.push(piece);
                let n = n?;
                if n == 0 {
                    return Err(SegmentError::IllegalState {
                        path: src.path(),
                        reason: format!(
                            "failed to split the segment: nothing could be copied from position {position}"
                        ),
                    });
                }
                position += n;
            }
            if position < size {
                let Some(last) = pieces.last() else {
                    return Err(SegmentError::IllegalState {
                        path: src.path(),
                        reason: "overflowed segment without a complete batch".into(),
                    });
                };
                tracing::warn!(segment = %src.path().display(), position, size, "copying an invalid tail verbatim; recovery will truncate it");
                last.log().append(&src.read(position, size - position)?)?;
            }
            let mtime = seg.last_modified()?;
            let mut total = 0;
            for p in &pieces {
                p.on_become_inactive_segment()?;
                p.flush()?;
                p.set_last_modified(mtime)?;
                total += p.size();
            }
            if total != size {
                return Err(SegmentError::IllegalState {
                    path: src.path(),
                    reason: format!(
                        "inconsistent segment sizes after split: before {size}, after {total}"
                    ),
                });
            }
            Ok(())
        })();
        if let Err(e) = built {
            for p in &pieces {
                p.close_handlers();
                let _ = p.delete_if_exists();
            }
            return Err(e);
        }
        // Crash-safe replacement (Kafka's `replaceSegments`): see `remove_temp_files_and_swap`.
        for p in pieces.iter().rev() {
            p.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)?;
        }
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        self.segments.remove(seg.base_offset());
        seg.close_handlers();
        seg.change_file_suffixes("", DELETED_FILE_SUFFIX)?;
        seg.delete_if_exists()?;
        self.stats.segments_deleted.fetch_add(1, Ordering::Relaxed);
        for p in &pieces {
            p.change_file_suffixes(SWAP_FILE_SUFFIX, "")?;
        }
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        let bases: Vec<i64> = pieces.iter().map(|p| p.base_offset()).collect();
        // Recover every piece (once): the transaction index and producer state are not
        // copied by the split, and the last piece may end in an invalid tail.
        recheck.extend(&bases);
        tracing::info!(
            ?bases,
            "replaced the overflowed segment with split segments"
        );
        for p in pieces {
            self.segments.add(Arc::new(p));
        }
        Ok(recheck)
    }

    fn list_dir(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for e in
            std::fs::read_dir(&self.dir).map_err(|e| SegmentError::io("list dir", &self.dir, e))?
        {
            let e = e.map_err(|e| SegmentError::io("list dir", &self.dir, e))?;
            let path = e.path();
            if crate::validate::is_segment_file_name(names::file_name(&path)) {
                // Followed if a symlink; anything but a regular file is an error, never
                // skipped (its offsets would vanish) and never opened (a FIFO blocks).
                crate::validate::check_regular_file(&path)?;
                out.push(path);
                continue;
            }
            let ft = e
                .file_type()
                .map_err(|er| SegmentError::io("stat", &path, er))?;
            if ft.is_file() {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }

    fn open_segment(&self, base: i64, exists: bool, suffix: &str) -> Result<LogSegment<F>> {
        LogSegment::open_with_fs(
            &self.dir,
            base,
            &self.config,
            self.clock.clone(),
            exists,
            if exists { 0 } else { self.config.segment_bytes },
            !exists && self.config.preallocate,
            suffix,
            self.fs.clone(),
        )
    }

    fn remove_if_exists(&self, path: &Path) -> Result<bool> {
        crate::fs::remove_if_exists_with(&*self.fs, path)
    }

    fn checkpoint(&self, name: &str, value: i64) -> Result<()> {
        write_checkpoint(&*self.fs, &self.dir.join(name), value)
    }

    fn check_online(&self) -> Result<()> {
        if self.offline.load(Ordering::Acquire) {
            let why = self
                .offline_reason
                .lock()
                .clone()
                .unwrap_or_else(|| "a flush failed".into());
            return Err(SegmentError::IllegalState {
                path: self.dir.clone(),
                reason: format!("the log is offline: {why} (the state on disk is unknown, so nothing more is written); reopen it to recover"),
            });
        }
        Ok(())
    }

    /// Takes the log offline for `why` (kept for the errors of every refused call).
    fn go_offline(&self, why: String) {
        self.offline_reason.lock().get_or_insert(why);
        self.offline.store(true, Ordering::Release);
    }

    /// Whether a failed flush took the log offline (every later write, flush and
    /// [`close`](Self::close) then fails; reopening recovers from the last checkpoint).
    pub fn is_offline(&self) -> bool {
        self.offline.load(Ordering::Acquire)
    }

    /// The file-system seam of this log.
    pub fn fs(&self) -> &FsRef {
        &self.fs
    }

    /// Step 2 of [`open`](Self::open), Kafka's `removeTempFilesAndCollectSwapFiles` and the
    /// swap passes of `LogLoader.load`: `.cleaned` files (and `.swap` files at or above the
    /// lowest of them) are deleted, `.deleted` files are deleted, and the remaining
    /// `.swap` files are completed: the segments they replace are deleted and the swaps
    /// renamed. Stricter than Kafka (`docs/kafka-behaviour.md#swap-refusal`): the swaps
    /// are checked first ([`crate::validate::plan_swaps`]) and refused with
    /// [`SegmentError::SwapRefused`] before anything else is touched; what a completed
    /// swap replaced is reported in [`LogStats::swap_replacement`]. No index of a swap is
    /// opened (a mapping would create a preallocated `.index.swap` that the renames
    /// would miss).
    fn remove_temp_files_and_swap(&self) -> Result<()> {
        let mut swaps = Vec::new();
        let mut cleaned = Vec::new();
        let mut deleted = Vec::new();
        for p in self.list_dir()? {
            let name = names::file_name(&p).to_string();
            if name.ends_with(DELETED_FILE_SUFFIX) {
                if !name.ends_with(".checkpoint.deleted") {
                    deleted.push(p);
                }
            } else if name.ends_with(CLEANED_FILE_SUFFIX) {
                cleaned.push(p);
            } else if name.ends_with(SWAP_FILE_SUFFIX) {
                swaps.push(p);
            }
        }
        let min_cleaned = cleaned
            .iter()
            .filter_map(|p| names::offset_from_file(p).ok())
            .min()
            .unwrap_or(i64::MAX);
        // A `.swap` at or above the lowest `.cleaned` belongs to an unfinished split or
        // clean (the `.cleaned` → `.swap` renames go from the highest base down): delete
        // it, and fail the open if that is impossible — keeping it would make the next
        // open treat it as complete once the `.cleaned` files are gone.
        let mut complete = Vec::new();
        for p in swaps {
            if names::offset_from_file(&p).map_or(true, |o| o < min_cleaned) {
                complete.push(p);
            } else {
                tracing::info!(file = %p.display(), "deleting the swap file of an unfinished operation");
                self.remove_if_exists(&p)?;
            }
        }
        let swaps = complete;
        if !cleaned.is_empty() {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        }
        for p in &cleaned {
            self.remove_if_exists(p)?;
        }
        let log_swaps = swaps
            .iter()
            .filter(|p| names::file_name(p).ends_with(".log.swap"))
            .map(|p| Ok((names::canonical_offset_from_file(p)?, p.clone())))
            .collect::<Result<Vec<_>>>()?;
        // Before anything is replaced: are the swaps sound, and what do they replace?
        // The `.deleted` segments a crash in the middle of a replacement left count as
        // replaced, so they are read before they are deleted.
        let plan = if log_swaps.is_empty() {
            None
        } else {
            let segment_logs = |files: &[PathBuf], suffix: &str| -> Vec<(i64, PathBuf)> {
                files
                    .iter()
                    .filter(|p| names::file_name(p).ends_with(&format!(".log{suffix}")))
                    .filter_map(|p| Some((names::canonical_offset_from_file(p).ok()?, p.clone())))
                    .collect()
            };
            let all = self.list_dir()?;
            let live: Vec<(i64, PathBuf)> = segment_logs(&all, "");
            let deleted_logs = segment_logs(&deleted, DELETED_FILE_SUFFIX);
            Some(crate::validate::plan_swaps::<F>(
                &self.fs,
                &self.dir,
                &log_swaps,
                &live,
                &deleted_logs,
            )?)
        };
        for p in &deleted {
            self.remove_if_exists(p)?;
        }
        if swaps.is_empty() {
            return Ok(());
        }
        // Index `.swap` files without a `.log.swap` (a crash between renaming a piece's
        // `.log` and its indexes to their final names) are still renamed below, as Kafka
        // renames every swap file.
        if let Some(plan) = &plan {
            // Kafka deletes the files with a base in [min swap base, max swap next
            // offset); the files of a segment at a swap's own base go too (the rename
            // replaces its `.log`; its indexes would not match the new one).
            for p in self.list_dir()? {
                let name = names::file_name(&p);
                if name.ends_with(SWAP_FILE_SUFFIX)
                    || !(names::is_log_file(&p) || names::is_index_file(&p))
                {
                    continue;
                }
                if let Ok(o) = names::offset_from_file(&p) {
                    if (o >= plan.min_base && o < plan.max_next) || plan.swap_bases.contains(&o) {
                        self.remove_if_exists(&p)?;
                    }
                }
            }
        }
        for p in &swaps {
            let to = names::replace_suffix(p, SWAP_FILE_SUFFIX, "")?;
            self.fs
                .rename(p, &to)
                .map_err(|e| SegmentError::io("rename", p, e))?;
        }
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        if let Some(plan) = plan {
            let report = SwapReplacement::new(plan);
            tracing::warn!(dir = %self.dir.display(), swaps = ?report.swap_base_offsets, replaced = ?report.replaced_base_offsets, removed = ?report.removed_offsets, "completed the swap files of an interrupted replacement");
            *self.stats.swap.lock() = Some(report);
        }
        Ok(())
    }

    /// Opens every segment; returns the base offsets of those whose indexes must be
    /// rebuilt (missing `.index`, corrupt `.txnindex`, failed quick check).
    fn load_segments(&self) -> Result<Vec<i64>> {
        let files = self.list_dir()?;
        for p in &files {
            if names::is_index_file(p) {
                let Some(kind) = names::kind_of(p) else {
                    continue;
                };
                let log = names::replace_suffix(p, kind.suffix(), names::LOG_FILE_SUFFIX)?;
                if !log.exists() {
                    tracing::warn!(file = %p.display(), "deleting orphaned index file");
                    self.remove_if_exists(p)?;
                }
            }
        }
        let mut flagged = Vec::new();
        for p in &files {
            if !names::is_log_file(p) {
                continue;
            }
            if names::offset_from_file(p).is_err() {
                continue; // not named like a segment (e.g. `notes.log`)
            }
            let base = names::canonical_offset_from_file(p)?;
            let time_index_existed = names::time_index_file(&self.dir, base, "").exists();
            let seg = self.open_segment(base, true, "")?;
            let needs_recovery = match seg.sanity_check(!time_index_existed) {
                Ok(()) => match seg.quick_index_check() {
                    Ok(()) => false,
                    Err(reason) => {
                        tracing::warn!(segment = %p.display(), %reason, "index failed the load check; rebuilding it from the log");
                        self.stats.indexes_rebuilt.fetch_add(1, Ordering::Relaxed);
                        true
                    }
                },
                Err(SegmentError::MissingIndex { .. }) if seg.size() == 0 => false,
                Err(e @ SegmentError::MissingIndex { .. }) => {
                    tracing::info!(error = %e, "recovering segment with a missing index");
                    true
                }
                Err(e) if e.is_corruption() => {
                    tracing::warn!(error = %e, "recovering segment with a corrupt index");
                    true
                }
                Err(e) => return Err(e),
            };
            // Kafka leaves a missing `.timeindex` empty (sanityCheck resizes it to 0), which
            // hides the segment from lookups by timestamp: its largest timestamp reads as
            // unknown. Here a non-empty segment without one is recovered, which rebuilds it.
            let time_index_lost = !time_index_existed && seg.size() > 0;
            if time_index_lost && !needs_recovery {
                tracing::warn!(segment = %p.display(), "time index missing; rebuilding the indexes from the log");
                self.stats.indexes_rebuilt.fetch_add(1, Ordering::Relaxed);
            }
            if needs_recovery || time_index_lost {
                flagged.push(base);
            }
            self.segments.add(Arc::new(seg));
        }
        // Before the marker or the recovery point is trusted for a segment: do its files
        // agree (crate::validate)? A segment that fails is recovered.
        let failed = crate::validate::check_loaded_segments(&self.segments, &flagged);
        self.stats
            .indexes_rebuilt
            .fetch_add(failed.len() as u64, Ordering::Relaxed);
        flagged.extend(failed);
        Ok(flagged)
    }

    fn recover_segment(
        &self,
        seg: &LogSegment<F>,
        log_start_checkpoint: i64,
        before_truncate: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        self.stats
            .segments_recovered
            .fetch_add(1, Ordering::Relaxed);
        // Best effort, for the report only: where the data ends before recovery.
        let end_before = seg.read_next_offset().ok();
        let n = self.recover_segment_with_state(seg, log_start_checkpoint, before_truncate)?;
        self.stats.bytes_truncated.fetch_add(n, Ordering::Relaxed);
        if n > 0 {
            let after = seg.read_next_offset()?;
            self.stats.note_truncated(after, end_before);
        }
        Ok(n)
    }

    fn recover_log(
        &self,
        checkpoints: &crate::checkpoint::LoadedCheckpoints,
        flagged: Vec<i64>,
        resume_from: i64,
    ) -> Result<()> {
        let crate::checkpoint::LoadedCheckpoints {
            clean,
            recovery_point: rp_checkpoint,
            log_start_offset: ls_checkpoint,
            recovery_point_on_disk,
        } = *checkpoints;
        let unflushed = if clean {
            Vec::new()
        } else {
            self.segments
                .values_range(rp_checkpoint.max(resume_from), i64::MAX)?
        };
        let first_unflushed = unflushed.first().map_or(i64::MAX, |s| s.base_offset());
        // Segments below the recovery point whose indexes cannot be trusted: rebuild them
        // (their data was flushed, so a truncation here is reported, not cascaded).
        for base in flagged.into_iter().filter(|&b| b < first_unflushed) {
            if let Some(seg) = self.segments.get(base) {
                let n = self.recover_segment(&seg, ls_checkpoint, &mut || Ok(()))?;
                if n > 0 {
                    tracing::warn!(
                        segment = base,
                        truncated = n,
                        "flushed segment had invalid bytes"
                    );
                }
                self.resolve_overlap(&seg)?;
                seg.flush()?;
                self.unload_if_inactive(&seg)?;
            }
        }
        {
            for seg in unflushed {
                // Kafka deletes every segment after one that recovery truncates. Do it
                // before the truncation, and make it durable (directory fsync): otherwise a
                // power cut after the truncation reached the disk but before the deletions
                // did lets the next recovery find this segment clean and keep the later
                // ones, so two recoveries of one state would serve different logs (found by
                // `cargo xtask crash`, invariant 6).
                let base = seg.base_offset();
                let mut cascaded: Vec<Option<i64>> = Vec::new();
                let mut delete_later = || -> Result<()> {
                    let later = self.segments.higher_segments(base);
                    if later.is_empty() {
                        return Ok(());
                    }
                    for l in later {
                        cascaded.push(l.read_next_offset().ok());
                        tracing::warn!(
                            segment = l.base_offset(),
                            "deleting segment after a truncated one"
                        );
                        self.delete_segment_files(&l)?;
                    }
                    crate::fs::fsync_dir_with(&*self.fs, &self.dir)
                };
                let recovered = self.recover_segment(&seg, ls_checkpoint, &mut delete_later);
                if !cascaded.is_empty() {
                    let first = seg.read_next_offset()?;
                    for end in cascaded {
                        self.stats.note_truncated(first, end);
                    }
                }
                let truncated = match recovered {
                    Ok(n) => n,
                    Err(e @ SegmentError::OffsetOverflow { .. }) => return Err(e),
                    Err(SegmentError::Index(index_core::IndexError::InvalidOffset { .. })) => {
                        tracing::warn!(
                            segment = seg.base_offset(),
                            "invalid offset during recovery; emptying the segment"
                        );
                        seg.truncate_to(seg.base_offset())?
                    }
                    Err(e) => return Err(e),
                };
                if truncated == 0 {
                    self.resolve_overlap(&seg)?;
                }
                seg.flush()?;
                if truncated == 0 {
                    self.unload_if_inactive(&seg)?;
                }
                if truncated > 0 {
                    for later in self.segments.higher_segments(seg.base_offset()) {
                        let end = later.read_next_offset().ok();
                        let first = seg.read_next_offset()?;
                        self.stats.note_truncated(first, end);
                        tracing::warn!(
                            segment = later.base_offset(),
                            "deleting segment after a truncated one"
                        );
                        self.delete_segment_files(&later)?;
                    }
                    break;
                }
            }
        }
        if let Some(last) = self.segments.last_segment() {
            if last.read_next_offset()? < ls_checkpoint {
                for s in self.segments.values() {
                    self.delete_segment_files(&s)?;
                }
            }
        }
        if self.segments.is_empty() {
            let start = ls_checkpoint.max(0);
            let seg = self.open_segment(start, false, "")?;
            self.segments.add(Arc::new(seg));
        }
        {
            // The clean-shutdown checkpoint is the log end at close, and offsets below
            // any recovery point were flushed: offsets below it were handed out. If
            // recovering a segment that failed the load check left the log end below it,
            // start a new segment there rather than reuse those offsets.
            //
            // Only after a clean shutdown: after a crash, a segment cut below the recovery
            // point lowers the log end exactly as Kafka's recovery does, which
            // `cargo xtask kafka`'s k1-crash compares byte for byte (its cut tails).
            //
            // Only when this open cut records (a truncated tail or segment): with nothing
            // cut, every record the files held is still there, so a checkpoint above the
            // log end lies, and it is lowered to the log end as Kafka does, never trusted
            // with a gap (or, at `i64::MAX`, a log that can take no append).
            let active = self.segments.active_segment()?;
            let leo = active.read_next_offset()?;
            let cut = self.stats.bytes_truncated.load(Ordering::Relaxed) > 0
                || self.stats.first_truncated_offset.load(Ordering::Relaxed) >= 0;
            if leo < rp_checkpoint && !cut {
                tracing::warn!(dir = %self.dir.display(), log_end_offset = leo, recovery_point = rp_checkpoint, "the recovery-point checkpoint is above every record and recovery cut none; lowering it to the log end");
            }
            if clean && leo < rp_checkpoint && cut && rp_checkpoint < i64::MAX {
                tracing::warn!(dir = %self.dir.display(), log_end_offset = leo, recovery_point = rp_checkpoint, "recovery left the log end below the clean-shutdown log end; rolling a segment there so that no offset is reused");
                active.on_become_inactive_segment()?;
                let seg = self.open_segment(rp_checkpoint, false, "")?;
                self.segments.add(Arc::new(seg));
                self.stats.rolls.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Kafka resizes the active segment's indexes here (kafka-behaviour §10 step 7). We defer it to
        // the first append/roll (`ensure_active_ready`) so that opening a cleanly shut down
        // log rewrites no index file (field case B3) — an empty active segment with 0-byte indexes is
        // still never rolled onto itself (field case B4).
        let active = self.segments.active_segment()?;
        let leo = active.read_next_offset()?;
        self.log_end_offset.store(leo, Ordering::Release);
        let first = self.segments.first_segment_base_offset().unwrap_or(0);
        self.log_start_offset.store(
            ls_checkpoint.max(first).min(leo.max(first)),
            Ordering::Release,
        );
        // Everything below the log end offset is now on disk (recovered segments were
        // flushed, the rest was below the checkpoint or cleanly shut down), so the
        // recovery point is the log end.
        let rp = leo;
        // Rewritten only if it changed: opening a log whose checkpoint already holds the
        // recovery point (a clean shutdown) writes nothing, so it opens on a full disk
        // (`docs/kafka-behaviour.md#deferred-snapshots`).
        if recovery_point_on_disk != Some(rp) {
            self.checkpoint(RECOVERY_POINT_FILE, rp)?;
        }
        self.recovery_point.store(rp, Ordering::Release);
        Ok(())
    }

    /// Offsets must increase across a segment boundary. When `seg` holds offsets at or
    /// above the next segment's base offset: a next segment that holds nothing is
    /// removed (valid records are never cut to make room for an empty file), and the
    /// search goes on with the one after it; otherwise the part of `seg` from the next
    /// segment's base offset on is cut (the later segment wins, its batches were
    /// written later). Both are reported in [`LogStats`].
    fn resolve_overlap(&self, seg: &Arc<LogSegment<F>>) -> Result<()> {
        while let Some(next) = self.segments.higher_segment(seg.base_offset()) {
            let end = seg.read_next_offset()?;
            if end <= next.base_offset() {
                return Ok(());
            }
            if next.size() == 0 {
                tracing::warn!(
                    segment = seg.base_offset(),
                    next = next.base_offset(),
                    end,
                    "removing an empty segment that lies inside the previous one"
                );
                self.stats
                    .empty_overlapping_segments_removed
                    .fetch_add(1, Ordering::Relaxed);
                self.delete_segment_files(&next)?;
                continue;
            }
            let n = seg.truncate_to(next.base_offset())?;
            tracing::warn!(
                segment = seg.base_offset(),
                truncated = n,
                next = next.base_offset(),
                "truncated the part of a segment that overlaps the next one"
            );
            self.stats.bytes_truncated.fetch_add(n, Ordering::Relaxed);
            self.stats
                .overlaps
                .lock()
                .push((seg.base_offset(), next.base_offset()..end));
            return Ok(());
        }
        Ok(())
    }

    /// Drops the index mappings of a segment that is not the last one (recovery maps
    /// every segment it scans; without this an unclean open of a log with thousands of
    /// segments would leave all their indexes mapped, field case B17).
    fn unload_if_inactive(&self, seg: &Arc<LogSegment<F>>) -> Result<()> {
        if self.segments.higher_segment(seg.base_offset()).is_some() {
            seg.unload_indexes()?;
        }
        Ok(())
    }

    /// Kafka's `removeAndDeleteSegments`: takes `seg` out of the map, renames its files to
    /// `.deleted` and schedules their removal after `file.delete.delay.ms` (see
    /// [`deleter`](crate::deleter)). Callers publish the new log start / log end offset
    /// first and hold a [structural change](LogSegments) open around the call, so that a
    /// reader never answers from a segment that left the map under it
    /// (`docs/kafka-behaviour.md#concurrent-reads`).
    fn delete_segment_files(&self, seg: &Arc<LogSegment<F>>) -> Result<()> {
        let _change = self.segments.begin_change();
        self.segments.remove(seg.base_offset());
        seg.change_file_suffixes("", DELETED_FILE_SUFFIX)?;
        self.stats.segments_deleted.fetch_add(1, Ordering::Relaxed);
        self.deleter.schedule(seg.clone())
    }

    /// Removes the files of the deleted segments whose `file.delete.delay.ms` has passed
    /// (Kafka's scheduled `deleteSegmentFiles`); returns how many segments' files were
    /// removed. Every maintenance call of the log (retention, `delete_records`, flush,
    /// truncation) runs it first; call it yourself, e.g. from a timer, to remove files
    /// without other maintenance. See [`deleter`](crate::deleter).
    ///
    /// # Errors
    /// I/O; the segments that could not be removed stay scheduled.
    pub fn delete_expired_segment_files(&self) -> Result<usize> {
        self.deleter.delete_expired()
    }

    /// Number of deleted segments whose files wait for `file.delete.delay.ms` (still on
    /// disk with the `.deleted` suffix).
    pub fn pending_segment_deletions(&self) -> usize {
        self.deleter.pending()
    }

    /// The lock file this log holds exclusively while it is open (`<dir>/.lock`, see
    /// [`DirLock`]).
    pub fn lock_file(&self) -> &Path {
        self.dir_lock.path()
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    /// Instrumentation counters.
    pub fn stats(&self) -> &LogStats {
        &self.stats
    }

    /// The segments.
    pub fn segments(&self) -> &LogSegments<F> {
        &self.segments
    }

    /// The leader-epoch cache (`(epoch, start offset)` pairs, oldest first): loaded from
    /// `leader-epoch-checkpoint`, extended by recovery and by appends, truncated with the
    /// log (Kafka's `LeaderEpochFileCache`).
    pub fn leader_epochs(&self) -> Vec<(i32, i64)> {
        self.epoch_cache.lock().entries().to_vec()
    }

    /// The next offset to be appended: the last offset of the last batch plus one (the
    /// base offset of the log while it is empty). The base offset to give the next batch.
    pub fn log_end_offset(&self) -> i64 {
        self.log_end_offset.load(Ordering::Acquire)
    }

    /// The first offset readable.
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset.load(Ordering::Acquire)
    }

    /// Offset below which everything is flushed (and checkpointed).
    pub fn recovery_point(&self) -> i64 {
        self.recovery_point.load(Ordering::Acquire)
    }

    /// Total size of all segments, bytes.
    pub fn size(&self) -> u64 {
        self.segments.size_in_bytes()
    }

    /// Appends whole batches carrying their own offsets (as a follower does: offsets are
    /// not assigned). `records` is one or more complete batches of format `F`, back to
    /// back. The batches are framed and CRC-validated with `F` ([`BatchFormat::peek_size`],
    /// [`BatchFormat::parse_header`], [`BatchFormat::validate`]); the first batch must
    /// start at or after the log end offset and every batch after the previous one. To
    /// append at the end, encode [`log_end_offset`](Self::log_end_offset) as the base
    /// offset; two threads doing this concurrently race, and the loser gets
    /// [`SegmentError::NonMonotonicOffset`] (nothing appended), so serialise appenders or
    /// retry. Writes are not fsynced (see [`flush`](Self::flush)).
    ///
    /// Rolls a new segment first when [`LogSegment::should_roll`] says so, at base
    /// `max(first offset, log end offset)`; an empty active segment is reused instead of
    /// rolling onto its own base offset (field case B4).
    ///
    /// Offsets are never reused: a batch below the log end offset is refused, also when the
    /// log is empty because its log start moved past the old end (a `log-start-offset`
    /// checkpoint beyond the log end, or [`delete_records`](Self::delete_records) at the
    /// end). The one exception is Kafka's follower rule (B18c): an empty log accepts a
    /// batch that starts below its end but **reaches** it (last offset ≥ log end, as after
    /// `deleteRecords` into the middle of a batch) by restarting at the batch's base
    /// offset; the log start offset stays where it was.
    ///
    /// # Errors
    /// [`SegmentError::InvalidInput`] if `F` rejects a batch of the input: an impossible
    /// size, an unreadable header or a failed [`validate`](BatchFormat::validate) (not a
    /// corruption of the log: [`is_corruption`](SegmentError::is_corruption) is `false`);
    /// [`SegmentError::InvalidArgument`] for empty input, bytes
    /// after the last complete batch (including an incomplete last batch) or a batch whose
    /// last offset is below its base offset; [`SegmentError::NonMonotonicOffset`]; I/O and
    /// index errors; [`SegmentError::IllegalState`] if the log is offline. Nothing is appended on error
    /// (a failed write leaves the logical size unchanged; a torn partial write past it is
    /// overwritten by the next append or truncated by recovery).
    pub fn append(&self, records: &[u8]) -> Result<AppendInfo> {
        let _g = self.lock.lock();
        self.check_online()?;
        let mut first = None;
        let mut last = i64::MIN;
        let mut max_ts = -1i64;
        let mut max_ts_off = -1i64;
        let mut batches = 0usize;
        let mut parsed = Vec::new();
        let mut it = format::scan::<F>(records, 0);
        for b in &mut it {
            let b = b.map_err(|source| SegmentError::InvalidInput { source })?;
            F::validate(b.bytes, b.info.position)
                .map_err(|source| SegmentError::InvalidInput { source })?;
            // `last` starts at i64::MIN, so the first batch always passes.
            if b.info.base_offset <= last {
                return Err(SegmentError::NonMonotonicOffset {
                    path: self.dir.clone(),
                    expected_at_least: last + 1,
                    found: b.info.base_offset,
                });
            }
            if b.info.last_offset < b.info.base_offset {
                return Err(SegmentError::arg(format!(
                    "batch at position {} has last offset {} below its base offset {}",
                    b.info.position, b.info.last_offset, b.info.base_offset
                )));
            }
            if b.info.last_offset == i64::MAX {
                // The log end offset after it (last offset + 1) would not be representable.
                return Err(SegmentError::arg(format!(
                    "batch at position {} has last offset {}: the log end offset after it \
                     would overflow",
                    b.info.position,
                    i64::MAX
                )));
            }
            first.get_or_insert(b.info.base_offset);
            last = b.info.last_offset;
            if b.info.max_timestamp > max_ts {
                max_ts = b.info.max_timestamp;
                max_ts_off = b.info.offset_of_max_timestamp;
            }
            batches += 1;
            let marker = Self::parse_marker(b.bytes, &b.info)?;
            parsed.push(pstate::AppendedBatch {
                info: b.info,
                marker,
            });
        }
        if it.position() != records.len() as u64 {
            return Err(SegmentError::arg(format!(
                "{} trailing bytes after the last complete batch",
                records.len() as u64 - it.position()
            )));
        }
        let Some(first) = first else {
            return Err(SegmentError::arg("no batch to append"));
        };
        let mut leo = self.log_end_offset();
        if first < leo {
            if self.size() == 0 && last >= leo {
                // Kafka's follower rule (B18c): an empty log accepts a batch that reaches its
                // end by restarting at the batch's base. Offsets never go back: the log start
                // stays where it was, and the offsets below it stay hidden.
                let start = self.log_start_offset().max(first);
                self.restart_at_locked(first, start)?;
                leo = first;
            } else {
                return Err(SegmentError::NonMonotonicOffset {
                    path: self.dir.clone(),
                    expected_at_least: leo,
                    found: first,
                });
            }
        }
        let mut active = self.segments.active_segment()?;
        if !self.active_ready.swap(true, Ordering::AcqRel) {
            active.resize_indexes(self.config.max_index_size)?;
        }
        let params = RollParams {
            max_segment_ms: self.config.segment_ms,
            max_segment_bytes: self.config.segment_bytes,
            max_timestamp_in_messages: max_ts,
            max_offset_in_messages: last,
            messages_size: records.len() as u64,
            now: self.clock.milliseconds(),
        };
        if active.should_roll(&params)? {
            active = self.roll_locked(first.max(leo))?;
        }
        active.append(last, max_ts, max_ts_off, records)?;
        self.log_end_offset.store(last + 1, Ordering::Release);
        self.update_state_after_append(&active, &parsed, last)?;
        Ok(AppendInfo {
            first_offset: first,
            last_offset: last,
            max_timestamp: max_ts,
            offset_of_max_timestamp: max_ts_off,
            size: records.len() as u64,
            batches,
            segment_base_offset: active.base_offset(),
        })
    }

    /// Rolls a new active segment at `new_base` (the log end offset if `None`) unless the
    /// active segment is empty with that base (then it is reused, its indexes re-grown).
    ///
    /// A roll is not a structural change for readers (it only adds an empty segment), so
    /// concurrent [`read`](Self::read)s never wait for it.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `new_base` is below the log end offset (Kafka
    /// silently rolls at the log end instead; a base below it would hide the offsets in
    /// between) or if the base, given or the log end for `None`, is `i64::MAX` (no batch
    /// could follow);
    /// [`SegmentError::IllegalState`] if a non-empty segment with that base exists; I/O.
    pub fn roll(&self, new_base: Option<i64>) -> Result<Arc<LogSegment<F>>> {
        let _g = self.lock.lock();
        self.check_online()?;
        let leo = self.log_end_offset();
        // `None` rolls at the log end, which is checked as a given base would be: at
        // `i64::MAX` the new segment could never take a batch.
        let base = new_base.unwrap_or(leo);
        crate::validate::check_roll_base(base, leo)?;
        self.roll_locked(base)
    }

    fn roll_locked(&self, new_base: i64) -> Result<Arc<LogSegment<F>>> {
        let active = self.segments.active_segment()?;
        if active.base_offset() == new_base && active.size() == 0 {
            // field case B4: never roll onto the base of the empty active segment; make it usable.
            active.resize_indexes(self.config.max_index_size)?;
            return Ok(active);
        }
        if let Some(existing) = self.segments.get(new_base) {
            return Err(SegmentError::IllegalState {
                path: existing.log_path(),
                reason: format!(
                    "trying to roll a new log segment with start offset {new_base} while it already exists"
                ),
            });
        }
        if new_base < active.base_offset() {
            return Err(SegmentError::IllegalState {
                path: active.log_path(),
                reason: format!(
                    "cannot roll to {new_base}, below the active segment's base {}",
                    active.base_offset()
                ),
            });
        }
        for kind in names::FileKind::ALL {
            let p = names::segment_file(&self.dir, new_base, kind, "");
            if self.remove_if_exists(&p)? {
                tracing::warn!(file = %p.display(), "deleted a pre-existing file with the new segment's name");
            }
        }
        active.on_become_inactive_segment()?;
        // The final time-index entry and the trims just written must be durable before
        // anything trusts them: below the recovery point the next open does not recover
        // this segment, and an unsynced trim can persist without the entry it keeps
        // (a zero entry, a largest timestamp of 0: found by `cargo xtask crash`,
        // invariant 3). Kafka flushes the rolled segment too, in the background.
        if self.recovery_point() > active.base_offset() {
            // A failure to open a file refuses the roll before anything changed.
            self.offline_unless_open_failure("the flush of a rolled segment", active.flush())?;
        }
        let seg = Arc::new(self.open_segment(new_base, false, "")?);
        self.segments.add(seg.clone());
        self.active_ready.store(true, Ordering::Release);
        self.stats.rolls.fetch_add(1, Ordering::Relaxed);
        self.snapshot_on_roll(new_base)?;
        tracing::info!(dir = %self.dir.display(), new_base, "rolled new log segment");
        Ok(seg)
    }

    /// Reads up to `max_bytes` (at least one whole batch) from the batch holding `offset`,
    /// across segments (Kafka: `floorSegment`, then `higherSegment` while a segment has
    /// nothing at or after the offset). Reading at the log end returns empty records.
    ///
    /// [`FetchDataInfo::records`] holds the stored bytes of format `F`, unchanged and
    /// unchecked (no [`validate`](BatchFormat::validate)): they start at the first byte of
    /// the batch holding `offset` (which may start before `offset`: skip the records
    /// below it), come from one segment only, and may end in the middle of a batch when
    /// `max_bytes` cuts one. Walk them with [`format::scan`], which
    /// yields the complete batches and ignores a cut one; to read on, call again from the
    /// last offset read plus one.
    ///
    /// # Under concurrent changes (`docs/kafka-behaviour.md#concurrent-reads`)
    ///
    /// Reads take no lock and may run concurrently with every other call. Whatever runs
    /// concurrently — appends, [`roll`](Self::roll), [`truncate_to`](Self::truncate_to),
    /// retention ([`delete_old_segments`](Self::delete_old_segments)),
    /// [`delete_records`](Self::delete_records),
    /// [`truncate_fully_and_start_at`](Self::truncate_fully_and_start_at) — a read of
    /// offset `o` answers as the log was at one moment during the call, with exactly one
    /// of:
    ///
    /// * bytes whose first batch **contains** `o`;
    /// * bytes whose first batch is the first one **above** `o`, only where the log has a
    ///   gap at `o` (no batch holds it, as after a roll at a base above the log end);
    /// * empty records, only where no batch is at or above `o` (`o` is the log end, or in
    ///   a gap that reaches it, as after a truncation into a gap);
    /// * [`SegmentError::OffsetOutOfRange`], only where `o` is below the log start or
    ///   above the log end.
    ///
    /// It never returns a later batch past data that exists, an empty fetch inside the
    /// log, or an error caused by the concurrent change (an I/O error of a segment that was
    /// truncated or deleted under it, `Index(Closed)`, `SegmentDeleted`). The protocol: a
    /// change that removes data (a segment leaving the map, a truncation) first publishes
    /// the new bounds (the log start raised, the log end lowered), and runs as a
    /// *structural change* of the segment map's generation (a seqlock, see
    /// [`LogSegments`]); a read makes its pass over the bounds and the segments without a
    /// lock and keeps its answer only if the generation was even and unchanged from the
    /// start of the pass to its end, else it makes the pass again (a read that starts
    /// during a change waits for it, spinning then yielding: the change is a bounded
    /// amount of work with no fsync). Appends and rolls are not structural: they only add
    /// data, so a read never waits for them. [`close`](Self::close) takes the log by
    /// value, so no read through the log overlaps it; a reader that holds an
    /// `Arc<LogSegment>` from [`segments`](Self::segments) gets the batch or a typed
    /// "segment gone" error after the close.
    ///
    /// # Errors
    /// [`SegmentError::OffsetOutOfRange`] outside `[log_start_offset, log_end_offset]`
    /// (with the bounds of the moment the read answers for); format and I/O errors of the
    /// data itself; [`SegmentError::IllegalState`] if the segment files changed behind the
    /// log's back (a stable pass found a first batch below `offset`, which only another
    /// process writing the directory can cause).
    pub fn read(&self, offset: i64, max_bytes: u64) -> Result<FetchDataInfo> {
        loop {
            let seen = self.segments.stable_generation();
            let found = self.read_pass(offset, max_bytes);
            if self.segments.is_generation(seen) {
                return found;
            }
            // A structural change began or ended during the pass: its answer may mix the
            // log before and after it. Look again.
        }
    }

    /// One lock-free pass of [`read`](Self::read): the bounds, then the segments. Valid only
    /// if the generation did not change meanwhile.
    fn read_pass(&self, offset: i64, max_bytes: u64) -> Result<FetchDataInfo> {
        self.check_in_range(offset)?;
        let Some(info) = self.read_from_segments(offset, max_bytes)? else {
            let active = self.segments.active_segment()?;
            return Ok(FetchDataInfo {
                fetch_offset_metadata: LogOffsetMetadata {
                    message_offset: offset,
                    segment_base_offset: active.base_offset(),
                    relative_position_in_segment: active.size(),
                },
                records: Vec::new(),
                first_entry_incomplete: false,
            });
        };
        // The first batch must reach `offset` (the segment's search guarantees it; a batch
        // below it means the bytes changed between the search and the read).
        if let Some(Ok(first)) = format::scan::<F>(&info.records, 0).next() {
            if first.info.last_offset < offset {
                return Err(SegmentError::IllegalState {
                    path: self.dir.clone(),
                    reason: format!(
                        "read({offset}) in segment {} found batch {}..={} below the offset: \
                         the segment files changed behind the log (another process writing \
                         the directory?); reopen the log to recover them",
                        info.fetch_offset_metadata.segment_base_offset,
                        first.info.base_offset,
                        first.info.last_offset
                    ),
                });
            }
        }
        Ok(info)
    }

    fn check_in_range(&self, offset: i64) -> Result<()> {
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        if offset < start || offset > leo {
            return Err(SegmentError::OffsetOutOfRange {
                path: self.dir.clone(),
                offset,
                log_start_offset: start,
                log_end_offset: leo,
            });
        }
        Ok(())
    }

    /// The segments' part of a read pass: the floor segment of `offset`, then the higher
    /// ones while a segment has nothing at or after it. `None` if none has.
    ///
    /// An answer from a later segment is kept only if every segment passed over still has
    /// the size it had when it was searched: a segment passed over may have been the
    /// active one, and an append to it followed by a roll (neither is a structural change)
    /// would otherwise let the answer skip the batch that now holds `offset` (a read at
    /// the log end answering with the batch after the one appended there). Sizes only grow
    /// between structural changes, so an unchanged size is unchanged content.
    fn read_from_segments(&self, offset: i64, max_bytes: u64) -> Result<Option<FetchDataInfo>> {
        'pass: loop {
            let mut passed: Vec<(Arc<LogSegment<F>>, u64)> = Vec::new();
            let mut seg = self.segments.floor_segment(offset);
            while let Some(s) = seg {
                let size = s.size();
                if let Some(info) = s.read(offset, max_bytes, Some(size), true)? {
                    if passed.iter().any(|(p, was)| p.size() != *was) {
                        continue 'pass;
                    }
                    return Ok(Some(info));
                }
                seg = self.segments.higher_segment(s.base_offset());
                passed.push((s, size));
            }
            return Ok(None);
        }
    }

    /// Kafka's `fetchOffsetByTimestamp` for a real timestamp: the first record at or after
    /// `timestamp` (ms since epoch) with offset ≥ the log start offset. Segments are tried
    /// in order, starting with the first whose largest record timestamp reaches the
    /// target; unlike Kafka, a segment whose search finds nothing does not end the search.
    /// `None` if no record is that late.
    ///
    /// Within a batch the answer is [`BatchFormat::search_timestamp`]'s: the exact record
    /// for Kafka's format, the batch's first offset for a format that keeps the default.
    ///
    /// # Errors
    /// Index, format and I/O errors.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<TimestampAndOffset>> {
        let start = self.log_start_offset();
        for s in self.segments.values() {
            let found = (|| {
                match s.largest_record_timestamp()? {
                    Some(t) if t >= timestamp => {}
                    _ => return Ok(None),
                }
                s.find_offset_by_timestamp(timestamp, start)
            })();
            match found {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => {}
                // Deleted under us by retention: its offsets are below the log start now.
                Err(_) if s.is_deleted() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Removes every offset ≥ `offset` (Kafka's `truncateTo`, field case B18): segments with a base
    /// above `offset` are deleted, the segment holding it is truncated (at the start of the
    /// batch holding `offset`) and becomes the active segment with re-grown indexes. A
    /// target below the log start offset empties the log and restarts it there.
    /// Returns whether anything was truncated.
    ///
    /// Under concurrent readers: the log end is lowered to `offset` (published) before any
    /// segment leaves the map or is truncated, and the removal and truncation run as one
    /// structural change (see [`read`](Self::read) and
    /// `docs/kafka-behaviour.md#concurrent-reads`), so a read answers from the log before
    /// or after the truncation, never from a mix.
    ///
    /// # Errors
    /// Index, format and I/O errors. A failure after the lowered log end was published
    /// leaves the segments in an unknown state: the log goes **offline**
    /// ([`is_offline`](Self::is_offline)) and the next open recovers it.
    pub fn truncate_to(&self, offset: i64) -> Result<bool> {
        let _g = self.lock.lock();
        self.check_online()?;
        if offset < 0 {
            return Err(SegmentError::arg(format!(
                "cannot truncate to negative offset {offset}"
            )));
        }
        if offset >= self.log_end_offset() {
            return Ok(false);
        }
        if offset < self.log_start_offset() {
            self.restart_at_locked(offset, offset)?;
            return Ok(true);
        }
        self.deleter.delete_expired()?;
        let leo = {
            let change = self.segments.begin_change();
            // Publish the lowered end first: from here every offset at or above `offset` is
            // out of range (the end only moves further down below).
            self.log_end_offset.store(offset, Ordering::Release);
            let truncated = self.truncate_segments_locked(offset);
            let leo = match truncated {
                Ok(leo) => leo,
                Err(e) => return Err(self.fail_structural_change("truncate_to", e)),
            };
            let start = self.log_start_offset();
            if leo < start {
                // What is left ends below the log start (the segments had a gap there): no
                // offset at or above the start exists any more, so the log is empty from its
                // start on and restarts there; the log end never goes below the log start.
                // Until then the log is `[start, start]`: empty, never a hole.
                self.log_end_offset.store(start, Ordering::Release);
                drop(change);
                self.restart_at_locked(start, start)?;
                return Ok(true);
            }
            self.log_end_offset.store(leo, Ordering::Release);
            leo
        };
        if self.recovery_point() > leo {
            self.recovery_point.store(leo, Ordering::Release);
            // The cut must be durable before a checkpoint says so: unlike Kafka, fsync
            // first (docs/kafka-behaviour.md#truncate-fsync).
            let active = self.segments.active_segment()?;
            self.sync_before_checkpoint(&active)?;
            self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        }
        self.state_after_truncate_to(leo)?;
        Ok(true)
    }

    /// `truncate_to`'s removal of the segments above `offset` and truncation of the one
    /// holding it (which becomes the active segment); returns the next offset after what
    /// is left. Inside a structural change.
    fn truncate_segments_locked(&self, offset: i64) -> Result<i64> {
        // Highest first: a power cut between two removals then leaves a prefix of the log,
        // never a hole whose lost batches (a transaction's marker, say) the producer
        // snapshots above it still count (docs/kafka-behaviour.md#crash-persistence-model).
        for s in self.segments.values().into_iter().rev() {
            if s.base_offset() > offset {
                self.delete_segment_files(&s)?;
            }
        }
        let active = self.segments.active_segment()?;
        active.truncate_to(offset)?;
        self.active_ready.store(true, Ordering::Release);
        active.read_next_offset()
    }

    /// A structural change failed after it published new bounds: the map and the files
    /// may hold any part of it, so nothing more is written (the log goes offline, as
    /// after a failed fsync) and the next open recovers. Returns `e`.
    fn fail_structural_change(&self, what: &str, e: SegmentError) -> SegmentError {
        tracing::error!(dir = %self.dir.display(), error = %e, op = what, "structural change failed; the log is now offline");
        self.go_offline(format!("{what} failed inside its structural change (the map and the files may hold any part of it)"));
        e
    }

    /// Deletes every segment and starts an empty log at `new_offset` (Kafka's
    /// `truncateFullyAndStartAt`).
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `new_offset` is negative, below the log start
    /// offset (offsets already handed out would be reused) or `i64::MAX` (no batch could
    /// be appended); I/O.
    pub fn truncate_fully_and_start_at(&self, new_offset: i64) -> Result<()> {
        let _g = self.lock.lock();
        self.check_online()?;
        crate::validate::check_start_at(new_offset, self.log_start_offset())?;
        self.restart_at_locked(new_offset, new_offset)
    }

    /// Deletes every segment and starts an empty log at log end `new_offset` with log
    /// start `log_start` (≥ `new_offset`; above it only for the follower restart of
    /// [`append`](Self::append), which keeps the old log start).
    ///
    /// Under concurrent readers: the new bounds are published first (a log start raised,
    /// a log end lowered) and the removal of every segment and the creation of the new one
    /// run as one structural change (`docs/kafka-behaviour.md#concurrent-reads`): no read
    /// meets the empty map. A failure inside it takes the log offline.
    fn restart_at_locked(&self, new_offset: i64, log_start: i64) -> Result<()> {
        self.deleter.delete_expired()?;
        {
            let _change = self.segments.begin_change();
            // Publish first: from here every offset below the new start or above the new end
            // is out of range.
            if log_start > self.log_start_offset() {
                self.log_start_offset.store(log_start, Ordering::Release);
            }
            if new_offset < self.log_end_offset() {
                self.log_end_offset.store(new_offset, Ordering::Release);
            }
            let replaced = (|| {
                for s in &self.segments.values() {
                    self.delete_segment_files(s)?;
                }
                let seg = Arc::new(self.open_segment(new_offset, false, "")?);
                self.segments.add(seg);
                Ok(())
            })();
            if let Err(e) = replaced {
                return Err(self.fail_structural_change("restart", e));
            }
            self.log_end_offset.store(new_offset, Ordering::Release);
            self.log_start_offset.store(log_start, Ordering::Release);
        }
        self.recovery_point.store(new_offset, Ordering::Release);
        self.checkpoint(LOG_START_OFFSET_FILE, log_start)?;
        self.checkpoint(RECOVERY_POINT_FILE, new_offset)?;
        self.state_after_truncate_fully(new_offset)
    }

    /// Raises the log start offset to `offset` (Kafka's `deleteRecords` /
    /// `maybeIncrementLogStartOffset`) and persists it; segments wholly below it are
    /// removed by the next [`delete_old_segments`](Self::delete_old_segments). Returns the
    /// new log start offset.
    ///
    /// # Errors
    /// [`SegmentError::IllegalState`] if the log is offline (nothing is deleted or written).
    /// [`SegmentError::OffsetOutOfRange`] if `offset` is beyond the log end; I/O.
    pub fn increment_log_start_offset(&self, offset: i64) -> Result<i64> {
        let _g = self.lock.lock();
        self.check_online()?;
        let leo = self.log_end_offset();
        if offset > leo {
            return Err(SegmentError::OffsetOutOfRange {
                path: self.dir.clone(),
                offset,
                log_start_offset: self.log_start_offset(),
                log_end_offset: leo,
            });
        }
        let cur = self.log_start_offset();
        if offset > cur {
            self.log_start_offset.store(offset, Ordering::Release);
            self.checkpoint(LOG_START_OFFSET_FILE, offset)?;
            self.state_after_log_start_incremented(offset)?;
        }
        Ok(self.log_start_offset())
    }

    /// Alias of [`increment_log_start_offset`](Self::increment_log_start_offset) followed by
    /// [`delete_old_segments`](Self::delete_old_segments) (AdminClient `deleteRecords`).
    ///
    /// # Errors
    /// As both.
    pub fn delete_records(&self, offset: i64) -> Result<i64> {
        self.increment_log_start_offset(offset)?;
        self.delete_old_segments()?;
        Ok(self.log_start_offset())
    }

    /// Kafka's retention (`deleteOldSegments`), applied only when called (the log never runs
    /// it by itself): deletes, in order, the longest prefix of
    /// segments that (a) are older than `retention.ms` (by
    /// [`LogSegment::largest_timestamp`], which falls back to the file mtime), then (b) make
    /// the log exceed `retention.bytes`, then (c) lie wholly below the log start offset
    /// (the next segment's base, or the log end for the last one, is at or below it).
    /// The prefix rule stops at the first segment that does not qualify (field case B8). An empty
    /// last segment is never deleted; when every segment qualifies a new empty active
    /// segment is rolled first. Returns the number of segments deleted.
    ///
    /// Under concurrent readers (Kafka's order): the log start offset moves to the first
    /// remaining base offset and is checkpointed (with the recovery point, raised to it if
    /// below) **before** any segment leaves the map, so a [`read`](Self::read) answers
    /// with data or [`SegmentError::OffsetOutOfRange`], never an empty fetch. The deleted
    /// segments are renamed `.deleted` and their files removed after
    /// [`LogConfig::file_delete_delay_ms`] (see [`deleter`](crate::deleter)); a reader
    /// that still holds one keeps reading it until then.
    ///
    /// # Errors
    /// [`SegmentError::IllegalState`] if the log is offline (nothing is deleted or written).
    /// I/O and index errors.
    pub fn delete_old_segments(&self) -> Result<usize> {
        let _g = self.lock.lock();
        self.check_online()?;
        self.deleter.delete_expired()?;
        let mut n = 0;
        if self.config.retention_ms >= 0 {
            let now = self.clock.milliseconds();
            let ms = self.config.retention_ms;
            n += self.delete_prefix(|s, _| Ok(now - s.largest_timestamp()? > ms))?;
        }
        if self.config.retention_bytes >= 0 {
            let mut diff = self.size() as i64 - self.config.retention_bytes;
            n += self.delete_prefix(|s, _| {
                if diff - s.size() as i64 >= 0 {
                    diff -= s.size() as i64;
                    Ok(true)
                } else {
                    Ok(false)
                }
            })?;
        }
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        // A segment lies wholly below the log start when the next one starts at or below
        // it; for the last segment the log end is that bound (`delete_records` at the log
        // end empties the log, which then restarts at its end).
        n += self.delete_prefix(|_, next| Ok(next.unwrap_or(leo) <= start))?;
        Ok(n)
    }

    fn delete_prefix(
        &self,
        mut pred: impl FnMut(&LogSegment<F>, Option<i64>) -> Result<bool>,
    ) -> Result<usize> {
        let segs = self.segments.values();
        let mut deletable = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let next = segs.get(i + 1).map(|n| n.base_offset());
            let last_and_empty = next.is_none() && s.size() == 0;
            if !last_and_empty && pred(s, next)? {
                deletable.push(s.clone());
            } else {
                break;
            }
        }
        if deletable.is_empty() {
            return Ok(0);
        }
        // The first segment that stays: the next one, or a new empty active segment at the
        // log end when every segment goes.
        let first_kept = match segs.get(deletable.len()) {
            Some(next) => next.base_offset(),
            None => self.roll_locked(self.log_end_offset())?.base_offset(),
        };
        // Kafka's order (`UnifiedLog.deleteSegments`): the new log start offset is published
        // and checkpointed before any segment leaves the map, so a reader sees either the
        // segment or an offset out of range, never a hole.
        if first_kept > self.log_start_offset() {
            self.log_start_offset.store(first_kept, Ordering::Release);
            self.checkpoint(LOG_START_OFFSET_FILE, first_kept)?;
            self.state_after_log_start_incremented(first_kept)?;
        }
        {
            // One structural change for the whole prefix: a reader's pass sees all of it or
            // none (`docs/kafka-behaviour.md#concurrent-reads`). The log start is already
            // above every offset it held, so a failure here leaves only a segment that is
            // out of range, not an unknown state.
            let _change = self.segments.begin_change();
            for s in &deletable {
                tracing::info!(segment = s.base_offset(), "deleting segment by retention");
                self.delete_segment_files(s)?;
            }
        }
        if self.recovery_point() < self.log_start_offset() {
            // Only once the segments below the new log start are durably gone (renamed
            // `.deleted`, directory fsynced): raised before, the checkpoint would make the
            // next open trust their unflushed files (found by `cargo xtask crash`,
            // invariant 3).
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
            let ls = self.log_start_offset();
            self.recovery_point.store(ls, Ordering::Release);
            self.checkpoint(RECOVERY_POINT_FILE, ls)?;
        }
        self.delete_snapshots_of(&deletable)?;
        Ok(deletable.len())
    }

    /// fsyncs every segment from the one holding the recovery point to the active one,
    /// then moves the recovery point to the log end offset and persists it (never before
    /// the data is on disk, field case B12).
    ///
    /// An I/O error while syncing takes the log **offline** ([`is_offline`](Self::is_offline)):
    /// after a failed fsync the kernel may have dropped the dirty pages and a retried fsync
    /// would succeed without them (the "fsyncgate" problem), so appends, rolls,
    /// truncations, flushes and [`close`](Self::close) fail from then on and the next open
    /// recovers from the last checkpoint. A failure to *open* a file or the directory for
    /// its fsync (`EMFILE`/`ENFILE`: no descriptor left, `ENOENT`, `EACCES`) is not a failed
    /// fsync: nothing was dropped, so the error is returned, the recovery point stays
    /// where it was, the log stays online and the next flush retries
    /// (`docs/kafka-behaviour.md#offline-rule`). A failed checkpoint write does not take the
    /// log offline either (the data is on disk; only the recovery point is not moved).
    ///
    /// # Errors
    /// I/O and index errors (the recovery point is then not moved);
    /// [`SegmentError::IllegalState`] if the log is offline.
    pub fn flush(&self) -> Result<()> {
        let _g = self.lock.lock();
        self.deleter.delete_expired()?;
        self.flush_locked()
    }

    /// fsyncs `seg` (its truncated `.log`, indexes and `.txnindex`) and the directory (the
    /// `.deleted` renames of the segments a truncation removed), for a checkpoint that is
    /// about to cover them. The offline rule of [`flush`](Self::flush) applies: a failed
    /// fsync takes the log offline, a failure to open a file does not.
    ///
    /// # Errors
    /// I/O and index errors.
    fn sync_before_checkpoint(&self, seg: &LogSegment<F>) -> Result<()> {
        let synced = seg
            .flush()
            .and_then(|()| crate::fs::fsync_dir_with(&*self.fs, &self.dir));
        self.offline_unless_open_failure("the fsync of a truncated segment", synced)
    }

    /// The offline rule (`docs/kafka-behaviour.md#offline-rule`) applied to the outcome of
    /// a sync: `Ok` passes; a failure to **open** a file ([`is_open_failure`]: nothing was
    /// synced through a failing descriptor, so no dirty page was dropped) is returned with
    /// the log left online, and a later flush retries; any other failure takes the log
    /// offline, because the state on disk is unknown (fsyncgate). `what` names the sync
    /// in the log's offline reason.
    ///
    /// # Errors
    /// The error of `synced`, unchanged.
    fn offline_unless_open_failure(&self, what: &str, synced: Result<()>) -> Result<()> {
        let Err(e) = synced else { return Ok(()) };
        if is_open_failure(&e) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "{what} could not open a file; the log stays online");
        } else {
            tracing::error!(dir = %self.dir.display(), error = %e, "{what} failed; the log is now offline");
            self.go_offline(format!("{what} failed"));
        }
        Err(e)
    }

    fn flush_locked(&self) -> Result<()> {
        self.check_online()?;
        let leo = self.log_end_offset();
        let rp = self.recovery_point();
        if crate::fs::mutated!(CheckpointBeforeData) {
            self.checkpoint(LOG_START_OFFSET_FILE, self.log_start_offset())?;
            self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        }
        let synced = (|| {
            for s in self.segments.values_range(rp, i64::MAX)? {
                s.flush()?;
            }
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)
        })();
        // On an open failure the recovery point is not moved, and a later flush retries.
        self.offline_unless_open_failure("a flush", synced)?;
        // Epochs an append could not checkpoint: durable before the recovery point moves
        // past their batches (a crash before this recovers them from the batches).
        self.write_pending_epochs()?;
        self.checkpoint(LOG_START_OFFSET_FILE, self.log_start_offset())?;
        self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        self.recovery_point.store(leo, Ordering::Release);
        Ok(())
    }

    /// Kafka's `collectAbortedTransactions`: aborted transactions with `last_offset ≥
    /// fetch_offset` and `first_offset < upper_bound_offset`, gathered from the segment
    /// holding `fetch_offset` onwards until an entry with `last_stable_offset ≥
    /// upper_bound_offset` is seen (field case B10).
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>> {
        let mut out = Vec::new();
        let mut seg = self
            .segments
            .floor_segment(fetch_offset)
            .or_else(|| self.segments.first_segment());
        while let Some(s) = seg {
            match s.collect_aborted_txns(fetch_offset, upper_bound_offset) {
                Ok(r) => {
                    out.extend(r.aborted_transactions);
                    if r.is_complete {
                        break;
                    }
                }
                // Deleted under us by retention: nothing of it is readable any more.
                Err(_) if s.is_deleted() => {}
                Err(e) => return Err(e),
            }
            seg = self.segments.higher_segment(s.base_offset());
        }
        Ok(out)
    }

    /// Flushes, writes the checkpoints, closes every segment and finally writes the
    /// clean-shutdown marker (fsyncing the directory). On any error no marker is written,
    /// so the next open recovers.
    ///
    /// # Errors
    /// The first failure.
    pub fn close(self) -> Result<()> {
        let _g = self.lock.lock();
        self.flush_locked()?;
        self.deleter.delete_all()?;
        self.snapshot_on_close()?;
        self.segments.close()?;
        let marker = self.dir.join(CLEAN_SHUTDOWN_FILE);
        self.fs
            .write_file(&marker, b"")
            .map_err(|e| SegmentError::io("create", &marker, e))?;
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)
    }

    /// Drops the log without flushing, trimming or writing the marker (a crash
    /// simulation, or Kafka's `closeHandlers` after a disk failure). Dropping a `Log`
    /// without calling [`close`](Self::close) has the same effect: the next
    /// [`open`](Self::open) recovers. Data already appended stays in the `.log` files
    /// (and the page cache) either way; only what was not written to disk by the OS
    /// before a machine crash can be lost.
    pub fn close_handlers(self) {
        self.segments.close_handlers();
    }
}
