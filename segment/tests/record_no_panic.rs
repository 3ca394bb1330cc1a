//! Hostile input never panics: arbitrary bytes and mutated valid batches fed to the batch
//! iterator, the views, the record decoder, the decompressors, the control-record parsers
//! and the `BatchFormat` seam. Every outcome must be `Ok` or a `RecordError`/`FormatError`.

use proptest::prelude::*;
use segment::format::{scan, BatchFormat, KafkaBatchFormat};
use segment::record::{
    batches_from, decompress, fixtures, largest_timestamp_after, legacy_wrapper,
    search_for_offset_with_size, search_for_timestamp, BatchBuilder, CompressionType,
    ControlRecordType, EndTransactionMarker, FileBatch, LegacyBatch, LegacyMessage, RecordBatch,
};

/// Drives every reader over `data`; returns the number of records decoded (to keep the
/// work observable).
fn exercise(data: &[u8]) -> usize {
    let mut n = 0;
    for b in batches_from(data, 0) {
        let Ok(b) = b else { break };
        let _ = b.ensure_valid();
        let _ = (
            b.base_offset(),
            b.last_offset(),
            b.max_timestamp(),
            b.last_sequence(),
        );
        if let Ok(records) = b.records() {
            for r in records {
                let Ok(r) = r else { break };
                n += 1;
                let _ = ControlRecordType::parse_key(r.key(), 0);
                let _ = EndTransactionMarker::decode(r.key(), r.value(), 0);
            }
        }
        if let Some(l) = b.as_legacy() {
            let _ = l.deep_base_offset();
        }
    }
    for start in [0u64, 1, 17, 61] {
        let _ = search_for_offset_with_size(data, 5, start);
        let _ = search_for_timestamp(data, 0, start, 0);
        let _ = largest_timestamp_after(data, start);
    }
    // Direct views on arbitrary bytes.
    if let Ok(b) = RecordBatch::new(data) {
        let _ = b.is_valid();
        if let Ok(rs) = b.records() {
            n += rs.take(10_000).filter(Result::is_ok).count();
        }
    }
    if let Ok(l) = LegacyBatch::new(data) {
        let _ = l.key_value();
        if let Ok(rs) = l.records() {
            n += rs.count();
        }
    }
    // The BatchFormat seam.
    for b in scan::<KafkaBatchFormat>(data, 0) {
        let Ok(b) = b else { break };
        let _ = KafkaBatchFormat::validate(b.bytes, b.info.position);
        let _ = KafkaBatchFormat::search_timestamp(b.bytes, b.info.position, 0, 0);
        let _ = KafkaBatchFormat::end_txn_marker(b.bytes, b.info.position);
    }
    let _ = KafkaBatchFormat::parse_header(data, 0);
    let _ = KafkaBatchFormat::peek_size(data, 0);
    n
}

/// Recomputes the CRC of a v2 batch in place so mutations reach the record decoder.
fn fix_crc(data: &mut [u8]) {
    if data.len() >= 61 && data[16] >= 2 {
        let size = i32::from_be_bytes([data[8], data[9], data[10], data[11]]);
        if size >= 49 && (size as usize) + 12 <= data.len() {
            let end = size as usize + 12;
            let crc = crc32c::crc32c(&data[21..end]);
            data[17..21].copy_from_slice(&crc.to_be_bytes());
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let plain = BatchBuilder::new(3)
        .producer(1, 1, 5)
        .record_with_headers(
            10,
            Some(b"k"),
            Some(b"value"),
            &[(b"h", Some(b"x")), (b"n", None)],
        )
        .record(20, None, None)
        .build()
        .unwrap();
    let mut seeds = vec![
        plain.clone(),
        fixtures::v2(0, 1000),
        fixtures::v1(5, &["hello", "world"]),
        segment::record::control_batch(9, 2, 0, ControlRecordType::Abort, 3, 7).unwrap(),
    ];
    for codec in [
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ] {
        let body = segment::record::compress(codec, &plain[61..]).unwrap();
        let mut c = plain[..61].to_vec();
        c.extend_from_slice(&body);
        let len = (c.len() - 12) as i32;
        c[8..12].copy_from_slice(&len.to_be_bytes());
        c[22] |= codec.id();
        fix_crc(&mut c);
        seeds.push(c);
        if codec != CompressionType::Zstd {
            let inner = [LegacyMessage::v1(0, 1, b"a"), LegacyMessage::v1(1, 2, b"b")];
            seeds.push(legacy_wrapper(LegacyMessage::v1(11, 2, b""), codec, &inner).unwrap());
        }
    }
    seeds
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..400)) {
        exercise(&data);
    }

    #[test]
    fn arbitrary_bytes_with_plausible_header_never_panic(
        mut data in prop::collection::vec(any::<u8>(), 61..600),
        magic in 0u8..4,
        codec in 0u8..8,
        count in prop_oneof![Just(-1i32), 0i32..20, any::<i32>()],
    ) {
        let size = (data.len() - 12) as i32;
        data[8..12].copy_from_slice(&size.to_be_bytes());
        data[16] = magic;
        data[22] = codec;
        data[57..61].copy_from_slice(&count.to_be_bytes());
        fix_crc(&mut data);
        exercise(&data);
    }

    #[test]
    fn mutated_valid_batches_never_panic(
        seed in 0usize..9,
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        truncate in prop::option::of(any::<prop::sample::Index>()),
        keep_crc_valid in any::<bool>(),
    ) {
        let seeds = seeds();
        let mut data = seeds[seed % seeds.len()].clone();
        for (at, byte) in mutations {
            let i = at.index(data.len());
            data[i] = byte;
        }
        if keep_crc_valid {
            fix_crc(&mut data);
        }
        if let Some(t) = truncate {
            data.truncate(t.index(data.len() + 1));
        }
        exercise(&data);
    }

    #[test]
    fn decompressors_never_panic(data in prop::collection::vec(any::<u8>(), 0..300), framed in any::<bool>()) {
        let mut input = data;
        if framed {
            let mut x = segment::record::XERIAL_SNAPPY_MAGIC.to_vec();
            x.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
            x.extend_from_slice(&input);
            input = x;
        }
        for codec in [CompressionType::Gzip, CompressionType::Snappy, CompressionType::Lz4, CompressionType::Zstd] {
            let _ = decompress(codec, &input);
        }
    }

    #[test]
    fn control_parsers_never_panic(key in prop::option::of(prop::collection::vec(any::<u8>(), 0..8)),
                                   value in prop::option::of(prop::collection::vec(any::<u8>(), 0..10))) {
        let _ = ControlRecordType::parse_key(key.as_deref(), 0);
        let _ = EndTransactionMarker::decode(key.as_deref(), value.as_deref(), 0);
    }
}

#[test]
fn seeds_are_valid_before_mutation() {
    for (i, s) in seeds().iter().enumerate() {
        let b = FileBatch::at(s, 0).unwrap();
        b.ensure_valid().unwrap_or_else(|e| panic!("seed {i}: {e}"));
        assert!(b.records().unwrap().all(|r| r.is_ok()), "seed {i}");
    }
}

#[test]
fn varint_edge_cases_in_records_are_invalid_record_errors() {
    use segment::record::RecordError;
    // A record whose length varint has 5 continuation bytes.
    let mut b = fixtures::v2(0, 1000);
    b.truncate(61);
    b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut b);
    let view = RecordBatch::new(&b).unwrap();
    assert!(matches!(
        view.records().unwrap().next(),
        Some(Err(RecordError::InvalidRecord { .. }))
    ));

    // Length larger than the remaining bytes; negative length; negative header count.
    for body in [
        vec![0x7e, 0, 0, 0, 1, 1, 0], // length 63, only 6 bytes follow
        vec![0x01, 0, 0, 0, 1, 1, 0], // length -1
        vec![0x0c, 0, 0, 0, 1, 1, 0x01, 0, 0, 0, 0, 0, 0], // header count -1
        vec![0x0e, 0, 0, 0, 1, 1, 0x02, 0x01, 0, 0, 0, 0, 0, 0], // header key length -1
        vec![0x0e, 0, 0, 0, 1, 1, 0x7e, 0], // header count 63 > remaining
        vec![0x08, 0, 0, 0, 0x7e, 0, 0], // key length 63 past the record
        vec![0x14, 0, 0, 0, 1, 1, 0, 0xff, 0xff, 0xff, 0xff], // length 10, body parses 6
    ] {
        let mut b = fixtures::v2(0, 1000);
        b.truncate(61);
        b.extend_from_slice(&body);
        let len = (b.len() - 12) as i32;
        b[8..12].copy_from_slice(&len.to_be_bytes());
        fix_crc(&mut b);
        let view = RecordBatch::new(&b).unwrap();
        let first = view.records().unwrap().next();
        assert!(
            matches!(first, Some(Err(RecordError::InvalidRecord { .. }))),
            "body {body:02x?}: {first:?}"
        );
    }

    // Declared count larger than what is present; negative count.
    let mut b = fixtures::v2(0, 1000);
    b[57..61].copy_from_slice(&2i32.to_be_bytes());
    fix_crc(&mut b);
    let results: Vec<_> = RecordBatch::new(&b).unwrap().records().unwrap().collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    assert!(matches!(results[1], Err(RecordError::InvalidRecord { .. })));
    b[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    fix_crc(&mut b);
    assert!(matches!(
        RecordBatch::new(&b).unwrap().records(),
        Err(RecordError::InvalidRecord { .. })
    ));
    // Undefined codec id 5.
    let mut b = fixtures::v2(0, 1000);
    b[22] = 5;
    fix_crc(&mut b);
    assert!(matches!(
        RecordBatch::new(&b).unwrap().records(),
        Err(RecordError::UnsupportedCompression { codec_id: 5, .. })
    ));
    // Garbage declared as gzip.
    b[22] = 1;
    fix_crc(&mut b);
    assert!(matches!(
        RecordBatch::new(&b).unwrap().records(),
        Err(RecordError::Decompression {
            codec: CompressionType::Gzip,
            ..
        })
    ));
}
