//! Kafka's `LogValidator` for a leader append of one magic v2 batch
//! (docs/kafka-behaviour.md#leader-validation): batch checks, per-record checks, offsets
//! and leader epoch assigned in place or the batch rebuilt with the topic's codec, and the
//! timestamp type applied.

use super::error::decode_error_kind;
use super::{AppendOrigin, KafkaError, RecordError, TimestampType};
use crate::error::{Result, SegmentError};
use crate::format::{set_v2_max_timestamp, BatchFormat, KafkaBatchFormat};
use crate::record::{
    BatchBuilder, CompressionType, Record, RecordBatch, RecordError as DecodeError,
};

/// The settings the validator reads (from [`LogConfig`](crate::LogConfig) and the call).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    /// The log's clock, ms since the epoch.
    pub now: i64,
    pub timestamp_type: TimestampType,
    pub before_max_ms: i64,
    pub after_max_ms: i64,
    pub compact: bool,
    pub leader_epoch: i32,
    pub origin: AppendOrigin,
    /// The codec to store (`compression.type` resolved against the producer's).
    pub target: CompressionType,
    /// The offset the batch's first record gets: the log end offset.
    pub first_offset: i64,
}

/// A validated batch, ready to append.
#[derive(Debug)]
pub(crate) struct Validated {
    /// The batch as stored: the input patched in place, or rebuilt.
    pub bytes: Vec<u8>,
    /// Last offset assigned.
    pub last_offset: i64,
    /// Kafka's `maxTimestampMs` of the validation result.
    pub max_timestamp: i64,
    /// Whether the batch was rebuilt (Kafka's `messageSizeMaybeChanged`).
    pub rebuilt: bool,
    /// Records in the batch.
    pub num_records: u64,
}

fn invalid(message: String) -> SegmentError {
    SegmentError::rejected(KafkaError::InvalidRecord, message)
}

fn decode(e: DecodeError) -> SegmentError {
    SegmentError::rejected(decode_error_kind(&e), e.to_string())
}

/// Kafka's `validateBatch` (the origin-dependent batch checks, target magic 2).
fn check_batch(b: &RecordBatch<'_>, origin: AppendOrigin) -> Result<()> {
    if origin != AppendOrigin::Client {
        return Ok(());
    }
    let from_offsets = i64::from(b.last_offset_delta()) + 1;
    if from_offsets <= 0 {
        return Err(invalid(format!(
            "the batch's offset range [{}, {}] is empty",
            b.base_offset(),
            b.last_offset()
        )));
    }
    let count = i64::from(b.records_count());
    if count <= 0 {
        return Err(invalid(format!("the batch reports {count} records")));
    }
    if from_offsets != count {
        return Err(invalid(format!(
            "the batch's offset range [{}, {}] does not match its {count} records",
            b.base_offset(),
            b.last_offset()
        )));
    }
    if b.is_control_batch() {
        return Err(invalid("a client may not write control batches".into()));
    }
    if b.producer_id() >= 0 && b.base_sequence() < 0 {
        return Err(invalid(format!(
            "invalid base sequence {} in a batch of producer id {}",
            b.base_sequence(),
            b.producer_id()
        )));
    }
    Ok(())
}

/// Kafka's `validateKey` and `validateTimestamp` for one record.
fn check_record(
    b: &RecordBatch<'_>,
    r: &Record<'_>,
    index: i32,
    p: &Params,
) -> Option<(KafkaError, RecordError)> {
    let err = |kind, message: String| {
        Some((
            kind,
            RecordError {
                batch_index: index,
                message: Some(message),
            },
        ))
    };
    if p.compact && r.key.is_none() {
        return err(
            KafkaError::InvalidRecord,
            "Compacted topic cannot accept message without key".into(),
        );
    }
    if p.timestamp_type == TimestampType::CreateTime && r.timestamp != -1 {
        // Java's long arithmetic: the difference wraps.
        let diff = p.now.wrapping_sub(r.timestamp);
        if diff > p.before_max_ms || diff.wrapping_neg() > p.after_max_ms {
            return err(
                KafkaError::InvalidTimestamp,
                format!(
                    "timestamp {} of the record at offset {} is outside the accepted range [{}, {}]",
                    r.timestamp,
                    r.offset,
                    p.now.wrapping_sub(p.before_max_ms),
                    p.now.wrapping_add(p.after_max_ms)
                ),
            );
        }
    } else if b.timestamp_type() == crate::record::TimestampType::LogAppendTime {
        return err(
            KafkaError::InvalidTimestamp,
            "the producer may not mark a batch LogAppendTime".into(),
        );
    }
    None
}

/// Kafka's `processRecordErrors`: any record error rejects the batch; timestamps first.
fn reject_records(errors: Vec<(KafkaError, RecordError)>) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    let timestamp = errors
        .iter()
        .any(|(k, _)| *k == KafkaError::InvalidTimestamp);
    let record_errors: Vec<RecordError> = errors.into_iter().map(|(_, e)| e).collect();
    let (error, message) = if timestamp {
        (
            KafkaError::InvalidTimestamp,
            "one or more records have an invalid timestamp".to_string(),
        )
    } else {
        let shown: Vec<String> = record_errors
            .iter()
            .take(3)
            .map(|e| {
                format!(
                    "record {}: {}",
                    e.batch_index,
                    e.message.as_deref().unwrap_or("")
                )
            })
            .collect();
        (
            KafkaError::InvalidRecord,
            format!(
                "{} record(s) rejected; the first (at most three): {}",
                record_errors.len(),
                shown.join("; ")
            ),
        )
    };
    Err(SegmentError::Rejected {
        error,
        message,
        record_errors,
    })
}

fn patch<T>(r: std::result::Result<T, crate::format::FormatError>) -> Result<T> {
    r.map_err(|e| SegmentError::rejected(super::error::format_error_kind(&e), e.to_string()))
}

/// Kafka's `validateMessagesAndAssignOffsets` for one v2 batch (`batch` is exactly its
/// bytes, CRC already checked).
pub(crate) fn validate_v2(batch: &[u8], p: &Params) -> Result<Validated> {
    let b = RecordBatch::new(batch).map_err(decode)?;
    let source = b.compression().map_err(decode)?;
    check_batch(&b, p.origin)?;
    let uncompressed = source == CompressionType::None && p.target == CompressionType::None;
    // Kafka's in-place rule: same codec, or an uncompressed control batch.
    let mut in_place = uncompressed
        || source == p.target
        || (source == CompressionType::None && b.is_control_batch());
    let mut errors = Vec::new();
    let mut max_ts = -1i64;
    let mut kept: Vec<Record<'_>> = Vec::new();
    let mut n: u64 = 0;
    for (i, r) in b.records().map_err(decode)?.enumerate() {
        let r = r.map_err(decode)?;
        let index = i32::try_from(i).unwrap_or(i32::MAX);
        let expected = n as i64;
        n += 1;
        match check_record(&b, &r, index, p) {
            Some(e) => errors.push(e),
            None => {
                max_ts = max_ts.max(r.timestamp);
                // Compressed path only: records whose offsets are not 0, 1, 2... are
                // rebuilt (Kafka's rule for clients with wrong inner offsets).
                if !uncompressed && r.offset != expected {
                    in_place = false;
                }
                if !uncompressed {
                    kept.push(r);
                }
            }
        }
    }
    reject_records(errors)?;
    let lat = p.timestamp_type == TimestampType::LogAppendTime;
    if in_place {
        let mut bytes = batch.to_vec();
        let last = p.first_offset + n as i64 - 1;
        let base = last - i64::from(b.last_offset_delta());
        if base < p.first_offset {
            return Err(invalid(format!(
                "the batch's last offset delta {} exceeds its {n} records",
                b.last_offset_delta()
            )));
        }
        patch(KafkaBatchFormat::assign_base_offset(&mut bytes, 0, base))?;
        patch(KafkaBatchFormat::set_partition_leader_epoch(
            &mut bytes,
            0,
            p.leader_epoch,
        ))?;
        let max_timestamp = if lat { p.now } else { max_ts };
        patch(set_v2_max_timestamp(&mut bytes, 0, lat, max_timestamp))?;
        return Ok(Validated {
            bytes,
            last_offset: last,
            max_timestamp,
            rebuilt: false,
            num_records: n,
        });
    }
    // Rebuild with the target codec (Kafka's `buildRecordsAndAssignOffsets`): the first
    // batch's producer fields, the leader epoch, offsets from the log end.
    let mut builder = BatchBuilder::new(p.first_offset)
        .compression(p.target)
        .partition_leader_epoch(p.leader_epoch)
        .producer(b.producer_id(), b.producer_epoch(), b.base_sequence())
        .transactional(b.is_transactional());
    if lat {
        builder = builder.log_append_time(p.now);
    }
    let count = kept.len() as u64;
    for r in &kept {
        let headers: Vec<(&[u8], Option<&[u8]>)> = r
            .headers
            .iter()
            .map(|h| (&*h.key, h.value.as_deref()))
            .collect();
        builder = builder.record_with_headers(r.timestamp, r.key(), r.value(), &headers);
    }
    let bytes = builder.build().map_err(decode)?;
    Ok(Validated {
        bytes,
        last_offset: p.first_offset + count as i64 - 1,
        max_timestamp: if lat { p.now } else { max_ts },
        rebuilt: true,
        num_records: count,
    })
}
