//! Which offsets of a compacted log a clean may touch, and how dirty the log is: Kafka's
//! `LogCleanerManager.cleanableOffsets`, `maxCompactionDelay`, `calculateCleanableBytes`,
//! `LogToClean` and the choice of `grabFilthiestCompactedLog`
//! (`docs/kafka-behaviour.md#cleaner-cleanable-offsets`,
//! `docs/kafka-behaviour.md#cleaner-dirty-ratio`).
//!
//! The rules read a [`LogSummary`]: the few numbers per segment that Kafka's rules read,
//! taken from a live [`Log`] by [`LogSummary::of`] or built by hand (tests, the oracle).

use super::{CleanError, CleanerSource, CompactionConfig};

/// What the cleaner's rules read of one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentSummary {
    /// The base offset.
    pub base_offset: i64,
    /// The `.log`'s size in bytes (Kafka's `LogSegment.size`).
    pub size: u64,
    /// Kafka's `largestTimestamp`: the largest record timestamp, or the `.log`'s
    /// last-modified time (ms) when no record has one.
    pub largest_timestamp: i64,
    /// Kafka's `getFirstBatchTimestamp`: the first batch's max timestamp, or `i64::MAX`
    /// when the segment is empty or that timestamp is negative.
    pub first_batch_timestamp: i64,
    /// The `.log`'s last-modified time, ms (the horizons of a clean).
    pub last_modified: i64,
    /// The offset index's used bytes (entries × 8; Kafka's `OffsetIndex.sizeInBytes`).
    pub offset_index_bytes: u64,
    /// The time index's used bytes (entries × 12).
    pub time_index_bytes: u64,
}

/// What the cleaner's rules read of a log: its bounds and its segments in base-offset
/// order, the last one the active segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSummary {
    /// The log start offset.
    pub log_start_offset: i64,
    /// The log end offset.
    pub log_end_offset: i64,
    /// The last stable offset (bounded by the high watermark, as Kafka's
    /// `UnifiedLog.lastStableOffset`).
    pub last_stable_offset: i64,
    /// The segments, by base offset; never empty for a real log.
    pub segments: Vec<SegmentSummary>,
}

impl LogSummary {
    /// The summary of a live log. Every segment's offset and time index is materialised
    /// (Kafka's grouping reads their sizes too) and every segment's first batch header is
    /// read (its timestamp).
    ///
    /// # Errors
    /// [`CleanError::Segment`]: index and I/O errors of the segments.
    pub fn of<L: CleanerSource + ?Sized>(log: &L) -> Result<Self, CleanError> {
        let (log_start_offset, log_end_offset, last_stable_offset) = log.cleaner_bounds();
        let mut segments = Vec::new();
        for s in log.cleaner_segments().values() {
            segments.push(SegmentSummary {
                base_offset: s.base_offset(),
                size: s.size(),
                largest_timestamp: s.largest_timestamp()?,
                first_batch_timestamp: s.get_first_batch_timestamp()?,
                last_modified: s.last_modified()?,
                offset_index_bytes: s.offset_index()?.size_in_bytes() as u64,
                time_index_bytes: s.time_index()?.size_in_bytes() as u64,
            });
        }
        Ok(LogSummary {
            log_start_offset,
            log_end_offset,
            last_stable_offset,
            segments,
        })
    }

    /// The active (last) segment's base offset, 0 for no segment.
    pub fn active_base_offset(&self) -> i64 {
        self.segments.last().map_or(0, |s| s.base_offset)
    }

    /// Kafka's `LogSegments.values(from, to)`: the segment holding `from` (the last one
    /// whose base is ≤ `from`, or the first segment if none) up to, excluding, the first
    /// whose base is ≥ `to`. Empty when `from == to`; `None` when `to < from` (Kafka
    /// throws `IllegalArgumentException`).
    pub fn segments_in(&self, from: i64, to: i64) -> Option<&[SegmentSummary]> {
        if from == to {
            return Some(&[]);
        }
        if to < from {
            return None;
        }
        let segs = &self.segments;
        let start = segs
            .partition_point(|s| s.base_offset <= from)
            .saturating_sub(1);
        let end = segs.partition_point(|s| s.base_offset < to);
        Some(segs.get(start..end.max(start)).unwrap_or(&[]))
    }

    /// Kafka's `nonActiveLogSegmentsFrom(from)`: nothing if `from` is past the active
    /// segment's base, else [`segments_in`](Self::segments_in)`(from, active base)`.
    pub fn non_active_segments_from(&self, from: i64) -> &[SegmentSummary] {
        let active = self.active_base_offset();
        if from > active {
            return &[];
        }
        self.segments_in(from, active).unwrap_or(&[])
    }
}

/// The dirty range of a log (Kafka's `OffsetsToClean`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetsToClean {
    /// The first offset not yet cleaned.
    pub first_dirty_offset: i64,
    /// The first offset a clean must not touch (≥ `first_dirty_offset`).
    pub first_uncleanable_dirty_offset: i64,
    /// The checkpointed offset was out of the log's range and was reset: Kafka then
    /// writes `first_dirty_offset` to the checkpoint.
    pub force_update_checkpoint: bool,
}

/// Kafka's `cleanableOffsets(log, lastCleanOffset, now)`
/// (`docs/kafka-behaviour.md#cleaner-cleanable-offsets`).
///
/// The first dirty offset is the checkpointed offset, or the log start offset when there
/// is none, below the log start (KAFKA-6266) or above the log end (KAFKA-8724; both
/// resets force a checkpoint update). The first uncleanable offset is the smallest of
/// the last stable offset, the active segment's base offset and, when
/// `min.compaction.lag.ms > 0`, the base offset of the first non-active segment from
/// the first dirty offset whose largest timestamp is after `now − lag`; it is then
/// raised to at least the first dirty offset.
pub fn cleanable_offsets(
    log: &LogSummary,
    checkpointed: Option<i64>,
    now: i64,
    config: &CompactionConfig,
) -> OffsetsToClean {
    let start = log.log_start_offset;
    let checkpoint = checkpointed.unwrap_or(start);
    let (first_dirty, force) = if checkpoint < start || checkpoint > log.log_end_offset {
        (start, true)
    } else {
        (checkpoint, false)
    };
    let lag = config.min_compaction_lag_ms.max(0);
    let mut uncleanable = log.last_stable_offset.min(log.active_base_offset());
    if lag > 0 {
        let bound = now.wrapping_sub(lag);
        if let Some(s) = log
            .non_active_segments_from(first_dirty)
            .iter()
            .find(|s| s.largest_timestamp > bound)
        {
            uncleanable = uncleanable.min(s.base_offset);
        }
    }
    OffsetsToClean {
        first_dirty_offset: first_dirty,
        first_uncleanable_dirty_offset: uncleanable.max(first_dirty),
        force_update_checkpoint: force,
    }
}

/// Kafka's `maxCompactionDelay(log, firstDirtyOffset, now)`: how long (ms) past its
/// `max.compaction.lag.ms` the oldest dirty data is, 0 if none is overdue. The oldest
/// dirty data is the smallest positive first-batch timestamp of the non-active segments
/// from the first dirty offset (a segment with none counts as `i64::MAX`). A delay above
/// 0 makes the log [`need_compaction_now`](LogToClean::need_compaction_now).
pub fn max_compaction_delay(
    log: &LogSummary,
    first_dirty_offset: i64,
    now: i64,
    config: &CompactionConfig,
) -> i64 {
    let earliest = log
        .non_active_segments_from(first_dirty_offset)
        .iter()
        .map(|s| s.first_batch_timestamp)
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(i64::MAX);
    let clean_until = now.wrapping_sub(config.max_compaction_lag_ms.max(0));
    if earliest < clean_until {
        clean_until.wrapping_sub(earliest)
    } else {
        0
    }
}

/// A log's dirtiness (Kafka's `LogToClean`; `docs/kafka-behaviour.md#cleaner-dirty-ratio`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogToClean {
    /// The first dirty offset.
    pub first_dirty_offset: i64,
    /// The base offset of the first uncleanable segment: the segment holding the first
    /// uncleanable dirty offset (or the active segment past it). A clean stops before it.
    pub first_uncleanable_offset: i64,
    /// Bytes of the segments below the first dirty offset (Kafka's `cleanBytes`:
    /// `logSegments(-1, firstDirtyOffset)`, which includes the segment holding the first
    /// dirty offset when that offset is inside it).
    pub clean_bytes: u64,
    /// Bytes of the segments from the one holding the first dirty offset up to the first
    /// uncleanable segment (Kafka's `cleanableBytes`).
    pub cleanable_bytes: u64,
    /// `clean_bytes + cleanable_bytes` (a segment holding the first dirty offset inside
    /// it is counted twice, as in Kafka).
    pub total_bytes: u64,
    /// `cleanable_bytes / total_bytes` (NaN for an empty log, which is never chosen).
    pub cleanable_ratio: f64,
    /// The log is past its `max.compaction.lag.ms` ([`max_compaction_delay`] > 0).
    pub need_compaction_now: bool,
}

impl LogToClean {
    /// Kafka's `LogToClean(log, firstDirtyOffset, uncleanableOffset, needCompactionNow)`
    /// with `LogCleanerManager.calculateCleanableBytes`.
    pub fn new(
        log: &LogSummary,
        first_dirty_offset: i64,
        uncleanable_offset: i64,
        need_compaction_now: bool,
    ) -> Self {
        let bytes = |segs: &[SegmentSummary]| segs.iter().map(|s| s.size).sum::<u64>();
        let clean_bytes = log.segments_in(-1, first_dirty_offset).map_or(0, bytes);
        let first_uncleanable_offset = log
            .non_active_segments_from(uncleanable_offset)
            .first()
            .map_or(log.active_base_offset(), |s| s.base_offset);
        let cleanable_bytes = log
            .segments_in(
                first_dirty_offset.min(first_uncleanable_offset),
                first_uncleanable_offset,
            )
            .map_or(0, bytes);
        let total_bytes = clean_bytes + cleanable_bytes;
        LogToClean {
            first_dirty_offset,
            first_uncleanable_offset,
            clean_bytes,
            cleanable_bytes,
            total_bytes,
            // 0 / 0 is NaN in Java too; Java's canonical NaN, for bit-exact comparisons.
            cleanable_ratio: if total_bytes == 0 {
                f64::NAN
            } else {
                cleanable_bytes as f64 / total_bytes as f64
            },
            need_compaction_now,
        }
    }

    /// The plan of one log as `grabFilthiestCompactedLog` makes it: its
    /// [`cleanable_offsets`] from the checkpointed offset, its
    /// [`max_compaction_delay`], and its dirtiness.
    pub fn plan(
        log: &LogSummary,
        checkpointed: Option<i64>,
        now: i64,
        config: &CompactionConfig,
    ) -> (OffsetsToClean, LogToClean) {
        let offsets = cleanable_offsets(log, checkpointed, now, config);
        let delay = max_compaction_delay(log, offsets.first_dirty_offset, now, config);
        let ltc = LogToClean::new(
            log,
            offsets.first_dirty_offset,
            offsets.first_uncleanable_dirty_offset,
            delay > 0,
        );
        (offsets, ltc)
    }

    /// Whether `grabFilthiestCompactedLog` would consider this log: it is not empty, and
    /// either it needs compaction now and has cleanable bytes, or its ratio is above
    /// `min_cleanable_dirty_ratio` (strictly).
    pub fn is_cleanable(&self, min_cleanable_dirty_ratio: f64) -> bool {
        self.total_bytes > 0
            && ((self.need_compaction_now && self.cleanable_bytes > 0)
                || self.cleanable_ratio > min_cleanable_dirty_ratio)
    }
}

/// `grabFilthiestCompactedLog`'s choice among logs, each with its
/// `min.cleanable.dirty.ratio`: the index of the cleanable one
/// ([`LogToClean::is_cleanable`]) with the highest ratio, the first one on a tie; `None`
/// if none is cleanable.
pub fn filthiest(logs: &[(LogToClean, f64)]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, (ltc, min_ratio)) in logs.iter().enumerate() {
        if !ltc.is_cleanable(*min_ratio) {
            continue;
        }
        match best {
            Some(b)
                if logs
                    .get(b)
                    .is_some_and(|(o, _)| o.cleanable_ratio >= ltc.cleanable_ratio) => {}
            _ => best = Some(i),
        }
    }
    best
}
