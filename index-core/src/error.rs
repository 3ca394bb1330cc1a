//! The error type shared by the memory-mapped index crates.

use std::path::PathBuf;

/// Errors returned by [`IndexFile`](crate::IndexFile) and by the offset and time indexes
/// built on it (`index-offset`, `index-time` re-export this type).
///
/// Every variant names the index file. Corruption ([`IndexError::CorruptIndex`]) is a
/// different variant from I/O ([`IndexError::Io`]); rule violations by the caller (full
/// index, non-monotonic append, relative-offset overflow) each have their own variant,
/// mirroring the Java exceptions Kafka throws in the same situations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// An operating-system I/O error (open, set_len, mmap, msync, rename, delete).
    #[error("I/O error on index file {path}: {source}")]
    Io {
        /// The index file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file's contents break an index invariant (Kafka's `CorruptIndexException`).
    #[error("corrupt index file {path}: {reason}")]
    CorruptIndex {
        /// The index file.
        path: PathBuf,
        /// What is wrong, with the values found.
        reason: String,
    },
    /// Append to an index whose slots are all used (Kafka: "attempt to append to a full index").
    #[error("attempt to append to a full {kind} {path} ({entries} entries)")]
    IndexFull {
        /// The index file.
        path: PathBuf,
        /// "offset index" or "time index".
        kind: &'static str,
        /// Entries in the index.
        entries: usize,
    },
    /// Append of an offset that does not move forward (Kafka's `InvalidOffsetException`).
    #[error(
        "attempt to append offset {offset} to slot {slot} of {path}, \
         which is not larger than the last offset {last_offset}"
    )]
    InvalidOffset {
        /// The index file.
        path: PathBuf,
        /// The rejected offset.
        offset: i64,
        /// The slot the entry would have gone to (the current entry count).
        slot: usize,
        /// The offset of the last entry.
        last_offset: i64,
    },
    /// An offset outside `[base_offset, base_offset + 2^31 - 1]` (Kafka's
    /// `IndexOffsetOverflowException`). Nothing was written.
    #[error(
        "offset {offset} is not representable relative to base offset {base_offset} in {path}"
    )]
    OffsetOverflow {
        /// The index file.
        path: PathBuf,
        /// The rejected absolute offset.
        offset: i64,
        /// The segment base offset.
        base_offset: i64,
    },
    /// A time-index append whose timestamp is below the last one (Kafka's
    /// `IllegalStateException` in `TimeIndex.maybeAppend`).
    #[error(
        "attempt to append timestamp {timestamp} to slot {slot} of {path}, \
         which is smaller than the last timestamp {last_timestamp}"
    )]
    InvalidTimestamp {
        /// The index file.
        path: PathBuf,
        /// The rejected timestamp (ms since epoch).
        timestamp: i64,
        /// The slot the entry would have gone to.
        slot: usize,
        /// The timestamp of the last entry (ms since epoch).
        last_timestamp: i64,
    },
    /// `entry(n)` with `n >= entries` (Kafka: IllegalArgumentException).
    #[error("attempt to fetch entry {slot} from {kind} {path}, which has {entries} entries")]
    SlotOutOfRange {
        /// The index file.
        path: PathBuf,
        /// "offset index" or "time index".
        kind: &'static str,
        /// The requested slot.
        slot: usize,
        /// Entries in the index.
        entries: usize,
    },
    /// An argument Kafka rejects with IllegalArgumentException (invalid max index size,
    /// resize below the used size, write to a read-only index).
    #[error("invalid argument for {path}: {reason}")]
    InvalidArgument {
        /// The index file.
        path: PathBuf,
        /// Why the argument was rejected.
        reason: String,
    },
    /// The index was unmapped (`force_unmap`, `close`, `delete_if_exists`); Kafka throws
    /// NullPointerException here, we return this.
    #[error("index file {path} is closed (unmapped)")]
    Closed {
        /// The index file.
        path: PathBuf,
    },
}

/// Result alias for index operations.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;

impl IndexError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        IndexError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
