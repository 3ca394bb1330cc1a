//! The load-time check of a segment's index files, deferred to their first load.
//!
//! The loader checks every segment before it trusts the clean-shutdown marker or the
//! recovery point for it (`crate::validate::check_loaded_segments`). For a small segment
//! that is not the last one, the `.log` alone is checked at the open (all of it: it is
//! no longer than the read-ahead the check gives its first batch), and the check of its
//! `.index` and `.timeindex` waits for the first time they are needed: with a cold page
//! cache, opening and reading those two files was most of an open's time
//! (docs/performance.md#deferred-index-check). Kafka checks neither at the open (its
//! loader trusts every segment below the recovery point, and its `LazyIndex` maps an
//! index on first use); here an index that fails the check is rebuilt from the `.log`
//! before anything reads it, as the eager check would have had it rebuilt, so no lookup
//! ever answers from it (docs/kafka-behaviour.md#deferred-index-check).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::recover::IndexRebuild;
use super::LogSegment;
use crate::diag as tracing;
use crate::error::Result;
use crate::format::BatchFormat;
use crate::scan::Scanner;

/// The check a deferred index check makes: `Err(reason)` if the segment's index files
/// disagree with its `.log` (the loader's, `crate::validate::check_segment_indexes`).
pub(crate) type CheckIndexes<F> = fn(&LogSegment<F>) -> std::result::Result<(), String>;

/// What a pending check makes, and what a rebuild is counted in.
struct Pending<F: BatchFormat> {
    check: CheckIndexes<F>,
    /// The log's `LogStats::indexes_rebuilt`.
    rebuilt: Arc<AtomicU64>,
}

/// Whether a segment's index check is still to be made, and how.
pub(crate) struct IndexCheck<F: BatchFormat> {
    /// Set while the check is pending: read without the lock on every index access.
    pending: AtomicBool,
    /// Held while the check runs, so that it runs once.
    state: Mutex<Option<Pending<F>>>,
}

impl<F: BatchFormat> Default for IndexCheck<F> {
    fn default() -> Self {
        IndexCheck {
            pending: AtomicBool::new(false),
            state: Mutex::new(None),
        }
    }
}

impl<F: BatchFormat> std::fmt::Debug for IndexCheck<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexCheck")
            .field("pending", &self.is_pending())
            .finish()
    }
}

impl<F: BatchFormat> IndexCheck<F> {
    /// Marks the check pending: `check` makes it, and a rebuild it leads to is counted in
    /// `rebuilt`.
    fn defer(&self, check: CheckIndexes<F>, rebuilt: Arc<AtomicU64>) {
        let mut g = self.state.lock();
        *g = Some(Pending { check, rebuilt });
        self.pending.store(true, Ordering::Release);
    }

    /// Drops a pending check: the caller rebuilds the indexes (recovery). The lock order
    /// is the segment's state, then this.
    pub(crate) fn clear(&self) {
        if self.pending.load(Ordering::Acquire) {
            let mut g = self.state.lock();
            *g = None;
            self.pending.store(false, Ordering::Release);
        }
    }

    /// Whether the check is still pending.
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }
}

impl<F: BatchFormat> LogSegment<F> {
    /// Defers the load-time check of this segment's index files to their first load:
    /// `check` makes it then, and a rebuild it leads to is counted in `rebuilt`. Its `.log`
    /// must have passed the check alone (`crate::loader_plan::segment_check_with` without
    /// index ends).
    pub(crate) fn defer_index_check(&self, check: CheckIndexes<F>, rebuilt: Arc<AtomicU64>) {
        self.index_check.defer(check, rebuilt);
    }

    /// Drops a pending index check of a segment about to be recovered (which rebuilds
    /// its indexes anyway): the loader's reads before the recovery then make no check,
    /// nor count a rebuild the recovery counts already.
    pub(crate) fn drop_index_check(&self) {
        self.index_check.clear();
    }

    /// Whether the load-time check of this segment's index files waits for their first
    /// load (the loader deferred it, and nothing has loaded them since).
    pub fn index_check_pending(&self) -> bool {
        self.index_check.is_pending()
    }

    /// Makes the deferred index check if it is pending (once, whichever thread gets
    /// here first; the others wait for it): the load-time check of both index files
    /// against the `.log`, and if it fails, both indexes rebuilt from the `.log`. Takes
    /// neither the segment's state nor the `.log`'s writer lock, so a caller may hold
    /// either.
    ///
    /// # Errors
    /// An index or I/O error of the rebuild; the check stays pending then.
    pub(crate) fn ensure_index_checked(&self) -> Result<()> {
        if !self.index_check.pending.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut g = self.index_check.state.lock();
        if !self.index_check.pending.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some(p) = g.as_ref() {
            if let Err(reason) = self.check_at_stable_paths(p.check) {
                tracing::warn!(segment = %self.log_path().display(), %reason, "index failed its deferred load check; rebuilding it from the log");
                self.rebuild_indexes()?;
                p.rebuilt.fetch_add(1, Ordering::Relaxed);
            }
        }
        *g = None;
        self.index_check.pending.store(false, Ordering::Release);
        Ok(())
    }

    /// Runs `check` until the index files' paths are the same after it as before: a
    /// rename landing during it (a deletion's `.deleted`, a swap, a moved directory)
    /// makes it find no file under the old name, which it takes for an empty index and
    /// passes, and the renamed file would then be mapped unchecked. A rename takes the
    /// lazy index's lock around both the file's rename and the path's update, so an
    /// unchanged path means the files read were the segment's own.
    ///
    /// Both files existed at the open (the loader recovers a segment without its
    /// `.index` and creates a missing `.timeindex`), so one missing now was moved or
    /// deleted under the check (a directory moved before the paths are updated, say):
    /// that fails the check, and the rebuild then maps the file where the paths say, or
    /// fails and leaves the check pending, instead of a later load mapping the moved file
    /// unchecked.
    fn check_at_stable_paths(&self, check: CheckIndexes<F>) -> std::result::Result<(), String> {
        loop {
            let before = (self.offset_index.file(), self.time_index.file());
            let r = check(self);
            let after = (self.offset_index.file(), self.time_index.file());
            if before == after {
                r?;
                return match [&after.0, &after.1].into_iter().find(|p| !p.exists()) {
                    Some(p) => Err(format!("{} is missing", p.display())),
                    None => Ok(()),
                };
            }
        }
    }

    /// Rebuilds both indexes from the `.log`, as [`recover`](Self::recover) would, over
    /// the batches it would keep; unlike it, it changes nothing else: not the `.log` (a
    /// batch it would truncate ends the rebuild, and reads meet it as damaged data), not
    /// the transaction index, the producer state or the segment's largest timestamp.
    fn rebuild_indexes(&self) -> Result<()> {
        let (oi, ti) = self.reset_indexes()?;
        let mut rebuilt = IndexRebuild::new(self.base_offset, self.index_interval_bytes);
        let mut prev_last = None;
        let mut sc = Scanner::<F>::new(&self.log, 0);
        while let Some((info, bytes)) = sc.next_batch()? {
            if self.recovery_verdict(&info, bytes, prev_last)?.is_none() {
                break;
            }
            rebuilt.add(&oi, &ti, &info)?;
            prev_last = Some(info.last_offset);
        }
        self.finish_index_rebuild(&oi, &ti, &rebuilt)?;
        Ok(())
    }
}
