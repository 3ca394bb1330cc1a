//! [`ObjectStoreStorage`]: a [`RemoteStorage`] over any `object_store::ObjectStore` (S3,
//! GCS, Azure, a local file system, memory), with the object names of Kafka's
//! `LocalTieredStorage` layout (`docs/kafka-behaviour.md#object-store-storage`). Behind
//! the non-default `object-store` feature.

use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::tier::metadata::{RemoteLogSegmentMetadata, TopicIdPartition};
use crate::tier::storage::{
    check_range, parts, IndexType, RemoteFile, RemoteStorage, RemoteStorageError,
};
use crate::tier::SegmentUpload;

/// A [`RemoteStorage`] over an [`ObjectStore`] (the embedder builds it, with the backend,
/// credentials and TLS it needs), one object per file of a segment, named as Kafka's
/// `LocalTieredStorage` names its files (`docs/kafka-behaviour.md#object-store-storage`):
///
/// ```text
/// <prefix>/<topic>-<partition>-<topic id>/<start offset, 20 digits>-<segment id><suffix>
/// ```
///
/// Each call is synchronous: it runs the store's futures to completion on a
/// single-threaded tokio runtime of its own, so it must not be called from inside an
/// async runtime's worker (use `spawn_blocking` there). A copy puts the `.log` last, so
/// its presence means the segment is whole, and deletes what it put when a put fails.
/// Whole files are put in one request (no multipart upload).
#[derive(Debug)]
pub struct ObjectStoreStorage {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    runtime: tokio::runtime::Runtime,
}

impl ObjectStoreStorage {
    /// The storage of segments under `prefix` (e.g. `"kafka-tiered-storage"`; empty for
    /// the bucket's root) of `store`.
    ///
    /// # Errors
    /// [`RemoteStorageError::Io`] if the tokio runtime cannot be built.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Self, RemoteStorageError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RemoteStorageError::Io {
                op: "start runtime",
                what: "object store".into(),
                source: e,
            })?;
        Ok(ObjectStoreStorage {
            store,
            prefix: ObjectPath::from(prefix),
            runtime,
        })
    }

    /// The object name of `file` of `metadata`'s segment.
    pub fn object_path(&self, metadata: &RemoteLogSegmentMetadata, file: RemoteFile) -> ObjectPath {
        self.partition_prefix(metadata.topic_id_partition())
            .join(file.file_name(metadata))
    }

    /// The prefix of a partition's objects: `<prefix>/<topic>-<partition>-<topic id>`.
    pub fn partition_prefix(&self, tp: &TopicIdPartition) -> ObjectPath {
        self.prefix
            .clone()
            .join(format!("{}-{}-{}", tp.topic, tp.partition, tp.topic_id))
    }

    fn err(op: &'static str, path: &ObjectPath, e: object_store::Error) -> RemoteStorageError {
        match e {
            object_store::Error::NotFound { .. } => RemoteStorageError::NotFound {
                what: path.to_string(),
            },
            e => RemoteStorageError::Backend {
                op,
                what: path.to_string(),
                source: Box::new(e),
            },
        }
    }

    fn copy(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: &SegmentUpload,
    ) -> Result<(), RemoteStorageError> {
        let mut parts = parts(data);
        // The `.log` is put last: its presence means the segment is whole.
        parts.rotate_left(1);
        for (file, part) in &parts {
            let path = self.object_path(metadata, *file);
            let mut bytes = Vec::new();
            part.write_to(&mut bytes)
                .map_err(|e| RemoteStorageError::io("read", file.suffix(), e))?;
            self.runtime
                .block_on(self.store.put(&path, PutPayload::from(bytes)))
                .map_err(|e| Self::err("put", &path, e))?;
        }
        Ok(())
    }
}

impl RemoteStorage for ObjectStoreStorage {
    fn copy_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: &SegmentUpload,
    ) -> Result<Option<Vec<u8>>, RemoteStorageError> {
        if let Err(e) = self.copy(metadata, data) {
            let _ = self.delete_log_segment_data(metadata);
            return Err(e);
        }
        Ok(None)
    }

    fn fetch_log_segment(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        start_position: u64,
        end_position: Option<u64>,
    ) -> Result<Vec<u8>, RemoteStorageError> {
        let path = self.object_path(metadata, RemoteFile::Segment);
        let meta = self
            .runtime
            .block_on(self.store.head(&path))
            .map_err(|e| Self::err("head", &path, e))?;
        let (start, stop) = check_range(metadata, start_position, end_position, meta.size)?;
        if start == stop {
            return Ok(Vec::new());
        }
        let bytes = self
            .runtime
            .block_on(self.store.get_range(&path, start..stop))
            .map_err(|e| Self::err("get", &path, e))?;
        Ok(bytes.to_vec())
    }

    fn fetch_index(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        index_type: IndexType,
    ) -> Result<Vec<u8>, RemoteStorageError> {
        let path = self.object_path(metadata, index_type.file());
        let bytes = self
            .runtime
            .block_on(async { self.store.get(&path).await?.bytes().await })
            .map_err(|e| Self::err("get", &path, e))?;
        Ok(bytes.to_vec())
    }

    fn delete_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
    ) -> Result<(), RemoteStorageError> {
        for file in RemoteFile::ALL {
            let path = self.object_path(metadata, file);
            match self.runtime.block_on(self.store.delete(&path)) {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(Self::err("delete", &path, e)),
            }
        }
        Ok(())
    }
}
