//! [`BatchFormat`]: the seam between the segment machinery and the bytes of a log file.
//!
//! Everything that `LogSegment`, `Log`, recovery and the dump tools need to know about a
//! `.log` file goes through this trait: how many bytes to read to learn a batch's size,
//! the header fields of a batch ([`BatchInfo`]), checksum validation, and a record-level
//! timestamp search. [`KafkaBatchFormat`] implements it for Kafka's formats (magic v2 record
//! batches plus legacy magic 0/1 message sets); another storage engine can embed the
//! segment crate with its own batch format by implementing the trait on a zero-sized type
//! and using it as the `F` type parameter (static dispatch, `F: BatchFormat =
//! KafkaBatchFormat`; the trait has only associated functions and constants, so it is not
//! object safe by design).
//!
//! # The framing contract
//!
//! A log file is a concatenation of batches with no file header and no padding. Each
//! batch announces its own total size in its first [`BatchFormat::HEADER_PEEK_BYTES`]
//! bytes. [`scan`] walks a file image with these rules (Kafka's `FileLogInputStream`
//! rules, docs/kafka-behaviour.md#batch-iteration, for [`KafkaBatchFormat`]):
//!
//! 1. [`BatchFormat::peek_size`] returns `Ok(None)` → clean end (too few bytes remain);
//! 2. it returns an error → the batch is corrupt (recovery truncates here);
//! 3. the announced size runs past the end → clean end (torn tail, ignored);
//! 4. otherwise the batch's bytes are handed to [`BatchFormat::parse_header`] and the scan
//!    advances by the announced size.
//!
//! A batch whose [`peek_size`](BatchFormat::peek_size) announces 0 bytes is treated as
//! corrupt (so a zero-filled tail always stops the scan). [`scan`] and most `.log` readers
//! of `LogSegment` hand [`BatchFormat::parse_header`] the whole batch; the offset search
//! behind `LogSegment::translate_offset` (every fetch and offset lookup) reads and passes
//! only the first `min(MAX_HEADER_BYTES, size)` bytes of each batch
//! ([`BatchFormat::MAX_HEADER_BYTES`]; at least `HEADER_PEEK_BYTES`), so a format's
//! `parse_header` must not look further.
//!
//! Units: offsets are log offsets (`i64`), timestamps are milliseconds since the Unix epoch
//! (`i64`, −1 = none), positions are byte positions (`u64`), sizes are bytes.
//!
//! # Who calls what
//!
//! | method | called by | on |
//! |---|---|---|
//! | [`peek_size`](BatchFormat::peek_size), [`parse_header`](BatchFormat::parse_header) | every walk over batches: [`Log::append`](crate::Log::append) (its input), recovery, offset and timestamp lookups, [`Log::read`](crate::Log::read) (to find the start batch), [`scan`] | every batch walked |
//! | [`validate`](BatchFormat::validate) | [`Log::append`](crate::Log::append) (every input batch, before anything is written) and recovery (every batch scanned) | never on reads: [`Log::read`](crate::Log::read) returns the stored bytes unchecked |
//! | [`search_timestamp`](BatchFormat::search_timestamp) | [`Log::offset_for_timestamp`](crate::Log::offset_for_timestamp) and `LogSegment::find_offset_by_timestamp` | only batches whose [`BatchInfo::max_timestamp`] reaches the target |
//! | [`end_txn_marker`](BatchFormat::end_txn_marker) | recovery, only when [`BatchFormat::KAFKA_PRODUCER_STATE`] is `true` | control batches |
//! | [`assign_base_offset`](BatchFormat::assign_base_offset), [`set_partition_leader_epoch`](BatchFormat::set_partition_leader_epoch), [`stamp_log_append_time`](BatchFormat::stamp_log_append_time) | [`Log::append_as_leader`](crate::Log::append_as_leader) (the last only under `message.timestamp.type=LogAppendTime`) | every input batch, after [`validate`](BatchFormat::validate) |
//!
//! The `position` argument of every method is the batch's byte position in whatever the
//! caller is walking: the `.log` file for recovery and lookups, the input buffer for
//! [`Log::append`](crate::Log::append) (the first batch is at 0), the slice given to
//! [`scan`]. Use it for error messages and to fill [`BatchInfo::position`]; never to
//! decode.
//!
//! # Implementing a format
//!
//! The offsets are the caller's: [`Log::append`](crate::Log::append) stores batches that
//! already carry their offsets (it does not assign them), so an embedder reads
//! [`Log::log_end_offset`](crate::Log::log_end_offset) and encodes it as the next batch's
//! base offset. Or the log assigns them:
//! [`Log::append_as_leader`](crate::Log::append_as_leader) writes the log end offset into
//! each batch with [`BatchFormat::assign_base_offset`], which a format implements when
//! its base offset can be patched in place (the default refuses). The format type is named when opening:
//! `LogOptions::<Tiny>::new().open(..)` ([`Log::open`](crate::Log::open) is Kafka's format). Reads return the raw bytes of your
//! batches; walk them with [`scan`]. The crate does not export a CRC helper; the example
//! uses the `crc32c` crate.
//!
//! A complete queue with its own format, `Tiny` (length-prefixed batches with a CRC-32C
//! and per-record timestamps; its layout and its `BatchFormat` implementation are in
//! `examples/tiny/format.rs`, the workspace's one example format, which the `tiny_queue`
//! example and `xtask/lean-embedder` use too): small segments that roll, a torn last batch
//! recovered after a crash, and lookups by offset and by timestamp.
//!
//! ```
//! mod tiny { include!("../examples/tiny/format.rs"); } // `Tiny`, `Tiny::encode`, `Tiny::decode`
//! use segment::format::{scan, BatchFormat};
//! use segment::{LogConfig, LogOptions};
//! use std::sync::atomic::Ordering;
//! use tiny::Tiny;
//!
//! let dir = tempfile::tempdir()?;
//! let config = LogConfig {
//!     segment_bytes: 200, // three batches per segment
//!     ..LogConfig::default()
//! };
//! let log = LogOptions::<Tiny>::new().open(dir.path(), config.clone())?;
//!
//! // Ten batches of two records: offsets 0..20, record k at t0 + 10k ms.
//! let t0 = 1_700_000_000_000;
//! let mut last_batch_size = 0;
//! for _ in 0..10 {
//!     let base = log.log_end_offset(); // the caller assigns offsets
//!     let payload = format!("event {base}");
//!     let batch = Tiny::encode(base, &[(t0 + 10 * base, payload.as_bytes()), (t0 + 10 * base + 10, b"x")]);
//!     last_batch_size = log.append(&batch)?.size;
//! }
//! assert_eq!(log.log_end_offset(), 20);
//! assert!(log.segments().number_of_segments() > 1);
//!
//! // By offset: the bytes start at the batch holding offset 7 (offsets 6..=7). Reads do
//! // not verify checksums: validate what you read if you need to.
//! let fetch = log.read(7, 1)?; // at least one whole batch
//! let batch = scan::<Tiny>(&fetch.records, 0).next().unwrap()?;
//! Tiny::validate(batch.bytes, batch.info.position)?;
//! assert_eq!((batch.info.base_offset, batch.info.last_offset), (6, 7));
//! assert_eq!(Tiny::decode(batch.bytes, 0)?[1], (7, t0 + 70, &b"x"[..]));
//!
//! // By timestamp: the first record at or after t0 + 65 ms.
//! let found = log.offset_for_timestamp(t0 + 65)?.unwrap();
//! assert_eq!((found.offset, found.timestamp), (7, t0 + 70));
//!
//! // A crash: the last batch is torn on disk and the log is dropped without `close`.
//! let active = log.segments().active_segment()?;
//! let (path, size) = (active.log_path(), active.size());
//! drop((active, log)); // no clean-shutdown marker: the next open recovers
//! std::fs::OpenOptions::new().write(true).open(&path)?.set_len(size - 5)?;
//!
//! // Recovery validates every batch and truncates the torn one.
//! let log = LogOptions::<Tiny>::new().open(dir.path(), config)?;
//! assert_eq!(log.stats().bytes_truncated.load(Ordering::Relaxed), last_batch_size - 5);
//! assert_eq!(log.log_end_offset(), 18);
//! assert_eq!(log.offset_for_timestamp(t0 + 165)?.unwrap().offset, 17);
//! assert_eq!(log.offset_for_timestamp(t0 + 175)?, None); // offsets 18 and 19 are gone
//! log.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use crate::record::{
    self, ControlRecordType, EndTransactionMarker, FileBatch, Peek, RawBatchHeader, RecordError,
    StopReason, TimestampAndOffset, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET,
    NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD, RECORD_OVERHEAD_V1,
};
use index_core::codec::{I16Be, I32Be, I64Be, U32Be};

/// Why a batch could not be read, classified the way log recovery needs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The framing or checksum of the batch at `position` is broken (Kafka
    /// `CorruptRecordException`). Recovery stops here and truncates the file.
    #[error("corrupt batch at position {position}: {reason}")]
    Corrupt {
        /// Byte position of the batch.
        position: u64,
        /// What is wrong.
        reason: String,
    },
    /// The batch frame is intact but its content is malformed (Kafka
    /// `InvalidRecordException`). Recovery also stops here and truncates.
    #[error("invalid record in batch at position {position}: {reason}")]
    InvalidRecord {
        /// Byte position of the batch.
        position: u64,
        /// What is wrong.
        reason: String,
    },
    /// The batch uses a feature this reader does not support (unknown codec, failed or
    /// oversized decompression). Not a statement that the data is damaged: recovery
    /// should propagate it rather than truncate.
    #[error("unsupported batch at position {position}: {reason}")]
    Unsupported {
        /// Byte position of the batch.
        position: u64,
        /// What is unsupported.
        reason: String,
    },
}

impl FormatError {
    /// Byte position of the batch concerned.
    pub fn position(&self) -> u64 {
        match self {
            FormatError::Corrupt { position, .. }
            | FormatError::InvalidRecord { position, .. }
            | FormatError::Unsupported { position, .. } => *position,
        }
    }

    /// `true` for [`FormatError::Corrupt`] and [`FormatError::InvalidRecord`]: the errors at
    /// which Kafka's recovery stops and truncates.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            FormatError::Corrupt { .. } | FormatError::InvalidRecord { .. }
        )
    }
}

impl From<RecordError> for FormatError {
    fn from(e: RecordError) -> Self {
        let position = e.position().unwrap_or(0);
        match e {
            RecordError::CorruptRecord { position, reason } => {
                FormatError::Corrupt { position, reason }
            }
            RecordError::InvalidRecord { position, reason } => {
                FormatError::InvalidRecord { position, reason }
            }
            // Damaged data, as an invalid record (recovery stops there); only a produce's
            // answer tells it apart (`decode_error_kind`).
            e @ RecordError::RecordLengthOverlong { .. } => FormatError::InvalidRecord {
                position,
                reason: e.to_string(),
            },
            other => FormatError::Unsupported {
                position,
                reason: other.to_string(),
            },
        }
    }
}

/// Header-level facts about one batch: all the segment machinery needs without decoding
/// records. Built by [`BatchFormat::parse_header`] with a struct literal.
///
/// A format that is not Kafka's fills `position`, `base_offset`, `last_offset`,
/// `max_timestamp`, `offset_of_max_timestamp` and `size_in_bytes`, and sets the
/// Kafka-only fields to "none": `is_control: false`, `is_transactional: false`,
/// `producer_id: -1`, `producer_epoch: -1`, `base_sequence: -1`, `last_sequence: -1`,
/// `partition_leader_epoch: -1` and any `magic` (these are read only when
/// [`BatchFormat::KAFKA_PRODUCER_STATE`] is `true`, except that the default
/// [`BatchFormat::search_timestamp`] reports a `partition_leader_epoch` other than −1 as
/// the leader epoch). See the example in the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchInfo {
    /// Byte position of the batch in what the caller is walking (its file, or a buffer):
    /// the `position` argument of [`BatchFormat::parse_header`], echoed.
    pub position: u64,
    /// First offset. For a Kafka legacy compressed wrapper this is the wrapper (last)
    /// offset, since finding the first inner offset needs decompression.
    pub base_offset: i64,
    /// Last offset (Kafka `lastOffset`; for legacy entries the entry offset). At least
    /// `base_offset` ([`Log::append`](crate::Log::append) rejects a batch where it is
    /// lower); the log end offset after this batch is `last_offset + 1`.
    pub last_offset: i64,
    /// Max timestamp in ms since epoch (−1 if none, e.g. magic 0). Feeds the time index;
    /// timestamp lookups only look inside batches whose max timestamp reaches the target.
    pub max_timestamp: i64,
    /// The offset the time index associates with `max_timestamp` at batch granularity.
    /// Kafka (since KAFKA-16310, and on every recovery): the batch's last offset. It must
    /// lie in `base_offset..=last_offset` (a timestamp lookup starts from the batch
    /// holding it); `last_offset` is always a correct choice, and the exact offset of the
    /// record carrying the max timestamp is one too.
    pub offset_of_max_timestamp: i64,
    /// Total size of the batch in bytes, header included: the value
    /// [`BatchFormat::peek_size`] announced.
    pub size_in_bytes: usize,
    /// Control batch (transaction markers, KRaft control records).
    pub is_control: bool,
    /// Transactional batch.
    pub is_transactional: bool,
    /// Producer id (−1 = none).
    pub producer_id: i64,
    /// Producer epoch (−1 = none).
    pub producer_epoch: i16,
    /// Base sequence (−1 = none).
    pub base_sequence: i32,
    /// Last sequence (−1 = none; wraps past `i32::MAX` to 0).
    pub last_sequence: i32,
    /// Partition leader epoch (−1 = none).
    pub partition_leader_epoch: i32,
    /// Format version byte (Kafka magic: 0, 1 or 2). Only read when
    /// [`BatchFormat::KAFKA_PRODUCER_STATE`] is `true` (magic ≥ 2 then means a Kafka v2
    /// batch); any value for other formats.
    pub magic: i8,
}

impl BatchInfo {
    /// A batch of a non-Kafka format: the fields every format has, with the Kafka-only
    /// fields set to "none" (no producer, sequence or leader epoch, not control, not
    /// transactional, magic 0) and `offset_of_max_timestamp = last_offset` (batch
    /// granularity, always correct). Adjust fields afterwards if your format has them.
    ///
    /// * `position`: the `position` argument of [`BatchFormat::parse_header`];
    /// * `base_offset..=last_offset`: the offsets the batch holds;
    /// * `max_timestamp`: ms since epoch, −1 if the batch has none;
    /// * `size_in_bytes`: total batch size, header included (what `peek_size` announced).
    pub const fn new(
        position: u64,
        base_offset: i64,
        last_offset: i64,
        max_timestamp: i64,
        size_in_bytes: usize,
    ) -> Self {
        BatchInfo {
            position,
            base_offset,
            last_offset,
            max_timestamp,
            offset_of_max_timestamp: last_offset,
            size_in_bytes,
            is_control: false,
            is_transactional: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            magic: 0,
        }
    }
}

/// How a storage engine's `.log` files are framed and read. See the [module docs](self)
/// for the framing contract, which method is called when, and a complete example of a
/// custom format used with [`Log`](crate::Log). Implementations are zero-sized marker
/// types; every method is an associated function so that generic code is monomorphised
/// (no `dyn`).
///
/// Errors: return [`FormatError::Corrupt`] (or [`FormatError::InvalidRecord`]) for damaged
/// bytes — recovery truncates the log there, [`Log::append`](crate::Log::append) refuses
/// the input — and [`FormatError::Unsupported`] only for intact data this reader cannot
/// handle: recovery does not truncate it, [`Log::open`](crate::Log::open) fails instead.
pub trait BatchFormat: Send + Sync + 'static {
    /// Short name for messages and tools (`"kafka"`).
    const NAME: &'static str;

    /// Bytes that must remain from a batch start for [`BatchFormat::peek_size`] to decide
    /// (callers pass `min(HEADER_PEEK_BYTES, remaining)` bytes): typically the end of your
    /// size field (4 for a leading `u32` length). Kafka: 18 — its iterator reads 17 bytes
    /// (`HEADER_SIZE_UP_TO_MAGIC`) but stops when fewer than 18 remain.
    const HEADER_PEEK_BYTES: usize;

    /// Upper bound of the bytes [`BatchFormat::parse_header`] looks at: the size of your
    /// batch header (Kafka: 61, the v2 header). Callers reading from a file may pass just
    /// `min(MAX_HEADER_BYTES, batch size)` bytes, and the offset search of
    /// `LogSegment::translate_offset` does: it reads only that much of each batch it
    /// passes (or `HEADER_PEEK_BYTES`, if larger).
    const MAX_HEADER_BYTES: usize;

    /// Whether recovery should treat batches whose [`BatchInfo::magic`] is 2 or more as
    /// Kafka v2 batches: rebuild the leader-epoch cache from their partition leader epoch
    /// and track producer transactions (control markers, `.txnindex` entries). `false` by
    /// default, so a third-party format never has Kafka semantics applied to its fields
    /// by accident; [`KafkaBatchFormat`] sets it to `true`.
    const KAFKA_PRODUCER_STATE: bool = false;

    /// Reads the total size in bytes of the batch starting at `header[0]`.
    ///
    /// `header` holds the bytes from the batch start to the end of the file, or at least
    /// [`BatchFormat::HEADER_PEEK_BYTES`] of them; it may be shorter, even empty, at the end
    /// of a file or buffer. Returns `Ok(None)` when too few bytes remain to hold a batch (a
    /// clean end of iteration, or a torn tail if some bytes remain), `Ok(Some(size))`
    /// otherwise, where `size` is the whole batch, the size field itself included. Only
    /// the size field needs checking here: the caller treats a size running past the end
    /// as a torn tail (ignored by readers, truncated by recovery) and `Some(0)` as corrupt.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] if the size field is impossible (Kafka: < 14; reject at
    /// least sizes below your header size, so that zero bytes read as corruption).
    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError>;

    /// Parses the header of the batch starting at `bytes[0]` (located at `position`).
    /// `bytes` holds at least `min(MAX_HEADER_BYTES, batch size)` bytes of the batch; bytes
    /// after the batch are ignored. Does not verify the checksum. Called only after
    /// [`BatchFormat::peek_size`] accepted the batch; [`BatchInfo::size_in_bytes`] must be
    /// the size it announced. See [`BatchInfo`] for what to put in the Kafka-only fields.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] if the header is unreadable (too short, impossible size,
    /// unknown version).
    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError>;

    /// Verifies the checksum (and whatever else is cheap and structural) of the complete
    /// batch `batch` (exactly its bytes, or more: read the batch's own size, not
    /// `batch.len()`). Kafka `ensureValid`: it does not decode records.
    ///
    /// Called on every batch given to [`Log::append`](crate::Log::append) and on every
    /// batch recovery scans; never on reads ([`Log::read`](crate::Log::read), [`scan`]),
    /// so a reader that wants checked data calls it on what it read.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] on checksum mismatch or broken framing: recovery truncates
    /// the log at this batch.
    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError>;

    /// Within the complete batch `batch`, finds the first record with
    /// `timestamp ≥ target_timestamp` and `offset ≥ starting_offset` (the per-batch step of
    /// Kafka's `FileRecords.searchForTimestamp`).
    ///
    /// Called only for batches whose [`BatchInfo::max_timestamp`] is ≥ `target_timestamp`;
    /// `Ok(None)` moves the search on to the next batch. Override it to answer the exact
    /// record (decode your records); a format without leader epochs returns
    /// `leader_epoch: None`.
    ///
    /// The default works at batch granularity: if the batch's max timestamp reaches the
    /// target and its last offset reaches `starting_offset`, it answers
    /// `(max_timestamp, max(base_offset, starting_offset))` — an offset no later than the
    /// exact record's, so a consumer starting there misses nothing.
    ///
    /// # Errors
    /// Those of [`BatchFormat::parse_header`] (and of record decoding in overrides).
    fn search_timestamp(
        batch: &[u8],
        position: u64,
        target_timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>, FormatError> {
        let info = Self::parse_header(batch, position)?;
        if info.max_timestamp >= target_timestamp && info.last_offset >= starting_offset {
            Ok(Some(TimestampAndOffset {
                timestamp: info.max_timestamp,
                offset: info.base_offset.max(starting_offset),
                leader_epoch: (info.partition_leader_epoch != NO_PARTITION_LEADER_EPOCH)
                    .then_some(info.partition_leader_epoch),
            }))
        } else {
            Ok(None)
        }
    }

    /// The end-transaction marker carried by the complete batch `batch`, if it is a
    /// control batch whose first record is an ABORT or COMMIT marker (what producer-state
    /// tracking and the transaction index need). Default: formats without transactions
    /// return `Ok(None)`.
    ///
    /// # Errors
    /// [`FormatError::InvalidRecord`] for a malformed control record.
    fn end_txn_marker(
        batch: &[u8],
        position: u64,
    ) -> Result<Option<EndTransactionMarker>, FormatError> {
        let _ = (batch, position);
        Ok(None)
    }

    /// Sets the base offset of the complete batch `batch` to `base_offset` in place (the
    /// leader assigns offsets: [`Log::append_as_leader`](crate::Log::append_as_leader)
    /// calls it on every input batch, the first at the log end offset, each next one after
    /// the previous batch's [`BatchInfo::last_offset`] as re-read with
    /// [`parse_header`](BatchFormat::parse_header)). Keep the checksum valid (Kafka's base
    /// offset lies outside its CRC, so nothing else changes).
    ///
    /// The default refuses: a format that does not implement it can only be appended to
    /// with [`Log::append`](crate::Log::append).
    ///
    /// # Errors
    /// [`FormatError::Unsupported`] (the default), or what the format finds wrong.
    fn assign_base_offset(
        batch: &mut [u8],
        position: u64,
        base_offset: i64,
    ) -> Result<(), FormatError> {
        let _ = (batch, base_offset);
        Err(FormatError::Unsupported {
            position,
            reason: format!(
                "the {} batch format does not assign offsets (BatchFormat::assign_base_offset)",
                Self::NAME
            ),
        })
    }

    /// Records the leader epoch `epoch` in the complete batch `batch`, in place (Kafka's
    /// `setPartitionLeaderEpoch`, outside its CRC), on a leader append. The default does
    /// nothing: a format without leader epochs.
    ///
    /// # Errors
    /// What the format finds wrong.
    fn set_partition_leader_epoch(
        batch: &mut [u8],
        position: u64,
        epoch: i32,
    ) -> Result<(), FormatError> {
        let _ = (batch, position, epoch);
        Ok(())
    }

    /// Stamps the complete batch `batch` with the log-append time `now_ms` (ms since the
    /// epoch) in place, keeping its checksum valid (Kafka's
    /// `setMaxTimestamp(LOG_APPEND_TIME, now)`), when the log's
    /// [`LogConfig::message_timestamp_type`](crate::LogConfig::message_timestamp_type) is
    /// `LogAppendTime`. The default refuses.
    ///
    /// # Errors
    /// [`FormatError::Unsupported`] (the default), or what the format finds wrong.
    fn stamp_log_append_time(
        batch: &mut [u8],
        position: u64,
        now_ms: i64,
    ) -> Result<(), FormatError> {
        let _ = (batch, now_ms);
        Err(FormatError::Unsupported {
            position,
            reason: format!(
                "the {} batch format has no log-append time (BatchFormat::stamp_log_append_time)",
                Self::NAME
            ),
        })
    }
}

/// Kafka's on-disk formats: magic v2 record batches and legacy magic 0/1 message sets,
/// read with exactly the iteration rules of Kafka's `FileLogInputStream` (docs/kafka-behaviour.md#batch-iteration).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct KafkaBatchFormat;

impl BatchFormat for KafkaBatchFormat {
    const NAME: &'static str = "kafka";
    const HEADER_PEEK_BYTES: usize = HEADER_SIZE_UP_TO_MAGIC + 1;
    const MAX_HEADER_BYTES: usize = RECORD_BATCH_OVERHEAD;
    const KAFKA_PRODUCER_STATE: bool = true;

    // `#[inline]`: generic code (`Log<KafkaBatchFormat>`, `scan::<KafkaBatchFormat>`) is
    // instantiated in the user's crate, where a non-inline function cannot be inlined.
    #[inline]
    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError> {
        // One rule, kept with the record formats so that `record::peek_batch` applies it
        // without importing this module; its `CorruptRecord` is `FormatError::Corrupt`.
        record::kafka_batch_size(header, position).map_err(FormatError::from)
    }

    #[inline]
    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError> {
        let corrupt = |reason: String| FormatError::Corrupt { position, reason };
        let too_short = || {
            corrupt(format!(
                "only {} bytes available, at least {} are needed to read a batch header",
                bytes.len(),
                Self::HEADER_PEEK_BYTES
            ))
        };
        let Some(size) = Self::peek_size(bytes, position)? else {
            return Err(too_short());
        };
        // Present: peek_size returned a size, so bytes holds HEADER_PEEK_BYTES.
        let Some(head) = bytes.first_chunk::<{ HEADER_SIZE_UP_TO_MAGIC + 1 }>() else {
            return Err(too_short());
        };
        let magic = head[MAGIC_OFFSET] as i8;
        let need = |n: usize| -> Result<&[u8], FormatError> {
            bytes.get(..n).ok_or_else(|| {
                corrupt(format!(
                    "only {} bytes available, the magic {magic} header needs {n}",
                    bytes.len()
                ))
            })
        };
        if magic >= 2 {
            if size < RECORD_BATCH_OVERHEAD {
                return Err(corrupt(format!(
                    "record batch size {size} is smaller than the minimum allowed ({RECORD_BATCH_OVERHEAD})"
                )));
            }
            let h: &RawBatchHeader = bytemuck::from_bytes(need(RECORD_BATCH_OVERHEAD)?);
            let attributes = record::Attributes(h.attributes.get());
            let base_offset = h.base_offset.get();
            let delta = h.last_offset_delta.get();
            let last_offset = base_offset.wrapping_add(i64::from(delta));
            let base_sequence = h.base_sequence.get();
            Ok(BatchInfo {
                position,
                base_offset,
                last_offset,
                max_timestamp: h.max_timestamp.get(),
                offset_of_max_timestamp: last_offset,
                size_in_bytes: size,
                is_control: attributes.is_control(),
                is_transactional: attributes.is_transactional(),
                producer_id: h.producer_id.get(),
                producer_epoch: h.producer_epoch.get(),
                base_sequence,
                last_sequence: if base_sequence == NO_SEQUENCE {
                    NO_SEQUENCE
                } else {
                    record::increment_sequence(base_sequence, delta)
                },
                partition_leader_epoch: h.partition_leader_epoch.get(),
                magic,
            })
        } else {
            let max_timestamp = match magic {
                0 => NO_TIMESTAMP,
                1 => {
                    if size < LOG_OVERHEAD + RECORD_OVERHEAD_V1 {
                        return Err(corrupt(format!(
                            "magic 1 record size {} is less than the minimum record overhead ({RECORD_OVERHEAD_V1})",
                            size - LOG_OVERHEAD
                        )));
                    }
                    let b = need(26)?;
                    #[expect(
                        clippy::indexing_slicing,
                        reason = "need(26) returned exactly 26 bytes"
                    )]
                    let ts = &b[18..26];
                    bytemuck::pod_read_unaligned::<I64Be>(ts).get()
                }
                m => {
                    return Err(corrupt(format!(
                        "invalid magic value {m} for a legacy message"
                    )))
                }
            };
            let offset = bytemuck::pod_read_unaligned::<I64Be>(&head[..8]).get();
            Ok(BatchInfo {
                position,
                base_offset: offset,
                last_offset: offset,
                max_timestamp,
                offset_of_max_timestamp: offset,
                size_in_bytes: size,
                is_control: false,
                is_transactional: false,
                producer_id: NO_PRODUCER_ID,
                producer_epoch: NO_PRODUCER_EPOCH,
                base_sequence: NO_SEQUENCE,
                last_sequence: NO_SEQUENCE,
                partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
                magic,
            })
        }
    }

    #[inline]
    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError> {
        FileBatch::at(batch, position)?.ensure_valid()?;
        Ok(())
    }

    /// Record-level search, decompressing as needed (Kafka `searchForTimestamp`).
    fn search_timestamp(
        batch: &[u8],
        position: u64,
        target_timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>, FormatError> {
        let batch = FileBatch::at(batch, position)?;
        if batch.max_timestamp() < target_timestamp {
            return Ok(None);
        }
        for r in batch.records()? {
            let r = r?;
            if r.timestamp >= target_timestamp && r.offset >= starting_offset {
                let epoch = batch.partition_leader_epoch();
                return Ok(Some(TimestampAndOffset {
                    timestamp: r.timestamp,
                    offset: r.offset,
                    leader_epoch: (epoch != NO_PARTITION_LEADER_EPOCH).then_some(epoch),
                }));
            }
        }
        Ok(None)
    }

    fn end_txn_marker(
        batch: &[u8],
        position: u64,
    ) -> Result<Option<EndTransactionMarker>, FormatError> {
        let batch = FileBatch::at(batch, position)?;
        if !batch.is_control() {
            return Ok(None);
        }
        let Some(first) = batch.records()?.next() else {
            return Ok(None);
        };
        let first = first?;
        match ControlRecordType::parse_key(first.key(), position)? {
            ControlRecordType::Abort | ControlRecordType::Commit => Ok(Some(
                EndTransactionMarker::decode(first.key(), first.value(), position)?,
            )),
            _ => Ok(None),
        }
    }

    /// Magic v2 only: writes the base offset (outside the CRC).
    fn assign_base_offset(
        batch: &mut [u8],
        position: u64,
        base_offset: i64,
    ) -> Result<(), FormatError> {
        v2_header(batch, position)?.base_offset = I64Be::new(base_offset);
        Ok(())
    }

    /// Magic v2 only: writes the partition leader epoch (outside the CRC).
    fn set_partition_leader_epoch(
        batch: &mut [u8],
        position: u64,
        epoch: i32,
    ) -> Result<(), FormatError> {
        v2_header(batch, position)?.partition_leader_epoch = I32Be::new(epoch);
        Ok(())
    }

    /// Magic v2 only: Kafka's `setMaxTimestamp(LOG_APPEND_TIME, now)`.
    fn stamp_log_append_time(
        batch: &mut [u8],
        position: u64,
        now_ms: i64,
    ) -> Result<(), FormatError> {
        set_v2_max_timestamp(batch, position, true, now_ms)
    }
}

/// The header of the v2 batch `batch`, to patch its fields in place through
/// `index_core::codec`'s big-endian field types.
fn v2_header(batch: &mut [u8], position: u64) -> Result<&mut RawBatchHeader, FormatError> {
    let magic = batch.get(MAGIC_OFFSET).map(|&m| m as i8);
    if batch.len() < RECORD_BATCH_OVERHEAD || magic.is_none_or(|m| m < 2) {
        return Err(FormatError::Unsupported {
            position,
            reason: format!(
                "only magic v2 batches can be patched in place (magic {magic:?}, {} bytes)",
                batch.len()
            ),
        });
    }
    batch
        .get_mut(..RECORD_BATCH_OVERHEAD)
        .map(bytemuck::from_bytes_mut)
        .ok_or_else(|| FormatError::Corrupt {
            position,
            reason: "batch header too short".into(),
        })
}

/// Kafka's `DefaultRecordBatch.setMaxTimestamp(type, ts)` on the v2 batch `batch`: unless
/// the batch already has that timestamp type and max timestamp, rewrites the timestamp
/// type bit and the max timestamp and recomputes the CRC.
pub(crate) fn set_v2_max_timestamp(
    batch: &mut [u8],
    position: u64,
    log_append_time: bool,
    max_timestamp: i64,
) -> Result<(), FormatError> {
    let h = v2_header(batch, position)?;
    let attrs = h.attributes.get();
    let is_lat = attrs & record::Attributes::TIMESTAMP_TYPE != 0;
    if is_lat == log_append_time && h.max_timestamp.get() == max_timestamp {
        return Ok(());
    }
    let attrs = if log_append_time {
        attrs | record::Attributes::TIMESTAMP_TYPE
    } else {
        attrs & !record::Attributes::TIMESTAMP_TYPE
    };
    h.attributes = I16Be::new(attrs);
    h.max_timestamp = I64Be::new(max_timestamp);
    let crc = crc32c::crc32c(batch.get(record::CRC_OFFSET + 4..).unwrap_or_default());
    v2_header(batch, position)?.crc = U32Be::new(crc);
    Ok(())
}

/// One batch found by [`scan`]: its header facts and its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannedBatch<'a> {
    /// Header facts.
    pub info: BatchInfo,
    /// Exactly the batch's bytes.
    pub bytes: &'a [u8],
}

/// Iterator over the batches of a file image for any [`BatchFormat`]; see [`scan`].
#[derive(Debug, Clone)]
pub struct Scan<'a, F: BatchFormat = KafkaBatchFormat> {
    data: &'a [u8],
    pos: usize,
    stop: Option<StopReason>,
    _format: core::marker::PhantomData<F>,
}

/// Walks the batches of `data` (a file image; position 0 = `data[0]`) from `start`,
/// applying the framing contract of the [module docs](self). Yields `Ok` per complete
/// batch and at most one `Err` (then stops); [`Scan::stop_reason`] says why it stopped and
/// [`Scan::position`] how many bytes were consumed. Checksums are not verified.
pub fn scan<F: BatchFormat>(data: &[u8], start: u64) -> Scan<'_, F> {
    Scan {
        data,
        pos: usize::try_from(start).unwrap_or(usize::MAX).min(data.len()),
        stop: None,
        _format: core::marker::PhantomData,
    }
}

impl<F: BatchFormat> Scan<'_, F> {
    /// Position of the next batch (after a clean stop: the end of the last complete batch).
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// `None` while iterating; why iteration stopped afterwards.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }
}

impl<'a, F: BatchFormat> Iterator for Scan<'a, F> {
    type Item = Result<ScannedBatch<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stop.is_some() {
            return None;
        }
        let position = self.pos as u64;
        // pos <= data.len() always (`scan` clamps it, `next` adds the size of a batch taken
        // from `rest`); past the end would read as the end.
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let fail = |stop: &mut Option<StopReason>, e: FormatError| {
            *stop = Some(StopReason::Corrupt {
                position,
                reason: e.to_string(),
            });
            Some(Err(e))
        };
        let peek = rest.get(..F::HEADER_PEEK_BYTES).unwrap_or(rest);
        let size = match F::peek_size(peek, position) {
            Err(e) => return fail(&mut self.stop, e),
            Ok(Some(0)) => {
                let e = FormatError::Corrupt {
                    position,
                    reason: format!("{} format announced a zero-size batch", F::NAME),
                };
                return fail(&mut self.stop, e);
            }
            Ok(size) => size,
        };
        match size.map(|size| rest.get(..size)) {
            None if rest.is_empty() => {
                self.stop = Some(StopReason::End);
                None
            }
            Some(Some(bytes)) => match F::parse_header(bytes, position) {
                Ok(info) => {
                    self.pos += bytes.len();
                    Some(Ok(ScannedBatch { info, bytes }))
                }
                Err(e) => fail(&mut self.stop, e),
            },
            _ => {
                self.stop = Some(StopReason::TornTail {
                    position,
                    remaining_bytes: rest.len(),
                });
                None
            }
        }
    }
}

/// The framing rule of docs/kafka-behaviour.md#batch-iteration (Kafka's `FileLogInputStream`
/// for [`KafkaBatchFormat`]), the check the file readers and
/// `BatchIter` apply: `remaining` bytes follow `position`, and `header` holds the first
/// `min(F::HEADER_PEEK_BYTES, remaining)` of them (or more).
///
/// Nothing remaining is [`Peek::End`]; [`BatchFormat::peek_size`] finding too few bytes,
/// or a size running past `remaining`, is [`Peek::TornTail`]; a size of 0 is corrupt.
///
/// # Errors
/// [`FormatError::Corrupt`] for an impossible size field (Kafka: below 14) or a zero size.
pub fn frame<F: BatchFormat>(
    header: &[u8],
    remaining: u64,
    position: u64,
) -> std::result::Result<Peek, FormatError> {
    record::frame_with(
        remaining,
        || F::peek_size(header, position),
        || FormatError::Corrupt {
            position,
            reason: "zero-size batch".into(),
        },
    )
}
