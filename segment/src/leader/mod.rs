//! The leader append path: [`Log::append_as_leader`](crate::Log::append_as_leader), Kafka's
//! `UnifiedLog.appendAsLeader` (docs/kafka-behaviour.md#leader-append).
//!
//! A leader, unlike a follower, assigns the offsets: the producer's batch arrives with base
//! offset 0, is checked, gets the log end offset as its base offset and the leader epoch as
//! its partition leader epoch, and is appended under the log's append lock (so concurrent
//! appenders get contiguous offsets, each exactly once). Kafka's rules applied on the way:
//!
//! * the batch-level checks of `UnifiedLog.analyzeAndValidateRecords` (size against
//!   `max.message.bytes`, CRC, base offset 0) and of `LogValidator` (record count against
//!   the last offset delta, no control batch from a client, sequence with a producer id),
//!   and the per-record checks (a key on compacted topics, timestamps within
//!   `message.timestamp.before.max.ms` / `after.max.ms`), reported with Kafka's
//!   per-record errors ([`RecordError`]);
//! * offsets assigned in place when the producer's compression is kept, the batch
//!   rebuilt when `compression.type` asks for another codec ([`TopicCompression`]);
//! * `message.timestamp.type=LogAppendTime` stamping ([`TimestampType`]);
//! * the producer rules of `ProducerAppendInfo` (epoch, sequence, transactions,
//!   coordinator epoch) and the duplicate detection of `ProducerStateEntry` over the last
//!   five batches of each producer.
//!
//! Files:
//! * `info.rs` — [`LogAppendInfo`];
//! * `batch_validation.rs` — Kafka's `LogValidator` for magic v2 batches: the batch and
//!   record checks, offsets and epoch assigned, the topic's codec and timestamp type
//!   applied.
//!
//! Re-exported here, from the lower layers that name them too: [`KafkaError`] and
//! [`RecordError`] ([`crate::error`]), [`TimestampType`] and [`TopicCompression`]
//! ([`crate::config`]), and [`AppendOrigin`] ([`crate::producer`], whose
//! `ProducerAppendInfo` checks, in `producer/append.rs`, the leader append runs).

pub(crate) mod batch_validation;
mod info;

pub use crate::config::{TimestampType, TopicCompression};
pub use crate::error::{KafkaError, RecordError};
pub use crate::producer::AppendOrigin;
pub use info::LogAppendInfo;
