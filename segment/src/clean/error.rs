//! The errors of the cleaner's plan ([`CleanError`]).

use std::path::PathBuf;

use crate::error::SegmentError;

/// Why a cleaner setting, an offset map operation or a `cleaner-offset-checkpoint` was
/// refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CleanError {
    /// A [`CleanerConfig`](super::CleanerConfig) or
    /// [`CompactionConfig`](super::CompactionConfig) value outside the range accepted
    /// (Kafka's name of the setting, the value, the rule).
    #[error("invalid cleaner config {name}={value}: {reason}")]
    InvalidConfig {
        /// Kafka's name of the setting (`log.cleaner.dedupe.buffer.size`, ...).
        name: &'static str,
        /// The value refused, as text.
        value: String,
        /// The rule it breaks.
        reason: String,
    },
    /// The offset map cannot take even one key: `slots × load factor < 1`. Kafka 4.4's
    /// `Cleaner` only `assert`s that the product is above 1 ("offset map is too small to
    /// fit in even a single message"), which a broker does not check: its clean then
    /// maps no key and never makes progress. Refused here.
    #[error(
        "offset map is too small to fit in even a single message: {slots} slots x load \
         factor {load_factor} < 1; increase log.cleaner.dedupe.buffer.size or decrease \
         log.cleaner.threads"
    )]
    OffsetMapTooSmall {
        /// The map's slots (`memory / 24`).
        slots: u32,
        /// `log.cleaner.io.buffer.load.factor`.
        load_factor: f64,
    },
    /// A key was put into a map that already holds `slots` keys (Kafka's
    /// `SkimpyOffsetMap.put`: `IllegalArgumentException`, raised even when the key is
    /// already present).
    #[error(
        "attempted to add a new entry to a full offset map, entries: {entries}, slots: {slots}"
    )]
    OffsetMapFull {
        /// Keys in the map.
        entries: u32,
        /// Its slots.
        slots: u32,
    },
    /// A `cleaner-offset-checkpoint` that Kafka's `CheckpointFile.read` would refuse
    /// (Kafka then takes the whole log directory offline; see
    /// [`read_cleaner_checkpoint`](super::read_cleaner_checkpoint)).
    #[error("malformed cleaner checkpoint {}: {reason}", path.display())]
    MalformedCheckpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the offending line.
        reason: String,
    },
    /// A batch of the dirty section could not be read while building the offset map
    /// (the `.log`, the file position of the window read, and the record error, whose
    /// own position is relative to that window), or no batch fits in the largest window.
    #[error("record error in {} (window at position {window_position}): {source}", path.display())]
    Batch {
        /// The `.log` file.
        path: PathBuf,
        /// The file position where the window read starts.
        window_position: u64,
        /// The record error.
        #[source]
        source: crate::record::RecordError,
    },
    /// A batch the clean cannot write, as Kafka 4.4 cannot: a legacy (magic 0/1) batch
    /// that must be kept as an empty batch (the one ending at the high watermark with no
    /// record kept; Kafka throws `IllegalStateException` there,
    /// `docs/kafka-behaviour.md#cleaner-legacy`).
    #[error("cannot clean: {reason}")]
    Unsupported {
        /// What and where.
        reason: String,
    },
    /// The log directory's name is not `<topic>-<partition>`: the clean cannot name its
    /// entry of the `cleaner-offset-checkpoint` (Kafka's `parseTopicPartitionName`).
    #[error("log directory {} is not named <topic>-<partition>", path.display())]
    NotAPartitionDir {
        /// The log directory.
        path: PathBuf,
    },
    /// The clean was stopped before it finished: its partition's cleaning was aborted
    /// ([`Cleaner::abort_and_pause`](crate::Cleaner::abort_and_pause)) or the cleaner is
    /// shutting down (Kafka's `LogCleaningAbortedException` and `ThreadShutdownException`).
    /// The groups already swapped in stay; the group being copied is dropped (its
    /// `.cleaned` files removed); no checkpoint is written.
    #[error("the clean was aborted")]
    Aborted,
    /// The clean panicked (a bug): the [`Cleaner`](crate::Cleaner) catches it, marks the
    /// partition uncleanable with this error, and its thread goes on.
    #[error("the clean panicked: {message}")]
    Panicked {
        /// The panic's message, when it was a string.
        message: String,
    },
    /// An I/O failure reading or writing a checkpoint, or an error reading a log's
    /// segments ([`SegmentError::Io`] names the operation and the file).
    #[error(transparent)]
    Segment(#[from] SegmentError),
}

impl CleanError {
    pub(crate) fn bad(name: &'static str, value: impl ToString, reason: &str) -> Self {
        CleanError::InvalidConfig {
            name,
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}
