//! [`Log`]: a partition directory of segments with Kafka's loader, recovery, append, roll,
//! read, truncation and retention (docs/kafka-behaviour.md#segment-roll, docs/kafka-behaviour.md#log-loading, docs/kafka-behaviour.md#segment-map).
//!
//! # Files in the directory
//!
//! Besides the segment files, a `Log` keeps these files of its own:
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
//! * `<offset>.snapshot` — Kafka's producer-state snapshots ([`crate::producer::snapshot`]), taken on
//!   roll (at the new segment's base offset), on close (at the log end offset) and after
//!   loading or truncation; recovery of a segment starts from the latest one at or below
//!   its base offset, so a transaction that began before it is still known. Retention
//!   deletes the snapshot of each deleted segment, truncation those above the new end.
//! * `leader-epoch-checkpoint` — Kafka's leader-epoch cache (version line, count line,
//!   `epoch start_offset` lines), rewritten whenever the cache changes; created empty
//!   (zero bytes) by an open that finds none, as Kafka's `CheckpointFile` does
//!   (docs/kafka-behaviour.md#leader-epoch-checkpoint-created).
//! * `.lock` — the directory lock ([`DirLock`]): [`Log::open`] locks it exclusively and
//!   records its process id in it; a second open, from this process or another, fails
//!   with [`SegmentError::DirLocked`](crate::SegmentError::DirLocked) until the log is closed or dropped (or its process
//!   dies). Read-only tools such as `dump-log` do not take it.
//!
//! A checkpoint that cannot be read (garbage, wrong version, not a regular file) is
//! warned about and treated as missing ([`crate::checkpoint`]), as Kafka does. A marker
//! that is not a regular file is not trusted (a FIFO or dangling symlink is removed and
//! the log recovered; a directory is [`SegmentError::NotARegularFile`](crate::SegmentError::NotARegularFile)).
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
//!
//! # Source layout
//!
//! The `Log` type is split by lifecycle over the files of this module, each adding an
//! `impl` block of its own:
//!
//! * `mod.rs` — the `Log` type, its counters and reports, and the small accessors;
//! * `options.rs` — [`LogOptions`]: the clock, file-system seam and format to open with;
//! * `leader.rs` — [`Log::append_as_leader`]: the leader append, offsets assigned
//!   (with the rules in [`crate::leader`]);
//! * `load.rs` — the loader behind [`Log::open`]: segments, checkpoints, recovery;
//! * `swap.rs` — `.cleaned`/`.swap` files: completing a replacement, splitting a segment;
//! * `bounds.rs` — [`LogBounds`]: the log start, log end, high watermark and last stable
//!   offset published together ([`Log::bounds`]);
//! * `append.rs` — [`Log::append`] and [`Log::roll`];
//! * `read.rs` — [`Log::read`], [`Log::read_with`] and [`Log::read_region`] (isolation
//!   bounds, zero-copy regions), [`Log::offset_for_timestamp`], aborted transactions;
//! * `watermark.rs` — the high watermark ([`Log::high_watermark`]) and the ListOffsets
//!   answers of [`Log::fetch_offset_by_timestamp`];
//! * `truncate.rs` — [`Log::truncate_to`] and [`Log::truncate_fully_and_start_at`];
//! * `clean.rs` — [`Log::clean`]: a round of the log cleaner, copy and swap
//!   ([`crate::clean`]);
//! * `retention.rs` — [`Log::delete_old_segments`], the log start offset, deleted files;
//! * `tier.rs` — the tier seam: [`Log::local_log_start_offset`],
//!   [`Log::delete_local_through`], the highest offset in remote storage;
//! * `flush.rs` — [`Log::flush`], [`Log::close`] and the offline rule;
//! * `pstate.rs` — the producer state and leader-epoch cache on each of these paths;
//! * `replay.rs` — [`rebuild_producer_state`]: the producer state replayed from the
//!   segments' batches.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::checkpoint::write_checkpoint;
use crate::config::LogConfig;
use crate::deleter::SegmentDeleter;
use crate::error::Result;
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::fs::FsRef;
use crate::lock::DirLock;
use crate::producer::{LeaderEpochCache, ProducerStateManager};
use crate::segment::{LogSegment, SegmentOptions};
use crate::segment_map::LogSegments;
use crate::time::Clock;

mod append;
mod bounds;
#[cfg(feature = "cleaner")]
mod clean;
#[cfg(feature = "cleaner")]
mod cleaner;
mod flush;
mod leader;
mod load;
mod local_retention;
mod options;
mod pstate;
mod read;
mod replay;
mod retention;
mod swap;
mod tier;
mod truncate;
mod watermark;

pub use bounds::LogBounds;
#[cfg(feature = "cleaner")]
pub use clean::CleanerStats;
#[cfg(feature = "cleaner")]
pub use cleaner::{Cleaner, CleanerError, CleanupPolicy};
pub use options::LogOptions;
pub use read::FetchIsolation;
pub use replay::rebuild_producer_state;
pub use watermark::ListedOffset;

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
    /// failed a load-time check (index order, or the consistency check [`Log::open`]
    /// makes before it trusts the marker or the recovery point) and were recovered from
    /// their `.log` (Kafka would have trusted them); and small segments whose index
    /// check, deferred to the indexes' first load, failed there and had their indexes
    /// rebuilt (`docs/kafka-behaviour.md#deferred-index-check`). Shared with those
    /// segments, hence the `Arc`.
    pub indexes_rebuilt: std::sync::Arc<AtomicU64>,
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
/// they replaced, also those the interrupted replacement had already renamed `.deleted`,
/// and which offsets are no longer in the log because of it, also for an empty swap
/// (`docs/kafka-behaviour.md#swap-refusal`). A cleaned segment legitimately holds fewer
/// records than the segments it replaces, none at all when every record was removed, so
/// removed offsets are not an error; a swap that Kafka's cleaner or split could not have
/// written (it fails validation, holds offsets outside the replaced segments, starts
/// inside a segment it does not replace, or replaces the log's last segment and drops
/// offsets of it) is refused instead ([`SegmentError::SwapRefused`](crate::SegmentError::SwapRefused)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwapReplacement {
    /// Base offsets of the `.log.swap` files completed (renamed to `.log`), increasing.
    pub swap_base_offsets: Vec<i64>,
    /// Base offsets of the segments whose files were deleted or overwritten: those
    /// with a base offset from the lowest swap base to the largest swap end (Kafka's
    /// rule), and those at a swap's own base offset, live or already renamed `.deleted`.
    /// Increasing.
    pub replaced_base_offsets: Vec<i64>,
    /// Those of [`replaced_base_offsets`](Self::replaced_base_offsets) whose files the
    /// interrupted replacement had already renamed `.deleted` (a crash in the middle of
    /// Kafka's `replaceSegments`). Increasing.
    pub deleted_base_offsets: Vec<i64>,
    /// The offsets the replaced segments (live and `.deleted`) held that the swaps do not
    /// hold, as increasing, disjoint `start..end` ranges (end exclusive), at batch
    /// granularity: an offset counts as held when a batch's `base..=last` spans it (read
    /// from the batch headers). At most [`MAX_REPORTED_SWAP_RANGES`] ranges.
    pub removed_offsets: Vec<std::ops::Range<i64>>,
    /// Ranges beyond [`MAX_REPORTED_SWAP_RANGES`] not listed in `removed_offsets`.
    pub removed_ranges_omitted: u64,
    /// Number of offsets in all removed ranges, listed or not.
    pub removed_offset_count: u64,
}

impl SwapReplacement {
    fn new(plan: crate::loader_plan::SwapPlan) -> Self {
        let removed_offset_count = plan.removed.iter().map(|&(s, e)| (e - s) as u64).sum();
        let omitted = plan.removed.len().saturating_sub(MAX_REPORTED_SWAP_RANGES) as u64;
        let mut replaced = plan.replaced;
        replaced.extend(&plan.replaced_deleted);
        replaced.sort_unstable();
        replaced.dedup();
        SwapReplacement {
            swap_base_offsets: plan.swap_bases,
            replaced_base_offsets: replaced,
            deleted_base_offsets: plan.replaced_deleted,
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
            indexes_rebuilt: std::sync::Arc::new(AtomicU64::new(0)),
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
/// [`format`](mod@crate::format) module docs).
///
/// Offsets are assigned by the caller with [`append`](Log::append), which stores batches
/// that carry their offsets (a follower's append), the next one starting at
/// [`log_end_offset`](Log::log_end_offset); or by the log with
/// [`append_as_leader`](Log::append_as_leader), Kafka's leader append with its produce
/// validation and idempotence.
/// [`read`](Log::read) returns the stored bytes of whole batches, which you decode with
/// your format ([`format::scan`](crate::format::scan)).
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
    /// The log start and end offsets, the caller's high watermark and the first unstable
    /// offset, published together (`docs/kafka-behaviour.md#one-moment-bounds`).
    bounds: bounds::Bounds,
    recovery_point: AtomicI64,
    lock: Mutex<()>,
    /// Held for a whole clean (one clean of a log at a time); the log's `lock` only while
    /// it plans, swaps a group in and writes its checkpoint, so appends go on meanwhile.
    #[cfg_attr(not(feature = "cleaner"), allow(dead_code))]
    clean_lock: Mutex<()>,
    stats: LogStats,
    epoch_cache: Mutex<LeaderEpochCache>,
    producer_state: Mutex<ProducerStateManager>,
    active_ready: std::sync::atomic::AtomicBool,
    /// Set when an append changed the leader-epoch cache but could not write
    /// `leader-epoch-checkpoint`: the next flush writes it before the recovery point moves
    /// (`docs/kafka-behaviour.md#offline-rule`).
    epochs_pending: std::sync::atomic::AtomicBool,
    fs: FsRef,
    /// Whether, and why, the log is offline: after a failed fsync the kernel may have
    /// dropped dirty pages, so a later successful fsync proves nothing; the log refuses
    /// further writes until it is reopened (and recovered).
    offline: flush::OfflineState,
    /// The exclusive lock on the directory, held until the log is closed or dropped.
    dir_lock: DirLock,
    /// Segments renamed `.deleted`, waiting for `file.delete.delay.ms`.
    deleter: SegmentDeleter<F>,
    /// Whether the high watermark is the caller's, and whether it is a bare offset (its
    /// value is in `bounds`).
    hw: watermark::HighWatermark,
    /// The local log start offset and the highest offset in remote storage (KIP-405).
    tier: tier::TierState,
    /// The caller's [`TierListener`](crate::tier::TierListener), set once by
    /// [`LogOptions::tier_listener`] after the open.
    tier_listener: std::sync::OnceLock<std::sync::Arc<dyn crate::tier::TierListener>>,
}

impl<F: BatchFormat> Log<F> {
    /// Tells the caller's [`TierListener`](crate::tier::TierListener), if any, of `event`
    /// (under the log's lock; `docs/kafka-behaviour.md#tier-events`).
    pub(super) fn tier_event(&self, event: crate::tier::TierEvent) {
        if let Some(l) = self.tier_listener.get() {
            l.on_event(event);
        }
    }

    fn open_segment(&self, base: i64, exists: bool, suffix: &str) -> Result<LogSegment<F>> {
        let options = if exists {
            SegmentOptions::existing()
        } else {
            SegmentOptions::new_segment(&self.config)
        };
        LogSegment::open(
            &self.dir,
            base,
            &self.config,
            options
                .suffix(suffix)
                .clock(self.clock.clone())
                .fs(self.fs.clone()),
        )
    }

    fn remove_if_exists(&self, path: &Path) -> Result<bool> {
        crate::fs::remove_if_exists_with(&*self.fs, path)
    }

    fn checkpoint(&self, name: &str, value: i64) -> Result<()> {
        write_checkpoint(&*self.fs, &self.dir.join(name), value)
    }

    fn check_online(&self) -> Result<()> {
        self.offline.check_online(&self.dir)
    }

    /// Takes the log offline for `why` (kept for the errors of every refused call).
    fn go_offline(&self, why: String) {
        self.offline.go_offline(why);
    }

    /// Whether a failed flush took the log offline (every later write, flush and
    /// [`close`](Self::close) then fails; reopening recovers from the last checkpoint).
    pub fn is_offline(&self) -> bool {
        self.offline.is_offline()
    }

    /// The file-system seam of this log.
    pub fn fs(&self) -> &FsRef {
        &self.fs
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
        self.bounds.log_end()
    }

    /// The first offset readable.
    pub fn log_start_offset(&self) -> i64 {
        self.bounds.log_start()
    }

    /// The log start offset, the log end offset, the high watermark and the last stable
    /// offset as of one moment: the values a fetch at that moment is bounded by. The
    /// separate getters may each answer for a different moment under concurrent changes;
    /// this one never mixes two (`docs/kafka-behaviour.md#one-moment-bounds`).
    pub fn bounds(&self) -> LogBounds {
        self.bounds.read(self.has_manual_high_watermark())
    }

    /// Begins a publication of new bounds (under the log's lock); see [`bounds`].
    fn publish(&self) -> bounds::Publication<'_> {
        self.bounds.publish(&self.producer_state)
    }

    /// Offset below which everything is flushed (and checkpointed).
    pub fn recovery_point(&self) -> i64 {
        self.recovery_point.load(Ordering::Acquire)
    }

    /// Total size of all segments, bytes.
    pub fn size(&self) -> u64 {
        self.segments.size_in_bytes()
    }
}
