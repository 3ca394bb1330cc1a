//! The tier seam's types (KIP-405): what Kafka's `RemoteLogManager.copyLogSegment`
//! uploads with a sealed segment, as [`Log::tierable_segments`](crate::Log::tierable_segments)
//! hands it out (`docs/kafka-behaviour.md#tierable-segments`).

use std::fs::File;

mod cache;
pub mod events;
mod local;
pub mod metadata;
#[cfg(feature = "object-store")]
mod object;
mod remote;
mod storage;
pub use cache::{CacheStats, RemoteIndexCache, SegmentIdHasher};
pub use events::{DeletionReason, TierEvent, TierListener};
pub use local::{LocalTieredStorage, ROOT_STORAGE_DIR_NAME};
pub use metadata::{
    RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState, TopicIdPartition, Uuid,
};
#[cfg(feature = "object-store")]
pub use object::ObjectStoreStorage;
pub use remote::{
    read_file, read_remote, read_remote_kafka, RemoteFetch, RemoteIndexes, RemoteSegment,
};
pub use storage::{
    fetch_remote_indexes, fetch_remote_segment, IndexType, RemoteFile, RemoteStorage,
    RemoteStorageError,
};

use crate::region::FileRegion;

/// One sealed segment that may be uploaded, with everything Kafka's
/// `RemoteLogManager.copyLogSegment` uploads with it
/// (`docs/kafka-behaviour.md#tierable-segments`).
///
/// The handles are open files: they stay readable while retention or
/// [`Log::delete_local_through`](crate::Log::delete_local_through) renames the segment's
/// files `.deleted` and removes them (the space is freed when the last handle drops), as a
/// [`FileRegion`] of [`Log::read_region`](crate::Log::read_region) does.
#[derive(Debug)]
#[non_exhaustive]
pub struct SegmentUpload {
    /// The segment's base offset (the remote segment's start offset).
    pub base_offset: i64,
    /// The segment's end offset, inclusive: the next segment's base offset − 1 (Kafka's
    /// `RemoteLogSegmentMetadata.endOffset`).
    pub end_offset: i64,
    /// The largest timestamp of the segment, ms (Kafka's `LogSegment.largestTimestamp`:
    /// the largest record timestamp, else the file's last-modified time).
    pub max_timestamp: i64,
    /// The `.log`'s size in bytes.
    pub size: u64,
    /// The `.log`'s last-modified time, ms since the epoch.
    pub last_modified_ms: i64,
    /// The whole `.log`: `[0, size)`.
    pub log: FileRegion,
    /// The `.index` file, open for reading (trimmed to its entries: the segment is sealed).
    pub offset_index: File,
    /// The `.timeindex` file, open for reading.
    pub time_index: File,
    /// The `.txnindex` file, if the segment has aborted transactions (Kafka uploads it
    /// only when it is not empty).
    pub txn_index: Option<File>,
    /// The producer-state snapshot at the next segment's base offset
    /// (`<next base>.snapshot`), `None` when there is none (retention or recovery
    /// removed it); Kafka's `copyLogSegment` then uploads none either.
    pub producer_snapshot: Option<File>,
    /// The leader-epoch entries `(epoch, start offset)` of the segment's offsets
    /// (Kafka's `epochEntriesInRange(base, next base)`: the first one starts at the base
    /// offset when an earlier epoch covers it).
    pub segment_leader_epochs: Vec<(i32, i64)>,
    /// The leader-epoch cache up to the segment's end, in `leader-epoch-checkpoint`
    /// format (Kafka's `epochEntriesInRange(−1, next base)` as `epochEntriesAsByteBuffer`
    /// writes it): the uploaded leader-epoch index.
    pub leader_epoch_checkpoint: Vec<u8>,
}
