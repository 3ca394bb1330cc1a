//! Legacy message sets, magic 0 and 1 (docs/kafka-behaviour.md#legacy-message-sets): [`RawLegacyHeader`] and the zero-copy
//! [`LegacyBatch`] view of one log entry (`offset, size, message`).
//!
//! Message layout after the 12-byte log overhead:
//!
//! | field | width | notes |
//! |---|---|---|
//! | crc | 4 | CRC-32 (IEEE) of everything from `magic` to the end of the message |
//! | magic | 1 | 0 or 1 |
//! | attributes | 1 | bits 0–2 codec (none/gzip/snappy/lz4), bit 3 timestamp type (v1) |
//! | timestamp | 8 | v1 only, ms since epoch |
//! | key length + key | 4 + n | −1 = null |
//! | value length + value | 4 + n | −1 = null; a compressed inner message set for wrappers |

use std::borrow::Cow;

use bytemuck::{Pod, Zeroable};
use index_core::codec::{I32Be, I64Be, U32Be};

use super::compression::{decompress_bounded, CompressionType, DecompressError};
use super::records::{Record, Records};
use super::{
    RecordError, TimestampType, DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES, LOG_OVERHEAD, NO_SEQUENCE,
    NO_TIMESTAMP,
};

/// Minimum size of a magic 0 message (crc, magic, attributes, key and value lengths): 14.
pub const RECORD_OVERHEAD_V0: usize = 14;
/// Minimum size of a magic 1 message (adds the 8-byte timestamp): 22.
pub const RECORD_OVERHEAD_V1: usize = 22;

/// The first 18 bytes of a legacy log entry: log overhead plus the message prefix common
/// to magic 0 and 1. (The magic 1 timestamp follows at byte 18.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawLegacyHeader {
    /// Offset of the message (of the last inner message for a compressed wrapper).
    pub offset: I64Be,
    /// Size of the message in bytes (entry size − 12).
    pub size: I32Be,
    /// CRC-32 (IEEE) of bytes `[16, end of entry)`.
    pub crc: U32Be,
    /// 0 or 1.
    pub magic: i8,
    /// Attributes.
    pub attributes: i8,
}
const _: () = assert!(core::mem::size_of::<RawLegacyHeader>() == 18);
const _: () = assert!(core::mem::align_of::<RawLegacyHeader>() == 1);

const CRC_COVERAGE_START: usize = 16;

/// A message's key and value, each `None` when null (length −1 on disk).
pub type KeyValue<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
const TIMESTAMP_OFFSET: usize = 18;

/// A zero-copy view of one legacy (magic 0 or 1) log entry.
///
/// Construction checks the framing needed for safe access (size ≥ 14, ≥ 22 for magic 1,
/// whole entry present, magic 0 or 1) but not the CRC ([`LegacyBatch::ensure_valid`]).
#[derive(Debug, Clone, Copy)]
pub struct LegacyBatch<'a> {
    bytes: &'a [u8],
    header: &'a RawLegacyHeader,
    position: u64,
}

impl<'a> LegacyBatch<'a> {
    /// Views the entry starting at `bytes[0]`; error positions are reported as 0.
    ///
    /// # Errors
    /// As [`LegacyBatch::at`].
    pub fn new(bytes: &'a [u8]) -> Result<Self, RecordError> {
        Self::at(bytes, 0)
    }

    /// Views the entry starting at `bytes[0]`, located at byte `position` of its file.
    ///
    /// # Errors
    /// [`RecordError::CorruptRecord`] if the size field is below 14 (22 for magic 1), the
    /// entry extends past `bytes`, or the magic is not 0 or 1 (Kafka would fail with an
    /// `IllegalArgumentException` for a negative magic; this crate reports corruption).
    pub fn at(bytes: &'a [u8], position: u64) -> Result<Self, RecordError> {
        let Some(size_bytes) = bytes.get(8..LOG_OVERHEAD) else {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "only {} bytes available, a log entry header needs {LOG_OVERHEAD}",
                    bytes.len()
                ),
            ));
        };
        let size = bytemuck::pod_read_unaligned::<I32Be>(size_bytes).get();
        if size < RECORD_OVERHEAD_V0 as i32 {
            return Err(RecordError::corrupt(
                position,
                format!("record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"),
            ));
        }
        let total = LOG_OVERHEAD + size as usize;
        let Some(entry) = bytes.get(..total) else {
            return Err(RecordError::corrupt(
                position,
                format!(
                    "log entry declares {total} bytes but only {} are available",
                    bytes.len()
                ),
            ));
        };
        #[expect(
            clippy::indexing_slicing,
            reason = "entry is total = LOG_OVERHEAD + size >= 12 + RECORD_OVERHEAD_V0 = 26 \
                      bytes (size checked above), more than TIMESTAMP_OFFSET (18)"
        )]
        let header: &RawLegacyHeader = bytemuck::from_bytes(&entry[..TIMESTAMP_OFFSET]);
        match header.magic {
            0 => {}
            1 if size as usize >= RECORD_OVERHEAD_V1 => {}
            1 => {
                return Err(RecordError::corrupt(
                    position,
                    format!("magic 1 record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V1})"),
                ))
            }
            m => {
                return Err(RecordError::corrupt(
                    position,
                    format!("invalid magic value {m} for a legacy message"),
                ))
            }
        }
        Ok(LegacyBatch {
            bytes: entry,
            header,
            position,
        })
    }

    /// The raw 18-byte prefix.
    pub fn header(&self) -> &'a RawLegacyHeader {
        self.header
    }

    /// All bytes of the entry (`12 + size`).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Byte position of the entry in its file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The entry offset: the message offset, or the last inner offset for a wrapper.
    /// This is Kafka's `lastOffset` of a legacy batch.
    pub fn offset(&self) -> i64 {
        self.header.offset.get()
    }

    /// Entry size in bytes: `12 + size`.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// 0 or 1.
    pub fn magic(&self) -> i8 {
        self.header.magic
    }

    /// The stored CRC-32.
    pub fn checksum(&self) -> u32 {
        self.header.crc.get()
    }

    /// CRC-32 (IEEE) of the message from the magic byte to its end.
    #[expect(
        clippy::indexing_slicing,
        reason = "`LegacyBatch::at`, the only constructor, makes `bytes` at least \
                  LOG_OVERHEAD + RECORD_OVERHEAD_V0 (26) long, past CRC_COVERAGE_START (16)"
    )]
    pub fn compute_checksum(&self) -> u32 {
        crc32fast::hash(&self.bytes[CRC_COVERAGE_START..])
    }

    /// The attributes byte.
    pub fn attributes(&self) -> i8 {
        self.header.attributes
    }

    /// The codec.
    ///
    /// # Errors
    /// [`RecordError::UnsupportedCompression`] for zstd (not allowed before magic 2) and the
    /// undefined ids 5–7.
    pub fn compression(&self) -> Result<CompressionType, RecordError> {
        let id = (self.attributes() & 0x07) as u8;
        match CompressionType::from_id(id) {
            Some(c) if c != CompressionType::Zstd => Ok(c),
            _ => Err(RecordError::UnsupportedCompression {
                position: self.position,
                codec_id: id,
                magic: self.magic(),
            }),
        }
    }

    /// `NoTimestamp` for magic 0; CreateTime or LogAppendTime (attribute bit 3) for magic 1.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic() == 0 {
            TimestampType::NoTimestamp
        } else if self.attributes() & 0x08 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// The message timestamp in ms since epoch; −1 for magic 0. Kafka uses it as the
    /// batch's `maxTimestamp`.
    pub fn timestamp(&self) -> i64 {
        if self.magic() == 0 {
            NO_TIMESTAMP
        } else {
            #[expect(
                clippy::indexing_slicing,
                reason = "`LegacyBatch::at`, the only constructor, makes a magic 1 entry at \
                          least LOG_OVERHEAD + RECORD_OVERHEAD_V1 (34) bytes long, past \
                          TIMESTAMP_OFFSET + 8 (26)"
            )]
            let field = &self.bytes[TIMESTAMP_OFFSET..TIMESTAMP_OFFSET + 8];
            bytemuck::pod_read_unaligned::<I64Be>(field).get()
        }
    }

    /// Kafka's `isValid` for legacy records: the stored CRC matches.
    pub fn is_valid(&self) -> bool {
        self.checksum() == self.compute_checksum()
    }

    /// Kafka's `ensureValid`.
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

    /// Key and value of the message (for a wrapper, the value is the compressed inner set).
    ///
    /// # Errors
    /// [`RecordError::InvalidRecord`] if a length runs past the end of the message.
    pub fn key_value(&self) -> Result<KeyValue<'a>, RecordError> {
        let key_at = if self.magic() == 0 {
            TIMESTAMP_OFFSET
        } else {
            TIMESTAMP_OFFSET + 8
        };
        // `at` makes the entry at least 26 (magic 0) or 34 (magic 1) bytes, so key_at is in
        // bounds; were it not, the key length read below would report the truncation.
        let mut rest = self.bytes.get(key_at..).unwrap_or_default();
        let mut field = |name: &str| -> Result<Option<&'a [u8]>, RecordError> {
            let Some((len_bytes, tail)) = rest.split_first_chunk::<4>() else {
                return Err(RecordError::invalid(
                    self.position,
                    format!("legacy message truncated before the {name} length"),
                ));
            };
            let len = bytemuck::pod_read_unaligned::<I32Be>(len_bytes.as_slice()).get();
            rest = tail;
            if len < 0 {
                return Ok(None);
            }
            let len = len as usize;
            let Some((out, tail)) = rest.split_at_checked(len) else {
                return Err(RecordError::invalid(
                    self.position,
                    format!(
                        "legacy message {name} length {len} exceeds the {} remaining bytes",
                        rest.len()
                    ),
                ));
            };
            rest = tail;
            Ok(Some(out))
        };
        let key = field("key")?;
        let value = field("value")?;
        Ok((key, value))
    }

    fn as_record(&self, offset: i64, timestamp: i64) -> Result<Record<'a>, RecordError> {
        let (key, value) = self.key_value()?;
        Ok(Record {
            offset,
            timestamp,
            sequence: NO_SEQUENCE,
            attributes: self.attributes(),
            key: key.map(Cow::Borrowed),
            value: value.map(Cow::Borrowed),
            headers: Vec::new(),
            size_in_bytes: self.size_in_bytes(),
        })
    }

    /// Decompresses a wrapper's value and returns its inner records with absolute offsets
    /// and effective timestamps (docs/kafka-behaviour.md#legacy-message-sets).
    fn inner_records(
        &self,
        codec: CompressionType,
        limit: usize,
    ) -> Result<Vec<Record<'static>>, RecordError> {
        let (_, value) = self.key_value()?;
        let value = value.ok_or_else(|| {
            RecordError::invalid(
                self.position,
                "compressed legacy wrapper message has a null value",
            )
        })?;
        let value = &*readable_value(self.magic(), codec, value);
        let data = decompress_bounded(codec, value, limit).map_err(|e| match e {
            DecompressError::Io(source) => RecordError::Decompression {
                position: self.position,
                codec,
                source,
            },
            DecompressError::TooLarge => RecordError::DecompressedTooLarge {
                position: self.position,
                limit,
            },
        })?;
        let mut inner = Vec::new();
        let mut at = 0usize;
        loop {
            // at <= data.len(): it only advances by the size of an entry viewed in `rest`.
            let rest = data.get(at..).unwrap_or_default();
            let Some(size_field) = rest.get(8..LOG_OVERHEAD) else {
                break; // fewer than LOG_OVERHEAD bytes left
            };
            let size = bytemuck::pod_read_unaligned::<I32Be>(size_field).get();
            if size < RECORD_OVERHEAD_V0 as i32 {
                return Err(RecordError::corrupt(
                    self.position,
                    format!("inner record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"),
                ));
            }
            if LOG_OVERHEAD + size as usize > rest.len() {
                break; // partial trailing inner entry: ignored like a torn tail
            }
            let entry = LegacyBatch::at(rest, self.position)?;
            if entry.compression()? != CompressionType::None {
                return Err(RecordError::invalid(
                    self.position,
                    "compressed legacy message contains a compressed inner message",
                ));
            }
            let ts = match (self.magic(), self.timestamp_type()) {
                (0, _) => NO_TIMESTAMP,
                (_, TimestampType::LogAppendTime) => self.timestamp(),
                _ => entry.timestamp(),
            };
            inner.push(entry.as_record(entry.offset(), ts)?.into_owned());
            at += entry.size_in_bytes();
        }
        let Some(last) = inner.last() else {
            return Err(RecordError::invalid(
                self.position,
                "found invalid compressed record set with no inner records",
            ));
        };
        if self.magic() >= 1 {
            // Inner offsets are relative (0..n-1); the wrapper holds the absolute last offset.
            let wrapper = self.offset();
            let base = if wrapper == 0 {
                0
            } else {
                wrapper.wrapping_sub(last.offset)
            };
            for r in &mut inner {
                r.offset = base.wrapping_add(r.offset);
            }
        }
        Ok(inner)
    }

    /// Offset of the first inner message (decompressing a wrapper), or the entry offset for
    /// an uncompressed message. Kafka's `baseOffset` of a legacy batch.
    ///
    /// # Errors
    /// As [`LegacyBatch::records`].
    pub fn deep_base_offset(&self) -> Result<i64, RecordError> {
        match self.compression()? {
            CompressionType::None => Ok(self.offset()),
            codec => Ok(self
                .inner_records(codec, DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES)?
                .first()
                .map_or(self.offset(), |r| r.offset)),
        }
    }

    /// The records: the message itself if uncompressed, else the decompressed inner
    /// messages with absolute offsets (magic 1: `wrapper offset − last relative + relative`,
    /// a wrapper offset of 0 means base 0; magic 0: inner offsets are absolute) and, under
    /// LogAppendTime, the wrapper's timestamp.
    ///
    /// # Errors
    /// [`RecordError::UnsupportedCompression`], [`RecordError::Decompression`],
    /// [`RecordError::InvalidRecord`] for lengths past the end, a null wrapper value, an
    /// empty or nested-compressed inner set; [`RecordError::CorruptRecord`] for a broken
    /// inner entry frame.
    pub fn records(&self) -> Result<Records<'a>, RecordError> {
        self.records_with_limit(DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES)
    }

    /// [`records`](Self::records) with a limit of `max_decompressed_bytes` on a wrapper's
    /// decompressed inner message set ([`RecordError::DecompressedTooLarge`] beyond it).
    /// The inner records own copies of their keys and values, so a wrapper takes up to
    /// twice the limit while its records are alive.
    ///
    /// # Errors
    /// As [`records`](Self::records).
    pub fn records_with_limit(
        &self,
        max_decompressed_bytes: usize,
    ) -> Result<Records<'a>, RecordError> {
        match self.compression()? {
            CompressionType::None => Ok(Records::list(vec![
                self.as_record(self.offset(), self.timestamp())?
            ])),
            codec => Ok(Records::list(
                self.inner_records(codec, max_decompressed_bytes)?,
            )),
        }
    }
}

/// The compressed value of a legacy wrapper as Kafka's reader decodes it: a magic 0 LZ4
/// frame gets its header checksum recomputed (`compression::lz4_magic0_frame`),
/// everything else is returned as it is.
pub fn readable_value(
    magic: i8,
    codec: CompressionType,
    value: &[u8],
) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(feature = "lz4")]
    if codec == CompressionType::Lz4 && magic == 0 {
        return super::compression::lz4_magic0_frame(value);
    }
    let _ = (magic, codec);
    std::borrow::Cow::Borrowed(value)
}
