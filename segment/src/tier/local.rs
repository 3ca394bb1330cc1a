//! [`LocalTieredStorage`]: a [`RemoteStorage`] in a local directory laid out exactly as
//! Kafka 4.4's `LocalTieredStorage` test fixture lays it out
//! (`docs/kafka-behaviour.md#local-tiered-storage`).

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::fs::{real, FsRef, OpenMode};
use crate::pio::FileExt;
use crate::tier::metadata::{RemoteLogSegmentMetadata, TopicIdPartition};
use crate::tier::storage::{
    check_range, parts, IndexType, RemoteFile, RemoteStorage, RemoteStorageError,
};
use crate::tier::SegmentUpload;

/// The directory Kafka's `LocalTieredStorage` creates under its configured `dir`.
pub const ROOT_STORAGE_DIR_NAME: &str = "kafka-tiered-storage";

/// A [`RemoteStorage`] in a local directory, in Kafka 4.4's `LocalTieredStorage` layout
/// (`docs/kafka-behaviour.md#local-tiered-storage`):
///
/// ```text
/// <dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/
///     <start offset, 20 digits>-<segment id>.log
///     ….index  ….timeindex  ….txnindex (when any)  ….leader_epoch_checkpoint  ….snapshot
/// ```
///
/// ids printed as Kafka prints a `Uuid` (22 characters of URL-safe base64). A broker
/// configured with `remote.log.storage.local.dir=<dir>` would find these files where it
/// writes its own.
///
/// Unlike Kafka's fixture (which copies in place), each file is written to a temporary
/// name, fsynced and renamed, the `.log` last, and the directory fsynced at the end, all
/// through the crate's [file-system seam](crate::fs): a reader that finds the `.log`
/// finds the complete fileset, and a crash leaves at most a `*.tmp` file (a retry uses a
/// new segment id, as Kafka's contract asks).
#[derive(Debug, Clone)]
pub struct LocalTieredStorage {
    root: PathBuf,
    fs: FsRef,
}

impl LocalTieredStorage {
    /// The storage under `dir` (Kafka's `remote.log.storage.local.dir`): creates
    /// `dir/kafka-tiered-storage` when missing, and keeps what it holds otherwise (Kafka
    /// warns then that the data may be stale).
    ///
    /// # Errors
    /// [`RemoteStorageError::Io`] if the directory cannot be created.
    pub fn open(dir: &Path) -> Result<Self, RemoteStorageError> {
        Self::open_with(dir, real())
    }

    /// [`open`](Self::open) with the file-system seam `fs` for every write, rename,
    /// deletion and directory fsync.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with(dir: &Path, fs: FsRef) -> Result<Self, RemoteStorageError> {
        let root = dir.join(ROOT_STORAGE_DIR_NAME);
        fs::create_dir_all(&root)
            .map_err(|e| RemoteStorageError::io("create dir", root.display(), e))?;
        Ok(LocalTieredStorage { root, fs })
    }

    /// `<dir>/kafka-tiered-storage`.
    pub fn storage_directory(&self) -> &Path {
        &self.root
    }

    /// The directory of a partition: `<topic>-<partition>-<topic id>` (Kafka's
    /// `RemoteTopicPartitionDirectory`).
    pub fn partition_directory(&self, tp: &TopicIdPartition) -> PathBuf {
        self.root
            .join(format!("{}-{}-{}", tp.topic, tp.partition, tp.topic_id))
    }

    /// Where `file` of `metadata`'s segment is stored.
    pub fn file_path(&self, metadata: &RemoteLogSegmentMetadata, file: RemoteFile) -> PathBuf {
        self.partition_directory(metadata.topic_id_partition())
            .join(file.file_name(metadata))
    }

    /// Deletes a partition's directory and every file in it (Kafka's
    /// `LocalTieredStorage.deletePartition`). Idempotent.
    ///
    /// # Errors
    /// [`RemoteStorageError::Io`].
    pub fn delete_partition(&self, tp: &TopicIdPartition) -> Result<(), RemoteStorageError> {
        let dir = self.partition_directory(tp);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(RemoteStorageError::io("list", dir.display(), e)),
        };
        for entry in entries {
            let p = entry
                .map_err(|e| RemoteStorageError::io("list", dir.display(), e))?
                .path();
            self.remove(&p)?;
        }
        fs::remove_dir(&dir).map_err(|e| RemoteStorageError::io("delete", dir.display(), e))?;
        self.sync_dir(&self.root)
    }

    fn remove(&self, p: &Path) -> Result<(), RemoteStorageError> {
        match self.fs.remove_file(p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(RemoteStorageError::Io {
                op: "delete",
                what: p.display().to_string(),
                source: e,
            }),
        }
    }

    fn sync_dir(&self, dir: &Path) -> Result<(), RemoteStorageError> {
        self.fs.sync_dir(dir).map_err(|e| RemoteStorageError::Io {
            op: "fsync dir",
            what: dir.display().to_string(),
            source: e,
        })
    }

    /// Writes `part` to `path` through a temporary file, fsynced, then renamed.
    fn write_file(
        &self,
        path: &Path,
        part: &crate::tier::storage::Part<'_>,
    ) -> Result<(), RemoteStorageError> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        let tmp = path.with_file_name(name);
        let io_err = |op, e| RemoteStorageError::Io {
            op,
            what: tmp.display().to_string(),
            source: e,
        };
        let file = self
            .fs
            .open_file(&tmp, OpenMode::Create)
            .and_then(|f| self.fs.set_len(&tmp, &f, 0).map(|()| f))
            .map_err(|e| io_err("create", e))?;
        let mut w = BufWriter::with_capacity(64 * 1024, &file);
        let written = part
            .write_to(&mut w)
            .and_then(|_| w.flush())
            .map_err(|e| io_err("write", e));
        drop(w);
        let synced = written.and_then(|()| {
            self.fs
                .sync_data(&tmp, &file)
                .map_err(|e| io_err("fsync", e))
        });
        if let Err(e) = synced {
            let _ = self.fs.remove_file(&tmp);
            return Err(e);
        }
        self.fs.rename(&tmp, path).map_err(|e| {
            let _ = self.fs.remove_file(&tmp);
            io_err("rename", e)
        })
    }

    fn copy(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: &SegmentUpload,
    ) -> Result<(), RemoteStorageError> {
        let dir = self.partition_directory(metadata.topic_id_partition());
        if !dir.exists() {
            fs::create_dir_all(&dir)
                .map_err(|e| RemoteStorageError::io("create dir", dir.display(), e))?;
            self.sync_dir(&self.root)?;
        }
        let mut parts = parts(data);
        // The `.log` is published last: its presence means the fileset is whole.
        parts.rotate_left(1);
        for (file, part) in &parts {
            self.write_file(&dir.join(file.file_name(metadata)), part)?;
        }
        self.sync_dir(&dir)
    }

    fn read_range(path: &Path, start: u64, stop: u64) -> Result<Vec<u8>, RemoteStorageError> {
        let f =
            fs::File::open(path).map_err(|e| RemoteStorageError::io("open", path.display(), e))?;
        let len =
            usize::try_from(stop - start).map_err(|_| RemoteStorageError::InvalidArgument {
                reason: format!("range {start}..{stop} larger than memory"),
            })?;
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, start)
            .map_err(|e| RemoteStorageError::io("read", path.display(), e))?;
        Ok(buf)
    }
}

impl RemoteStorage for LocalTieredStorage {
    fn copy_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        data: &SegmentUpload,
    ) -> Result<Option<Vec<u8>>, RemoteStorageError> {
        if let Err(e) = self.copy(metadata, data) {
            // Kafka's fixture deletes the fileset of a failed copy.
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
        let path = self.file_path(metadata, RemoteFile::Segment);
        let len = fs::metadata(&path)
            .map_err(|e| RemoteStorageError::io("stat", path.display(), e))?
            .len();
        let (start, stop) = check_range(metadata, start_position, end_position, len)?;
        Self::read_range(&path, start, stop)
    }

    fn fetch_index(
        &self,
        metadata: &RemoteLogSegmentMetadata,
        index_type: IndexType,
    ) -> Result<Vec<u8>, RemoteStorageError> {
        let path = self.file_path(metadata, index_type.file());
        fs::read(&path).map_err(|e| RemoteStorageError::io("read", path.display(), e))
    }

    fn delete_log_segment_data(
        &self,
        metadata: &RemoteLogSegmentMetadata,
    ) -> Result<(), RemoteStorageError> {
        let dir = self.partition_directory(metadata.topic_id_partition());
        if !dir.exists() {
            return Ok(());
        }
        let paths = RemoteFile::ALL.map(|f| dir.join(f.file_name(metadata)));
        // Kafka's `deleteFilesOnly`: nothing is deleted when one of the names is a
        // directory.
        if let Some(p) = paths.iter().find(|p| p.is_dir()) {
            return Err(RemoteStorageError::InvalidArgument {
                reason: format!("{} is a directory, not deleted", p.display()),
            });
        }
        // The `.log` first: a fileset without it is no longer served.
        for p in &paths {
            self.remove(p)?;
        }
        self.sync_dir(&dir)
    }
}
