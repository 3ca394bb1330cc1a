//! Retention of a [`Log`] with remote storage (KIP-405): Kafka 4.4's
//! `UnifiedLog.deleteOldSegments` when `remote.storage.enable` is on, where local deletion
//! follows `local.retention.ms` / `local.retention.bytes`, never takes a segment that is not
//! uploaded, and moves the local log start offset only
//! (`docs/kafka-behaviour.md#local-retention`). The full `retention.ms` / `retention.bytes`
//! apply to the remote tier, whose deletions raise the log start offset through
//! [`Log::update_log_start_offset_from_remote_tier`]
//! (`docs/kafka-behaviour.md#remote-retention`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Log, RECOVERY_POINT_FILE};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::segment::LogSegment;
use crate::tier::DeletionReason;

/// Which of Kafka's three deletion conditions a pass applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TieredRule {
    /// `deleteLogStartOffsetBreachedSegments`.
    LogStart,
    /// `deleteRetentionSizeBreachedSegments` with `localRetentionSize`.
    Size,
    /// `deleteRetentionMsBreachedSegments` with `localRetentionMs`.
    Time,
}

impl<F: BatchFormat> Log<F> {
    /// Kafka's `updateLogStartOffsetFromRemoteTier`: the remote tier deleted every offset
    /// below `offset` (its retention by `retention.ms` / `retention.bytes`, or a
    /// `deleteRecords` it applied), so the log start offset rises to it, as
    /// [`increment_log_start_offset`](Self::increment_log_start_offset) does (checkpointed,
    /// leader-epoch cache and producer state cut, the local log start carried along when
    /// it passes it). Local segments wholly below it go at the next
    /// [`delete_old_segments`](Self::delete_old_segments). Returns the log start offset
    /// (`docs/kafka-behaviour.md#remote-retention`).
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if the log was not opened with
    /// `remote.storage.enable` (Kafka ignores the call then, logging an error);
    /// [`SegmentError::OffsetOutOfRange`] if `offset` is above the high watermark (Kafka's
    /// `maybeIncrementLogStartOffset`); [`SegmentError::Offline`]; I/O.
    pub fn update_log_start_offset_from_remote_tier(&self, offset: i64) -> Result<i64> {
        if !self.config.remote_storage_enable {
            return Err(SegmentError::arg(
                "update_log_start_offset_from_remote_tier needs remote.storage.enable".to_string(),
            ));
        }
        self.increment_log_start_offset(offset)
    }

    /// One of Kafka's deletion passes with remote storage enabled (the log's lock held):
    /// `deletableSegments` with `isSegmentEligibleForDeletion`, the roll of a breaching
    /// active segment, then `deleteSegments`, which moves the local log start offset only
    /// (`docs/kafka-behaviour.md#local-retention`). Returns the number deleted.
    pub(super) fn delete_tiered_locked(&self, rule: TieredRule) -> Result<usize> {
        let now = self.clock.milliseconds();
        let retention_ms = self.config.effective_local_retention_ms();
        let mut size_left = 0i64;
        match rule {
            TieredRule::LogStart => {}
            TieredRule::Size => {
                let limit = self.config.effective_local_retention_bytes();
                let size = self.size() as i64;
                if limit < 0 || size < limit {
                    return Ok(0);
                }
                size_left = size - limit;
            }
            TieredRule::Time => {
                if retention_ms < 0 {
                    return Ok(0);
                }
            }
        }
        let segs = self.segments.values();
        let hw = self.high_watermark();
        let leo = self.log_end_offset();
        let log_start = self.log_start_offset();
        let local_start = self.local_log_start_offset();
        let highest_remote = self.highest_offset_in_remote_storage();
        let mut deletable: Vec<Arc<LogSegment<F>>> = Vec::new();
        let mut should_roll = false;
        for (i, s) in segs.iter().enumerate() {
            let next = segs.get(i + 1).map(|n| n.base_offset());
            let last_and_empty = next.is_none() && s.size() == 0;
            let upper = next.unwrap_or(leo);
            let breached = hw >= upper
                && match rule {
                    TieredRule::LogStart => next.is_some_and(|n| n <= local_start),
                    TieredRule::Size => {
                        let fits = size_left - s.size() as i64 >= 0;
                        if fits {
                            size_left -= s.size() as i64;
                        }
                        fits
                    }
                    TieredRule::Time => now - s.largest_timestamp()? > retention_ms,
                };
            // Kafka rolls a non-empty active segment that breaches the rule, so that it
            // can go once uploaded; it does not go in this pass.
            if breached && next.is_none() && s.size() > 0 {
                should_roll = true;
            }
            // `isSegmentEligibleForDeletion`: uploaded whole, or wholly below a log start
            // offset the remote tier (or a delete-records) raised.
            let uploaded = upper > 0 && upper - 1 <= highest_remote;
            let below_log_start = next.is_some_and(|n| log_start >= n);
            if breached && !last_and_empty && (uploaded || below_log_start) {
                deletable.push(s.clone());
            } else {
                break;
            }
        }
        if should_roll {
            tracing::info!(
                dir = %self.dir.display(),
                "rolling the active segment to make it eligible for deletion"
            );
            self.roll_locked(leo)?;
        }
        if deletable.is_empty() {
            return Ok(0);
        }
        // `deleteSegments`: at least one segment always stays.
        if deletable.len() == self.segments.values().len() {
            let rolled = self.roll_locked(self.log_end_offset())?;
            if deletable.last().map(|s| s.base_offset()) == Some(rolled.base_offset()) {
                deletable.pop();
            }
            if deletable.is_empty() {
                return Ok(0);
            }
        }
        let last = deletable[deletable.len() - 1].base_offset();
        let first_kept = self
            .segments
            .values()
            .iter()
            .map(|s| s.base_offset())
            .find(|&b| b > last)
            .ok_or_else(|| SegmentError::IllegalState {
                path: self.dir.clone(),
                reason: "no segment after the deleted ones".to_string(),
            })?;
        // Kafka's `maybeIncrementLocalLogStartOffset`, published before any segment leaves
        // the map (`docs/kafka-behaviour.md#concurrent-reads`).
        if first_kept > self.tier.local_log_start() {
            self.tier.reset_local_log_start(first_kept);
        }
        {
            let _change = self.segments.begin_change();
            for s in &deletable {
                tracing::info!(
                    segment = s.base_offset(),
                    ?rule,
                    "deleting local segment by local retention"
                );
                self.delete_segment_files(s, DeletionReason::Retention)?;
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
}
