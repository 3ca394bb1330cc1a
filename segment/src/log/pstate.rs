//! The producer state and the leader-epoch cache of a [`Log`]: loading on open, per-segment
//! recovery with snapshots, the append path (transaction index entries, epochs), snapshots
//! on roll and close, and what truncation and retention do to them (Kafka's
//! `UnifiedLog`/`LogLoader` calls into `ProducerStateManager` and `LeaderEpochFileCache`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::rebuild_producer_state;
use super::Log;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, BatchInfo};
use crate::producer::snapshot::{encode_leader_epoch_checkpoint, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::producer::{read_leader_epoch_checkpoint_with, LeaderEpochCache, ProducerStateManager};
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
        self.create_empty_leader_epoch_checkpoint()?;
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
        // The loaded state's first unstable offset joins the published bounds.
        drop(self.publish());
        Ok(())
    }

    /// Kafka's `UnifiedLog.create` opens the checkpoint through `CheckpointFile`, whose
    /// constructor creates the file, empty (0 bytes), when it is missing; nothing writes
    /// it until the cache changes (`docs/kafka-behaviour.md#leader-epoch-checkpoint-created`).
    /// Done at the end of the load, not before it: a missing file still means "rebuild
    /// the cache from the log" to the load. A path that exists, whatever it is, is left
    /// alone (never opened: it could be a FIFO).
    fn create_empty_leader_epoch_checkpoint(&self) -> Result<()> {
        let path = self.dir.join(LEADER_EPOCH_CHECKPOINT_FILE);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(SegmentError::io("stat", &path, e)),
        }
        self.fs
            .open_file(&path, crate::fs::OpenMode::Create)
            .map(drop)
            .map_err(|e| SegmentError::io("create", &path, e))
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

    /// Producer state and epochs for batches just written to `active` (Kafka's
    /// `UnifiedLog.append` after `localLog.append`, batch by batch as recovery does),
    /// **before** their log end offset is published: each ABORT marker that ends a
    /// transaction with data gets its `.txnindex` entry with the LSO of the moment; each
    /// new partition leader epoch is assigned (and its checkpoint left pending for
    /// [`write_epochs_after_append`](Self::write_epochs_after_append)). A reader bounded
    /// by the last stable offset thus never sees a published batch that the producer
    /// state does not describe (`docs/kafka-behaviour.md#one-moment-bounds`).
    ///
    /// A failed `.txnindex` entry takes the log offline: the marker's bytes are in the
    /// `.log` but its log end is never published, and the log refuses service until a
    /// reopen recovers and rebuilds the index (rolling the append back would hand the same
    /// offsets out twice) (`docs/kafka-behaviour.md#offline-rule`).
    pub(super) fn update_state_before_publish(
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
                // The high watermark is the log end: it passes every marker just written
                // (published together with the log end).
                ps.on_high_watermark_updated(last_offset + 1);
            }
            if epochs_changed {
                self.epochs_pending.store(true, Ordering::Release);
            }
            Ok(())
        })();
        if let Err(e) = &r {
            tracing::error!(dir = %self.dir.display(), error = %e, "updating producer state after an append failed; the log is now offline");
            self.go_offline(format!(
                "updating the producer state of an append failed: {e}"
            ));
        }
        r
    }

    /// After an append's log end was published: writes `leader-epoch-checkpoint` if the
    /// append changed the epoch cache. A checkpoint that cannot be written is deferred:
    /// the cache is right in memory, the next flush writes the file before the recovery
    /// point passes the batches, and a crash before then recovers the epochs from the
    /// batches; only a failed directory fsync of that write takes the log offline
    /// (`docs/kafka-behaviour.md#offline-rule`).
    pub(super) fn write_epochs_after_append(&self) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
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
                self.offline.go_offline_unexplained();
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

    /// Kafka's `truncateTo`, its producer-state part, **before** the lowered log end is
    /// published: the producer state is rebuilt, in memory, for the log below `offset`
    /// (the batches wholly below it, which are exactly those the truncation keeps), and
    /// the snapshots above `offset` are deleted. A transaction whose marker the
    /// truncation cuts is thus unstable again in the same publication that puts the
    /// marker out of range (`docs/kafka-behaviour.md#one-moment-bounds`).
    ///
    /// The rebuild is made on a copy and installed only when it succeeds: a failure
    /// leaves the log as it was.
    pub(super) fn state_before_truncate_to(&self, offset: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut ps = self.producer_state.lock().clone();
        // Detached from its directory, the copy writes no snapshot: no fsync runs here.
        let dir = ps.take_snapshot_dir();
        rebuild_producer_state(
            &mut ps,
            &self.segments,
            &*self.fs,
            self.log_start_offset(),
            offset,
            self.clock.milliseconds(),
        )?;
        ps.set_snapshot_dir(dir);
        if !self.has_manual_high_watermark() {
            ps.on_high_watermark_updated(offset);
        }
        *self.producer_state.lock() = ps;
        Ok(())
    }

    /// Kafka's `truncateTo` tail, once the cut is durable: epochs at or above the new end
    /// `leo` are dropped, snapshots above it are deleted and a snapshot is taken at it
    /// (the state itself was rebuilt by
    /// [`state_before_truncate_to`](Self::state_before_truncate_to)).
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
        {
            // `truncate_and_reload` tells the state the log start too: published with it.
            let _p = self.publish();
            let mut ps = self.producer_state.lock();
            // The state describes the batches below `leo` (those wholly below the
            // truncation offset): its end moves down to it, which changes no producer.
            ps.set_map_end_offset(leo);
            ps.truncate_and_reload(
                &*self.fs,
                self.log_start_offset(),
                leo,
                self.clock.milliseconds(),
            )?;
        }
        self.producer_state
            .lock()
            .take_snapshot_or_defer(&*self.fs)?;
        Ok(())
    }

    /// Kafka's `truncateFullyAndStartAt`, its producer-state part, before the new bounds
    /// are published: no producer, no snapshot.
    pub(super) fn state_before_truncate_fully(&self, new_offset: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        self.producer_state
            .lock()
            .truncate_fully_and_start_at(&*self.fs, new_offset)
    }

    /// Kafka's `truncateFullyAndStartAt`, after the new bounds: no epoch.
    pub(super) fn state_after_truncate_fully(&self) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut cache = self.epoch_cache.lock();
        if cache.clear() {
            self.write_leader_epoch_checkpoint(&cache)?;
        }
        Ok(())
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

    /// Kafka's `maybeIncrementLogStartOffset`: publishes the new log start offset, raises
    /// a high watermark below it and tells the producer state, in one publication
    /// (`docs/kafka-behaviour.md#one-moment-bounds`). Under the log's lock.
    pub(super) fn publish_log_start(&self, log_start: i64) {
        let p = self.publish();
        p.set_log_start(log_start);
        self.high_watermark_after_log_start_raised();
        if Self::keeps_producer_state() {
            self.producer_state
                .lock()
                .on_log_start_offset_incremented(log_start);
        }
        drop(p);
    }

    /// Kafka's `maybeIncrementLogStartOffset`, once the new log start is checkpointed:
    /// the epoch cache is truncated from the start.
    pub(super) fn state_after_log_start_incremented(&self, log_start: i64) -> Result<()> {
        if !Self::keeps_producer_state() {
            return Ok(());
        }
        let mut cache = self.epoch_cache.lock();
        if cache.truncate_from_start(log_start) {
            self.write_leader_epoch_checkpoint(&cache)?;
        }
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
    ///
    /// The value is that of [`bounds`](Self::bounds): the producer state as of the last
    /// published log end, high watermark and log start offset
    /// (`docs/kafka-behaviour.md#one-moment-bounds`).
    pub fn last_stable_offset(&self) -> i64 {
        self.bounds().last_stable_offset
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
