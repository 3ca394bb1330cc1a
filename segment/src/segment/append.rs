//! Appends to a [`LogSegment`] (Kafka's `append`, `appendFromFile`) and the roll
//! decision (`shouldRoll`, `onBecomeInactiveSegment`).

use index_time::TimestampOffset;

use super::{LogSegment, State};
use crate::config::RollParams;
use crate::error::Result;
use crate::format::BatchFormat;
use crate::fs::FsOp;
use crate::log_file::LogFile;
use crate::scan::Scanner;

impl<F: BatchFormat> LogSegment<F> {
    /// Appends `records` (whole batches) whose largest offset is `largest_offset`
    /// (Kafka's `append`, docs/kafka-behaviour.md#segment-append). `largest_timestamp` (ms since epoch) and
    /// `shallow_offset_of_max_timestamp` describe the max timestamp of the appended
    /// batches. Adds a sparse index entry `(largest_offset, start position)` when more than
    /// `index_interval_bytes` were appended since the last entry (counted **before** this
    /// append). No-op for empty `records`.
    ///
    /// # Errors
    /// [`SegmentError::OffsetOverflow`](crate::SegmentError::OffsetOverflow) if
    /// `largest_offset` is not representable relative to the base offset (nothing
    /// written); [`SegmentError::InvalidArgument`](crate::SegmentError::InvalidArgument) if
    /// the file would exceed 2 GiB; index errors (full index, non-increasing offset); I/O.
    pub fn append(
        &self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        records: &[u8],
    ) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut st = self.state.lock();
        let physical_position = self.log.size_in_bytes();
        if physical_position == 0 {
            st.rolling_based_timestamp = Some(largest_timestamp);
        }
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(self.overflow(largest_offset));
        }
        self.log.append(records)?;
        let max = self.load_max(&mut st)?;
        if largest_timestamp > max.timestamp {
            st.max_timestamp_and_offset = Some(TimestampOffset {
                timestamp: largest_timestamp,
                offset: shallow_offset_of_max_timestamp,
            });
        }
        if st.bytes_since_last_index_entry > self.index_interval_bytes {
            self.offset_index()?
                .append(largest_offset, physical_position as u32)?;
            let m = self.load_max(&mut st)?;
            self.time_index()?.maybe_append(m.timestamp, m.offset)?;
            st.bytes_since_last_index_entry = 0;
        }
        st.bytes_since_last_index_entry += records.len() as u64;
        Ok(())
    }

    /// Kafka's `appendFromFile` (acceptance case 65): copies whole batches of `source`, starting at
    /// byte position `start` (a batch boundary), into this segment and returns the number
    /// of bytes copied.
    ///
    /// Batches are copied in chunks of less than 1 MiB — a chunk always takes at least one
    /// batch, so a larger batch is copied alone — and each chunk is one
    /// [`append`](Self::append) (largest offset = the chunk's last batch's last offset, max
    /// timestamp = the largest batch max timestamp with the last offset of the first batch
    /// holding it). Copying stops before the first batch whose last offset is not
    /// representable relative to this segment's base offset (the log loader uses this to
    /// split a legacy segment with offset overflow), and at the end of the source's
    /// complete, well-framed batches: a torn or corrupt tail is not copied (compare the
    /// result with the source size). Checksums are not verified (as Kafka).
    ///
    /// # Errors
    /// Those of [`append`](Self::append) (e.g.
    /// [`SegmentError::InvalidArgument`](crate::SegmentError::InvalidArgument) when this
    /// segment's `.log` would exceed 2 GiB); I/O reading `source`. Chunks appended before
    /// an error stay appended.
    pub fn append_from_file(&self, source: &LogFile, start: u64) -> Result<u64> {
        let mut position = start;
        let mut chunk = Vec::new();
        loop {
            let n = self.append_chunk_from_file(source, position, &mut chunk)?;
            if n == 0 {
                return Ok(position - start);
            }
            position += n;
        }
    }

    /// One chunk of [`append_from_file`](Self::append_from_file); returns its size.
    fn append_chunk_from_file(
        &self,
        source: &LogFile,
        position: u64,
        chunk: &mut Vec<u8>,
    ) -> Result<u64> {
        /// Kafka's read buffer for `appendFromFile`, bytes.
        const CHUNK_BYTES: usize = 1 << 20;
        chunk.clear();
        let mut max_timestamp = i64::MIN;
        let mut shallow_offset_of_max_timestamp = i64::MIN;
        let mut max_offset = i64::MIN;
        let mut sc = Scanner::<F>::new(source, position);
        while let Some((info, bytes)) = sc.next_batch()? {
            if !self.can_convert_to_relative_offset(info.last_offset)
                || (!chunk.is_empty() && chunk.len() + bytes.len() >= CHUNK_BYTES)
            {
                break;
            }
            if info.max_timestamp > max_timestamp {
                max_timestamp = info.max_timestamp;
                shallow_offset_of_max_timestamp = info.last_offset;
            }
            max_offset = info.last_offset;
            chunk.extend_from_slice(bytes);
        }
        if chunk.is_empty() {
            return Ok(0);
        }
        self.append(
            max_offset,
            max_timestamp,
            shallow_offset_of_max_timestamp,
            chunk,
        )?;
        Ok(chunk.len() as u64)
    }

    /// Records an aborted transaction in the transaction index (Kafka's `updateTxnIndex`
    /// for aborted transactions).
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`](crate::SegmentError::TxnIndex).
    pub fn append_aborted_txn(&self, txn: &index_txn::AbortedTxn) -> Result<()> {
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.append(txn)?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        Ok(())
    }

    /// Called when a new segment is rolled after this one (Kafka's
    /// `onBecomeInactiveSegment`): appends the final time-index entry (max timestamp so
    /// far, using the reserved slot), trims both indexes and drops `.log` preallocation.
    ///
    /// Then — unlike Kafka, which keeps every inactive segment's indexes mapped — it drops
    /// this segment's mappings of both indexes ([`unload_indexes`](Self::unload_indexes));
    /// the next lookup maps them again. The number of live mappings therefore does not
    /// grow with the number of rolls (field case B17).
    ///
    /// # Errors
    /// Index and I/O errors; a refusal of the seam. Calling it again after a failure is
    /// safe (every step is idempotent).
    pub fn on_become_inactive_segment(&self) -> Result<()> {
        let max = {
            let mut st = self.state.lock();
            self.load_max(&mut st)?
        };
        let ti = self.time_index()?;
        ti.maybe_append_final(max.timestamp, max.offset)?;
        let oi = self.offset_index()?;
        self.trim_index(&*oi)?;
        self.trim_index(&*ti)?;
        drop((oi, ti));
        self.log.trim()?;
        self.unload_indexes()
    }

    fn load_first_batch_timestamp(&self, st: &mut State) -> Result<()> {
        if st.rolling_based_timestamp.is_none() {
            let mut sc = Scanner::<F>::new(&self.log, 0);
            if let Some((info, _)) = sc.next_batch()? {
                st.rolling_based_timestamp = Some(info.max_timestamp);
            }
        }
        Ok(())
    }

    /// Kafka's `timeWaitedForRoll(now, messageTimestamp)` in ms: `message_timestamp − first
    /// batch timestamp` if the segment has a first-batch timestamp ≥ 0, else
    /// `now − created`.
    ///
    /// # Errors
    /// Format and I/O errors reading the first batch.
    pub fn time_waited_for_roll(&self, now: i64, message_timestamp: i64) -> Result<i64> {
        let mut st = self.state.lock();
        self.load_first_batch_timestamp(&mut st)?;
        Ok(match st.rolling_based_timestamp {
            Some(t) if t >= 0 => message_timestamp.saturating_sub(t),
            _ => now.saturating_sub(st.created),
        })
    }

    /// Kafka's `getFirstBatchTimestamp`: the first batch's max timestamp, or `i64::MAX`.
    ///
    /// # Errors
    /// As [`time_waited_for_roll`](Self::time_waited_for_roll).
    pub fn get_first_batch_timestamp(&self) -> Result<i64> {
        let mut st = self.state.lock();
        self.load_first_batch_timestamp(&mut st)?;
        Ok(match st.rolling_based_timestamp {
            Some(t) if t >= 0 => t,
            _ => i64::MAX,
        })
    }

    /// Kafka's `shouldRoll` (docs/kafka-behaviour.md#segment-roll): the new data would not fit; or the segment is
    /// non-empty and old enough (minus jitter); or either index is full; or the incoming
    /// max offset is not representable relative to the base offset.
    ///
    /// # Errors
    /// Index errors (the indexes are materialised), format and I/O errors.
    pub fn should_roll(&self, p: &RollParams) -> Result<bool> {
        let size = self.size();
        let reached_time = size > 0
            && self.time_waited_for_roll(p.now, p.max_timestamp_in_messages)?
                > p.max_segment_ms.saturating_sub(self.roll_jitter_ms);
        Ok(size > p.max_segment_bytes.saturating_sub(p.messages_size)
            || reached_time
            || self.offset_index()?.is_full()
            || self.time_index()?.is_full()
            || !self.can_convert_to_relative_offset(p.max_offset_in_messages))
    }
}
