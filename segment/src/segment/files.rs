//! The files of a [`LogSegment`]: index unloading, flush, close, deletion, suffix
//! renames and file times (Kafka's `flush`, `close`, `closeHandlers`, `deleteIfExists`,
//! `changeFileSuffixes`, `largestTimestamp`, `lastModified`).

use std::path::Path;
use std::sync::atomic::Ordering;

use super::LogSegment;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::fs::FsOp;
use crate::lazy::LazyIndex;
use crate::names;

impl<F: BatchFormat> LogSegment<F> {
    /// Trims both indexes to their entries and drops this segment's mappings of them (the
    /// next lookup maps them again); a no-op for an index that is not loaded. Also closes
    /// the transaction index's appender handle (reads and a later [`flush`](Self::flush)
    /// open the file for the call), so an inactive segment holds one descriptor only, its
    /// `.log`'s (`docs/kafka-behaviour.md#file-descriptors`). For inactive segments (see
    /// [`LazyIndex::unload`]). Called by
    /// [`on_become_inactive_segment`](Self::on_become_inactive_segment).
    ///
    /// # Errors
    /// Index errors from trimming; a refusal of the seam.
    pub fn unload_indexes(&self) -> Result<()> {
        if self.offset_index.is_loaded() {
            self.before(FsOp::IndexTrim, &self.offset_index.file())?;
            self.offset_index.unload()?;
            self.after(FsOp::IndexTrim, &self.offset_index.file());
        }
        if self.time_index.is_loaded() {
            self.before(FsOp::IndexTrim, &self.time_index.file())?;
            self.time_index.unload()?;
            self.after(FsOp::IndexTrim, &self.time_index.file());
        }
        self.txn_index.close();
        Ok(())
    }

    /// fsyncs the `.log`, both indexes (materialising them, as Kafka) and the transaction
    /// index. A no-op on a deleted segment ([`is_deleted`](Self::is_deleted)): its data is
    /// going away, and a reader or flusher that still holds it must not fail.
    ///
    /// # Errors
    /// I/O and index errors.
    pub fn flush(&self) -> Result<()> {
        if self.is_deleted() {
            return Ok(());
        }
        self.log.flush()?;
        self.flush_index(&self.offset_index)?;
        self.flush_index(&self.time_index)?;
        self.before(FsOp::IndexFlush, &self.txn_index.path())?;
        self.txn_index.flush()?;
        self.after(FsOp::IndexFlush, &self.txn_index.path());
        Ok(())
    }

    /// Flushes one index: `msync` if it is mapped; an unloaded index whose file exists
    /// (an inactive segment's, see [`unload_indexes`](Self::unload_indexes)) is fsynced
    /// through a plain file handle instead of being mapped again; a missing one is
    /// materialised, as Kafka does.
    fn flush_index<T: index_core::TypedIndex>(&self, lazy: &LazyIndex<T>) -> Result<()> {
        let path = lazy.file();
        self.before(FsOp::IndexFlush, &path)?;
        if let Some(ix) = lazy.get_if_loaded() {
            ix.index_file().flush()?;
            self.after(FsOp::IndexFlush, &path);
            return Ok(());
        }
        match self.fs.open_file(&path, crate::fs::OpenMode::Read) {
            Ok(f) => f
                .sync_data()
                .map_err(|e| SegmentError::io("fsync", &path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(lazy.get()?.index_file().flush()?)
            }
            Err(e) => Err(SegmentError::io("open", &path, e)),
        }?;
        self.after(FsOp::IndexFlush, &path);
        Ok(())
    }

    /// Kafka 3.x's `close`: appends the final time-index entry if the max timestamp is
    /// known, then closes (trim + unmap) the indexes if loaded, trims and flushes the
    /// `.log`, and closes the transaction index. Every step is attempted; the first error
    /// is returned. Kafka 4.4 no longer appends the final entry, which hides the active
    /// segment's unindexed tail from timestamp searches after a restart; we keep it
    /// (`docs/kafka-behaviour.md#close-no-time-entry`).
    ///
    /// Unlike Kafka, every trim is made durable before `close` returns, so a clean-shutdown
    /// marker written after it never covers an untrimmed file: an index a close trimmed is
    /// fsynced after its trim (KAFKA-20979: Kafka's trim at shutdown is never synced), and
    /// the `.log` is trimmed **before** its final fsync (KAFKA-21000: Kafka's
    /// `FileRecords.close` flushes first, so with `preallocate` a clean shutdown can keep
    /// the zero-filled tail). See `docs/kafka-behaviour.md#durable-trims`.
    ///
    /// # Errors
    /// The first failure.
    pub fn close(&self) -> Result<()> {
        let mut first: Option<SegmentError> = None;
        let mut keep = |r: Result<()>| {
            if let Err(e) = r {
                tracing::warn!(error = %e, "error while closing segment");
                first.get_or_insert(e);
            }
        };
        let max = self.state.lock().max_timestamp_and_offset;
        if let Some(m) = max {
            // The final entry is ours alone (Kafka 4.4's close writes none, Kafka 3.x's
            // swallowed its failure: docs/kafka-behaviour.md#close-no-time-entry). One the
            // index's rules refuse (a largest timestamp recomputed by a truncation can lie
            // at an offset below the last entry's, as Kafka's `loadLargestTimestamp` leaves
            // it) is left out with a warning, and the close goes on.
            match self.time_index() {
                Ok(ti) => match ti.maybe_append_final(m.timestamp, m.offset) {
                    Ok(_) => {}
                    Err(
                        e @ (index_core::IndexError::InvalidOffset { .. }
                        | index_core::IndexError::InvalidTimestamp { .. }
                        | index_core::IndexError::IndexFull { .. }),
                    ) => {
                        tracing::warn!(error = %e, "final time-index entry left out at close");
                    }
                    Err(e) => keep(Err(e.into())),
                },
                Err(e) => keep(Err(e)),
            }
        }
        let loaded = self.offset_index.is_loaded();
        if loaded {
            keep(self.before(FsOp::IndexTrim, &self.offset_index.file()));
        }
        let trimmed = self.offset_index.close();
        if trimmed.is_ok() && loaded {
            self.after(FsOp::IndexTrim, &self.offset_index.file());
            keep(self.sync_trimmed_index(&self.offset_index.file()));
        }
        keep(trimmed.map_err(Into::into));
        let loaded = self.time_index.is_loaded();
        if loaded {
            keep(self.before(FsOp::IndexTrim, &self.time_index.file()));
        }
        let trimmed = self.time_index.close();
        if trimmed.is_ok() && loaded {
            self.after(FsOp::IndexTrim, &self.time_index.file());
            keep(self.sync_trimmed_index(&self.time_index.file()));
        }
        keep(trimmed.map_err(Into::into));
        // `LogFile::close` trims before its fsync, so that the fsync covers the new length
        // (KAFKA-21000).
        keep(self.log.close());
        self.txn_index.close();
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// fsyncs an index file just trimmed by [`close`](Self::close) (through a plain
    /// handle: the index is unmapped), so that its trimmed length is durable before the
    /// clean-shutdown marker. Kafka does not (KAFKA-20979): after a power cut, a log
    /// marked clean can keep an untrimmed, zero-filled index.
    fn sync_trimmed_index(&self, path: &Path) -> Result<()> {
        if crate::fs::mutated!(NoTrimFsync) {
            return Ok(());
        }
        self.before(FsOp::IndexFlush, path)?;
        match self.fs.open_file(path, crate::fs::OpenMode::Read) {
            Ok(f) => f
                .sync_data()
                .map_err(|e| SegmentError::io("fsync", path, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(SegmentError::io("open", path, e)),
        }
        self.after(FsOp::IndexFlush, path);
        Ok(())
    }

    /// Unmaps the indexes without flushing or trimming (Kafka's `closeHandlers`, used
    /// after a disk failure or a crash simulation).
    pub fn close_handlers(&self) {
        self.offset_index.close_handler();
        self.time_index.close_handler();
        self.txn_index.close();
    }

    /// Deletes all four files; every deletion is attempted and the first error returned.
    ///
    /// # Errors
    /// The first I/O failure (missing files are not errors).
    pub fn delete_if_exists(&self) -> Result<()> {
        self.deleted.store(true, Ordering::Release);
        let mut first: Option<SegmentError> = None;
        if let Err(e) = self.log.delete_if_exists() {
            first.get_or_insert(e);
        }
        for p in [self.offset_index.file(), self.time_index.file()] {
            if let Err(e) = self.before(FsOp::IndexRemove, &p) {
                first.get_or_insert(e);
            }
        }
        let oi = self.offset_index.file();
        match self.offset_index.delete_if_exists() {
            Ok(_) => self.after(FsOp::IndexRemove, &oi),
            Err(e) => {
                first.get_or_insert(e.into());
            }
        }
        let ti = self.time_index.file();
        match self.time_index.delete_if_exists() {
            Ok(_) => self.after(FsOp::IndexRemove, &ti),
            Err(e) => {
                first.get_or_insert(e.into());
            }
        }
        let tx = self.txn_index.path();
        match self
            .before(FsOp::IndexRemove, &tx)
            .and_then(|()| Ok(self.txn_index.delete_if_exists()?))
        {
            Ok(_) => self.after(FsOp::IndexRemove, &tx),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `true` once the segment was renamed to the `.deleted` suffix
    /// ([`change_file_suffixes`](Self::change_file_suffixes)) or its files removed
    /// ([`delete_if_exists`](Self::delete_if_exists)): it has left its log, and
    /// [`flush`](Self::flush) does nothing. Reads keep working until the files are removed.
    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::Acquire)
    }

    /// `true` iff none of the four files exists on disk (Kafka's `deleted()`). Unlike
    /// [`is_deleted`](Self::is_deleted), which says the segment has left its log, this
    /// asks the file system, so a `.deleted` segment whose removal is still pending
    /// answers `false`.
    pub fn files_removed(&self) -> bool {
        !self.log.path().exists()
            && !self.offset_index.file().exists()
            && !self.time_index.file().exists()
            && !self.txn_index.path().exists()
    }

    /// Renames all four files from suffix `old` to suffix `new` (e.g. `""` → `".deleted"`);
    /// index files that do not exist are not created.
    ///
    /// # Errors
    /// [`SegmentError::FileName`] if a name does not end with `old`; I/O.
    pub fn change_file_suffixes(&self, old: &str, new: &str) -> Result<()> {
        let log_to = names::replace_suffix(&self.log.path(), old, new)?;
        let oi_to = names::replace_suffix(&self.offset_index.file(), old, new)?;
        let ti_to = names::replace_suffix(&self.time_index.file(), old, new)?;
        let tx_to = names::replace_suffix(&self.txn_index.path(), old, new)?;
        self.log.rename_to(&log_to)?;
        if new == names::DELETED_FILE_SUFFIX {
            // The `.log` rename must be durable before any index rename: a power cut that
            // kept a `.txnindex.deleted` beside a live `.log` would bring the segment back
            // without its aborted transactions (docs/kafka-behaviour.md#crash-persistence-model).
            if let Some(dir) = log_to.parent() {
                crate::fs::fsync_dir_with(&*self.fs, dir)?;
            }
        }
        let from = self.offset_index.file();
        self.before(FsOp::IndexRename, &from)?;
        self.offset_index.rename_to(&oi_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&oi_to));
        let from = self.time_index.file();
        self.before(FsOp::IndexRename, &from)?;
        self.time_index.rename_to(&ti_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&ti_to));
        let from = self.txn_index.path();
        self.before(FsOp::IndexRename, &from)?;
        self.txn_index.rename_to(&tx_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&tx_to));
        if new == names::DELETED_FILE_SUFFIX {
            self.deleted.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// `true` iff all four file names end with `suffix`.
    pub fn has_suffix(&self, suffix: &str) -> bool {
        [
            self.log.path(),
            self.offset_index.file(),
            self.time_index.file(),
            self.txn_index.path(),
        ]
        .iter()
        .all(|p| names::file_name(p).ends_with(suffix))
    }

    /// Moves all four stored paths to `dir` (no I/O).
    pub fn update_parent_dir(&self, dir: &Path) {
        self.log.update_parent_dir(dir);
        self.offset_index.update_parent_dir(dir);
        self.time_index.update_parent_dir(dir);
        self.txn_index.update_parent_dir(dir);
    }

    /// The largest record timestamp (ms since epoch) if known, else the `.log` file's
    /// last-modified time (Kafka's `largestTimestamp`; field case B9).
    ///
    /// # Errors
    /// Index errors; I/O reading the mtime.
    pub fn largest_timestamp(&self) -> Result<i64> {
        let ts = self.max_timestamp_so_far()?;
        if ts >= 0 {
            Ok(ts)
        } else {
            self.log.last_modified()
        }
    }

    /// The largest record timestamp if ≥ 0 (Kafka's `largestRecordTimestamp`).
    ///
    /// # Errors
    /// Index errors.
    pub fn largest_record_timestamp(&self) -> Result<Option<i64>> {
        let ts = self.max_timestamp_so_far()?;
        Ok((ts >= 0).then_some(ts))
    }

    /// Last-modified time of the `.log`, ms since epoch.
    ///
    /// # Errors
    /// I/O.
    pub fn last_modified(&self) -> Result<i64> {
        self.log.last_modified()
    }

    /// Sets the last-modified time of the `.log` and of the index files that exist.
    ///
    /// # Errors
    /// I/O.
    pub fn set_last_modified(&self, ms: i64) -> Result<()> {
        crate::fs::set_last_modified_ms(&self.log.path(), ms)?;
        for p in [self.offset_index.file(), self.time_index.file()] {
            if p.exists() {
                crate::fs::set_last_modified_ms(&p, ms)?;
            }
        }
        Ok(())
    }
}
