//! Truncation of a [`Log`]: removing the offsets from one on, or every offset and
//! restarting at a new one, as structural changes that concurrent reads never see half
//! done.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Log, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::tier::{DeletionReason, TierEvent};

impl<F: BatchFormat> Log<F> {
    /// Removes every offset ≥ `offset` (Kafka's `truncateTo`, field case B18): segments with a base
    /// above `offset` are deleted, the segment holding it is truncated (at the start of the
    /// batch holding `offset`) and becomes the active segment with re-grown indexes. A
    /// target below the log start offset empties the log and restarts it there.
    /// Returns whether anything was truncated.
    ///
    /// Under concurrent readers: the removal and truncation run as one structural change
    /// (see [`read`](Self::read) and `docs/kafka-behaviour.md#concurrent-reads`), and the
    /// lowered log end is published once, before that change ends, with the producer
    /// state of the log below it (`docs/kafka-behaviour.md#one-moment-bounds`). So a read
    /// answers from the log before or after the truncation, never from a mix, and
    /// [`bounds`](Self::bounds) never shows a bound of its middle.
    ///
    /// A running clean (`Log::clean`, or a `segment::Cleaner` thread) whose segments this
    /// changes drops its group and stops before its next swap
    /// (`docs/kafka-behaviour.md#cleaner-concurrency`). For a log registered with a `Cleaner`, truncate
    /// through `Cleaner::truncate_to`, which aborts and pauses the clean first and lowers
    /// the `cleaner-offset-checkpoint` after (`docs/kafka-behaviour.md#cleaner-states`).
    ///
    /// # Errors
    /// Index, format and I/O errors. A failure inside the structural change leaves the
    /// segments in an unknown state: the log end is lowered to `offset`, the log goes
    /// **offline** ([`is_offline`](Self::is_offline)) and the next open recovers it.
    pub fn truncate_to(&self, offset: i64) -> Result<bool> {
        let _g = self.lock.lock();
        self.check_online()?;
        if offset < 0 {
            return Err(SegmentError::arg(format!(
                "cannot truncate to negative offset {offset}"
            )));
        }
        if offset >= self.log_end_offset() {
            return Ok(false);
        }
        if offset < self.log_start_offset() {
            self.restart_at_locked(offset, offset)?;
            return Ok(true);
        }
        self.deleter.delete_expired()?;
        // The producer state of the log below `offset` comes first, so that the lowered
        // log end is published with it: a transaction whose marker is cut is unstable
        // again from the moment its marker is out of range
        // (`docs/kafka-behaviour.md#one-moment-bounds`).
        let late_state = crate::fs::mutated!(LinTruncateLateState);
        if !late_state {
            self.state_before_truncate_to(offset)?;
        }
        let leo = {
            let change = self.segments.begin_change();
            let truncated = self.truncate_segments_locked(offset);
            let leo = match truncated {
                Ok(leo) => leo,
                Err(e) => {
                    // Whatever part of the cut happened, nothing at or above `offset` is
                    // served any more.
                    self.publish_truncated_end(offset);
                    return Err(self.fail_structural_change("truncate_to", e));
                }
            };
            let start = self.log_start_offset();
            if leo < start {
                // What is left ends below the log start (the segments had a gap there): no
                // offset at or above the start exists any more, so the log is empty from its
                // start on and restarts there; the log end never goes below the log start.
                // Until then the log is `[start, start]`: empty, never a hole.
                self.publish_truncated_end(start);
                drop(change);
                self.restart_at_locked(start, start)?;
                return Ok(true);
            }
            // The lowered end is published once, with the producer state rebuilt above, and
            // before the change ends: a reader's pass that overlapped the cut looks again
            // and meets it, and a reader of the bounds alone never sees a bound of the
            // change's middle (`docs/kafka-behaviour.md#one-moment-bounds`).
            self.publish_truncated_end(leo);
            leo
        };
        if self.recovery_point() > leo {
            self.recovery_point.store(leo, Ordering::Release);
            // The cut must be durable before a checkpoint says so: unlike Kafka, fsync
            // first (docs/kafka-behaviour.md#truncate-fsync).
            let active = self.segments.active_segment()?;
            self.sync_before_checkpoint(&active)?;
            self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        }
        if late_state {
            // The old order: the producer state rebuilt after the fsync and checkpoint,
            // with the fsync a disk takes (the checker's logs are on tmpfs).
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.state_before_truncate_to(leo)?;
            drop(self.publish());
        }
        self.state_after_truncate_to(leo)?;
        self.tier_event(TierEvent::Truncated { offset: leo });
        Ok(true)
    }

    /// Publishes `leo` as the log end after a cut, with the high watermark brought down
    /// to it (Kafka's `truncateTo`). Under the log's lock.
    fn publish_truncated_end(&self, leo: i64) {
        let p = self.publish();
        p.set_log_end(leo);
        self.high_watermark_after_truncate();
    }

    /// `truncate_to`'s removal of the segments above `offset` and truncation of the one
    /// holding it (which becomes the active segment); returns the next offset after what
    /// is left. Inside a structural change.
    fn truncate_segments_locked(&self, offset: i64) -> Result<i64> {
        // Highest first: a power cut between two removals then leaves a prefix of the log,
        // never a hole whose lost batches (a transaction's marker, say) the producer
        // snapshots above it still count (docs/kafka-behaviour.md#crash-persistence-model).
        for s in self.segments.values().into_iter().rev() {
            if s.base_offset() > offset {
                self.delete_segment_files(&s, DeletionReason::Truncation)?;
            }
        }
        let active = self.segments.active_segment()?;
        active.truncate_to(offset)?;
        self.active_ready.store(true, Ordering::Release);
        active.read_next_offset()
    }

    /// A structural change failed after it published new bounds: the map and the files
    /// may hold any part of it, so nothing more is written (the log goes offline, as
    /// after a failed fsync) and the next open recovers. Returns `e`.
    pub(super) fn fail_structural_change(&self, what: &str, e: SegmentError) -> SegmentError {
        tracing::error!(dir = %self.dir.display(), error = %e, op = what, "structural change failed; the log is now offline");
        self.go_offline(format!("{what} failed inside its structural change (the map and the files may hold any part of it)"));
        e
    }

    /// Deletes every segment and starts an empty log at `new_offset` (Kafka's
    /// `truncateFullyAndStartAt`).
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `new_offset` is negative, below the log start
    /// offset (offsets already handed out would be reused) or `i64::MAX` (no batch could
    /// be appended); I/O.
    pub fn truncate_fully_and_start_at(&self, new_offset: i64) -> Result<()> {
        let _g = self.lock.lock();
        self.check_online()?;
        crate::validate::check_start_at(new_offset, self.log_start_offset())?;
        self.restart_at_locked(new_offset, new_offset)
    }

    /// Deletes every segment and starts an empty log at log end `new_offset` with log
    /// start `log_start` (≥ `new_offset`; above it only for the follower restart of
    /// [`append`](Self::append), which keeps the old log start).
    ///
    /// Under concurrent readers: the new log start, log end and high watermark are
    /// published together first, then the removal of every segment and the creation of
    /// the new one run as one structural change
    /// (`docs/kafka-behaviour.md#concurrent-reads`): no read meets the empty map, and no
    /// reader of the bounds sees a log start above the log end. A failure inside the
    /// change takes the log offline.
    pub(super) fn restart_at_locked(&self, new_offset: i64, log_start: i64) -> Result<()> {
        self.deleter.delete_expired()?;
        // No producer, no unstable transaction: forgotten before the new bounds are
        // published (`docs/kafka-behaviour.md#one-moment-bounds`).
        self.state_before_truncate_fully(new_offset)?;
        {
            let _change = self.segments.begin_change();
            // The new bounds first, all in one publication: from here every offset outside
            // them is out of range, and a reader of the bounds alone sees the old log or
            // the new one, never a log start above its log end
            // (`docs/kafka-behaviour.md#one-moment-bounds`); a reader's pass that
            // overlaps the change looks again.
            {
                let p = self.publish();
                p.set_log_end(new_offset);
                p.set_log_start(log_start);
                self.tier.reset_local_log_start(log_start);
                // Kafka's `truncateFullyAndStartAt`: `updateHighWatermark(logEndOffset)`.
                self.high_watermark_after_restart();
            }
            let replaced = (|| {
                for s in &self.segments.values() {
                    self.delete_segment_files(s, DeletionReason::Truncation)?;
                }
                let seg = Arc::new(self.open_segment(new_offset, false, "")?);
                self.segments.add(seg);
                Ok(())
            })();
            if let Err(e) = replaced {
                return Err(self.fail_structural_change("restart", e));
            }
        }
        self.recovery_point.store(new_offset, Ordering::Release);
        self.checkpoint(LOG_START_OFFSET_FILE, log_start)?;
        self.checkpoint(RECOVERY_POINT_FILE, new_offset)?;
        self.state_after_truncate_fully()?;
        self.tier_event(TierEvent::Truncated { offset: new_offset });
        Ok(())
    }
}
