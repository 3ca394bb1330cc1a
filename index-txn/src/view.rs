//! [`TransactionIndexView`]: a read-only transaction index over bytes in memory (a remote
//! segment's `.txnindex`, as downloaded) with
//! [`TransactionIndex`](crate::TransactionIndex)'s answers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::entry::{AbortedTxn, RawAbortedTxn};
use crate::error::{Result, TxnIndexError};
use crate::index::TxnIndexSearchResult;

/// The name that errors of a view built from caller bytes give as the file.
pub const IN_MEMORY_TXN_PATH: &str = "<in-memory transaction index>";

/// A read-only transaction index held in memory: the bytes of a `.txnindex` file
/// (34-byte entries), supplied by the caller or read once from a file.
/// [`collect_aborted_txns`](Self::collect_aborted_txns) answers as
/// [`TransactionIndex::collect_aborted_txns`](crate::TransactionIndex::collect_aborted_txns)
/// does over the same bytes (Kafka's `collectAbortedTxns`, which Kafka's
/// `RemoteLogManager` runs on the remote segments' indexes for a `read_committed` fetch;
/// `docs/kafka-behaviour.md#index-bytes`).
///
/// Built only over well-formed bytes, checked once: the length is a multiple of 34 (a
/// partial tail, which the file-backed index reads past, is refused here: a download is
/// whole or broken), every entry has a version Kafka reads, no last offset is below the
/// start offset (Kafka's `sanityCheck`), and last offsets increase strictly (Kafka's
/// append rule). Cheap to clone (an `Arc`); `Send + Sync`.
#[derive(Clone, Debug)]
pub struct TransactionIndexView {
    bytes: Arc<[u8]>,
    start_offset: i64,
    origin: Arc<Path>,
}

impl TransactionIndexView {
    /// A view over `bytes` for the segment starting at `start_offset`.
    ///
    /// # Errors
    /// [`TxnIndexError::CorruptIndex`] (naming [`IN_MEMORY_TXN_PATH`]) on a partial
    /// entry, an unsupported version, a last offset below `start_offset` or not larger
    /// than the one before (with the byte position and the values found).
    pub fn from_bytes(start_offset: i64, bytes: impl Into<Arc<[u8]>>) -> Result<Self> {
        Self::checked(bytes.into(), start_offset, Path::new(IN_MEMORY_TXN_PATH))
    }

    /// Reads the `.txnindex` file at `path` once (opened read-only) and builds a view of
    /// it, as [`TransactionIndexView::from_bytes`].
    ///
    /// # Errors
    /// [`TxnIndexError::Io`]; the errors of [`TransactionIndexView::from_bytes`], naming
    /// `path`.
    pub fn open(path: impl AsRef<Path>, start_offset: i64) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| TxnIndexError::io(path, e))?;
        Self::checked(Arc::from(bytes), start_offset, path)
    }

    fn checked(bytes: Arc<[u8]>, start_offset: i64, origin: &Path) -> Result<Self> {
        let len = bytes.len();
        if !len.is_multiple_of(RawAbortedTxn::SIZE) {
            return Err(TxnIndexError::corrupt(
                origin,
                format!(
                    "partial trailing entry: {len} bytes is {} whole entries plus {} bytes",
                    len / RawAbortedTxn::SIZE,
                    len % RawAbortedTxn::SIZE
                ),
            ));
        }
        let raw: &[RawAbortedTxn] = bytemuck::cast_slice(&bytes);
        let mut last: Option<i64> = None;
        for (i, r) in raw.iter().enumerate() {
            let txn = r.decode();
            let pos = i * RawAbortedTxn::SIZE;
            let reason = if !txn.is_supported_version() {
                Some(format!(
                    "unexpected aborted transaction version {} at byte position {pos}",
                    txn.version
                ))
            } else if txn.last_offset < start_offset {
                Some(format!(
                    "last offset {} of the entry at byte position {pos} is smaller than the start offset {start_offset}",
                    txn.last_offset
                ))
            } else {
                match last {
                    Some(l) if txn.last_offset <= l => Some(format!(
                        "last offset {} of the entry at byte position {pos} is not larger than the previous one {l}",
                        txn.last_offset
                    )),
                    _ => None,
                }
            };
            if let Some(reason) = reason {
                return Err(TxnIndexError::corrupt(origin, reason));
            }
            last = Some(txn.last_offset);
        }
        Ok(TransactionIndexView {
            bytes,
            start_offset,
            origin: Arc::from(origin),
        })
    }

    /// The segment's start (base) offset.
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    /// The path (or [`IN_MEMORY_TXN_PATH`]) errors name.
    pub fn origin(&self) -> PathBuf {
        self.origin.to_path_buf()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.bytes.len() / RawAbortedTxn::SIZE
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes held (34 per entry): the view's weight in a cache.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    fn entries(&self) -> impl Iterator<Item = AbortedTxn> + '_ {
        bytemuck::cast_slice::<u8, RawAbortedTxn>(&self.bytes)
            .iter()
            .map(RawAbortedTxn::decode)
    }

    /// All entries in file order (Kafka's `allAbortedTxns`).
    pub fn all_aborted_txns(&self) -> Vec<AbortedTxn> {
        self.entries().collect()
    }

    /// Kafka's `collectAbortedTxns(fetch_offset, upper_bound_offset)` over these entries,
    /// with [`TransactionIndex::collect_aborted_txns`](crate::TransactionIndex::collect_aborted_txns)'s
    /// rule: an entry is included iff `last_offset >= fetch_offset && first_offset <
    /// upper_bound_offset`; the search stops, complete, after the first entry with
    /// `last_stable_offset >= upper_bound_offset`.
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> TxnIndexSearchResult {
        let mut res = TxnIndexSearchResult::default();
        for txn in self.entries() {
            if txn.last_offset >= fetch_offset && txn.first_offset < upper_bound_offset {
                res.aborted_transactions.push(txn);
            }
            if txn.last_stable_offset >= upper_bound_offset {
                res.is_complete = true;
                break;
            }
        }
        res
    }
}
