//! The log cleaner's plan for compacted topics: what Kafka's `LogCleanerManager` and
//! `Cleaner` decide before they copy a record (`docs/kafka-behaviour.md#log-cleaner`).
//!
//! A clean of a compacted log goes: read the first dirty offset from the log
//! directory's `cleaner-offset-checkpoint` ([`read_cleaner_checkpoint`]); find the
//! offsets a clean may touch and how dirty the log is ([`cleanable_offsets`],
//! [`max_compaction_delay`], [`LogToClean`]; the filthiest log of a directory is
//! [`filthiest`]); map the latest offset of each key of the dirty section into an
//! [`OffsetMap`] of Kafka's capacity ([`build_offset_map`] reads the dirty segments and
//! feeds [`MapFill`], Kafka's stop rule), whose end offset is where this clean stops; group the segments up to it ([`group_segments_by_size`]); clean each
//! group into a new segment ([`filter_window`] per read window, with
//! [`CleanedTxnMetadata`]) and swap it in, and checkpoint the end offset
//! ([`write_cleaner_checkpoint`]); [`Log::clean`](crate::Log::clean) does all of it.
//!
//! The settings are [`CleanerConfig`] (the broker's `log.cleaner.*`) and
//! [`CompactionConfig`] (the topic's). The rules read a [`LogSummary`]: taken from a
//! [`Log`](crate::Log) with [`LogSummary::of`], or built from numbers.
//!
//! Units: offsets are Kafka offsets (`i64`), times are milliseconds since the Unix epoch
//! (`i64`), sizes are bytes. Every rule mirrors Kafka 4.4's, Java's integer and
//! floating-point arithmetic included; where a value Kafka accepts would make its
//! cleaner fail later, [`CleanerConfig::validate`] refuses it up front.
//!
//! ```
//! use segment::clean::{
//!     cleanable_offsets, group_segments_by_size, CompactionConfig, LogSummary, LogToClean,
//!     SegmentSummary,
//! };
//!
//! // Three segments of 1000 bytes (offsets 0..100, 100..200, 200..): the last is active.
//! let seg = |base| SegmentSummary {
//!     base_offset: base,
//!     size: 1000,
//!     largest_timestamp: 0,
//!     first_batch_timestamp: i64::MAX,
//!     last_modified: 0,
//!     offset_index_bytes: 8,
//!     time_index_bytes: 12,
//! };
//! let log = LogSummary {
//!     log_start_offset: 0,
//!     log_end_offset: 250,
//!     last_stable_offset: 250,
//!     segments: vec![seg(0), seg(100), seg(200)],
//! };
//! // Cleaned up to offset 100 (the checkpoint): the second segment is dirty.
//! let config = CompactionConfig::default();
//! let offsets = cleanable_offsets(&log, Some(100), 0, &config);
//! assert_eq!((offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset), (100, 200));
//! let ltc = LogToClean::new(&log, 100, 200, false);
//! assert_eq!((ltc.clean_bytes, ltc.cleanable_bytes, ltc.cleanable_ratio), (1000, 1000, 0.5));
//! // 0.5 is not above the default min.cleanable.dirty.ratio 0.5: not cleaned yet.
//! assert!(!ltc.is_cleanable(config.min_cleanable_dirty_ratio));
//! // Both non-active segments fit in one 1 GiB segment.
//! assert_eq!(group_segments_by_size(&log.segments[..2], 1 << 30, 10 << 20, 200), vec![0..2]);
//! ```

mod build;
mod checkpoint;
mod config;
mod copy;
mod error;
mod group;
mod manager;
mod offset_map;
mod offsets;
mod source;
mod throttle;

pub use build::{build_offset_map, MapBuild};
pub use checkpoint::{
    cleaner_checkpoint_path, format_cleaner_checkpoint, parse_cleaner_checkpoint,
    read_cleaner_checkpoint, write_cleaner_checkpoint, CleanerCheckpoints, TopicPartition,
    CLEANER_CHECKPOINT_FILE,
};
pub use config::{
    CleanerConfig, CompactionConfig, DEFAULT_BACKOFF_MS, DEFAULT_DEDUPE_BUFFER_LOAD_FACTOR,
    DEFAULT_DEDUPE_BUFFER_SIZE, DEFAULT_DELETE_RETENTION_MS, DEFAULT_IO_BUFFER_SIZE,
    DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
};
pub use copy::{
    filter_window, CleanSabotage, CleanedTxnMetadata, CopyRules, LastRecord, WindowResult,
};
pub use error::CleanError;
pub use group::group_segments_by_size;
pub use manager::{
    CleaningStates, LogCleaningState, StateError, UncleanableKind, UncleanableReason,
};
pub use offset_map::{key_digest, Fill, MapFill, OffsetMap, OffsetMapCapacity, BYTES_PER_ENTRY};
pub use offsets::{
    cleanable_offsets, filthiest, max_compaction_delay, LogSummary, LogToClean, OffsetsToClean,
    SegmentSummary,
};
pub use source::CleanerSource;
pub use throttle::{throttle_sleep_ms, Throttler, THROTTLE_CHECK_INTERVAL_MS};
