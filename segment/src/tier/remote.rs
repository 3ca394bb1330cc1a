//! The read of a remote segment (KIP-405): [`RemoteSegment`], a `.log` held in memory with
//! its indexes ([`RemoteIndexes`]), and [`read_remote`], Kafka 4.4's
//! `RemoteLogManager.read` over a run of them (`docs/kafka-behaviour.md#remote-read`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use index_offset::{OffsetIndexView, OffsetPosition};
use index_time::TimeIndexView;
use index_txn::{AbortedTxn, TransactionIndexView};

use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat, KafkaBatchFormat};
use crate::segment::LogOffsetMetadata;

/// A remote segment's indexes, held in memory: what Kafka's `RemoteIndexCache` keeps per
/// remote segment (its `Entry`), and what a remote-index cache holds. Built from the uploaded bytes, which the views check once
/// (`docs/kafka-behaviour.md#index-bytes`).
#[derive(Clone, Debug)]
pub struct RemoteIndexes {
    /// The `.index`.
    pub offset_index: OffsetIndexView,
    /// The `.timeindex`.
    pub time_index: TimeIndexView,
    /// The `.txnindex`, `None` when the segment has no aborted transaction (Kafka uploads
    /// none then).
    pub txn_index: Option<TransactionIndexView>,
}

impl RemoteIndexes {
    /// The indexes of the segment starting at `base_offset`, from their uploaded bytes.
    ///
    /// # Errors
    /// [`SegmentError::Index`] / [`SegmentError::TxnIndex`] with `CorruptIndex` for bytes
    /// the views refuse.
    pub fn from_bytes(
        base_offset: i64,
        offset_index: impl Into<Arc<[u8]>>,
        time_index: impl Into<Arc<[u8]>>,
        txn_index: Option<Arc<[u8]>>,
    ) -> Result<Self> {
        Ok(RemoteIndexes {
            offset_index: OffsetIndexView::from_bytes(base_offset, offset_index)?,
            time_index: TimeIndexView::from_bytes(base_offset, time_index)?,
            txn_index: txn_index
                .map(|b| TransactionIndexView::from_bytes(base_offset, b))
                .transpose()?,
        })
    }

    /// The indexes of the segment starting at `base_offset` from downloaded files, each
    /// opened read-only and read once (nothing is mapped or kept open).
    ///
    /// # Errors
    /// [`SegmentError::Index`] / [`SegmentError::TxnIndex`]: `Io` for a file that cannot
    /// be read, `CorruptIndex` as [`RemoteIndexes::from_bytes`].
    pub fn open(
        base_offset: i64,
        offset_index: &Path,
        time_index: &Path,
        txn_index: Option<&Path>,
    ) -> Result<Self> {
        Ok(RemoteIndexes {
            offset_index: OffsetIndexView::open(offset_index, base_offset)?,
            time_index: TimeIndexView::open(time_index, base_offset)?,
            txn_index: txn_index
                .map(|p| TransactionIndexView::open(p, base_offset))
                .transpose()?,
        })
    }

    /// The bytes held by the three indexes: the entry's weight in a cache.
    pub fn size_in_bytes(&self) -> usize {
        self.offset_index.size_in_bytes()
            + self.time_index.size_in_bytes()
            + self.txn_index.as_ref().map_or(0, |t| t.size_in_bytes())
    }
}

/// One remote segment as a fetch reads it: its `.log` bytes (all of them, as
/// `RemoteStorageManager.fetchLogSegment` streams them from a position) and its indexes.
/// Cheap to clone (two `Arc`s).
#[derive(Clone, Debug)]
pub struct RemoteSegment {
    base_offset: i64,
    end_offset: i64,
    log: Arc<[u8]>,
    indexes: Arc<RemoteIndexes>,
}

impl RemoteSegment {
    /// The segment `[base_offset, end_offset]` (end inclusive: Kafka's
    /// `RemoteLogSegmentMetadata.endOffset`, the next segment's base − 1) with its `.log`
    /// bytes and indexes.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `end_offset < base_offset`, or if the indexes
    /// are of another base offset.
    pub fn new(
        base_offset: i64,
        end_offset: i64,
        log: impl Into<Arc<[u8]>>,
        indexes: Arc<RemoteIndexes>,
    ) -> Result<Self> {
        if end_offset < base_offset || indexes.offset_index.base_offset() != base_offset {
            return Err(SegmentError::InvalidArgument {
                reason: format!(
                    "remote segment [{base_offset}, {end_offset}] with indexes of base offset {}",
                    indexes.offset_index.base_offset()
                ),
            });
        }
        Ok(RemoteSegment {
            base_offset,
            end_offset,
            log: log.into(),
            indexes,
        })
    }

    /// The first offset of the segment.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The last offset of the segment, inclusive.
    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }

    /// The `.log` bytes.
    pub fn log(&self) -> &Arc<[u8]> {
        &self.log
    }

    /// The indexes.
    pub fn indexes(&self) -> &Arc<RemoteIndexes> {
        &self.indexes
    }

    fn name(&self) -> PathBuf {
        PathBuf::from(format!("<remote segment {}>", self.base_offset))
    }

    /// Kafka's `findFirstBatch` from the offset index's position for `offset`: the first
    /// batch whose last offset is `>= offset`, as `(position, size, base offset)`, `None`
    /// when the segment has none (a compacted-away offset).
    fn first_batch<F: BatchFormat>(&self, offset: i64) -> Result<Option<(u64, usize, i64)>> {
        let start = self.indexes.offset_index.lookup(offset).position as u64;
        for b in format::scan::<F>(&self.log, start) {
            let b = b.map_err(|source| SegmentError::Format {
                path: self.name(),
                source,
            })?;
            if b.info.last_offset >= offset {
                return Ok(Some((b.info.position, b.bytes.len(), b.info.base_offset)));
            }
        }
        Ok(None)
    }
}

/// The answer of [`read_remote`] (Kafka's `FetchDataInfo` from `RemoteLogManager.read`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteFetch {
    /// Where the bytes start: the first batch's **base** offset (Kafka 4.4 puts it there,
    /// not the fetch offset), the segment's base offset and the batch's position; `None`
    /// with no bytes (Kafka's `LogOffsetMetadata(offset)`, position unknown).
    pub fetch_offset_metadata: Option<LogOffsetMetadata>,
    /// The bytes: whole batches from the first batch on, the last one possibly cut, at
    /// most `max_bytes` (more only for a first batch under min-one-message), never past
    /// the segment's end.
    pub records: Vec<u8>,
    /// For a `read_committed` fetch with bytes, or none found at all: the aborted
    /// transactions overlapping the range, unique by `(producer id, first offset)` (Kafka
    /// collects `AbortedTransaction`s into a set); `None` otherwise.
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
    /// `Some((start, upper))` when the remote segments' transaction indexes did not
    /// complete the search: Kafka then searches the local segments' indexes with
    /// `collectAbortedTxns(start, upper)`, and so must the caller.
    pub local_aborted_search: Option<(i64, i64)>,
}

/// Kafka 4.4's `RemoteLogManager.read` (`docs/kafka-behaviour.md#remote-read`): a fetch of
/// `offset` from the remote tier. `segments` are the remote segments from the one holding
/// `offset` (Kafka finds it by the offset's leader epoch) onwards, in offset order; the
/// following ones serve a compacted-away offset and the aborted-transaction search.
///
/// * The first segment with a batch whose last offset is `>= offset` (searched from the
///   offset index's position) answers; none: empty, with an empty aborted list for
///   `read_committed`.
/// * A first batch larger than `max_bytes` without `min_one_message`: empty, no aborted
///   list. Otherwise the bytes run from that batch for `max_bytes`, or the whole first
///   batch when it is larger and `min_one_message`, cut at the segment's end.
/// * `read_committed`: the aborted transactions of `[first batch base, upper)`, `upper`
///   the offset index's `fetchUpperBoundOffset` of the bytes, else the segment's end + 1,
///   from this segment's and the following ones' transaction indexes until one completes
///   the search; otherwise [`RemoteFetch::local_aborted_search`] asks for the local ones.
///
/// # Errors
/// [`SegmentError::Format`] for a batch the format cannot frame.
pub fn read_remote<F: BatchFormat>(
    segments: &[RemoteSegment],
    offset: i64,
    max_bytes: u64,
    min_one_message: bool,
    read_committed: bool,
) -> Result<RemoteFetch> {
    let mut found = None;
    for (i, seg) in segments.iter().enumerate() {
        if let Some(b) = seg.first_batch::<F>(offset)? {
            found = Some((i, b));
            break;
        }
    }
    let Some((i, (position, size, first_base))) = found else {
        return Ok(RemoteFetch {
            fetch_offset_metadata: None,
            records: Vec::new(),
            aborted_transactions: read_committed.then(Vec::new),
            local_aborted_search: None,
        });
    };
    let seg = &segments[i];
    if !min_one_message && size as u64 > max_bytes {
        return Ok(RemoteFetch {
            fetch_offset_metadata: None,
            records: Vec::new(),
            aborted_transactions: None,
            local_aborted_search: None,
        });
    }
    let want = if min_one_message && size as u64 > max_bytes {
        size as u64
    } else {
        max_bytes
    };
    let end = (position.saturating_add(want)).min(seg.log.len() as u64);
    // position < log.len() (a batch starts there) and end <= log.len().
    let records = seg.log[position as usize..end as usize].to_vec();
    let mut fetch = RemoteFetch {
        fetch_offset_metadata: Some(LogOffsetMetadata {
            message_offset: first_base,
            segment_base_offset: seg.base_offset,
            relative_position_in_segment: position,
        }),
        records,
        aborted_transactions: None,
        local_aborted_search: None,
    };
    if read_committed {
        let fetch_size = i32::try_from(fetch.records.len()).unwrap_or(i32::MAX);
        let upper = seg
            .indexes
            .offset_index
            .fetch_upper_bound_offset(
                OffsetPosition {
                    offset: first_base,
                    position: u32::try_from(position).unwrap_or(u32::MAX),
                },
                fetch_size,
            )
            .map_or(seg.end_offset.saturating_add(1), |p| p.offset);
        let mut seen = HashSet::new();
        let mut aborted = Vec::new();
        let mut complete = false;
        for s in &segments[i..] {
            let Some(txn) = &s.indexes.txn_index else {
                continue;
            };
            let r = txn.collect_aborted_txns(first_base, upper);
            for t in r.aborted_transactions {
                if seen.insert((t.producer_id, t.first_offset)) {
                    aborted.push(t);
                }
            }
            if r.is_complete {
                complete = true;
                break;
            }
        }
        fetch.aborted_transactions = Some(aborted);
        fetch.local_aborted_search = (!complete).then_some((first_base, upper));
    }
    Ok(fetch)
}

/// [`read_remote`] with Kafka's batch format.
///
/// # Errors
/// As [`read_remote`].
pub fn read_remote_kafka(
    segments: &[RemoteSegment],
    offset: i64,
    max_bytes: u64,
    min_one_message: bool,
    read_committed: bool,
) -> Result<RemoteFetch> {
    read_remote::<KafkaBatchFormat>(segments, offset, max_bytes, min_one_message, read_committed)
}

/// Reads a whole file (a downloaded remote segment's `.log` or index) into shared bytes.
///
/// # Errors
/// [`SegmentError::Io`].
pub fn read_file(path: &Path) -> Result<Arc<[u8]>> {
    std::fs::read(path)
        .map(Arc::from)
        .map_err(|source| SegmentError::Io {
            op: "read",
            path: path.to_path_buf(),
            source,
        })
}
