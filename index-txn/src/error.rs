//! The error type of the transaction index.

use std::path::{Path, PathBuf};

/// Errors returned by [`TransactionIndex`](crate::TransactionIndex).
///
/// Every variant names the index file. Corruption of the file
/// ([`TxnIndexError::CorruptIndex`]) is a different variant from an operating-system
/// failure ([`TxnIndexError::Io`]), and both differ from a caller breaking an append rule
/// ([`TxnIndexError::NonMonotonic`], [`TxnIndexError::InvalidAppend`]). Nothing in this
/// crate panics on file contents; hostile files produce these errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TxnIndexError {
    /// An operating-system I/O error (open, read, write, fsync, set_len, rename, delete).
    /// Kafka wraps these in `KafkaException`.
    #[error("I/O error on transaction index {path}: {source}")]
    Io {
        /// The index file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file breaks an invariant of the format (Kafka's `CorruptIndexException`, and the
    /// `KafkaException` Kafka throws for an unknown entry version): an entry whose last offset
    /// is below the index's start offset, an entry with an unsupported version ("unexpected
    /// aborted transaction version …"), or a partial trailing entry (file length not a
    /// multiple of 34 bytes) where a whole-entry file is required.
    #[error("corrupt transaction index {path}: {reason}")]
    CorruptIndex {
        /// The index file.
        path: PathBuf,
        /// What is wrong, with the values and byte positions found.
        reason: String,
    },
    /// An append whose last offset does not move strictly forward (Kafka's
    /// `IllegalArgumentException` "The last offset of appended transactions must increase
    /// sequentially"). Nothing was written.
    #[error(
        "last offset of appended transactions must increase strictly in {path}: \
         last offset {last_offset}, new last offset {new_last_offset}"
    )]
    NonMonotonic {
        /// The index file.
        path: PathBuf,
        /// The last offset of the index's last entry.
        last_offset: i64,
        /// The rejected entry's last offset.
        new_last_offset: i64,
    },
    /// An append Kafka would accept but that would make the index fail its own
    /// [`sanity_check`](crate::TransactionIndex::sanity_check) (last offset below the start
    /// offset). Not a Kafka error; see the crate docs. Nothing was written.
    #[error("invalid append to transaction index {path}: {reason}")]
    InvalidAppend {
        /// The index file.
        path: PathBuf,
        /// Why the entry was rejected, with its values.
        reason: String,
    },
}

/// Result alias for transaction-index operations.
pub type Result<T, E = TxnIndexError> = std::result::Result<T, E>;

impl TxnIndexError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        TxnIndexError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn corrupt(path: &Path, reason: String) -> Self {
        TxnIndexError::CorruptIndex {
            path: path.to_path_buf(),
            reason,
        }
    }
}
