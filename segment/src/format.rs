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
//! rules, spec §7.5, for [`KafkaBatchFormat`]):
//!
//! 1. [`BatchFormat::peek_size`] returns `Ok(None)` → clean end (too few bytes remain);
//! 2. it returns an error → the batch is corrupt (recovery truncates here);
//! 3. the announced size runs past the end → clean end (torn tail, ignored);
//! 4. otherwise the batch's bytes are handed to [`BatchFormat::parse_header`] and the scan
//!    advances by the announced size.
//!
//! Units: offsets are log offsets (`i64`), timestamps are milliseconds since the Unix epoch
//! (`i64`, −1 = none), positions are byte positions in the file (`u64`), sizes are bytes.

use crate::record::{
    self, ControlRecordType, EndTransactionMarker, FileBatch, RawBatchHeader, RecordError,
    StopReason, TimestampAndOffset, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET,
    MIN_SIZE_FIELD, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE,
    NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, RECORD_OVERHEAD_V1, SIZE_OFFSET,
};
use index_core::codec::{I32Be, I64Be};

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
            other => FormatError::Unsupported {
                position,
                reason: other.to_string(),
            },
        }
    }
}

/// Header-level facts about one batch: all the segment machinery needs without decoding
/// records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchInfo {
    /// Byte position of the batch in its file.
    pub position: u64,
    /// First offset. For a Kafka legacy compressed wrapper this is the wrapper (last)
    /// offset, since finding the first inner offset needs decompression.
    pub base_offset: i64,
    /// Last offset (Kafka `lastOffset`; for legacy entries the entry offset).
    pub last_offset: i64,
    /// Max timestamp in ms since epoch (−1 if none, e.g. magic 0).
    pub max_timestamp: i64,
    /// The offset the time index associates with `max_timestamp` at batch granularity.
    /// Kafka (since KAFKA-16310, and on every recovery): the batch's last offset.
    pub offset_of_max_timestamp: i64,
    /// Total size of the batch in bytes, header included.
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
    /// Format version byte (Kafka magic: 0, 1 or 2).
    pub magic: i8,
}

/// How a storage engine's `.log` files are framed and read. See the [module docs](self)
/// for the framing contract. Implementations are zero-sized marker types; every method is
/// an associated function so that generic code is monomorphised (no `dyn`).
pub trait BatchFormat: Send + Sync + 'static {
    /// Short name for messages and tools (`"kafka"`).
    const NAME: &'static str;

    /// Bytes that must remain from a batch start for [`BatchFormat::peek_size`] to decide
    /// (callers pass `min(HEADER_PEEK_BYTES, remaining)` bytes). Kafka: 18 — its iterator
    /// reads 17 bytes (`HEADER_SIZE_UP_TO_MAGIC`) but stops when fewer than 18 remain.
    const HEADER_PEEK_BYTES: usize;

    /// Upper bound of the bytes [`BatchFormat::parse_header`] looks at (Kafka: 61, the v2
    /// header). Callers reading from a file may pass just
    /// `min(MAX_HEADER_BYTES, batch size)` bytes.
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
    /// [`BatchFormat::HEADER_PEEK_BYTES`] of them. Returns `Ok(None)` when too few bytes
    /// remain to hold a batch (a clean end of iteration), `Ok(Some(size))` otherwise — the
    /// caller then treats a size running past the end as a torn tail.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] if the size field is impossible (Kafka: < 14).
    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError>;

    /// Parses the header of the batch starting at `bytes[0]` (located at `position`).
    /// `bytes` holds at least `min(MAX_HEADER_BYTES, batch size)` bytes of the batch; bytes
    /// after the batch are ignored. Does not verify the checksum.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] if the header is unreadable (too short, impossible size,
    /// unknown version).
    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError>;

    /// Verifies the checksum (and whatever else is cheap and structural) of the complete
    /// batch `batch` (exactly its bytes, or more). Kafka `ensureValid`: it does not decode
    /// records.
    ///
    /// # Errors
    /// [`FormatError::Corrupt`] on checksum mismatch or broken framing.
    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError>;

    /// Within the complete batch `batch`, finds the first record with
    /// `timestamp ≥ target_timestamp` and `offset ≥ starting_offset` (the per-batch step of
    /// Kafka's `FileRecords.searchForTimestamp`).
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
}

/// Kafka's on-disk formats: magic v2 record batches and legacy magic 0/1 message sets,
/// read with exactly the iteration rules of Kafka's `FileLogInputStream` (spec §7.5).
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
        if header.len() < Self::HEADER_PEEK_BYTES {
            return Ok(None);
        }
        let size = bytemuck::pod_read_unaligned::<I32Be>(&header[SIZE_OFFSET..LOG_OVERHEAD]).get();
        if size < MIN_SIZE_FIELD as i32 {
            return Err(FormatError::Corrupt {
                position,
                reason: format!(
                    "record size {size} is less than the minimum record overhead ({MIN_SIZE_FIELD})"
                ),
            });
        }
        Ok(Some(LOG_OVERHEAD + size as usize))
    }

    #[inline]
    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError> {
        let corrupt = |reason: String| FormatError::Corrupt { position, reason };
        let Some(size) = Self::peek_size(bytes, position)? else {
            return Err(corrupt(format!(
                "only {} bytes available, at least {} are needed to read a batch header",
                bytes.len(),
                Self::HEADER_PEEK_BYTES
            )));
        };
        let magic = bytes[MAGIC_OFFSET] as i8;
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
                    bytemuck::pod_read_unaligned::<I64Be>(&b[18..26]).get()
                }
                m => {
                    return Err(corrupt(format!(
                        "invalid magic value {m} for a legacy message"
                    )))
                }
            };
            let offset = bytemuck::pod_read_unaligned::<I64Be>(&bytes[..8]).get();
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
        let rest = &self.data[self.pos..];
        let fail = |stop: &mut Option<StopReason>, e: FormatError| {
            *stop = Some(StopReason::Corrupt {
                position,
                reason: e.to_string(),
            });
            Some(Err(e))
        };
        let size = match F::peek_size(&rest[..rest.len().min(F::HEADER_PEEK_BYTES)], position) {
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
        match size {
            None if rest.is_empty() => {
                self.stop = Some(StopReason::End);
                None
            }
            Some(size) if size <= rest.len() => {
                let bytes = &rest[..size];
                match F::parse_header(bytes, position) {
                    Ok(info) => {
                        self.pos += size;
                        Some(Ok(ScannedBatch { info, bytes }))
                    }
                    Err(e) => fail(&mut self.stop, e),
                }
            }
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
