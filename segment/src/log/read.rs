//! Reads of a [`Log`] without a lock: fetches of batches within the log's bounds, offsets
//! by timestamp and aborted transactions (`docs/kafka-behaviour.md#concurrent-reads`).

use std::sync::Arc;

use index_offset::OffsetPosition;
use index_txn::AbortedTxn;

use super::{Log, LogBounds};
use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat};
use crate::scan::TimestampAndOffset;
use crate::segment::RegionFetch;
use crate::segment::{FetchDataInfo, LogOffsetMetadata, LogSegment, SegmentSlice};

/// How far a fetch may read (Kafka's `FetchIsolation`,
/// `docs/kafka-behaviour.md#fetch-isolation`): the offset a read of
/// [`Log::read_with`] or [`Log::read_region`] stops before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FetchIsolation {
    /// Up to the log end offset (Kafka's `LOG_END`: a follower's fetch).
    LogEnd,
    /// Up to the [high watermark](Log::high_watermark) (Kafka's `HIGH_WATERMARK`: a
    /// `read_uncommitted` consumer).
    HighWatermark,
    /// Up to the [last stable offset](Log::last_stable_offset), with the aborted
    /// transactions of the range (Kafka's `TXN_COMMITTED`: a `read_committed` consumer).
    TxnCommitted,
}

/// Where a read pass found its answer: the segment and the bytes' place in its `.log`.
struct Located<F: BatchFormat> {
    seg: Arc<LogSegment<F>>,
    slice: SegmentSlice,
}

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
    /// This is the follower's read, bounded only by the log end. A consumer's read,
    /// bounded by the high watermark or the last stable offset, is
    /// [`read_with`](Self::read_with); the same without copying the bytes,
    /// [`read_region`](Self::read_region).
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
    /// change that removes data (a segment leaving the map, a truncation) publishes the
    /// new bounds (the log start raised, the log end lowered) once, before it ends, and
    /// runs as a *structural change* of the segment map's generation (a seqlock, see
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
    /// [`LogSegments`]: crate::segment_map::LogSegments
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
        self.check_in_range(offset, &self.bounds())?;
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
                aborted_transactions: None,
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

    /// Kafka's `UnifiedLog.checkLogStartOffset`, which `read` runs before it fetches the
    /// isolation bound's metadata: a fetch below the log start fails without converting
    /// a bare high watermark to its batch's base offset.
    fn check_log_start(&self, offset: i64) -> Result<()> {
        let b = self.bounds();
        if offset < b.log_start_offset {
            return self.check_in_range(offset, &b);
        }
        Ok(())
    }

    /// Checks `offset` against the bounds `b` of one moment.
    fn check_in_range(&self, offset: i64, b: &LogBounds) -> Result<()> {
        let (start, leo) = (b.log_start_offset, b.log_end_offset);
        if offset < start || offset > leo {
            return Err(SegmentError::OffsetOutOfRange {
                path: self.dir.clone(),
                offset,
                log_start_offset: start,
                log_end_offset: leo,
            });
        }
        self.check_local(offset, start)
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

    /// Kafka's `UnifiedLog.read(startOffset, maxLength, isolation, minOneMessage)`
    /// (`docs/kafka-behaviour.md#fetch-isolation`): up to `max_bytes` from the batch
    /// holding `offset`, in one segment, stopping before the isolation's bound — the log
    /// end offset, the [high watermark](Self::high_watermark) or the
    /// [last stable offset](Self::last_stable_offset) — at the position of the batch
    /// holding that bound in its segment (Kafka's `maxPosition`), so only batches wholly
    /// below the bound are returned. With `min_one_message` a first batch larger than
    /// `max_bytes` is returned whole (still not past the bound); without it, cut, with
    /// [`FetchDataInfo::first_entry_incomplete`].
    ///
    /// Answers, besides data:
    /// * empty records when `offset` is the bound or above it (up to the log end), and
    ///   where no batch is at or above `offset`; with [`FetchIsolation::LogEnd`] that is
    ///   at the log end even while an append is in progress (unlike [`read`](Self::read),
    ///   which may return that append's bytes);
    /// * [`FetchDataInfo::aborted_transactions`]: `Some` for
    ///   [`FetchIsolation::TxnCommitted`] (empty for an empty answer), with the aborted
    ///   transactions that overlap the fetched range by Kafka's rule
    ///   (`docs/kafka-behaviour.md#fetch-aborted-transactions`), `None` otherwise.
    ///
    /// Concurrent changes: as [`read`](Self::read) (the same generation protocol; the
    /// bound is read within the pass), so every answer is one of the log at one moment.
    ///
    /// # Errors
    /// As [`read`](Self::read): [`SegmentError::OffsetOutOfRange`] outside
    /// `[log_start_offset, log_end_offset]`, format, I/O and index errors,
    /// [`SegmentError::IllegalState`] for segment files changed behind the log's back.
    pub fn read_with(
        &self,
        offset: i64,
        max_bytes: u64,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<FetchDataInfo> {
        if isolation != FetchIsolation::LogEnd {
            self.check_log_start(offset)?;
            self.resolve_high_watermark()?;
        }
        self.stable_pass(|| {
            let (found, aborted) =
                self.locate_pass(offset, max_bytes, isolation, min_one_message)?;
            let Located { seg, slice } = found;
            let records = if slice.len == 0 {
                Vec::new()
            } else {
                seg.log().read(slice.position, slice.len)?
            };
            if let Some(Ok(first)) = format::scan::<F>(&records, 0).next() {
                if first.info.last_offset < offset {
                    return Err(self.changed_behind(offset, &slice.meta, &first.info));
                }
            }
            Ok(FetchDataInfo {
                fetch_offset_metadata: slice.meta,
                records,
                first_entry_incomplete: slice.first_entry_incomplete,
                aborted_transactions: aborted,
            })
        })
    }

    /// The read of [`read_with`](Self::read_with), zero-copy: the same answer as a
    /// [`FileRegion`](crate::FileRegion) of the segment's `.log` (Kafka's
    /// `FileRecords.slice`, `docs/kafka-behaviour.md#zero-copy-reads`) instead of copied
    /// bytes. The region is an owned handle: it stays valid after the segment is rolled,
    /// renamed `.deleted` by retention and unlinked, and reads what the segment held when
    /// the read answered; once a truncation cut its bytes it fails with
    /// [`std::io::ErrorKind::UnexpectedEof`] instead (see [`crate::region`] for exactly
    /// what each of its calls then gives). Nothing is read here, so the check of
    /// [`read`](Self::read) against files changed behind the log's back is not made.
    ///
    /// # Errors
    /// As [`read_with`](Self::read_with), without its `IllegalState`.
    pub fn read_region(
        &self,
        offset: i64,
        max_bytes: u64,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<RegionFetch> {
        if isolation != FetchIsolation::LogEnd {
            self.check_log_start(offset)?;
            self.resolve_high_watermark()?;
        }
        self.stable_pass(|| {
            let (found, aborted) =
                self.locate_pass(offset, max_bytes, isolation, min_one_message)?;
            let Located { seg, slice } = found;
            Ok(RegionFetch {
                region: seg.log().slice(slice.position, slice.len)?,
                fetch_offset_metadata: slice.meta,
                first_entry_incomplete: slice.first_entry_incomplete,
                aborted_transactions: aborted,
            })
        })
    }

    /// Runs `pass` until it ran wholly inside one even, unchanged generation of the
    /// segment map (the protocol of [`read`](Self::read)).
    pub(super) fn stable_pass<T>(&self, mut pass: impl FnMut() -> Result<T>) -> Result<T> {
        loop {
            let seen = self.segments.stable_generation();
            let found = pass();
            if self.segments.is_generation(seen) {
                return found;
            }
        }
    }

    fn changed_behind(
        &self,
        offset: i64,
        meta: &LogOffsetMetadata,
        first: &crate::format::BatchInfo,
    ) -> SegmentError {
        SegmentError::IllegalState {
            path: self.dir.clone(),
            reason: format!(
                "read({offset}) in segment {} found batch {}..={} below the offset: \
                 the segment files changed behind the log (another process writing \
                 the directory?); reopen the log to recover them",
                meta.segment_base_offset, first.base_offset, first.last_offset
            ),
        }
    }

    /// The bound of `isolation` in the bounds `b` of one moment (never above its log end).
    fn isolation_bound(isolation: FetchIsolation, b: &LogBounds) -> i64 {
        let leo = b.log_end_offset;
        let bound = match isolation {
            FetchIsolation::LogEnd => leo,
            FetchIsolation::HighWatermark => b.high_watermark.min(leo),
            FetchIsolation::TxnCommitted => b.last_stable_offset.min(leo),
        };
        if crate::fs::mutated!(LinReadPastBound) {
            return (bound + 1).min(leo);
        }
        bound
    }

    /// The segment and byte position of offset `o` (Kafka's `convertToOffsetMetadata`):
    /// the batch holding it, or the first batch above it where the log has a gap. Where
    /// no batch is at or above it, the end of the last segment searched, as its size was
    /// **before** the search: an append of the batch at `o` that is under way (its bytes
    /// visible, the log end not yet moved) is then not counted below `o`.
    ///
    /// Appends and rolls run during the search (they are not structural changes): a
    /// segment searched without finding `o` may take the batch at `o` right after, and
    /// be rolled, before the search moves on to the segment above it. That later segment
    /// would put the bound above the batch at `o`, so a bounded read would serve it and
    /// every batch after it in the lower segment (found by `cargo xtask lin`: reads at
    /// all three isolations served batches at and past their bound). As
    /// [`read_from_segments`](Self::read_from_segments) does, the answer is kept only if
    /// every segment passed over still has the size it had when it was searched; else
    /// the search runs again.
    fn position_of(&self, o: i64) -> Result<(Arc<LogSegment<F>>, u64)> {
        'search: loop {
            let mut passed: Vec<(Arc<LogSegment<F>>, u64)> = Vec::new();
            let mut seg = self.segments.floor_segment(o);
            while let Some(s) = seg {
                let size = s.size();
                // An empty segment holds no batch: its offset index is not searched, so a
                // bound in a segment just rolled does not create its `.index` (Kafka's
                // bound there is the log end's metadata and loads no index; see
                // `docs/kafka-behaviour.md#lazy-index-files`).
                if size > 0 {
                    if let Some(t) = s.translate_offset(o, 0)? {
                        if passed.iter().any(|(p, was)| p.size() != *was) {
                            continue 'search;
                        }
                        return Ok((s, t.position));
                    }
                }
                seg = self.segments.higher_segment(s.base_offset());
                passed.push((s, size));
            }
            if passed.iter().any(|(p, was)| p.size() != *was) {
                continue 'search;
            }
            return match passed.pop() {
                Some(found) => Ok(found),
                None => {
                    let active = self.segments.active_segment()?;
                    let size = active.size();
                    Ok((active, size))
                }
            };
        }
    }

    /// An empty answer at offset `o`, at the place [`position_of`](Self::position_of)
    /// gives (`at_end`: the active segment's end, as [`read`](Self::read) answers).
    fn empty_at(&self, o: i64, at_end: bool) -> Result<Located<F>> {
        let (seg, position) = if at_end {
            let active = self.segments.active_segment()?;
            let size = active.size();
            (active, size)
        } else {
            self.position_of(o)?
        };
        Ok(Located {
            slice: SegmentSlice {
                meta: LogOffsetMetadata {
                    message_offset: o,
                    segment_base_offset: seg.base_offset(),
                    relative_position_in_segment: position,
                },
                position,
                len: 0,
                first_entry_incomplete: false,
            },
            seg,
        })
    }

    /// One lock-free pass of [`read_with`](Self::read_with) and
    /// [`read_region`](Self::read_region) (Kafka's `LocalLog.read` with its
    /// `maxOffsetMetadata`), and the aborted transactions of a `TxnCommitted` read.
    fn locate_pass(
        &self,
        offset: i64,
        max_bytes: u64,
        isolation: FetchIsolation,
        min_one_message: bool,
    ) -> Result<(Located<F>, Option<Vec<AbortedTxn>>)> {
        // One moment's bounds for the whole pass: the log end, the isolation's bound and
        // the aborted transactions all answer for it
        // (`docs/kafka-behaviour.md#one-moment-bounds`).
        let b = self.bounds();
        self.check_in_range(offset, &b)?;
        let leo = b.log_end_offset;
        let bound = Self::isolation_bound(isolation, &b);
        let txn = isolation == FetchIsolation::TxnCommitted;
        if offset >= bound {
            let empty = self.empty_at(offset, offset >= leo)?;
            return Ok((empty, txn.then(Vec::new)));
        }
        // Kafka's `maxPosition`: segments below the bound's segment are read to their
        // size, the bound's segment up to the bound's batch, later ones not at all. The
        // log end is a bound too (Kafka's `logEndOffsetMetadata`): an append under way
        // above it is not returned.
        let (limit_base, limit_position) = {
            let (s, p) = self.position_of(bound)?;
            (s.base_offset(), p)
        };
        let max_position = |s: &LogSegment<F>, size: u64| {
            if s.base_offset() < limit_base {
                Some(size)
            } else if s.base_offset() == limit_base {
                Some(limit_position.min(size))
            } else {
                None
            }
        };
        'pass: loop {
            let mut passed: Vec<(Arc<LogSegment<F>>, u64)> = Vec::new();
            let mut seg = self.segments.floor_segment(offset);
            while let Some(s) = seg {
                let size = s.size();
                let max = max_position(&s, size);
                if let Some(slice) = s.slice_with(offset, max_bytes, max, min_one_message)? {
                    // As in `read_from_segments`: an answer past segments that grew since
                    // they were searched may have skipped the batch that holds `offset`.
                    if passed.iter().any(|(p, was)| p.size() != *was) {
                        continue 'pass;
                    }
                    let aborted = if txn {
                        Some(self.aborted_in_fetch(offset, &s, &slice, leo)?)
                    } else {
                        None
                    };
                    return Ok((Located { seg: s, slice }, aborted));
                }
                seg = self.segments.higher_segment(s.base_offset());
                passed.push((s, size));
            }
            // No batch at or above `offset` (a gap that reaches the log end).
            return Ok((self.empty_at(offset, true)?, txn.then(Vec::new)));
        }
    }

    /// Kafka's `LocalLog.addAbortedTransactions`: the fetch's upper bound is the offset of
    /// the first offset-index entry at or after the fetched range's end in its segment
    /// (`fetchUpperBoundOffset`), else the next segment's base offset, else the log end;
    /// the aborted transactions with `last_offset ≥ offset` and `first_offset` below that
    /// bound are collected from the fetch's segment on, until a segment's search is
    /// complete (`docs/kafka-behaviour.md#fetch-aborted-transactions`).
    fn aborted_in_fetch(
        &self,
        offset: i64,
        seg: &Arc<LogSegment<F>>,
        slice: &SegmentSlice,
        leo: i64,
    ) -> Result<Vec<AbortedTxn>> {
        let start = OffsetPosition {
            offset: slice.meta.message_offset,
            position: u32::try_from(slice.position).unwrap_or(u32::MAX),
        };
        let fetch_size = i32::try_from(slice.len).unwrap_or(i32::MAX);
        let upper = match seg.fetch_upper_bound_offset(start, fetch_size)? {
            Some(o) => o,
            None => self
                .segments
                .higher_segment(seg.base_offset())
                .map_or(leo, |n| n.base_offset()),
        };
        let mut out = Vec::new();
        let mut cur = Some(seg.clone());
        while let Some(s) = cur {
            let r = s.collect_aborted_txns(offset, upper)?;
            // An entry whose marker is at or above the pass's log end belongs to an append
            // not yet published (its entry is written first): not of this moment.
            out.extend(
                r.aborted_transactions
                    .into_iter()
                    .filter(|t| t.last_offset < leo),
            );
            if r.is_complete {
                break;
            }
            cur = self.segments.higher_segment(s.base_offset());
        }
        if crate::fs::mutated!(LinAbortedDrop) {
            out.pop();
        }
        Ok(out)
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
    /// `timestamp` is a real timestamp: the ListOffsets sentinels (−1 latest, −2
    /// earliest, −3 max timestamp, ...) mean nothing here (a negative target matches the
    /// first record); [`fetch_offset_by_timestamp`](Self::fetch_offset_by_timestamp)
    /// answers them as Kafka does.
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
        self.collect_aborted_txns_from(fetch_offset, fetch_offset, upper_bound_offset)
    }

    /// Kafka's `UnifiedLog.collectAbortedTransactions(start, upper)` as the cleaner calls
    /// it (`LocalLog.collectAbortedTransactions(logStartOffset, start, upper)`): the search
    /// starts at the segment holding `start`, but keeps the transactions with `last_offset
    /// ≥ log_start_offset`, so a transaction that ended below the log start is not
    /// reported even when its batches are still in a segment
    /// (`docs/kafka-behaviour.md#cleaner-txn-markers`).
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    #[cfg(feature = "cleaner")]
    pub(crate) fn collect_aborted_txns_for_cleaner(
        &self,
        start: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>> {
        self.collect_aborted_txns_from(self.log_start_offset(), start, upper_bound_offset)
    }

    fn collect_aborted_txns_from(
        &self,
        fetch_offset: i64,
        start: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>> {
        let mut out = Vec::new();
        let mut seg = self
            .segments
            .floor_segment(start)
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
