//! What a leader append reports ([`LogAppendInfo`]) and the settings it reads
//! ([`AppendOrigin`], [`TimestampType`], [`TopicCompression`]).

use crate::record::CompressionType;

/// Who writes to the leader (Kafka's `AppendOrigin`), which decides the checks applied
/// (docs/kafka-behaviour.md#leader-origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppendOrigin {
    /// A producer (Kafka `CLIENT`): batches must start at offset 0, may not be control
    /// batches, and idempotent batches have their sequence numbers checked; a retry of
    /// one of the producer's last five batches is answered as a duplicate.
    Client,
    /// The transaction or group coordinator (Kafka `COORDINATOR`): may write control
    /// batches (end-transaction markers, checked against the coordinator epoch); no
    /// sequence check and no duplicate detection.
    Coordinator,
}

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

/// What [`Log::append_as_leader`](crate::Log::append_as_leader) did (Kafka's
/// `LogAppendInfo` for a leader append). Offsets are log offsets, timestamps ms since the
/// epoch (−1 = none), sizes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogAppendInfo {
    /// First offset assigned (for a duplicate: the original batch's first offset; −1 if
    /// the input held no complete batch).
    pub first_offset: i64,
    /// Last offset assigned (for a duplicate: the original batch's last offset; −1 if the
    /// input held no complete batch).
    pub last_offset: i64,
    /// The partition leader epoch the producer's last batch carried before the leader
    /// set its own (Kafka reports the incoming value; `None` for −1, what producers send).
    pub last_leader_epoch: Option<i32>,
    /// Largest record timestamp of the batch as stored (the append time under
    /// LogAppendTime).
    pub max_timestamp: i64,
    /// The offset the time index associates with `max_timestamp`: the last offset of the
    /// batch (Kafka's batch granularity, docs/kafka-behaviour.md#leader-append).
    pub offset_of_max_timestamp: i64,
    /// The log's clock at append under `message.timestamp.type=LogAppendTime`, −1
    /// otherwise; for a duplicate, the original batch's max timestamp (as Kafka answers).
    pub log_append_time: i64,
    /// The log start offset after the append.
    pub log_start_offset: i64,
    /// Number of batches in the input.
    pub num_batches: usize,
    /// Number of records in the input.
    pub num_records: u64,
    /// Bytes of complete batches in the input (Kafka's `validBytes`; bytes after the last
    /// complete batch are ignored, as Kafka trims them).
    pub valid_bytes: u64,
    /// The producer's codec (the last compressed batch's; `None` if none was compressed).
    pub source_compression: CompressionType,
    /// The codec stored.
    pub target_compression: CompressionType,
    /// `true` when the batch repeats one of the producer's last five batches: nothing was
    /// appended and the offsets are the original's.
    pub duplicate: bool,
}

impl LogAppendInfo {
    /// The answer for an input without a complete batch: nothing appended.
    pub(crate) fn empty(log_start_offset: i64) -> Self {
        LogAppendInfo {
            first_offset: -1,
            last_offset: -1,
            last_leader_epoch: None,
            max_timestamp: -1,
            offset_of_max_timestamp: -1,
            log_append_time: -1,
            log_start_offset,
            num_batches: 0,
            num_records: 0,
            valid_bytes: 0,
            source_compression: CompressionType::None,
            target_compression: CompressionType::None,
            duplicate: false,
        }
    }
}
