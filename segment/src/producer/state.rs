//! [`ProducerStateManager`] (Kafka's `ProducerStateManager`): the per-producer entries,
//! ongoing transactions, map end offset and snapshot files of a partition, and
//! [`CompletedTxn`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use index_txn::AbortedTxn;

use super::entry::{BatchMetadata, ProducerStateEntry};
use super::snapshot::{self, SnapshotEntry};
use super::DEFAULT_PRODUCER_ID_EXPIRATION_MS;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchInfo;
use crate::fs::FileSystem;
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

/// Kafka's `ProducerStateManager` for batches replicated or recovered (no sequence or epoch
/// validation: the leader did it): per-producer entries, ongoing transactions by first
/// offset, the map end offset, and — when given a directory — the snapshot files.
///
/// Snapshot entries are written in the iteration order of Kafka's producer `HashMap`
/// (bucket of the producer id's Java hash for the table size the map has grown to, then
/// insertion order), so a snapshot of the same state is byte-identical to Kafka's as long
/// as no bucket holds 8 or more producers in a table of 64 or more buckets (Java then
/// turns the bucket into a tree, whose order is not modelled).
///
/// Deviations from Kafka:
/// * a snapshot that is truncated, corrupt or has bytes after its entries is ignored with a
///   warning and deleted, as Kafka does; a snapshot that cannot be read (permissions) is
///   ignored but kept.
///
/// Without a directory ([`new`](Self::new)) it is a purely in-memory state (used to rebuild
/// a single segment's transaction index).
#[derive(Clone, Debug)]
pub struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerStateEntry>,
    /// Ongoing transactions: first offset → producer id (Kafka's `ongoingTxns`).
    ongoing: BTreeMap<i64, i64>,
    /// Decided transactions whose marker the high watermark has not passed yet: first
    /// offset → last offset (the marker's offset; Kafka's `unreplicatedTxns`).
    unreplicated: BTreeMap<i64, i64>,
    map_end_offset: i64,
    last_snap_offset: i64,
    snapshots: BTreeMap<i64, PathBuf>,
    dir: Option<PathBuf>,
    producer_id_expiration_ms: i64,
    /// Next insertion number, and the largest number of producers held at once (the Java
    /// `HashMap` table never shrinks).
    next_insertion: u64,
    max_producers: usize,
}

impl Default for ProducerStateManager {
    fn default() -> Self {
        ProducerStateManager {
            producers: BTreeMap::new(),
            ongoing: BTreeMap::new(),
            unreplicated: BTreeMap::new(),
            map_end_offset: 0,
            last_snap_offset: 0,
            snapshots: BTreeMap::new(),
            dir: None,
            producer_id_expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            next_insertion: 0,
            max_producers: 0,
        }
    }
}

impl ProducerStateManager {
    /// Empty in-memory state with map end offset 0 and no snapshot directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// State of the partition directory `dir`: empty, map end offset 0, knowing the
    /// snapshot files in `dir` (Kafka's constructor, `loadSnapshots`). Load them with
    /// [`truncate_and_reload`](Self::truncate_and_reload) or [`rebuild_producer_state`].
    /// `producer_id_expiration_ms` is Kafka's `producer.id.expiration.ms`: producers
    /// without an ongoing transaction whose last timestamp is that old are dropped when a
    /// snapshot is loaded.
    ///
    /// # Errors
    /// [`SegmentError::Io`] if `dir` cannot be listed.
    ///
    /// [`rebuild_producer_state`]: crate::log::rebuild_producer_state
    pub fn open(dir: &Path, producer_id_expiration_ms: i64) -> Result<Self> {
        Ok(ProducerStateManager {
            snapshots: snapshot::list_snapshot_files(dir)?,
            dir: Some(dir.to_path_buf()),
            producer_id_expiration_ms,
            ..Self::default()
        })
    }

    /// Records that `producer_id` has an ongoing transaction whose first offset is
    /// `first_offset` (no-op if one is already ongoing), e.g. to model a transaction that
    /// started in an earlier segment.
    pub fn begin_txn(&mut self, producer_id: i64, first_offset: i64) {
        let e = self.entry_or_insert(producer_id);
        if e.current_txn_first_offset.is_none() {
            e.current_txn_first_offset = Some(first_offset);
            self.ongoing.insert(first_offset, producer_id);
        }
    }

    /// Ongoing transactions as `(producer_id, first_offset)`, by producer id.
    pub fn ongoing_txns(&self) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = self.ongoing.iter().map(|(&o, &p)| (p, o)).collect();
        v.sort_unstable();
        v
    }

    /// The producers known, by producer id (Kafka's `activeProducers`).
    pub fn active_producers(&self) -> &BTreeMap<i64, ProducerStateEntry> {
        &self.producers
    }

    /// Whether no producer is known.
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }

    /// Next offset after the last batch applied (Kafka's `mapEndOffset`).
    pub fn map_end_offset(&self) -> i64 {
        self.map_end_offset
    }

    /// Sets the map end offset (Kafka's `updateMapEndOffset`).
    pub fn set_map_end_offset(&mut self, offset: i64) {
        self.map_end_offset = offset;
    }

    /// The first offset of the earliest ongoing transaction (Kafka's
    /// `firstUndecidedOffset`).
    pub fn first_undecided_offset(&self) -> Option<i64> {
        self.ongoing.keys().next().copied()
    }

    /// The first offset of the earliest transaction that is ongoing, or decided with a
    /// marker the high watermark has not passed (Kafka's `firstUnstableOffset`: the
    /// earlier of `ongoingTxns` and `unreplicatedTxns`). A log whose high watermark
    /// follows its end passes every marker at once, so there it equals
    /// [`first_undecided_offset`](Self::first_undecided_offset)
    /// (`docs/kafka-behaviour.md#unreplicated-transactions`).
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let a = self.ongoing.keys().next().copied();
        let b = self.unreplicated.keys().next().copied();
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    /// Kafka's `onHighWatermarkUpdated`: the decided transactions whose marker is below
    /// `high_watermark` are no longer unstable (`removeUnreplicatedTransactions`).
    pub fn on_high_watermark_updated(&mut self, high_watermark: i64) {
        self.unreplicated.retain(|_, last| *last >= high_watermark);
    }

    /// Detaches the state from its snapshot directory and returns it: until
    /// [`set_snapshot_dir`](Self::set_snapshot_dir) gives it back,
    /// [`take_snapshot`](Self::take_snapshot) writes nothing (a rebuild that must not
    /// fsync, as `truncate_to`'s before it publishes the lowered log end).
    pub(crate) fn take_snapshot_dir(&mut self) -> Option<PathBuf> {
        self.dir.take()
    }

    /// Gives back the directory [`take_snapshot_dir`](Self::take_snapshot_dir) took.
    pub(crate) fn set_snapshot_dir(&mut self, dir: Option<PathBuf>) {
        self.dir = dir;
    }

    /// Kafka's `lastStableOffset(completedTxn)`: the first offset of the earliest ongoing
    /// transaction of *another* producer, else `completed.last_offset + 1`.
    pub fn last_stable_offset(&self, completed: &CompletedTxn) -> i64 {
        self.ongoing
            .iter()
            .find(|(_, &p)| p != completed.producer_id)
            .map_or(completed.last_offset + 1, |(&o, _)| o)
    }

    /// Applies one batch (Kafka's `prepareUpdate` + `ProducerAppendInfo.append` +
    /// `update`, replication origin) and sets the map end offset to the batch's last
    /// offset + 1. `marker` is the batch's end-transaction marker, if it is one. Returns
    /// the transaction the marker completes, if it had data; the caller computes the LSO
    /// with [`last_stable_offset`](Self::last_stable_offset), writes the index entry and
    /// then calls [`complete_txn`](Self::complete_txn). Batches without a producer id only
    /// move the map end offset.
    pub fn update(
        &mut self,
        batch: &BatchInfo,
        marker: Option<&EndTransactionMarker>,
    ) -> Option<CompletedTxn> {
        self.map_end_offset = batch.last_offset + 1;
        if batch.producer_id < 0 {
            return None;
        }
        let pid = batch.producer_id;
        let e = self.entry_or_insert(pid);
        if batch.is_control {
            let Some(m) = marker else {
                // A control batch without a transaction marker (Kafka: an empty control
                // batch, or a non-marker control record) changes no producer state.
                return None;
            };
            let done = e.current_txn_first_offset.map(|first| CompletedTxn {
                producer_id: pid,
                first_offset: first,
                last_offset: batch.base_offset,
                is_aborted: m.control_type == ControlRecordType::Abort,
            });
            e.maybe_update_producer_epoch(batch.producer_epoch);
            e.coordinator_epoch = m.coordinator_epoch;
            e.last_timestamp = batch.max_timestamp;
            e.current_txn_first_offset = None;
            return done;
        }
        let delta = i32::try_from(batch.last_offset - batch.base_offset).unwrap_or(i32::MAX);
        e.add_batch(
            batch.producer_epoch,
            BatchMetadata {
                last_seq: batch.last_sequence,
                last_offset: batch.last_offset,
                offset_delta: delta,
                timestamp: batch.max_timestamp,
            },
        );
        match (e.current_txn_first_offset, batch.is_transactional) {
            (None, true) => {
                e.current_txn_first_offset = Some(batch.base_offset);
                self.ongoing.insert(batch.base_offset, pid);
            }
            (Some(first), false) => {
                // Kafka throws InvalidTxnStateException here; a replica keeps the data and
                // the transaction stays open until its marker.
                tracing::warn!(
                    producer_id = pid,
                    offset = batch.base_offset,
                    txn_first_offset = first,
                    "non-transactional batch from a producer with an ongoing transaction"
                );
            }
            _ => {}
        }
        None
    }

    /// Removes the completed transaction from the ongoing set (Kafka's `completeTxn`).
    pub fn complete_txn(&mut self, completed: &CompletedTxn) {
        if self.ongoing.get(&completed.first_offset) == Some(&completed.producer_id) {
            self.ongoing.remove(&completed.first_offset);
            self.unreplicated
                .insert(completed.first_offset, completed.last_offset);
        }
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

    /// The snapshot files known, by offset.
    pub fn snapshot_offsets(&self) -> Vec<i64> {
        self.snapshots.keys().copied().collect()
    }

    /// Offset of the latest snapshot file, if any.
    pub fn latest_snapshot_offset(&self) -> Option<i64> {
        self.snapshots.keys().next_back().copied()
    }

    /// The snapshot form of the current state, in the order Kafka writes it (see the type
    /// docs).
    pub fn snapshot_entries(&self) -> Vec<SnapshotEntry> {
        let mask = self.java_table_size() - 1;
        let mut v: Vec<&ProducerStateEntry> = self.producers.values().collect();
        v.sort_by_key(|e| (java_long_hash(e.producer_id) as u64 & mask, e.insertion));
        v.into_iter()
            .map(ProducerStateEntry::to_snapshot_entry)
            .collect()
    }

    fn clear(&mut self) {
        self.producers.clear();
        self.ongoing.clear();
        self.unreplicated.clear();
    }

    fn load_entry(&mut self, mut e: ProducerStateEntry) {
        if let Some(first) = e.current_txn_first_offset {
            self.ongoing.insert(first, e.producer_id);
        }
        if let Some(old) = self.producers.get(&e.producer_id) {
            e.insertion = old.insertion;
        } else {
            e.insertion = self.next_insertion;
            self.next_insertion += 1;
        }
        self.producers.insert(e.producer_id, e);
        self.max_producers = self.max_producers.max(self.producers.len());
    }

    fn entry_or_insert(&mut self, pid: i64) -> &mut ProducerStateEntry {
        if !self.producers.contains_key(&pid) {
            self.load_entry(ProducerStateEntry::empty(pid));
        }
        self.producers.get_mut(&pid).expect("just inserted")
    }

    /// Table size of Kafka's producer `HashMap` after holding `max_producers` entries
    /// (16, doubled whenever the size exceeds 3/4 of it).
    fn java_table_size(&self) -> u64 {
        let mut cap: u64 = 16;
        while self.max_producers as u64 > cap / 4 * 3 {
            cap *= 2;
        }
        cap
    }

    fn is_expired(&self, now_ms: i64, e: &ProducerStateEntry) -> bool {
        e.current_txn_first_offset.is_none()
            && now_ms.saturating_sub(e.last_timestamp) >= self.producer_id_expiration_ms
    }

    /// Kafka's `removeExpiredProducers`: drops producers without an ongoing transaction
    /// whose last timestamp is at least `producer.id.expiration.ms` before `now_ms`.
    pub fn remove_expired_producers(&mut self, now_ms: i64) {
        let expired: Vec<i64> = self
            .producers
            .values()
            .filter(|e| self.is_expired(now_ms, e))
            .map(|e| e.producer_id)
            .collect();
        for p in expired {
            self.producers.remove(&p);
        }
    }

    /// Writes a snapshot at the map end offset unless one at or beyond it was already
    /// taken (Kafka's `takeSnapshot`). Returns the file written. A state without a
    /// directory writes nothing.
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn take_snapshot(&mut self, fs: &dyn FileSystem) -> Result<Option<PathBuf>> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        if self.map_end_offset <= self.last_snap_offset {
            return Ok(None);
        }
        let path = snapshot::producer_snapshot_file(dir, self.map_end_offset);
        let bytes = snapshot::encode_snapshot(&self.snapshot_entries());
        snapshot::write_file_atomically(fs, &path, &bytes)?;
        tracing::debug!(file = %path.display(), producers = self.producers.len(), "wrote producer snapshot");
        self.snapshots.insert(self.map_end_offset, path.clone());
        self.last_snap_offset = self.map_end_offset;
        Ok(Some(path))
    }

    /// [`take_snapshot`](Self::take_snapshot), deferring it when it cannot be written:
    /// a failure to create, write, fsync or rename the snapshot's temporary file (a full
    /// disk, no descriptor left) leaves this state unchanged — no snapshot is recorded and
    /// the last snapshot offset does not move — so the next `take_snapshot` (on roll or
    /// close) writes it at its own map end offset. A snapshot only shortens a later
    /// rebuild, so the deferral costs time, never state. A failed fsync of the directory
    /// after the rename is not deferred: it is returned, as every directory fsync error
    /// is (`docs/kafka-behaviour.md#deferred-snapshots`). Returns whether it was written.
    ///
    /// # Errors
    /// [`SegmentError::Io`] from the directory fsync.
    pub fn take_snapshot_or_defer(&mut self, fs: &dyn FileSystem) -> Result<bool> {
        match self.take_snapshot(fs) {
            Ok(_) => Ok(true),
            Err(SegmentError::Io { op, path, source }) if op != "fsync dir" => {
                tracing::warn!(file = %path.display(), error = %source, op, "could not write a producer snapshot; deferring it to the next roll or close");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Deletes the snapshot file at `offset`, if known (Kafka's `removeAndDeleteSnapshot`;
    /// used for the base offsets of segments deleted by retention).
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn remove_and_delete_snapshot(&mut self, fs: &dyn FileSystem, offset: i64) -> Result<()> {
        if let Some(p) = self.snapshots.remove(&offset) {
            crate::fs::remove_if_exists_with(fs, &p)?;
        }
        Ok(())
    }

    /// Kafka's `removeStraySnapshots`: deletes every snapshot whose offset is not a
    /// segment base offset, except the latest stray one if it is above the last base
    /// offset (the snapshot at the log end).
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn remove_stray_snapshots(
        &mut self,
        fs: &dyn FileSystem,
        segment_base_offsets: &[i64],
    ) -> Result<()> {
        if let Some(dir) = &self.dir {
            self.snapshots = snapshot::list_snapshot_files(dir)?;
        }
        let max_base = segment_base_offsets.iter().max().copied();
        let strays: Vec<i64> = self
            .snapshots
            .keys()
            .copied()
            .filter(|o| !segment_base_offsets.contains(o))
            .collect();
        if let Some((&latest, rest)) = strays.split_last() {
            for &o in rest {
                self.remove_and_delete_snapshot(fs, o)?;
            }
            if max_base.is_some_and(|m| latest < m) {
                self.remove_and_delete_snapshot(fs, latest)?;
            }
        }
        Ok(())
    }

    /// Kafka's `truncateAndReload`: deletes the snapshots above `log_end_offset` or at or
    /// below `log_start_offset`; then, unless the state already ends at `log_end_offset`,
    /// clears it and loads the latest remaining snapshot (skipping and deleting corrupt
    /// ones; none: empty at `log_start_offset`). Producers expired at `now_ms` are not
    /// loaded.
    ///
    /// # Errors
    /// [`SegmentError::Io`] when deleting a snapshot fails.
    pub fn truncate_and_reload(
        &mut self,
        fs: &dyn FileSystem,
        log_start_offset: i64,
        log_end_offset: i64,
        now_ms: i64,
    ) -> Result<()> {
        let out_of_range: Vec<i64> = self
            .snapshots
            .keys()
            .copied()
            .filter(|&o| o > log_end_offset || o <= log_start_offset)
            .collect();
        for o in out_of_range {
            self.remove_and_delete_snapshot(fs, o)?;
        }
        if log_end_offset != self.map_end_offset {
            self.clear();
            self.load_from_snapshot(fs, log_start_offset, now_ms)?;
        } else {
            self.on_log_start_offset_incremented(log_start_offset);
        }
        Ok(())
    }

    fn load_from_snapshot(
        &mut self,
        fs: &dyn FileSystem,
        log_start_offset: i64,
        now_ms: i64,
    ) -> Result<()> {
        let mut unreadable = Vec::new();
        loop {
            let Some((&offset, path)) = self
                .snapshots
                .iter()
                .rev()
                .find(|(o, _)| !unreadable.contains(*o))
            else {
                self.last_snap_offset = log_start_offset;
                self.map_end_offset = log_start_offset;
                return Ok(());
            };
            let path = path.clone();
            let bytes = match crate::fs::read_file_with(fs, &path) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "cannot read producer snapshot; ignoring it");
                    unreadable.push(offset);
                    continue;
                }
            };
            match snapshot::decode_snapshot(&bytes) {
                Ok(entries) => {
                    tracing::info!(file = %path.display(), "loading producer state from snapshot");
                    for e in &entries {
                        let e = ProducerStateEntry::from_snapshot_entry(e);
                        if !self.is_expired(now_ms, &e) {
                            self.load_entry(e);
                        }
                    }
                    self.last_snap_offset = offset;
                    self.map_end_offset = offset;
                    return Ok(());
                }
                Err(err) => {
                    tracing::warn!(file = %path.display(), error = %err, "failed to load producer snapshot; deleting it");
                    self.remove_and_delete_snapshot(fs, offset)?;
                }
            }
        }
    }

    /// Kafka's `onLogStartOffsetIncremented`: moves the map end offset up to the new log
    /// start if it is below it.
    pub fn on_log_start_offset_incremented(&mut self, log_start_offset: i64) {
        self.on_high_watermark_updated(log_start_offset);
        if self.map_end_offset < log_start_offset {
            self.map_end_offset = log_start_offset;
        }
        self.last_snap_offset = self.latest_snapshot_offset().unwrap_or(log_start_offset);
    }

    /// Kafka's `truncateFullyAndStartAt`: forgets every producer, deletes every snapshot,
    /// and starts at `offset`.
    ///
    /// # Errors
    /// [`SegmentError::Io`].
    pub fn truncate_fully_and_start_at(&mut self, fs: &dyn FileSystem, offset: i64) -> Result<()> {
        self.clear();
        for o in self.snapshot_offsets() {
            self.remove_and_delete_snapshot(fs, o)?;
        }
        self.last_snap_offset = 0;
        self.map_end_offset = offset;
        Ok(())
    }
}

/// `HashMap.hash(Long.valueOf(v))` in Java: the long's hash spread by its high bits.
fn java_long_hash(v: i64) -> u32 {
    let h = (v ^ ((v as u64) >> 32) as i64) as u32;
    h ^ (h >> 16)
}
