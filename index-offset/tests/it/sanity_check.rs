//! Acceptance case 16: the offset-index sanity check.

use std::fs;

use crate::common::*;
use index_offset::{IndexError, OffsetIndex};

/// (a) last offset == base offset passes (since Kafka 2.1).
#[test]
fn case16a_last_offset_equal_to_base_passes() {
    let dir = tmp();
    let index = new_index(dir.path(), 20, 80);
    index.append(20, 0).unwrap();
    index.sanity_check().unwrap();
    assert_eq!(index.last_offset().unwrap(), 20);
    // And an empty index passes too.
    let index = new_index(dir.path(), 21, 80);
    index.sanity_check().unwrap();
}

/// (b) a 17-byte file for base 45 whose slot 1 has relative offset 0xfffffffe: 2 entries,
/// last offset 43 < base 45 → CorruptIndex (checked before the length).
#[test]
fn case16b_negative_relative_offset_is_corrupt() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    let mut bytes = encode_index(&[(1, 0), (-2, 8)]);
    assert_eq!(&bytes[8..12], &[0xff, 0xff, 0xff, 0xfe]);
    bytes.push(0x55);
    fs::write(&path, &bytes).unwrap();
    for index in [
        OffsetIndex::open_read_only(&path, 45).unwrap(),
        OffsetIndex::open(&path, 45, 1024).unwrap(),
    ] {
        assert_eq!(index.entries(), 2);
        assert_eq!(index.max_entries(), 2);
        assert_eq!(index.last_offset().unwrap(), 43);
        assert_eq!(index.entry(1).unwrap(), op(43, 8));
        match index.sanity_check() {
            Err(IndexError::CorruptIndex { path: p, reason }) => {
                assert_eq!(p, path);
                assert!(
                    reason.contains("43") && reason.contains("45"),
                    "reason names last offset and base: {reason}"
                );
                assert!(!reason.contains("17"), "offset check comes first: {reason}");
            }
            other => panic!("expected CorruptIndex, got {other:?}"),
        }
        index.force_unmap();
    }
}

/// (c) a 17-byte file with valid increasing slots → CorruptIndex for the length.
#[test]
fn case16c_length_not_multiple_of_entry_size() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    let mut bytes = encode_index(&[(1, 0), (2, 8)]);
    bytes.push(0);
    fs::write(&path, &bytes).unwrap();
    let index = OffsetIndex::open_read_only(&path, 45).unwrap();
    assert_eq!(index.entries(), 2);
    assert_eq!(index.all_entries().unwrap(), vec![op(46, 0), op(47, 8)]);
    match index.sanity_check() {
        Err(IndexError::CorruptIndex { reason, .. }) => {
            assert!(reason.contains("17") && reason.contains('8'), "{reason}")
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
    let (whole, len) = index.index_file().length_is_whole_slots().unwrap();
    assert_eq!((whole, len), (false, 17));
    index.close().unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        17,
        "read-only close trims nothing"
    );

    // Opened read-write, close() trims to the 2 whole slots (Kafka's trimToValidSize).
    let index = OffsetIndex::open(&path, 45, 1024).unwrap();
    assert!(matches!(
        index.sanity_check(),
        Err(index_core::IndexError::CorruptIndex { .. })
    ));
    index.close().unwrap();
    assert_eq!(fs::read(&path).unwrap(), &bytes[..16]);
    let index = OffsetIndex::open_read_only(&path, 45).unwrap();
    index.sanity_check().unwrap();
}

/// A valid trimmed file passes.
#[test]
fn valid_file_passes() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    fs::write(&path, encode_index(&[(0, 0), (5, 100), (9, 200)])).unwrap();
    let index = OffsetIndex::open_read_only(&path, 45).unwrap();
    index.sanity_check().unwrap();
    assert_eq!(index.last_offset().unwrap(), 54);
}
