//! Appending whole batches to a [`Log`] and rolling its active segment.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{pstate, AppendInfo, Log};
use crate::config::RollParams;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat};
use crate::names;
use crate::segment::LogSegment;

impl<F: BatchFormat> Log<F> {
    /// Appends whole batches carrying their own offsets (as a follower does: offsets are
    /// not assigned). `records` is one or more complete batches of format `F`, back to
    /// back. The batches are framed and CRC-validated with `F` ([`BatchFormat::peek_size`],
    /// [`BatchFormat::parse_header`], [`BatchFormat::validate`]); the first batch must
    /// start at or after the log end offset and every batch after the previous one. To
    /// append at the end, encode [`log_end_offset`](Self::log_end_offset) as the base
    /// offset; two threads doing this concurrently race, and the loser gets
    /// [`SegmentError::NonMonotonicOffset`] (nothing appended), so serialise appenders or
    /// retry. Writes are not fsynced (see [`flush`](Self::flush)).
    ///
    /// Rolls a new segment first when [`LogSegment::should_roll`] says so, at base
    /// `max(first offset, log end offset)`; an empty active segment is reused instead of
    /// rolling onto its own base offset (field case B4).
    ///
    /// Offsets are never reused: a batch below the log end offset is refused, also when the
    /// log is empty because its log start moved past the old end (a `log-start-offset`
    /// checkpoint beyond the log end, or [`delete_records`](Self::delete_records) at the
    /// end). The one exception is Kafka's follower rule (B18c): an empty log accepts a
    /// batch that starts below its end but **reaches** it (last offset ≥ log end, as after
    /// `deleteRecords` into the middle of a batch) by restarting at the batch's base
    /// offset; the log start offset stays where it was.
    ///
    /// # Errors
    /// [`SegmentError::InvalidInput`] if `F` rejects a batch of the input: an impossible
    /// size, an unreadable header or a failed [`validate`](BatchFormat::validate) (not a
    /// corruption of the log: [`is_corruption`](SegmentError::is_corruption) is `false`);
    /// [`SegmentError::InvalidArgument`] for empty input, bytes
    /// after the last complete batch (including an incomplete last batch) or a batch whose
    /// last offset is below its base offset; [`SegmentError::NonMonotonicOffset`]; I/O and
    /// index errors; [`SegmentError::Offline`] if the log is offline. Nothing is appended on error
    /// (a failed write leaves the logical size unchanged; a torn partial write past it is
    /// overwritten by the next append or truncated by recovery).
    pub fn append(&self, records: &[u8]) -> Result<AppendInfo> {
        let _g = self.lock.lock();
        self.check_online()?;
        let mut first = None;
        let mut last = i64::MIN;
        let mut max_ts = -1i64;
        let mut max_ts_off = -1i64;
        let mut batches = 0usize;
        let mut parsed = Vec::new();
        let mut it = format::scan::<F>(records, 0);
        for b in &mut it {
            let b = b.map_err(|source| SegmentError::InvalidInput { source })?;
            F::validate(b.bytes, b.info.position)
                .map_err(|source| SegmentError::InvalidInput { source })?;
            // `last` starts at i64::MIN, so the first batch always passes.
            if b.info.base_offset <= last {
                return Err(SegmentError::NonMonotonicOffset {
                    path: self.dir.clone(),
                    expected_at_least: last + 1,
                    found: b.info.base_offset,
                });
            }
            if b.info.last_offset < b.info.base_offset {
                return Err(SegmentError::arg(format!(
                    "batch at position {} has last offset {} below its base offset {}",
                    b.info.position, b.info.last_offset, b.info.base_offset
                )));
            }
            if b.info.last_offset == i64::MAX {
                // The log end offset after it (last offset + 1) would not be representable.
                return Err(SegmentError::arg(format!(
                    "batch at position {} has last offset {}: the log end offset after it \
                     would overflow",
                    b.info.position,
                    i64::MAX
                )));
            }
            first.get_or_insert(b.info.base_offset);
            last = b.info.last_offset;
            if b.info.max_timestamp > max_ts {
                max_ts = b.info.max_timestamp;
                max_ts_off = b.info.offset_of_max_timestamp;
            }
            batches += 1;
            let marker = Self::parse_marker(b.bytes, &b.info)?;
            parsed.push(pstate::AppendedBatch {
                info: b.info,
                marker,
            });
        }
        if it.position() != records.len() as u64 {
            return Err(SegmentError::arg(format!(
                "{} trailing bytes after the last complete batch",
                records.len() as u64 - it.position()
            )));
        }
        let Some(first) = first else {
            return Err(SegmentError::arg("no batch to append"));
        };
        let mut leo = self.log_end_offset();
        if first < leo {
            if self.size() == 0 && last >= leo {
                // Kafka's follower rule (B18c): an empty log accepts a batch that reaches its
                // end by restarting at the batch's base. Offsets never go back: the log start
                // stays where it was, and the offsets below it stay hidden.
                let start = self.log_start_offset().max(first);
                self.restart_at_locked(first, start)?;
                leo = first;
            } else {
                return Err(SegmentError::NonMonotonicOffset {
                    path: self.dir.clone(),
                    expected_at_least: leo,
                    found: first,
                });
            }
        }
        let now = self.clock.milliseconds();
        let active =
            self.maybe_roll_locked(first.max(leo), last, max_ts, records.len() as u64, now)?;
        self.write_locked(&active, records, &parsed, last, max_ts, max_ts_off)?;
        Ok(AppendInfo {
            first_offset: first,
            last_offset: last,
            max_timestamp: max_ts,
            offset_of_max_timestamp: max_ts_off,
            size: records.len() as u64,
            batches,
            segment_base_offset: active.base_offset(),
        })
    }

    /// The segment an append of `size` bytes with offsets up to `last` and largest
    /// timestamp `max_ts` goes to (Kafka's `maybeRoll`): the active segment, or a new one
    /// rolled at `roll_base` when [`LogSegment::should_roll`] says so at time `now` (ms
    /// since the epoch, the log's clock read by the caller under the append lock). Shared
    /// by the follower and the leader append; the caller holds the append lock.
    pub(super) fn maybe_roll_locked(
        &self,
        roll_base: i64,
        last: i64,
        max_ts: i64,
        size: u64,
        now: i64,
    ) -> Result<Arc<LogSegment<F>>> {
        let mut active = self.segments.active_segment()?;
        if !self.active_ready.swap(true, Ordering::AcqRel) {
            active.resize_indexes(self.config.max_index_size)?;
        }
        let params = RollParams {
            max_segment_ms: self.config.max_segment_ms(),
            max_segment_bytes: self.config.segment_bytes,
            max_timestamp_in_messages: max_ts,
            max_offset_in_messages: last,
            messages_size: size,
            now,
        };
        if active.should_roll(&params)? {
            active = self.roll_locked(roll_base)?;
        }
        Ok(active)
    }

    /// Writes `records` (the batches `parsed`, last offset `last`) to `active`, updates the
    /// producer state and epochs, then publishes the new log end offset (Kafka's
    /// `localLog.append` and what follows it in `UnifiedLog.append`). Shared by the
    /// follower and the leader append; the caller holds the append lock.
    pub(super) fn write_locked(
        &self,
        active: &Arc<LogSegment<F>>,
        records: &[u8],
        parsed: &[pstate::AppendedBatch],
        last: i64,
        max_ts: i64,
        max_ts_off: i64,
    ) -> Result<()> {
        active.append(last, max_ts, max_ts_off, records)?;
        // The producer state first, then the log end with it: a reader never sees a
        // batch the producer state does not describe
        // (`docs/kafka-behaviour.md#one-moment-bounds`).
        if crate::fs::mutated!(LinPublishBeforeState) {
            // The old order: the log end first, the producer state after it.
            self.publish().set_log_end(last + 1);
            self.update_state_before_publish(active, parsed, last)?;
            drop(self.publish());
            return self.write_epochs_after_append();
        }
        self.update_state_before_publish(active, parsed, last)?;
        self.publish().set_log_end(last + 1);
        self.write_epochs_after_append()
    }

    /// Rolls a new active segment at `new_base` (the log end offset if `None`) unless the
    /// active segment is empty with that base (then it is reused, its indexes re-grown).
    ///
    /// A roll is not a structural change for readers (it only adds an empty segment), so
    /// concurrent [`read`](Self::read)s never wait for it.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `new_base` is below the log end offset (Kafka
    /// silently rolls at the log end instead; a base below it would hide the offsets in
    /// between) or if the base, given or the log end for `None`, is `i64::MAX` (no batch
    /// could follow);
    /// [`SegmentError::IllegalState`] if a non-empty segment with that base exists; I/O.
    pub fn roll(&self, new_base: Option<i64>) -> Result<Arc<LogSegment<F>>> {
        let _g = self.lock.lock();
        self.check_online()?;
        let leo = self.log_end_offset();
        // `None` rolls at the log end, which is checked as a given base would be: at
        // `i64::MAX` the new segment could never take a batch.
        let base = new_base.unwrap_or(leo);
        crate::validate::check_roll_base(base, leo)?;
        self.roll_locked(base)
    }

    pub(super) fn roll_locked(&self, new_base: i64) -> Result<Arc<LogSegment<F>>> {
        let active = self.segments.active_segment()?;
        if active.base_offset() == new_base && active.size() == 0 {
            // field case B4: never roll onto the base of the empty active segment; make it usable.
            active.resize_indexes(self.config.max_index_size)?;
            return Ok(active);
        }
        if let Some(existing) = self.segments.get(new_base) {
            return Err(SegmentError::IllegalState {
                path: existing.log_path(),
                reason: format!(
                    "trying to roll a new log segment with start offset {new_base} while it already exists"
                ),
            });
        }
        if new_base < active.base_offset() {
            return Err(SegmentError::IllegalState {
                path: active.log_path(),
                reason: format!(
                    "cannot roll to {new_base}, below the active segment's base {}",
                    active.base_offset()
                ),
            });
        }
        for kind in names::FileKind::ALL {
            let p = names::segment_file(&self.dir, new_base, kind, "");
            if self.remove_if_exists(&p)? {
                tracing::warn!(file = %p.display(), "deleted a pre-existing file with the new segment's name");
            }
        }
        active.on_become_inactive_segment()?;
        // The final time-index entry and the trims just written must be durable before
        // anything trusts them: below the recovery point the next open does not recover
        // this segment, and an unsynced trim can persist without the entry it keeps
        // (a zero entry, a largest timestamp of 0: found by `cargo xtask crash`,
        // invariant 3). Kafka flushes the rolled segment too, in the background.
        if self.recovery_point() > active.base_offset() {
            // A failure to open a file refuses the roll before anything changed.
            self.offline_unless_open_failure("the flush of a rolled segment", active.flush())?;
        }
        let seg = Arc::new(self.open_segment(new_base, false, "")?);
        self.segments.add(seg.clone());
        self.active_ready.store(true, Ordering::Release);
        self.stats.rolls.fetch_add(1, Ordering::Relaxed);
        self.tier_event(crate::tier::TierEvent::SegmentSealed {
            base_offset: active.base_offset(),
            end_offset: new_base - 1,
        });
        self.snapshot_on_roll(new_base)?;
        tracing::info!(dir = %self.dir.display(), new_base, "rolled new log segment");
        Ok(seg)
    }
}
