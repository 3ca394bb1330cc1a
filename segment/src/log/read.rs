//! Reads of a [`Log`] without a lock: fetches of batches within the log's bounds, offsets
//! by timestamp and aborted transactions (`docs/kafka-behaviour.md#concurrent-reads`).

use std::sync::Arc;

use index_txn::AbortedTxn;

use super::Log;
use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat};
use crate::scan::TimestampAndOffset;
use crate::segment::{FetchDataInfo, LogOffsetMetadata, LogSegment};

impl<F: BatchFormat> Log<F> {
    /// Reads up to `max_bytes` (at least one whole batch) from the batch holding `offset`,
    /// across segments (Kafka: `floorSegment`, then `higherSegment` while a segment has
    /// nothing at or after the offset). Reading at the log end returns empty records.
    ///
    /// [`FetchDataInfo::records`] holds the stored bytes of format `F`, unchanged and
    /// unchecked (no [`validate`](BatchFormat::validate)): they start at the first byte of
    /// the batch holding `offset` (which may start before `offset`: skip the records
    /// below it), come from one segment only, and may end in the middle of a batch when
    /// `max_bytes` cuts one. Walk them with [`format::scan`], which
    /// yields the complete batches and ignores a cut one; to read on, call again from the
    /// last offset read plus one.
    ///
    /// # Under concurrent changes (`docs/kafka-behaviour.md#concurrent-reads`)
    ///
    /// Reads take no lock and may run concurrently with every other call. Whatever runs
    /// concurrently — appends, [`roll`](Self::roll), [`truncate_to`](Self::truncate_to),
    /// retention ([`delete_old_segments`](Self::delete_old_segments)),
    /// [`delete_records`](Self::delete_records),
    /// [`truncate_fully_and_start_at`](Self::truncate_fully_and_start_at) — a read of
    /// offset `o` answers as the log was at one moment during the call, with exactly one
    /// of:
    ///
    /// * bytes whose first batch **contains** `o`;
    /// * bytes whose first batch is the first one **above** `o`, only where the log has a
    ///   gap at `o` (no batch holds it, as after a roll at a base above the log end);
    /// * empty records, only where no batch is at or above `o` (`o` is the log end, or in
    ///   a gap that reaches it, as after a truncation into a gap);
    /// * [`SegmentError::OffsetOutOfRange`], only where `o` is below the log start or
    ///   above the log end.
    ///
    /// It never returns a later batch past data that exists, an empty fetch inside the
    /// log, or an error caused by the concurrent change (an I/O error of a segment that was
    /// truncated or deleted under it, `Index(Closed)`, `SegmentDeleted`). The protocol: a
    /// change that removes data (a segment leaving the map, a truncation) first publishes
    /// the new bounds (the log start raised, the log end lowered), and runs as a
    /// *structural change* of the segment map's generation (a seqlock, see
    /// [`LogSegments`]); a read makes its pass over the bounds and the segments without a
    /// lock and keeps its answer only if the generation was even and unchanged from the
    /// start of the pass to its end, else it makes the pass again (a read that starts
    /// during a change waits for it, spinning then yielding: the change is a bounded
    /// amount of work with no fsync). Appends and rolls are not structural: they only add
    /// data, so a read never waits for them. [`close`](Self::close) takes the log by
    /// value, so no read through the log overlaps it; a reader that holds an
    /// `Arc<LogSegment>` from [`segments`](Self::segments) gets the batch or a typed
    /// "segment gone" error after the close.
    ///
    /// # Errors
    /// [`SegmentError::OffsetOutOfRange`] outside `[log_start_offset, log_end_offset]`
    /// (with the bounds of the moment the read answers for); format and I/O errors of the
    /// data itself; [`SegmentError::IllegalState`] if the segment files changed behind the
    /// log's back (a stable pass found a first batch below `offset`, which only another
    /// process writing the directory can cause).
    ///
    /// [`LogSegments`]: crate::segments::LogSegments
    pub fn read(&self, offset: i64, max_bytes: u64) -> Result<FetchDataInfo> {
        loop {
            let seen = self.segments.stable_generation();
            let found = self.read_pass(offset, max_bytes);
            if self.segments.is_generation(seen) {
                return found;
            }
            // A structural change began or ended during the pass: its answer may mix the
            // log before and after it. Look again.
        }
    }

    /// One lock-free pass of [`read`](Self::read): the bounds, then the segments. Valid only
    /// if the generation did not change meanwhile.
    fn read_pass(&self, offset: i64, max_bytes: u64) -> Result<FetchDataInfo> {
        self.check_in_range(offset)?;
        let Some(info) = self.read_from_segments(offset, max_bytes)? else {
            let active = self.segments.active_segment()?;
            return Ok(FetchDataInfo {
                fetch_offset_metadata: LogOffsetMetadata {
                    message_offset: offset,
                    segment_base_offset: active.base_offset(),
                    relative_position_in_segment: active.size(),
                },
                records: Vec::new(),
                first_entry_incomplete: false,
            });
        };
        // The first batch must reach `offset` (the segment's search guarantees it; a batch
        // below it means the bytes changed between the search and the read).
        if let Some(Ok(first)) = format::scan::<F>(&info.records, 0).next() {
            if first.info.last_offset < offset {
                return Err(SegmentError::IllegalState {
                    path: self.dir.clone(),
                    reason: format!(
                        "read({offset}) in segment {} found batch {}..={} below the offset: \
                         the segment files changed behind the log (another process writing \
                         the directory?); reopen the log to recover them",
                        info.fetch_offset_metadata.segment_base_offset,
                        first.info.base_offset,
                        first.info.last_offset
                    ),
                });
            }
        }
        Ok(info)
    }

    fn check_in_range(&self, offset: i64) -> Result<()> {
        let start = self.log_start_offset();
        let leo = self.log_end_offset();
        if offset < start || offset > leo {
            return Err(SegmentError::OffsetOutOfRange {
                path: self.dir.clone(),
                offset,
                log_start_offset: start,
                log_end_offset: leo,
            });
        }
        Ok(())
    }

    /// The segments' part of a read pass: the floor segment of `offset`, then the higher
    /// ones while a segment has nothing at or after it. `None` if none has.
    ///
    /// An answer from a later segment is kept only if every segment passed over still has
    /// the size it had when it was searched: a segment passed over may have been the
    /// active one, and an append to it followed by a roll (neither is a structural change)
    /// would otherwise let the answer skip the batch that now holds `offset` (a read at
    /// the log end answering with the batch after the one appended there). Sizes only grow
    /// between structural changes, so an unchanged size is unchanged content.
    fn read_from_segments(&self, offset: i64, max_bytes: u64) -> Result<Option<FetchDataInfo>> {
        'pass: loop {
            let mut passed: Vec<(Arc<LogSegment<F>>, u64)> = Vec::new();
            let mut seg = self.segments.floor_segment(offset);
            while let Some(s) = seg {
                let size = s.size();
                if let Some(info) = s.read_min_one_message(offset, max_bytes, size)? {
                    if passed.iter().any(|(p, was)| p.size() != *was) {
                        continue 'pass;
                    }
                    return Ok(Some(info));
                }
                seg = self.segments.higher_segment(s.base_offset());
                passed.push((s, size));
            }
            return Ok(None);
        }
    }

    /// Kafka's `fetchOffsetByTimestamp` for a real timestamp: the first record at or after
    /// `timestamp` (ms since epoch) with offset ≥ the log start offset. Segments are tried
    /// in order, starting with the first whose largest record timestamp reaches the
    /// target; unlike Kafka, a segment whose search finds nothing does not end the search.
    /// `None` if no record is that late.
    ///
    /// Within a batch the answer is [`BatchFormat::search_timestamp`]'s: the exact record
    /// for Kafka's format, the batch's first offset for a format that keeps the default.
    ///
    /// # Errors
    /// Index, format and I/O errors.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<TimestampAndOffset>> {
        let start = self.log_start_offset();
        for s in self.segments.values() {
            let found = (|| {
                match s.largest_record_timestamp()? {
                    Some(t) if t >= timestamp => {}
                    _ => return Ok(None),
                }
                s.find_offset_by_timestamp(timestamp, start)
            })();
            match found {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => {}
                // Deleted under us by retention: its offsets are below the log start now.
                Err(_) if s.is_deleted() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Kafka's `collectAbortedTransactions`: aborted transactions with `last_offset ≥
    /// fetch_offset` and `first_offset < upper_bound_offset`, gathered from the segment
    /// holding `fetch_offset` onwards until an entry with `last_stable_offset ≥
    /// upper_bound_offset` is seen (field case B10).
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>> {
        let mut out = Vec::new();
        let mut seg = self
            .segments
            .floor_segment(fetch_offset)
            .or_else(|| self.segments.first_segment());
        while let Some(s) = seg {
            match s.collect_aborted_txns(fetch_offset, upper_bound_offset) {
                Ok(r) => {
                    out.extend(r.aborted_transactions);
                    if r.is_complete {
                        break;
                    }
                }
                // Deleted under us by retention: nothing of it is readable any more.
                Err(_) if s.is_deleted() => {}
                Err(e) => return Err(e),
            }
            seg = self.segments.higher_segment(s.base_offset());
        }
        Ok(out)
    }
}
