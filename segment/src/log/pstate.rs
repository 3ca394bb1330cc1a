//! The producer state and the leader-epoch cache of a [`Log`]: loading on open, per-segment
//! recovery with snapshots, the append path (transaction index entries, epochs), snapshots
//! on roll and close, and what truncation and retention do to them (Kafka's
//! `UnifiedLog`/`LogLoader` calls into `ProducerStateManager` and `LeaderEpochFileCache`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Log;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, BatchInfo};
use crate::producer::snapshot::{encode_leader_epoch_checkpoint, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::producer::{
    read_leader_epoch_checkpoint_with, rebuild_producer_state, LeaderEpochCache,
    ProducerStateManager,
};
use crate::record::EndTransactionMarker;
use crate::segment::LogSegment;

/// One batch handed to [`Log::append`], as the producer state needs it.
pub(super) struct AppendedBatch {
    pub(super) info: BatchInfo,
    pub(super) marker: Option<EndTransactionMarker>,
}

impl<F: BatchFormat> Log<F> {
    /// Whether this log keeps Kafka's producer state, snapshots and epoch checkpoint.
    fn keeps_producer_state() -> bool {
        F::KAFKA_PRODUCER_STATE
    }

    /// Reads `leader-epoch-checkpoint` into the cache, by Kafka's load rule (each entry
    /// assigned in turn; a file whose entries that rule changes is rewritten). Returns
    /// whether the file was usable (missing or malformed: the cache is rebuilt from the
    /// log after recovery).
    pub(super) fn load_leader_epoch_checkpoint(&self) -> Result<bool> {
        if !Self::keeps_producer_state() {
            return Ok(true);
        }
        let path = self.dir.join(LEADER_EPOCH_CHECKPOINT_FILE);
        match read_leader_epoch_checkpoint_with(&*self.fs, &path)? {
            Some(entries) => {
                // Kafka's load assigns each entry in turn; entries out of order are
                // resolved by `assign` (docs/kafka-behaviour.md#leader-epoch-assign), and
                // the resolved cache is what the checkpoint then holds.
                let cache = LeaderEpochCache::from_entries(entries.clone());
                if cache.entries() != entries.as_slice() {
                    tracing::warn!(file = %path.display(), found = ?entries, kept = ?cache.entries(), "leader-epoch checkpoint entries out of order; rewriting it with the entries Kafka's assign keeps");
                    self.write_leader_epoch_checkpoint(&cache)?;
                }
                *self.epoch_cache.lock() = cache;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub(super) fn write_leader_epoch_checkpoint(&self, cache: &LeaderEpochCache) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        crate::fs::write_atomically_with(
            &*self.fs,
            &self.dir.join(LEADER_EPOCH_CHECKPOINT_FILE),
            encode_leader_epoch_checkpoint(cache.entries()).as_bytes(),
        )
    }

    /// Kafka's `LogLoader.recoverSegment`: a producer state of its own, brought to the
    /// segment's base offset from the latest snapshot at or below it, then the segment's
    /// recovery (which writes its `.txnindex`), then a snapshot at its end.
    pub(super) fn recover_segment_with_state(
        &self,
        seg: &LogSegment<F>,
        log_start_checkpoint: i64,
        before_truncate: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        let mut ps = if Self::keeps_producer_state() {
            let mut ps =
                ProducerStateManager::open(&self.dir, self.config.producer_id_expiration_ms)?;
            rebuild_producer_state(
                &mut ps,
                &self.segments,
                &*self.fs,
                log_start_checkpoint,
                seg.base_offset(),
                self.clock.milliseconds(),
            )?;
            ps
        } else {
            ProducerStateManager::new()
        };
        let n = {
            let mut cache = self.epoch_cache.lock();
            let before = cache.entries().to_vec();
            let n = seg.recover_with(&mut ps, Some(&mut cache), before_truncate)?;
            // Recovery assigns epochs above the latest. Kafka's `assign` writes the
            // checkpoint on every change, also from `LogSegment.recover`: an epoch found
            // only in the batches (its checkpoint write lost in a crash) must not be
            // forgotten by the next clean open, which recovers nothing
            // (docs/kafka-behaviour.md#recovered-epochs-checkpointed).
            if cache.entries() != before.as_slice() {
                self.write_leader_epoch_checkpoint(&cache)?;
            }
            n
        };
        // Only a shortcut for the next recovery: on a full disk it is skipped, and the
        // open goes on (`docs/kafka-behaviour.md#deferred-snapshots`).
        ps.take_snapshot_or_defer(&*self.fs)?;
        Ok(n)
    }

    /// The end of Kafka's `LogLoader.load`: the epoch cache is truncated to the log end and
    /// the log-start-offset checkpoint (or rebuilt from the log if its checkpoint was unusable), stray
    /// snapshots are deleted and the producer state is rebuilt up to the log end offset.
    pub(super) fn load_producer_state(
        &self,
        epoch_checkpoint_usable: bool,
        log_start_checkpoint: i64,
    ) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let leo = self.log_end_offset();
        let start = self.log_start_offset();
        {
            let mut cache = self.epoch_cache.lock();
            let mut changed = !epoch_checkpoint_usable;
            if !epoch_checkpoint_usable {
                *cache = self.scan_leader_epochs()?;
            }
            changed |= cache.truncate_from_end(leo);
            changed |= cache.truncate_from_start(log_start_checkpoint);
            if changed && (!cache.entries().is_empty() || epoch_checkpoint_usable) {
                self.write_leader_epoch_checkpoint(&cache)?;
            }
        }
        let mut ps = ProducerStateManager::open(&self.dir, self.config.producer_id_expiration_ms)?;
        ps.remove_stray_snapshots(&*self.fs, &self.segments.base_offsets())?;
        rebuild_producer_state(
            &mut ps,
            &self.segments,
            &*self.fs,
            start,
            leo,
            self.clock.milliseconds(),
        )?;
        if !self.has_manual_high_watermark() {
            ps.on_high_watermark_updated(leo);
        }
        *self.producer_state.lock() = ps;
        Ok(())
    }

    /// The leader epochs of every v2 batch of the log, by the recovery rule.
    fn scan_leader_epochs(&self) -> Result<LeaderEpochCache> {
        let mut cache = LeaderEpochCache::new();
        for seg in self.segments.values() {
            let mut sc = crate::scan::Scanner::<F>::new(seg.log(), 0);
            while let Some((info, _)) = sc.next_batch()? {
                if info.magic >= 2 {
                    cache.assign_if_newer(info.partition_leader_epoch, info.base_offset);
                }
            }
        }
        Ok(cache)
    }

    /// Producer state and epochs for batches just appended to `active` (Kafka's
    /// `UnifiedLog.append` after `localLog.append`, batch by batch as recovery does):
    /// each ABORT marker that ends a transaction with data gets its `.txnindex` entry with
    /// the LSO of the moment; each new partition leader epoch is assigned and checkpointed.
    ///
    /// A failed `.txnindex` entry takes the log offline: the marker is in the `.log` and
    /// readers may have fetched it, but a read-committed fetch would not learn that its
    /// transaction aborted, so the log refuses service until a reopen rebuilds the index
    /// (rolling the append back would hand the same offsets out twice). A
    /// `leader-epoch-checkpoint` that cannot be written is deferred instead: the cache is
    /// right in memory, the next flush writes the file before the recovery point passes
    /// the batches, and a crash before then recovers the epochs from the batches; only a
    /// failed directory fsync of that write takes the log offline
    /// (`docs/kafka-behaviour.md#offline-rule`).
    pub(super) fn update_state_after_append(
        &self,
        active: &Arc<LogSegment<F>>,
        batches: &[AppendedBatch],
        last_offset: i64,
    ) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let r = (|| {
            let mut ps = self.producer_state.lock();
            let mut cache = self.epoch_cache.lock();
            let mut epochs_changed = false;
            for b in batches {
                if b.info.magic < 2 {
                    // Kafka's `UnifiedLog.append` clears the epochs (and writes the empty
                    // checkpoint) on a magic 0/1 batch, so that the next election falls
                    // back to truncation by high watermark
                    // (docs/kafka-behaviour.md#legacy-append-clears-epochs).
                    epochs_changed |= cache.clear();
                    ps.set_map_end_offset(b.info.last_offset + 1);
                    continue;
                }
                epochs_changed |= cache.assign(b.info.partition_leader_epoch, b.info.base_offset);
                if let Some(done) = ps.update(&b.info, b.marker.as_ref()) {
                    if done.is_aborted {
                        let lso = ps.last_stable_offset(&done);
                        active
                            .append_aborted_txn(&ProducerStateManager::aborted_entry(&done, lso))?;
                    }
                    ps.complete_txn(&done);
                }
            }
            ps.set_map_end_offset(last_offset + 1);
            if !self.has_manual_high_watermark() {
                // The high watermark is the log end: it passes every marker just written.
                ps.on_high_watermark_updated(last_offset + 1);
            }
            if epochs_changed {
                self.epochs_pending.store(true, Ordering::Release);
            }
            Ok(())
        })();
        if let Err(e) = &r {
            tracing::error!(dir = %self.dir.display(), error = %e, "updating producer state after an append failed; the log is now offline");
            self.offline.store(true, Ordering::Release);
            return r;
        }
        match self.write_pending_epochs() {
            Err(SegmentError::Io { op, path, source })
                if op != "fsync dir" || super::flush::is_open_failure_io(&source) =>
            {
                tracing::warn!(file = %path.display(), error = %source, op, "could not write the leader-epoch checkpoint after an append; deferring it to the next flush");
                Ok(())
            }
            Err(e) => {
                tracing::error!(dir = %self.dir.display(), error = %e, "the directory fsync of the leader-epoch checkpoint failed; the log is now offline");
                self.offline.store(true, Ordering::Release);
                Err(e)
            }
            Ok(()) => Ok(()),
        }
    }

    /// Writes `leader-epoch-checkpoint` if an append left it pending (see
    /// [`update_state_after_append`](Self::update_state_after_append)).
    ///
    /// # Errors
    /// [`SegmentError::Io`] (it stays pending).
    pub(super) fn write_pending_epochs(&self) -> Result<()> {
        if self.epochs_pending.load(Ordering::Acquire) {
            let cache = self.epoch_cache.lock();
            self.write_leader_epoch_checkpoint(&cache)?;
            self.epochs_pending.store(false, Ordering::Release);
        }
        Ok(())
    }

    /// Kafka's roll: the producer state's end moves to the new segment's base offset and a
    /// snapshot is taken there.
    pub(super) fn snapshot_on_roll(&self, new_base: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut ps = self.producer_state.lock();
        ps.set_map_end_offset(new_base);
        ps.take_snapshot(&*self.fs)?;
        Ok(())
    }

    /// Kafka's close: a snapshot at the log end offset.
    pub(super) fn snapshot_on_close(&self) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut ps = self.producer_state.lock();
        ps.set_map_end_offset(self.log_end_offset());
        ps.take_snapshot(&*self.fs)?;
        Ok(())
    }

    /// Kafka's `truncateTo` tail: epochs at or above the new end are dropped, snapshots
    /// above it are deleted and the producer state is rebuilt up to it.
    pub(super) fn state_after_truncate_to(&self, leo: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        {
            let mut cache = self.epoch_cache.lock();
            if cache.truncate_from_end(leo) {
                self.write_leader_epoch_checkpoint(&cache)?;
            }
        }
        let mut ps = self.producer_state.lock();
        rebuild_producer_state(
            &mut ps,
            &self.segments,
            &*self.fs,
            self.log_start_offset(),
            leo,
            self.clock.milliseconds(),
        )?;
        if !self.has_manual_high_watermark() {
            ps.on_high_watermark_updated(leo);
        }
        Ok(())
    }

    /// Kafka's `truncateFullyAndStartAt`: no producer, no snapshot, no epoch.
    pub(super) fn state_after_truncate_fully(&self, new_offset: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        {
            let mut cache = self.epoch_cache.lock();
            if cache.clear() {
                self.write_leader_epoch_checkpoint(&cache)?;
            }
        }
        self.producer_state
            .lock()
            .truncate_fully_and_start_at(&*self.fs, new_offset)
    }

    /// Kafka's `deleteProducerSnapshots` for segments deleted by retention: the snapshot
    /// at each deleted segment's base offset goes with it.
    pub(super) fn delete_snapshots_of(&self, deleted: &[Arc<LogSegment<F>>]) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut ps = self.producer_state.lock();
        for s in deleted {
            ps.remove_and_delete_snapshot(&*self.fs, s.base_offset())?;
        }
        Ok(())
    }

    /// Kafka's `maybeIncrementLogStartOffset` side effects: the epoch cache is truncated
    /// from the start and the producer state told.
    pub(super) fn state_after_log_start_incremented(&self, log_start: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        {
            let mut cache = self.epoch_cache.lock();
            if cache.truncate_from_start(log_start) {
                self.write_leader_epoch_checkpoint(&cache)?;
            }
        }
        self.producer_state
            .lock()
            .on_log_start_offset_incremented(log_start);
        Ok(())
    }

    /// Kafka's last stable offset (`UnifiedLog.lastStableOffset`): the first offset of the
    /// earliest ongoing transaction if it is below the [high
    /// watermark](Self::high_watermark), else the high watermark (the log end offset
    /// unless the high watermark is [manual](crate::LogOptions::manual_high_watermark)).
    /// A `read_committed` reader must not be served offsets at or above it
    /// ([`FetchIsolation::TxnCommitted`](crate::FetchIsolation)).
    ///
    /// As Kafka's `UnifiedLog.maybeIncrementFirstUnstableOffset`, the first unstable
    /// offset is never below the log start offset: a transaction whose first batches were
    /// removed (by retention, `delete_records` or a producer state rebuilt from an older
    /// snapshot after a crash) does not hold the LSO below offsets the log no longer has.
    pub fn last_stable_offset(&self) -> i64 {
        let hw = self.high_watermark();
        let start = self.log_start_offset();
        self.producer_state
            .lock()
            .first_unstable_offset()
            .map_or(hw, |o| o.max(start).min(hw))
    }

    /// A copy of the producer state (per-producer entries, ongoing transactions, map end
    /// offset, snapshot offsets).
    pub fn producer_state(&self) -> ProducerStateManager {
        self.producer_state.lock().clone()
    }

    /// The end-transaction marker of a control batch with a producer id. A control batch
    /// without one is not parsed (Kafka looks at producer state only for batches with
    /// `hasProducerId`), so its record need not be a marker
    /// (`docs/kafka-behaviour.md#control-batch-without-producer`).
    pub(super) fn parse_marker(
        bytes: &[u8],
        info: &BatchInfo,
    ) -> Result<Option<EndTransactionMarker>> {
        if !(Self::keeps_producer_state()
            && info.magic >= 2
            && info.is_control
            && info.producer_id >= 0)
        {
            return Ok(None);
        }
        F::end_txn_marker(bytes, info.position)
            .map_err(|source| SegmentError::InvalidInput { source })
    }
}
