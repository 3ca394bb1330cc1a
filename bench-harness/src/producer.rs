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

/// A batch remembered by [`SegmentModel`] to translate consumer positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RecentBatch {
    base_offset: i64,
    last_offset: i64,
    position: u64,
    max_timestamp: i64,
}

/// The producer and the segment's indexing rule, plus a window of recent batches used to
/// translate consumer offsets into timestamps and byte positions of the log into offsets.
///
/// Cloning a model clones its random stream: the clone produces the same batches.
#[derive(Clone, Debug)]
pub struct SegmentModel {
    cfg: ProducerConfig,
    rng: StdRng,
    next_offset: i64,
    position: u64,
    timestamp: i64,
    bytes_since_last_entry: u64,
    max_timestamp_so_far: i64,
    offset_of_max_timestamp: i64,
    recent: VecDeque<RecentBatch>,
    recent_capacity: usize,
    history_bytes: u64,
}

impl SegmentModel {
    /// Number of recent batches remembered for offset-to-timestamp translation (at least
    /// this many offsets, since every batch holds at least one record).
    pub const RECENT_BATCHES: usize = 1 << 16;

    /// A segment model driven by a `StdRng` seeded with `seed`.
    pub fn new(cfg: ProducerConfig, seed: u64) -> Self {
        Self::with_history_bytes(cfg, seed, 0)
    }

    /// A segment model that also remembers every batch of the last `history_bytes` bytes
    /// of log (besides the last [`SegmentModel::RECENT_BATCHES`] batches), so that
    /// [`SegmentModel::offset_at_position`] and [`SegmentModel::timestamp_of`] are exact
    /// for consumers up to `history_bytes` bytes behind the log end. The batches produced
    /// are the same as with [`SegmentModel::new`].
    pub fn with_history_bytes(cfg: ProducerConfig, seed: u64, history_bytes: u64) -> Self {
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
            history_bytes,
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
        self.recent.push_back(RecentBatch {
            base_offset: batch.base_offset,
            last_offset: batch.last_offset,
            position: batch.position,
            max_timestamp: batch.max_timestamp,
        });
        // Forget the oldest batch once more than the window's batches are kept and the
        // batch after it still starts at least `history_bytes` before the log end.
        let keep_from = self.position.saturating_sub(self.history_bytes);
        while self.recent.len() > self.recent_capacity
            && self.recent.get(1).is_some_and(|b| b.position <= keep_from)
        {
            self.recent.pop_front();
        }
        point
    }

    /// The timestamp (ms since epoch) of the batch holding `offset`, looked up among the
    /// remembered batches (the last [`SegmentModel::RECENT_BATCHES`], or the last
    /// `history_bytes` bytes of log, whichever is more); offsets older than that window map
    /// to the oldest remembered batch, offsets past the end to the newest. `None` before
    /// the first batch.
    pub fn timestamp_of(&self, offset: i64) -> Option<i64> {
        let i = self.recent.partition_point(|b| b.last_offset < offset);
        self.recent
            .get(i.min(self.recent.len().checked_sub(1)?))
            .map(|b| b.max_timestamp)
    }

    /// The offset a consumer reading at byte `position` of the log fetches: the base
    /// offset of the batch holding that byte; the log end offset for a position at or past
    /// the end of the segment. Positions older than the remembered batches (see
    /// [`SegmentModel::with_history_bytes`]) map to the oldest remembered batch. `None`
    /// before the first batch.
    pub fn offset_at_position(&self, position: u64) -> Option<i64> {
        if self.recent.is_empty() {
            return None;
        }
        if position >= self.position {
            return Some(self.next_offset);
        }
        let i = self.recent.partition_point(|b| b.position <= position);
        self.recent.get(i.saturating_sub(1)).map(|b| b.base_offset)
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

    #[test]
    fn positions_translate_to_the_batch_holding_them() {
        let cfg = ProducerConfig {
            index_interval_bytes: 4096,
            ..ProducerConfig::default()
        };
        // 64 MiB of history: more than RECENT_BATCHES batches of ~600 bytes.
        let mut m = SegmentModel::with_history_bytes(cfg.clone(), 3, 64 << 20);
        let mut plain = SegmentModel::new(cfg, 3);
        let mut points = Vec::new();
        while m.segment_bytes() < 100 << 20 {
            let p = m.next_index_point().unwrap();
            assert_eq!(Some(p), plain.next_index_point(), "same batches");
            points.push(p);
        }
        let end = m.segment_bytes();
        assert_eq!(m.offset_at_position(end), Some(m.log_end_offset()));
        assert_eq!(m.offset_at_position(end + 5), Some(m.log_end_offset()));
        // Every index point within the history: its batch starts at its position.
        let mut checked = 0;
        for p in points
            .iter()
            .filter(|p| u64::from(p.position) + (64 << 20) >= end)
        {
            let o = m.offset_at_position(u64::from(p.position)).unwrap();
            // The batch holding the point's position ends at the point's offset.
            assert!(o <= p.offset, "{o} > {}", p.offset);
            assert_eq!(m.offset_at_position(u64::from(p.position) + 1), Some(o));
            assert!(m.offset_at_position(u64::from(p.position).saturating_sub(1)) < Some(o));
            checked += 1;
        }
        assert!(checked > 10_000, "{checked}");
        // Offsets grow with positions.
        let mut last = 0;
        for back in (0..(60u64 << 20)).rev().step_by(997) {
            let o = m.offset_at_position(end - back).unwrap();
            assert!(o >= last);
            last = o;
        }
    }
}
