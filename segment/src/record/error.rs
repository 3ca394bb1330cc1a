//! [`RecordError`]: the one error type of the [`record`](crate::record) module.

use std::path::PathBuf;

use super::compression::CompressionType;

/// Everything that can go wrong while viewing, validating, decoding or building Kafka
/// record batches.
///
/// The variants mirror the exceptions Kafka throws in the same situations, so that a
/// caller (log recovery, dump tools) can apply Kafka's policy:
///
/// * [`RecordError::CorruptRecord`] — Kafka's `CorruptRecordException`: the framing or the
///   checksum of a batch is broken (size field < 14, size smaller than the header, CRC
///   mismatch, bytes missing inside a batch). Recovery stops at such a batch and truncates.
/// * [`RecordError::InvalidRecord`] — Kafka's `InvalidRecordException`: the batch frame is
///   intact but its content violates the record format (bad varint, negative header count,
///   record length mismatch, bad control-record key, trailing bytes after the last record).
///   Recovery also stops there.
/// * [`RecordError::RecordLengthOverlong`] — damaged data as the previous one, which Kafka's
///   decoder lets escape as an `IllegalArgumentException` (uncompressed batches only).
///   Recovery also stops there.
/// * everything else is not a statement about the data on disk being damaged
///   (unsupported codec, decompression failure, misuse of a builder, I/O).
///
/// Positions are byte positions of the **start of the batch** inside the slice or file that
/// was iterated (0 for a batch viewed on its own). Decoding never panics on hostile input:
/// every malformed input maps to one of these variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The batch framing or checksum is broken (Kafka `CorruptRecordException`).
    #[error("corrupt record batch at position {position}: {reason}")]
    CorruptRecord {
        /// Byte position of the batch start.
        position: u64,
        /// What is wrong, with the values found.
        reason: String,
    },
    /// A record or control record inside an intact batch violates the format
    /// (Kafka `InvalidRecordException`).
    #[error("invalid record in batch at position {position}: {reason}")]
    InvalidRecord {
        /// Byte position of the batch start.
        position: u64,
        /// What is wrong, with the values found (record index or offset where known).
        reason: String,
    },
    /// The compression codec id in the attributes is not one this reader can decode:
    /// ids 5–7 (unknown to Kafka as well), or zstd (4) inside a legacy magic 0/1 message.
    #[error("unsupported compression codec id {codec_id} (magic {magic}) in batch at position {position}")]
    UnsupportedCompression {
        /// Byte position of the batch start.
        position: u64,
        /// The 3-bit codec id from the attributes.
        codec_id: u8,
        /// Magic of the batch (0, 1 or ≥ 2).
        magic: i8,
    },
    /// The compressed record stream of a batch could not be decompressed.
    #[error("failed to decompress {codec:?} records of batch at position {position}: {source}")]
    Decompression {
        /// Byte position of the batch start.
        position: u64,
        /// The codec that failed.
        codec: CompressionType,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// Decompressing a batch would produce more than the reader's limit (by default
    /// [`DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES`](super::DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES)
    /// bytes; protection against decompression bombs). Detected while streaming: the
    /// output is never inflated past the limit first.
    #[error(
        "decompressed records of batch at position {position} exceed the limit of {limit} bytes"
    )]
    DecompressedTooLarge {
        /// Byte position of the batch start.
        position: u64,
        /// The limit that was hit, in bytes.
        limit: usize,
    },
    /// A v2 record whose **length** is an over-long varint (five bytes, the fifth with its
    /// continuation bit set) inside an intact uncompressed batch. Damaged data like
    /// [`RecordError::InvalidRecord`] (recovery stops there too), but Kafka's
    /// `DefaultRecord.readFrom` reads the length outside the check that makes decoding
    /// errors `InvalidRecordException`, so Kafka's answer is its `IllegalArgumentException`
    /// (a produce answered `UNKNOWN_SERVER_ERROR`; docs/kafka-behaviour.md#record-length-overlong).
    /// In the decompressed records of a compressed batch the same bytes are
    /// [`RecordError::InvalidRecord`]: Kafka's stream iterator catches that exception.
    #[error("invalid record in batch at position {position}: the length of record {index} is a varint too long, the most significant bit in the 5th byte is set")]
    RecordLengthOverlong {
        /// Byte position of the batch start.
        position: u64,
        /// The record's index in the batch (0-based).
        index: u32,
    },
    /// A builder or helper was called with arguments that cannot be encoded
    /// (Kafka `IllegalArgumentException`), e.g. an offset delta that does not fit an `i32`,
    /// records out of offset order, or a non-marker control type for an end-transaction marker.
    #[error("invalid argument: {reason}")]
    InvalidArgument {
        /// What is wrong.
        reason: String,
    },
    /// An I/O error while reading a log file.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl RecordError {
    /// Byte position of the batch the error is about, if the error concerns a batch.
    pub fn position(&self) -> Option<u64> {
        match self {
            RecordError::CorruptRecord { position, .. }
            | RecordError::InvalidRecord { position, .. }
            | RecordError::RecordLengthOverlong { position, .. }
            | RecordError::UnsupportedCompression { position, .. }
            | RecordError::Decompression { position, .. }
            | RecordError::DecompressedTooLarge { position, .. } => Some(*position),
            RecordError::InvalidArgument { .. } | RecordError::Io { .. } => None,
        }
    }

    /// `true` for the kinds of error at which log recovery stops and truncates:
    /// [`RecordError::CorruptRecord`], [`RecordError::InvalidRecord`] and
    /// [`RecordError::RecordLengthOverlong`] (damaged data all three).
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            RecordError::CorruptRecord { .. }
                | RecordError::InvalidRecord { .. }
                | RecordError::RecordLengthOverlong { .. }
        )
    }

    pub(crate) fn corrupt(position: u64, reason: impl Into<String>) -> Self {
        RecordError::CorruptRecord {
            position,
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid(position: u64, reason: impl Into<String>) -> Self {
        RecordError::InvalidRecord {
            position,
            reason: reason.into(),
        }
    }

    pub(crate) fn argument(reason: impl Into<String>) -> Self {
        RecordError::InvalidArgument {
            reason: reason.into(),
        }
    }
}
