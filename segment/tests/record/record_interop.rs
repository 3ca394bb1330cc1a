//! Interoperability with an independent implementation: the `kafka-protocol` crate.
//!
//! * batches written by [`BatchBuilder`] decode with `RecordBatchDecoder`, field by field;
//! * batches written by `RecordBatchEncoder` (uncompressed, gzip, snappy, lz4, zstd) read
//!   through [`RecordBatch`], field by field.

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    TimestampType as KpTimestampType,
};
use segment::record::{
    batches_from, control_batch, BatchBuilder, CompressionType, ControlRecordType,
    EndTransactionMarker, RecordBatch, TimestampType,
};

type Hdr<'a> = (&'a [u8], Option<&'a [u8]>);

struct Input<'a> {
    timestamp: i64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    headers: Vec<Hdr<'a>>,
}

fn inputs() -> Vec<Input<'static>> {
    vec![
        Input {
            timestamp: 1_700_000_000_000,
            key: Some(b"user-1"),
            value: Some(b"{\"amount\": 10}"),
            headers: vec![(b"trace", Some(b"abc")), (b"empty", None)],
        },
        Input {
            timestamp: 1_700_000_000_250,
            key: None,
            value: Some(b""),
            headers: vec![],
        },
        Input {
            timestamp: 1_699_999_999_900,
            key: Some(b"user-2"),
            value: None,
            headers: vec![(b"h", Some(&[0u8, 1, 2, 255]))],
        },
    ]
}

#[test]
fn our_batches_decode_with_kafka_protocol() {
    let mut b = BatchBuilder::new(1000)
        .partition_leader_epoch(7)
        .producer(42, 3, 100)
        .transactional(true);
    for i in inputs() {
        b = b.record_with_headers(i.timestamp, i.key, i.value, &i.headers);
    }
    let bytes = b.build().unwrap();

    let mut buf = Bytes::from(bytes.clone());
    let info = RecordBatchDecoder::decode_batch_info(&mut buf.clone()).unwrap();
    assert_eq!(info.len(), 1);
    let info = &info[0];
    assert_eq!(info.record_count, 3);
    assert_eq!(info.min_offset, 1000);
    assert_eq!(info.min_timestamp, 1_700_000_000_000); // Kafka: base = first record's timestamp
    assert_eq!(info.base_sequence, 100);
    assert!(info.transactional);
    assert!(!info.control);
    assert_eq!(info.partition_leader_epoch, 7);
    assert_eq!(info.producer_id, 42);
    assert_eq!(info.producer_epoch, 3);
    assert_eq!(info.compression, Compression::None);
    assert_eq!(info.version, 2);

    let set = RecordBatchDecoder::decode(&mut buf).unwrap();
    assert!(buf.is_empty());
    assert_eq!(set.records.len(), 3);
    for (i, (r, input)) in set.records.iter().zip(inputs()).enumerate() {
        assert_eq!(r.offset, 1000 + i as i64);
        assert_eq!(r.timestamp, input.timestamp);
        assert_eq!(r.sequence, 100 + i as i32);
        assert_eq!(r.key.as_deref(), input.key);
        assert_eq!(r.value.as_deref(), input.value);
        assert_eq!(r.timestamp_type, KpTimestampType::Creation);
        assert!(r.transactional && !r.control);
        assert_eq!(
            (r.producer_id, r.producer_epoch, r.partition_leader_epoch),
            (42, 3, 7)
        );
        let headers: Vec<(Vec<u8>, Option<Vec<u8>>)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_ref().map(|v| v.to_vec())))
            .collect();
        let expected: Vec<(Vec<u8>, Option<Vec<u8>>)> = input
            .headers
            .iter()
            .map(|(k, v)| (k.to_vec(), v.map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(headers, expected);
    }

    // And our own view agrees with the header kafka-protocol saw.
    let view = RecordBatch::new(&bytes).unwrap();
    assert_eq!(view.max_timestamp(), 1_700_000_000_250);
    assert_eq!(view.last_sequence(), 102);
}

#[test]
fn our_control_batch_decodes_with_kafka_protocol() {
    let bytes = control_batch(107, 5, 0, ControlRecordType::Commit, 7, 1234).unwrap();
    let set = RecordBatchDecoder::decode(&mut Bytes::from(bytes)).unwrap();
    assert_eq!(set.records.len(), 1);
    let r = &set.records[0];
    assert!(r.control && r.transactional);
    assert_eq!((r.offset, r.timestamp, r.producer_id), (107, 1234, 5));
    let marker = EndTransactionMarker::decode(r.key.as_deref(), r.value.as_deref(), 0).unwrap();
    assert_eq!(marker.control_type, ControlRecordType::Commit);
    assert_eq!(marker.coordinator_epoch, 7);
}

fn kp_records(control: bool) -> Vec<KpRecord> {
    let timestamps = [5_000i64, 4_000, 6_500, 6_000, 4_500, 5_500];
    timestamps
        .iter()
        .enumerate()
        .map(|(i, ts)| {
            let mut headers = IndexMap::new();
            if i % 2 == 0 {
                headers.insert(
                    StrBytes::from_string(format!("hk{i}")),
                    Some(Bytes::from(vec![i as u8; i + 1])),
                );
                headers.insert(StrBytes::from_string("null".to_string()), None);
            }
            KpRecord {
                transactional: false,
                control,
                delete_horizon: false,
                partition_leader_epoch: 2,
                producer_id: 9,
                producer_epoch: 1,
                timestamp_type: KpTimestampType::Creation,
                offset: 500 + i as i64,
                sequence: 10 + i as i32,
                timestamp: *ts,
                key: (i != 1).then(|| Bytes::from(format!("key-{i}"))),
                value: (i != 4).then(|| Bytes::from(vec![b'x'; 100 * i])),
                headers,
            }
        })
        .collect()
}

fn codec_pairs() -> [(Compression, CompressionType); 5] {
    [
        (Compression::None, CompressionType::None),
        (Compression::Gzip, CompressionType::Gzip),
        (Compression::Snappy, CompressionType::Snappy),
        (Compression::Lz4, CompressionType::Lz4),
        (Compression::Zstd, CompressionType::Zstd),
    ]
}

#[test]
fn kafka_protocol_batches_read_through_our_view() {
    let input = kp_records(false);
    for (kp_codec, codec) in codec_pairs() {
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            &input,
            &RecordEncodeOptions {
                version: 2,
                compression: kp_codec,
            },
        )
        .unwrap();
        let bytes = buf.to_vec();

        let batches: Vec<_> = batches_from(&bytes, 0).map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1, "{codec:?}");
        let b = RecordBatch::new(&bytes).unwrap();
        assert_eq!(b.size_in_bytes(), bytes.len());
        b.ensure_valid().unwrap();
        assert_eq!(b.compression().unwrap(), codec);
        assert_eq!(b.magic(), 2);
        assert_eq!(b.base_offset(), 500);
        assert_eq!(b.last_offset(), 505);
        assert_eq!(b.records_count(), 6);
        assert_eq!(b.partition_leader_epoch(), 2);
        assert_eq!((b.producer_id(), b.producer_epoch()), (9, 1));
        assert_eq!((b.base_sequence(), b.last_sequence()), (10, 15));
        assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(b.max_timestamp(), 6_500);
        // kafka-protocol writes the minimum timestamp as the base timestamp.
        assert_eq!(b.base_timestamp(), 4_000);
        assert!(!b.is_transactional() && !b.is_control_batch());
        if codec == CompressionType::Snappy {
            assert!(b
                .records_bytes()
                .starts_with(&segment::record::XERIAL_SNAPPY_MAGIC));
        }

        let records: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(records.len(), input.len());
        for (ours, theirs) in records.iter().zip(&input) {
            assert_eq!(ours.offset, theirs.offset, "{codec:?}");
            assert_eq!(ours.timestamp, theirs.timestamp, "{codec:?}");
            assert_eq!(ours.sequence, theirs.sequence, "{codec:?}");
            assert_eq!(ours.key(), theirs.key.as_deref(), "{codec:?}");
            assert_eq!(ours.value(), theirs.value.as_deref(), "{codec:?}");
            let h: Vec<_> = ours
                .headers
                .iter()
                .map(|h| {
                    (
                        h.key_str().into_owned(),
                        h.value.as_deref().map(<[u8]>::to_vec),
                    )
                })
                .collect();
            let expected: Vec<_> = theirs
                .headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_ref().map(|v| v.to_vec())))
                .collect();
            assert_eq!(h, expected, "{codec:?}");
        }
    }
}

#[test]
fn kafka_protocol_control_marker_reads_through_our_view() {
    let mut rec = kp_records(true).remove(0);
    rec.transactional = true;
    rec.sequence = -1;
    rec.key = Some(Bytes::copy_from_slice(
        &ControlRecordType::Abort.key_bytes(),
    ));
    rec.value = Some(Bytes::copy_from_slice(
        &EndTransactionMarker::new(ControlRecordType::Abort, 11)
            .unwrap()
            .value_bytes(),
    ));
    rec.headers.clear();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        std::slice::from_ref(&rec),
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    let b = RecordBatch::new(&buf).unwrap();
    b.ensure_valid().unwrap();
    assert!(b.is_control_batch() && b.is_transactional());
    let r = b.records().unwrap().next().unwrap().unwrap();
    let m = EndTransactionMarker::decode(r.key(), r.value(), 0).unwrap();
    assert_eq!(
        (m.control_type, m.coordinator_epoch),
        (ControlRecordType::Abort, 11)
    );
}
