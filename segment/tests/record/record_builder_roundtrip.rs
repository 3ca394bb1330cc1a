//! Property tests: whatever [`BatchBuilder`] / [`LegacyMessage`] write reads back
//! identically through the views, uncompressed and recompressed with every codec.

use proptest::prelude::*;
use segment::format::{BatchFormat, KafkaBatchFormat};
use segment::record::{
    batches_from, compress, BatchBuilder, CompressionType, FileBatch, LegacyMessage, RecordBatch,
    StopReason, TimestampType,
};

#[derive(Debug, Clone)]
struct In {
    offset_gap: u8,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn record_in() -> impl Strategy<Value = In> {
    (
        0u8..3,
        prop_oneof![-1i64..=i64::MAX, 0i64..2_000_000_000_000, Just(-1i64)],
        prop::option::of(bytes(40)),
        prop::option::of(bytes(200)),
        prop::collection::vec((bytes(12), prop::option::of(bytes(12))), 0..4),
    )
        .prop_map(|(offset_gap, timestamp, key, value, headers)| In {
            offset_gap,
            timestamp,
            key,
            value,
            headers,
        })
}

#[derive(Debug, Clone)]
struct BatchIn {
    base_offset: i64,
    leader_epoch: i32,
    producer: (i64, i16, i32),
    transactional: bool,
    log_append_time: Option<i64>,
    records: Vec<In>,
}

fn batch_in() -> impl Strategy<Value = BatchIn> {
    (
        prop_oneof![0i64..1_000_000, any::<i64>().prop_map(|o| o / 4)],
        any::<i32>(),
        prop_oneof![
            Just((-1i64, -1i16, -1i32)),
            (
                0i64..1000,
                0i16..10,
                prop_oneof![0i32..1000, (i32::MAX - 5)..=i32::MAX]
            )
        ],
        any::<bool>(),
        prop::option::of(0i64..2_000_000_000_000),
        prop::collection::vec(record_in(), 1..12),
    )
        .prop_map(
            |(base_offset, leader_epoch, producer, transactional, log_append_time, records)| {
                BatchIn {
                    base_offset,
                    leader_epoch,
                    producer,
                    transactional,
                    log_append_time,
                    records,
                }
            },
        )
}

/// Builds the batch and returns it with the expected `(offset, timestamp)` of each record.
fn build(b: &BatchIn) -> (Vec<u8>, Vec<i64>) {
    let mut builder = BatchBuilder::new(b.base_offset)
        .partition_leader_epoch(b.leader_epoch)
        .producer(b.producer.0, b.producer.1, b.producer.2)
        .transactional(b.transactional);
    if let Some(t) = b.log_append_time {
        builder = builder.log_append_time(t);
    }
    let mut offsets = Vec::new();
    let mut next = b.base_offset;
    for r in &b.records {
        let offset = next + i64::from(r.offset_gap);
        let headers: Vec<(&[u8], Option<&[u8]>)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_deref()))
            .collect();
        builder = builder.record_at(
            offset,
            r.timestamp,
            r.key.as_deref(),
            r.value.as_deref(),
            &headers,
        );
        offsets.push(offset);
        next = offset + 1;
    }
    (builder.build().unwrap(), offsets)
}

/// Rewrites an uncompressed batch as a `codec`-compressed one (new length, attributes, CRC).
fn recompress(plain: &[u8], codec: CompressionType) -> Vec<u8> {
    let body = compress(codec, &plain[61..]).unwrap();
    let mut out = plain[..61].to_vec();
    out.extend_from_slice(&body);
    let len = (out.len() - 12) as i32;
    out[8..12].copy_from_slice(&len.to_be_bytes());
    let attrs = i16::from_be_bytes([out[21], out[22]]) | i16::from(codec.id());
    out[21..23].copy_from_slice(&attrs.to_be_bytes());
    let crc = crc32c::crc32c(&out[21..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    out
}

fn check(bytes: &[u8], b: &BatchIn, offsets: &[i64]) {
    let view = RecordBatch::new(bytes).unwrap();
    assert_eq!(view.size_in_bytes(), bytes.len());
    view.ensure_valid().unwrap();
    assert_eq!(view.base_offset(), b.base_offset);
    assert_eq!(view.last_offset(), *offsets.last().unwrap());
    assert_eq!(view.records_count() as usize, b.records.len());
    assert_eq!(view.partition_leader_epoch(), b.leader_epoch);
    assert_eq!(
        (
            view.producer_id(),
            view.producer_epoch(),
            view.base_sequence()
        ),
        b.producer
    );
    assert_eq!(view.is_transactional(), b.transactional);
    assert!(!view.is_control_batch());
    assert_eq!(view.base_timestamp(), b.records[0].timestamp);
    let expected_max = b
        .log_append_time
        .unwrap_or_else(|| b.records.iter().map(|r| r.timestamp).max().unwrap());
    assert_eq!(view.max_timestamp(), expected_max);
    assert_eq!(
        view.timestamp_type(),
        if b.log_append_time.is_some() {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    );

    let records: Vec<_> = view.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), b.records.len());
    for ((got, want), offset) in records.iter().zip(&b.records).zip(offsets) {
        assert_eq!(got.offset, *offset);
        assert_eq!(got.timestamp, b.log_append_time.unwrap_or(want.timestamp));
        assert_eq!(got.key(), want.key.as_deref());
        assert_eq!(got.value(), want.value.as_deref());
        let headers: Vec<(Vec<u8>, Option<Vec<u8>>)> = got
            .headers
            .iter()
            .map(|h| (h.key.to_vec(), h.value.as_deref().map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(headers, want.headers);
        if b.producer.2 >= 0 {
            let delta = (offset - b.base_offset) as i32;
            assert_eq!(
                got.sequence,
                segment::record::increment_sequence(b.producer.2, delta)
            );
        } else {
            assert_eq!(got.sequence, -1);
        }
    }
    assert_eq!(records.last().unwrap().sequence, view.last_sequence());

    // The BatchFormat seam reports the same header facts.
    let info = KafkaBatchFormat::parse_header(bytes, 0).unwrap();
    assert_eq!(info.base_offset, view.base_offset());
    assert_eq!(info.last_offset, view.last_offset());
    assert_eq!(info.offset_of_max_timestamp, view.last_offset());
    assert_eq!(info.max_timestamp, view.max_timestamp());
    assert_eq!(info.size_in_bytes, bytes.len());
    assert_eq!(info.last_sequence, view.last_sequence());
    assert_eq!(info.is_transactional, b.transactional);
    KafkaBatchFormat::validate(bytes, 0).unwrap();
    // Header-only parsing works from the first 61 bytes alone.
    assert_eq!(
        KafkaBatchFormat::parse_header(&bytes[..61], 0).unwrap(),
        info
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn v2_builder_round_trips(b in batch_in()) {
        let (bytes, offsets) = build(&b);
        check(&bytes, &b, &offsets);
        for codec in CompressionType::COMPRESSED {
            let c = recompress(&bytes, codec);
            let view = RecordBatch::new(&c).unwrap();
            prop_assert_eq!(view.compression().unwrap(), codec);
            check(&c, &b, &offsets);
        }
    }

    #[test]
    fn files_of_built_batches_iterate_cleanly(batches in prop::collection::vec(batch_in(), 1..6), tail in 0usize..18) {
        let mut file = Vec::new();
        let mut expected = Vec::new();
        for b in &batches {
            let (bytes, offsets) = build(b);
            expected.push((file.len() as u64, *offsets.last().unwrap()));
            file.extend_from_slice(&bytes);
        }
        let end = file.len();
        file.extend(std::iter::repeat_n(0u8, tail));
        let mut it = batches_from(&file, 0);
        let got: Vec<(u64, i64)> = it.by_ref().map(|b| { let b = b.unwrap(); (b.position(), b.last_offset()) }).collect();
        prop_assert_eq!(got, expected);
        let stop = it.stop_reason().cloned().unwrap();
        if tail == 0 {
            prop_assert_eq!(stop, StopReason::End);
        } else {
            prop_assert_eq!(stop, StopReason::TornTail { position: end as u64, remaining_bytes: tail });
        }
    }

    #[test]
    fn legacy_messages_round_trip(
        magic in 0i8..=1,
        offset in any::<i64>(),
        timestamp in any::<i64>(),
        log_append_time in any::<bool>(),
        key in prop::option::of(bytes(30)),
        value in prop::option::of(bytes(300)),
    ) {
        let msg = LegacyMessage { magic, offset, timestamp, log_append_time, key: key.as_deref(), value: value.as_deref() };
        let bytes = msg.to_vec().unwrap();
        let overhead = if magic == 0 { 14 } else { 22 };
        prop_assert_eq!(bytes.len(), 12 + overhead + key.as_ref().map_or(0, Vec::len) + value.as_ref().map_or(0, Vec::len));
        let b = FileBatch::at(&bytes, 0).unwrap();
        b.ensure_valid().unwrap();
        prop_assert_eq!(b.magic(), magic);
        prop_assert_eq!(b.last_offset(), offset);
        let ts = if magic == 0 { -1 } else { timestamp };
        prop_assert_eq!(b.max_timestamp(), ts);
        let r = b.records().unwrap().next().unwrap().unwrap();
        prop_assert_eq!(r.offset, offset);
        prop_assert_eq!(r.timestamp, ts);
        prop_assert_eq!(r.key(), key.as_deref());
        prop_assert_eq!(r.value(), value.as_deref());
        let info = KafkaBatchFormat::parse_header(&bytes, 0).unwrap();
        prop_assert_eq!((info.last_offset, info.max_timestamp, info.magic), (offset, ts, magic));
    }
}

#[test]
fn builder_rejects_what_kafka_rejects() {
    let err = |b: BatchBuilder| {
        assert!(matches!(
            b.build(),
            Err(segment::record::RecordError::InvalidArgument { .. })
        ))
    };
    err(BatchBuilder::new(0));
    err(BatchBuilder::new(0).record(-2, None, None));
    err(BatchBuilder::new(10).record_at(9, 0, None, None, &[]));
    err(BatchBuilder::new(0)
        .record(0, None, None)
        .record_at(0, 0, None, None, &[]));
    err(BatchBuilder::new(0).record_at(i64::from(i32::MAX) + 1, 0, None, None, &[]));
    assert!(matches!(
        BatchBuilder::new(5).build_empty(4, 0),
        Err(segment::record::RecordError::InvalidArgument { .. })
    ));
}

#[test]
fn empty_batch_as_left_by_the_cleaner() {
    let bytes = BatchBuilder::new(100)
        .producer(7, 2, 30)
        .transactional(true)
        .build_empty(104, 9_999)
        .unwrap();
    assert_eq!(bytes.len(), 61);
    let b = RecordBatch::new(&bytes).unwrap();
    b.ensure_valid().unwrap();
    assert_eq!(b.records_count(), 0);
    assert_eq!(
        (b.base_offset(), b.last_offset_delta(), b.last_offset()),
        (100, 4, 104)
    );
    assert_eq!((b.base_timestamp(), b.max_timestamp()), (-1, 9_999));
    assert_eq!(
        (
            b.producer_id(),
            b.producer_epoch(),
            b.base_sequence(),
            b.last_sequence()
        ),
        (7, 2, 30, 34)
    );
    assert!(b.is_transactional());
    assert_eq!(b.records().unwrap().count(), 0);
    let info = KafkaBatchFormat::parse_header(&bytes, 0).unwrap();
    assert_eq!(
        (info.base_offset, info.last_offset, info.size_in_bytes),
        (100, 104, 61)
    );
    // A record count of 0 with trailing bytes is invalid.
    let mut longer = bytes.clone();
    longer.push(0);
    let len = (longer.len() - 12) as i32;
    longer[8..12].copy_from_slice(&len.to_be_bytes());
    let b = RecordBatch::new(&longer).unwrap();
    assert!(matches!(
        b.records().unwrap().next(),
        Some(Err(segment::record::RecordError::InvalidRecord { .. }))
    ));
}

#[test]
fn last_sequence_wraps_to_zero() {
    let mut b = BatchBuilder::new(0).producer(1, 0, i32::MAX - 1);
    for _ in 0..4 {
        b = b.record(0, None, None);
    }
    let bytes = b.build().unwrap();
    let view = RecordBatch::new(&bytes).unwrap();
    assert_eq!(view.last_sequence(), 1);
    let seqs: Vec<i32> = view
        .records()
        .unwrap()
        .map(|r| r.unwrap().sequence)
        .collect();
    assert_eq!(seqs, vec![i32::MAX - 1, i32::MAX, 0, 1]);
}

#[test]
fn delete_horizon_batches() {
    let bytes = BatchBuilder::new(0)
        .delete_horizon(50_000)
        .record(49_000, Some(b"k"), None)
        .record(51_000, Some(b"k2"), Some(b"v"))
        .build()
        .unwrap();
    let b = RecordBatch::new(&bytes).unwrap();
    assert!(b.attributes().has_delete_horizon());
    assert_eq!(b.delete_horizon_ms(), Some(50_000));
    let ts: Vec<i64> = b.records().unwrap().map(|r| r.unwrap().timestamp).collect();
    assert_eq!(ts, vec![49_000, 51_000]);
}
