//! The remote storage seam (KIP-405): [`RemoteStorage`], Kafka's `RemoteStorageManager`
//! (copy a sealed segment's files, fetch a range of its `.log`, fetch one of its indexes,
//! delete it), its errors and the files it stores per segment
//! (`docs/kafka-behaviour.md#remote-storage`).

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use crate::error::{Result, SegmentError};
use crate::pio::FileExt;
use crate::tier::metadata::RemoteLogSegmentMetadata;
use crate::tier::remote::{RemoteIndexes, RemoteSegment};
use crate::tier::SegmentUpload;

/// Kafka's `RemoteStorageManager.IndexType`: the auxiliary files of a remote segment that
/// [`RemoteStorage::fetch_index`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// The `.index` (`OFFSET`).
    Offset,
    /// The `.timeindex` (`TIMESTAMP`).
    Timestamp,
    /// The producer snapshot at the next segment's base offset (`PRODUCER_SNAPSHOT`).
    ProducerSnapshot,
    /// The `.txnindex` (`TRANSACTION`), absent when the segment has no aborted
    /// transaction.
    Transaction,
    /// The leader-epoch checkpoint prefix (`LEADER_EPOCH`).
    LeaderEpoch,
}

impl IndexType {
    /// Every index type, in Kafka's declaration order.
    pub const ALL: [IndexType; 5] = [
        IndexType::Offset,
        IndexType::Timestamp,
        IndexType::ProducerSnapshot,
        IndexType::Transaction,
        IndexType::LeaderEpoch,
    ];

    /// The stored file of this index type.
    pub fn file(self) -> RemoteFile {
        match self {
            IndexType::Offset => RemoteFile::OffsetIndex,
            IndexType::Timestamp => RemoteFile::TimeIndex,
            IndexType::ProducerSnapshot => RemoteFile::ProducerSnapshot,
            IndexType::Transaction => RemoteFile::TransactionIndex,
            IndexType::LeaderEpoch => RemoteFile::LeaderEpochCheckpoint,
        }
    }
}

/// One of the files a remote segment is stored as: Kafka's `LocalTieredStorage` file
/// types (`RemoteLogSegmentFileset.RemoteLogSegmentFileType`), with their suffixes
/// (`docs/kafka-behaviour.md#remote-storage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoteFile {
    /// The `.log` (`SEGMENT`).
    Segment,
    /// The `.index` (`OFFSET_INDEX`).
    OffsetIndex,
    /// The `.timeindex` (`TIME_INDEX`).
    TimeIndex,
    /// The `.txnindex` (`TRANSACTION_INDEX`), the one optional file.
    TransactionIndex,
    /// The leader-epoch checkpoint bytes (`LEADER_EPOCH_CHECKPOINT`).
    LeaderEpochCheckpoint,
    /// The producer snapshot (`PRODUCER_SNAPSHOT`).
    ProducerSnapshot,
}

impl RemoteFile {
    /// Every file type, in Kafka's declaration order (the order a copy writes them in,
    /// except that [`LocalTieredStorage`](super::LocalTieredStorage) publishes the `.log`
    /// last).
    pub const ALL: [RemoteFile; 6] = [
        RemoteFile::Segment,
        RemoteFile::OffsetIndex,
        RemoteFile::TimeIndex,
        RemoteFile::TransactionIndex,
        RemoteFile::LeaderEpochCheckpoint,
        RemoteFile::ProducerSnapshot,
    ];

    /// The file name suffix: `.log`, `.index`, `.timeindex`, `.txnindex`,
    /// `.leader_epoch_checkpoint`, `.snapshot`.
    pub fn suffix(self) -> &'static str {
        match self {
            RemoteFile::Segment => ".log",
            RemoteFile::OffsetIndex => ".index",
            RemoteFile::TimeIndex => ".timeindex",
            RemoteFile::TransactionIndex => ".txnindex",
            RemoteFile::LeaderEpochCheckpoint => ".leader_epoch_checkpoint",
            RemoteFile::ProducerSnapshot => ".snapshot",
        }
    }

    /// Whether Kafka's `LocalTieredStorage` lets a fileset lack it (only the `.txnindex`).
    pub fn is_optional(self) -> bool {
        self == RemoteFile::TransactionIndex
    }

    /// The stored name of this file of `metadata`'s segment: the start offset on 20
    /// digits, `-`, the segment id as Kafka prints a `Uuid`, the suffix (Kafka's
    /// `RemoteLogSegmentFileType.toFilename`, e.g.
    /// `00000000000000000000-AAAAAAAAAAAAAAAAAAAAAQ.log`).
    pub fn file_name(self, metadata: &RemoteLogSegmentMetadata) -> String {
        format!(
            "{}-{}{}",
            crate::names::filename_prefix_from_offset(metadata.start_offset()),
            metadata.remote_log_segment_id().id,
            self.suffix()
        )
    }
}

/// The errors of a [`RemoteStorage`]: Kafka's `RemoteResourceNotFoundException`,
/// `RemoteStorageException` and the `IllegalArgumentException` of a bad range.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteStorageError {
    /// The segment or the asked file of it is not in the remote storage (Kafka's
    /// `RemoteResourceNotFoundException`; a segment with no aborted transaction has no
    /// `.txnindex`, and [`RemoteStorage::fetch_index`] answers this for it, as Kafka's
    /// contract asks).
    #[error("remote resource not found: {what}")]
    NotFound {
        /// The object or file, as the backend names it.
        what: String,
    },
    /// A range or argument the storage refuses (Kafka's `checkArgument`s of
    /// `fetchLogSegment`: an end below the start, or past the segment's size).
    #[error("invalid argument: {reason}")]
    InvalidArgument {
        /// What was wrong, with the values.
        reason: String,
    },
    /// An I/O failure of a local backend (Kafka's `RemoteStorageException` wrapping it).
    #[error("remote storage I/O error during {op} on {what}: {source}")]
    Io {
        /// What was being done (`"write"`, `"rename"`, `"read"`, ...).
        op: &'static str,
        /// The file or directory.
        what: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A failure of a remote backend, e.g. an object store's (Kafka's
    /// `RemoteStorageException`).
    #[error("remote storage backend error during {op} on {what}: {source}")]
    Backend {
        /// What was being done (`"put"`, `"get"`, `"delete"`).
        op: &'static str,
        /// The object.
        what: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl RemoteStorageError {
    pub(crate) fn io(op: &'static str, what: impl std::fmt::Display, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            return RemoteStorageError::NotFound {
                what: what.to_string(),
            };
        }
        RemoteStorageError::Io {
            op,
            what: what.to_string(),
            source,
        }
    }

    /// `true` for [`RemoteStorageError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, RemoteStorageError::NotFound { .. })
    }
}

/// Kafka's `RemoteStorageManager`: where sealed segments go and are read back from
/// (`docs/kafka-behaviour.md#remote-storage`). Shared across threads (`Send + Sync`);
/// each call is a whole operation (Kafka's calls return streams; these return the bytes,
/// which is what [`RemoteSegment`] and [`RemoteIndexes`] hold).
///
/// The caller (an uploader, Kafka's `RemoteLogManager`) owns the metadata: it records
/// `COPY_SEGMENT_STARTED` before [`copy_log_segment_data`](Self::copy_log_segment_data),
/// `COPY_SEGMENT_FINISHED` after it, and passes a new segment id on each retry.
pub trait RemoteStorage: Send + Sync {
    /// Stores `data`'s files under `metadata`'s segment id: the `.log`, `.index`,
    /// `.timeindex`, the `.txnindex` when there is one, the leader-epoch checkpoint bytes
    /// and the producer snapshot (Kafka's `copyLogSegmentData`). Retrying with content
    /// already written overwrites it. Returns the custom metadata to record with the
    /// segment (`None` for both implementations here).
    ///
    /// # Errors
    /// [`RemoteStorageError::Io`] / [`RemoteStorageError::Backend`]; a failed copy leaves
    /// no file of the segment behind (Kafka's `LocalTieredStorage` deletes the fileset).
    fn copy_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: &SegmentUpload,
    ) -> Result<Option<Vec<u8>>, RemoteStorageError>;

    /// The `.log` bytes of `metadata`'s segment from byte `start_position` through byte
    /// `end_position` **inclusive**, or to the end when `None` or past the end (Kafka's
    /// `fetchLogSegment(metadata, startPosition[, endPosition])`).
    ///
    /// # Errors
    /// [`RemoteStorageError::InvalidArgument`] if `end_position < start_position` or
    /// `end_position` exceeds the metadata's segment size (Kafka's checks);
    /// [`RemoteStorageError::NotFound`] if the segment is not stored; I/O and backend
    /// errors.
    fn fetch_log_segment(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        start_position: u64,
        end_position: Option<u64>,
    ) -> Result<Vec<u8>, RemoteStorageError>;

    /// The whole file of `index_type` of `metadata`'s segment (Kafka's `fetchIndex`).
    ///
    /// # Errors
    /// [`RemoteStorageError::NotFound`] if the segment or that file is not stored (a
    /// segment without aborted transactions has no `.txnindex`); I/O and backend errors.
    fn fetch_index(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        index_type: IndexType,
    ) -> Result<Vec<u8>, RemoteStorageError>;

    /// Deletes every file of `metadata`'s segment (Kafka's `deleteLogSegmentData`).
    /// Idempotent: a segment already gone is no error.
    ///
    /// # Errors
    /// [`RemoteStorageError::Io`] / [`RemoteStorageError::Backend`].
    fn delete_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
    ) -> Result<(), RemoteStorageError>;
}

/// Checks a `fetch_log_segment` range as Kafka's `LocalTieredStorage.fetchLogSegment`
/// does, and returns the exclusive end to read to within a `.log` of `len` bytes.
pub(crate) fn check_range(
    metadata: &RemoteLogSegmentMetadata,
    start: u64,
    end: Option<u64>,
    len: u64,
) -> Result<(u64, u64), RemoteStorageError> {
    let size = u64::try_from(metadata.segment_size_in_bytes()).unwrap_or(0);
    if let Some(end) = end {
        if end < start {
            return Err(RemoteStorageError::InvalidArgument {
                reason: format!("end position {end} is below the start position {start}"),
            });
        }
        if end > size {
            return Err(RemoteStorageError::InvalidArgument {
                reason: format!("end position {end} is past the segment size {size}"),
            });
        }
    }
    let stop = end.map_or(len, |e| e.saturating_add(1).min(len));
    Ok((start.min(stop), stop))
}

/// The remote segment's indexes, fetched from `storage` (Kafka's `RemoteIndexCache`
/// loader: the `.index`, the `.timeindex`, and the `.txnindex`, whose absence means no
/// aborted transaction). Give it to [`RemoteIndexCache::get_or_load`](super::RemoteIndexCache::get_or_load).
///
/// # Errors
/// [`SegmentError::RemoteStorage`] for the storage's errors (but a missing `.txnindex`);
/// `CorruptIndex` for bytes the views refuse.
pub fn fetch_remote_indexes(
    storage: &dyn RemoteStorage,
    metadata: &RemoteLogSegmentMetadata,
) -> Result<RemoteIndexes> {
    let offset = storage.fetch_index(metadata, IndexType::Offset)?;
    let time = storage.fetch_index(metadata, IndexType::Timestamp)?;
    let txn = match storage.fetch_index(metadata, IndexType::Transaction) {
        Ok(b) => Some(Arc::<[u8]>::from(b)),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into()),
    };
    RemoteIndexes::from_bytes(metadata.start_offset(), offset, time, txn)
}

/// The whole remote segment of `metadata` as a fetch reads it: its `.log` and `indexes`
/// (from a [`RemoteIndexCache`](super::RemoteIndexCache), or [`fetch_remote_indexes`]).
///
/// # Errors
/// [`SegmentError::RemoteStorage`] for the storage's errors;
/// [`SegmentError::InvalidArgument`] if `indexes` are of another base offset.
pub fn fetch_remote_segment(
    storage: &dyn RemoteStorage,
    metadata: &RemoteLogSegmentMetadata,
    indexes: Arc<RemoteIndexes>,
) -> Result<RemoteSegment> {
    let log = storage.fetch_log_segment(metadata, 0, None)?;
    RemoteSegment::new(metadata.start_offset(), metadata.end_offset(), log, indexes)
}

/// The bytes of one file of `data` to store as `file`, `None` when the upload has none:
/// no `.txnindex`, no producer snapshot, or empty leader-epoch bytes (Kafka's
/// `LocalTieredStorage` transferer skips a missing file and an empty buffer).
pub(crate) enum Part<'a> {
    /// A whole open file (positioned reads).
    File(&'a File),
    /// The `.log`'s region.
    Region(&'a crate::region::FileRegion),
    /// Bytes in memory.
    Bytes(&'a [u8]),
}

impl Part<'_> {
    /// Writes the whole part to `w`; returns the bytes written.
    pub(crate) fn write_to(&self, w: &mut impl Write) -> io::Result<u64> {
        match self {
            Part::Region(r) => r.write_to(w),
            Part::Bytes(b) => {
                w.write_all(b)?;
                Ok(b.len() as u64)
            }
            Part::File(f) => {
                const CHUNK: u64 = 64 * 1024;
                let len = f.metadata()?.len();
                let mut buf = vec![0u8; CHUNK.min(len) as usize];
                let mut done = 0u64;
                while done < len {
                    let n = (len - done).min(CHUNK) as usize;
                    let chunk = buf.get_mut(..n).unwrap_or_default();
                    f.read_exact_at(chunk, done)?;
                    w.write_all(chunk)?;
                    done += n as u64;
                }
                Ok(done)
            }
        }
    }
}

/// The files of `data` to store, in Kafka's order, each with its bytes' source; the
/// absent ones left out.
pub(crate) fn parts(data: &SegmentUpload) -> Vec<(RemoteFile, Part<'_>)> {
    let mut v = vec![
        (RemoteFile::Segment, Part::Region(&data.log)),
        (RemoteFile::OffsetIndex, Part::File(&data.offset_index)),
        (RemoteFile::TimeIndex, Part::File(&data.time_index)),
    ];
    if let Some(t) = &data.txn_index {
        v.push((RemoteFile::TransactionIndex, Part::File(t)));
    }
    if !data.leader_epoch_checkpoint.is_empty() {
        v.push((
            RemoteFile::LeaderEpochCheckpoint,
            Part::Bytes(&data.leader_epoch_checkpoint),
        ));
    }
    if let Some(s) = &data.producer_snapshot {
        v.push((RemoteFile::ProducerSnapshot, Part::File(s)));
    }
    v
}

impl From<RemoteStorageError> for SegmentError {
    fn from(e: RemoteStorageError) -> Self {
        SegmentError::RemoteStorage {
            source: Box::new(e),
        }
    }
}
