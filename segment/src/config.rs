//! Segment and log configuration (Kafka topic configs, spec §13).

use std::hash::{BuildHasher, Hasher};

/// Configuration of a [`Log`](crate::Log) and of the [`LogSegment`](crate::LogSegment)s it
/// creates. Defaults are Kafka's (spec §13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// `segment.bytes`: maximum size of a segment's `.log`, in bytes (default 1 GiB;
    /// at most `i32::MAX`, at least 14).
    pub segment_bytes: u64,
    /// `segment.ms`: roll a non-empty segment after this many milliseconds (default 7 days),
    /// measured from its first batch's timestamp to the incoming batch's max timestamp,
    /// or by the [`Clock`](crate::time::Clock) from the segment's creation when the first
    /// batch has no timestamp (see
    /// [`LogSegment::time_waited_for_roll`](crate::LogSegment::time_waited_for_roll)).
    pub segment_ms: i64,
    /// `segment.jitter.ms`: maximum random jitter subtracted from `segment_ms`, fixed per
    /// segment at creation (default 0).
    pub segment_jitter_ms: i64,
    /// `segment.index.bytes`: maximum size in bytes of each of a segment's `.index` and
    /// `.timeindex` files (default 10 MiB).
    pub max_index_size: usize,
    /// `index.interval.bytes`: bytes appended between sparse index entries (default 4096).
    pub index_interval_bytes: u64,
    /// `preallocate`: create each new `.log` at `segment_bytes` (sparse) and trim it on roll
    /// (default false).
    pub preallocate: bool,
    /// `retention.bytes`: delete oldest segments while the log is larger than this, in bytes;
    /// −1 = unlimited (default).
    pub retention_bytes: i64,
    /// `retention.ms`: delete segments whose largest timestamp is older than this many
    /// milliseconds; −1 = unlimited (default 7 days). Applied only by
    /// [`Log::delete_old_segments`](crate::Log::delete_old_segments), which compares the
    /// [`Clock`](crate::time::Clock) with the records' timestamps: with the default, data
    /// stamped more than 7 days before the clock's "now" goes at the first call.
    pub retention_ms: i64,
    /// `file.delete.delay.ms`: how long, in milliseconds on the log's
    /// [`Clock`](crate::time::Clock), the files of a segment that left the log (retention,
    /// `delete_records`, truncation) stay on disk under the `.deleted` suffix before they are
    /// removed, so that readers still holding the segment can finish (default 60000, as
    /// Kafka). 0 removes them at once. See [`deleter`](crate::deleter) for when the
    /// removal runs.
    pub file_delete_delay_ms: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            segment_ms: 604_800_000,
            segment_jitter_ms: 0,
            max_index_size: 10 * 1024 * 1024,
            index_interval_bytes: 4096,
            preallocate: false,
            retention_bytes: -1,
            retention_ms: 604_800_000,
            file_delete_delay_ms: 60_000,
        }
    }
}

impl LogConfig {
    /// Kafka's `randomSegmentJitter()`: 0 if `segment_jitter_ms` is 0, otherwise a random
    /// value in `[0, min(segment_jitter_ms, segment_ms))` milliseconds.
    pub fn random_segment_jitter(&self) -> i64 {
        if self.segment_jitter_ms <= 0 {
            return 0;
        }
        let bound = self.segment_jitter_ms.min(self.segment_ms).max(1);
        let r = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        (r % bound as u64) as i64
    }
}

/// The arguments of [`LogSegment::should_roll`](crate::LogSegment::should_roll) (Kafka's
/// `RollParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollParams {
    /// `segment.ms` (or `min(max.compaction.lag.ms, segment.ms)` for compacted topics), ms.
    pub max_segment_ms: i64,
    /// `segment.bytes`, bytes.
    pub max_segment_bytes: u64,
    /// Largest timestamp among the incoming batches, ms since epoch (−1 if none).
    pub max_timestamp_in_messages: i64,
    /// Largest offset among the incoming batches.
    pub max_offset_in_messages: i64,
    /// Size of the incoming batches, bytes.
    pub messages_size: u64,
    /// Current time, ms since epoch.
    pub now: i64,
}
