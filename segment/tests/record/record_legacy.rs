//! Legacy magic 0/1 message sets, including compressed wrapper messages (docs/kafka-behaviour.md#legacy-message-sets).

use segment::record::{
    batches_from, fixtures, legacy_wrapper, CompressionType, FileBatch, LegacyMessage, RecordError,
    StopReason, TimestampType,
};

fn inner_v1(n: i64) -> Vec<(i64, i64, Vec<u8>)> {
    (0..n)
        .map(|i| (i, 1_000 + i, format!("m{i}").into_bytes()))
        .collect()
}

fn wrapper_v1(codec: CompressionType, wrapper_offset: i64, log_append: bool) -> Vec<u8> {
    let inner = inner_v1(3);
    let msgs: Vec<LegacyMessage<'_>> = inner
        .iter()
        .map(|(o, ts, v)| LegacyMessage::v1(*o, *ts, v))
        .collect();
    let wrapper = LegacyMessage {
        magic: 1,
        offset: wrapper_offset,
        timestamp: 5_000,
        log_append_time: log_append,
        key: None,
        value: None,
    };
    legacy_wrapper(wrapper, codec, &msgs).unwrap()
}

#[test]
fn v1_wrappers_decompress_with_absolute_offsets() {
    for codec in [
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
    ] {
        let bytes = wrapper_v1(codec, 102, false);
        let b = FileBatch::at(&bytes, 0).unwrap();
        b.ensure_valid().unwrap();
        assert_eq!(b.compression().unwrap(), codec);
        assert_eq!(b.last_offset(), 102);
        assert_eq!(
            b.base_offset(),
            102,
            "cheap base offset is the wrapper offset"
        );
        assert_eq!(b.as_legacy().unwrap().deep_base_offset().unwrap(), 100);
        assert_eq!(b.max_timestamp(), 5_000);
        assert_eq!(b.records_count(), None);
        let recs: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
        let got: Vec<(i64, i64, Vec<u8>)> = recs
            .iter()
            .map(|r| (r.offset, r.timestamp, r.value().unwrap().to_vec()))
            .collect();
        let want: Vec<(i64, i64, Vec<u8>)> = inner_v1(3)
            .into_iter()
            .map(|(o, ts, v)| (100 + o, ts, v))
            .collect();
        assert_eq!(got, want, "{codec:?}");
    }
}

#[test]
fn v1_wrapper_offset_zero_means_base_zero_and_log_append_time_overrides() {
    let bytes = wrapper_v1(CompressionType::Gzip, 0, true);
    let b = FileBatch::at(&bytes, 0).unwrap();
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    let recs: Vec<_> = b.records().unwrap().map(Result::unwrap).collect();
    assert_eq!(
        recs.iter()
            .map(|r| (r.offset, r.timestamp))
            .collect::<Vec<_>>(),
        vec![(0, 5_000), (1, 5_000), (2, 5_000)]
    );
}

#[test]
fn v0_wrapper_keeps_absolute_inner_offsets() {
    let inner: Vec<LegacyMessage<'_>> = (0..2)
        .map(|i| LegacyMessage {
            magic: 0,
            offset: 40 + i,
            timestamp: 0,
            log_append_time: false,
            key: Some(b"k"),
            value: Some(b"v0"),
        })
        .collect();
    let wrapper = LegacyMessage {
        magic: 0,
        offset: 41,
        timestamp: 0,
        log_append_time: false,
        key: None,
        value: None,
    };
    let bytes = legacy_wrapper(wrapper, CompressionType::Snappy, &inner).unwrap();
    let b = FileBatch::at(&bytes, 0).unwrap();
    b.ensure_valid().unwrap();
    assert_eq!(b.max_timestamp(), -1);
    let recs: Vec<_> = b.records().unwrap().map(Result::unwrap).collect();
    assert_eq!(
        recs.iter()
            .map(|r| (r.offset, r.timestamp))
            .collect::<Vec<_>>(),
        vec![(40, -1), (41, -1)]
    );
}

#[test]
fn bad_wrappers_are_errors() {
    // Empty inner set.
    let wrapper = LegacyMessage::v1(3, 0, b"");
    let empty = legacy_wrapper(wrapper, CompressionType::Gzip, &[]).unwrap();
    let b = FileBatch::at(&empty, 0).unwrap();
    assert!(matches!(
        b.records(),
        Err(RecordError::InvalidRecord { .. })
    ));

    // Nested compression.
    let nested = wrapper_v1(CompressionType::Gzip, 2, false);
    let outer = {
        let mut set = nested;
        set[..8].copy_from_slice(&0i64.to_be_bytes());
        let mut entry = LegacyMessage::v1(0, 0, b"").to_vec().unwrap();
        let compressed = segment::record::compress(CompressionType::Gzip, &set).unwrap();
        // Rebuild as a wrapper by hand: its value is a compressed set whose only entry is
        // itself a compressed wrapper.
        entry.truncate(12 + 4 + 1 + 1 + 8 + 4);
        entry[17] = 1; // gzip
        entry.extend_from_slice(&(compressed.len() as i32).to_be_bytes());
        entry.extend_from_slice(&compressed);
        let size = (entry.len() - 12) as i32;
        entry[8..12].copy_from_slice(&size.to_be_bytes());
        let crc = crc32fast::hash(&entry[16..]);
        entry[12..16].copy_from_slice(&crc.to_be_bytes());
        entry
    };
    let b = FileBatch::at(&outer, 0).unwrap();
    b.ensure_valid().unwrap();
    assert!(matches!(
        b.records(),
        Err(RecordError::InvalidRecord { .. })
    ));

    // zstd is not allowed before magic 2; garbage gzip fails to decompress.
    let mut z = fixtures::v1(0, &["x"]);
    z[17] = 4;
    assert!(matches!(
        FileBatch::at(&z, 0).unwrap().records(),
        Err(RecordError::UnsupportedCompression {
            codec_id: 4,
            magic: 1,
            ..
        })
    ));
    z[17] = 1;
    assert!(matches!(
        FileBatch::at(&z, 0).unwrap().records(),
        Err(RecordError::Decompression { .. })
    ));
    assert!(matches!(
        legacy_wrapper(LegacyMessage::v1(0, 0, b""), CompressionType::Zstd, &[]),
        Err(RecordError::InvalidArgument { .. })
    ));
}

#[test]
fn files_mixing_plain_and_wrapped_messages() {
    let mut file = fixtures::v1(0, &["a", "b"]);
    let wrapped_at = file.len() as u64;
    // Inner relative offsets 0..2 with wrapper offset 4 → absolute 2, 3, 4.
    file.extend_from_slice(&wrapper_v1(CompressionType::Lz4, 4, false));
    file.extend_from_slice(&fixtures::v1(5, &["c"]));
    let mut it = batches_from(&file, 0);
    let batches: Vec<_> = it.by_ref().map(Result::unwrap).collect();
    assert_eq!(it.stop_reason(), Some(&StopReason::End));
    assert_eq!(
        batches
            .iter()
            .map(|b| (b.position(), b.last_offset()))
            .collect::<Vec<_>>(),
        vec![
            (0, 0),
            (35, 1),
            (wrapped_at, 4),
            (wrapped_at + batches[2].size_in_bytes() as u64, 5)
        ]
    );
    let offsets: Vec<i64> = batches
        .iter()
        .flat_map(|b| b.records().unwrap().map(|r| r.unwrap().offset))
        .collect();
    assert_eq!(offsets, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(
        segment::record::search_for_timestamp(&file, 1_001, 0, 0)
            .unwrap()
            .unwrap()
            .offset,
        3
    );
}

#[test]
fn v1_fixture_with_several_values() {
    let f = fixtures::v1(10, &["hello", "hello", "hello"]);
    assert_eq!(f.len(), 3 * 39);
    let got: Vec<_> = batches_from(&f, 0)
        .map(|b| {
            let b = b.unwrap();
            (b.last_offset(), b.max_timestamp())
        })
        .collect();
    assert_eq!(got, vec![(10, 100), (11, 100), (12, 100)]);
}

/// The magic 0 fixture written by Kafka 4.4's own classes (`segment/tests/dump/legacy`,
/// `oracle.DumpFixtures`): its LZ4 wrapper carries the header checksum of Kafka's legacy
/// framing (computed over the frame magic too), which Kafka's reader skips for magic 0.
/// Every wrapper reads back, with its inner offsets, and the LZ4 frame header we write for
/// a magic 0 wrapper is Kafka's byte for byte.
#[test]
fn kafka_magic0_lz4_wrapper_reads_and_our_header_matches() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/dump/legacy/magic0-0/00000000000000000000.log");
    let bytes = std::fs::read(&path).unwrap();
    let mut offsets = Vec::new();
    let mut kafka_header = None;
    for b in batches_from(&bytes, 0) {
        let b = b.unwrap();
        let legacy = b.as_legacy().unwrap();
        assert_eq!(legacy.magic(), 0);
        if b.compression().unwrap() == CompressionType::Lz4 {
            let (_, value) = legacy.key_value().unwrap();
            kafka_header = Some(value.unwrap()[..7].to_vec());
        }
        for r in b.records().unwrap() {
            offsets.push(r.unwrap().offset);
        }
    }
    assert_eq!(offsets, (0..30).collect::<Vec<i64>>());
    let inner = [LegacyMessage {
        magic: 0,
        offset: 0,
        timestamp: -1,
        log_append_time: false,
        key: None,
        value: Some(b"v"),
    }];
    let wrapper = LegacyMessage {
        value: None,
        ..inner[0]
    };
    let ours = legacy_wrapper(wrapper, CompressionType::Lz4, &inner).unwrap();
    let b = FileBatch::at(&ours, 0).unwrap();
    let (_, value) = b.as_legacy().unwrap().key_value().unwrap();
    assert_eq!(Some(value.unwrap()[..7].to_vec()), kafka_header);
    assert_eq!(b.records().unwrap().count(), 1);
}
