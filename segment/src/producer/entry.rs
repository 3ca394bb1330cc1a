//! Per-producer entries (Kafka's `ProducerStateEntry` and `BatchMetadata`).

use std::collections::VecDeque;

use super::snapshot::SnapshotEntry;
use super::NUM_BATCHES_TO_RETAIN;

/// The metadata of one batch of a producer (Kafka's `BatchMetadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchMetadata {
    /// Last sequence of the batch (−1 = none).
    pub last_seq: i32,
    /// Last offset of the batch.
    pub last_offset: i64,
    /// Last offset − first offset.
    pub offset_delta: i32,
    /// Max timestamp of the batch, ms since epoch.
    pub timestamp: i64,
}

impl BatchMetadata {
    /// First sequence (`last_seq − offset_delta`, wrapping like Kafka's
    /// `decrementSequence`).
    pub fn first_seq(&self) -> i32 {
        if self.last_seq < 0 {
            return -1;
        }
        let d = self.offset_delta;
        if self.last_seq < d {
            i32::MAX - (d - self.last_seq) + 1
        } else {
            self.last_seq - d
        }
    }

    /// First offset of the batch.
    pub fn first_offset(&self) -> i64 {
        self.last_offset - i64::from(self.offset_delta)
    }
}

/// What the partition knows about one producer id (Kafka's `ProducerStateEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerStateEntry {
    /// Producer id.
    pub producer_id: i64,
    /// Latest producer epoch seen.
    pub producer_epoch: i16,
    /// Coordinator epoch of the last transaction marker (−1 = none).
    pub coordinator_epoch: i32,
    /// Timestamp of the last batch or marker, ms since epoch (−1 = none).
    pub last_timestamp: i64,
    /// First offset of the ongoing transaction, if any.
    pub current_txn_first_offset: Option<i64>,
    batch_metadata: VecDeque<BatchMetadata>,
    /// Order in which the producer entered the map (for Kafka's snapshot entry order).
    pub(super) insertion: u64,
}

impl ProducerStateEntry {
    /// A producer with no batch seen (Kafka's `ProducerStateEntry.empty`).
    pub fn empty(producer_id: i64) -> Self {
        ProducerStateEntry {
            producer_id,
            producer_epoch: -1,
            coordinator_epoch: -1,
            last_timestamp: -1,
            current_txn_first_offset: None,
            batch_metadata: VecDeque::new(),
            insertion: 0,
        }
    }

    /// The retained batches, oldest first (at most [`NUM_BATCHES_TO_RETAIN`]).
    pub fn batch_metadata(&self) -> impl Iterator<Item = &BatchMetadata> {
        self.batch_metadata.iter()
    }

    /// Last sequence of the last batch (−1 = none).
    pub fn last_seq(&self) -> i32 {
        self.batch_metadata.back().map_or(-1, |b| b.last_seq)
    }

    /// Last offset of the last batch (−1 = none).
    pub fn last_data_offset(&self) -> i64 {
        self.batch_metadata.back().map_or(-1, |b| b.last_offset)
    }

    /// Offset delta of the last batch (0 = none).
    pub fn last_offset_delta(&self) -> i32 {
        self.batch_metadata.back().map_or(0, |b| b.offset_delta)
    }

    pub(super) fn maybe_update_producer_epoch(&mut self, epoch: i16) {
        if self.producer_epoch != epoch {
            self.batch_metadata.clear();
            self.producer_epoch = epoch;
        }
    }

    pub(super) fn add_batch(&mut self, epoch: i16, b: BatchMetadata) {
        self.maybe_update_producer_epoch(epoch);
        if self.batch_metadata.len() == NUM_BATCHES_TO_RETAIN {
            self.batch_metadata.pop_front();
        }
        self.batch_metadata.push_back(b);
        self.last_timestamp = b.timestamp;
    }

    /// The snapshot form (Kafka's `writeSnapshot`: only the last batch is kept).
    pub fn to_snapshot_entry(&self) -> SnapshotEntry {
        SnapshotEntry {
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            last_sequence: self.last_seq(),
            last_offset: self.last_data_offset(),
            offset_delta: self.last_offset_delta(),
            timestamp: self.last_timestamp,
            coordinator_epoch: self.coordinator_epoch,
            current_txn_first_offset: self.current_txn_first_offset.unwrap_or(-1),
        }
    }

    /// From a snapshot entry (Kafka's `readSnapshot`: a negative last offset means no batch,
    /// a negative transaction first offset no ongoing transaction).
    pub fn from_snapshot_entry(e: &SnapshotEntry) -> Self {
        let mut batch_metadata = VecDeque::new();
        if e.last_offset >= 0 {
            batch_metadata.push_back(BatchMetadata {
                last_seq: e.last_sequence,
                last_offset: e.last_offset,
                offset_delta: e.offset_delta,
                timestamp: e.timestamp,
            });
        }
        ProducerStateEntry {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            coordinator_epoch: e.coordinator_epoch,
            last_timestamp: e.timestamp,
            current_txn_first_offset: (e.current_txn_first_offset >= 0)
                .then_some(e.current_txn_first_offset),
            batch_metadata,
            insertion: 0,
        }
    }
}
