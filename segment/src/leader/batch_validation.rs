//! Kafka's `LogValidator` for a leader append of one magic v2 batch
//! (docs/kafka-behaviour.md#leader-validation): batch checks, per-record checks, offsets
//! and leader epoch assigned in place or the batch rebuilt with the topic's codec, and the
//! timestamp type applied.

use super::{AppendOrigin, KafkaError, RecordError, TimestampType};
use crate::error::decode_error_kind;
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
    r.map_err(|e| SegmentError::rejected(crate::error::format_error_kind(&e), e.to_string()))
}

/// The last offset of `n` records from `first`, refused when the log end offset after it
/// would not be representable (as the follower append refuses it).
fn last_offset(first: i64, n: u64) -> Result<i64> {
    i64::try_from(n)
        .ok()
        .and_then(|n| first.checked_add(n - 1))
        .filter(|&last| last < i64::MAX)
        .ok_or_else(|| {
            SegmentError::arg(format!(
                "{n} records from offset {first}: the log end offset after them would overflow"
            ))
        })
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
        let last = last_offset(p.first_offset, n)?;
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
        last_offset: last_offset(p.first_offset, count)?,
        max_timestamp: if lat { p.now } else { max_ts },
        rebuilt: true,
        num_records: count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(origin: AppendOrigin, target: CompressionType) -> Params {
        Params {
            now: 10_000,
            timestamp_type: TimestampType::CreateTime,
            before_max_ms: i64::MAX,
            after_max_ms: 3_600_000,
            compact: false,
            leader_epoch: 4,
            origin,
            target,
            first_offset: 100,
        }
    }

    #[test]
    fn in_place_keeps_the_producers_crc() {
        let b = BatchBuilder::new(0)
            .record(9_000, None, Some(b"a"))
            .record(9_500, None, Some(b"b"))
            .build()
            .unwrap();
        let v = validate_v2(&b, &params(AppendOrigin::Client, CompressionType::None)).unwrap();
        assert!(!v.rebuilt);
        assert_eq!(
            (v.last_offset, v.max_timestamp, v.num_records),
            (101, 9_500, 2)
        );
        let out = RecordBatch::new(&v.bytes).unwrap();
        assert_eq!((out.base_offset(), out.partition_leader_epoch()), (100, 4));
        assert_eq!(out.checksum(), RecordBatch::new(&b).unwrap().checksum());
        assert!(out.is_valid());
    }

    #[test]
    fn a_wrong_header_max_timestamp_is_fixed_and_the_crc_recomputed() {
        let mut b = BatchBuilder::new(0)
            .record(9_000, None, Some(b"a"))
            .build()
            .unwrap();
        b[35..43].copy_from_slice(&1i64.to_be_bytes());
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        let v = validate_v2(&b, &params(AppendOrigin::Client, CompressionType::None)).unwrap();
        let out = RecordBatch::new(&v.bytes).unwrap();
        assert_eq!(out.max_timestamp(), 9_000);
        assert!(out.is_valid());
        assert_ne!(out.checksum(), RecordBatch::new(&b).unwrap().checksum());
    }

    #[test]
    fn compressed_inner_offsets_out_of_line_are_rebuilt() {
        // A coordinator batch (no count check) whose inner offsets are 0 and 2.
        let b = BatchBuilder::new(0)
            .compression(CompressionType::Gzip)
            .record_at(0, 9_000, Some(b"k"), Some(b"a"), &[])
            .record_at(2, 9_001, Some(b"k"), Some(b"b"), &[])
            .build()
            .unwrap();
        let v = validate_v2(
            &b,
            &params(AppendOrigin::Coordinator, CompressionType::Gzip),
        )
        .unwrap();
        assert!(v.rebuilt);
        assert_eq!(v.last_offset, 101);
        let out = RecordBatch::new(&v.bytes).unwrap();
        assert_eq!((out.base_offset(), out.last_offset_delta()), (100, 1));
        let offsets: Vec<i64> = out.records().unwrap().map(|r| r.unwrap().offset).collect();
        assert_eq!(offsets, vec![100, 101]);
        // From a client the same batch fails the count check first.
        let e = validate_v2(&b, &params(AppendOrigin::Client, CompressionType::Gzip)).unwrap_err();
        assert_eq!(e.kafka_error(), KafkaError::InvalidRecord);
    }

    #[test]
    fn timestamp_bounds_wrap_like_java() {
        let b = BatchBuilder::new(0)
            .record(0, None, Some(b"a"))
            .build()
            .unwrap();
        let mut p = params(AppendOrigin::Client, CompressionType::None);
        p.before_max_ms = 9_999;
        let e = validate_v2(&b, &p).unwrap_err();
        assert_eq!(e.kafka_error(), KafkaError::InvalidTimestamp);
        assert_eq!(e.record_errors()[0].batch_index, 0);
        p.before_max_ms = 10_000;
        assert!(validate_v2(&b, &p).is_ok());
    }
}
