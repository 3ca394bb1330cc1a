//! Retention of a [`Log`]: raising the log start offset, deleting old segments by time,
//! size and log start, and removing the files of deleted segments after their delay.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::local_retention::TieredRule;
use super::{Log, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::names::DELETED_FILE_SUFFIX;
use crate::segment::LogSegment;
use crate::tier::{DeletionReason, TierEvent};

impl<F: BatchFormat> Log<F> {
    /// Raises the log start offset to `offset` (Kafka's `deleteRecords` /
    /// `maybeIncrementLogStartOffset`) and persists it; segments wholly below it are
    /// removed by the next [`delete_old_segments`](Self::delete_old_segments). Returns the
    /// new log start offset.
    ///
    /// The high watermark bounds it (Kafka's `maybeIncrementLogStartOffset`): an offset
    /// above [`high_watermark`](Self::high_watermark) is refused; a high watermark below
    /// the new log start comes up to it (`docs/kafka-behaviour.md#high-watermark`). While
    /// the high watermark follows the log end that bound is the log end.
    ///
    /// # Errors
    /// [`SegmentError::Offline`] if the log is offline (nothing is deleted or written).
    /// [`SegmentError::OffsetOutOfRange`] if `offset` is beyond the high watermark (the
    /// log end unless it is [manual](crate::LogOptions::manual_high_watermark)); I/O.
    pub fn increment_log_start_offset(&self, offset: i64) -> Result<i64> {
        let _g = self.lock.lock();
        self.check_online()?;
        let leo = self.log_end_offset();
        if offset > leo || offset > self.high_watermark() {
            return Err(SegmentError::OffsetOutOfRange {
                path: self.dir.clone(),
                offset,
                log_start_offset: self.log_start_offset(),
                log_end_offset: leo,
            });
        }
        let cur = self.log_start_offset();
        if offset > cur {
            self.publish_log_start(offset);
            self.checkpoint(LOG_START_OFFSET_FILE, offset)?;
            self.state_after_log_start_incremented(offset)?;
        }
        Ok(self.log_start_offset())
    }

    /// Alias of [`increment_log_start_offset`](Self::increment_log_start_offset) followed by
    /// [`delete_old_segments`](Self::delete_old_segments) (AdminClient `deleteRecords`).
    ///
    /// # Errors
    /// As both.
    pub fn delete_records(&self, offset: i64) -> Result<i64> {
        self.increment_log_start_offset(offset)?;
        self.delete_old_segments()?;
        Ok(self.log_start_offset())
    }

    /// Kafka's retention (`deleteOldSegments`), applied only when called (the log never runs
    /// it by itself). With [`LogConfig::remote_storage_enable`] the rules are Kafka's
    /// tiered ones instead (`docs/kafka-behaviour.md#local-retention`): segments wholly
    /// below the local log start, then by `local.retention.bytes`, then by
    /// `local.retention.ms` (−2 = the full value), each only once uploaded (its last offset
    /// at or below [`highest_offset_in_remote_storage`](Self::highest_offset_in_remote_storage))
    /// or wholly below the log start offset; a non-empty active segment that breaches a rule
    /// is rolled (it goes once uploaded); only the
    /// [local log start offset](Self::local_log_start_offset) moves. Without remote storage it
    /// deletes, in Kafka 4.4's order, the longest prefix of segments that (a) lie wholly
    /// below the log start offset (the next segment's base, or the log end for the last
    /// one, is at or below it; Kafka keeps the last one), then (b) make the log exceed
    /// `retention.bytes`, then (c) are older than `retention.ms` (by
    /// [`LogSegment::largest_timestamp`], which falls back to the file mtime).
    /// The prefix rule stops at the first segment that does not qualify (field case B8),
    /// and at the first segment whose upper bound (the next segment's base offset, or the
    /// log end) is above the [high watermark](Self::high_watermark) (Kafka's
    /// `deletableSegments`, `docs/kafka-behaviour.md#high-watermark`; only a
    /// [manual](crate::LogOptions::manual_high_watermark) one can be below it). An empty
    /// last segment is never deleted; when every segment qualifies a new empty active
    /// segment is rolled first. Returns the number of segments deleted.
    ///
    /// Under concurrent readers (Kafka's order): the log start offset moves to the first
    /// remaining base offset and is checkpointed (with the recovery point, raised to it if
    /// below) **before** any segment leaves the map, so a [`read`](Self::read) answers
    /// with data or [`SegmentError::OffsetOutOfRange`], never an empty fetch. The deleted
    /// segments are renamed `.deleted` and their files removed after
    /// [`LogConfig::file_delete_delay_ms`] (see [`deleter`](crate::deleter)); a reader
    /// that still holds one keeps reading it until then.
    ///
    /// # Errors
    /// [`SegmentError::Offline`] if the log is offline (nothing is deleted or written).
    /// I/O and index errors.
    ///
    /// [`LogConfig::file_delete_delay_ms`]: crate::config::LogConfig::file_delete_delay_ms
    /// [`LogConfig::remote_storage_enable`]: crate::config::LogConfig::remote_storage_enable
    pub fn delete_old_segments(&self) -> Result<usize> {
        let _g = self.lock.lock();
        self.check_online()?;
        self.deleter.delete_expired()?;
        if self.config.remote_storage_enable {
            // Kafka's order: log start, then size, then time
            // (`docs/kafka-behaviour.md#local-retention`).
            return Ok(self.delete_tiered_locked(TieredRule::LogStart)?
                + self.delete_tiered_locked(TieredRule::Size)?
                + self.delete_tiered_locked(TieredRule::Time)?);
        }
        // Kafka 4.4's order: log start, then size, then time (each pass a prefix, so the
        // order matters: a young segment that stops the time pass may go by the others).
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        // A segment lies wholly below the log start when the next one starts at or below
        // it; for the last segment the log end is that bound (`delete_records` at the log
        // end empties the log, which then restarts at its end; Kafka 4.4 keeps the last
        // segment, `docs/kafka-behaviour.md#local-retention`).
        let mut n = self.delete_prefix(|_, next| Ok(next.unwrap_or(leo) <= start))?;
        if self.config.retention_bytes >= 0 {
            let mut diff = self.size() as i64 - self.config.retention_bytes;
            n += self.delete_prefix(|s, _| {
                if diff - s.size() as i64 >= 0 {
                    diff -= s.size() as i64;
                    Ok(true)
                } else {
                    Ok(false)
                }
            })?;
        }
        if self.config.retention_ms >= 0 {
            let now = self.clock.milliseconds();
            let ms = self.config.retention_ms;
            n += self.delete_prefix(|s, _| Ok(now - s.largest_timestamp()? > ms))?;
        }
        Ok(n)
    }

    /// Kafka's `deleteLogStartOffsetBreachedSegments`: only step (a) of
    /// [`delete_old_segments`](Self::delete_old_segments), the segments wholly below the log
    /// start offset, as a log whose `cleanup.policy` is `compact` alone gets from the
    /// cleaner thread (`segment::Cleaner`). Returns the number deleted.
    ///
    /// # Errors
    /// As [`delete_old_segments`](Self::delete_old_segments).
    pub fn delete_log_start_breached_segments(&self) -> Result<usize> {
        let _g = self.lock.lock();
        self.check_online()?;
        self.deleter.delete_expired()?;
        if self.config.remote_storage_enable {
            return self.delete_tiered_locked(TieredRule::LogStart);
        }
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        self.delete_prefix(|_, next| Ok(next.unwrap_or(leo) <= start))
    }

    fn delete_prefix(
        &self,
        mut pred: impl FnMut(&LogSegment<F>, Option<i64>) -> Result<bool>,
    ) -> Result<usize> {
        let segs = self.segments.values();
        let mut deletable = Vec::new();
        let hw = self.high_watermark();
        let leo = self.log_end_offset();
        for (i, s) in segs.iter().enumerate() {
            let next = segs.get(i + 1).map(|n| n.base_offset());
            let last_and_empty = next.is_none() && s.size() == 0;
            // Kafka's `deletableSegments`: a segment whose upper bound (the next base
            // offset, or the log end) is above the high watermark is never deleted.
            if !last_and_empty && hw >= next.unwrap_or(leo) && pred(s, next)? {
                deletable.push(s.clone());
            } else {
                break;
            }
        }
        if deletable.is_empty() {
            return Ok(0);
        }
        // The first segment that stays: the next one, or a new empty active segment at the
        // log end when every segment goes.
        let first_kept = match segs.get(deletable.len()) {
            Some(next) => next.base_offset(),
            None => self.roll_locked(self.log_end_offset())?.base_offset(),
        };
        // Kafka's order (`UnifiedLog.deleteSegments`): the new log start offset is published
        // and checkpointed before any segment leaves the map, so a reader sees either the
        // segment or an offset out of range, never a hole.
        if first_kept > self.log_start_offset() {
            self.publish_log_start(first_kept);
            self.checkpoint(LOG_START_OFFSET_FILE, first_kept)?;
            self.state_after_log_start_incremented(first_kept)?;
        }
        {
            // One structural change for the whole prefix: a reader's pass sees all of it or
            // none (`docs/kafka-behaviour.md#concurrent-reads`). The log start is already
            // above every offset it held, so a failure here leaves only a segment that is
            // out of range, not an unknown state.
            let _change = self.segments.begin_change();
            for s in &deletable {
                tracing::info!(segment = s.base_offset(), "deleting segment by retention");
                self.delete_segment_files(s, DeletionReason::Retention)?;
            }
        }
        if self.recovery_point() < self.log_start_offset() {
            // Only once the segments below the new log start are durably gone (renamed
            // `.deleted`, directory fsynced): raised before, the checkpoint would make the
            // next open trust their unflushed files (found by `cargo xtask crash`,
            // invariant 3).
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
            let ls = self.log_start_offset();
            self.recovery_point.store(ls, Ordering::Release);
            self.checkpoint(RECOVERY_POINT_FILE, ls)?;
        }
        self.delete_snapshots_of(&deletable)?;
        Ok(deletable.len())
    }

    /// Kafka's `removeAndDeleteSegments`: takes `seg` out of the map, renames its files to
    /// `.deleted` and schedules their removal after `file.delete.delay.ms` (see
    /// [`deleter`](crate::deleter)). Callers publish the new log start / log end offset
    /// first and hold a [structural change][change] open around the call, so that a
    /// reader never answers from a segment that left the map under it
    /// (`docs/kafka-behaviour.md#concurrent-reads`).
    ///
    /// [change]: crate::segment_map::LogSegments
    /// Tells the [`TierListener`](crate::tier::TierListener), if any, that the segment
    /// left the log for `reason` (`docs/kafka-behaviour.md#tier-events`).
    pub(super) fn delete_segment_files(
        &self,
        seg: &Arc<LogSegment<F>>,
        reason: DeletionReason,
    ) -> Result<()> {
        let _change = self.segments.begin_change();
        self.segments.remove(seg.base_offset());
        seg.change_file_suffixes("", DELETED_FILE_SUFFIX)?;
        self.stats.segments_deleted.fetch_add(1, Ordering::Relaxed);
        self.tier_event(TierEvent::SegmentDeleted {
            base_offset: seg.base_offset(),
            reason,
        });
        self.deleter.schedule(seg.clone())
    }

    /// Removes the files of the deleted segments whose `file.delete.delay.ms` has passed
    /// (Kafka's scheduled `deleteSegmentFiles`); returns how many segments' files were
    /// removed. Every maintenance call of the log (retention, `delete_records`, flush,
    /// truncation) runs it first; call it yourself, e.g. from a timer, to remove files
    /// without other maintenance. See [`deleter`](crate::deleter).
    ///
    /// # Errors
    /// I/O; the segments that could not be removed stay scheduled.
    pub fn delete_expired_segment_files(&self) -> Result<usize> {
        self.deleter.delete_expired()
    }

    /// Number of deleted segments whose files wait for `file.delete.delay.ms` (still on
    /// disk with the `.deleted` suffix).
    pub fn pending_segment_deletions(&self) -> usize {
        self.deleter.pending()
    }
}
