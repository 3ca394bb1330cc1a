//! The error type of the `segment` crate.

use std::path::PathBuf;

use index_core::IndexError;
use index_txn::TxnIndexError;

use crate::format::FormatError;
use crate::record::RecordError;

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
        source: RecordError,
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
        error: crate::leader::KafkaError,
        /// What was wrong, with the values found.
        message: String,
        /// The records at fault, by index in the batch (Kafka's
        /// `ProduceResponse.RecordError`s); empty for batch-level errors.
        record_errors: Vec<crate::leader::RecordError>,
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
