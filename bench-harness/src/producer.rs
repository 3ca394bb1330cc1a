//! A deterministic model of a producer writing batches into one log segment, and of the
//! segment deciding when to add index entries (Kafka's `LogSegment.append`).
//!
//! Batches carry 1..=`max_records_per_batch` records of random size; their byte positions
//! grow by the batch sizes and their timestamps grow by 0..=`max_ms_per_batch`
//! milliseconds. The segment adds an index point before a batch whenever more than
//! `index_interval_bytes` bytes were appended since the last one, exactly as Kafka does:
//!
//! ```text
//! if bytesSinceLastIndexEntry > indexIntervalBytes:
//!     offsetIndex.append(batch.lastOffset, batch.position)
//!     timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar)
//!     bytesSinceLastIndexEntry = 0
//! bytesSinceLastIndexEntry += batch.sizeInBytes
//! ```

use std::collections::VecDeque;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Size of a v2 record-batch header in bytes (Kafka's `RECORD_BATCH_OVERHEAD`).
pub const BATCH_OVERHEAD_BYTES: u32 = 61;

/// Kafka's maximum segment size (`segment.bytes` is an `Int`): positions stay below it.
pub const MAX_SEGMENT_BYTES: u64 = i32::MAX as u64;

/// Parameters of the producer model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    /// Base offset of the segment (absolute offset of its first record).
    pub base_offset: i64,
    /// Timestamp of the first batch, in ms since the epoch.
    pub start_timestamp_ms: i64,
    /// Records per batch are drawn uniformly from `1..=max_records_per_batch`.
    pub max_records_per_batch: u32,
    /// Record sizes are drawn uniformly from `min_record_bytes..=max_record_bytes` bytes.
    pub min_record_bytes: u32,
    /// Upper bound of the record size, in bytes.
    pub max_record_bytes: u32,
    /// Each batch's timestamp is the previous one plus `0..=max_ms_per_batch` ms.
    pub max_ms_per_batch: i64,
    /// Kafka's `index.interval.bytes`: an index point is added before a batch once more
    /// than this many bytes were appended since the last point.
    pub index_interval_bytes: u32,
}

impl Default for ProducerConfig {
    /// Small batches (1..=10 records of 50..=150 bytes, about 600 bytes per batch) and a
    /// 512-byte index interval, so that a 10 MiB offset index (1,310,720 entries) fills up
    /// within a 2 GiB segment (positions are `u32`; Kafka caps segments at
    /// `Int.MaxValue` bytes). With Kafka's default interval of 4096 bytes a 10 MiB offset
    /// index cannot fill before the segment does. Page touches depend only on the number
    /// of entries and their keys, not on the interval.
    fn default() -> Self {
        ProducerConfig {
            base_offset: 0,
            start_timestamp_ms: 1_700_000_000_000,
            max_records_per_batch: 10,
            min_record_bytes: 50,
            max_record_bytes: 150,
            max_ms_per_batch: 2,
            index_interval_bytes: 512,
        }
    }
}

/// One record batch appended to the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Absolute offset of the first record.
    pub base_offset: i64,
    /// Absolute offset of the last record.
    pub last_offset: i64,
    /// Byte position of the batch start in the `.log` file.
    pub position: u64,
    /// Size of the batch in bytes.
    pub size_bytes: u32,
    /// Largest record timestamp in the batch, in ms since the epoch.
    pub max_timestamp: i64,
}

/// An index point produced by the segment: what Kafka appends to both indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexPoint {
    /// Offset-index key: last offset of the batch being appended (absolute).
    pub offset: i64,
    /// Offset-index value: byte position of that batch in the `.log` file.
    pub position: u32,
    /// Time-index key: largest timestamp seen in the segment so far (ms since epoch).
    pub max_timestamp: i64,
    /// Time-index value: offset of the batch holding that timestamp (absolute; Kafka 3.8+
    /// stores the batch's last offset).
    pub offset_of_max_timestamp: i64,
}

/// The producer and the segment's indexing rule, plus a window of recent batches used to
/// translate consumer offsets into timestamps.
#[derive(Debug)]
pub struct SegmentModel {
    cfg: ProducerConfig,
    rng: StdRng,
    next_offset: i64,
    position: u64,
    timestamp: i64,
    bytes_since_last_entry: u64,
    max_timestamp_so_far: i64,
    offset_of_max_timestamp: i64,
    recent: VecDeque<(i64, i64)>,
    recent_capacity: usize,
}

impl SegmentModel {
    /// Number of recent batches remembered for offset-to-timestamp translation (at least
    /// this many offsets, since every batch holds at least one record).
    pub const RECENT_BATCHES: usize = 1 << 16;

    /// A segment model driven by a `StdRng` seeded with `seed`.
    pub fn new(cfg: ProducerConfig, seed: u64) -> Self {
        SegmentModel {
            next_offset: cfg.base_offset,
            timestamp: cfg.start_timestamp_ms,
            rng: StdRng::seed_from_u64(seed),
            position: 0,
            bytes_since_last_entry: 0,
            max_timestamp_so_far: i64::MIN,
            offset_of_max_timestamp: cfg.base_offset,
            recent: VecDeque::with_capacity(Self::RECENT_BATCHES),
            recent_capacity: Self::RECENT_BATCHES,
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ProducerConfig {
        &self.cfg
    }

    /// The log end offset: the offset the next record will get.
    pub fn log_end_offset(&self) -> i64 {
        self.next_offset
    }

    /// Bytes written to the segment so far.
    pub fn segment_bytes(&self) -> u64 {
        self.position
    }

    /// Appends batches until one of them gets an index point, and returns that point, or
    /// `None` if the next batch would push the segment past [`MAX_SEGMENT_BYTES`] or the
    /// relative offsets past `i32::MAX` (the segment would roll).
    pub fn next_index_point(&mut self) -> Option<IndexPoint> {
        loop {
            let records = self
                .rng
                .gen_range(1..=self.cfg.max_records_per_batch.max(1));
            let mut size = BATCH_OVERHEAD_BYTES;
            for _ in 0..records {
                size += self.rng.gen_range(
                    self.cfg.min_record_bytes
                        ..=self.cfg.max_record_bytes.max(self.cfg.min_record_bytes),
                );
            }
            if self.position + size as u64 > MAX_SEGMENT_BYTES
                || self.next_offset + records as i64 - self.cfg.base_offset > i32::MAX as i64
            {
                return None;
            }
            self.timestamp += self.rng.gen_range(0..=self.cfg.max_ms_per_batch.max(0));
            let batch = Batch {
                base_offset: self.next_offset,
                last_offset: self.next_offset + records as i64 - 1,
                position: self.position,
                size_bytes: size,
                max_timestamp: self.timestamp,
            };
            if let Some(point) = self.append(batch) {
                return Some(point);
            }
        }
    }

    /// Kafka's `LogSegment.append` bookkeeping for one batch; returns the index point
    /// written before it, if any.
    fn append(&mut self, batch: Batch) -> Option<IndexPoint> {
        if batch.max_timestamp > self.max_timestamp_so_far {
            self.max_timestamp_so_far = batch.max_timestamp;
            self.offset_of_max_timestamp = batch.last_offset;
        }
        let point = if self.bytes_since_last_entry > self.cfg.index_interval_bytes as u64 {
            self.bytes_since_last_entry = 0;
            Some(IndexPoint {
                offset: batch.last_offset,
                position: u32::try_from(batch.position).unwrap_or(u32::MAX),
                max_timestamp: self.max_timestamp_so_far,
                offset_of_max_timestamp: self.offset_of_max_timestamp,
            })
        } else {
            None
        };
        self.bytes_since_last_entry += batch.size_bytes as u64;
        self.position += batch.size_bytes as u64;
        self.next_offset = batch.last_offset + 1;
        if self.recent.len() == self.recent_capacity {
            self.recent.pop_front();
        }
        self.recent
            .push_back((batch.last_offset, batch.max_timestamp));
        point
    }

    /// The timestamp (ms since epoch) of the batch holding `offset`, looked up among the
    /// last [`SegmentModel::RECENT_BATCHES`] batches; offsets older than that window map to
    /// the oldest remembered batch, offsets past the end to the newest. `None` before the
    /// first batch.
    pub fn timestamp_of(&self, offset: i64) -> Option<i64> {
        let i = self.recent.partition_point(|&(last, _)| last < offset);
        self.recent
            .get(i.min(self.recent.len().checked_sub(1)?))
            .map(|&(_, ts)| ts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_points_follow_kafkas_rule_and_are_deterministic() {
        let cfg = ProducerConfig::default();
        let mut a = SegmentModel::new(cfg.clone(), 7);
        let mut b = SegmentModel::new(cfg, 7);
        let mut last: Option<IndexPoint> = None;
        for _ in 0..10_000 {
            let p = a.next_index_point().unwrap();
            assert_eq!(Some(p), b.next_index_point());
            if let Some(l) = last {
                assert!(p.offset > l.offset);
                // More than the interval was written between two points.
                assert!(p.position as u64 - l.position as u64 > 512);
                assert!(p.max_timestamp >= l.max_timestamp);
            }
            last = Some(p);
        }
        let l = last.unwrap();
        assert!(a.log_end_offset() > l.offset);
        assert_eq!(a.timestamp_of(l.offset), Some(l.max_timestamp));
    }
}
