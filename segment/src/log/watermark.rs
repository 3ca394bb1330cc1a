//! The high watermark of a [`Log`] (Kafka's `UnifiedLog.highWatermark` and its rules) and
//! the ListOffsets answers of [`Log::fetch_offset_by_timestamp`]
//! (`docs/kafka-behaviour.md#high-watermark`, `docs/kafka-behaviour.md#list-offsets`).

use std::sync::atomic::{AtomicBool, Ordering};

use super::Log;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::scan::Scanner;

const LATEST_TIMESTAMP: i64 = ListedOffset::LATEST_TIMESTAMP;
const EARLIEST_TIMESTAMP: i64 = ListedOffset::EARLIEST_TIMESTAMP;
const MAX_TIMESTAMP: i64 = ListedOffset::MAX_TIMESTAMP;
const EARLIEST_LOCAL_TIMESTAMP: i64 = ListedOffset::EARLIEST_LOCAL_TIMESTAMP;
const LATEST_TIERED_TIMESTAMP: i64 = ListedOffset::LATEST_TIERED_TIMESTAMP;
const EARLIEST_PENDING_UPLOAD_TIMESTAMP: i64 = ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP;

/// How a [`Log`]'s high watermark is kept; its value is published with the bounds
/// (`bounds.rs`). Both flags are written under the log's lock and read without it
/// (`Release`/`Acquire`).
#[derive(Debug, Default)]
pub(super) struct HighWatermark {
    /// Whether the high watermark is the caller's ([`LogOptions::manual_high_watermark`]);
    /// when not, it follows the log end (`docs/kafka-behaviour.md#high-watermark`).
    ///
    /// [`LogOptions::manual_high_watermark`]: crate::LogOptions::manual_high_watermark
    manual: AtomicBool,
    /// Whether the caller's high watermark is a bare offset not yet converted to the batch
    /// holding it (Kafka's `messageOffsetOnly` metadata;
    /// `docs/kafka-behaviour.md#hw-offset-only`).
    offset_only: AtomicBool,
}

impl HighWatermark {
    /// Whether the high watermark is the caller's.
    pub(super) fn is_manual(&self) -> bool {
        self.manual.load(Ordering::Acquire)
    }

    /// Makes the high watermark the caller's (at open; never undone).
    fn set_manual(&self) {
        self.manual.store(true, Ordering::Release);
    }

    /// Whether the value is a bare offset.
    fn is_offset_only(&self) -> bool {
        self.offset_only.load(Ordering::Acquire)
    }

    /// Records whether the value just stored is a bare offset.
    fn set_offset_only(&self, bare: bool) {
        self.offset_only.store(bare, Ordering::Release);
    }
}

/// An answer of [`Log::fetch_offset_by_timestamp`] (Kafka's
/// `FileRecords.TimestampAndOffset`, what a ListOffsets response carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListedOffset {
    /// The record's timestamp (ms since epoch), or −1 for the answers of a sentinel other
    /// than [`MAX_TIMESTAMP`](ListedOffset::MAX_TIMESTAMP).
    pub timestamp: i64,
    /// The offset (−1 for the remote-storage sentinels of a log without it).
    pub offset: i64,
    /// The leader epoch of the answer, if known.
    pub leader_epoch: Option<i32>,
}

/// The ListOffsets sentinels [`Log::fetch_offset_by_timestamp`] answers (Kafka 4.4's
/// `ListOffsetsRequest` constants).
impl ListedOffset {
    /// Kafka's `ListOffsetsRequest.LATEST_TIMESTAMP`: the log end offset.
    pub const LATEST_TIMESTAMP: i64 = -1;
    /// Kafka's `ListOffsetsRequest.EARLIEST_TIMESTAMP`: the log start offset.
    pub const EARLIEST_TIMESTAMP: i64 = -2;
    /// Kafka's `ListOffsetsRequest.MAX_TIMESTAMP`: the record with the largest timestamp.
    pub const MAX_TIMESTAMP: i64 = -3;
    /// Kafka's `ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP`: the first offset on local
    /// storage: the log start offset without remote storage, the
    /// [local log start offset](Log::local_log_start_offset) with it.
    pub const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
    /// Kafka's `ListOffsetsRequest.LATEST_TIERED_TIMESTAMP`: the last offset on remote
    /// storage ([`Log::highest_offset_in_remote_storage`]; −1 without remote storage).
    pub const LATEST_TIERED_TIMESTAMP: i64 = -5;
    /// Kafka 4.4's `EARLIEST_PENDING_UPLOAD_TIMESTAMP`: the first offset not yet uploaded to
    /// remote storage (KIP-1023; −1 without remote storage,
    /// `docs/kafka-behaviour.md#list-offsets-tiered`).
    pub const EARLIEST_PENDING_UPLOAD_TIMESTAMP: i64 = -6;
}

impl<F: BatchFormat> Log<F> {
    /// Switches to the caller's high watermark at `initial` (clamped); `LogOptions::open`.
    pub(super) fn enable_manual_high_watermark(&self, initial: i64) {
        let _g = self.lock.lock();
        self.hw.set_manual();
        self.set_high_watermark(self.clamped_high_watermark(initial));
    }

    /// Stores `v` (already clamped) as Kafka's `updateHighWatermark` does: at the log end
    /// it is the log end's metadata, below it a bare offset that a bounded read converts
    /// later ([`resolve_high_watermark`](Self::resolve_high_watermark)). Under the lock.
    fn set_high_watermark(&self, v: i64) {
        let bare = v < self.log_end_offset();
        self.store_high_watermark(v);
        self.hw.set_offset_only(bare);
    }

    /// Kafka's `updateHighWatermarkMetadata`: stores `v` and tells the producer state
    /// (`onHighWatermarkUpdated`), so decided transactions below it stop being unstable.
    /// Under the lock.
    fn store_high_watermark(&self, v: i64) {
        let p = self.publish();
        p.set_high_watermark(v);
        self.producer_state.lock().on_high_watermark_updated(v);
        // The publication ends here, with the producer state just told.
        drop(p);
    }

    /// Kafka's `fetchHighWatermarkMetadata`: a high watermark held as a bare offset is
    /// converted to the batch that holds it (or, in a gap, the first batch above it), and
    /// takes **that batch's base offset** (Kafka 4.4's `FileRecords.searchForOffsetFromPosition`
    /// answers base offsets). A high watermark set inside a batch thus comes down to the
    /// batch's start at the first read bounded by it
    /// (`docs/kafka-behaviour.md#hw-offset-only`). A no-op unless manual and bare.
    ///
    /// # Errors
    /// Index, format and I/O errors of the search.
    pub(super) fn resolve_high_watermark(&self) -> Result<()> {
        if !self.has_manual_high_watermark() || !self.hw.is_offset_only() {
            return Ok(());
        }
        let _g = self.lock.lock();
        self.resolve_high_watermark_locked()
    }

    /// [`resolve_high_watermark`](Self::resolve_high_watermark) under the log's lock.
    fn resolve_high_watermark_locked(&self) -> Result<()> {
        if !self.hw.is_offset_only() {
            return Ok(());
        }
        let hw = self.bounds.manual_high_watermark();
        if hw >= self.log_end_offset() {
            self.hw.set_offset_only(false);
            return Ok(());
        }
        let base = self.stable_pass(|| {
            let mut seg = self.segments.floor_segment(hw);
            while let Some(s) = seg {
                if s.size() > 0 {
                    if let Some(t) = s.translate_offset(hw, 0)? {
                        let mut sc = Scanner::<F>::new(s.log(), t.position);
                        return Ok(sc.next_batch()?.map(|(info, _)| info.base_offset));
                    }
                }
                seg = self.segments.higher_segment(s.base_offset());
            }
            Ok(None)
        })?;
        // Kafka's `maybeConvertToOffsetMetadata`: out of range, the offset stays bare.
        if let Some(b) = base {
            self.store_high_watermark(b);
            self.hw.set_offset_only(false);
        }
        Ok(())
    }

    /// Whether the high watermark is the caller's
    /// ([`LogOptions::manual_high_watermark`](crate::LogOptions::manual_high_watermark)).
    pub fn has_manual_high_watermark(&self) -> bool {
        self.hw.is_manual()
    }

    /// The high watermark: the offset below which a `read_uncommitted` consumer may read
    /// ([`FetchIsolation::HighWatermark`](crate::FetchIsolation)). The log end offset,
    /// unless the log was opened with
    /// [`manual_high_watermark`](crate::LogOptions::manual_high_watermark), where it is
    /// the caller's value, kept by Kafka's rules in `[log start, log end]`
    /// (`docs/kafka-behaviour.md#high-watermark`).
    pub fn high_watermark(&self) -> i64 {
        if self.hw.is_manual() {
            self.bounds.manual_high_watermark()
        } else {
            self.log_end_offset()
        }
    }

    /// Kafka's `updateHighWatermark`: sets the high watermark to `hw` clamped to the log
    /// (below the log start offset: the log start offset; at or above the log end
    /// offset: the log end offset), up or down; returns the value set.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if the log was not opened with
    /// [`manual_high_watermark`](crate::LogOptions::manual_high_watermark) (its high
    /// watermark follows the log end).
    pub fn update_high_watermark(&self, hw: i64) -> Result<i64> {
        let _g = self.lock.lock();
        self.check_manual_hw()?;
        let v = self.clamped_high_watermark(hw);
        self.set_high_watermark(v);
        Ok(v)
    }

    /// Kafka's `maybeIncrementHighWatermark`: raises the high watermark to `hw` if that is
    /// above it; returns the old high watermark if it moved, `None` if not (a lower or
    /// equal `hw` changes nothing).
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `hw` is above the log end offset (Kafka's
    /// `IllegalArgumentException`), or if the log was not opened with
    /// [`manual_high_watermark`](crate::LogOptions::manual_high_watermark).
    pub fn maybe_increment_high_watermark(&self, hw: i64) -> Result<Option<i64>> {
        let _g = self.lock.lock();
        self.check_manual_hw()?;
        let leo = self.log_end_offset();
        if hw > leo {
            return Err(SegmentError::arg(format!(
                "high watermark {hw} update exceeds the log end offset {leo}"
            )));
        }
        // Kafka compares with `fetchHighWatermarkMetadata()`, converted first.
        self.resolve_high_watermark_locked()?;
        let old = self.bounds.manual_high_watermark();
        if hw > old {
            // Kafka's callers pass a replica's log end metadata: a batch boundary, whole.
            self.store_high_watermark(hw);
            self.hw.set_offset_only(false);
            return Ok(Some(old));
        }
        Ok(None)
    }

    fn check_manual_hw(&self) -> Result<()> {
        if self.has_manual_high_watermark() {
            return Ok(());
        }
        Err(SegmentError::arg(
            "the high watermark of this log follows its log end offset; open it with \
             LogOptions::manual_high_watermark to move it yourself"
                .to_string(),
        ))
    }

    /// Kafka's clamp of `updateHighWatermark` with the current bounds.
    fn clamped_high_watermark(&self, hw: i64) -> i64 {
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        if hw < start {
            start
        } else if hw >= leo && !crate::fs::mutated!(LinHwUnclamped) {
            leo
        } else {
            hw
        }
    }

    /// After the log end was lowered (Kafka's `truncateTo`): a high watermark above the
    /// new log end comes down to it. Under the log's lock.
    pub(super) fn high_watermark_after_truncate(&self) {
        let leo = self.log_end_offset();
        if crate::fs::mutated!(LinTruncateKeepsHw) {
            return;
        }
        if self.bounds.manual_high_watermark() >= leo {
            self.store_high_watermark(leo);
            self.hw.set_offset_only(false);
        }
    }

    /// After `truncate_fully_and_start_at` (Kafka: `updateHighWatermark(logEnd)`): the
    /// high watermark is the new log end, clamped. Under the log's lock.
    pub(super) fn high_watermark_after_restart(&self) {
        let v = self.clamped_high_watermark(self.log_end_offset());
        self.store_high_watermark(v);
        self.hw.set_offset_only(false);
    }

    /// After the log start offset was raised (Kafka's `updateLogStartOffset`): a high
    /// watermark below it comes up to it. Under the log's lock.
    pub(super) fn high_watermark_after_log_start_raised(&self) {
        let start = self.log_start_offset();
        if self.bounds.manual_high_watermark() < start {
            self.set_high_watermark(self.clamped_high_watermark(start));
        }
    }

    /// Kafka 4.4's `fetchOffsetByTimestamp` without remote storage, the ListOffsets answer
    /// for `timestamp` (`docs/kafka-behaviour.md#list-offsets`):
    ///
    /// | `timestamp` | answer |
    /// |---|---|
    /// | −1 [`LATEST_TIMESTAMP`](ListedOffset::LATEST_TIMESTAMP) | `(−1, log end offset, latest epoch of the leader-epoch cache)` |
    /// | −2 [`EARLIEST_TIMESTAMP`](ListedOffset::EARLIEST_TIMESTAMP), −4 [`EARLIEST_LOCAL_TIMESTAMP`](ListedOffset::EARLIEST_LOCAL_TIMESTAMP) | `(−1, log start offset, the cache's earliest epoch if its start offset is ≤ the log start offset)` |
    /// | −3 [`MAX_TIMESTAMP`](ListedOffset::MAX_TIMESTAMP) | the record with the largest timestamp: `(its timestamp, its offset, its batch's epoch if ≥ 0)`; `None` if no record has a timestamp (an empty log, magic 0 data) |
    /// | −5 [`LATEST_TIERED_TIMESTAMP`](ListedOffset::LATEST_TIERED_TIMESTAMP), −6 [`EARLIEST_PENDING_UPLOAD_TIMESTAMP`](ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP) | `(−1, −1, Some(−1))` (nothing is on remote storage) |
    /// | ≥ 0 | [`offset_for_timestamp`](Self::offset_for_timestamp): the first record at or after it, with its batch's leader epoch; `None` if none |
    ///
    /// The −1 answer is the log end offset whatever the high watermark (Kafka's broker,
    /// not its log, bounds it by the isolation level). For a real timestamp the epoch is
    /// the batch's `partitionLeaderEpoch`, as Kafka's local search answers
    /// (`FileRecords.searchForTimestamp`), not the cache's.
    ///
    /// With [`remote_storage_enable`](crate::LogConfig::remote_storage_enable), −4, −5 and
    /// −6 answer from the tier state as Kafka 4.4 does: −4 the [local log
    /// start](Self::local_log_start_offset), −5 the [highest offset in remote
    /// storage](Self::highest_offset_in_remote_storage), −6 the first offset not uploaded
    /// (`docs/kafka-behaviour.md#list-offsets-tiered`), each with the leader-epoch cache's
    /// epoch for that offset. A real timestamp is still searched in the local segments
    /// only (Kafka searches the remote tier first).
    ///
    /// Runs under the generation protocol of [`read`](Self::read): concurrent retention
    /// or truncation makes it look again, never fail.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] for a timestamp below −6 (no such sentinel);
    /// index, format and I/O errors.
    pub fn fetch_offset_by_timestamp(&self, timestamp: i64) -> Result<Option<ListedOffset>> {
        let remote = self.config.remote_storage_enable;
        match timestamp {
            EARLIEST_LOCAL_TIMESTAMP if remote => {
                let local = self.local_log_start_offset();
                Ok(Some(ListedOffset {
                    timestamp: -1,
                    offset: local,
                    leader_epoch: self.epoch_cache.lock().epoch_for_offset(local),
                }))
            }
            LATEST_TIERED_TIMESTAMP if remote => {
                let highest = self.highest_offset_in_remote_storage();
                let epoch = match self.epoch_cache.lock().epoch_for_offset(highest) {
                    Some(e) => Some(e),
                    None if highest == -1 => Some(-1),
                    None => None,
                };
                Ok(Some(ListedOffset {
                    timestamp: -1,
                    offset: highest,
                    leader_epoch: epoch,
                }))
            }
            EARLIEST_PENDING_UPLOAD_TIMESTAMP if remote => {
                let highest = self.highest_offset_in_remote_storage();
                if highest == -1 {
                    // Nothing uploaded: the log start when the whole log is local,
                    // else no answer (something was uploaded before a restart).
                    if self.local_log_start_offset() == self.log_start_offset() {
                        return self.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP);
                    }
                    return Ok(Some(ListedOffset {
                        timestamp: -1,
                        offset: -1,
                        leader_epoch: Some(-1),
                    }));
                }
                let offset = (highest + 1).max(self.log_start_offset());
                Ok(Some(ListedOffset {
                    timestamp: -1,
                    offset,
                    leader_epoch: self.epoch_cache.lock().epoch_for_offset(offset),
                }))
            }
            EARLIEST_TIMESTAMP | EARLIEST_LOCAL_TIMESTAMP => {
                let start = self.log_start_offset();
                let epoch = self
                    .epoch_cache
                    .lock()
                    .entries()
                    .first()
                    .filter(|&&(_, s)| s <= start)
                    .map(|&(e, _)| e);
                Ok(Some(ListedOffset {
                    timestamp: -1,
                    offset: start,
                    leader_epoch: epoch,
                }))
            }
            LATEST_TIMESTAMP => {
                let leo = self.log_end_offset();
                let epoch = self.epoch_cache.lock().latest_epoch();
                Ok(Some(ListedOffset {
                    timestamp: -1,
                    offset: leo,
                    leader_epoch: epoch,
                }))
            }
            LATEST_TIERED_TIMESTAMP | EARLIEST_PENDING_UPLOAD_TIMESTAMP => Ok(Some(ListedOffset {
                timestamp: -1,
                offset: -1,
                leader_epoch: Some(-1),
            })),
            MAX_TIMESTAMP => self.stable_pass(|| self.max_timestamp_pass()),
            t if t < 0 => Err(SegmentError::arg(format!(
                "timestamp {t} is neither a real timestamp nor a ListOffsets sentinel (-1 to -6)"
            ))),
            t => self.stable_pass(|| {
                Ok(self.offset_for_timestamp(t)?.map(|f| ListedOffset {
                    timestamp: f.timestamp,
                    offset: f.offset,
                    leader_epoch: f.leader_epoch,
                }))
            }),
        }
    }

    /// Kafka's `MAX_TIMESTAMP` answer: the first segment with the largest
    /// `maxTimestampSoFar`, its first batch from that entry's index position whose max
    /// timestamp is it, and that batch's first record carrying it.
    fn max_timestamp_pass(&self) -> Result<Option<ListedOffset>> {
        let mut best = None;
        for s in self.segments.values() {
            let t = s.max_timestamp_so_far()?;
            if best.as_ref().is_none_or(|(_, bt)| t > *bt) {
                best = Some((s, t));
            }
        }
        let Some((seg, ts)) = best else {
            return Ok(None);
        };
        let off = seg.shallow_offset_of_max_timestamp_so_far()?;
        let pos = u64::from(seg.offset_index()?.lookup(off)?.position);
        let mut sc = Scanner::<F>::new(seg.log(), pos);
        while let Some((info, bytes)) = sc.next_batch()? {
            if info.max_timestamp != ts {
                continue;
            }
            // Kafka's `offsetOfMaxTimestamp`: none for magic 0 (no timestamps).
            if F::KAFKA_PRODUCER_STATE && info.magic == 0 {
                return Ok(None);
            }
            let found = F::search_timestamp(bytes, info.position, ts, i64::MIN)
                .map_err(|e| SegmentError::format(seg.log_path(), e))?;
            return Ok(found.map(|f| ListedOffset {
                timestamp: info.max_timestamp,
                offset: f.offset,
                leader_epoch: (info.partition_leader_epoch >= 0)
                    .then_some(info.partition_leader_epoch),
            }));
        }
        Ok(None)
    }
}
