//! The cleaner's settings: the broker's `log.cleaner.*` ([`CleanerConfig`]) and a
//! compacted topic's ([`CompactionConfig`]), with Kafka's names, defaults and ranges
//! (`docs/kafka-behaviour.md#cleaner-config`).

use super::offset_map::OffsetMapCapacity;
use super::CleanError;

/// Kafka's default `log.cleaner.dedupe.buffer.size`: 128 MiB, shared by all cleaner threads.
pub const DEFAULT_DEDUPE_BUFFER_SIZE: i64 = 128 * 1024 * 1024;
/// Kafka's default `log.cleaner.io.buffer.size`: 512 KiB, shared by all cleaner threads.
pub const DEFAULT_IO_BUFFER_SIZE: i32 = 512 * 1024;
/// Kafka's default `log.cleaner.io.buffer.load.factor` (the dedupe buffer's, despite the
/// name): 0.9.
pub const DEFAULT_DEDUPE_BUFFER_LOAD_FACTOR: f64 = 0.9;
/// Kafka's default `message.max.bytes` (the largest batch the cleaner's buffers grow to):
/// 1 MiB plus the 12 bytes of a log entry header.
pub const DEFAULT_MAX_MESSAGE_SIZE: i32 = 1_048_588;
/// Kafka's default `log.cleaner.backoff.ms`: 15 s.
pub const DEFAULT_BACKOFF_MS: i64 = 15_000;
/// Kafka's default `min.cleanable.dirty.ratio`: 0.5.
pub const DEFAULT_MIN_CLEANABLE_DIRTY_RATIO: f64 = 0.5;
/// Kafka's default `delete.retention.ms`: one day.
pub const DEFAULT_DELETE_RETENTION_MS: i64 = 86_400_000;

/// The broker's cleaner settings (Kafka's `CleanerConfig`, `log.cleaner.*`).
///
/// The dedupe buffer and the I/O buffer are totals that Kafka divides among the cleaner
/// threads: [`offset_map_capacity`](Self::offset_map_capacity) and
/// [`io_buffer_size_per_thread`](Self::io_buffer_size_per_thread) give one thread's
/// share. [`validate`](Self::validate) checks the values.
#[derive(Clone, Debug, PartialEq)]
pub struct CleanerConfig {
    /// `log.cleaner.threads` (default 1; 0 runs no cleaner).
    pub num_threads: u32,
    /// `log.cleaner.dedupe.buffer.size`, bytes for all threads (default 128 MiB).
    pub dedupe_buffer_size: i64,
    /// `log.cleaner.io.buffer.load.factor`: the fraction of the dedupe buffer's slots
    /// that one clean fills (default 0.9).
    pub dedupe_buffer_load_factor: f64,
    /// `log.cleaner.io.buffer.size`, bytes for all threads (default 512 KiB).
    pub io_buffer_size: i32,
    /// `message.max.bytes`: the largest batch the cleaner's read buffer grows to
    /// (default 1 048 588).
    pub max_message_size: i32,
    /// `log.cleaner.io.max.bytes.per.second`: the throttle of all threads' reads and
    /// writes (default `f64::MAX`, no throttle).
    pub io_max_bytes_per_second: f64,
    /// `log.cleaner.backoff.ms`: the sleep when no log is cleanable (default 15 000).
    pub backoff_ms: i64,
    /// `log.cleaner.enable` (default true).
    pub enable: bool,
}

impl Default for CleanerConfig {
    fn default() -> Self {
        CleanerConfig {
            num_threads: 1,
            dedupe_buffer_size: DEFAULT_DEDUPE_BUFFER_SIZE,
            dedupe_buffer_load_factor: DEFAULT_DEDUPE_BUFFER_LOAD_FACTOR,
            io_buffer_size: DEFAULT_IO_BUFFER_SIZE,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            io_max_bytes_per_second: f64::MAX,
            backoff_ms: DEFAULT_BACKOFF_MS,
            enable: true,
        }
    }
}

impl CleanerConfig {
    /// Checks the values. Kafka's `ConfigDef` ranges are `threads ≥ 0`,
    /// `io.buffer.size ≥ 0` and `backoff.ms ≥ 0`; it has none for the others, which then
    /// fail later inside Kafka. Refused here, up front:
    ///
    /// | setting | accepted | Kafka with a value outside |
    /// |---|---|---|
    /// | `log.cleaner.dedupe.buffer.size` | ≥ 0 | the thread's buffer allocation throws |
    /// | `log.cleaner.io.buffer.load.factor` | (0, 1], finite | ≤ 0: a clean maps no key and never makes progress; > 1: `put` throws once the map holds `slots` keys |
    /// | `log.cleaner.io.buffer.size` | ≥ 0 | (Kafka's range) |
    /// | `message.max.bytes` | ≥ 0 | (Kafka's range) |
    /// | `log.cleaner.io.max.bytes.per.second` | > 0, not NaN | the throttler sleeps forever or never |
    /// | `log.cleaner.backoff.ms` | ≥ 0 | (Kafka's range) |
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`] naming the first setting out of range.
    pub fn validate(&self) -> Result<(), CleanError> {
        if self.dedupe_buffer_size < 0 {
            return Err(CleanError::bad(
                "log.cleaner.dedupe.buffer.size",
                self.dedupe_buffer_size,
                "must be at least 0",
            ));
        }
        let lf = self.dedupe_buffer_load_factor;
        if !(lf > 0.0 && lf <= 1.0) {
            return Err(CleanError::bad(
                "log.cleaner.io.buffer.load.factor",
                lf,
                "must be in (0, 1]",
            ));
        }
        if self.io_buffer_size < 0 {
            return Err(CleanError::bad(
                "log.cleaner.io.buffer.size",
                self.io_buffer_size,
                "must be at least 0",
            ));
        }
        if self.max_message_size < 0 {
            return Err(CleanError::bad(
                "message.max.bytes",
                self.max_message_size,
                "must be at least 0",
            ));
        }
        if self.io_max_bytes_per_second.is_nan() || self.io_max_bytes_per_second <= 0.0 {
            return Err(CleanError::bad(
                "log.cleaner.io.max.bytes.per.second",
                self.io_max_bytes_per_second,
                "must be greater than 0",
            ));
        }
        if self.backoff_ms < 0 {
            return Err(CleanError::bad(
                "log.cleaner.backoff.ms",
                self.backoff_ms,
                "must be at least 0",
            ));
        }
        Ok(())
    }

    /// One cleaner thread's offset map capacity, as Kafka's `CleanerThread` sizes its
    /// `SkimpyOffsetMap`: `min(dedupe_buffer_size / num_threads, i32::MAX)` bytes, then
    /// [`OffsetMapCapacity::new`] (`docs/kafka-behaviour.md#cleaner-offset-map`).
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`] as [`validate`](Self::validate), or for 0 threads;
    /// [`CleanError::OffsetMapTooSmall`] when a thread's map could not hold one key.
    pub fn offset_map_capacity(&self) -> Result<OffsetMapCapacity, CleanError> {
        self.validate()?;
        if self.num_threads == 0 {
            return Err(CleanError::bad(
                "log.cleaner.threads",
                0,
                "a cleaner thread's share needs at least one thread",
            ));
        }
        let per_thread =
            (self.dedupe_buffer_size / i64::from(self.num_threads)).min(i64::from(i32::MAX));
        // In range: 0 ..= i32::MAX.
        OffsetMapCapacity::new(per_thread as u32, self.dedupe_buffer_load_factor)
    }

    /// One thread's read (and write) buffer, as Kafka's `CleanerThread`:
    /// `io_buffer_size / num_threads / 2` (integer divisions), or 0 with no thread.
    pub fn io_buffer_size_per_thread(&self) -> i32 {
        match i32::try_from(self.num_threads) {
            Ok(n) if n > 0 => self.io_buffer_size / n / 2,
            _ => 0,
        }
    }
}

/// A compacted topic's settings that the cleaner's plan reads (Kafka's `LogConfig`
/// fields `minCleanableRatio`, `compactionLagMs`, `maxCompactionLagMs`,
/// `deleteRetentionMs`); the segment and index sizes that bound a group are
/// [`LogConfig`](crate::LogConfig)'s `segment_bytes` and `max_index_size`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionConfig {
    /// `min.cleanable.dirty.ratio`: a log is cleaned when its dirty ratio is above it
    /// (strictly), in [0, 1] (default 0.5).
    pub min_cleanable_dirty_ratio: f64,
    /// `min.compaction.lag.ms`: a segment whose largest timestamp is younger is not
    /// cleaned (default 0, ≥ 0).
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`: a log with a dirty segment whose first batch is older is
    /// cleaned whatever its ratio (default `i64::MAX`, ≥ 1).
    pub max_compaction_lag_ms: i64,
    /// `delete.retention.ms`: how long a tombstone is kept after a clean reached it
    /// (default one day, ≥ 0).
    pub delete_retention_ms: i64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            min_cleanable_dirty_ratio: DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            delete_retention_ms: DEFAULT_DELETE_RETENTION_MS,
        }
    }
}

impl CompactionConfig {
    /// Checks the values against Kafka's `LogConfig` ranges (`ConfigDef`) and its
    /// `validateValues` rule that `min.compaction.lag.ms ≤ max.compaction.lag.ms`.
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`] naming the first setting out of range.
    pub fn validate(&self) -> Result<(), CleanError> {
        let r = self.min_cleanable_dirty_ratio;
        if !(0.0..=1.0).contains(&r) {
            return Err(CleanError::bad(
                "min.cleanable.dirty.ratio",
                r,
                "must be in [0, 1]",
            ));
        }
        if self.min_compaction_lag_ms < 0 {
            return Err(CleanError::bad(
                "min.compaction.lag.ms",
                self.min_compaction_lag_ms,
                "must be at least 0",
            ));
        }
        if self.max_compaction_lag_ms < 1 {
            return Err(CleanError::bad(
                "max.compaction.lag.ms",
                self.max_compaction_lag_ms,
                "must be at least 1",
            ));
        }
        if self.delete_retention_ms < 0 {
            return Err(CleanError::bad(
                "delete.retention.ms",
                self.delete_retention_ms,
                "must be at least 0",
            ));
        }
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(CleanError::bad(
                "min.compaction.lag.ms",
                self.min_compaction_lag_ms,
                &format!(
                    "conflicts with max.compaction.lag.ms={}: the minimum lag must not \
                     exceed the maximum",
                    self.max_compaction_lag_ms
                ),
            ));
        }
        Ok(())
    }
}
