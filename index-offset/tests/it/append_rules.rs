//! Acceptance cases 7, 8 and 9: full index, monotonic offsets, relative-offset range, the order of
//! the checks, and the exact byte layout Kafka writes.

use std::fs;

use crate::common::*;
use index_offset::IndexError;

/// Acceptance case 7 (OffsetIndexTest.appendTooMany): a full index rejects appends with IndexFull
/// and keeps its 30 entries.
#[test]
fn case07_full_index() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 240);
    for i in 0..30 {
        index.append(46 + i, i as u32).unwrap();
    }
    assert!(index.is_full());
    match index.append(76, 1) {
        Err(IndexError::IndexFull {
            entries,
            kind,
            path,
            ..
        }) => {
            assert_eq!(entries, 30);
            assert_eq!(kind, "offset index");
            assert_eq!(path, index.path());
        }
        other => panic!("expected IndexFull, got {other:?}"),
    }
    assert_eq!(index.entries(), 30);
    assert_eq!(index.last_offset().unwrap(), 75);
    // Check order: full is checked before monotonicity and representability.
    assert!(matches!(
        index.append(10, 1),
        Err(IndexError::IndexFull { entries: 30, .. })
    ));
    assert!(matches!(
        index.append(i64::MAX, 1),
        Err(IndexError::IndexFull { entries: 30, .. })
    ));
    assert_eq!(index.entries(), 30);
}

/// Acceptance case 8 (OffsetIndexTest.appendOutOfOrder + edge): non-increasing offsets are rejected
/// with InvalidOffset naming offset, slot and last offset.
#[test]
fn case08_monotonic_offsets() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 240);
    index.append(51, 0).unwrap();
    match index.append(50, 1) {
        Err(IndexError::InvalidOffset {
            offset,
            slot,
            last_offset,
            ..
        }) => assert_eq!((offset, slot, last_offset), (50, 1, 51)),
        other => panic!("expected InvalidOffset, got {other:?}"),
    }
    match index.append(51, 5) {
        Err(IndexError::InvalidOffset {
            offset,
            slot,
            last_offset,
            ..
        }) => assert_eq!((offset, slot, last_offset), (51, 1, 51)),
        other => panic!("expected InvalidOffset for an equal offset, got {other:?}"),
    }
    assert_eq!(index.entries(), 1);
    assert_eq!(index.all_entries().unwrap(), vec![op(51, 0)]);

    // Representable but not larger than the last offset.
    let dir2 = tmp();
    let index = new_index(dir2.path(), 100, 32);
    index.append(100, 0).unwrap();
    index.append(2_147_483_747, 3).unwrap();
    assert!(matches!(
        index.append(200, 9),
        Err(IndexError::InvalidOffset {
            offset: 200,
            slot: 2,
            last_offset: 2_147_483_747,
            ..
        })
    ));
    // Monotonicity is checked before representability: an offset that is both too
    // small and below the base reports InvalidOffset.
    assert!(matches!(
        index.append(5, 9),
        Err(IndexError::InvalidOffset { offset: 5, .. })
    ));
    assert_eq!(index.entries(), 2);
}

/// Acceptance case 9: relative offsets must lie in [0, 2^31 - 1]; positions are not validated; the
/// file bytes are exactly Kafka's.
#[test]
fn case09_relative_offset_range_and_byte_layout() {
    let dir = tmp();
    let path = dir.path().join(index_name(100));
    let index = new_index(dir.path(), 100, 32);
    match index.append(99, 0) {
        Err(IndexError::OffsetOverflow {
            offset,
            base_offset,
            ..
        }) => assert_eq!((offset, base_offset), (99, 100)),
        other => panic!("expected OffsetOverflow, got {other:?}"),
    }
    assert!(matches!(
        index.append(2_147_483_748, 0),
        Err(IndexError::OffsetOverflow {
            offset: 2_147_483_748,
            base_offset: 100,
            ..
        })
    ));
    assert_eq!(index.entries(), 0, "nothing written on overflow");
    index.append(100, 0).unwrap();
    index.append(101, (-7i32) as u32).unwrap(); // Kafka's int position -7
    index.append(2_147_483_747, 3).unwrap(); // relative 2^31 - 1
    assert_eq!(index.entries(), 3);
    assert_eq!(index.last_offset().unwrap(), 2_147_483_747);
    assert!(!index.is_full());
    index.sanity_check().unwrap();
    index.flush().unwrap();
    let expected: [u8; 24] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xf9, //
        0x7f, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x03,
    ];
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 32);
    assert_eq!(&bytes[..24], &expected);
    assert_eq!(&bytes[24..], &[0u8; 8], "unused slot stays zero");
    assert_eq!(index.entry(1).unwrap(), op(101, 0xffff_fff9));
    index.close().unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        expected,
        "close trims to 24 bytes"
    );
}

/// Offsets at the extremes of i64 are rejected as overflow, never wrap around.
#[test]
fn extreme_offsets_overflow_without_wrapping() {
    let dir = tmp();
    let index = new_index(dir.path(), 0, 64);
    for o in [i64::MIN, -1, 1i64 << 31, i64::MAX] {
        assert!(
            matches!(index.append(o, 0), Err(IndexError::OffsetOverflow { offset, .. }) if offset == o),
            "{o}"
        );
    }
    let base = i64::MAX - 10;
    let index = new_index(dir.path(), base, 64);
    assert!(matches!(
        index.append(i64::MIN, 0),
        Err(IndexError::OffsetOverflow { .. })
    ));
    index.append(i64::MAX, 4).unwrap();
    assert_eq!(index.last_entry().unwrap(), op(i64::MAX, 4));
    assert_eq!(index.lookup(i64::MAX).unwrap(), op(i64::MAX, 4));
    assert_eq!(index.lookup(base).unwrap(), op(base, 0));
    assert_eq!(index.entries(), 1);
}

/// Errors leave the index appendable: after every rejected append the next valid one
/// lands in the next slot.
#[test]
fn rejected_appends_do_not_advance_the_cursor() {
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    let index = new_index(dir.path(), 0, 40);
    index.append(10, 100).unwrap();
    assert!(matches!(
        index.append(10, 200),
        Err(index_core::IndexError::InvalidOffset { .. })
    ));
    assert!(matches!(
        index.append(-1, 200),
        Err(index_core::IndexError::InvalidOffset { .. })
    ));
    assert!(matches!(
        index.append(1 << 40, 200),
        Err(index_core::IndexError::OffsetOverflow { .. })
    ));
    index.append(20, 200).unwrap();
    index.close().unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        encode_index(&[(10, 100), (20, 200)])
    );
}
