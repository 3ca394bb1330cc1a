//! [`Cleaner`]: Kafka's `LogCleaner` and `LogCleanerManager` for the logs an embedder
//! registers: `log.cleaner.threads` threads, each cleaning the filthiest cleanable log,
//! the shared `cleaner-offset-checkpoint` of each log directory, the per-partition
//! cleaning states, uncleanable partitions, and retention of compacted logs
//! (`docs/kafka-behaviour.md#cleaner-manager`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::clean::CleanDriver;
use super::Log;
use crate::clean::{
    filthiest, read_cleaner_checkpoint, write_cleaner_checkpoint, CleanError, CleanSabotage,
    CleanerCheckpoints, CleanerConfig, CleaningStates, CompactionConfig, LogCleaningState,
    LogSummary, LogToClean, StateError, Throttler, TopicPartition, UncleanableReason,
    THROTTLE_CHECK_INTERVAL_MS,
};
use crate::diag as tracing;
use crate::error::SegmentError;
use crate::format::KafkaBatchFormat;

use super::clean::CleanerStats;

/// A registered log's `cleanup.policy` (it contains `compact`: only compacted logs are
/// registered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CleanupPolicy {
    /// `compact`: after each pass the cleaner thread deletes only the segments wholly
    /// below the log start offset ([`Log::delete_log_start_breached_segments`]).
    #[default]
    Compact,
    /// `compact,delete`: after each pass the cleaner thread also applies `retention.ms`
    /// and `retention.bytes` ([`Log::delete_old_segments`];
    /// `docs/kafka-behaviour.md#cleaner-compact-delete`).
    CompactDelete,
}

/// Why a [`Cleaner`] call was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CleanerError {
    /// A state transition Kafka refuses (a second abort of a running clean, a resume of a
    /// partition not paused).
    #[error(transparent)]
    State(#[from] StateError),
    /// A setting out of range, or a checkpoint that could not be read or written.
    #[error(transparent)]
    Clean(#[from] CleanError),
    /// The log's own operation failed.
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// No log is registered for the partition.
    #[error("no log registered for {0:?}")]
    NotRegistered(TopicPartition),
}

/// One registered log.
struct Registered {
    log: Arc<Log<KafkaBatchFormat>>,
    compaction: CompactionConfig,
    policy: CleanupPolicy,
    /// The log directory: the partition directory's parent, where the
    /// `cleaner-offset-checkpoint` is.
    log_dir: PathBuf,
}

/// A log chosen as a candidate by a pass.
struct Candidate {
    tp: TopicPartition,
    reg: Arc<Registered>,
    ltc: LogToClean,
}

struct Shared {
    /// The config each clean runs with (at least one thread's share).
    config: CleanerConfig,
    logs: Mutex<BTreeMap<TopicPartition, Arc<Registered>>>,
    states: CleaningStates,
    /// Serialises every read-modify-write of a `cleaner-offset-checkpoint` (taken after
    /// `states`' lock when both are).
    checkpoint_lock: Mutex<()>,
    shutdown: AtomicBool,
    /// Bumped by [`Cleaner::wake`]; a backoff sleep ends when it changes.
    wake: Mutex<u64>,
    wake_cv: Condvar,
    stats: Mutex<HashMap<TopicPartition, CleanerStats>>,
    cleans: AtomicU64,
    /// `log.cleaner.io.max.bytes.per.second`, shared by the threads.
    throttler: Throttler,
}

/// Kafka's log cleaner for the compacted logs an embedder registers (`LogCleaner` with
/// its `LogCleanerManager`; `docs/kafka-behaviour.md#cleaner-manager`).
///
/// [`Cleaner::new`] starts `log.cleaner.threads` threads (none when it is 0 or
/// `log.cleaner.enable` is false: then [`run_once`](Self::run_once) does a thread's pass
/// on the caller's thread). Each pass of a thread:
///
/// 1. plans every registered log that is idle and not uncleanable
///    ([`LogToClean::plan`] from its `cleaner-offset-checkpoint` entry, at the log's clock),
///    resetting an out-of-range checkpoint entry as Kafka does;
/// 2. chooses the filthiest cleanable one ([`filthiest`]: dirty ratio above
///    `min.cleanable.dirty.ratio`, or past `max.compaction.lag.ms`;
///    `docs/kafka-behaviour.md#cleaner-filthiest`), marks it
///    [`InProgress`](LogCleaningState::InProgress), cleans it ([`Log::clean`]'s steps) and
///    writes its new first dirty offset to the shared checkpoint of its log directory
///    (read-modify-write, atomic rename; not if the clean was aborted);
/// 3. runs retention of every idle registered log ([`CleanupPolicy`]);
/// 4. sleeps `log.cleaner.backoff.ms` if it cleaned nothing
///    (`docs/kafka-behaviour.md#cleaner-backoff`).
///
/// The threads' reads and writes share one throttle of
/// `log.cleaner.io.max.bytes.per.second` ([`Throttler`],
/// `docs/kafka-behaviour.md#cleaner-throttle`).
///
/// A clean that fails marks its partition uncleanable with the error
/// ([`uncleanable`](Self::uncleanable), `docs/kafka-behaviour.md#cleaner-uncleanable`):
/// no thread chooses it again while it stays registered; the other partitions go on
/// being cleaned. The log goes offline only where [`Log::clean`] takes it offline (a
/// failed fsync or structural change).
///
/// A clean holds its log's lock only to plan, swap a group in and write the checkpoint,
/// so appends go on meanwhile; a [`Log::truncate_to`], [`Log::delete_records`] or
/// retention that changes the segments it copies makes it drop that group and stop
/// (`docs/kafka-behaviour.md#cleaner-concurrency`; nothing is lost). Truncate through
/// [`truncate_to`](Self::truncate_to) (Kafka's `LogManager.truncateTo`: abort and pause,
/// truncate, lower the checkpoint, resume), or call [`abort_and_pause`](Self::abort_and_pause)
/// and [`resume`](Self::resume) around your own change. To close a log,
/// [`unregister`](Self::unregister) it first (the `Arc` is then the embedder's alone).
///
/// [`shutdown`](Self::shutdown) (or drop) stops the running cleans at their next window
/// and joins the threads.
pub struct Cleaner {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Cleaner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cleaner")
            .field("config", &self.shared.config)
            .field("threads", &self.threads.len())
            .finish_non_exhaustive()
    }
}

impl Cleaner {
    /// Starts the cleaner: `config.num_threads` threads named `kafka-log-cleaner-thread-N`
    /// (none when it is 0 or `config.enable` is false). Each thread's offset map and I/O
    /// buffer are its share of the totals ([`CleanerConfig::offset_map_capacity`]).
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`] and [`CleanError::OffsetMapTooSmall`] as
    /// [`CleanerConfig::offset_map_capacity`].
    pub fn new(config: CleanerConfig) -> Result<Self, CleanError> {
        let mut per_clean = config.clone();
        per_clean.num_threads = per_clean.num_threads.max(1);
        per_clean.offset_map_capacity()?;
        let shared = Arc::new(Shared {
            config: per_clean,
            logs: Mutex::new(BTreeMap::new()),
            states: CleaningStates::new(),
            checkpoint_lock: Mutex::new(()),
            shutdown: AtomicBool::new(false),
            wake: Mutex::new(0),
            wake_cv: Condvar::new(),
            stats: Mutex::new(HashMap::new()),
            cleans: AtomicU64::new(0),
            throttler: Throttler::new(config.io_max_bytes_per_second, THROTTLE_CHECK_INTERVAL_MS),
        });
        let n = if config.enable { config.num_threads } else { 0 };
        let mut threads = Vec::new();
        for i in 0..n {
            let s = shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("kafka-log-cleaner-thread-{i}"))
                .spawn(move || s.run())
                .map_err(|e| CleanError::Segment(SegmentError::io("spawn cleaner thread", "", e)));
            match t {
                Ok(t) => threads.push(t),
                Err(e) => {
                    let mut c = Cleaner { shared, threads };
                    c.stop();
                    return Err(e);
                }
            }
        }
        Ok(Cleaner { shared, threads })
    }

    /// Registers the compacted log of `tp` with its topic settings and policy; a
    /// partition registered again gets the new log and settings (a running clean of the
    /// old log finishes). The log's checkpoint entry is in the `cleaner-offset-checkpoint`
    /// of its directory's parent.
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`] from [`CompactionConfig::validate`].
    pub fn register(
        &self,
        tp: TopicPartition,
        log: Arc<Log<KafkaBatchFormat>>,
        compaction: CompactionConfig,
        policy: CleanupPolicy,
    ) -> Result<(), CleanError> {
        compaction.validate()?;
        let log_dir = log
            .dir
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        self.shared.logs.lock().insert(
            tp,
            Arc::new(Registered {
                log,
                compaction,
                policy,
                log_dir,
            }),
        );
        self.wake();
        Ok(())
    }

    /// Removes `tp` (Kafka's `abortCleaning` before a partition leaves the broker): its
    /// running clean is aborted and waited for, then the partition is forgotten (its
    /// state and uncleanable mark; its checkpoint entry stays). Returns its log.
    ///
    /// # Errors
    /// [`StateError::CannotAbort`] when another caller is aborting its clean.
    pub fn unregister(
        &self,
        tp: &TopicPartition,
    ) -> Result<Option<Arc<Log<KafkaBatchFormat>>>, CleanerError> {
        self.shared.states.abort_and_pause(tp)?;
        let reg = self.shared.logs.lock().remove(tp);
        self.shared.states.forget(tp);
        self.shared.stats.lock().remove(tp);
        Ok(reg.map(|r| r.log.clone()))
    }

    /// Kafka's `abortAndPauseCleaning` (`docs/kafka-behaviour.md#cleaner-states`): no
    /// thread cleans `tp` (or runs its retention) until as many [`resume`](Self::resume)s;
    /// a running clean is stopped at its next read window and this call waits for it
    /// (that clean writes no checkpoint). Pauses nest. `tp` need not be registered.
    ///
    /// # Errors
    /// [`StateError::CannotAbort`] when another caller is aborting its clean.
    pub fn abort_and_pause(&self, tp: &TopicPartition) -> Result<(), StateError> {
        self.shared.states.abort_and_pause(tp)
    }

    /// Kafka's `resumeCleaning`: undoes one [`abort_and_pause`](Self::abort_and_pause).
    ///
    /// # Errors
    /// [`StateError::NotPaused`] when `tp` is not paused.
    pub fn resume(&self, tp: &TopicPartition) -> Result<(), StateError> {
        self.shared.states.resume(tp)?;
        self.wake();
        Ok(())
    }

    /// Kafka's `abortCleaning`: [`abort_and_pause`](Self::abort_and_pause) then
    /// [`resume`](Self::resume).
    ///
    /// # Errors
    /// As both.
    pub fn abort(&self, tp: &TopicPartition) -> Result<(), StateError> {
        self.abort_and_pause(tp)?;
        self.resume(tp)
    }

    /// `tp`'s cleaning state; `None` when idle.
    pub fn state(&self, tp: &TopicPartition) -> Option<LogCleaningState> {
        self.shared.states.state(tp)
    }

    /// The uncleanable partitions, each with its log directory and reason.
    pub fn uncleanable(&self) -> Vec<(PathBuf, TopicPartition, UncleanableReason)> {
        self.shared.states.uncleanable()
    }

    /// The stats of `tp`'s last completed clean.
    pub fn last_stats(&self, tp: &TopicPartition) -> Option<CleanerStats> {
        self.shared.stats.lock().get(tp).cloned()
    }

    /// Cleans completed since the start (aborted and failed ones not counted).
    pub fn cleans_completed(&self) -> u64 {
        self.shared.cleans.load(Ordering::Relaxed)
    }

    /// Ends the backoff sleep of every thread now (for an embedder that knows a log got
    /// dirty; Kafka's threads only wake up after `log.cleaner.backoff.ms`).
    pub fn wake(&self) {
        *self.shared.wake.lock() += 1;
        self.shared.wake_cv.notify_all();
    }

    /// One thread's pass on the caller's thread (steps 1 to 3 of [`Cleaner`], no
    /// backoff). Returns whether a log was cleaned.
    pub fn run_once(&self) -> bool {
        self.shared.pass()
    }

    /// Kafka's `maybeTruncateCheckpoint`: lowers `tp`'s checkpoint entry to `offset` if it
    /// is above it (after a truncation).
    ///
    /// # Errors
    /// [`CleanerError::NotRegistered`]; checkpoint I/O and format errors.
    pub fn maybe_truncate_checkpoint(
        &self,
        tp: &TopicPartition,
        offset: i64,
    ) -> Result<(), CleanerError> {
        let reg = self.shared.registered(tp)?;
        self.shared
            .states
            .with_lock(|| self.shared.lower_checkpoint(&reg, tp, offset))?;
        Ok(())
    }

    /// Kafka's `LogManager.truncateTo` for one partition: if `offset` is below the log
    /// end, [`abort_and_pause`](Self::abort_and_pause), [`Log::truncate_to`], then (even
    /// if it failed) the checkpoint lowered to the active segment's base offset and
    /// [`resume`](Self::resume). Returns whether the log was truncated.
    ///
    /// # Errors
    /// [`CleanerError::NotRegistered`]; the errors of the steps, the truncation's first.
    pub fn truncate_to(&self, tp: &TopicPartition, offset: i64) -> Result<bool, CleanerError> {
        let reg = self.shared.registered(tp)?;
        if offset >= reg.log.log_end_offset() {
            return Ok(false);
        }
        self.around_truncation(tp, &reg, || reg.log.truncate_to(offset))
    }

    /// Kafka's `LogManager.truncateFullyAndStartAt` for one partition: as
    /// [`truncate_to`](Self::truncate_to) around [`Log::truncate_fully_and_start_at`].
    ///
    /// # Errors
    /// As [`truncate_to`](Self::truncate_to).
    pub fn truncate_fully_and_start_at(
        &self,
        tp: &TopicPartition,
        new_offset: i64,
    ) -> Result<(), CleanerError> {
        let reg = self.shared.registered(tp)?;
        self.around_truncation(tp, &reg, || reg.log.truncate_fully_and_start_at(new_offset))
    }

    fn around_truncation<T>(
        &self,
        tp: &TopicPartition,
        reg: &Registered,
        f: impl FnOnce() -> Result<T, SegmentError>,
    ) -> Result<T, CleanerError> {
        self.abort_and_pause(tp)?;
        let out = f();
        let active = reg
            .log
            .segments()
            .last_segment()
            .map_or(0, |s| s.base_offset());
        let lowered = self
            .shared
            .states
            .with_lock(|| self.shared.lower_checkpoint(reg, tp, active));
        let resumed = self.resume(tp);
        let out = out?;
        lowered?;
        resumed?;
        Ok(out)
    }

    /// Stops the threads and joins them: a running clean stops at its next read window
    /// (no checkpoint written). Idempotent; drop does it too.
    pub fn shutdown(&mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.wake();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Cleaner {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    /// A cleaner thread (Kafka's `CleanerThread.doWork` loop).
    fn run(&self) {
        while !self.shutdown.load(Ordering::SeqCst) {
            // A wake during the pass ends the backoff after it.
            let seen = *self.wake.lock();
            let cleaned = self.pass();
            if !cleaned {
                self.backoff(seen);
            }
        }
    }

    /// Sleeps `backoff_ms`, or until shutdown or a [`Cleaner::wake`] after `seen`.
    fn backoff(&self, seen: u64) {
        let ms = u64::try_from(self.config.backoff_ms).unwrap_or(0);
        let deadline = std::time::Instant::now() + Duration::from_millis(ms);
        let mut wakes = self.wake.lock();
        while *wakes == seen && !self.shutdown.load(Ordering::SeqCst) {
            if self.wake_cv.wait_until(&mut wakes, deadline).timed_out() {
                break;
            }
        }
    }

    fn registered(&self, tp: &TopicPartition) -> Result<Arc<Registered>, CleanerError> {
        self.logs
            .lock()
            .get(tp)
            .cloned()
            .ok_or_else(|| CleanerError::NotRegistered(tp.clone()))
    }

    fn read_checkpoints(&self, reg: &Registered) -> Result<CleanerCheckpoints, CleanError> {
        let _g = self.checkpoint_lock.lock();
        read_cleaner_checkpoint(&*reg.log.fs, &reg.log_dir)
    }

    /// Read-modify-write of `tp`'s entry in its directory's checkpoint (Kafka's
    /// `updateCheckpoints`; the other partitions' entries are kept, registered or not).
    fn set_checkpoint(
        &self,
        reg: &Registered,
        tp: &TopicPartition,
        change: impl FnOnce(Option<i64>) -> Option<i64>,
    ) -> Result<(), CleanError> {
        let _g = self.checkpoint_lock.lock();
        let mut all = read_cleaner_checkpoint(&*reg.log.fs, &reg.log_dir)?;
        let old = all.get(tp).copied();
        if let Some(new) = change(old) {
            if Some(new) != old {
                all.insert(tp.clone(), new);
                write_cleaner_checkpoint(&*reg.log.fs, &reg.log_dir, &all)?;
            }
        }
        Ok(())
    }

    fn lower_checkpoint(
        &self,
        reg: &Registered,
        tp: &TopicPartition,
        offset: i64,
    ) -> Result<(), CleanError> {
        // Kafka's `existing.getOrDefault(tp, 0) > offset`.
        self.set_checkpoint(reg, tp, |old| old.filter(|&o| o > offset).map(|_| offset))
    }

    /// One pass: choose and clean the filthiest log, then retention. Whether a log was
    /// cleaned.
    fn pass(&self) -> bool {
        let cleaned = match self.grab_filthiest() {
            Some(c) => {
                self.clean(&c);
                true
            }
            None => false,
        };
        self.retention();
        cleaned
    }

    /// Kafka's `grabFilthiestCompactedLog`: the candidate chosen is `InProgress`.
    fn grab_filthiest(&self) -> Option<Candidate> {
        let logs: Vec<(TopicPartition, Arc<Registered>)> = self
            .logs
            .lock()
            .iter()
            .map(|(tp, r)| (tp.clone(), r.clone()))
            .collect();
        let mut dirs: HashMap<PathBuf, CleanerCheckpoints> = HashMap::new();
        let mut candidates = Vec::new();
        for (tp, reg) in logs {
            if self.shutdown.load(Ordering::SeqCst) {
                return None;
            }
            if !self.states.is_candidate(&reg.log_dir, &tp) {
                continue;
            }
            match self.plan(&tp, &reg, &mut dirs) {
                Ok(Some(ltc)) => candidates.push(Candidate { tp, reg, ltc }),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(partition = ?tp, error = %e, "cleaner plan failed; partition uncleanable");
                    self.states
                        .mark_uncleanable(&reg.log_dir, &tp, UncleanableReason::of(e));
                }
            }
        }
        loop {
            let ratios: Vec<(LogToClean, f64)> = candidates
                .iter()
                .map(|c| (c.ltc, c.reg.compaction.min_cleanable_dirty_ratio))
                .collect();
            let i = filthiest(&ratios)?;
            let c = candidates.swap_remove(i);
            // Paused, chosen by another thread or marked since the plan: the next one.
            if self.states.try_start(&c.reg.log_dir, &c.tp) {
                return Some(c);
            }
        }
    }

    /// One log's plan (`None` for an empty log), resetting its checkpoint entry when
    /// Kafka would.
    fn plan(
        &self,
        tp: &TopicPartition,
        reg: &Registered,
        dirs: &mut HashMap<PathBuf, CleanerCheckpoints>,
    ) -> Result<Option<LogToClean>, CleanError> {
        let checkpoints = match dirs.get(&reg.log_dir) {
            Some(c) => c,
            None => {
                let c = self.read_checkpoints(reg)?;
                dirs.entry(reg.log_dir.clone()).or_insert(c)
            }
        };
        let now = reg.log.clock.milliseconds();
        // Under the log's lock, as Kafka plans under its manager's lock: no truncation,
        // delete_records or retention removes a segment while the summary reads it.
        let summary = {
            let _g = reg.log.lock.lock();
            LogSummary::of(&*reg.log)?
        };
        let (offsets, ltc) =
            LogToClean::plan(&summary, checkpoints.get(tp).copied(), now, &reg.compaction);
        if offsets.force_update_checkpoint {
            let first = offsets.first_dirty_offset;
            self.set_checkpoint(reg, tp, |_| Some(first))?;
        }
        Ok((ltc.total_bytes > 0).then_some(ltc))
    }

    /// Kafka's `cleanLog` then `doneCleaning` (or `markPartitionUncleanable`).
    fn clean(&self, c: &Candidate) {
        let (tp, reg) = (&c.tp, &c.reg);
        let now = reg.log.clock.milliseconds();
        let mut end = None;
        let result = {
            let mut read = || -> Result<Option<i64>, CleanError> {
                Ok(self.read_checkpoints(reg)?.get(tp).copied())
            };
            let mut write = |o: i64| -> Result<(), CleanError> {
                end = Some(o);
                Ok(())
            };
            let stop = || self.shutdown.load(Ordering::SeqCst) || self.states.is_aborted(tp);
            let driver = CleanDriver {
                checkpointed: &mut read,
                checkpoint: &mut write,
                stop: &stop,
                sabotage: CleanSabotage::default(),
                throttle: &|n| {
                    self.throttler.maybe_throttle(n as f64);
                },
            };
            // A panic (a bug) fails this partition's clean, not the thread.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                #[cfg(test)]
                if tests::PANIC_IN_CLEAN.with(std::cell::Cell::get) {
                    panic!("a bug in a clean");
                }
                reg.log
                    .clean_with(&self.config, &reg.compaction, now, driver)
            }))
            .unwrap_or_else(|p| {
                let message = p
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(CleanError::Panicked { message })
            })
        };
        match result {
            Ok(stats) => {
                // Before `done`, so that a waiting abort_and_pause sees them (Kafka records
                // a clean's stats before doneCleaning too).
                self.cleans.fetch_add(1, Ordering::Relaxed);
                self.stats.lock().insert(tp.clone(), stats);
                let written = self.states.done(tp, || match end {
                    Some(o) => self.set_checkpoint(reg, tp, |_| Some(o)),
                    None => Ok(()),
                });
                match written {
                    Ok(Some(Err(e))) => {
                        tracing::warn!(partition = ?tp, error = %e, "cleaner checkpoint not written")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::error!(partition = ?tp, error = %e, "cleaner state"),
                }
            }
            Err(CleanError::Aborted) => {
                if let Err(e) = self.states.done_cleaning(tp) {
                    tracing::error!(partition = ?tp, error = %e, "cleaner state");
                }
            }
            Err(e) => {
                tracing::warn!(partition = ?tp, error = %e, "clean failed; partition uncleanable");
                // Marked before it leaves InProgress, so no other thread picks it between.
                self.states
                    .mark_uncleanable(&reg.log_dir, tp, UncleanableReason::of(e));
                if let Err(e) = self.states.done_cleaning(tp) {
                    tracing::error!(partition = ?tp, error = %e, "cleaner state");
                }
            }
        }
    }

    /// Kafka's `deletableLogs` then `deleteOldSegments` and `doneDeleting`: retention of
    /// every idle, cleanable registered log by its policy. Errors are logged, as Kafka.
    fn retention(&self) {
        let logs: Vec<(TopicPartition, Arc<Registered>)> = self
            .logs
            .lock()
            .iter()
            .map(|(tp, r)| (tp.clone(), r.clone()))
            .collect();
        for (tp, reg) in logs {
            if self.shutdown.load(Ordering::SeqCst) {
                return;
            }
            if !self.states.try_start(&reg.log_dir, &tp) {
                continue;
            }
            let r = match reg.policy {
                CleanupPolicy::CompactDelete => reg.log.delete_old_segments(),
                CleanupPolicy::Compact => reg.log.delete_log_start_breached_segments(),
            };
            if let Err(e) = r {
                tracing::warn!(partition = ?tp, error = %e, "retention of a compacted log failed");
            }
            if let Err(e) = self.states.done_cleaning(&tp) {
                tracing::error!(partition = ?tp, error = %e, "cleaner state");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::BatchBuilder;
    use crate::LogConfig;

    thread_local! {
        /// Makes the next clean on this thread panic.
        pub(super) static PANIC_IN_CLEAN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    #[test]
    fn a_panicking_clean_marks_its_partition_uncleanable_and_ends_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            compact: true,
            ..LogConfig::default()
        };
        let log = Arc::new(Log::open(dir.path().join("p-0"), config).unwrap());
        for i in 0..10 {
            let b = BatchBuilder::new(log.log_end_offset())
                .record(0, Some(b"k"), Some(format!("{i}").as_bytes()))
                .build()
                .unwrap();
            log.append(&b).unwrap();
        }
        log.roll(None).unwrap();
        let cleaner = Cleaner::new(CleanerConfig {
            num_threads: 0,
            dedupe_buffer_size: 1 << 20,
            ..CleanerConfig::default()
        })
        .unwrap();
        let tp = TopicPartition::new("p", 0);
        cleaner
            .register(
                tp.clone(),
                log.clone(),
                CompactionConfig::default(),
                CleanupPolicy::Compact,
            )
            .unwrap();
        PANIC_IN_CLEAN.with(|p| p.set(true));
        assert!(cleaner.run_once(), "chosen, and its clean failed");
        PANIC_IN_CLEAN.with(|p| p.set(false));
        assert_eq!(cleaner.state(&tp), None, "not left in progress");
        let u = cleaner.uncleanable();
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].2.kind, crate::clean::UncleanableKind::Panicked);
        assert!(!cleaner.run_once(), "not chosen again");
        // An abort does not wait for a clean that will never end.
        cleaner.abort_and_pause(&tp).unwrap();
        cleaner.resume(&tp).unwrap();
    }
}
