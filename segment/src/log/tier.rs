//! The log's part of the tier seam (KIP-405): the local log start offset, the highest
//! offset the caller says is in remote storage, and the deletion of local segments once
//! they are uploaded (`docs/kafka-behaviour.md#local-log-start-offset`,
//! `docs/kafka-behaviour.md#delete-local-through`).

use std::sync::atomic::{AtomicI64, Ordering};

use super::{Log, RECOVERY_POINT_FILE};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::fs::OpenMode;
use crate::names::{offset_index_file, time_index_file, transaction_index_file};
use crate::producer::snapshot::{encode_leader_epoch_checkpoint, producer_snapshot_file};
use crate::tier::{DeletionReason, SegmentUpload};

/// The tier state of a [`Log`]: the local log start offset and the highest offset in
/// remote storage. Neither is checkpointed: the local log start is derived at open from
/// the first local segment, as Kafka's `UnifiedLog` constructor does, and the highest
/// offset in remote storage is the uploader's to restore (Kafka's
/// `RemoteLogManager` sets it from the remote metadata after a restart).
#[derive(Debug)]
pub(super) struct TierState {
    /// The local log start offset as last moved; the getter answers at least the log
    /// start offset (which a `delete_records` or retention may raise above it).
    local_log_start: AtomicI64,
    /// Kafka's `highestOffsetInRemoteStorage`: −1 until an uploader reports one.
    highest_remote: AtomicI64,
}

impl TierState {
    pub(super) fn new(local_log_start: i64) -> Self {
        TierState {
            local_log_start: AtomicI64::new(local_log_start),
            highest_remote: AtomicI64::new(-1),
        }
    }

    /// Sets the local log start offset (the loader's, and a full truncation's).
    pub(super) fn reset_local_log_start(&self, offset: i64) {
        self.local_log_start.store(offset, Ordering::Release);
    }

    pub(super) fn local_log_start(&self) -> i64 {
        self.local_log_start.load(Ordering::Acquire)
    }

    pub(super) fn highest_remote(&self) -> i64 {
        self.highest_remote.load(Ordering::Acquire)
    }
}

impl<F: BatchFormat> Log<F> {
    /// Kafka's `UnifiedLog.localLogStartOffset`: the first offset still on local disk.
    /// Equal to [`log_start_offset`](Self::log_start_offset) until
    /// [`delete_local_through`](Self::delete_local_through) deletes uploaded segments,
    /// never below it. Not checkpointed: [`Log::open`] derives it as Kafka does, the
    /// larger of the log start offset and the first local segment's base offset
    /// (`docs/kafka-behaviour.md#local-log-start-offset`).
    pub fn local_log_start_offset(&self) -> i64 {
        self.tier.local_log_start().max(self.log_start_offset())
    }

    /// Kafka's `UnifiedLog.highestOffsetInRemoteStorage`: the highest offset the caller
    /// reported uploaded ([`update_highest_offset_in_remote_storage`] or
    /// [`delete_local_through`]), −1 when none was (also after a reopen: the uploader
    /// restores it from its remote metadata, as Kafka's `RemoteLogManager` does).
    ///
    /// [`update_highest_offset_in_remote_storage`]: Self::update_highest_offset_in_remote_storage
    /// [`delete_local_through`]: Self::delete_local_through
    pub fn highest_offset_in_remote_storage(&self) -> i64 {
        self.tier.highest_remote()
    }

    /// Kafka's `UnifiedLog.updateHighestOffsetInRemoteStorage`: records that every
    /// offset up to `offset` (inclusive) is in remote storage. It only ever rises; a
    /// lower value is ignored. Answers of ListOffsets −5 and −6 follow it
    /// (`docs/kafka-behaviour.md#list-offsets-tiered`).
    pub fn update_highest_offset_in_remote_storage(&self, offset: i64) {
        self.tier.highest_remote.fetch_max(offset, Ordering::AcqRel);
    }

    /// Deletes the local segments that lie wholly at or below both `offset` and
    /// `highest_uploaded` (the caller's highest offset in remote storage, recorded as by
    /// [`update_highest_offset_in_remote_storage`](Self::update_highest_offset_in_remote_storage)):
    /// the longest prefix of segments whose last offset (the next segment's base − 1) is
    /// at or below both, and whose next base is at or below the high watermark (Kafka's
    /// `deletableSegments`). The active segment is never deleted. Moves the [local log
    /// start offset](Self::local_log_start_offset) to the first segment kept; never the
    /// [log start offset](Self::log_start_offset), which the caller raises when the
    /// remote tier deletes (Kafka's `updateLogStartOffsetFromRemoteTier`). Returns the
    /// number of segments deleted (`docs/kafka-behaviour.md#delete-local-through`).
    ///
    /// Under concurrent readers it keeps retention's order: the new local log start is
    /// published before any segment leaves the map, so a read below it answers
    /// [`SegmentError::OffsetMovedToTieredStorage`], never an empty fetch. The files are
    /// renamed `.deleted` and removed after `file.delete.delay.ms`; a
    /// [`FileRegion`](crate::FileRegion) or other handle of them stays readable.
    ///
    /// # Errors
    /// [`SegmentError::Offline`] if the log is offline; [`SegmentError::InvalidArgument`]
    /// if the log was not opened with `remote.storage.enable`
    /// ([`LogConfig::remote_storage_enable`](crate::LogConfig::remote_storage_enable)),
    /// whose reopen would move the log start to the first local segment; I/O.
    pub fn delete_local_through(&self, offset: i64, highest_uploaded: i64) -> Result<usize> {
        let _g = self.lock.lock();
        self.check_online()?;
        if !self.config.remote_storage_enable {
            return Err(SegmentError::arg(
                "delete_local_through needs remote.storage.enable: without it a reopen \
                 would move the log start offset to the first local segment"
                    .to_string(),
            ));
        }
        self.deleter.delete_expired()?;
        self.update_highest_offset_in_remote_storage(highest_uploaded);
        let through = offset.min(highest_uploaded);
        let segs = self.segments.values();
        let hw = self.high_watermark();
        let mut deletable = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            // The active segment (no next) always stays.
            let Some(next) = segs.get(i + 1).map(|n| n.base_offset()) else {
                break;
            };
            if next - 1 <= through && next <= hw {
                deletable.push(s.clone());
            } else {
                if crate::fs::mutated!(LocalDeleteOneTooMany) && !deletable.is_empty() {
                    deletable.push(s.clone());
                }
                break;
            }
        }
        if deletable.is_empty() {
            return Ok(0);
        }
        // The first segment kept: there is one, the active segment is never deletable.
        let first_kept = segs[deletable.len()].base_offset();
        // Published before any segment leaves the map: a reader's pass sees the new local
        // start (and answers "moved to tiered storage") or the segment.
        if first_kept > self.tier.local_log_start() {
            self.tier.reset_local_log_start(first_kept);
        }
        {
            let _change = self.segments.begin_change();
            for s in &deletable {
                tracing::info!(segment = s.base_offset(), "deleting uploaded local segment");
                self.delete_segment_files(s, DeletionReason::LocalDeletion)?;
            }
        }
        if self.recovery_point() < first_kept {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
            self.recovery_point.store(first_kept, Ordering::Release);
            self.checkpoint(RECOVERY_POINT_FILE, first_kept)?;
        }
        self.delete_snapshots_of(&deletable)?;
        Ok(deletable.len())
    }

    /// Kafka's `RemoteLogManager.candidateLogSegments` with what `copyLogSegment` uploads:
    /// from the segment holding `max(highest offset in remote storage + 1, log start
    /// offset)` on, each sealed segment whose next segment's base offset is at or below
    /// the [last stable offset](Self::last_stable_offset) (which is at or below the high
    /// watermark), in offset order, stopping at the first that is not. The active segment
    /// is never one. Each comes with open handles of its files, the producer snapshot at
    /// the next base and its leader epochs ([`SegmentUpload`],
    /// `docs/kafka-behaviour.md#tierable-segments`). Kafka 4.4's `remote.copy.lag.ms` /
    /// `remote.copy.lag.bytes` delays are not applied.
    ///
    /// # Errors
    /// [`SegmentError::Offline`] if the log is offline; I/O opening the files.
    pub fn tierable_segments(&self) -> Result<Vec<SegmentUpload>> {
        // Under the lock: no retention, truncation or local deletion renames a file
        // between the choice and the opens.
        let _g = self.lock.lock();
        self.check_online()?;
        let bound = self.last_stable_offset().min(self.high_watermark());
        let from = (self.highest_offset_in_remote_storage() + 1).max(self.log_start_offset());
        let segs = self.segments.values();
        let cache = self.epoch_cache.lock().clone();
        let mut out = Vec::new();
        for pair in segs.windows(2) {
            let (s, next) = (&pair[0], pair[1].base_offset());
            if next <= from {
                continue; // wholly below what is left to upload
            }
            if next > bound {
                break;
            }
            let base = s.base_offset();
            let open = |p: &std::path::Path| {
                self.fs
                    .open_file(p, OpenMode::Read)
                    .map_err(|e| SegmentError::io("open", p, e))
            };
            let txn_path = transaction_index_file(&self.dir, base, "");
            let txn_index = if s.txn_index().is_empty()? {
                None
            } else {
                Some(open(&txn_path)?)
            };
            let snap = producer_snapshot_file(&self.dir, next);
            let producer_snapshot = match self.fs.open_file(&snap, OpenMode::Read) {
                Ok(f) => Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(SegmentError::io("open", &snap, e)),
            };
            let mut seg_epochs = cache.clone();
            seg_epochs.truncate_from_start(base);
            seg_epochs.truncate_from_end(next);
            let mut prefix = cache.clone();
            prefix.truncate_from_end(next);
            // The index files are shipped as they are on disk: make a check the loader
            // deferred to their first load now (docs/kafka-behaviour.md#deferred-index-check).
            s.ensure_index_checked()?;
            let size = s.size();
            out.push(SegmentUpload {
                base_offset: base,
                end_offset: next - 1,
                max_timestamp: s.largest_timestamp()?,
                size,
                last_modified_ms: s.last_modified()?,
                log: s.log().slice(0, size)?,
                offset_index: open(&offset_index_file(&self.dir, base, ""))?,
                time_index: open(&time_index_file(&self.dir, base, ""))?,
                txn_index,
                producer_snapshot,
                segment_leader_epochs: seg_epochs.entries().to_vec(),
                leader_epoch_checkpoint: encode_leader_epoch_checkpoint(prefix.entries())
                    .into_bytes(),
            });
        }
        Ok(out)
    }

    /// The answer for a read of `offset` at or above the log start offset `log_start`
    /// and below the local log start offset, if it is
    /// (`docs/kafka-behaviour.md#offset-moved-to-tiered-storage`).
    pub(super) fn check_local(&self, offset: i64, log_start: i64) -> Result<()> {
        let local = self.tier.local_log_start();
        if offset >= log_start && offset < local {
            return Err(SegmentError::OffsetMovedToTieredStorage {
                path: self.dir.clone(),
                offset,
                log_start_offset: log_start,
                local_log_start_offset: local,
            });
        }
        Ok(())
    }
}
