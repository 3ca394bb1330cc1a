//! What a leader append reports ([`LogAppendInfo`]).

use crate::record::CompressionType;

/// What [`Log::append_as_leader`](crate::Log::append_as_leader) did (Kafka's
/// `LogAppendInfo` for a leader append). Offsets are log offsets, timestamps ms since the
/// epoch (−1 = none), sizes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogAppendInfo {
    /// First offset assigned (for a duplicate: the original batch's first offset).
    pub first_offset: i64,
    /// Last offset assigned (for a duplicate: the original batch's last offset).
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
