//! The loader: what [`Log::open`] (through [`LogOptions::open`])
//! does to a partition directory before the log takes its first call — Kafka's
//! `LogLoader` (docs/kafka-behaviour.md#log-loading). The steps, in order:
//!
//! 0. the directory's `.lock` file is locked exclusively ([`DirLock`]) before anything
//!    else is read or written; the lock is held until the log is closed or dropped;
//! 1. the clean-shutdown marker is read and **removed** (directory fsynced) first;
//! 2. `*.deleted` files are deleted, `.cleaned`/`.swap` files are resolved, orphan
//!    index files are deleted;
//! 3. segments are opened in offset order; their indexes stay unmapped (lazy), except
//!    that a missing `.index`, a corrupt `.txnindex` or — stricter than Kafka — an
//!    index whose first/last entries are out of order (an untrimmed zero-padded index,
//!    field case B1/B3) makes the segment be recovered from its `.log`;
//!    every file named like a segment file is checked to be a regular file (symlinks
//!    followed) **before** anything is opened: anything else is
//!    [`SegmentError::NotARegularFile`], never skipped and never opened;
//! 4. before the clean-shutdown marker or the recovery point is trusted for a segment,
//!    a cheap check without mapping (`segment/src/validate.rs`) confirms that its last
//!    index entries lie inside the `.log`, its first and last batch headers are
//!    readable and fit, and offsets increase, also across segment boundaries. A
//!    segment that fails is recovered from its `.log` (later segments are kept; an
//!    overlap with the next segment is cut at the next segment's base offset, or, if
//!    the next segment is empty, that empty segment is removed; both reported in
//!    [`LogStats`]), and the log end never goes below the checkpointed recovery point
//!    (the log end at a clean shutdown, the flushed offset otherwise: a new segment is
//!    started there if recovery cut below it), so no offset handed out is reused.
//!    Stricter than Kafka, which trusts the marker. Recovery stops at a batch whose
//!    offsets go backwards, as at a corrupt one;
//! 5. without a clean shutdown, every segment from the one holding the recovery point
//!    on is recovered; after the first one that truncated bytes all later segments are
//!    deleted; recovered segments are flushed and the recovery point moved to the log
//!    end;
//! 6. the active segment's indexes are resized to `max_index_size` (deferred to the first
//!    append or roll, so that opening a cleanly shut down log rewrites no index file).
//!
//! A legacy segment (written before Kafka 2.0) holding offsets that are not
//! representable relative to its base offset (B5d) is **split** into several
//! segments when recovery meets it, as Kafka's loader does: the pieces are written as
//! `.cleaned` files ([`LogSegment::append_from_file`]), renamed to `.swap` (highest
//! base first), the old segment is deleted and the `.swap` suffixes dropped. A crash at
//! any point is resolved by step 2 of the next open: leftover `.cleaned` files (and
//! `.swap` files at or above them, and — stricter than Kafka — `.swap` pieces beside a
//! `.cleaned` one inside the old segment's range, renames that reached the disk out of
//! order, `docs/kafka-behaviour.md#split-partial-swap`) are deleted — the old segment is
//! still complete — and a complete set of `.swap` files replaces what is left of the old
//! segment.
//!
//! Step 2 and the split are in `swap.rs`; the producer state and the leader-epoch cache
//! are loaded by `pstate.rs` after the segments.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{
    Log, LogOptions, LogStats, CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE,
};
use crate::config::LogConfig;
use crate::deleter::SegmentDeleter;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::fs::FsRef;
use crate::lock::DirLock;
use crate::names;
use crate::producer::{LeaderEpochCache, ProducerStateManager};
use crate::segment::LogSegment;
use crate::segment_map::LogSegments;
use crate::tier::DeletionReason;
use crate::time::Clock;

/// Segments the loader opens before it judges whether the page cache is cold: if opening
/// these took longer than [`COLD_PROBE_TIME`] (the first of them waited for inode reads),
/// the load-time checks ask the kernel to read their pages ahead
/// (docs/performance.md#vs-kafka-opens).
const COLD_PROBE_SEGMENTS: usize = 8;

/// The time opening [`COLD_PROBE_SEGMENTS`] segments takes at most when their files'
/// inodes are cached (80–140 µs on the development machine, 5–10 µs a segment; cold, the
/// first open alone waits 0.6–1 ms for the disk).
const COLD_PROBE_TIME: std::time::Duration = std::time::Duration::from_micros(400);

impl Log<KafkaBatchFormat> {
    /// Opens (creating if needed) the log in `dir`, of Kafka's record batches — Kafka's
    /// loader (docs/kafka-behaviour.md#log-loading). It locks the directory ([`DirLock`]) and removes the
    /// clean-shutdown marker before anything else, resolves leftover `.deleted`, `.cleaned`
    /// and `.swap` files, opens the segments (a file named like a segment file that is not
    /// a regular file is [`SegmentError::NotARegularFile`]), checks each segment's files
    /// before the marker or the recovery point is trusted for it (stricter than Kafka), and
    /// recovers the segments from the recovery point on, splitting a legacy segment whose
    /// offsets overflow. The steps are in the module comment of `segment/src/log/load.rs`.
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
    pub(super) fn open_with(
        dir: PathBuf,
        config: LogConfig,
        clock: Clock,
        fs: FsRef,
    ) -> Result<Self> {
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
            bounds: super::bounds::Bounds::new(checkpoints.log_start_offset),
            recovery_point: AtomicI64::new(checkpoints.recovery_point),
            lock: Mutex::new(()),
            clean_lock: Mutex::new(()),
            stats: LogStats::default(),
            epoch_cache: Mutex::new(LeaderEpochCache::new()),
            producer_state: Mutex::new(ProducerStateManager::new()),
            active_ready: std::sync::atomic::AtomicBool::new(false),
            epochs_pending: std::sync::atomic::AtomicBool::new(false),
            fs,
            offline: Default::default(),
            dir_lock,
            deleter: SegmentDeleter::new(config.file_delete_delay_ms, clock.clone()),
            hw: Default::default(),
            tier: super::tier::TierState::new(checkpoints.log_start_offset),
            tier_listener: std::sync::OnceLock::new(),
        };
        // One listing serves the temp-file pass and the segment pass unless the first
        // pass had something to resolve (a `.deleted`, `.cleaned` or `.swap` file): then
        // the directory changed and is listed again.
        let listing = log.list_dir()?;
        let untouched = !listing.iter().any(|p| {
            let n = names::file_name(p);
            n.ends_with(names::DELETED_FILE_SUFFIX)
                || n.ends_with(names::CLEANED_FILE_SUFFIX)
                || n.ends_with(names::SWAP_FILE_SUFFIX)
        });
        let orphan_index_swaps = log.remove_temp_files_and_swap(&listing)?;
        let epochs_usable = log.load_leader_epoch_checkpoint()?;
        let files = if untouched { listing } else { log.list_dir()? };
        let mut flagged = log.load_segments(files)?;
        flagged.extend(orphan_index_swaps);
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

    pub(super) fn list_dir(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for e in
            std::fs::read_dir(&self.dir).map_err(|e| SegmentError::io("list dir", &self.dir, e))?
        {
            let e = e.map_err(|e| SegmentError::io("list dir", &self.dir, e))?;
            let path = e.path();
            // The entry's type as the directory gives it (`d_type`: no `stat`; the
            // standard library `lstat`s where the file system does not give it).
            let ft = e
                .file_type()
                .map_err(|er| SegmentError::io("stat", &path, er))?;
            if ft.is_file() {
                out.push(path);
                continue;
            }
            if crate::validate::is_segment_file_name(names::file_name(&path)) {
                // Followed if a symlink; anything but a regular file is an error, never
                // skipped (its offsets would vanish) and never opened (a FIFO blocks).
                crate::fs::check_regular_file(&path)?;
                out.push(path);
            }
        }
        // All in one directory (each path is the directory's path joined with the entry's
        // name): ordering the whole paths byte by byte is ordering the file names, and
        // `Path`'s order, without its per-component parsing (8 % of a warm open's profile).
        out.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        Ok(out)
    }

    /// Opens every segment; returns the base offsets of those whose indexes must be
    /// rebuilt (missing `.index`, corrupt `.txnindex`, failed quick check).
    /// `files` is the directory's listing ([`Self::list_dir`]): which files exist is read
    /// from it, not asked of the file system again.
    fn load_segments(&self, files: Vec<PathBuf>) -> Result<Vec<i64>> {
        let listed: std::collections::HashSet<&std::ffi::OsStr> =
            files.iter().filter_map(|p| p.file_name()).collect();
        let has = |p: &std::path::Path| p.file_name().is_some_and(|n| listed.contains(n));
        for p in &files {
            if names::is_index_file(p) {
                let Some(kind) = names::kind_of(p) else {
                    continue;
                };
                let log = names::replace_suffix(p, kind.suffix(), names::LOG_FILE_SUFFIX)?;
                if !has(&log) {
                    tracing::warn!(file = %p.display(), "deleting orphaned index file");
                    self.remove_if_exists(p)?;
                }
            }
        }
        let mut flagged = Vec::new();
        let started = std::time::Instant::now();
        let (mut opened, mut cold) = (0, false);
        for p in &files {
            if !names::is_log_file(p) {
                continue;
            }
            if names::offset_from_file(p).is_err() {
                continue; // not named like a segment (e.g. `notes.log`)
            }
            let base = names::canonical_offset_from_file(p)?;
            if opened == COLD_PROBE_SEGMENTS {
                cold = started.elapsed() > COLD_PROBE_TIME;
            }
            opened += 1;
            let time_index_existed = has(&names::time_index_file(&self.dir, base, ""));
            // The listing checked the segment's files: the open does not `lstat` them again.
            let txn_listed = has(&names::transaction_index_file(&self.dir, base, ""));
            let seg = LogSegment::open(
                &self.dir,
                base,
                &self.config,
                crate::segment::SegmentOptions::existing()
                    .listed(txn_listed)
                    .clock(self.clock.clone())
                    .fs(self.fs.clone()),
            )?;
            // The quick index check runs with the consistency check below, on one read
            // of each index's ends.
            let index_listed = has(&names::offset_index_file(&self.dir, base, ""));
            let needs_recovery =
                match seg.sanity_check_listed(!time_index_existed, index_listed, txn_listed) {
                    Ok(()) => false,
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
        // agree (crate::validate: the quick index check and the consistency check)? A
        // segment that fails is recovered. The checks' reads are advised ahead when the
        // first opens found the page cache cold (or once the checks find themselves
        // waiting for the disk); advice to a warm page cache would only cost three calls
        // a segment.
        let failed = crate::validate::check_loaded_segments(
            &self.segments,
            &flagged,
            cold,
            &self.stats.indexes_rebuilt,
        );
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
        // The recovery rebuilds the indexes: a check deferred to their first load must
        // not run (and count a rebuild) at the read below
        // (docs/kafka-behaviour.md#deferred-index-check).
        seg.drop_index_check();
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
                // Listed before the flagged segments were recovered: one whose overlap
                // resolution (or an earlier one's here) removed it, an empty segment
                // inside the one before, is gone. Not recovered, not counted.
                let live = self
                    .segments
                    .get(seg.base_offset())
                    .is_some_and(|s| Arc::ptr_eq(&s, &seg));
                if !live {
                    continue;
                }
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
                        self.delete_segment_files(&l, DeletionReason::Truncation)?;
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
                        self.delete_segment_files(&later, DeletionReason::Truncation)?;
                    }
                    break;
                }
            }
        }
        if let Some(last) = self.segments.last_segment() {
            if last.read_next_offset()? < ls_checkpoint {
                for s in self.segments.values() {
                    self.delete_segment_files(&s, DeletionReason::Truncation)?;
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
        // Kafka resizes the active segment's indexes here (docs/kafka-behaviour.md#log-loading step 7). We defer it to
        // the first append/roll (`ensure_active_ready`) so that opening a cleanly shut down
        // log rewrites no index file (field case B3) — an empty active segment with 0-byte indexes is
        // still never rolled onto itself (field case B4).
        let active = self.segments.active_segment()?;
        let leo = active.read_next_offset()?;
        let first = self.segments.first_segment_base_offset().unwrap_or(0);
        {
            let p = self.publish();
            p.set_log_end(leo);
            // Kafka's `LogLoader`: with remote storage the checkpointed log start stays
            // below the first local segment (the remote tier holds the offsets between);
            // without it the log starts at the first segment at least.
            let ls = if self.config.remote_storage_enable
                && !crate::fs::mutated!(TieredOpenMovesLogStart)
            {
                ls_checkpoint.min(leo.max(first))
            } else {
                ls_checkpoint.max(first).min(leo.max(first))
            };
            p.set_log_start(ls);
            // Kafka's `UnifiedLog` constructor: the local log start is derived, the larger
            // of the log start and the first local segment's base
            // (`docs/kafka-behaviour.md#local-log-start-offset`).
            self.tier.reset_local_log_start(ls.max(first));
        }
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
                self.delete_segment_files(&next, DeletionReason::Truncation)?;
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
}
