//! Durability of a [`Log`]: flushing, closing with the clean-shutdown marker, and the
//! offline rule for failed syncs (`docs/kafka-behaviour.md#offline-rule`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Log, CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::segment::LogSegment;

/// Whether a [`Log`] is offline, and why (`docs/kafka-behaviour.md#offline-rule`): set
/// once, never cleared; a reopen makes a new `Log`. The reason is stored before the flag
/// is published (`Release`), so a refusal that sees the flag (`Acquire`) finds the reason.
#[derive(Debug, Default)]
pub(super) struct OfflineState {
    /// Set when the state on disk became unknown (a failed fsync, ...): the log refuses
    /// further writes until it is reopened (and recovered).
    offline: AtomicBool,
    /// Why the log went offline (the first reason given), for the refusals' errors.
    reason: parking_lot::Mutex<Option<String>>,
}

impl OfflineState {
    /// Whether the log is offline.
    pub(super) fn is_offline(&self) -> bool {
        self.offline.load(Ordering::Acquire)
    }

    /// Takes the log offline for `why` (kept, unless an earlier reason was).
    pub(super) fn go_offline(&self, why: String) {
        self.reason.lock().get_or_insert(why);
        self.offline.store(true, Ordering::Release);
    }

    /// Takes the log offline without a reason of its own (the refusals then name the
    /// earlier reason, if any, else a failed flush).
    pub(super) fn go_offline_unexplained(&self) {
        self.offline.store(true, Ordering::Release);
    }

    /// `Ok` while online; else [`SegmentError::Offline`] for the log in `dir`.
    pub(super) fn check_online(&self, dir: &Path) -> Result<()> {
        if self.is_offline() {
            let why = self
                .reason
                .lock()
                .clone()
                .unwrap_or_else(|| "a flush failed".into());
            return Err(SegmentError::Offline {
                path: dir.to_path_buf(),
                reason: why,
            });
        }
        Ok(())
    }
}

/// Whether `e` says that a file (or the directory) could not be **opened** — no
/// descriptor left (`EMFILE`, `ENFILE`), no such file, no permission — as opposed to a
/// failed fsync. `fsync(2)`, `fdatasync(2)` and `msync(2)` never fail with these, so such an
/// error means nothing was synced through a failing descriptor and no dirty page was
/// dropped: the fsyncgate rule (take the log offline) does not apply
/// (`docs/kafka-behaviour.md#offline-rule`).
fn is_open_failure(e: &SegmentError) -> bool {
    match e {
        SegmentError::Io { source, .. } => is_open_failure_io(source),
        SegmentError::Index(index_core::IndexError::Io { source, .. }) => {
            is_open_failure_io(source)
        }
        SegmentError::TxnIndex(index_txn::TxnIndexError::Io { source, .. }) => {
            is_open_failure_io(source)
        }
        _ => false,
    }
}

/// [`is_open_failure`] of an OS error.
pub(super) fn is_open_failure_io(source: &std::io::Error) -> bool {
    /// `ENFILE` and `EMFILE` (the same numbers on Linux, the BSDs and macOS).
    const NO_DESCRIPTOR: [i32; 2] = [23, 24];
    matches!(
        source.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
    ) || (cfg!(unix)
        && source
            .raw_os_error()
            .is_some_and(|n| NO_DESCRIPTOR.contains(&n)))
}

impl<F: BatchFormat> Log<F> {
    /// fsyncs every segment from the one holding the recovery point to the active one,
    /// then moves the recovery point to the log end offset and persists it (never before
    /// the data is on disk, field case B12).
    ///
    /// An I/O error while syncing takes the log **offline** ([`is_offline`](Self::is_offline)):
    /// after a failed fsync the kernel may have dropped the dirty pages and a retried fsync
    /// would succeed without them (the "fsyncgate" problem), so appends, rolls,
    /// truncations, flushes and [`close`](Self::close) fail from then on and the next open
    /// recovers from the last checkpoint. A failure to *open* a file or the directory for
    /// its fsync (`EMFILE`/`ENFILE`: no descriptor left, `ENOENT`, `EACCES`) is not a failed
    /// fsync: nothing was dropped, so the error is returned, the recovery point stays
    /// where it was, the log stays online and the next flush retries
    /// (`docs/kafka-behaviour.md#offline-rule`). A failed checkpoint write does not take the
    /// log offline either (the data is on disk; only the recovery point is not moved).
    ///
    /// # Errors
    /// I/O and index errors (the recovery point is then not moved);
    /// [`SegmentError::Offline`] if the log is offline.
    pub fn flush(&self) -> Result<()> {
        let _g = self.lock.lock();
        self.deleter.delete_expired()?;
        self.flush_locked()
    }

    /// fsyncs `seg` (its truncated `.log`, indexes and `.txnindex`) and the directory (the
    /// `.deleted` renames of the segments a truncation removed), for a checkpoint that is
    /// about to cover them. The offline rule of [`flush`](Self::flush) applies: a failed
    /// fsync takes the log offline, a failure to open a file does not.
    ///
    /// # Errors
    /// I/O and index errors.
    pub(super) fn sync_before_checkpoint(&self, seg: &LogSegment<F>) -> Result<()> {
        let synced = seg
            .flush()
            .and_then(|()| crate::fs::fsync_dir_with(&*self.fs, &self.dir));
        self.offline_unless_open_failure("the fsync of a truncated segment", synced)
    }

    /// The offline rule (`docs/kafka-behaviour.md#offline-rule`) applied to the outcome of
    /// a sync: `Ok` passes; a failure to **open** a file ([`is_open_failure`]: nothing was
    /// synced through a failing descriptor, so no dirty page was dropped) is returned with
    /// the log left online, and a later flush retries; any other failure takes the log
    /// offline, because the state on disk is unknown (fsyncgate). `what` names the sync
    /// in the log's offline reason.
    ///
    /// # Errors
    /// The error of `synced`, unchanged.
    pub(super) fn offline_unless_open_failure(&self, what: &str, synced: Result<()>) -> Result<()> {
        let Err(e) = synced else { return Ok(()) };
        if is_open_failure(&e) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "{what} could not open a file; the log stays online");
        } else {
            tracing::error!(dir = %self.dir.display(), error = %e, "{what} failed; the log is now offline");
            self.go_offline(format!("{what} failed"));
        }
        Err(e)
    }

    fn flush_locked(&self) -> Result<()> {
        self.check_online()?;
        let leo = self.log_end_offset();
        let rp = self.recovery_point();
        if crate::fs::mutated!(CheckpointBeforeData) {
            self.checkpoint(LOG_START_OFFSET_FILE, self.log_start_offset())?;
            self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        }
        let synced = (|| {
            for s in self.segments.values_range(rp, i64::MAX)? {
                s.flush()?;
            }
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)
        })();
        // On an open failure the recovery point is not moved, and a later flush retries.
        self.offline_unless_open_failure("a flush", synced)?;
        // Epochs an append could not checkpoint: durable before the recovery point moves
        // past their batches (a crash before this recovers them from the batches).
        self.write_pending_epochs()?;
        self.checkpoint(LOG_START_OFFSET_FILE, self.log_start_offset())?;
        self.checkpoint(RECOVERY_POINT_FILE, leo)?;
        self.recovery_point.store(leo, Ordering::Release);
        Ok(())
    }

    /// Flushes, writes the checkpoints, closes every segment and finally writes the
    /// clean-shutdown marker (fsyncing the directory). On any error no marker is written,
    /// so the next open recovers.
    ///
    /// # Errors
    /// The first failure.
    pub fn close(self) -> Result<()> {
        let _g = self.lock.lock();
        self.flush_locked()?;
        self.deleter.delete_all()?;
        self.snapshot_on_close()?;
        self.segments.close()?;
        let marker = self.dir.join(CLEAN_SHUTDOWN_FILE);
        self.fs
            .write_file(&marker, b"")
            .map_err(|e| SegmentError::io("create", &marker, e))?;
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)
    }

    /// Drops the log without flushing, trimming or writing the marker (a crash
    /// simulation, or Kafka's `closeHandlers` after a disk failure). Dropping a `Log`
    /// without calling [`close`](Self::close) has the same effect: the next
    /// [`open`](Self::open) recovers. Data already appended stays in the `.log` files
    /// (and the page cache) either way; only what was not written to disk by the OS
    /// before a machine crash can be lost.
    pub fn close_handlers(self) {
        self.segments.close_handlers();
    }
}
