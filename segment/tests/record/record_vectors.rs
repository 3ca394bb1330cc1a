//! Acceptance cases 42, 44 and 45 of the acceptance cases of `docs/kafka-behaviour.md` (section E), byte for byte.

use segment::record::{
    control_batch, fixtures, BatchBuilder, CompressionType, ControlRecordType,
    EndTransactionMarker, FileBatch, LegacyBatch, LegacyMessage, RecordBatch, RecordError,
    TimestampType,
};

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    assert_eq!(digits.len() % 2, 0, "odd number of hex digits");
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

const CASE_42: &str =
    "0000000000000000 0000003d 00000000 02 5d035a13 0000 00000000 00000000000003e8 00000000000003e8
ffffffffffffffff ffff ffffffff 00000001 16 00 00 00 01 0a 68656c6c6f 00";

const CASE_44_ABORT: &str = "000000000000006a 00000042 00000000 02 fd74c776 0030 00000000 00000000000004d2
00000000000004d2 0000000000000005 0000 ffffffff 00000001 20 00 00 00 08 00000000 0c 0000 00000000 00";

const CASE_45_V1: &str =
    "0000000000000032 0000001b 70ecbf91 01 00 00000000000001f4 ffffffff 00000005 68656c6c6f";
const CASE_45_V0: &str = "0000000000000007 00000014 a4cdab3a 00 00 00000001 6b 00000005 68656c6c6f";

#[test]
fn crc32c_check_value() {
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn case_42_vector_is_what_the_builder_writes() {
    let expected = hex(CASE_42);
    assert_eq!(expected.len(), 73);
    assert_eq!(fixtures::v2(0, 1000), expected);
    let built = BatchBuilder::new(0)
        .partition_leader_epoch(0)
        .record(1000, None, Some(b"hello"))
        .build()
        .unwrap();
    assert_eq!(built, expected);
}

#[test]
fn case_42_parse() {
    let bytes = hex(CASE_42);
    let b = RecordBatch::new(&bytes).unwrap();
    assert_eq!(b.base_offset(), 0);
    assert_eq!(b.batch_length(), 61);
    assert_eq!(b.size_in_bytes(), 73);
    assert_eq!(b.partition_leader_epoch(), 0);
    assert_eq!(b.magic(), 2);
    assert_eq!(b.checksum(), 0x5d03_5a13);
    assert_eq!(b.compute_checksum(), 0x5d03_5a13);
    assert!(b.is_valid());
    b.ensure_valid().unwrap();
    assert_eq!(b.attributes().0, 0);
    assert_eq!(b.compression().unwrap(), CompressionType::None);
    assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
    assert!(!b.is_transactional());
    assert!(!b.is_control_batch());
    assert_eq!(b.delete_horizon_ms(), None);
    assert_eq!(b.last_offset_delta(), 0);
    assert_eq!(b.last_offset(), 0);
    assert_eq!(b.next_offset(), 1);
    assert_eq!(b.base_timestamp(), 1000);
    assert_eq!(b.max_timestamp(), 1000);
    assert_eq!(b.producer_id(), -1);
    assert_eq!(b.producer_epoch(), -1);
    assert_eq!(b.base_sequence(), -1);
    assert_eq!(b.last_sequence(), -1);
    assert_eq!(b.records_count(), 1);

    let records: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.offset, 0);
    assert_eq!(r.timestamp, 1000);
    assert_eq!(r.key(), None);
    assert_eq!(r.value(), Some(&b"hello"[..]));
    assert!(r.headers.is_empty());
    assert_eq!(r.sequence, -1);
    assert_eq!(r.size_in_bytes, 12);
    // Uncompressed records borrow from the batch.
    assert!(matches!(r.value, Some(std::borrow::Cow::Borrowed(_))));

    // The same through the magic-independent view.
    let fb = FileBatch::at(&bytes, 0).unwrap();
    assert!(fb.as_v2().is_some());
    assert_eq!(fb.last_offset(), 0);
    assert_eq!(fb.max_timestamp(), 1000);
    assert_eq!(fb.records_count(), Some(1));
}

#[test]
fn case_42_flipping_any_crc_covered_byte_invalidates() {
    let bytes = hex(CASE_42);
    for i in 17..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            let view = RecordBatch::new(&b).unwrap();
            assert!(!view.is_valid(), "byte {i} mask {mask:#x}");
            match view.ensure_valid() {
                Err(RecordError::CorruptRecord { position: 0, .. }) => {}
                other => panic!("byte {i}: expected CorruptRecord, got {other:?}"),
            }
        }
    }
}

#[test]
fn case_42_partition_leader_epoch_is_not_covered() {
    let bytes = hex(CASE_42);
    for i in 12..16 {
        let mut b = bytes.clone();
        b[i] ^= 0xa5;
        let view = RecordBatch::new(&b).unwrap();
        assert!(view.is_valid(), "byte {i}");
        view.ensure_valid().unwrap();
    }
}

#[test]
fn case_44_abort_marker() {
    let expected = hex(CASE_44_ABORT);
    assert_eq!(expected.len(), 78);
    let built = control_batch(106, 5, 0, ControlRecordType::Abort, 0, 1234).unwrap();
    assert_eq!(built, expected);

    let b = RecordBatch::new(&expected).unwrap();
    assert_eq!(b.checksum(), 0xfd74_c776);
    assert!(b.is_valid());
    assert!(b.is_control_batch());
    assert!(b.is_transactional());
    assert_eq!(b.producer_id(), 5);
    assert_eq!(b.producer_epoch(), 0);
    assert_eq!(b.base_sequence(), -1);
    assert_eq!(b.base_offset(), 106);
    assert_eq!(b.last_offset(), 106);
    assert_eq!(b.base_timestamp(), 1234);
    assert_eq!(b.max_timestamp(), 1234);
    let records: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r.offset, 106);
    assert_eq!(r.size_in_bytes, 17);
    assert_eq!(
        ControlRecordType::parse_key(r.key(), 0).unwrap(),
        ControlRecordType::Abort
    );
    let marker = EndTransactionMarker::decode(r.key(), r.value(), 0).unwrap();
    assert_eq!(marker.control_type, ControlRecordType::Abort);
    assert_eq!(marker.coordinator_epoch, 0);
}

#[test]
fn case_44_commit_marker() {
    let built = control_batch(107, 5, 0, ControlRecordType::Commit, 7, 1234).unwrap();
    assert_eq!(built.len(), 78);
    let b = RecordBatch::new(&built).unwrap();
    assert_eq!(b.checksum(), 0x7327_d87b);
    assert!(b.is_valid());
    assert_eq!(b.base_offset(), 107);
    let r = b.records().unwrap().next().unwrap().unwrap();
    assert_eq!(r.key(), Some(&hex("0000 0001")[..]));
    assert_eq!(r.value(), Some(&hex("0000 00000007")[..]));
    let marker = EndTransactionMarker::decode(r.key(), r.value(), 0).unwrap();
    assert_eq!(marker.control_type, ControlRecordType::Commit);
    assert_eq!(marker.coordinator_epoch, 7);
    // Same bytes through the builder with an explicit leader epoch of 0.
    let via_builder = BatchBuilder::new(107)
        .partition_leader_epoch(0)
        .producer(5, 0, -1)
        .build_end_txn_marker(ControlRecordType::Commit, 7, 1234)
        .unwrap();
    assert_eq!(via_builder, built);
}

#[test]
fn case_44_control_key_rules() {
    let invalid = |key: &[u8]| match ControlRecordType::parse_key(Some(key), 9) {
        Err(RecordError::InvalidRecord { position: 9, .. }) => {}
        other => panic!("key {key:02x?}: expected InvalidRecord, got {other:?}"),
    };
    invalid(&hex("000000"));
    invalid(&hex("ffff 0000"));
    invalid(&hex("8000 0001"));
    assert!(matches!(
        ControlRecordType::parse_key(None, 0),
        Err(RecordError::InvalidRecord { .. })
    ));
    assert_eq!(
        ControlRecordType::parse_key(Some(&hex("0001 0001")), 0).unwrap(),
        ControlRecordType::Commit
    );
    assert_eq!(
        ControlRecordType::parse_key(Some(&hex("0001 0000 ffff")), 0).unwrap(),
        ControlRecordType::Abort
    );
    assert_eq!(
        ControlRecordType::parse_key(Some(&hex("0000 0009")), 0).unwrap(),
        ControlRecordType::Unknown(9)
    );
    for id in 0..=6 {
        let t = ControlRecordType::from_id(id);
        assert_eq!(t.id(), id);
        assert_eq!(
            ControlRecordType::parse_key(Some(&t.key_bytes()), 0).unwrap(),
            t
        );
        assert_ne!(t.name(), "UNKNOWN");
    }
    assert_eq!(ControlRecordType::Unknown(9).name(), "UNKNOWN");
}

#[test]
fn case_44_marker_value_rules() {
    let key = ControlRecordType::Abort.key_bytes();
    let bad = |value: Option<&[u8]>| {
        assert!(
            matches!(
                EndTransactionMarker::decode(Some(&key), value, 0),
                Err(RecordError::InvalidRecord { .. })
            ),
            "{value:02x?}"
        )
    };
    bad(Some(&hex("0000 000000")));
    bad(Some(&hex("ffff 00000001")));
    bad(None);
    // A newer version is read as version 0.
    let m = EndTransactionMarker::decode(Some(&key), Some(&hex("0001 00000003 ff")), 0).unwrap();
    assert_eq!(m.coordinator_epoch, 3);
    // Only ABORT/COMMIT can be markers.
    assert!(matches!(
        EndTransactionMarker::decode(
            Some(&ControlRecordType::LeaderChange.key_bytes()),
            Some(&hex("0000 00000001")),
            0
        ),
        Err(RecordError::InvalidArgument { .. })
    ));
    assert!(matches!(
        control_batch(1, 1, 0, ControlRecordType::SnapshotHeader, 0, 0),
        Err(segment::record::RecordError::InvalidArgument { .. })
    ));
    assert!(matches!(
        EndTransactionMarker::new(ControlRecordType::KraftVoters, 0),
        Err(segment::record::RecordError::InvalidArgument { .. })
    ));
}

#[test]
fn case_45_legacy_v1() {
    let expected = hex(CASE_45_V1);
    assert_eq!(expected.len(), 39);
    assert_eq!(
        LegacyMessage::v1(50, 500, b"hello").to_vec().unwrap(),
        expected
    );
    assert_eq!(fixtures::v1(50, &["hello"]), expected);

    let m = LegacyBatch::new(&expected).unwrap();
    assert_eq!(m.offset(), 50);
    assert_eq!(m.magic(), 1);
    assert_eq!(m.timestamp(), 500);
    assert_eq!(m.timestamp_type(), TimestampType::CreateTime);
    assert_eq!(m.checksum(), 0x70ec_bf91);
    assert!(m.is_valid());
    assert_eq!(m.key_value().unwrap(), (None, Some(&b"hello"[..])));

    let fb = FileBatch::at(&expected, 0).unwrap();
    assert_eq!(fb.magic(), 1);
    assert_eq!(fb.last_offset(), 50);
    assert_eq!(fb.base_offset(), 50);
    assert_eq!(fb.max_timestamp(), 500);
    assert_eq!(fb.size_in_bytes(), 39);
    assert_eq!(fb.producer_id(), -1);
    assert_eq!(fb.partition_leader_epoch(), -1);
    fb.ensure_valid().unwrap();
    let recs: Vec<_> = fb.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!((recs[0].offset, recs[0].timestamp), (50, 500));
    assert_eq!(recs[0].value(), Some(&b"hello"[..]));
    assert_eq!(recs[0].key(), None);
}

#[test]
fn case_45_legacy_v0() {
    let expected = hex(CASE_45_V0);
    assert_eq!(expected.len(), 32);
    let built = LegacyMessage {
        magic: 0,
        offset: 7,
        timestamp: 123,
        log_append_time: false,
        key: Some(b"k"),
        value: Some(b"hello"),
    }
    .to_vec()
    .unwrap();
    assert_eq!(built, expected);

    let fb = FileBatch::at(&expected, 0).unwrap();
    assert_eq!(fb.magic(), 0);
    assert_eq!(fb.last_offset(), 7);
    assert_eq!(fb.max_timestamp(), -1);
    assert_eq!(fb.timestamp_type(), TimestampType::NoTimestamp);
    assert_eq!(fb.checksum(), 0xa4cd_ab3a);
    fb.ensure_valid().unwrap();
    let r = fb.records().unwrap().next().unwrap().unwrap();
    assert_eq!((r.offset, r.timestamp), (7, -1));
    assert_eq!(r.key(), Some(&b"k"[..]));
    assert_eq!(r.value(), Some(&b"hello"[..]));
}

#[test]
fn case_45_legacy_crc_flip_is_corrupt() {
    for v in [hex(CASE_45_V1), hex(CASE_45_V0)] {
        for i in 12..v.len() {
            let mut b = v.clone();
            b[i] ^= 0x40;
            let Ok(m) = LegacyBatch::new(&b) else {
                // Flipping the magic byte makes it a non-legacy magic: rejected up front.
                assert_eq!(i, 16);
                continue;
            };
            assert!(!m.is_valid(), "byte {i}");
            assert!(matches!(
                m.ensure_valid(),
                Err(RecordError::CorruptRecord { .. })
            ));
        }
    }
}
