//! Segment and log configuration (Kafka topic configs, docs/kafka-behaviour.md#config-defaults).

use std::hash::{BuildHasher, Hasher};

use crate::error::SegmentError;
use crate::record::CompressionType;

/// Smallest `segment.bytes` Kafka accepts: `LegacyRecord.RECORD_OVERHEAD_V0`, 14 bytes.
pub const MIN_SEGMENT_BYTES: u64 = 14;
/// Largest `segment.bytes`, `segment.index.bytes` and `index.interval.bytes` (Kafka's
/// `INT` settings): `i32::MAX`.
pub const MAX_INT_CONFIG: u64 = i32::MAX as u64;
/// Smallest `segment.index.bytes` accepted: two 12-byte time index slots. Kafka accepts 4,
/// which holds no entry of either index (8 and 12 bytes) and rolls a segment per append;
/// the time index keeps its last slot for the entry written at roll (Kafka's
/// `TimeIndex.isFull`), so it needs two slots to take one entry.
pub const MIN_INDEX_BYTES: usize = 24;

/// The topic's `message.timestamp.type` (Kafka's `TimestampType` for a topic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// `CreateTime` (Kafka's default): records keep the producer's timestamps, which must
    /// lie within `message.timestamp.before.max.ms` / `after.max.ms` of the log's clock.
    #[default]
    CreateTime,
    /// `LogAppendTime`: the batch is stamped with the log's clock at append; every record
    /// then reads with that timestamp. A producer batch already marked LogAppendTime is
    /// refused (`INVALID_TIMESTAMP`).
    LogAppendTime,
}

/// The topic's `compression.type` (Kafka's `BrokerCompressionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TopicCompression {
    /// `producer` (Kafka's default): keep the producer's codec; offsets are assigned in
    /// place.
    #[default]
    Producer,
    /// `uncompressed`: store records uncompressed (a compressed batch is rebuilt).
    Uncompressed,
    /// `gzip`.
    Gzip,
    /// `snappy`.
    Snappy,
    /// `lz4`.
    Lz4,
    /// `zstd`.
    Zstd,
}

impl TopicCompression {
    /// Every value of the setting, `producer` first, then the codecs in id order.
    pub const ALL: [TopicCompression; 6] = [
        TopicCompression::Producer,
        TopicCompression::Uncompressed,
        TopicCompression::Gzip,
        TopicCompression::Snappy,
        TopicCompression::Lz4,
        TopicCompression::Zstd,
    ];

    /// The codec stored for a batch the producer compressed with `source` (Kafka's
    /// `BrokerCompressionType.targetCompression`).
    pub fn target(self, source: CompressionType) -> CompressionType {
        match self {
            TopicCompression::Producer => source,
            TopicCompression::Uncompressed => CompressionType::None,
            TopicCompression::Gzip => CompressionType::Gzip,
            TopicCompression::Snappy => CompressionType::Snappy,
            TopicCompression::Lz4 => CompressionType::Lz4,
            TopicCompression::Zstd => CompressionType::Zstd,
        }
    }

    /// Kafka's name of the setting's value (`"producer"`, `"uncompressed"`, `"gzip"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TopicCompression::Producer => "producer",
            TopicCompression::Uncompressed => "uncompressed",
            TopicCompression::Gzip => "gzip",
            TopicCompression::Snappy => "snappy",
            TopicCompression::Lz4 => "lz4",
            TopicCompression::Zstd => "zstd",
        }
    }
}

/// Configuration of a [`Log`](crate::Log) and of the [`LogSegment`](crate::LogSegment)s it
/// creates. Defaults are Kafka's (docs/kafka-behaviour.md#config-defaults).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// `segment.bytes`: maximum size of a segment's `.log`, in bytes (default 1 GiB;
    /// at most `i32::MAX`, at least 14).
    pub segment_bytes: u64,
    /// `segment.ms`: roll a non-empty segment after this many milliseconds (default 7 days),
    /// measured from its first batch's timestamp to the incoming batch's max timestamp,
    /// or by the [`Clock`](crate::time::Clock) from the segment's creation when the first
    /// batch has no timestamp (see
    /// [`LogSegment::time_waited_for_roll`](crate::LogSegment::time_waited_for_roll)).
    pub segment_ms: i64,
    /// `segment.jitter.ms`: maximum random jitter subtracted from `segment_ms`, fixed per
    /// segment at creation (default 0).
    pub segment_jitter_ms: i64,
    /// `segment.index.bytes`: maximum size in bytes of each of a segment's `.index` and
    /// `.timeindex` files (default 10 MiB).
    pub max_index_size: usize,
    /// `index.interval.bytes`: bytes appended between sparse index entries (default 4096).
    pub index_interval_bytes: u64,
    /// `preallocate`: create each new `.log` at `segment_bytes` (sparse) and trim it on roll
    /// (default false).
    pub preallocate: bool,
    /// `retention.bytes`: delete oldest segments while the log is larger than this, in bytes;
    /// −1 = unlimited (default).
    pub retention_bytes: i64,
    /// `retention.ms`: delete segments whose largest timestamp is older than this many
    /// milliseconds; −1 = unlimited (default 7 days). Applied only by
    /// [`Log::delete_old_segments`](crate::Log::delete_old_segments), which compares the
    /// [`Clock`](crate::time::Clock) with the records' timestamps: with the default, data
    /// stamped more than 7 days before the clock's "now" goes at the first call.
    pub retention_ms: i64,
    /// `file.delete.delay.ms`: how long, in milliseconds on the log's
    /// [`Clock`](crate::time::Clock), the files of a segment that left the log (retention,
    /// `delete_records`, truncation) stay on disk under the `.deleted` suffix before they are
    /// removed, so that readers still holding the segment can finish (default 60000, as
    /// Kafka). 0 removes them at once. See [`deleter`](crate::deleter) for when the
    /// removal runs.
    pub file_delete_delay_ms: i64,
    /// `producer.id.expiration.ms`: a producer with no ongoing transaction whose last
    /// batch or marker is this many milliseconds older than the
    /// [`Clock`](crate::time::Clock) is forgotten when producer state is loaded from a
    /// snapshot (default 1 day, as Kafka).
    pub producer_id_expiration_ms: i64,
    /// `message.timestamp.type`: whether records keep the producer's timestamps or are
    /// stamped with the log's clock by [`Log::append_as_leader`](crate::Log::append_as_leader)
    /// (default `CreateTime`, as Kafka).
    pub message_timestamp_type: TimestampType,
    /// `message.timestamp.before.max.ms`: under `CreateTime`, how many milliseconds a
    /// record's timestamp may lie before the log's clock on a leader append (default
    /// `i64::MAX`: no bound, as Kafka; at least 0).
    pub message_timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`: under `CreateTime`, how many milliseconds a
    /// record's timestamp may lie after the log's clock on a leader append (default
    /// 3 600 000, one hour, as Kafka 4.x; at least 0).
    pub message_timestamp_after_max_ms: i64,
    /// `max.message.bytes`: the largest batch, in bytes, a leader append accepts, before
    /// and (when it rebuilt the batch) after recompression (default 1 048 588, as Kafka).
    pub max_message_bytes: u32,
    /// `compression.type`: the codec a leader append stores (default `producer`: the
    /// producer's codec).
    pub compression_type: TopicCompression,
    /// `cleanup.policy` contains `compact`: a leader append then refuses records without
    /// a key (default false: `delete`).
    pub compact: bool,
    /// `max.compaction.lag.ms`: for a compacted log, the time-based roll happens after at
    /// most this many milliseconds, so that the active segment's records become
    /// cleanable in time ([`max_segment_ms`](Self::max_segment_ms); default `i64::MAX`,
    /// as Kafka; at least 1). The cleaner's own use of it is
    /// `segment::clean::CompactionConfig::max_compaction_lag_ms`.
    pub max_compaction_lag_ms: i64,
    /// `remote.storage.enable`: the topic tiers its sealed segments to remote storage
    /// (KIP-405; default false). With it the log start offset is the checkpointed one
    /// even when the first local segment starts above it, the local log start offset
    /// may be above the log start, and ListOffsets −4, −5 and −6 answer from the tier
    /// state (`docs/kafka-behaviour.md#local-log-start-offset`,
    /// `docs/kafka-behaviour.md#list-offsets-tiered`).
    pub remote_storage_enable: bool,
    /// `local.retention.ms`: with [`remote_storage_enable`](Self::remote_storage_enable),
    /// how many milliseconds a segment stays on local disk by its largest timestamp before
    /// [`Log::delete_old_segments`](crate::Log::delete_old_segments) may delete it (once
    /// uploaded); −2 (default, [`LOCAL_RETENTION_USE_RETENTION`]) = use
    /// [`retention_ms`](Self::retention_ms), −1 = unlimited. Without remote storage it is
    /// ignored, as Kafka's `UnifiedLog.localRetentionMs` does
    /// (`docs/kafka-behaviour.md#local-retention`).
    pub local_retention_ms: i64,
    /// `local.retention.bytes`: with [`remote_storage_enable`](Self::remote_storage_enable),
    /// the local size in bytes above which the oldest uploaded segments are deleted from
    /// local disk; −2 (default) = use [`retention_bytes`](Self::retention_bytes), −1 =
    /// unlimited. Ignored without remote storage
    /// (`docs/kafka-behaviour.md#local-retention`).
    pub local_retention_bytes: i64,
}

/// Kafka's default of `local.retention.ms` and `local.retention.bytes`: −2, "use
/// `retention.ms` / `retention.bytes`" (`docs/kafka-behaviour.md#local-retention`).
pub const LOCAL_RETENTION_USE_RETENTION: i64 = -2;

/// Kafka's default `max.message.bytes`: 1 MiB plus the 12 bytes of a log entry header.
pub const DEFAULT_MAX_MESSAGE_BYTES: u32 = 1_048_588;
/// Kafka 4.x's default `message.timestamp.after.max.ms`: one hour.
pub const DEFAULT_MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = 3_600_000;
/// Kafka's default `producer.id.expiration.ms` (1 day); also at its older path
/// `producer::DEFAULT_PRODUCER_ID_EXPIRATION_MS`.
pub const DEFAULT_PRODUCER_ID_EXPIRATION_MS: i64 = 86_400_000;

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            segment_ms: 604_800_000,
            segment_jitter_ms: 0,
            max_index_size: 10 * 1024 * 1024,
            index_interval_bytes: 4096,
            preallocate: false,
            retention_bytes: -1,
            retention_ms: 604_800_000,
            file_delete_delay_ms: 60_000,
            producer_id_expiration_ms: DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            message_timestamp_type: TimestampType::CreateTime,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: DEFAULT_MESSAGE_TIMESTAMP_AFTER_MAX_MS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            compression_type: TopicCompression::Producer,
            compact: false,
            max_compaction_lag_ms: i64::MAX,
            remote_storage_enable: false,
            local_retention_ms: LOCAL_RETENTION_USE_RETENTION,
            local_retention_bytes: LOCAL_RETENTION_USE_RETENTION,
        }
    }
}

impl LogConfig {
    /// Checks every value against the range Kafka's `LogConfig` accepts
    /// (`ConfigDef.Range`), stricter where Kafka's range would leave the log unable to
    /// index a record:
    ///
    /// | setting | accepted |
    /// |---|---|
    /// | `segment.bytes` | [`MIN_SEGMENT_BYTES`] (14) ..= `i32::MAX` |
    /// | `segment.index.bytes` | [`MIN_INDEX_BYTES`] (24; Kafka: 4) ..= `i32::MAX` |
    /// | `index.interval.bytes` | 0 ..= `i32::MAX` |
    /// | `segment.ms` | ≥ 1 |
    /// | `segment.jitter.ms` | ≥ 0 |
    /// | `retention.ms` | ≥ −1 (−1 = unlimited) |
    /// | `retention.bytes` | any (negative = unlimited, as Kafka) |
    /// | `file.delete.delay.ms` | ≥ 0 |
    /// | `producer.id.expiration.ms` | 1 ..= `i32::MAX` (Kafka's `INT`, at least 1) |
    /// | `message.timestamp.before.max.ms` | ≥ 0 |
    /// | `message.timestamp.after.max.ms` | ≥ 0 |
    /// | `max.message.bytes` | 0 ..= `i32::MAX` |
    /// | `local.retention.ms`, `local.retention.bytes` | ≥ −2 (−2 = use `retention.*`, −1 = unlimited) |
    ///
    /// With `remote.storage.enable`, as Kafka's `validateRemoteStorageRetentionTime` /
    /// `…Size`: when `retention.ms` is not −1 (`retention.bytes` is at least 0) and
    /// `local.retention.ms` (`local.retention.bytes`) is not −2, the local value must be
    /// neither −1 nor above the full one (`docs/kafka-behaviour.md#local-retention`).
    ///
    /// [`Log::open`](crate::Log::open) calls it before touching the directory.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] naming the first setting out of range.
    pub fn validate(&self) -> Result<(), SegmentError> {
        fn bad(name: &'static str, value: impl ToString, reason: &str) -> SegmentError {
            SegmentError::InvalidConfig {
                name,
                value: value.to_string(),
                reason: reason.to_string(),
            }
        }
        if !(MIN_SEGMENT_BYTES..=MAX_INT_CONFIG).contains(&self.segment_bytes) {
            return Err(bad(
                "segment.bytes",
                self.segment_bytes,
                "must be in [14, 2147483647] (at least LegacyRecord.RECORD_OVERHEAD_V0)",
            ));
        }
        if self.max_index_size < MIN_INDEX_BYTES || self.max_index_size as u64 > MAX_INT_CONFIG {
            return Err(bad(
                "segment.index.bytes",
                self.max_index_size,
                "must be in [24, 2147483647] (room for one offset index entry and one time \
                 index entry besides the time index's reserved last slot)",
            ));
        }
        if self.index_interval_bytes > MAX_INT_CONFIG {
            return Err(bad(
                "index.interval.bytes",
                self.index_interval_bytes,
                "must be in [0, 2147483647]",
            ));
        }
        if self.max_compaction_lag_ms < 1 {
            return Err(bad(
                "max.compaction.lag.ms",
                self.max_compaction_lag_ms,
                "must be at least 1",
            ));
        }
        if self.segment_ms < 1 {
            return Err(bad("segment.ms", self.segment_ms, "must be at least 1"));
        }
        if self.segment_jitter_ms < 0 {
            return Err(bad(
                "segment.jitter.ms",
                self.segment_jitter_ms,
                "must be at least 0",
            ));
        }
        if self.retention_ms < -1 {
            return Err(bad(
                "retention.ms",
                self.retention_ms,
                "must be at least -1 (-1 = unlimited)",
            ));
        }
        if self.file_delete_delay_ms < 0 {
            return Err(bad(
                "file.delete.delay.ms",
                self.file_delete_delay_ms,
                "must be at least 0",
            ));
        }
        if !(1..=i64::from(i32::MAX)).contains(&self.producer_id_expiration_ms) {
            return Err(bad(
                "producer.id.expiration.ms",
                self.producer_id_expiration_ms,
                "must be in [1, 2147483647]",
            ));
        }
        for (name, value) in [
            (
                "message.timestamp.before.max.ms",
                self.message_timestamp_before_max_ms,
            ),
            (
                "message.timestamp.after.max.ms",
                self.message_timestamp_after_max_ms,
            ),
        ] {
            if value < 0 {
                return Err(bad(name, value, "must be at least 0"));
            }
        }
        if u64::from(self.max_message_bytes) > MAX_INT_CONFIG {
            return Err(bad(
                "max.message.bytes",
                self.max_message_bytes,
                "must be in [0, 2147483647]",
            ));
        }
        for (name, local, full, full_set) in [
            (
                "local.retention.ms",
                self.local_retention_ms,
                self.retention_ms,
                self.retention_ms != -1,
            ),
            (
                "local.retention.bytes",
                self.local_retention_bytes,
                self.retention_bytes,
                self.retention_bytes > -1,
            ),
        ] {
            if local < LOCAL_RETENTION_USE_RETENTION {
                return Err(bad(
                    name,
                    local,
                    "must be at least -2 (-2 = use retention.*, -1 = unlimited)",
                ));
            }
            if self.remote_storage_enable && full_set && local != LOCAL_RETENTION_USE_RETENTION {
                if local == -1 {
                    return Err(bad(
                        name,
                        local,
                        "must not be -1 while the full retention is bounded",
                    ));
                }
                if local > full {
                    return Err(bad(name, local, "must not be above the full retention"));
                }
            }
        }
        Ok(())
    }

    /// Kafka's `UnifiedLog.localRetentionMs`: with remote storage, `local.retention.ms`
    /// (−2 resolved to `retention.ms`); without it, `retention.ms`. In milliseconds, −1 =
    /// unlimited (`docs/kafka-behaviour.md#local-retention`).
    pub fn effective_local_retention_ms(&self) -> i64 {
        if self.remote_storage_enable && self.local_retention_ms != LOCAL_RETENTION_USE_RETENTION {
            self.local_retention_ms
        } else {
            self.retention_ms
        }
    }

    /// Kafka's `UnifiedLog.localRetentionSize`: with remote storage,
    /// `local.retention.bytes` (−2 resolved to `retention.bytes`); without it,
    /// `retention.bytes`. In bytes, negative = unlimited
    /// (`docs/kafka-behaviour.md#local-retention`).
    pub fn effective_local_retention_bytes(&self) -> i64 {
        if self.remote_storage_enable && self.local_retention_bytes != LOCAL_RETENTION_USE_RETENTION
        {
            self.local_retention_bytes
        } else {
            self.retention_bytes
        }
    }

    /// Kafka's `LogConfig.maxSegmentMs`: the time after which a non-empty active segment
    /// rolls, `segment.ms`, or for a compacted log the lower of it and
    /// `max.compaction.lag.ms`, so that no record waits longer than that lag to become
    /// cleanable (`docs/kafka-behaviour.md#cleaner-max-lag-roll`).
    pub fn max_segment_ms(&self) -> i64 {
        if self.compact && self.max_compaction_lag_ms > 0 {
            self.max_compaction_lag_ms.min(self.segment_ms)
        } else {
            self.segment_ms
        }
    }

    /// Kafka's `randomSegmentJitter()`: 0 if `segment_jitter_ms` is 0, otherwise a random
    /// value in `[0, min(segment_jitter_ms, segment_ms))` milliseconds.
    pub fn random_segment_jitter(&self) -> i64 {
        if self.segment_jitter_ms <= 0 {
            return 0;
        }
        let bound = self.segment_jitter_ms.min(self.segment_ms).max(1);
        let r = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        (r % bound as u64) as i64
    }
}

/// The arguments of [`LogSegment::should_roll`](crate::LogSegment::should_roll) (Kafka's
/// `RollParams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollParams {
    /// `segment.ms` (or `min(max.compaction.lag.ms, segment.ms)` for compacted topics), ms.
    pub max_segment_ms: i64,
    /// `segment.bytes`, bytes.
    pub max_segment_bytes: u64,
    /// Largest timestamp among the incoming batches, ms since epoch (−1 if none).
    pub max_timestamp_in_messages: i64,
    /// Largest offset among the incoming batches.
    pub max_offset_in_messages: i64,
    /// Size of the incoming batches, bytes.
    pub messages_size: u64,
    /// Current time, ms since epoch.
    pub now: i64,
}
