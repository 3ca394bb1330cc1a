//! Builders for batches: [`BatchBuilder`] (magic v2, uncompressed or compressed with any of
//! Kafka's five codecs, including control batches and the header-only empty batch the log
//! cleaner leaves), [`control_batch`],
//! [`LegacyMessage`] (magic 0/1) and [`legacy_wrapper`] (compressed legacy wrapper, for
//! tests of the legacy reader).
//!
//! The output is byte-identical to what Kafka's `MemoryRecordsBuilder` writes for the
//! same inputs (checked against the acceptance cases' vectors).

use bytemuck::Zeroable;
use index_core::codec::{I16Be, I32Be, I64Be, U32Be};

use super::batch::{Attributes, RawBatchHeader};
use super::compression::{compress, CompressionType};
use super::control::{ControlRecordType, EndTransactionMarker};
use super::varint::{put_varint, put_varlong, varint_len, varlong_len};
use super::{
    RecordError, CRC_OFFSET, LOG_OVERHEAD, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD,
};

#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingRecord {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Builds one magic v2 batch.
///
/// Defaults mirror Kafka's `MemoryRecordsBuilder` for a plain producer batch: partition
/// leader epoch −1, producer id/epoch/base sequence −1, CreateTime, not transactional,
/// not control, uncompressed ([`BatchBuilder::compression`] sets a codec). The base timestamp is the first record's timestamp; the max timestamp is
/// the largest record timestamp, or the broker time given to
/// [`BatchBuilder::log_append_time`] (record deltas stay relative to the base timestamp,
/// as after a broker stamps a batch).
///
/// ```
/// use segment::record::{BatchBuilder, RecordBatch};
/// let bytes = BatchBuilder::new(0)
///     .partition_leader_epoch(0)
///     .record(1000, None, Some(b"hello"))
///     .build()
///     .unwrap();
/// assert_eq!(bytes.len(), 73);
/// assert!(RecordBatch::new(&bytes).unwrap().is_valid());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchBuilder {
    base_offset: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    log_append_time: Option<i64>,
    delete_horizon: Option<i64>,
    compression: CompressionType,
    records: Vec<PendingRecord>,
    last_offset: Option<i64>,
}

impl BatchBuilder {
    /// A builder for a batch whose first record has offset `base_offset`.
    pub fn new(base_offset: i64) -> Self {
        BatchBuilder {
            base_offset,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            base_sequence: NO_SEQUENCE,
            transactional: false,
            control: false,
            log_append_time: None,
            delete_horizon: None,
            compression: CompressionType::None,
            records: Vec::new(),
            last_offset: None,
        }
    }

    /// Sets the batch's last offset (its last offset delta) beyond its last record's, as
    /// Kafka's `MemoryRecordsBuilder.overrideLastOffset` does when the cleaner rebuilds a
    /// batch: the producer's last sequence stays that of the original batch. Ignored when
    /// below the last record's offset ([`BatchBuilder::build`] then uses the record's).
    pub fn override_last_offset(mut self, last_offset: i64) -> Self {
        self.last_offset = Some(last_offset);
        self
    }

    /// Compresses the records with `codec` (attribute bits 0–2), in the framing Kafka's
    /// Java producer writes ([`compress`]): the header stays uncompressed and the CRC
    /// covers the compressed bytes, as in Kafka's `MemoryRecordsBuilder`. Compressed bytes
    /// are not byte-identical to the Java client's (other encoder implementations and
    /// levels), but every Kafka reader decodes them. Default: `CompressionType::None`.
    pub fn compression(mut self, codec: CompressionType) -> Self {
        self.compression = codec;
        self
    }

    /// Sets the partition leader epoch (header bytes 12–15, not covered by the CRC).
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.partition_leader_epoch = epoch;
        self
    }

    /// Sets the producer id, epoch and base sequence (−1 each for "none").
    pub fn producer(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// Sets the transactional attribute (bit 4).
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.transactional = transactional;
        self
    }

    /// Sets the control attribute (bit 5). Control records' keys must then be control keys
    /// ([`ControlRecordType::key_bytes`]).
    pub fn control(mut self, control: bool) -> Self {
        self.control = control;
        self
    }

    /// Marks the batch LogAppendTime (bit 3) with `broker_time_ms` as its max timestamp;
    /// every record then reads with that timestamp.
    pub fn log_append_time(mut self, broker_time_ms: i64) -> Self {
        self.log_append_time = Some(broker_time_ms);
        self
    }

    /// Sets the delete-horizon attribute (bit 6) and stores `horizon_ms` as the base
    /// timestamp (record deltas are then relative to it), as the log cleaner does.
    pub fn delete_horizon(mut self, horizon_ms: i64) -> Self {
        self.delete_horizon = Some(horizon_ms);
        self
    }

    fn next_offset(&self) -> i64 {
        self.records
            .last()
            .map_or(self.base_offset, |r| r.offset.wrapping_add(1))
    }

    /// Appends a record with the next offset (base offset for the first), no headers.
    pub fn record(self, timestamp: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        self.record_with_headers(timestamp, key, value, &[])
    }

    /// Appends a record with the next offset and the given headers `(key, value)`.
    pub fn record_with_headers(
        self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> Self {
        let offset = self.next_offset();
        self.record_at(offset, timestamp, key, value, headers)
    }

    /// Appends a record with an explicit absolute offset (gaps allowed, as after
    /// compaction). Offsets must increase and stay within `i32` of the base offset;
    /// [`BatchBuilder::build`] reports violations.
    pub fn record_at(
        mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&[u8], Option<&[u8]>)],
    ) -> Self {
        self.records.push(PendingRecord {
            offset,
            timestamp,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
                .collect(),
        });
        self
    }

    /// Number of records appended so far.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// `true` if no record was appended.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn attributes(&self) -> i16 {
        let mut a = 0i16;
        if self.log_append_time.is_some() {
            a |= Attributes::TIMESTAMP_TYPE;
        }
        if self.transactional {
            a |= Attributes::TRANSACTIONAL;
        }
        if self.control {
            a |= Attributes::CONTROL;
        }
        if self.delete_horizon.is_some() {
            a |= Attributes::DELETE_HORIZON;
        }
        a | i16::from(self.compression.id())
    }

    fn header(
        &self,
        batch_length: i32,
        last_offset_delta: i32,
        base_timestamp: i64,
        max_timestamp: i64,
        count: i32,
    ) -> RawBatchHeader {
        RawBatchHeader {
            base_offset: I64Be::new(self.base_offset),
            batch_length: I32Be::new(batch_length),
            partition_leader_epoch: I32Be::new(self.partition_leader_epoch),
            magic: 2,
            crc: U32Be::zeroed(),
            attributes: I16Be::new(self.attributes()),
            last_offset_delta: I32Be::new(last_offset_delta),
            base_timestamp: I64Be::new(base_timestamp),
            max_timestamp: I64Be::new(max_timestamp),
            producer_id: I64Be::new(self.producer_id),
            producer_epoch: I16Be::new(self.producer_epoch),
            base_sequence: I32Be::new(self.base_sequence),
            records_count: I32Be::new(count),
        }
    }

    fn finish(header: RawBatchHeader, body: &[u8], out: &mut Vec<u8>) -> usize {
        let start = out.len();
        out.extend_from_slice(bytemuck::bytes_of(&header));
        out.extend_from_slice(body);
        #[expect(
            clippy::indexing_slicing,
            reason = "the 61-byte header was just appended at `start`, so \
                      start + CRC_OFFSET + 4 (start + 21) <= out.len()"
        )]
        let crc = crc32c::crc32c(&out[start + CRC_OFFSET + 4..]);
        #[expect(
            clippy::indexing_slicing,
            reason = "the 61-byte header was just appended at `start`, so its CRC field \
                      start + CRC_OFFSET..start + CRC_OFFSET + 4 is inside `out`"
        )]
        out[start + CRC_OFFSET..start + CRC_OFFSET + 4]
            .copy_from_slice(&U32Be::new(crc).to_bytes());
        out.len() - start
    }

    /// Encodes the batch and appends it to `out`; returns the number of bytes written.
    ///
    /// # Errors
    /// [`RecordError::InvalidArgument`] if there are no records (use
    /// [`BatchBuilder::build_empty`]), offsets do not increase, a timestamp is negative
    /// other than −1 (as Kafka's `MemoryRecordsBuilder` refuses), an offset delta or a
    /// length does not fit an `i32`. Nothing is written on error.
    pub fn write_to(&self, out: &mut Vec<u8>) -> Result<usize, RecordError> {
        let Some(first) = self.records.first() else {
            return Err(RecordError::argument(
                "a v2 batch needs at least one record (use build_empty for a header-only batch)",
            ));
        };
        let base_timestamp = self.delete_horizon.unwrap_or(first.timestamp);
        let mut max_timestamp = NO_TIMESTAMP;
        let mut prev: Option<i64> = None;
        let mut body = Vec::with_capacity(
            self.records
                .iter()
                .map(|r| {
                    16 + r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len)
                })
                .sum(),
        );
        let mut last_delta = 0i32;
        for (i, r) in self.records.iter().enumerate() {
            if let Some(p) = prev {
                if r.offset <= p {
                    return Err(RecordError::argument(format!(
                        "record {i}: offset {} does not follow offset {p}",
                        r.offset
                    )));
                }
            }
            prev = Some(r.offset);
            if r.timestamp < NO_TIMESTAMP {
                return Err(RecordError::argument(format!(
                    "record {i}: invalid negative timestamp {}",
                    r.timestamp
                )));
            }
            let delta = r
                .offset
                .checked_sub(self.base_offset)
                .and_then(|d| i32::try_from(d).ok())
                .filter(|d| *d >= 0)
                .ok_or_else(|| {
                    RecordError::argument(format!(
                        "record {i}: offset {} is not within i32 above base offset {}",
                        r.offset, self.base_offset
                    ))
                })?;
            last_delta = delta;
            max_timestamp = max_timestamp.max(r.timestamp);
            encode_record(&mut body, r, delta, base_timestamp, i)?;
        }
        if let Some(t) = self.log_append_time {
            max_timestamp = t;
        }
        if let Some(last) = self.last_offset {
            if let Some(d) = last
                .checked_sub(self.base_offset)
                .and_then(|d| i32::try_from(d).ok())
                .filter(|d| *d > last_delta)
            {
                last_delta = d;
            }
        }
        let count = i32::try_from(self.records.len())
            .map_err(|_| RecordError::argument("too many records for one batch"))?;
        if self.compression != CompressionType::None {
            body = compress(self.compression, &body)
                .map_err(|e| RecordError::argument(format!("compression failed: {e}")))?;
        }
        let batch_length = i32::try_from(RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + body.len())
            .map_err(|_| RecordError::argument("batch larger than i32::MAX bytes"))?;
        let header = self.header(
            batch_length,
            last_delta,
            base_timestamp,
            max_timestamp,
            count,
        );
        Ok(Self::finish(header, &body, out))
    }

    /// Encodes the batch into a new `Vec`.
    ///
    /// # Errors
    /// As [`BatchBuilder::write_to`].
    pub fn build(&self) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }

    /// Encodes a 61-byte header-only batch with 0 records, as the log cleaner leaves when
    /// it removes every record of a batch whose producer state must be kept (Kafka
    /// `DefaultRecordBatch.writeEmptyHeader`): last offset delta `last_offset −
    /// base_offset`, base timestamp −1 (or the delete horizon), max timestamp `timestamp`.
    /// Records appended to the builder are ignored.
    ///
    /// # Errors
    /// [`RecordError::InvalidArgument`] if `last_offset − base_offset` is not in `0..=i32::MAX`.
    pub fn build_empty(&self, last_offset: i64, timestamp: i64) -> Result<Vec<u8>, RecordError> {
        let delta = last_offset
            .checked_sub(self.base_offset)
            .and_then(|d| i32::try_from(d).ok())
            .filter(|d| *d >= 0)
            .ok_or_else(|| {
                RecordError::argument(format!(
                    "last offset {last_offset} is not within i32 above base offset {}",
                    self.base_offset
                ))
            })?;
        let base_ts = self.delete_horizon.unwrap_or(NO_TIMESTAMP);
        let header = self.header(
            (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32,
            delta,
            base_ts,
            timestamp,
            0,
        );
        let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD);
        Self::finish(header, &[], &mut out);
        Ok(out)
    }

    /// Encodes a one-record control batch holding an end-transaction marker (Kafka
    /// `MemoryRecords.withEndTransactionMarker`): transactional + control attributes, the
    /// builder's producer id/epoch and leader epoch, base sequence −1, record timestamp
    /// `timestamp`, key = control key, value = marker value (78 bytes in all). The
    /// builder's records are ignored.
    ///
    /// # Errors
    /// [`RecordError::InvalidArgument`] unless `control_type` is ABORT or COMMIT.
    pub fn build_end_txn_marker(
        &self,
        control_type: ControlRecordType,
        coordinator_epoch: i32,
        timestamp: i64,
    ) -> Result<Vec<u8>, RecordError> {
        let marker = EndTransactionMarker::new(control_type, coordinator_epoch)?;
        let mut b = self.clone();
        b.records.clear();
        b.transactional = true;
        b.control = true;
        b.compression = CompressionType::None; // markers are never compressed
        b.base_sequence = NO_SEQUENCE;
        b.record(
            timestamp,
            Some(&control_type.key_bytes()),
            Some(&marker.value_bytes()),
        )
        .build()
    }
}

fn len_i32(len: usize, what: &str, index: usize) -> Result<i32, RecordError> {
    i32::try_from(len).map_err(|_| {
        RecordError::argument(format!("record {index}: {what} longer than i32::MAX bytes"))
    })
}

fn put_nullable(
    out: &mut Vec<u8>,
    bytes: Option<&[u8]>,
    what: &str,
    index: usize,
) -> Result<(), RecordError> {
    match bytes {
        None => put_varint(out, -1),
        Some(b) => {
            put_varint(out, len_i32(b.len(), what, index)?);
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

fn encode_record(
    out: &mut Vec<u8>,
    r: &PendingRecord,
    offset_delta: i32,
    base_timestamp: i64,
    index: usize,
) -> Result<(), RecordError> {
    // The record's length first (it precedes the record), so that the record is written
    // straight into `out`.
    let nullable_len = |b: Option<&[u8]>, what: &str| -> Result<usize, RecordError> {
        match b {
            None => Ok(1),
            Some(b) => Ok(varint_len(len_i32(b.len(), what, index)?) + b.len()),
        }
    };
    let timestamp_delta = r.timestamp.wrapping_sub(base_timestamp);
    let header_count = len_i32(r.headers.len(), "header count", index)?;
    let mut len = 1
        + varlong_len(timestamp_delta)
        + varint_len(offset_delta)
        + nullable_len(r.key.as_deref(), "key")?
        + nullable_len(r.value.as_deref(), "value")?
        + varint_len(header_count);
    for (k, v) in &r.headers {
        len += varint_len(len_i32(k.len(), "header key", index)?)
            + k.len()
            + nullable_len(v.as_deref(), "header value")?;
    }
    let len = len_i32(len, "record", index)?;
    out.reserve(varint_len(len) + len as usize);
    put_varint(out, len);
    out.push(0u8); // attributes, unused
    put_varlong(out, timestamp_delta);
    put_varint(out, offset_delta);
    put_nullable(out, r.key.as_deref(), "key", index)?;
    put_nullable(out, r.value.as_deref(), "value", index)?;
    put_varint(out, header_count);
    for (k, v) in &r.headers {
        put_varint(out, len_i32(k.len(), "header key", index)?);
        out.extend_from_slice(k);
        put_nullable(out, v.as_deref(), "header value", index)?;
    }
    Ok(())
}

/// A transaction marker batch with partition leader epoch 0 (as in the acceptance cases' vectors and
/// Kafka's segment tests): `offset` is its only offset, `producer_id`/`producer_epoch` the
/// transaction's producer, `timestamp` in ms since epoch. See
/// [`BatchBuilder::build_end_txn_marker`] for other leader epochs.
///
/// # Errors
/// [`RecordError::InvalidArgument`] unless `control_type` is ABORT or COMMIT.
pub fn control_batch(
    offset: i64,
    producer_id: i64,
    producer_epoch: i16,
    control_type: ControlRecordType,
    coordinator_epoch: i32,
    timestamp: i64,
) -> Result<Vec<u8>, RecordError> {
    BatchBuilder::new(offset)
        .partition_leader_epoch(0)
        .producer(producer_id, producer_epoch, NO_SEQUENCE)
        .build_end_txn_marker(control_type, coordinator_epoch, timestamp)
}

/// One uncompressed legacy message (magic 0 or 1) to encode as a log entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyMessage<'a> {
    /// 0 or 1.
    pub magic: i8,
    /// Entry offset (absolute; relative 0..n−1 for messages inside a magic 1 wrapper).
    pub offset: i64,
    /// Timestamp in ms since epoch (ignored for magic 0).
    pub timestamp: i64,
    /// Sets attribute bit 3 (magic 1 only).
    pub log_append_time: bool,
    /// Key, `None` = null.
    pub key: Option<&'a [u8]>,
    /// Value, `None` = null.
    pub value: Option<&'a [u8]>,
}

impl<'a> LegacyMessage<'a> {
    /// A magic 1 CreateTime message with a null key.
    pub fn v1(offset: i64, timestamp: i64, value: &'a [u8]) -> Self {
        LegacyMessage {
            magic: 1,
            offset,
            timestamp,
            log_append_time: false,
            key: None,
            value: Some(value),
        }
    }

    /// Appends the entry (`offset, size, crc, magic, attributes, [timestamp], key, value`)
    /// to `out`; returns the bytes written.
    ///
    /// # Errors
    /// [`RecordError::InvalidArgument`] for a magic other than 0/1 or lengths over `i32`.
    pub fn write_to(&self, out: &mut Vec<u8>) -> Result<usize, RecordError> {
        self.write_with(out, 0, self.value)
    }

    fn write_with(
        &self,
        out: &mut Vec<u8>,
        codec: u8,
        value: Option<&[u8]>,
    ) -> Result<usize, RecordError> {
        if !(0..=1).contains(&self.magic) {
            return Err(RecordError::argument(format!(
                "legacy message magic must be 0 or 1, not {}",
                self.magic
            )));
        }
        let start = out.len();
        let mut attributes = codec as i8;
        if self.magic == 1 && self.log_append_time {
            attributes |= 0x08;
        }
        out.extend_from_slice(&I64Be::new(self.offset).to_bytes());
        out.extend_from_slice(&[0; 8]); // size + crc, patched below
        out.push(self.magic as u8);
        out.push(attributes as u8);
        if self.magic == 1 {
            out.extend_from_slice(&I64Be::new(self.timestamp).to_bytes());
        }
        for field in [self.key, value] {
            match field {
                None => out.extend_from_slice(&I32Be::new(-1).to_bytes()),
                Some(b) => {
                    let len = i32::try_from(b.len()).map_err(|_| {
                        out.truncate(start);
                        RecordError::argument("legacy key/value longer than i32::MAX bytes")
                    })?;
                    out.extend_from_slice(&I32Be::new(len).to_bytes());
                    out.extend_from_slice(b);
                }
            }
        }
        let size = out.len() - start - LOG_OVERHEAD;
        let Ok(size32) = i32::try_from(size) else {
            out.truncate(start);
            return Err(RecordError::argument(
                "legacy message larger than i32::MAX bytes",
            ));
        };
        // The offset (8 bytes) and the size + crc placeholder (8 bytes) were appended at
        // `start` above, so start + 16 <= out.len() for the three statements below.
        #[expect(
            clippy::indexing_slicing,
            reason = "start + 12 <= out.len(), see above"
        )]
        out[start + 8..start + 12].copy_from_slice(&I32Be::new(size32).to_bytes());
        #[expect(
            clippy::indexing_slicing,
            reason = "start + 16 <= out.len(), see above"
        )]
        let crc = crc32fast::hash(&out[start + 16..]);
        #[expect(
            clippy::indexing_slicing,
            reason = "start + 16 <= out.len(), see above"
        )]
        out[start + 12..start + 16].copy_from_slice(&U32Be::new(crc).to_bytes());
        Ok(out.len() - start)
    }

    /// Encodes the entry into a new `Vec`.
    ///
    /// # Errors
    /// As [`LegacyMessage::write_to`].
    pub fn to_vec(&self) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }
}

/// Encodes a compressed legacy wrapper entry: `wrapper` supplies magic, offset (for
/// magic 1 the absolute offset of the **last** inner message), timestamp and timestamp
/// type; its `value` is ignored and replaced by the `codec`-compressed concatenation of
/// `inner` (whose offsets should be relative 0..n−1 for magic 1, absolute for magic 0).
///
/// # Errors
/// [`RecordError::InvalidArgument`] for codec none/zstd, a bad magic or oversized input.
pub fn legacy_wrapper(
    wrapper: LegacyMessage<'_>,
    codec: CompressionType,
    inner: &[LegacyMessage<'_>],
) -> Result<Vec<u8>, RecordError> {
    if matches!(codec, CompressionType::None | CompressionType::Zstd) {
        return Err(RecordError::argument(format!(
            "legacy wrapper codec must be gzip, snappy or lz4, not {}",
            codec.name()
        )));
    }
    let mut set = Vec::new();
    for m in inner {
        m.write_to(&mut set)?;
    }
    #[allow(unused_mut)]
    let mut compressed = compress(codec, &set)
        .map_err(|e| RecordError::argument(format!("compression failed: {e}")))?;
    #[cfg(feature = "lz4")]
    if codec == CompressionType::Lz4 && wrapper.magic == 0 {
        super::compression::lz4_magic0_writer_checksum(&mut compressed);
    }
    let mut out = Vec::new();
    wrapper.write_with(&mut out, codec.id(), Some(&compressed))?;
    Ok(out)
}
