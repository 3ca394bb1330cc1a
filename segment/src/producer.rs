//! Minimal producer-state tracking for recovery (Kafka's `ProducerStateManager`, reduced to
//! what rebuilding a transaction index needs) and the leader-epoch cache.

use std::collections::BTreeMap;

use index_txn::AbortedTxn;

use crate::format::BatchInfo;
use crate::record::{ControlRecordType, EndTransactionMarker};

/// A transaction completed by a COMMIT or ABORT marker (Kafka's `CompletedTxn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompletedTxn {
    /// Producer id.
    pub producer_id: i64,
    /// First offset of the transaction.
    pub first_offset: i64,
    /// Offset of the marker.
    pub last_offset: i64,
    /// Whether the marker was an ABORT.
    pub is_aborted: bool,
}

/// Tracks, per producer id, the first offset of its ongoing transaction, and the map end
/// offset (next offset after the last batch seen).
///
/// Can be pre-seeded with [`begin_txn`](Self::begin_txn) to model transactions that
/// started in earlier segments (case 59, second variant).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProducerStateManager {
    ongoing: BTreeMap<i64, i64>,
    map_end_offset: i64,
}

impl ProducerStateManager {
    /// Empty state with map end offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `producer_id` has an ongoing transaction whose first offset is
    /// `first_offset` (no-op if one is already ongoing).
    pub fn begin_txn(&mut self, producer_id: i64, first_offset: i64) {
        self.ongoing.entry(producer_id).or_insert(first_offset);
    }

    /// Ongoing transactions as `(producer_id, first_offset)`, by producer id.
    pub fn ongoing_txns(&self) -> Vec<(i64, i64)> {
        self.ongoing.iter().map(|(&p, &o)| (p, o)).collect()
    }

    /// Next offset after the last batch applied (Kafka's `mapEndOffset`).
    pub fn map_end_offset(&self) -> i64 {
        self.map_end_offset
    }

    /// Sets the map end offset (e.g. when recovery starts at a later segment).
    pub fn set_map_end_offset(&mut self, offset: i64) {
        self.map_end_offset = offset;
    }

    /// Kafka's `lastStableOffset(completedTxn)`: the smallest first offset among the
    /// *other* producers' ongoing transactions, else `completed.last_offset + 1`.
    pub fn last_stable_offset(&self, completed: &CompletedTxn) -> i64 {
        self.ongoing
            .iter()
            .filter(|(&p, _)| p != completed.producer_id)
            .map(|(_, &o)| o)
            .min()
            .unwrap_or(completed.last_offset + 1)
    }

    /// Applies one batch (magic ≥ 2). `marker` is the batch's end-transaction marker, if
    /// it is one. Returns the transaction the marker completes, if any; the caller computes
    /// the LSO with [`last_stable_offset`](Self::last_stable_offset) and then calls
    /// [`complete_txn`](Self::complete_txn).
    pub fn update(
        &mut self,
        batch: &BatchInfo,
        marker: Option<&EndTransactionMarker>,
    ) -> Option<CompletedTxn> {
        self.map_end_offset = batch.last_offset + 1;
        if batch.producer_id < 0 {
            return None;
        }
        if let Some(m) = marker {
            let first = self.ongoing.get(&batch.producer_id).copied()?;
            return Some(CompletedTxn {
                producer_id: batch.producer_id,
                first_offset: first,
                last_offset: batch.last_offset,
                is_aborted: m.control_type == ControlRecordType::Abort,
            });
        }
        if batch.is_transactional && !batch.is_control {
            self.begin_txn(batch.producer_id, batch.base_offset);
        }
        None
    }

    /// Removes the completed transaction from the ongoing set.
    pub fn complete_txn(&mut self, completed: &CompletedTxn) {
        self.ongoing.remove(&completed.producer_id);
    }

    /// The index entry for an aborted transaction with the given LSO.
    pub fn aborted_entry(completed: &CompletedTxn, last_stable_offset: i64) -> AbortedTxn {
        AbortedTxn::new(
            completed.producer_id,
            completed.first_offset,
            completed.last_offset,
            last_stable_offset,
        )
    }
}

/// A leader-epoch cache: `(epoch, start_offset)` pairs in increasing order (Kafka's
/// `LeaderEpochFileCache`, in memory only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderEpochCache {
    entries: Vec<(i32, i64)>,
}

impl LeaderEpochCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `(epoch, start_offset)` if `epoch` is greater than the latest epoch (or the
    /// cache is empty); otherwise ignores it.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) {
        if self.latest_epoch().is_none_or(|l| epoch > l) {
            self.entries.push((epoch, start_offset));
        }
    }

    /// The latest epoch, if any.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.0)
    }

    /// All entries, oldest first.
    pub fn entries(&self) -> &[(i32, i64)] {
        &self.entries
    }

    /// Removes entries whose start offset is ≥ `offset` (truncation of the log's end).
    pub fn truncate_from_end(&mut self, offset: i64) {
        self.entries.retain(|e| e.1 < offset);
    }
}
