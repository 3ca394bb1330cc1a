//! The read forms of a [`LogSegment`] (Kafka's `LogSegment.read`, `translateOffset`,
//! `findOffsetByTimestamp`, `readNextOffset`) and their answers: [`FetchDataInfo`]
//! (copied bytes) and [`RegionFetch`] (a [`FileRegion`] of the `.log`).

use index_offset::OffsetPosition;
use index_txn::{AbortedTxn, TxnIndexSearchResult};

use super::LogSegment;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::region::FileRegion;
use crate::scan::{self, LogOffsetPosition, Scanner, TimestampAndOffset};

/// Where a fetch starts (Kafka's `LogOffsetMetadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    /// The requested offset.
    pub message_offset: i64,
    /// Base offset of the segment holding it.
    pub segment_base_offset: i64,
    /// Byte position in that segment's `.log` of the batch holding (or following) it.
    pub relative_position_in_segment: u64,
}

/// The result of [`LogSegment::read`] and [`Log::read`](crate::Log::read) (Kafka's
/// `FetchDataInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchDataInfo {
    /// Where the read started.
    pub fetch_offset_metadata: LogOffsetMetadata,
    /// The bytes read, as stored in the `.log` (in the log's [`BatchFormat`], checksums not
    /// verified): whole batches from a batch boundary, possibly ending mid-batch. Empty
    /// at the log end. Walk them with [`format::scan`](crate::format::scan).
    pub records: Vec<u8>,
    /// `true` when the first batch is larger than the size limit and `records` holds only
    /// its first bytes (never with [`Log::read`](crate::Log::read), which returns at least
    /// one whole batch).
    pub first_entry_incomplete: bool,
    /// The aborted transactions that overlap the fetched range, for a `read_committed`
    /// consumer to drop their records (Kafka's `FetchDataInfo.abortedTransactions`):
    /// `Some` only for a [`FetchIsolation::TxnCommitted`](crate::FetchIsolation) read of
    /// [`Log::read_with`](crate::Log::read_with) (possibly empty), `None` otherwise
    /// (`docs/kafka-behaviour.md#fetch-aborted-transactions`).
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
}

/// Where a segment read's bytes lie in the `.log`: the shared part of
/// [`LogSegment::read_up_to`] and [`LogSegment::read_region`].
pub(crate) struct SegmentSlice {
    pub(crate) meta: LogOffsetMetadata,
    pub(crate) position: u64,
    pub(crate) len: u64,
    pub(crate) first_entry_incomplete: bool,
}

/// The answer of [`Log::read_region`](crate::Log::read_region): the same read as
/// [`Log::read_with`](crate::Log::read_with), as a [`FileRegion`] instead of copied
/// bytes (Kafka's `FetchDataInfo` over a `FileRecords` slice).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RegionFetch {
    /// The bytes of the answer, in the `.log` of the segment
    /// `fetch_offset_metadata.segment_base_offset` (empty where the read is empty).
    pub region: FileRegion,
    /// Where the read started.
    pub fetch_offset_metadata: LogOffsetMetadata,
    /// As [`FetchDataInfo::first_entry_incomplete`](crate::FetchDataInfo::first_entry_incomplete).
    pub first_entry_incomplete: bool,
    /// As [`FetchDataInfo::aborted_transactions`](crate::FetchDataInfo::aborted_transactions).
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
}

impl<F: BatchFormat> LogSegment<F> {
    /// Kafka's `translateOffset`: the first batch at or after position
    /// `starting_position` whose last offset is ≥ `offset`, starting the scan at the
    /// offset index's lower bound. `None` if `offset` is beyond the segment (the scan
    /// reached the end of the `.log`).
    ///
    /// Stricter than Kafka, whose read then moves on to the next segment: a scan from the
    /// index's position that stops before the end of the `.log` (a torn or corrupt batch)
    /// or whose first batch starts above the index entry's offset (the entry is not at
    /// its batch's start) is done again from `starting_position`
    /// (`docs/kafka-behaviour.md#scan-stops-short`).
    ///
    /// # Errors
    /// Index errors; [`SegmentError::Format`] if a corrupt batch is met before a match
    /// (a torn tail is `None`, as in Kafka); I/O.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>> {
        let entry = self.offset_index()?.lookup(offset)?;
        let p = u64::from(entry.position);
        let from_index = p > starting_position;
        let search = |from, at_most| {
            scan::search_for_offset_with_size::<F>(&self.log, offset, from, at_most)
        };
        self.search_from_entry(
            p.max(starting_position),
            from_index.then_some(entry.offset),
            from_index.then_some(starting_position),
            search,
        )
    }

    /// A search that starts at an offset index entry's position without trusting the
    /// entry (`docs/kafka-behaviour.md#scan-stops-short`): `search(from, at_most)`, its
    /// first batch checked against the entry's offset `at_most`; when it stops before the
    /// end of the `.log`, once more from `restart` (if given, unchecked); past a torn
    /// tail, on from each offset index entry after it. A scan that still stops short
    /// answers `None` for a torn tail and [`SegmentError::Format`] for a corrupt batch.
    fn search_from_entry<T>(
        &self,
        from: u64,
        at_most: Option<i64>,
        restart: Option<u64>,
        search: impl Fn(u64, Option<i64>) -> Result<std::result::Result<Option<T>, scan::ScanStop>>,
    ) -> Result<Option<T>> {
        let mut found = search(from, at_most)?;
        if let (Err(_), Some(restart)) = (&found, restart) {
            found = search(restart, None)?;
        }
        while let Err(scan::ScanStop::TornTail { position, .. }) = found {
            let Some(next) = self.indexed_past(position)? else {
                break;
            };
            found = search(u64::from(next.position), Some(next.offset))?;
        }
        match found {
            Ok(found) => Ok(found),
            Err(stop) => scan::stopped_short(&self.log, stop).map_or(Ok(None), Err),
        }
    }

    /// The first offset index entry at a position after `position`, where a scan met a
    /// torn tail: a torn last batch (a crash mid-write) has no indexed batch after it, so
    /// such an entry means bytes before it lie (a length field framing less than its
    /// batch) and the batches it names are read from there
    /// (`docs/kafka-behaviour.md#scan-stops-short`). `None` if there is none.
    fn indexed_past(&self, position: u64) -> Result<Option<OffsetPosition>> {
        let Ok(position) = u32::try_from(position) else {
            return Ok(None);
        };
        let at = OffsetPosition {
            offset: self.base_offset,
            position,
        };
        Ok(self
            .offset_index()?
            .fetch_upper_bound_offset(at, 1)?
            .filter(|next| next.position > position))
    }

    /// Kafka's two-argument `read(startOffset, maxSize)` (docs/kafka-behaviour.md#segment-read): up to
    /// `max_size` bytes starting at the batch holding `start_offset`, up to the segment's
    /// size; [`read_up_to`](Self::read_up_to) with `max_position = size()`. `None` when
    /// `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// Those of [`translate_offset`](Self::translate_offset).
    pub fn read(&self, start_offset: i64, max_size: u64) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, self.size(), false)
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage = false)`: up to
    /// `max_size` bytes starting at the batch holding `start_offset`, not going past
    /// `max_position` (bytes); a first batch larger than `max_size` is returned cut, with
    /// [`FetchDataInfo::first_entry_incomplete`] set. `None` when `start_offset` is beyond
    /// the segment.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `max_position` is before the batch start;
    /// those of [`translate_offset`](Self::translate_offset).
    pub fn read_up_to(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
    ) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, max_position, false)
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage = true)`, the
    /// fetch's form: as [`read_up_to`](Self::read_up_to), but a first batch larger than
    /// `max_size` is returned whole (still not past `max_position`), so that a consumer
    /// always makes progress.
    ///
    /// # Errors
    /// As [`read_up_to`](Self::read_up_to).
    pub fn read_min_one_message(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
    ) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, max_position, true)
    }

    /// Kafka's `read` with an empty `maxPosition`: where a read of `start_offset` would
    /// start (the position of the batch holding it), without reading any bytes. `None`
    /// when `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// Those of [`translate_offset`](Self::translate_offset).
    pub fn read_metadata(&self, start_offset: i64) -> Result<Option<LogOffsetMetadata>> {
        Ok(self
            .translate_offset(start_offset, 0)?
            .map(|t| LogOffsetMetadata {
                message_offset: start_offset,
                segment_base_offset: self.base_offset,
                relative_position_in_segment: t.position,
            }))
    }

    fn read_with(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
        min_one_message: bool,
    ) -> Result<Option<FetchDataInfo>> {
        let Some(sl) =
            self.slice_with(start_offset, max_size, Some(max_position), min_one_message)?
        else {
            return Ok(None);
        };
        let records = if sl.len == 0 {
            Vec::new()
        } else {
            self.log.read(sl.position, sl.len)?
        };
        Ok(Some(FetchDataInfo {
            fetch_offset_metadata: sl.meta,
            records,
            first_entry_incomplete: sl.first_entry_incomplete,
            aborted_transactions: None,
        }))
    }

    /// Kafka's `read(startOffset, maxSize, maxPositionOpt, minOneMessage)` as a
    /// [`FileRegion`] of the `.log` instead of copied bytes (Kafka's
    /// `FileRecords.slice`, `docs/kafka-behaviour.md#zero-copy-reads`): up to `max_size`
    /// bytes (at least the first batch whole with `min_one_message`) from the batch
    /// holding `start_offset`, not past `max_position`; an empty region when
    /// `max_position` is `None` (Kafka: the bound lies in an earlier segment) or the size
    /// is 0. `None` when `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// As [`read_up_to`](Self::read_up_to); [`SegmentError::SegmentDeleted`] once the
    /// segment's files were removed.
    pub fn read_region(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<crate::RegionFetch>> {
        let Some(sl) = self.slice_with(start_offset, max_size, max_position, min_one_message)?
        else {
            return Ok(None);
        };
        Ok(Some(crate::RegionFetch {
            region: self.log.slice(sl.position, sl.len)?,
            fetch_offset_metadata: sl.meta,
            first_entry_incomplete: sl.first_entry_incomplete,
            aborted_transactions: None,
        }))
    }

    pub(crate) fn slice_with(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<SegmentSlice>> {
        let Some(t) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let meta = LogOffsetMetadata {
            message_offset: start_offset,
            segment_base_offset: self.base_offset,
            relative_position_in_segment: t.position,
        };
        let adjusted = if min_one_message {
            max_size.max(t.size)
        } else {
            max_size
        };
        let empty = SegmentSlice {
            meta,
            position: t.position,
            len: 0,
            first_entry_incomplete: false,
        };
        let Some(max_position) = max_position else {
            return Ok(Some(empty));
        };
        if adjusted == 0 {
            return Ok(Some(empty));
        }
        let Some(room) = max_position.checked_sub(t.position) else {
            return Err(SegmentError::arg(format!(
                "max position {max_position} is before the batch position {}",
                t.position
            )));
        };
        Ok(Some(SegmentSlice {
            meta,
            position: t.position,
            len: room.min(adjusted),
            first_entry_incomplete: adjusted < t.size,
        }))
    }

    /// Kafka's `findOffsetByTimestamp` (docs/kafka-behaviour.md#segment-find-by-timestamp): the first record with timestamp ≥
    /// `timestamp` (ms since epoch) and offset ≥ `starting_offset`. Stricter than Kafka
    /// as [`translate_offset`](Self::translate_offset): a scan from an index entry that
    /// lies is done again from the start of the `.log`
    /// (`docs/kafka-behaviour.md#scan-stops-short`).
    ///
    /// # Errors
    /// Index and I/O errors; [`SegmentError::Format`] if a corrupt batch is met before a
    /// match.
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let entry = self.time_index()?.lookup(timestamp)?;
        let at = self
            .offset_index()?
            .lookup(entry.offset.max(starting_offset))?;
        let pos = u64::from(at.position);
        let search = |from, at_most| {
            scan::search_for_timestamp::<F>(&self.log, timestamp, from, starting_offset, at_most)
        };
        // As `translate_offset`: a scan from a lying index entry is done again from the
        // start (docs/kafka-behaviour.md#scan-stops-short).
        self.search_from_entry(
            pos,
            (pos > 0).then_some(at.offset),
            (pos > 0).then_some(0),
            search,
        )
    }

    /// Kafka's `fetchUpperBoundOffset`: the offset of the first index entry whose position
    /// is ≥ `start_position.position + fetch_size`, if any.
    ///
    /// # Errors
    /// Index errors.
    pub fn fetch_upper_bound_offset(
        &self,
        start_position: OffsetPosition,
        fetch_size: i32,
    ) -> Result<Option<i64>> {
        Ok(self
            .offset_index()?
            .fetch_upper_bound_offset(start_position, fetch_size)?
            .map(|p| p.offset))
    }

    /// Kafka's `readNextOffset`: the offset after the last batch of the segment, or the
    /// base offset if it holds none (docs/kafka-behaviour.md#segment-read-next-offset). A header-only (0-record) batch counts.
    ///
    /// # Errors
    /// Index, format and I/O errors; [`SegmentError::Corrupt`] if a batch's last offset is
    /// `i64::MAX` (the next offset is not representable).
    pub fn read_next_offset(&self) -> Result<i64> {
        let last = self.offset_index()?.last_offset()?;
        let Some(t) = self.translate_offset(last, 0)? else {
            return Ok(self.base_offset);
        };
        let mut sc = Scanner::<F>::new(&self.log, t.position);
        let mut next = self.base_offset;
        while let Some((info, _)) = sc.next_batch()? {
            next = info
                .last_offset
                .checked_add(1)
                .ok_or_else(|| SegmentError::Corrupt {
                    path: self.log.path(),
                    reason: format!(
                        "batch at position {} has last offset {}: the next offset is not representable",
                        info.position,
                        i64::MAX
                    ),
                })?;
        }
        Ok(next)
    }

    /// Whether the segment holds an offset not representable relative to its base
    /// (Kafka's `hasOverflow`).
    ///
    /// # Errors
    /// As [`read_next_offset`](Self::read_next_offset).
    pub fn has_overflow(&self) -> Result<bool> {
        let next = self.read_next_offset()?;
        Ok(next > self.base_offset && !self.can_convert_to_relative_offset(next - 1))
    }

    /// Kafka's `collectAbortedTxns` on this segment's transaction index.
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<TxnIndexSearchResult> {
        Ok(self
            .txn_index
            .collect_aborted_txns(fetch_offset, upper_bound_offset)?)
    }
}
