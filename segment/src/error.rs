//! The error type of the `segment` crate ([`SegmentError`]), Kafka's protocol errors
//! ([`KafkaError`]), the per-record errors of a rejected batch ([`RecordError`]) and the
//! mapping of every [`SegmentError`] to a protocol error
//! (docs/kafka-behaviour.md#leader-errors).

use std::path::PathBuf;

use index_core::IndexError;
use index_txn::TxnIndexError;

use crate::format::FormatError;
use crate::record::RecordError as DecodeError;

/// Errors returned by [`LogFile`](crate::LogFile), [`LogSegment`](crate::LogSegment),
/// [`LogSegments`](crate::LogSegments) and [`Log`](crate::Log).
///
/// Corruption of data on disk ([`SegmentError::Corrupt`], [`SegmentError::Record`] with a
/// corruption inside, [`SegmentError::Index`] with `CorruptIndex`) is always a different
/// variant from operating-system failures ([`SegmentError::Io`]). Misuse by the caller
/// (offsets that go backwards, offsets that do not fit a segment, bad arguments) has its
/// own variants, mirroring the Java exceptions Kafka throws in the same places.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SegmentError {
    /// An operating-system I/O error.
    #[error("I/O error during {op} on {path}: {source}")]
    Io {
        /// What was being done ("open", "read", "write", "fsync", "rename", ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An offset or time index operation failed (wraps `index-core`'s error, which names
    /// the index file).
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A remote storage operation failed (a [`RemoteStorage`](crate::tier::RemoteStorage)
    /// call; downcast the source to
    /// [`RemoteStorageError`](crate::tier::RemoteStorageError) for its kind). Kafka's
    /// `RemoteStorageException` in a fetch becomes `UNKNOWN_SERVER_ERROR`
    /// (`docs/kafka-behaviour.md#remote-storage`).
    #[error("remote storage: {source}")]
    RemoteStorage {
        /// The storage's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A transaction index operation failed.
    #[error(transparent)]
    TxnIndex(#[from] TxnIndexError),
    /// A record batch could not be decoded or failed validation.
    #[error("record error in {path}: {source}")]
    Record {
        /// The `.log` file (or a placeholder for in-memory input).
        path: PathBuf,
        /// The record-level error (its position is the batch start).
        #[source]
        source: DecodeError,
    },
    /// A batch could not be read by the [`BatchFormat`](crate::format::BatchFormat)
    /// (corrupt framing or checksum, malformed record, unsupported feature).
    #[error("batch format error in {path}: {source}")]
    Format {
        /// The `.log` file.
        path: PathBuf,
        /// The format's error (its position is the batch start).
        #[source]
        source: FormatError,
    },
    /// Data on disk breaks an invariant the segment relies on.
    #[error("corrupt data in {path}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, with values found.
        reason: String,
    },
    /// An offset is not representable relative to the segment base offset
    /// (Kafka's `LogSegmentOffsetOverflowException`). Nothing was written.
    #[error(
        "offset {offset} is not representable relative to the base offset {base_offset} of segment {path}"
    )]
    OffsetOverflow {
        /// The segment's `.log` file.
        path: PathBuf,
        /// The segment base offset.
        base_offset: i64,
        /// The offending absolute offset.
        offset: i64,
    },
    /// An append whose first offset is below the log end offset (or whose batches go
    /// backwards). Nothing was written.
    #[error("non-monotonic append to {path}: expected first offset >= {expected_at_least}, found {found}")]
    NonMonotonicOffset {
        /// The log directory or segment file.
        path: PathBuf,
        /// The smallest acceptable offset (the log end offset).
        expected_at_least: i64,
        /// The offset found in the input.
        found: i64,
    },
    /// An offset outside the log's range `[log_start_offset, log_end_offset]`.
    #[error("offset {offset} is out of range [{log_start_offset}, {log_end_offset}] of {path}")]
    OffsetOutOfRange {
        /// The log directory.
        path: PathBuf,
        /// The requested offset.
        offset: i64,
        /// The log start offset.
        log_start_offset: i64,
        /// The log end offset.
        log_end_offset: i64,
    },
    /// An offset at or above the log start offset but below the local log start offset
    /// ([`Log::local_log_start_offset`](crate::Log::local_log_start_offset)): its data was
    /// deleted locally after its upload, and only the remote tier serves it (Kafka's
    /// `OffsetMovedToTieredStorageException`, `OFFSET_MOVED_TO_TIERED_STORAGE`, 109;
    /// `docs/kafka-behaviour.md#offset-moved-to-tiered-storage`). A caller fetches
    /// `offset` from the remote tier, or serves `[log_start_offset,
    /// local_log_start_offset)` from there.
    #[error(
        "offset {offset} of {path} moved to tiered storage: the local log starts at {local_log_start_offset} (log start {log_start_offset})"
    )]
    OffsetMovedToTieredStorage {
        /// The log directory.
        path: PathBuf,
        /// The requested offset.
        offset: i64,
        /// The log start offset (the first offset of the remote tier, or of the log).
        log_start_offset: i64,
        /// The local log start offset: the first offset still on local disk.
        local_log_start_offset: i64,
    },
    /// The bytes handed to [`Log::append`](crate::Log::append) are not valid batches of
    /// the log's format (Kafka answers a producer with `CorruptRecordException` /
    /// `InvalidRecordException`). The damage is in the caller's input, nothing on disk:
    /// [`SegmentError::is_corruption`] is `false`, and nothing was appended.
    #[error("invalid records in append input: {source}")]
    InvalidInput {
        /// What the batch format rejected, with the position in the input.
        #[source]
        source: FormatError,
    },
    /// An argument Kafka rejects with `IllegalArgumentException`.
    #[error("invalid argument: {reason}")]
    InvalidArgument {
        /// Why.
        reason: String,
    },
    /// A [`LogConfig`](crate::LogConfig) value outside the range Kafka's `LogConfig`
    /// accepts (Kafka's `ConfigException` from `ConfigDef.Range`), or one that would leave
    /// the log unable to take a record. Returned by
    /// [`LogConfig::validate`](crate::LogConfig::validate) and by everything that opens a
    /// log or segment with the configuration.
    #[error("invalid configuration {name}={value}: {reason}")]
    InvalidConfig {
        /// Kafka's name of the setting (`segment.bytes`, `segment.index.bytes`, ...).
        name: &'static str,
        /// The value found.
        value: String,
        /// The accepted range, and why.
        reason: String,
    },
    /// A file named like a segment file (`<offset>.log`, `.index`, `.timeindex`,
    /// `.txnindex`, `.snapshot`, with or without a state suffix) that is not a regular
    /// file nor a symlink to one: a directory, FIFO, socket, device or dangling symlink.
    /// The loader checks the type before opening anything, so such a file is never
    /// skipped (its offsets would vanish) and never opened (a FIFO would block forever).
    #[error("{path} is a {file_type}, not a regular file")]
    NotARegularFile {
        /// The file (as named in the directory).
        path: PathBuf,
        /// What it is: "directory", "FIFO", "socket", "block device", "character device",
        /// "dangling symlink" or "special file".
        file_type: &'static str,
    },
    /// A state Kafka rejects with `IllegalStateException` / `KafkaException` (e.g. rolling
    /// onto the base offset of an existing non-empty segment).
    #[error("illegal state in {path}: {reason}")]
    IllegalState {
        /// The file or directory concerned.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The [`Log`](crate::Log) is offline: a failed fsync, a `.txnindex` entry an abort
    /// could not write, or a structural change that failed half-way left the state on disk
    /// unknown, so the log refuses every later write, flush and close until it is
    /// reopened (and recovered); reads keep working
    /// (docs/kafka-behaviour.md#offline-rule). Kafka marks the log directory offline and
    /// answers with `KAFKA_STORAGE_ERROR` ([`SegmentError::kafka_error`]). Its message is
    /// the one these refusals had as an `IllegalState` error, word for word.
    #[error("illegal state in {path}: the log is offline: {reason} (the state on disk is unknown, so nothing more is written); reopen it to recover")]
    Offline {
        /// The log directory.
        path: PathBuf,
        /// Why the log went offline (the first failure that took it offline).
        reason: String,
    },
    /// A file name that does not follow Kafka's naming (`<20 digits>.<suffix>`).
    #[error("invalid segment file name {name:?}: {reason}")]
    FileName {
        /// The file name.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The partition directory is already open: another [`Log`](crate::Log), in this
    /// process or another, holds the exclusive lock on its `.lock` file (Kafka refuses a
    /// second broker on a log dir the same way). Nothing in the directory was touched.
    #[error("{path} is locked by another open Log{}", holder_pid.map(|p| format!(" (process {p})")).unwrap_or_default())]
    DirLocked {
        /// The lock file (`<dir>/.lock`).
        path: PathBuf,
        /// The process id the holder recorded in the lock file, if readable.
        holder_pid: Option<u32>,
    },
    /// A segment's `.index` file is missing (Kafka's `NoSuchFileException` from
    /// `sanityCheck`); the loader answers by recovering the segment.
    #[error("offset index {path} of segment with base offset {base_offset} does not exist")]
    MissingIndex {
        /// The expected index path.
        path: PathBuf,
        /// The segment base offset.
        base_offset: i64,
    },
    /// The `.log` file's data was removed: its segment left the log and its files were
    /// deleted (after `file.delete.delay.ms`), which also closed the file handle. A reader
    /// that held the segment past that point gets this error instead of the data (Kafka's
    /// reader gets a `ClosedChannelException`); [`Log::read`](crate::Log::read) answers it
    /// with [`SegmentError::OffsetOutOfRange`] or the data of the segments still there.
    #[error("{path} was deleted and its file handle closed")]
    SegmentDeleted {
        /// The `.log` file's last path (usually with the `.deleted` suffix).
        path: PathBuf,
    },
    /// [`Log::open`](crate::Log::open) refused to complete a `.log.swap` file (the commit
    /// point of Kafka's cleaner and of the loader's split): its batches fail validation
    /// (checksum, framing, offsets that do not increase or do not fit its base offset),
    /// or they hold offsets outside those of the segments it replaces (offsets no
    /// replaced segment held, or offsets a segment it does not replace still holds).
    /// Nothing was deleted or renamed: the segments it would replace are intact
    /// (`docs/kafka-behaviour.md#swap-refusal`).
    #[error("refusing to complete the swap file {path}: {reason}; {action}")]
    SwapRefused {
        /// The `.log.swap` file.
        path: PathBuf,
        /// What is wrong, with the offsets or position found.
        reason: String,
        /// What an operator can do (which files to remove to keep the segments that are
        /// still there, or to move aside when none is).
        action: String,
    },
    /// A leader append refused by one of Kafka's rules
    /// ([`Log::append_as_leader`](crate::Log::append_as_leader),
    /// docs/kafka-behaviour.md#leader-errors): nothing was appended. `error` is the
    /// protocol error Kafka answers the producer with, `record_errors` the records at
    /// fault when Kafka names them (invalid timestamps, missing keys on compacted topics).
    #[error("{error}: {message}")]
    Rejected {
        /// Kafka's protocol error.
        error: KafkaError,
        /// What was wrong, with the values found.
        message: String,
        /// The records at fault, by index in the batch (Kafka's
        /// `ProduceResponse.RecordError`s); empty for batch-level errors.
        record_errors: Vec<RecordError>,
    },
}

/// Result alias for this crate.
pub type Result<T, E = SegmentError> = std::result::Result<T, E>;

impl SegmentError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SegmentError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(path: impl Into<PathBuf>, source: FormatError) -> Self {
        SegmentError::Format {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn arg(reason: impl Into<String>) -> Self {
        SegmentError::InvalidArgument {
            reason: reason.into(),
        }
    }

    /// `true` if this error says the data on disk is damaged (as opposed to an I/O failure
    /// or a caller error): Kafka's `CorruptRecordException` / `InvalidRecordException` /
    /// `CorruptIndexException`.
    pub fn is_corruption(&self) -> bool {
        match self {
            SegmentError::Corrupt { .. } => true,
            SegmentError::Record { source, .. } => source.is_corruption(),
            SegmentError::Format { source, .. } => source.is_corruption(),
            SegmentError::Index(IndexError::CorruptIndex { .. }) => true,
            SegmentError::TxnIndex(TxnIndexError::CorruptIndex { .. }) => true,
            _ => false,
        }
    }
}

/// One record a batch was rejected for (Kafka's `ProduceResponse.RecordError`), listed in
/// [`SegmentError::Rejected`]. Not the decoding error of the record module
/// ([`crate::record::RecordError`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordError {
    /// Index of the record in its batch (0 = first).
    pub batch_index: i32,
    /// Why, if known.
    pub message: Option<String>,
}

/// Kafka's protocol errors that the leader append and the reads answer with (a subset of
/// Kafka's `Errors` enum, with its names and codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KafkaError {
    /// `UNKNOWN_SERVER_ERROR` (−1): an unexpected failure (Kafka's answer for an
    /// `IllegalArgumentException` or `IllegalStateException`).
    UnknownServerError,
    /// `OFFSET_OUT_OF_RANGE` (1).
    OffsetOutOfRange,
    /// `CORRUPT_MESSAGE` (2): a CRC mismatch or broken framing.
    CorruptMessage,
    /// `MESSAGE_TOO_LARGE` (10): a batch larger than `max.message.bytes` (Kafka's
    /// `RecordTooLargeException`).
    RecordTooLarge,
    /// `RECORD_LIST_TOO_LARGE` (18): a batch larger than `segment.bytes` (Kafka's
    /// `RecordBatchTooLargeException`).
    RecordBatchTooLarge,
    /// `INVALID_TIMESTAMP` (32).
    InvalidTimestamp,
    /// `INVALID_CONFIG` (40).
    InvalidConfig,
    /// `INVALID_REQUEST` (42).
    InvalidRequest,
    /// `UNSUPPORTED_FOR_MESSAGE_FORMAT` (43).
    UnsupportedForMessageFormat,
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER` (45).
    OutOfOrderSequenceNumber,
    /// `DUPLICATE_SEQUENCE_NUMBER` (46).
    DuplicateSequenceNumber,
    /// `INVALID_PRODUCER_EPOCH` (47).
    InvalidProducerEpoch,
    /// `INVALID_TXN_STATE` (48).
    InvalidTxnState,
    /// `INVALID_PRODUCER_ID_MAPPING` (49).
    InvalidProducerIdMapping,
    /// `TRANSACTION_COORDINATOR_FENCED` (52).
    TransactionCoordinatorFenced,
    /// `KAFKA_STORAGE_ERROR` (56): the log's storage failed or is offline.
    KafkaStorageError,
    /// `UNKNOWN_PRODUCER_ID` (59).
    UnknownProducerId,
    /// `UNSUPPORTED_COMPRESSION_TYPE` (76).
    UnsupportedCompressionType,
    /// `OFFSET_NOT_AVAILABLE` (78).
    OffsetNotAvailable,
    /// `INVALID_RECORD` (87).
    InvalidRecord,
    /// `OFFSET_MOVED_TO_TIERED_STORAGE` (109): the offset is in the log but only in the
    /// remote tier (`docs/kafka-behaviour.md#offset-moved-to-tiered-storage`).
    OffsetMovedToTieredStorage,
}

impl KafkaError {
    /// Every variant, in code order.
    pub const ALL: [KafkaError; 21] = [
        KafkaError::UnknownServerError,
        KafkaError::OffsetOutOfRange,
        KafkaError::CorruptMessage,
        KafkaError::RecordTooLarge,
        KafkaError::RecordBatchTooLarge,
        KafkaError::InvalidTimestamp,
        KafkaError::InvalidConfig,
        KafkaError::InvalidRequest,
        KafkaError::UnsupportedForMessageFormat,
        KafkaError::OutOfOrderSequenceNumber,
        KafkaError::DuplicateSequenceNumber,
        KafkaError::InvalidProducerEpoch,
        KafkaError::InvalidTxnState,
        KafkaError::InvalidProducerIdMapping,
        KafkaError::TransactionCoordinatorFenced,
        KafkaError::KafkaStorageError,
        KafkaError::UnknownProducerId,
        KafkaError::UnsupportedCompressionType,
        KafkaError::OffsetNotAvailable,
        KafkaError::InvalidRecord,
        KafkaError::OffsetMovedToTieredStorage,
    ];

    /// The name in Kafka's `Errors` enum, e.g. `"OUT_OF_ORDER_SEQUENCE_NUMBER"`.
    pub fn name(self) -> &'static str {
        match self {
            KafkaError::UnknownServerError => "UNKNOWN_SERVER_ERROR",
            KafkaError::OffsetOutOfRange => "OFFSET_OUT_OF_RANGE",
            KafkaError::CorruptMessage => "CORRUPT_MESSAGE",
            KafkaError::RecordTooLarge => "MESSAGE_TOO_LARGE",
            KafkaError::RecordBatchTooLarge => "RECORD_LIST_TOO_LARGE",
            KafkaError::InvalidTimestamp => "INVALID_TIMESTAMP",
            KafkaError::InvalidConfig => "INVALID_CONFIG",
            KafkaError::InvalidRequest => "INVALID_REQUEST",
            KafkaError::UnsupportedForMessageFormat => "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            KafkaError::OutOfOrderSequenceNumber => "OUT_OF_ORDER_SEQUENCE_NUMBER",
            KafkaError::DuplicateSequenceNumber => "DUPLICATE_SEQUENCE_NUMBER",
            KafkaError::InvalidProducerEpoch => "INVALID_PRODUCER_EPOCH",
            KafkaError::InvalidTxnState => "INVALID_TXN_STATE",
            KafkaError::InvalidProducerIdMapping => "INVALID_PRODUCER_ID_MAPPING",
            KafkaError::TransactionCoordinatorFenced => "TRANSACTION_COORDINATOR_FENCED",
            KafkaError::KafkaStorageError => "KAFKA_STORAGE_ERROR",
            KafkaError::UnknownProducerId => "UNKNOWN_PRODUCER_ID",
            KafkaError::UnsupportedCompressionType => "UNSUPPORTED_COMPRESSION_TYPE",
            KafkaError::OffsetNotAvailable => "OFFSET_NOT_AVAILABLE",
            KafkaError::InvalidRecord => "INVALID_RECORD",
            KafkaError::OffsetMovedToTieredStorage => "OFFSET_MOVED_TO_TIERED_STORAGE",
        }
    }

    /// The protocol error code (Kafka's `Errors.code()`).
    pub fn code(self) -> i16 {
        match self {
            KafkaError::UnknownServerError => -1,
            KafkaError::OffsetOutOfRange => 1,
            KafkaError::CorruptMessage => 2,
            KafkaError::RecordTooLarge => 10,
            KafkaError::RecordBatchTooLarge => 18,
            KafkaError::InvalidTimestamp => 32,
            KafkaError::InvalidConfig => 40,
            KafkaError::InvalidRequest => 42,
            KafkaError::UnsupportedForMessageFormat => 43,
            KafkaError::OutOfOrderSequenceNumber => 45,
            KafkaError::DuplicateSequenceNumber => 46,
            KafkaError::InvalidProducerEpoch => 47,
            KafkaError::InvalidTxnState => 48,
            KafkaError::InvalidProducerIdMapping => 49,
            KafkaError::TransactionCoordinatorFenced => 52,
            KafkaError::KafkaStorageError => 56,
            KafkaError::UnknownProducerId => 59,
            KafkaError::UnsupportedCompressionType => 76,
            KafkaError::OffsetNotAvailable => 78,
            KafkaError::InvalidRecord => 87,
            KafkaError::OffsetMovedToTieredStorage => 109,
        }
    }
}

impl std::fmt::Display for KafkaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The protocol error of a batch-decoding error (Kafka's exception for the same failure).
pub(crate) fn decode_error_kind(e: &DecodeError) -> KafkaError {
    match e {
        DecodeError::CorruptRecord { .. } => KafkaError::CorruptMessage,
        // Kafka 4.4 answers a record over max.decompressed.message.bytes with
        // InvalidRecordException.
        DecodeError::InvalidRecord { .. } | DecodeError::DecompressedTooLarge { .. } => {
            KafkaError::InvalidRecord
        }
        DecodeError::UnsupportedCompression { .. } => KafkaError::UnsupportedCompressionType,
        DecodeError::Io { .. } => KafkaError::KafkaStorageError,
        // Kafka's `IllegalArgumentException` escapes its record decoder
        // (docs/kafka-behaviour.md#record-length-overlong).
        DecodeError::RecordLengthOverlong { .. } => KafkaError::UnknownServerError,
        _ => KafkaError::UnknownServerError,
    }
}

/// The protocol error of a [`FormatError`].
pub(crate) fn format_error_kind(e: &FormatError) -> KafkaError {
    match e {
        FormatError::Corrupt { .. } => KafkaError::CorruptMessage,
        FormatError::InvalidRecord { .. } => KafkaError::InvalidRecord,
        FormatError::Unsupported { .. } => KafkaError::UnsupportedForMessageFormat,
    }
}

impl SegmentError {
    /// A rejection with Kafka's error `error` and no per-record errors.
    pub(crate) fn rejected(error: KafkaError, message: impl Into<String>) -> Self {
        SegmentError::Rejected {
            error,
            message: message.into(),
            record_errors: Vec::new(),
        }
    }

    /// The Kafka protocol error this error answers a produce or fetch with
    /// (docs/kafka-behaviour.md#leader-errors): [`SegmentError::Rejected`] carries its
    /// own; I/O, index and file failures and an offline log ([`SegmentError::Offline`]) are
    /// `KAFKA_STORAGE_ERROR`; damaged batches `CORRUPT_MESSAGE` or `INVALID_RECORD`; an
    /// offset outside the log `OFFSET_OUT_OF_RANGE`; a bad configuration `INVALID_CONFIG`; misuse that Kafka
    /// answers with an `IllegalArgumentException` or `IllegalStateException`
    /// `UNKNOWN_SERVER_ERROR`.
    pub fn kafka_error(&self) -> KafkaError {
        match self {
            SegmentError::Rejected { error, .. } => *error,
            SegmentError::Io { .. }
            | SegmentError::NotARegularFile { .. }
            | SegmentError::FileName { .. }
            | SegmentError::DirLocked { .. }
            | SegmentError::MissingIndex { .. }
            | SegmentError::SegmentDeleted { .. }
            | SegmentError::SwapRefused { .. } => KafkaError::KafkaStorageError,
            SegmentError::Index(_) | SegmentError::TxnIndex(_) => KafkaError::KafkaStorageError,
            SegmentError::Record { source, .. } => decode_error_kind(source),
            SegmentError::Format { source, .. } | SegmentError::InvalidInput { source } => {
                format_error_kind(source)
            }
            SegmentError::Corrupt { .. } => KafkaError::CorruptMessage,
            SegmentError::OffsetOutOfRange { .. } => KafkaError::OffsetOutOfRange,
            SegmentError::OffsetMovedToTieredStorage { .. } => {
                KafkaError::OffsetMovedToTieredStorage
            }
            SegmentError::InvalidConfig { .. } => KafkaError::InvalidConfig,
            SegmentError::OffsetOverflow { .. }
            | SegmentError::NonMonotonicOffset { .. }
            | SegmentError::InvalidArgument { .. } => KafkaError::UnknownServerError,
            SegmentError::Offline { .. } => KafkaError::KafkaStorageError,
            SegmentError::IllegalState { .. } => KafkaError::UnknownServerError,
            SegmentError::RemoteStorage { .. } => KafkaError::UnknownServerError,
        }
    }

    /// The per-record errors of a [`SegmentError::Rejected`] (empty for every other
    /// error).
    pub fn record_errors(&self) -> &[RecordError] {
        match self {
            SegmentError::Rejected { record_errors, .. } => record_errors,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_are_kafkas() {
        assert_eq!(
            KafkaError::OutOfOrderSequenceNumber.name(),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        assert_eq!(KafkaError::OutOfOrderSequenceNumber.code(), 45);
        assert_eq!(KafkaError::RecordTooLarge.name(), "MESSAGE_TOO_LARGE");
        assert_eq!(KafkaError::RecordBatchTooLarge.code(), 18);
        assert_eq!(KafkaError::InvalidRecord.code(), 87);
        assert_eq!(KafkaError::UnknownServerError.code(), -1);
        let mut codes: Vec<i16> = KafkaError::ALL.iter().map(|e| e.code()).collect();
        let sorted = {
            let mut s = codes.clone();
            s.sort_unstable();
            s
        };
        assert_eq!(codes, sorted, "ALL is in code order");
        codes.dedup();
        assert_eq!(codes.len(), KafkaError::ALL.len(), "codes are distinct");
    }

    #[test]
    fn every_error_maps_to_a_kafka_error() {
        let io = SegmentError::io("write", "/x", std::io::Error::other("boom"));
        assert_eq!(io.kafka_error(), KafkaError::KafkaStorageError);
        let arg = SegmentError::arg("no");
        assert_eq!(arg.kafka_error(), KafkaError::UnknownServerError);
        let input = SegmentError::InvalidInput {
            source: FormatError::Corrupt {
                position: 0,
                reason: "crc".into(),
            },
        };
        assert_eq!(input.kafka_error(), KafkaError::CorruptMessage);
        let r = SegmentError::rejected(KafkaError::InvalidTxnState, "x");
        assert_eq!(r.kafka_error(), KafkaError::InvalidTxnState);
        assert!(r.record_errors().is_empty());
        let offline = SegmentError::Offline {
            path: "/x".into(),
            reason: "a flush failed".into(),
        };
        assert_eq!(offline.kafka_error(), KafkaError::KafkaStorageError);
    }

    #[test]
    fn an_offline_refusal_keeps_its_message() {
        // The text these refusals had as `IllegalState` errors before `Offline` existed.
        let offline = SegmentError::Offline {
            path: "/x".into(),
            reason: "a flush failed".into(),
        };
        assert_eq!(
            offline.to_string(),
            "illegal state in /x: the log is offline: a flush failed (the state on disk is \
             unknown, so nothing more is written); reopen it to recover"
        );
    }
}
