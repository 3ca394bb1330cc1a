//! `BatchBuilder::compression`: compressed v2 batches for all five codecs read back with the
//! same records, a valid CRC and the codec in attribute bits 0–2; transaction markers built
//! from a compressing builder stay uncompressed.

use segment::record::{BatchBuilder, CompressionType, ControlRecordType, RecordBatch};

const CODECS: [CompressionType; 5] = CompressionType::ALL;

fn builder(codec: CompressionType) -> BatchBuilder {
    let mut b = BatchBuilder::new(100)
        .partition_leader_epoch(3)
        .producer(7, 1, 0)
        .compression(codec);
    for i in 0..200u32 {
        let value = format!("value {i} value {i} value {i}");
        let key = (i % 3 != 0).then(|| format!("k{}", i % 7));
        b = b.record_with_headers(
            1_700_000_000_000 + i64::from(i),
            key.as_deref().map(str::as_bytes),
            (i % 11 != 0).then_some(value.as_bytes()),
            &[(b"h".as_slice(), Some(b"v".as_slice()))],
        );
    }
    b
}

#[test]
fn every_codec_round_trips_with_a_valid_crc() {
    let plain = builder(CompressionType::None).build().unwrap();
    let plain_records: Vec<_> = RecordBatch::new(&plain)
        .unwrap()
        .records()
        .unwrap()
        .map(|r| r.unwrap().into_owned())
        .collect();
    for codec in CODECS {
        let bytes = builder(codec).build().unwrap();
        let batch = RecordBatch::new(&bytes).unwrap();
        batch.ensure_valid().unwrap();
        assert_eq!(batch.compression().unwrap(), codec, "{codec:?}");
        assert_eq!(batch.attributes().compression_id(), codec.id());
        assert_eq!(batch.records_count(), 200);
        assert_eq!(batch.last_offset(), 299);
        let records: Vec<_> = batch
            .records()
            .unwrap()
            .map(|r| r.unwrap().into_owned())
            .collect();
        assert_eq!(records, plain_records, "{codec:?}");
        if codec != CompressionType::None {
            assert!(bytes.len() < plain.len(), "{codec:?} did not compress");
        }
    }
}

#[test]
fn markers_are_never_compressed() {
    let marker = builder(CompressionType::Zstd)
        .build_end_txn_marker(ControlRecordType::Commit, 0, 1_700_000_000_500)
        .unwrap();
    let batch = RecordBatch::new(&marker).unwrap();
    assert_eq!(batch.compression().unwrap(), CompressionType::None);
    assert!(batch.is_control_batch());
    assert_eq!(marker.len(), 78);
}
