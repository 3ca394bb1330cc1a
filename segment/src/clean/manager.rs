//! The cleaning state of each partition and the uncleanable partitions of each log
//! directory: Kafka's `LogCleanerManager` bookkeeping (`inProgress`,
//! `uncleanablePartitions`, `pausedCleaningCond`), without the logs
//! (`docs/kafka-behaviour.md#cleaner-states`, `docs/kafka-behaviour.md#cleaner-uncleanable`).
//!
//! [`CleaningStates`] holds the map and its condition variable; the
//! [`Cleaner`](crate::Cleaner) drives it from its threads and from the embedder's calls.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::{CleanError, TopicPartition};

/// A partition's cleaning state (Kafka's `LogCleaningState`); a partition with no state
/// is idle: a cleaner thread may choose it.
///
/// The transitions (`docs/kafka-behaviour.md#cleaner-states`): idle → `InProgress` (a
/// thread chose it) → idle (done); idle → `Paused(1)` and `Paused(n)` → `Paused(n + 1)`
/// ([`abort_and_pause`](CleaningStates::abort_and_pause)); `InProgress` → `Aborted`
/// (abort_and_pause of a running clean) → `Paused(1)` (the clean stopped);
/// `Paused(1)` → idle and `Paused(n)` → `Paused(n − 1)` ([`resume`](CleaningStates::resume)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogCleaningState {
    /// A cleaner thread is cleaning it, or running its retention (Kafka's
    /// `LogCleaningInProgress`).
    InProgress,
    /// Its running clean was asked to stop; the caller of `abort_and_pause` waits for it
    /// (Kafka's `LogCleaningAborted`).
    Aborted,
    /// Paused this many times (≥ 1); no thread cleans it until as many resumes (Kafka's
    /// `LogCleaningPaused(n)`).
    Paused(u32),
}

/// A transition that Kafka's `LogCleanerManager` refuses with `IllegalStateException`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// `abort_and_pause` of a partition whose clean is already being aborted.
    #[error("cleaning of {tp:?} cannot be aborted and paused: it is in state {state:?}")]
    CannotAbort {
        /// The partition.
        tp: TopicPartition,
        /// Its state.
        state: LogCleaningState,
    },
    /// `resume` of a partition that is not paused.
    #[error("cleaning of {tp:?} cannot be resumed: it is in state {state:?}")]
    NotPaused {
        /// The partition.
        tp: TopicPartition,
        /// Its state (`None`: idle).
        state: Option<LogCleaningState>,
    },
    /// A thread finished a clean or a retention run of a partition it had not started
    /// (a bug: never expected).
    #[error("cleaning of {tp:?} cannot end: it is in state {state:?}")]
    NotInProgress {
        /// The partition.
        tp: TopicPartition,
        /// Its state (`None`: idle).
        state: Option<LogCleaningState>,
    },
}

/// What kind of failure made a partition uncleanable ([`UncleanableReason::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UncleanableKind {
    /// A batch of the log could not be read or is too large ([`CleanError::Batch`]).
    CorruptBatch,
    /// A batch Kafka's cleaner cannot rewrite either ([`CleanError::Unsupported`]).
    Unsupported,
    /// The directory's `cleaner-offset-checkpoint` is malformed
    /// ([`CleanError::MalformedCheckpoint`]).
    Checkpoint,
    /// The log is offline ([`SegmentError::Offline`](crate::SegmentError::Offline)):
    /// an fsync or a structural change failed, in this clean or before.
    Offline,
    /// Another I/O, index or file error ([`CleanError::Segment`]).
    Io,
    /// The clean panicked ([`CleanError::Panicked`]).
    Panicked,
    /// A setting or the offset map refused the clean ([`CleanError::InvalidConfig`],
    /// [`CleanError::OffsetMapTooSmall`], [`CleanError::OffsetMapFull`]) or the directory
    /// is not named `<topic>-<partition>`.
    Config,
}

/// Why a partition is uncleanable: the kind and the error of the clean that failed.
#[derive(Clone, Debug)]
pub struct UncleanableReason {
    /// The kind of failure.
    pub kind: UncleanableKind,
    /// The error the clean (or its plan) returned.
    pub error: Arc<CleanError>,
}

impl UncleanableReason {
    /// The reason of a failed clean.
    pub fn of(error: CleanError) -> Self {
        let kind = match &error {
            CleanError::Batch { .. } => UncleanableKind::CorruptBatch,
            CleanError::Unsupported { .. } => UncleanableKind::Unsupported,
            CleanError::MalformedCheckpoint { .. } => UncleanableKind::Checkpoint,
            CleanError::Segment(crate::error::SegmentError::Offline { .. }) => {
                UncleanableKind::Offline
            }
            CleanError::Segment(_) => UncleanableKind::Io,
            CleanError::Panicked { .. } => UncleanableKind::Panicked,
            _ => UncleanableKind::Config,
        };
        UncleanableReason {
            kind,
            error: Arc::new(error),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    states: HashMap<TopicPartition, LogCleaningState>,
    /// By log directory (the partition directory's parent).
    uncleanable: BTreeMap<PathBuf, BTreeMap<TopicPartition, UncleanableReason>>,
}

/// The cleaning state of every partition and the uncleanable partitions, under one lock
/// (Kafka's `LogCleanerManager.lock`), with the condition variable that
/// [`abort_and_pause`](Self::abort_and_pause) waits on.
#[derive(Debug, Default)]
pub struct CleaningStates {
    inner: Mutex<Inner>,
    paused: Condvar,
}

impl CleaningStates {
    /// No partition has a state; none is uncleanable.
    pub fn new() -> Self {
        Self::default()
    }

    /// `tp`'s state; `None` when idle.
    pub fn state(&self, tp: &TopicPartition) -> Option<LogCleaningState> {
        self.inner.lock().states.get(tp).copied()
    }

    /// Whether a thread may choose `tp`: it is idle and not uncleanable in `log_dir`.
    pub fn is_candidate(&self, log_dir: &Path, tp: &TopicPartition) -> bool {
        let inner = self.inner.lock();
        !inner.states.contains_key(tp) && !is_uncleanable(&inner, log_dir, tp)
    }

    /// Marks `tp` `InProgress` if a thread may choose it ([`is_candidate`](Self::is_candidate)),
    /// as Kafka's `grabFilthiestCompactedLog` and `deletableLogs` do; `false` (nothing
    /// changed) otherwise.
    pub fn try_start(&self, log_dir: &Path, tp: &TopicPartition) -> bool {
        let mut inner = self.inner.lock();
        if inner.states.contains_key(tp) || is_uncleanable(&inner, log_dir, tp) {
            return false;
        }
        inner
            .states
            .insert(tp.clone(), LogCleaningState::InProgress);
        true
    }

    /// Whether `tp`'s running clean must stop: its state is `Aborted` (Kafka's
    /// `checkCleaningAborted`).
    pub fn is_aborted(&self, tp: &TopicPartition) -> bool {
        self.state(tp) == Some(LogCleaningState::Aborted)
    }

    /// Kafka's `abortAndPauseCleaning`: idle → `Paused(1)`, `Paused(n)` → `Paused(n + 1)`,
    /// `InProgress` → `Aborted`, then waits until the state is `Paused` (the running
    /// clean, which checks between read windows, has stopped and called
    /// [`done_cleaning`](Self::done_cleaning)).
    ///
    /// # Errors
    /// [`StateError::CannotAbort`] when the state is already `Aborted` (another caller
    /// is aborting it), as Kafka.
    pub fn abort_and_pause(&self, tp: &TopicPartition) -> Result<(), StateError> {
        let mut inner = self.inner.lock();
        let next = match inner.states.get(tp) {
            None => LogCleaningState::Paused(1),
            Some(LogCleaningState::InProgress) => LogCleaningState::Aborted,
            Some(LogCleaningState::Paused(n)) => LogCleaningState::Paused(n.saturating_add(1)),
            Some(&state) => {
                return Err(StateError::CannotAbort {
                    tp: tp.clone(),
                    state,
                })
            }
        };
        inner.states.insert(tp.clone(), next);
        while !matches!(inner.states.get(tp), Some(LogCleaningState::Paused(_))) {
            // Kafka waits in steps of 100 ms too; a wake-up comes with every transition.
            self.paused.wait_for(&mut inner, Duration::from_millis(100));
        }
        Ok(())
    }

    /// Kafka's `resumeCleaning`: `Paused(1)` → idle, `Paused(n)` → `Paused(n − 1)`.
    ///
    /// # Errors
    /// [`StateError::NotPaused`] in any other state (nothing changes).
    pub fn resume(&self, tp: &TopicPartition) -> Result<(), StateError> {
        let mut inner = self.inner.lock();
        match inner.states.get(tp).copied() {
            Some(LogCleaningState::Paused(n)) if n <= 1 => {
                inner.states.remove(tp);
            }
            Some(LogCleaningState::Paused(n)) => {
                inner
                    .states
                    .insert(tp.clone(), LogCleaningState::Paused(n - 1));
            }
            state => {
                return Err(StateError::NotPaused {
                    tp: tp.clone(),
                    state,
                })
            }
        }
        Ok(())
    }

    /// Kafka's `doneCleaning` and `doneDeleting` for one partition: `InProgress` → idle,
    /// after `checkpoint` ran (under the lock, so that no abort and truncation of the
    /// checkpoint comes between the end of the clean and its checkpoint), or
    /// `Aborted` → `Paused(1)` without running it, waking the waiting
    /// [`abort_and_pause`](Self::abort_and_pause). Returns what `checkpoint` returned, or
    /// `None` when it did not run.
    ///
    /// # Errors
    /// [`StateError::NotInProgress`] in any other state (nothing changes).
    pub fn done<T>(
        &self,
        tp: &TopicPartition,
        checkpoint: impl FnOnce() -> T,
    ) -> Result<Option<T>, StateError> {
        let mut inner = self.inner.lock();
        let out = match inner.states.get(tp).copied() {
            Some(LogCleaningState::InProgress) => {
                let out = checkpoint();
                inner.states.remove(tp);
                Some(out)
            }
            Some(LogCleaningState::Aborted) => {
                inner.states.insert(tp.clone(), LogCleaningState::Paused(1));
                None
            }
            state => {
                return Err(StateError::NotInProgress {
                    tp: tp.clone(),
                    state,
                })
            }
        };
        self.paused.notify_all();
        Ok(out)
    }

    /// [`done`](Self::done) with no checkpoint to write.
    ///
    /// # Errors
    /// As [`done`](Self::done).
    pub fn done_cleaning(&self, tp: &TopicPartition) -> Result<(), StateError> {
        self.done(tp, || ()).map(|_| ())
    }

    /// Runs `f` under the lock (a checkpoint change that must not interleave with a
    /// [`done`](Self::done)'s).
    pub fn with_lock<T>(&self, f: impl FnOnce() -> T) -> T {
        let _g = self.inner.lock();
        f()
    }

    /// Kafka's `markPartitionUncleanable`: no thread chooses `tp` again, for a clean or
    /// its retention, until [`forget`](Self::forget).
    pub fn mark_uncleanable(&self, log_dir: &Path, tp: &TopicPartition, reason: UncleanableReason) {
        self.inner
            .lock()
            .uncleanable
            .entry(log_dir.to_path_buf())
            .or_default()
            .insert(tp.clone(), reason);
    }

    /// The uncleanable partitions of every log directory, with their reasons.
    pub fn uncleanable(&self) -> Vec<(PathBuf, TopicPartition, UncleanableReason)> {
        let inner = self.inner.lock();
        inner
            .uncleanable
            .iter()
            .flat_map(|(d, m)| m.iter().map(|(tp, r)| (d.clone(), tp.clone(), r.clone())))
            .collect()
    }

    /// Forgets `tp`: its state and its uncleanable mark (Kafka's
    /// `maintainUncleanablePartitions` for a partition whose log is gone).
    pub fn forget(&self, tp: &TopicPartition) {
        let mut inner = self.inner.lock();
        inner.states.remove(tp);
        for m in inner.uncleanable.values_mut() {
            m.remove(tp);
        }
        inner.uncleanable.retain(|_, m| !m.is_empty());
        self.paused.notify_all();
    }
}

fn is_uncleanable(inner: &Inner, log_dir: &Path, tp: &TopicPartition) -> bool {
    inner
        .uncleanable
        .get(log_dir)
        .is_some_and(|m| m.contains_key(tp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use LogCleaningState::{Aborted, InProgress, Paused};

    fn tp() -> TopicPartition {
        TopicPartition::new("t", 0)
    }

    #[test]
    fn idle_to_in_progress_to_idle() {
        let s = CleaningStates::new();
        let d = Path::new("/d");
        assert!(s.try_start(d, &tp()));
        assert_eq!(s.state(&tp()), Some(InProgress));
        assert!(!s.try_start(d, &tp()), "one clean at a time");
        assert_eq!(s.done(&tp(), || 7).unwrap(), Some(7));
        assert_eq!(s.state(&tp()), None);
        assert!(matches!(
            s.done_cleaning(&tp()),
            Err(StateError::NotInProgress { state: None, .. })
        ));
    }

    #[test]
    fn pauses_nest_and_resumes_unwind() {
        let s = CleaningStates::new();
        s.abort_and_pause(&tp()).unwrap();
        assert_eq!(s.state(&tp()), Some(Paused(1)));
        s.abort_and_pause(&tp()).unwrap();
        assert_eq!(s.state(&tp()), Some(Paused(2)));
        assert!(
            !s.try_start(Path::new("/d"), &tp()),
            "a paused partition is not chosen"
        );
        s.resume(&tp()).unwrap();
        assert_eq!(s.state(&tp()), Some(Paused(1)));
        s.resume(&tp()).unwrap();
        assert_eq!(s.state(&tp()), None);
        assert!(matches!(
            s.resume(&tp()),
            Err(StateError::NotPaused { state: None, .. })
        ));
    }

    #[test]
    fn resume_of_a_running_clean_is_refused() {
        let s = CleaningStates::new();
        assert!(s.try_start(Path::new("/d"), &tp()));
        assert!(matches!(
            s.resume(&tp()),
            Err(StateError::NotPaused {
                state: Some(InProgress),
                ..
            })
        ));
        assert_eq!(s.state(&tp()), Some(InProgress));
    }

    #[test]
    fn abort_waits_for_the_running_clean_and_skips_its_checkpoint() {
        let s = Arc::new(CleaningStates::new());
        assert!(s.try_start(Path::new("/d"), &tp()));
        let s2 = s.clone();
        let aborter = std::thread::spawn(move || s2.abort_and_pause(&tp()));
        // The clean sees the abort, as Log::clean's stop check does.
        while !s.is_aborted(&tp()) {
            std::thread::yield_now();
        }
        // A second abort while the first waits is refused, as Kafka's.
        assert!(matches!(
            s.abort_and_pause(&tp()),
            Err(StateError::CannotAbort { state: Aborted, .. })
        ));
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !aborter.is_finished(),
            "abort_and_pause waits for the clean to stop"
        );
        let mut wrote = false;
        assert_eq!(s.done(&tp(), || wrote = true).unwrap(), None);
        assert!(!wrote, "an aborted clean writes no checkpoint");
        aborter.join().unwrap().unwrap();
        assert_eq!(s.state(&tp()), Some(Paused(1)));
        s.resume(&tp()).unwrap();
        assert!(s.try_start(Path::new("/d"), &tp()));
    }

    #[test]
    fn an_uncleanable_partition_is_never_chosen_until_forgotten() {
        let s = CleaningStates::new();
        let (d, other) = (Path::new("/d"), Path::new("/e"));
        let reason = UncleanableReason::of(CleanError::Unsupported { reason: "x".into() });
        s.mark_uncleanable(d, &tp(), reason);
        assert!(!s.is_candidate(d, &tp()));
        assert!(!s.try_start(d, &tp()));
        assert!(s.try_start(other, &tp()), "per log directory, as Kafka");
        s.done_cleaning(&tp()).unwrap();
        let u = s.uncleanable();
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].2.kind, UncleanableKind::Unsupported);
        s.forget(&tp());
        assert!(s.try_start(d, &tp()));
    }
}
