//! Kafka's `LogValidator` for a leader append of one magic v2 batch
//! (docs/kafka-behaviour.md#leader-validation): batch checks, per-record checks, offsets
//! and leader epoch assigned in place or the batch rebuilt with the topic's codec, and the
//! timestamp type applied.

use super::{AppendOrigin, KafkaError, RecordError, TimestampType};
use crate::error::decode_error_kind;
use crate::error::{Result, SegmentError};
use crate::format::{set_v2_max_timestamp, BatchFormat, KafkaBatchFormat};
use crate::record::{
    BatchBuilder, CompressionType, Record, RecordBatch, RecordError as DecodeError, RecordSummary,
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
    r: &RecordSummary,
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
    if p.compact && !r.has_key {
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
    if uncompressed {
        // Stored as received: only the fields the checks read are taken, with the
        // errors of the full decode (`RecordBatch::records`). A batch whose records all
        // pass takes one loop without error plumbing; any other walks again record by
        // record for the errors.
        let skim = b.skim_records().map_err(decode)?;
        let passed = skim.accept_all(|r| {
            if check_record(&b, &r, 0, p).is_some() {
                return false;
            }
            max_ts = max_ts.max(r.timestamp);
            true
        });
        match passed {
            Some(count) => n = u64::from(count),
            None => {
                max_ts = -1;
                for (i, r) in skim.enumerate() {
                    let r = r.map_err(decode)?;
                    let index = i32::try_from(i).unwrap_or(i32::MAX);
                    n += 1;
                    match check_record(&b, &r, index, p) {
                        Some(e) => errors.push(e),
                        None => max_ts = max_ts.max(r.timestamp),
                    }
                }
            }
        }
    } else {
        for (i, r) in b.records().map_err(decode)?.enumerate() {
            let r = r.map_err(decode)?;
            let index = i32::try_from(i).unwrap_or(i32::MAX);
            let expected = n as i64;
            n += 1;
            match check_record(&b, &RecordSummary::of(&r), index, p) {
                Some(e) => errors.push(e),
                None => {
                    max_ts = max_ts.max(r.timestamp);
                    // Records whose offsets are not 0, 1, 2... are rebuilt (Kafka's
                    // rule for clients with wrong inner offsets).
                    if r.offset != expected {
                        in_place = false;
                    }
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

    /// A client's batch of three records in `codec` whose first record's length is an
    /// over-long varint (five bytes with the continuation bit set; in a compressed batch,
    /// the first five bytes of the decompressed records, compressed again), its length and
    /// CRC recomputed.
    fn overlong_length(codec: CompressionType) -> Vec<u8> {
        let mut b = BatchBuilder::new(0)
            .compression(codec)
            .record(9_000, Some(b"k"), Some(b"a"))
            .record(9_001, Some(b"k"), Some(b"b"))
            .record(9_002, None, Some(b"c"))
            .build()
            .unwrap();
        if codec == CompressionType::None {
            b[61..66].fill(0xff);
        } else {
            let mut records = crate::record::decompress(codec, &b[61..]).unwrap();
            records[..5].fill(0xff);
            let packed = crate::record::compress(codec, &records).unwrap();
            b.truncate(61);
            b.extend_from_slice(&packed);
            let length = i32::try_from(b.len() - 12).unwrap();
            b[8..12].copy_from_slice(&length.to_be_bytes());
        }
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        assert!(RecordBatch::new(&b).unwrap().is_valid());
        b
    }

    /// Validates `overlong_length(source)` into each of `targets` (in place into the
    /// source's codec, else recompressed): each error must be `expected`, without record
    /// errors. Every target is tried before the check, so a failure names them all.
    fn check_overlong(source: CompressionType, targets: &[CompressionType], expected: KafkaError) {
        let b = overlong_length(source);
        let wrong: Vec<String> = targets
            .iter()
            .filter_map(|&target| {
                let e = validate_v2(&b, &params(AppendOrigin::Client, target)).unwrap_err();
                (e.kafka_error() != expected || !e.record_errors().is_empty())
                    .then(|| format!("{source:?} into {target:?}: {e}"))
            })
            .collect();
        assert!(wrong.is_empty(), "not {expected:?}: {wrong:#?}");
    }

    // docs/kafka-behaviour.md#record-length-overlong: in a compressed batch Kafka's
    // stream iterator makes the length's `IllegalArgumentException` an
    // `InvalidRecordException`, in place and recompressed.

    #[test]
    fn overlong_record_length_in_gzip_records_is_an_invalid_record() {
        use CompressionType::*;
        check_overlong(Gzip, &[Gzip, None, Zstd], KafkaError::InvalidRecord);
    }

    #[test]
    fn overlong_record_length_in_snappy_records_is_an_invalid_record() {
        use CompressionType::*;
        check_overlong(Snappy, &[Snappy, None, Lz4], KafkaError::InvalidRecord);
    }

    #[test]
    fn overlong_record_length_in_lz4_records_is_an_invalid_record() {
        use CompressionType::*;
        check_overlong(Lz4, &[Lz4, None, Gzip], KafkaError::InvalidRecord);
    }

    #[test]
    fn overlong_record_length_in_zstd_records_is_an_invalid_record() {
        use CompressionType::*;
        check_overlong(Zstd, &[Zstd, None, Snappy], KafkaError::InvalidRecord);
    }

    #[test]
    fn overlong_record_length_in_uncompressed_records_escapes() {
        // Kafka's buffer iterator lets the exception escape, into any target.
        use CompressionType::*;
        check_overlong(None, &[None, Gzip, Zstd], KafkaError::UnknownServerError);
    }

    /// Damage done to a generated batch's record bytes (positions taken modulo the
    /// records' length, from byte 61 on).
    #[derive(Debug, Clone)]
    enum Damage {
        Flip(usize, u8),
        Set(usize, u8),
        /// A one-byte varint written over a length or count: -1, -2, 0 or a few bytes.
        Varint(usize, i8),
        Insert(usize, u8),
        Remove(usize),
        Truncate(usize),
        /// The batch's record count.
        Count(i32),
    }

    fn damage() -> impl proptest::strategy::Strategy<Value = Damage> {
        use proptest::prelude::*;
        prop_oneof![
            (any::<usize>(), 0u8..8).prop_map(|(i, b)| Damage::Flip(i, b)),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::Set(i, b)),
            (any::<usize>(), -3i8..40).prop_map(|(i, v)| Damage::Varint(i, v)),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::Insert(i, b)),
            any::<usize>().prop_map(Damage::Remove),
            any::<usize>().prop_map(Damage::Truncate),
            (-2i32..10).prop_map(Damage::Count),
        ]
    }

    type Header = (Vec<u8>, Option<Vec<u8>>);
    type Spec = (i64, Option<Vec<u8>>, Option<Vec<u8>>, Vec<Header>);

    fn record_spec() -> impl proptest::strategy::Strategy<Value = Spec> {
        use proptest::collection::vec;
        use proptest::prelude::*;
        let bytes = |n: usize| vec(any::<u8>(), 0..n);
        (
            prop_oneof![9_000i64..11_000, Just(-1i64), 0..i64::MAX],
            proptest::option::of(bytes(6)),
            proptest::option::of(bytes(12)),
            vec((bytes(4), proptest::option::of(bytes(4))), 0..3),
        )
    }

    fn build(records: &[Spec], log_append: bool, damage: &[Damage]) -> Vec<u8> {
        let mut builder = BatchBuilder::new(0);
        if log_append {
            builder = builder.log_append_time(9_999);
        }
        for (ts, key, value, headers) in records {
            let headers: Vec<(&[u8], Option<&[u8]>)> = headers
                .iter()
                .map(|(k, v)| (k.as_slice(), v.as_deref()))
                .collect();
            builder = builder.record_with_headers(*ts, key.as_deref(), value.as_deref(), &headers);
        }
        let mut b = builder.build().unwrap();
        for d in damage {
            let len = b.len() - 61;
            let at = |i: usize| 61 + if len == 0 { 0 } else { i % len };
            match *d {
                Damage::Flip(i, bit) if len > 0 => b[at(i)] ^= 1 << bit,
                Damage::Set(i, v) if len > 0 => b[at(i)] = v,
                Damage::Varint(i, v) if len > 0 => {
                    b[at(i)] = ((i32::from(v) << 1) ^ (i32::from(v) >> 31)) as u8;
                }
                Damage::Insert(i, v) => b.insert(61 + i % (len + 1), v),
                Damage::Remove(i) if len > 0 => {
                    b.remove(at(i));
                }
                Damage::Truncate(i) => b.truncate(61 + i % (len + 1)),
                Damage::Count(c) => b[57..61].copy_from_slice(&c.to_be_bytes()),
                _ => {}
            }
        }
        let size = i32::try_from(b.len() - 12).unwrap();
        b[8..12].copy_from_slice(&size.to_be_bytes());
        b
    }

    /// The leader's record checks done the old way, on every field of every record
    /// decoded by [`RecordBatch::records`]: `(last offset, max timestamp, records)`.
    fn reference(batch: &[u8], p: &Params) -> Result<(i64, i64, u64)> {
        let b = RecordBatch::new(batch).map_err(decode)?;
        b.compression().map_err(decode)?;
        check_batch(&b, p.origin)?;
        let mut errors = Vec::new();
        let (mut max_ts, mut n) = (-1i64, 0u64);
        for (i, r) in b.records().map_err(decode)?.enumerate() {
            let r = r.map_err(decode)?;
            n += 1;
            let summary = RecordSummary::of(&r);
            match check_record(&b, &summary, i32::try_from(i).unwrap(), p) {
                Some(e) => errors.push(e),
                None => max_ts = max_ts.max(r.timestamp),
            }
        }
        reject_records(errors)?;
        let last = last_offset(p.first_offset, n)?;
        if last - i64::from(b.last_offset_delta()) < p.first_offset {
            return Err(invalid(format!(
                "the batch's last offset delta {} exceeds its {n} records",
                b.last_offset_delta()
            )));
        }
        let lat = p.timestamp_type == TimestampType::LogAppendTime;
        Ok((last, if lat { p.now } else { max_ts }, n))
    }

    /// Each item of a record walk: the summary, or the error's kind and text.
    fn walk<I, T>(
        it: I,
        f: impl Fn(T) -> RecordSummary,
    ) -> Vec<std::result::Result<RecordSummary, (bool, String)>>
    where
        I: Iterator<Item = std::result::Result<T, DecodeError>>,
    {
        it.map(|r| {
            r.map(&f).map_err(|e| {
                (
                    matches!(e, DecodeError::InvalidRecord { .. }),
                    e.to_string(),
                )
            })
        })
        .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2048,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// On random uncompressed batches, intact or damaged (bit flips, bytes set,
        /// inserted or removed, truncation, one-byte lengths such as -1 or -2, a wrong
        /// record count), the light walk sees what the full decode sees, and the leader's
        /// validation answers what the old full decode and check answered: the same
        /// offsets, timestamp and count, or the same error kind, message and record errors.
        #[test]
        fn the_light_walk_answers_what_the_full_decode_answers(
            records in proptest::collection::vec(record_spec(), 1..6),
            damage in proptest::collection::vec(damage(), 0..4),
            log_append in proptest::prelude::any::<bool>(),
            client in proptest::prelude::any::<bool>(),
            compact in proptest::prelude::any::<bool>(),
            lat in proptest::prelude::any::<bool>(),
            before_max_ms in proptest::prop_oneof![proptest::strategy::Just(i64::MAX), 0i64..2_000],
        ) {
            let batch = build(&records, log_append, &damage);
            let b = RecordBatch::new(&batch).unwrap();
            if let (Ok(full), Ok(light)) = (b.records(), b.skim_records()) {
                // The one-loop walk passes exactly the batches the iterator walks
                // without an error, with the same summaries.
                let mut seen = Vec::new();
                let passed = light.accept_all(|r| {
                    seen.push(Ok(r));
                    true
                });
                let light = walk(light, |r| r);
                let passes = light.iter().all(std::result::Result::is_ok);
                proptest::prop_assert_eq!(passed.is_some(), passes);
                if let Some(count) = passed {
                    proptest::prop_assert_eq!(count as usize, seen.len());
                    proptest::prop_assert_eq!(&seen, &light);
                }
                proptest::prop_assert_eq!(light, walk(full, |r| RecordSummary::of(&r)));
            }
            let mut p = params(
                if client { AppendOrigin::Client } else { AppendOrigin::Coordinator },
                CompressionType::None,
            );
            p.compact = compact;
            p.before_max_ms = before_max_ms;
            if lat {
                p.timestamp_type = TimestampType::LogAppendTime;
            }
            match (validate_v2(&batch, &p), reference(&batch, &p)) {
                (Ok(v), Ok(want)) => {
                    proptest::prop_assert!(!v.rebuilt);
                    proptest::prop_assert_eq!((v.last_offset, v.max_timestamp, v.num_records), want);
                }
                (Err(got), Err(want)) => {
                    proptest::prop_assert_eq!(got.kafka_error(), want.kafka_error());
                    proptest::prop_assert_eq!(got.to_string(), want.to_string());
                    proptest::prop_assert_eq!(got.record_errors(), want.record_errors());
                }
                (got, want) => proptest::prop_assert!(false, "got {:?}, want {:?}", got, want),
            }
        }
    }
}
