//! Kafka record formats as stored in `.log` files (docs/kafka-behaviour.md#record-formats, docs/kafka-behaviour.md#log-file).
//!
//! * [`RecordBatch`] — zero-copy view of a magic v2 batch over `&[u8]`, with its 61-byte
//!   header as the Pod struct [`RawBatchHeader`], CRC-32C validation, attribute decoding
//!   and record iteration ([`Records`], decompressing gzip/snappy/lz4/zstd when needed).
//! * [`LegacyBatch`] — view of a magic 0/1 log entry (CRC-32 IEEE), including compressed
//!   wrapper messages.
//! * [`FileBatch`] / [`BatchIter`] — batches of a file image regardless of magic, following
//!   Kafka's `FileLogInputStream` stop rules exactly ([`StopReason`]), and the
//!   `FileRecords` searches [`search_for_offset_with_size`], [`search_for_timestamp`],
//!   [`largest_timestamp_after`].
//! * [`ControlRecordType`] / [`EndTransactionMarker`] — control records.
//! * [`BatchBuilder`], [`control_batch`], [`LegacyMessage`], [`legacy_wrapper`] —
//!   encoders for uncompressed batches, and [`fixtures`] for the acceptance cases' test shapes.
//!
//! Conventions: all multi-byte integers on disk are big-endian (read through
//! [`index_core::codec`] types, never by hand); offsets are Kafka log offsets (`i64`);
//! timestamps are milliseconds since the Unix epoch (`i64`, −1 = none); positions are byte
//! positions in a file (`u64`); sizes are in bytes. No function panics on malformed
//! input: every problem is a [`RecordError`].
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod batch;
mod builder;
mod compression;
mod control;
mod error;
mod file_batch;
// Test fixtures: a fixed, valid input that fails to encode is a bug in the fixture.
#[allow(clippy::expect_used)]
pub mod fixtures;
mod iter;
mod legacy;
mod records;
mod varint;

pub use batch::{Attributes, RawBatchHeader, RecordBatch};
pub use builder::{control_batch, legacy_wrapper, BatchBuilder, LegacyMessage};
pub use compression::{
    compress, decompress, decompress_with_limit, CompressionType,
    DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES, XERIAL_SNAPPY_MAGIC,
};
pub use control::{ControlRecordType, EndTransactionMarker, RawControlKey, RawEndTxnMarkerValue};
pub use error::RecordError;
pub(crate) use file_batch::{frame_with, kafka_batch_size};
pub use file_batch::{FileBatch, Peek, StopReason, TimestampAndOffset, MIN_SIZE_FIELD};
pub use iter::{
    batches_from, largest_timestamp_after, peek_batch, read_log_file, search_for_offset_with_size,
    search_for_timestamp, BatchIter, OffsetPositionSize,
};
pub use legacy::{
    readable_value, KeyValue, LegacyBatch, RawLegacyHeader, RECORD_OVERHEAD_V0, RECORD_OVERHEAD_V1,
};
pub(crate) use records::RecordSummary;
pub use records::{increment_sequence, Header, Record, Records, TimestampType};

/// Bytes before a batch's payload common to all magics: base offset (8) + size (4) = 12
/// (Kafka `LOG_OVERHEAD`).
pub const LOG_OVERHEAD: usize = 12;
/// Position of the size field inside a batch: 8.
pub const SIZE_OFFSET: usize = 8;
/// Position of the magic byte inside a batch: 16.
pub const MAGIC_OFFSET: usize = 16;
/// Bytes needed to read a batch's size and magic: 17 (Kafka `HEADER_SIZE_UP_TO_MAGIC`).
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// Position of the CRC inside a v2 batch: 17 (the CRC covers bytes 21..end).
pub const CRC_OFFSET: usize = 17;
/// Size of the v2 batch header and the minimum v2 batch size: 61
/// (Kafka `RECORD_BATCH_OVERHEAD`).
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// Magic value of the legacy format without timestamps.
pub const MAGIC_V0: i8 = 0;
/// Magic value of the legacy format with timestamps.
pub const MAGIC_V1: i8 = 1;
/// Magic value of record batches.
pub const MAGIC_V2: i8 = 2;
/// "No timestamp": −1.
pub const NO_TIMESTAMP: i64 = -1;
/// "No sequence": −1.
pub const NO_SEQUENCE: i32 = -1;
/// "No producer id": −1.
pub const NO_PRODUCER_ID: i64 = -1;
/// "No producer epoch": −1.
pub const NO_PRODUCER_EPOCH: i16 = -1;
/// "No partition leader epoch": −1.
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;
