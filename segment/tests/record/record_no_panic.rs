//! Hostile input never panics: arbitrary bytes and mutated valid batches fed to the batch
//! iterator, the views, the record decoder, the decompressors, the control-record parsers
//! and the `BatchFormat` seam. Every outcome must be `Ok` or a `RecordError`/`FormatError`,
//! and the outcomes are checked, not only survived: iterated batches tile the input,
//! every error names its batch's position and is of the variant the input calls for, a
//! batch with one byte changed under its CRC is rejected as corrupt, an untouched one
//! round-trips, compressed streams round-trip and their truncations are rejected, and
//! the control parsers accept exactly Kafka's well-formed keys and values.

use proptest::prelude::*;
use segment::format::{scan, BatchFormat, KafkaBatchFormat};
use segment::record::{
    batches_from, compress, decompress, fixtures, largest_timestamp_after, legacy_wrapper,
    search_for_offset_with_size, search_for_timestamp, BatchBuilder, CompressionType,
    ControlRecordType, EndTransactionMarker, FileBatch, LegacyBatch, LegacyMessage, RecordBatch,
    RecordError,
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

/// Checks what the readers return on `data`, beyond not panicking: the iterator's batches
/// tile the input from 0 (each starts where the previous ended, none passes the end);
/// validation agrees with the stored and computed checksums; every error is about the
/// batch it came from; the searches answer from those batches. Returns the batches
/// iterated.
fn check_results(data: &[u8]) -> usize {
    let mut expected_pos = 0u64;
    let mut positions = Vec::new();
    let mut max_ts = segment::record::NO_TIMESTAMP;
    let mut iter = batches_from(data, 0);
    let mut clean_end = true;
    for b in iter.by_ref() {
        let b = match b {
            Ok(b) => b,
            Err(e) => {
                assert!(
                    e.is_corruption(),
                    "iteration error of the wrong kind: {e:?}"
                );
                assert_eq!(e.position(), Some(expected_pos), "{e:?}");
                clean_end = false;
                break;
            }
        };
        assert_eq!(b.position(), expected_pos, "batches must tile the input");
        expected_pos += b.size_in_bytes() as u64;
        assert!(
            expected_pos <= data.len() as u64,
            "a batch passes the end of the input"
        );
        positions.push(b.position());
        max_ts = max_ts.max(b.max_timestamp());
        match (b.as_v2(), b.ensure_valid()) {
            (Some(v2), Ok(())) => assert_eq!(v2.checksum(), v2.compute_checksum()),
            (Some(v2), Err(e)) => {
                assert_ne!(
                    v2.checksum(),
                    v2.compute_checksum(),
                    "valid CRC rejected: {e:?}"
                );
                assert!(
                    matches!(e, RecordError::CorruptRecord { position, .. } if position == b.position()),
                    "{e:?}"
                );
            }
            (None, r) => {
                if let Err(e) = r {
                    assert!(matches!(e, RecordError::CorruptRecord { .. }), "{e:?}");
                }
            }
        }
        if let Err(e) = b.records() {
            assert_eq!(e.position(), Some(b.position()), "{e:?}");
            assert!(
                matches!(
                    e,
                    RecordError::InvalidRecord { .. }
                        | RecordError::RecordLengthOverlong { .. }
                        | RecordError::CorruptRecord { .. }
                        | RecordError::UnsupportedCompression { .. }
                        | RecordError::Decompression { .. }
                        | RecordError::DecompressedTooLarge { .. }
                ),
                "{e:?}"
            );
        }
    }
    if clean_end {
        assert!(
            iter.stop_reason().is_some(),
            "iteration ended without a reason"
        );
        match largest_timestamp_after(data, 0) {
            Ok(t) => assert_eq!(t.timestamp, max_ts),
            Err(e) => panic!("largest_timestamp_after failed where iteration did not: {e:?}"),
        }
        if let Ok(Some(found)) = search_for_offset_with_size(data, 5, 0) {
            assert!(found.offset >= 5);
            assert!(positions.contains(&found.position));
        }
    }
    positions.len()
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
    for codec in CompressionType::COMPRESSED {
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
        check_results(&data);
        // Fewer than 17 bytes never hold a batch.
        if data.len() < 17 {
            prop_assert!(batches_from(&data, 0).next().is_none());
        }
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
        // One batch spanning the whole input, with a valid CRC when it is v2.
        prop_assert_eq!(check_results(&data), 1);
        let batch = FileBatch::at(&data, 0).unwrap();
        if magic >= 2 {
            prop_assert!(batch.ensure_valid().is_ok());
            let records = batch.records();
            if count < 0 {
                let invalid = matches!(records, Err(RecordError::InvalidRecord { position: 0, .. }));
                prop_assert!(invalid, "negative count: {:?}", records.err());
            } else if codec & 7 >= 5 {
                prop_assert!(
                    matches!(records, Err(RecordError::UnsupportedCompression { codec_id, .. }) if codec_id == codec & 7),
                    "codec {}: {:?}", codec, records.err()
                );
            }
        }
    }

    #[test]
    fn mutated_valid_batches_never_panic(
        seed in 0usize..9,
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        truncate in prop::option::of(any::<prop::sample::Index>()),
        keep_crc_valid in any::<bool>(),
    ) {
        let seeds = seeds();
        let original = seeds[seed % seeds.len()].clone();
        let mut data = original.clone();
        for (at, byte) in mutations {
            let i = at.index(data.len());
            data[i] = byte;
        }
        if keep_crc_valid {
            fix_crc(&mut data);
        }
        let truncated = match truncate {
            Some(t) => {
                data.truncate(t.index(data.len() + 1));
                data.len() < original.len()
            }
            None => false,
        };
        exercise(&data);
        check_results(&data);
        let changed: Vec<usize> = (0..data.len()).filter(|&i| data[i] != original[i]).collect();
        if !truncated && changed.is_empty() {
            // Untouched: validates and yields exactly the seed's records.
            let a = FileBatch::at(&data, 0).unwrap();
            prop_assert!(a.ensure_valid().is_ok());
            let b = FileBatch::at(&original, 0).unwrap();
            prop_assert_eq!(
                a.records().unwrap().filter(|r| r.is_ok()).count(),
                b.records().unwrap().count()
            );
        }
        if !truncated && original[16] >= 2 && changed.len() == 1 && changed[0] >= 21 {
            // One byte changed under the CRC (a burst of at most 8 bits, which CRC-32C
            // always detects): the exact corruption variant, at the batch's position.
            let v = FileBatch::at(&data, 0).unwrap();
            prop_assert!(
                matches!(v.ensure_valid(), Err(RecordError::CorruptRecord { position: 0, .. })),
                "byte {} changed, CRC still accepted", changed[0]
            );
            let corrupt = matches!(
                KafkaBatchFormat::validate(&data, 0),
                Err(segment::format::FormatError::Corrupt { .. })
            );
            prop_assert!(corrupt);
        }
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
        for codec in CompressionType::COMPRESSED {
            if let Err(e) = decompress(codec, &input) {
                prop_assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{:?}: {}", codec, e);
            }
            // The same bytes as content: compressed, they round-trip exactly, and every
            // cut of the stream is an error or a prefix of the content, never other data;
            // an LZ4 cut is always an error (its end marker is missing).
            let packed = compress(codec, &input).unwrap();
            prop_assert_eq!(&decompress(codec, &packed).unwrap(), &input, "{:?}", codec);
            for cut in [packed.len() / 2, packed.len().saturating_sub(1)] {
                match decompress(codec, &packed[..cut]) {
                    Ok(out) => {
                        prop_assert!(codec != CompressionType::Lz4, "cut lz4 frame accepted");
                        prop_assert!(input.starts_with(&out), "{:?} cut to {} gave other data", codec, cut);
                    }
                    Err(e) => prop_assert_eq!(e.kind(), std::io::ErrorKind::InvalidData),
                }
            }
        }
    }

    #[test]
    fn control_parsers_never_panic(key in prop::option::of(prop::collection::vec(any::<u8>(), 0..8)),
                                   value in prop::option::of(prop::collection::vec(any::<u8>(), 0..10))) {
        let parsed = ControlRecordType::parse_key(key.as_deref(), 7);
        let decoded = EndTransactionMarker::decode(key.as_deref(), value.as_deref(), 7);
        // Kafka's rules: a key of at least 4 bytes with a non-negative version parses.
        let key_ok = key.as_ref().is_some_and(|k| k.len() >= 4 && i16::from_be_bytes([k[0], k[1]]) >= 0);
        match &parsed {
            Ok(t) => {
                prop_assert!(key_ok);
                let k = key.as_ref().unwrap();
                prop_assert_eq!(t.id(), i16::from_be_bytes([k[2], k[3]]));
            }
            Err(e) => {
                prop_assert!(!key_ok);
                prop_assert!(matches!(e, RecordError::InvalidRecord { position: 7, .. }), "{:?}", e);
            }
        }
        // A marker needs an ABORT/COMMIT key and a value of at least 6 bytes, version >= 0.
        let is_marker = matches!(parsed, Ok(ControlRecordType::Abort | ControlRecordType::Commit));
        let value_ok = value.as_ref().is_some_and(|v| v.len() >= 6 && i16::from_be_bytes([v[0], v[1]]) >= 0);
        match &decoded {
            Ok(m) => {
                prop_assert!(is_marker && value_ok);
                let v = value.as_ref().unwrap();
                prop_assert_eq!(m.coordinator_epoch, i32::from_be_bytes([v[2], v[3], v[4], v[5]]));
            }
            Err(RecordError::InvalidArgument { .. }) => prop_assert!(key_ok && !is_marker),
            Err(e) => {
                prop_assert!(!key_ok || (is_marker && !value_ok), "{:?}", e);
                prop_assert!(matches!(e, RecordError::InvalidRecord { position: 7, .. }), "{:?}", e);
            }
        }
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
    // A record whose length varint has 5 continuation bytes: Kafka's `readFrom` lets the
    // varint's `IllegalArgumentException` escape (`k4-leader` sees `UNKNOWN_SERVER_ERROR`;
    // docs/kafka-behaviour.md#record-length-overlong); ours is its own kind, still damaged
    // data to recovery.
    let e = |r: Option<Result<_, RecordError>>| r.and_then(Result::err);
    let mut b = fixtures::v2(0, 1000);
    b.truncate(61);
    b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut b);
    let view = RecordBatch::new(&b).unwrap();
    let overlong = e(view.records().unwrap().next()).expect("an error");
    assert!(
        matches!(overlong, RecordError::RecordLengthOverlong { index: 0, .. }),
        "{overlong:?}"
    );
    assert!(overlong.is_corruption());
    // The same bytes opening a compressed batch's records: Kafka's stream iterator makes
    // the exception an `InvalidRecordException`, an invalid record; damaged data still.
    for codec in CompressionType::COMPRESSED {
        let mut c = b[..61].to_vec();
        c[21..23].copy_from_slice(&i16::from(codec.id()).to_be_bytes());
        c.extend_from_slice(&segment::record::compress(codec, &b[61..]).unwrap());
        let len = (c.len() - 12) as i32;
        c[8..12].copy_from_slice(&len.to_be_bytes());
        fix_crc(&mut c);
        let view = RecordBatch::new(&c).unwrap();
        assert_eq!(view.compression().unwrap(), codec);
        let invalid = view
            .records()
            .unwrap()
            .next()
            .and_then(Result::err)
            .expect("an error");
        assert!(
            matches!(invalid, RecordError::InvalidRecord { position: 0, .. }),
            "{codec:?}: {invalid:?}"
        );
        assert!(invalid.is_corruption());
    }
    // Cut short after four continuation bytes: Kafka's premature EOF, an invalid record.
    let mut short = b[..65].to_vec();
    let len = (short.len() - 12) as i32;
    short[8..12].copy_from_slice(&len.to_be_bytes());
    fix_crc(&mut short);
    assert!(matches!(
        RecordBatch::new(&short).unwrap().records().unwrap().next(),
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
