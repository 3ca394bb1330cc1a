//! Iterating the batches of a `.log` file image (docs/kafka-behaviour.md#batch-iteration) and the `FileRecords` search
//! functions built on it (docs/kafka-behaviour.md#log-file).
//!
//! All functions work on a byte slice holding the file from position 0 to its logical end
//! (e.g. a memory map or a `Vec` read from disk); positions are byte indexes into that
//! slice. The stop rules are Kafka's `FileLogInputStream` rules, exactly:
//!
//! 1. fewer than 18 bytes left (`position ≥ end − 17`) → end of iteration;
//! 2. the size field (bytes 8–11) is below 14 → [`RecordError::CorruptRecord`];
//! 3. the batch extends past the end → end of iteration (torn tail);
//! 4. magic < 2 → legacy entry, otherwise a v2 batch (magic > 2 too; its CRC will normally
//!    fail);
//! 5. advance by `12 + size`.
//!
//! Acceptance cases 1 and 3 are both a *clean* end for Kafka; [`StopReason`] still tells them apart
//! from a file consumed exactly to its end. Where Kafka loads batch headers lazily, this
//! crate checks a batch's header framing when the batch is produced (a v2 batch with size
//! < 61, a magic 1 message with size < 22, or a negative magic is reported as
//! [`RecordError::CorruptRecord`] right away instead of on first header access; Kafka's
//! `ensureValid` reports the same batches as corrupt during recovery).

use std::path::Path;

use crate::format::{BatchFormat, FormatError, KafkaBatchFormat};

use super::batch::RecordBatch;
use super::compression::CompressionType;
use super::legacy::{LegacyBatch, RECORD_OVERHEAD_V0};
use super::records::{Records, TimestampType};
use super::{
    RecordError, HEADER_SIZE_UP_TO_MAGIC, MAGIC_OFFSET, NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP,
};

/// Smallest value of the size field that is not corrupt (Kafka
/// `LegacyRecord.RECORD_OVERHEAD_V0`): 14.
pub const MIN_SIZE_FIELD: usize = RECORD_OVERHEAD_V0;

/// One batch of a log file, whatever its magic.
///
/// For legacy entries the v2-only fields read as "none" (−1), as in Kafka's
/// `AbstractLegacyRecordBatch`.
#[derive(Debug, Clone, Copy)]
pub enum FileBatch<'a> {
    /// A magic ≥ 2 record batch.
    V2(RecordBatch<'a>),
    /// A magic 0 or 1 log entry (one message, or a compressed wrapper).
    Legacy(LegacyBatch<'a>),
}

impl<'a> FileBatch<'a> {
    /// Views the batch at `data[0..]`, choosing the view by the magic byte (magic < 2 →
    /// legacy). `position` is used for [`FileBatch::position`] and errors.
    ///
    /// # Errors
    /// [`RecordError::CorruptRecord`] as for [`RecordBatch::at`] / [`LegacyBatch::at`], or if
    /// fewer than 17 bytes are given.
    pub fn at(data: &'a [u8], position: u64) -> Result<Self, RecordError> {
        let Some(&magic) = data.get(MAGIC_OFFSET) else {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "only {} bytes available, a batch header needs {HEADER_SIZE_UP_TO_MAGIC}",
                    data.len()
                ),
            ));
        };
        if (magic as i8) < 2 {
            LegacyBatch::at(data, position).map(FileBatch::Legacy)
        } else {
            RecordBatch::at(data, position).map(FileBatch::V2)
        }
    }

    /// Byte position of the batch in the file.
    pub fn position(&self) -> u64 {
        match self {
            FileBatch::V2(b) => b.position(),
            FileBatch::Legacy(b) => b.position(),
        }
    }

    /// Magic byte: 0, 1, or ≥ 2.
    pub fn magic(&self) -> i8 {
        match self {
            FileBatch::V2(b) => b.magic(),
            FileBatch::Legacy(b) => b.magic(),
        }
    }

    /// Total size in bytes (`12 + size field`).
    pub fn size_in_bytes(&self) -> usize {
        match self {
            FileBatch::V2(b) => b.size_in_bytes(),
            FileBatch::Legacy(b) => b.size_in_bytes(),
        }
    }

    /// The batch's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        match self {
            FileBatch::V2(b) => b.as_bytes(),
            FileBatch::Legacy(b) => b.as_bytes(),
        }
    }

    /// First offset. v2: the header's base offset. Legacy: the entry offset, which is the
    /// true first offset for an uncompressed message but the **last** inner offset of a
    /// compressed wrapper (use [`LegacyBatch::deep_base_offset`] to decompress and find
    /// the first one, as Kafka's `baseOffset` does).
    pub fn base_offset(&self) -> i64 {
        match self {
            FileBatch::V2(b) => b.base_offset(),
            FileBatch::Legacy(b) => b.offset(),
        }
    }

    /// Last offset: `base_offset + last_offset_delta` (v2) or the entry offset (legacy).
    pub fn last_offset(&self) -> i64 {
        match self {
            FileBatch::V2(b) => b.last_offset(),
            FileBatch::Legacy(b) => b.offset(),
        }
    }

    /// `last_offset + 1`.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Max timestamp in ms since epoch: the v2 header field; the message (wrapper)
    /// timestamp for magic 1; −1 for magic 0.
    pub fn max_timestamp(&self) -> i64 {
        match self {
            FileBatch::V2(b) => b.max_timestamp(),
            FileBatch::Legacy(b) => b.timestamp(),
        }
    }

    /// The offset Kafka associates with [`FileBatch::max_timestamp`] at batch granularity
    /// (since KAFKA-16310): the batch's last offset.
    pub fn offset_of_max_timestamp(&self) -> i64 {
        self.last_offset()
    }

    /// Timestamp type.
    pub fn timestamp_type(&self) -> TimestampType {
        match self {
            FileBatch::V2(b) => b.timestamp_type(),
            FileBatch::Legacy(b) => b.timestamp_type(),
        }
    }

    /// The codec.
    ///
    /// # Errors
    /// [`RecordError::UnsupportedCompression`] for undefined ids (and zstd in legacy).
    pub fn compression(&self) -> Result<CompressionType, RecordError> {
        match self {
            FileBatch::V2(b) => b.compression(),
            FileBatch::Legacy(b) => b.compression(),
        }
    }

    /// Stored checksum (CRC-32C for v2, CRC-32 for legacy).
    pub fn checksum(&self) -> u32 {
        match self {
            FileBatch::V2(b) => b.checksum(),
            FileBatch::Legacy(b) => b.checksum(),
        }
    }

    /// Kafka's `isValid`: the checksum matches.
    pub fn is_valid(&self) -> bool {
        match self {
            FileBatch::V2(b) => b.is_valid(),
            FileBatch::Legacy(b) => b.is_valid(),
        }
    }

    /// Kafka's `ensureValid`.
    ///
    /// # Errors
    /// [`RecordError::CorruptRecord`] on checksum mismatch.
    pub fn ensure_valid(&self) -> Result<(), RecordError> {
        match self {
            FileBatch::V2(b) => b.ensure_valid(),
            FileBatch::Legacy(b) => b.ensure_valid(),
        }
    }

    /// Attribute bit 5 (always `false` for legacy).
    pub fn is_control(&self) -> bool {
        matches!(self, FileBatch::V2(b) if b.is_control_batch())
    }

    /// Attribute bit 4 (always `false` for legacy).
    pub fn is_transactional(&self) -> bool {
        matches!(self, FileBatch::V2(b) if b.is_transactional())
    }

    /// Partition leader epoch (−1 for legacy).
    pub fn partition_leader_epoch(&self) -> i32 {
        match self {
            FileBatch::V2(b) => b.partition_leader_epoch(),
            FileBatch::Legacy(_) => NO_PARTITION_LEADER_EPOCH,
        }
    }

    /// Producer id (−1 for legacy).
    pub fn producer_id(&self) -> i64 {
        match self {
            FileBatch::V2(b) => b.producer_id(),
            FileBatch::Legacy(_) => NO_PRODUCER_ID,
        }
    }

    /// Producer epoch (−1 for legacy).
    pub fn producer_epoch(&self) -> i16 {
        match self {
            FileBatch::V2(b) => b.producer_epoch(),
            FileBatch::Legacy(_) => NO_PRODUCER_EPOCH,
        }
    }

    /// Base sequence (−1 for legacy).
    pub fn base_sequence(&self) -> i32 {
        match self {
            FileBatch::V2(b) => b.base_sequence(),
            FileBatch::Legacy(_) => NO_SEQUENCE,
        }
    }

    /// Last sequence (−1 for legacy).
    pub fn last_sequence(&self) -> i32 {
        match self {
            FileBatch::V2(b) => b.last_sequence(),
            FileBatch::Legacy(_) => NO_SEQUENCE,
        }
    }

    /// Record count from the header without decoding: v2 header count; 1 for an
    /// uncompressed legacy message; `None` for a compressed legacy wrapper.
    pub fn records_count(&self) -> Option<i32> {
        match self {
            FileBatch::V2(b) => Some(b.records_count()),
            FileBatch::Legacy(b) => match b.compression() {
                Ok(CompressionType::None) => Some(1),
                _ => None,
            },
        }
    }

    /// The records (decompressing if needed).
    ///
    /// # Errors
    /// As [`RecordBatch::records`] / [`LegacyBatch::records`].
    pub fn records(&self) -> Result<Records<'a>, RecordError> {
        match self {
            FileBatch::V2(b) => b.records(),
            FileBatch::Legacy(b) => b.records(),
        }
    }

    /// The records, decompressing at most `max_decompressed_bytes` (see
    /// [`RecordBatch::records_with_limit`]).
    ///
    /// # Errors
    /// As [`records`](Self::records).
    pub fn records_with_limit(
        &self,
        max_decompressed_bytes: usize,
    ) -> Result<Records<'a>, RecordError> {
        match self {
            FileBatch::V2(b) => b.records_with_limit(max_decompressed_bytes),
            FileBatch::Legacy(b) => b.records_with_limit(max_decompressed_bytes),
        }
    }

    /// The v2 view, if this is a v2 batch.
    pub fn as_v2(&self) -> Option<&RecordBatch<'a>> {
        match self {
            FileBatch::V2(b) => Some(b),
            FileBatch::Legacy(_) => None,
        }
    }

    /// The legacy view, if this is a magic 0/1 entry.
    pub fn as_legacy(&self) -> Option<&LegacyBatch<'a>> {
        match self {
            FileBatch::V2(_) => None,
            FileBatch::Legacy(b) => Some(b),
        }
    }
}

/// Why a [`BatchIter`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The last batch ended exactly at the end of the data (or the start was at/after it).
    End,
    /// Bytes remain that do not form a complete batch: fewer than 18, or a batch whose
    /// declared size runs past the end. Kafka ignores them silently (a clean end); recovery
    /// truncates them.
    TornTail {
        /// Position of the first byte not consumed.
        position: u64,
        /// Bytes from `position` to the end.
        remaining_bytes: usize,
    },
    /// The batch at `position` is corrupt; the iterator yielded the error and stopped.
    Corrupt {
        /// Position of the corrupt batch.
        position: u64,
        /// The error's message.
        reason: String,
    },
}

/// What the docs/kafka-behaviour.md#batch-iteration rules say about the bytes at one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peek {
    /// Nothing follows: clean end.
    End,
    /// Fewer than 18 bytes, or a batch extending past the end: clean end (torn tail).
    TornTail,
    /// A complete batch of this many bytes (`12 + size`) starts here.
    Batch(usize),
}

/// Applies rules 1–3 of docs/kafka-behaviour.md#batch-iteration to the bytes `rest` that remain from a position to the end.
///
/// This is the framing check of the segment's file scanner and of the dump tool
/// (`format::frame` with Kafka's format), applied to bytes in memory.
///
/// # Errors
/// [`RecordError::CorruptRecord`] (at `position`) if the size field is below 14.
pub fn peek_batch(rest: &[u8], position: u64) -> Result<Peek, RecordError> {
    let header = rest
        .get(..KafkaBatchFormat::HEADER_PEEK_BYTES)
        .unwrap_or(rest);
    crate::format::frame::<KafkaBatchFormat>(header, rest.len() as u64, position)
        .map_err(record_error)
}

/// The [`RecordError`] of a framing error. Kafka's framing reports only
/// [`FormatError::Corrupt`] (a size field below 14), which is
/// [`RecordError::CorruptRecord`] with the same position and reason.
fn record_error(e: FormatError) -> RecordError {
    match e {
        FormatError::Corrupt { position, reason } => {
            RecordError::CorruptRecord { position, reason }
        }
        FormatError::InvalidRecord { position, reason } => {
            RecordError::InvalidRecord { position, reason }
        }
        FormatError::Unsupported { position, .. } => RecordError::corrupt(position, e.to_string()),
    }
}

/// Iterator over the batches of a file image from a start position (docs/kafka-behaviour.md#batch-iteration).
///
/// Yields `Ok(FileBatch)` for each complete batch and at most one `Err` (after which it
/// ends); [`BatchIter::stop_reason`] then says why it stopped. Does not validate CRCs.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    data: &'a [u8],
    pos: usize,
    stop: Option<StopReason>,
}

impl<'a> BatchIter<'a> {
    /// Iterates `data` (a file image, position 0 = `data[0]`) from byte `start`.
    /// A start at or past the end yields nothing and stops with [`StopReason::End`].
    pub fn new(data: &'a [u8], start: u64) -> Self {
        let pos = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
        BatchIter {
            data,
            pos,
            stop: None,
        }
    }

    /// Position of the next batch; after a clean stop, the number of valid bytes
    /// (`end` for [`StopReason::End`], the torn tail's start otherwise).
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// `None` while iteration can continue; why it stopped afterwards.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<FileBatch<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stop.is_some() {
            return None;
        }
        let position = self.pos as u64;
        // pos <= data.len() always (`new` clamps it, `next` adds the size of a batch taken
        // from `rest`); past the end would read as the end.
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let result = peek_batch(rest, position).and_then(|peek| match peek {
            Peek::End => {
                self.stop = Some(StopReason::End);
                Ok(None)
            }
            Peek::TornTail => {
                self.stop = Some(StopReason::TornTail {
                    position,
                    remaining_bytes: rest.len(),
                });
                Ok(None)
            }
            #[expect(
                clippy::indexing_slicing,
                reason = "peek_batch returns Batch(total) only when total <= rest.len()"
            )]
            Peek::Batch(total) => FileBatch::at(&rest[..total], position).map(Some),
        });
        match result {
            Ok(None) => None,
            Ok(Some(batch)) => {
                self.pos += batch.size_in_bytes();
                Some(Ok(batch))
            }
            Err(e) => {
                self.stop = Some(StopReason::Corrupt {
                    position,
                    reason: e.to_string(),
                });
                Some(Err(e))
            }
        }
    }
}

/// Iterates the batches of `data` from `start` (Kafka `FileRecords.batchesFrom`).
pub fn batches_from(data: &[u8], start: u64) -> BatchIter<'_> {
    BatchIter::new(data, start)
}

/// Result of [`search_for_offset_with_size`] (Kafka `LogOffsetPosition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetPositionSize {
    /// Last offset of the batch found.
    pub offset: i64,
    /// Its byte position.
    pub position: u64,
    /// Its size in bytes.
    pub size: usize,
}

/// A timestamp with the offset it belongs to (Kafka `FileRecords.TimestampAndOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimestampAndOffset {
    /// Timestamp in ms since epoch.
    pub timestamp: i64,
    /// Offset.
    pub offset: i64,
    /// Partition leader epoch of the batch, `None` if it is −1 (or legacy).
    pub leader_epoch: Option<i32>,
}

fn maybe_leader_epoch(epoch: i32) -> Option<i32> {
    (epoch != NO_PARTITION_LEADER_EPOCH).then_some(epoch)
}

/// Kafka `FileRecords.searchForOffsetWithSize`: the first batch from `start` whose last
/// offset is ≥ `target_offset`, as `(last offset, position, size)`; `None` if there is
/// none before the end (or the torn tail).
///
/// # Errors
/// [`RecordError::CorruptRecord`] if iteration meets a corrupt batch first.
pub fn search_for_offset_with_size(
    data: &[u8],
    target_offset: i64,
    start: u64,
) -> Result<Option<OffsetPositionSize>, RecordError> {
    for batch in batches_from(data, start) {
        let batch = batch?;
        let offset = batch.last_offset();
        if offset >= target_offset {
            return Ok(Some(OffsetPositionSize {
                offset,
                position: batch.position(),
                size: batch.size_in_bytes(),
            }));
        }
    }
    Ok(None)
}

/// Kafka `FileRecords.searchForTimestamp`: from `start`, for each batch with
/// `max_timestamp ≥ target_timestamp`, decode its records (decompressing if needed) and
/// return the first record with `timestamp ≥ target_timestamp` **and**
/// `offset ≥ starting_offset`; `None` if none qualifies.
///
/// # Errors
/// Iteration errors ([`RecordError::CorruptRecord`]) and record decoding errors of the
/// batches that are searched.
pub fn search_for_timestamp(
    data: &[u8],
    target_timestamp: i64,
    start: u64,
    starting_offset: i64,
) -> Result<Option<TimestampAndOffset>, RecordError> {
    for batch in batches_from(data, start) {
        let batch = batch?;
        if batch.max_timestamp() < target_timestamp {
            continue;
        }
        for record in batch.records()? {
            let record = record?;
            if record.timestamp >= target_timestamp && record.offset >= starting_offset {
                return Ok(Some(TimestampAndOffset {
                    timestamp: record.timestamp,
                    offset: record.offset,
                    leader_epoch: maybe_leader_epoch(batch.partition_leader_epoch()),
                }));
            }
        }
    }
    Ok(None)
}

/// Kafka `FileRecords.largestTimestampAfter`: the largest batch max timestamp from
/// `start`, with the last offset (and leader epoch) of the **first** batch that reached
/// it; `(−1, −1, None)` if there is no batch (or all timestamps are −1).
///
/// # Errors
/// [`RecordError::CorruptRecord`] if iteration meets a corrupt batch.
pub fn largest_timestamp_after(data: &[u8], start: u64) -> Result<TimestampAndOffset, RecordError> {
    let mut best = TimestampAndOffset {
        timestamp: NO_TIMESTAMP,
        offset: -1,
        leader_epoch: None,
    };
    for batch in batches_from(data, start) {
        let batch = batch?;
        let ts = batch.max_timestamp();
        if ts > best.timestamp {
            best = TimestampAndOffset {
                timestamp: ts,
                offset: batch.last_offset(),
                leader_epoch: maybe_leader_epoch(batch.partition_leader_epoch()),
            };
        }
    }
    Ok(best)
}

/// Reads a whole log file into memory, for use with the functions of this module.
///
/// # Errors
/// [`RecordError::Io`] naming the file.
pub fn read_log_file(path: impl AsRef<Path>) -> Result<Vec<u8>, RecordError> {
    let path = path.as_ref();
    std::fs::read(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
// Tests may unwrap, index and panic: a panic is how a test reports a failure.
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    #[test]
    fn peek_reports_the_size_rule_with_its_values() {
        for size in [13i32, 0, -1, i32::MIN] {
            let mut bytes = vec![0u8; 40];
            bytes[8..12].copy_from_slice(&size.to_be_bytes());
            let e = peek_batch(&bytes, 5).unwrap_err();
            let want = RecordError::CorruptRecord {
                position: 5,
                reason: format!("record size {size} is less than the minimum record overhead (14)"),
            };
            assert_eq!(e.to_string(), want.to_string());
            assert!(matches!(e, RecordError::CorruptRecord { position: 5, .. }));
        }
        // A size field past the end of the data: a torn tail, whatever the size says.
        let mut bytes = vec![0u8; 18];
        bytes[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(peek_batch(&bytes, 0).unwrap(), Peek::TornTail);
    }
}
