//! [`SegmentDeleter`]: Kafka's asynchronous segment deletion (`LocalLog.deleteSegmentFiles`
//! with `file.delete.delay.ms`).
//!
//! A segment that leaves a [`Log`](crate::Log) (retention, `delete_records`, truncation)
//! is first removed from the segment map and renamed to the `.deleted` suffix; its files
//! are removed only once [`LogConfig::file_delete_delay_ms`](crate::LogConfig::file_delete_delay_ms)
//! has passed on the log's clock. Until then a reader that still holds the segment (an
//! `Arc<LogSegment>` taken from the map before the removal) keeps reading it: the `.log`
//! is read through its open file handle and the indexes through their mappings or their
//! renamed paths.
//!
//! There is no background thread: the log never acts on its own (its retention only runs
//! when called either). The due deletions run at the start of every maintenance call of
//! the log — [`delete_old_segments`](crate::Log::delete_old_segments),
//! [`delete_records`](crate::Log::delete_records), [`flush`](crate::Log::flush), the
//! truncations — and whenever the owner calls
//! [`Log::delete_expired_segment_files`](crate::Log::delete_expired_segment_files), e.g. from
//! a timer. [`Log::close`](crate::Log::close) removes every pending file at once, and
//! [`Log::open`](crate::Log::open) removes any `.deleted` file left by a crash (as Kafka's
//! loader does).

use std::sync::Arc;

use parking_lot::Mutex;

use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::segment::LogSegment;
use crate::time::Clock;

/// The segments renamed `.deleted`, each with the time (ms, on the log's clock) from which
/// its files may be removed.
#[derive(Debug)]
pub struct SegmentDeleter<F: BatchFormat> {
    pending: Mutex<Vec<(i64, Arc<LogSegment<F>>)>>,
    delay_ms: i64,
    clock: Clock,
}

impl<F: BatchFormat> SegmentDeleter<F> {
    /// A deleter that removes files `delay_ms` milliseconds (≥ 0) after they were scheduled.
    pub fn new(delay_ms: i64, clock: Clock) -> Self {
        SegmentDeleter {
            pending: Mutex::new(Vec::new()),
            delay_ms: delay_ms.max(0),
            clock,
        }
    }

    /// Schedules the removal of `segment`'s files (already renamed `.deleted`). With a delay
    /// of 0 the files are removed at once.
    ///
    /// # Errors
    /// As [`delete_expired`](Self::delete_expired) when the delay is 0.
    pub fn schedule(&self, segment: Arc<LogSegment<F>>) -> Result<()> {
        let due = self.clock.milliseconds().saturating_add(self.delay_ms);
        self.pending.lock().push((due, segment));
        if self.delay_ms == 0 {
            self.delete_expired()?;
        }
        Ok(())
    }

    /// Removes the files of every segment whose delay has passed; returns how many
    /// segments' files were removed.
    ///
    /// # Errors
    /// The first I/O failure; the segments that failed stay scheduled and are retried by
    /// the next call.
    pub fn delete_expired(&self) -> Result<usize> {
        let now = self.clock.milliseconds();
        self.delete_where(|due| due <= now)
    }

    /// Removes the files of every scheduled segment now, whatever their delay.
    ///
    /// # Errors
    /// As [`delete_expired`](Self::delete_expired).
    pub fn delete_all(&self) -> Result<usize> {
        self.delete_where(|_| true)
    }

    /// Number of segments whose files are waiting for their delay.
    pub fn pending(&self) -> usize {
        self.pending.lock().len()
    }

    fn delete_where(&self, due: impl Fn(i64) -> bool) -> Result<usize> {
        let ready: Vec<(i64, Arc<LogSegment<F>>)> = {
            let mut pending = self.pending.lock();
            let (ready, keep) = std::mem::take(&mut *pending)
                .into_iter()
                .partition(|(d, _)| due(*d));
            *pending = keep;
            ready
        };
        let mut first: Option<SegmentError> = None;
        let mut n = 0;
        let mut failed = Vec::new();
        for (d, seg) in ready {
            tracing::info!(segment = seg.base_offset(), "deleting segment files");
            match seg.delete_if_exists() {
                Ok(()) => n += 1,
                Err(e) => {
                    tracing::warn!(segment = seg.base_offset(), error = %e, "failed to delete segment files; will retry");
                    first.get_or_insert(e);
                    failed.push((d, seg));
                }
            }
        }
        self.pending.lock().extend(failed);
        first.map_or(Ok(n), Err)
    }
}
