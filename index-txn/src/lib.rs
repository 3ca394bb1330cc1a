//! Kafka-compatible transaction index (`.txnindex`): the aborted transactions of one log
//! segment.
//!
//! A segment's transaction index lists, for every transaction whose ABORT control marker
//! lies in the segment, an [`AbortedTxn`] (producer id, first offset, last offset = marker
//! offset, last stable offset). `READ_COMMITTED` fetches use
//! [`TransactionIndex::collect_aborted_txns`] to tell consumers which records to drop.
//! The on-disk format is a plain (not memory-mapped) file of 34-byte big-endian entries
//! ([`RawAbortedTxn`]), byte-compatible with Apache Kafka's `TransactionIndex`
//! (`docs/kafka-behaviour.md#txn-index` in the repository; deviations in docs/kafka-behaviour.md#differences).
//!
//! # Example
//!
//! ```
//! use index_txn::{AbortedTxn, TransactionIndex};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("00000000000000000000.txnindex");
//!
//! // The file is created by the first append.
//! let index = TransactionIndex::open(&path, 0)?;
//! // (producer id, first offset, last offset = ABORT marker, last stable offset)
//! index.append(&AbortedTxn::new(0, 0, 10, 11))?;
//! index.append(&AbortedTxn::new(1, 5, 15, 13))?;
//! index.flush()?;
//! assert_eq!(std::fs::metadata(&path)?.len(), 68); // 2 × 34 bytes
//!
//! // A fetch of offsets [11, 14): only producer 1's transaction overlaps it, and
//! // producer 1's entry has last stable offset 13 < 14, so the search is not complete:
//! // the caller continues with the next segment's index.
//! let found = index.collect_aborted_txns(11, 14)?;
//! assert_eq!(found.aborted_transactions, vec![AbortedTxn::new(1, 5, 15, 13)]);
//! assert!(!found.is_complete);
//!
//! // Last offsets must increase strictly.
//! assert!(matches!(
//!     index.append(&AbortedTxn::new(2, 0, 15, 20)),
//!     Err(index_txn::TxnIndexError::NonMonotonic { .. })
//! ));
//! # Ok(())
//! # }
//! ```
//!
//! # Deviations from Kafka
//!
//! Reading is byte-compatible with Kafka, including the version quirk (the version is taken
//! from the entry's **first byte only**: `00 01` reads as version 0, `01 00` as version 1,
//! which is rejected). Writing always uses version `0x0000`. Where Kafka's behaviour can
//! lose or hide acknowledged data we deliberately differ (docs/kafka-behaviour.md#differences):
//!
//! 1. **Partial trailing entry → appends refused.** Kafka appends after a partial tail at
//!    the physical end of file, so the new entry is misaligned and lost (acceptance case 40). We read
//!    such a file like Kafka (the tail is ignored) but [`TransactionIndex::append`] returns
//!    [`TxnIndexError::CorruptIndex`], and [`TransactionIndex::sanity_check`] reports the
//!    tail too. We chose refusing over truncating on open because `open` then never
//!    modifies a file (a file that is not a transaction index at all is not damaged by
//!    merely opening it) and the caller decides: [`TransactionIndex::truncate_partial_tail`]
//!    (explicit repair), `truncate_to`, or `reset` + rebuild (what segment recovery does).
//!    Our own appends never leave a partial tail: a failed write is cut back off the file.
//! 2. **Last offset reloaded.** Kafka's in-memory last offset starts empty on every open,
//!    so after a reopen a smaller last offset can be appended, breaking the ordering that
//!    `collect_aborted_txns` relies on. We load it from the file's last entry (lazily, at
//!    the first append after `open`/`close`), so the strictly-increasing rule holds across
//!    reopen. Kafka's own write paths (recovery resets, truncation sets the last offset)
//!    never need the looser rule.
//! 3. **Reads after `close`.** Kafka's iteration returns nothing after `close()` although
//!    the file holds entries. We open the file at the current path for the duration of the
//!    read and return its entries. Likewise `truncate_to`, `reset` and
//!    `truncate_partial_tail` act on the file of a closed index instead of doing nothing.
//! 4. **Last offset set after the write.** Kafka updates the last offset before writing,
//!    so a failed write makes the retry fail too; we update it only after success.
//! 5. **Append below the start offset refused** with [`TxnIndexError::InvalidAppend`]:
//!    Kafka writes it and then fails its own `sanityCheck` on the next load.
//! 6. **Errors are typed**: Kafka's `KafkaException` for an unsupported version is a
//!    [`TxnIndexError::CorruptIndex`]; `IllegalArgumentException` for a non-increasing last
//!    offset is [`TxnIndexError::NonMonotonic`]; I/O errors are [`TxnIndexError::Io`].
//!
//! This crate contains no `unsafe` code.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod entry;
mod error;
mod index;
mod view;
use index_core::pio;

pub use entry::{AbortedTxn, RawAbortedTxn};
pub use error::{Result, TxnIndexError};
pub use index::{TransactionIndex, TxnIndexSearchResult};
pub use view::{TransactionIndexView, IN_MEMORY_TXN_PATH};

/// File-name suffix of a transaction index (`<20-digit base offset>.txnindex`).
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
