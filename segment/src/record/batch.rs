//! Zero-copy view of a magic v2 record batch: [`RawBatchHeader`] (the 61-byte header as a
//! `#[repr(C)]` Pod struct), [`Attributes`] and [`RecordBatch`] (docs/kafka-behaviour.md#v2-batch-header).

use bytemuck::{Pod, Zeroable};
use index_core::codec::{I16Be, I32Be, I64Be, U32Be};

use super::compression::{decompress_bounded, CompressionType, DecompressError};
use super::records::{increment_sequence, RecordContext, Records, SkimRecords};
use super::{
    RecordError, TimestampType, CRC_OFFSET, DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES, LOG_OVERHEAD,
    NO_SEQUENCE, RECORD_BATCH_OVERHEAD,
};

/// The 61-byte header of a magic v2 record batch exactly as stored (big-endian fields,
/// alignment 1, no padding), so `&[u8]` of any alignment can be viewed in place with
/// [`bytemuck::from_bytes`].
///
/// | byte | width | field |
/// |---|---|---|
/// | 0 | 8 | `base_offset` |
/// | 8 | 4 | `batch_length` (bytes after this field) |
/// | 12 | 4 | `partition_leader_epoch` (not covered by the CRC) |
/// | 16 | 1 | `magic` |
/// | 17 | 4 | `crc` (CRC-32C of bytes 21..end) |
/// | 21 | 2 | `attributes` |
/// | 23 | 4 | `last_offset_delta` |
/// | 27 | 8 | `base_timestamp` |
/// | 35 | 8 | `max_timestamp` |
/// | 43 | 8 | `producer_id` |
/// | 51 | 2 | `producer_epoch` |
/// | 53 | 4 | `base_sequence` |
/// | 57 | 4 | `records_count` |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawBatchHeader {
    /// Offset of the first record of the batch.
    pub base_offset: I64Be,
    /// Bytes that follow this field: total batch size − 12.
    pub batch_length: I32Be,
    /// Leader epoch of the partition leader that appended the batch (−1 = none).
    pub partition_leader_epoch: I32Be,
    /// Format version: 2.
    pub magic: i8,
    /// Unsigned CRC-32C (Castagnoli) of bytes `[21, end of batch)`.
    pub crc: U32Be,
    /// Attributes; see [`Attributes`].
    pub attributes: I16Be,
    /// `last_offset - base_offset`.
    pub last_offset_delta: I32Be,
    /// Timestamp of the first record (ms since epoch), or the delete horizon when
    /// attribute bit 6 is set; −1 for empty batches.
    pub base_timestamp: I64Be,
    /// Maximum record timestamp (CreateTime) or the broker's append time (LogAppendTime),
    /// in ms since epoch.
    pub max_timestamp: I64Be,
    /// Producer id (−1 = none).
    pub producer_id: I64Be,
    /// Producer epoch (−1 = none).
    pub producer_epoch: I16Be,
    /// Sequence number of the first record (−1 = none).
    pub base_sequence: I32Be,
    /// Number of records in the batch (0 for a batch emptied by compaction).
    pub records_count: I32Be,
}

const _: () = assert!(core::mem::size_of::<RawBatchHeader>() == RECORD_BATCH_OVERHEAD);
const _: () = assert!(core::mem::align_of::<RawBatchHeader>() == 1);

/// The attributes of a v2 batch (an `int16`, of which only the low byte is used).
///
/// | bits | meaning |
/// |---|---|
/// | 0–2 | compression codec id ([`CompressionType`]) |
/// | 3 | timestamp type: 0 CreateTime, 1 LogAppendTime |
/// | 4 | transactional |
/// | 5 | control batch |
/// | 6 | delete horizon present (base timestamp holds it) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attributes(pub i16);

impl Attributes {
    /// Mask of the codec bits.
    pub const COMPRESSION_MASK: i16 = 0x07;
    /// Timestamp-type bit (LogAppendTime when set).
    pub const TIMESTAMP_TYPE: i16 = 0x08;
    /// Transactional bit.
    pub const TRANSACTIONAL: i16 = 0x10;
    /// Control-batch bit.
    pub const CONTROL: i16 = 0x20;
    /// Delete-horizon bit.
    pub const DELETE_HORIZON: i16 = 0x40;

    /// The raw 3-bit codec id (0–7).
    pub fn compression_id(self) -> u8 {
        (self.0 & Self::COMPRESSION_MASK) as u8
    }

    /// The codec, or `None` for the undefined ids 5–7.
    pub fn compression(self) -> Option<CompressionType> {
        CompressionType::from_id(self.compression_id())
    }

    /// [`TimestampType::LogAppendTime`] if bit 3 is set, else [`TimestampType::CreateTime`].
    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & Self::TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Bit 4: the batch belongs to a transaction.
    pub fn is_transactional(self) -> bool {
        self.0 & Self::TRANSACTIONAL != 0
    }

    /// Bit 5: the batch holds control records.
    pub fn is_control(self) -> bool {
        self.0 & Self::CONTROL != 0
    }

    /// Bit 6: the base timestamp holds the delete horizon set by the log cleaner.
    pub fn has_delete_horizon(self) -> bool {
        self.0 & Self::DELETE_HORIZON != 0
    }
}

/// A zero-copy view of one magic v2 (or, like Kafka, magic > 2) record batch.
///
/// Construction checks only the framing needed for safe field access: at least 61 bytes,
/// `batch_length` ≥ 49 and the whole declared batch present. It does **not** check the CRC
/// (call [`RecordBatch::ensure_valid`]) nor parse records (use [`RecordBatch::records`]).
/// The view covers exactly `12 + batch_length` bytes; bytes after the batch are ignored.
#[derive(Debug, Clone, Copy)]
pub struct RecordBatch<'a> {
    bytes: &'a [u8],
    header: &'a RawBatchHeader,
    position: u64,
}

impl<'a> RecordBatch<'a> {
    /// Views the batch starting at `bytes[0]`; error positions are reported as 0.
    ///
    /// # Errors
    /// [`RecordError::CorruptRecord`] if fewer than 61 bytes are given, if the size is
    /// smaller than 61, if the declared batch extends past `bytes`, or if the magic is
    /// below 2 (a legacy message, see [`LegacyBatch`](super::LegacyBatch)).
    pub fn new(bytes: &'a [u8]) -> Result<Self, RecordError> {
        Self::at(bytes, 0)
    }

    /// Like [`RecordBatch::new`], recording `position` (byte position of the batch in its
    /// file) for [`RecordBatch::position`] and for errors.
    ///
    /// # Errors
    /// As [`RecordBatch::new`].
    pub fn at(bytes: &'a [u8], position: u64) -> Result<Self, RecordError> {
        let Some(head) = bytes.get(..RECORD_BATCH_OVERHEAD) else {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "only {} bytes available, a v2 batch header needs {RECORD_BATCH_OVERHEAD}",
                    bytes.len()
                ),
            ));
        };
        let header: &RawBatchHeader = bytemuck::from_bytes(head);
        let batch_length = header.batch_length.get();
        let size = i64::from(batch_length) + LOG_OVERHEAD as i64;
        if size < RECORD_BATCH_OVERHEAD as i64 {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "record batch size {size} is smaller than the minimum allowed ({RECORD_BATCH_OVERHEAD})"
                ),
            ));
        }
        let size = size as usize;
        let Some(batch_bytes) = bytes.get(..size) else {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "record batch declares {size} bytes but only {} are available",
                    bytes.len()
                ),
            ));
        };
        if header.magic < 2 {
            return Err(RecordError::corrupt(
                position,
                format!("magic {} is not a v2 record batch", header.magic),
            ));
        }
        Ok(RecordBatch {
            bytes: batch_bytes,
            header,
            position,
        })
    }

    /// The raw header.
    pub fn header(&self) -> &'a RawBatchHeader {
        self.header
    }

    /// All bytes of the batch (header and records), `size_in_bytes()` long.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The (possibly compressed) record bytes after the 61-byte header.
    #[expect(
        clippy::indexing_slicing,
        reason = "`RecordBatch::at`, the only constructor, makes `bytes` at least \
                  RECORD_BATCH_OVERHEAD long"
    )]
    pub fn records_bytes(&self) -> &'a [u8] {
        &self.bytes[RECORD_BATCH_OVERHEAD..]
    }

    /// Byte position of the batch in its file (0 unless built with [`RecordBatch::at`]).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Offset of the first record.
    pub fn base_offset(&self) -> i64 {
        self.header.base_offset.get()
    }

    /// Bytes after the length field (`size_in_bytes() - 12`).
    pub fn batch_length(&self) -> i32 {
        self.header.batch_length.get()
    }

    /// Total size of the batch in bytes: `12 + batch_length`.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Partition leader epoch (−1 = none).
    pub fn partition_leader_epoch(&self) -> i32 {
        self.header.partition_leader_epoch.get()
    }

    /// Magic byte (2; larger values are viewed as v2 too).
    pub fn magic(&self) -> i8 {
        self.header.magic
    }

    /// The stored CRC-32C.
    pub fn checksum(&self) -> u32 {
        self.header.crc.get()
    }

    /// CRC-32C of bytes `[21, end)`, i.e. what [`RecordBatch::checksum`] should be.
    #[expect(
        clippy::indexing_slicing,
        reason = "`RecordBatch::at`, the only constructor, makes `bytes` at least \
                  RECORD_BATCH_OVERHEAD (61) long, past CRC_OFFSET + 4 (21)"
    )]
    pub fn compute_checksum(&self) -> u32 {
        crc32c::crc32c(&self.bytes[CRC_OFFSET + 4..])
    }

    /// The attributes.
    pub fn attributes(&self) -> Attributes {
        Attributes(self.header.attributes.get())
    }

    /// `last_offset - base_offset` as stored.
    pub fn last_offset_delta(&self) -> i32 {
        self.header.last_offset_delta.get()
    }

    /// Base timestamp (ms since epoch; the delete horizon when
    /// [`Attributes::has_delete_horizon`]; −1 for empty batches).
    pub fn base_timestamp(&self) -> i64 {
        self.header.base_timestamp.get()
    }

    /// Max timestamp (ms since epoch): the largest record timestamp under CreateTime, the
    /// broker's append time under LogAppendTime.
    pub fn max_timestamp(&self) -> i64 {
        self.header.max_timestamp.get()
    }

    /// Producer id (−1 = none).
    pub fn producer_id(&self) -> i64 {
        self.header.producer_id.get()
    }

    /// Producer epoch (−1 = none).
    pub fn producer_epoch(&self) -> i16 {
        self.header.producer_epoch.get()
    }

    /// Base sequence (−1 = none).
    pub fn base_sequence(&self) -> i32 {
        self.header.base_sequence.get()
    }

    /// Declared number of records (may be 0; negative is rejected by
    /// [`RecordBatch::records`]).
    pub fn records_count(&self) -> i32 {
        self.header.records_count.get()
    }

    /// `base_offset + last_offset_delta` (wrapping like Java's `long`).
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(i64::from(self.last_offset_delta()))
    }

    /// `last_offset + 1`.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// −1 if the base sequence is −1, else `base_sequence + last_offset_delta` wrapping past
    /// `i32::MAX` to 0 ([`increment_sequence`]).
    pub fn last_sequence(&self) -> i32 {
        let base = self.base_sequence();
        if base == NO_SEQUENCE {
            NO_SEQUENCE
        } else {
            increment_sequence(base, self.last_offset_delta())
        }
    }

    /// The codec (attribute bits 0–2).
    ///
    /// # Errors
    /// [`RecordError::UnsupportedCompression`] for the undefined ids 5–7.
    pub fn compression(&self) -> Result<CompressionType, RecordError> {
        self.attributes()
            .compression()
            .ok_or(RecordError::UnsupportedCompression {
                position: self.position,
                codec_id: self.attributes().compression_id(),
                magic: self.magic(),
            })
    }

    /// CreateTime or LogAppendTime (attribute bit 3).
    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes().timestamp_type()
    }

    /// Attribute bit 4.
    pub fn is_transactional(&self) -> bool {
        self.attributes().is_transactional()
    }

    /// Attribute bit 5.
    pub fn is_control_batch(&self) -> bool {
        self.attributes().is_control()
    }

    /// The delete horizon (ms since epoch) if attribute bit 6 is set: the base timestamp.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes()
            .has_delete_horizon()
            .then(|| self.base_timestamp())
    }

    /// Kafka's `isValid`: size ≥ 61 (guaranteed by construction) and stored CRC == computed
    /// CRC. The partition leader epoch (bytes 12–15) is not covered.
    pub fn is_valid(&self) -> bool {
        self.checksum() == self.compute_checksum()
    }

    /// Kafka's `ensureValid`. Does not parse records.
    ///
    /// # Errors
    /// [`RecordError::CorruptRecord`] naming the stored and computed CRC on mismatch.
    pub fn ensure_valid(&self) -> Result<(), RecordError> {
        let stored = self.checksum();
        let computed = self.compute_checksum();
        if stored != computed {
            return Err(RecordError::corrupt(
                self.position,
                format!("record is corrupt (stored crc = {stored:#010x}, computed crc = {computed:#010x})"),
            ));
        }
        Ok(())
    }

    pub(crate) fn record_context(&self) -> RecordContext {
        RecordContext {
            base_offset: self.base_offset(),
            base_timestamp: self.base_timestamp(),
            log_append_time: (self.timestamp_type() == TimestampType::LogAppendTime)
                .then(|| self.max_timestamp()),
            base_sequence: self.base_sequence(),
            position: self.position,
        }
    }

    /// Iterates the records, decompressing the record stream first if the batch is
    /// compressed (then the records own their bytes; otherwise they borrow from the batch).
    ///
    /// Each item is a `Result`; after the first error the iterator ends. Mirrors Kafka's
    /// record iterator: exactly `records_count` records must be present and no bytes may
    /// remain after them.
    ///
    /// # Errors
    /// Up front: [`RecordError::InvalidRecord`] for a negative record count,
    /// [`RecordError::UnsupportedCompression`], [`RecordError::Decompression`] or
    /// [`RecordError::DecompressedTooLarge`] (more than
    /// [`DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES`]). Per item: [`RecordError::InvalidRecord`]
    /// for malformed records (see [`Record`](super::Record)), but
    /// [`RecordError::RecordLengthOverlong`] for a record length that is an over-long
    /// varint in an uncompressed batch (in a compressed one it is an invalid record, as
    /// Kafka's; docs/kafka-behaviour.md#record-length-overlong).
    pub fn records(&self) -> Result<Records<'a>, RecordError> {
        self.records_with_limit(DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES)
    }

    /// The header's record count, refused when negative (Kafka's `InvalidRecordException`
    /// "found invalid record count").
    fn checked_records_count(&self) -> Result<u32, RecordError> {
        let count = self.records_count();
        u32::try_from(count).map_err(|_| {
            RecordError::invalid(
                self.position,
                format!(
                    "found invalid record count {count} in magic v{} batch",
                    self.magic()
                ),
            )
        })
    }

    /// The records of an uncompressed batch as [`RecordSummary`](super::records::RecordSummary)s, for the leader's
    /// checks: the same walk and the same errors as [`records`](Self::records) without
    /// decoding the records' bytes.
    ///
    /// # Errors
    /// As [`records`](Self::records) for a negative record count or an unknown codec;
    /// [`RecordError::InvalidArgument`] for a compressed batch.
    pub(crate) fn skim_records(&self) -> Result<SkimRecords<'a>, RecordError> {
        let count = self.checked_records_count()?;
        if self.compression()? != CompressionType::None {
            return Err(RecordError::argument(
                "only an uncompressed batch's records can be skimmed",
            ));
        }
        Ok(SkimRecords::new(
            self.records_bytes(),
            count,
            self.record_context(),
        ))
    }

    /// [`records`](Self::records) with a limit of `max_decompressed_bytes` on the
    /// decompressed record stream (memory taken: at most that many bytes plus the codec's
    /// constant state).
    ///
    /// # Errors
    /// As [`records`](Self::records); [`RecordError::DecompressedTooLarge`] names `limit`.
    pub fn records_with_limit(
        &self,
        max_decompressed_bytes: usize,
    ) -> Result<Records<'a>, RecordError> {
        let count = self.checked_records_count()?;
        let codec = self.compression()?;
        let ctx = self.record_context();
        if codec == CompressionType::None {
            return Ok(Records::v2_borrowed(self.records_bytes(), count, ctx));
        }
        let data = decompress_bounded(codec, self.records_bytes(), max_decompressed_bytes)
            .map_err(|e| match e {
                DecompressError::Io(source) => RecordError::Decompression {
                    position: self.position,
                    codec,
                    source,
                },
                DecompressError::TooLarge => RecordError::DecompressedTooLarge {
                    position: self.position,
                    limit: max_decompressed_bytes,
                },
            })?;
        Ok(Records::v2_owned(data, count, ctx))
    }
}
