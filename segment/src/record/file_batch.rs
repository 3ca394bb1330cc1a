//! One batch of a `.log` file whatever its magic ([`FileBatch`]), and the small types the
//! batch format layer ([`crate::format`]) shares with the in-memory batch iterator
//! ([`BatchIter`](super::BatchIter)): the framing verdicts of
//! docs/kafka-behaviour.md#batch-iteration ([`Peek`], [`StopReason`], [`MIN_SIZE_FIELD`])
//! and the answer of a timestamp search ([`TimestampAndOffset`]), with the framing rule
//! itself (`frame_with`) and Kafka's size rule (`kafka_batch_size`): `format` builds on
//! them, and the iterator applies them without importing `format` (`record/` is the layer
//! below it).

use super::batch::RecordBatch;
use super::compression::CompressionType;
use super::legacy::{LegacyBatch, RECORD_OVERHEAD_V0};
use super::records::{Records, TimestampType};
use super::{
    RecordError, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, SIZE_OFFSET,
};
use index_core::codec::I32Be;

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

/// Why a [`BatchIter`](super::BatchIter) stopped.
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

/// The framing rule of docs/kafka-behaviour.md#batch-iteration, whatever the format: with
/// `remaining` bytes after a position, nothing is [`Peek::End`]; else the format's
/// `peek_size` decides: a size of 0 is the error `zero_size`, a size within `remaining` is
/// [`Peek::Batch`], too few bytes to tell or a size past `remaining` is [`Peek::TornTail`].
/// `format::frame` applies it with a `BatchFormat`'s `peek_size`, and
/// [`peek_batch`](super::peek_batch) with Kafka's ([`kafka_batch_size`]), so that this
/// module needs nothing of `format`.
#[inline]
pub(crate) fn frame_with<E>(
    remaining: u64,
    peek_size: impl FnOnce() -> Result<Option<usize>, E>,
    zero_size: impl FnOnce() -> E,
) -> Result<Peek, E> {
    if remaining == 0 {
        return Ok(Peek::End);
    }
    match peek_size()? {
        Some(0) => Err(zero_size()),
        Some(size) if size as u64 <= remaining => Ok(Peek::Batch(size)),
        _ => Ok(Peek::TornTail),
    }
}

/// Kafka's size rule (`FileLogInputStream`) on the first bytes `header` of a batch at
/// `position`: `None` while fewer than 18 bytes (`HEADER_SIZE_UP_TO_MAGIC + 1`) are
/// there, else the batch's whole size, `12 + size`. `KafkaBatchFormat::peek_size`.
///
/// # Errors
/// [`RecordError::CorruptRecord`] for a size field below [`MIN_SIZE_FIELD`].
#[inline]
pub(crate) fn kafka_batch_size(header: &[u8], position: u64) -> Result<Option<usize>, RecordError> {
    if header.len() < HEADER_SIZE_UP_TO_MAGIC + 1 {
        return Ok(None);
    }
    // Present: header is at least 18 bytes > LOG_OVERHEAD (12) long.
    let Some(size_field) = header.get(SIZE_OFFSET..LOG_OVERHEAD) else {
        return Ok(None);
    };
    let size = bytemuck::pod_read_unaligned::<I32Be>(size_field).get();
    if size < MIN_SIZE_FIELD as i32 {
        return Err(RecordError::CorruptRecord {
            position,
            reason: format!(
                "record size {size} is less than the minimum record overhead ({MIN_SIZE_FIELD})"
            ),
        });
    }
    Ok(Some(LOG_OVERHEAD + size as usize))
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
