//! Acceptance cases 23 and 24: the reserved last slot, skip_full_check, maybe_append's acceptance
//! rules and their order, the byte layout, and offset overflow validated before any byte
//! is written (Kafka's cursor-corruption bug is not replicated).

use std::fs;

use crate::common::*;
use index_time::IndexError;

/// Acceptance case 23 (TimeIndexTest.testAppend / testIsFull).
#[test]
fn case23_reserved_last_slot_and_skip_full_check() {
    let dir = tmp();
    let empty = new_index(dir.path(), 46, 360);
    assert!(!empty.is_full());
    let index = new_index(dir.path(), 45, 360);
    for i in 1..30 {
        index.maybe_append(10 * i, 45 + 10 * i).unwrap();
    }
    assert_eq!(index.entries(), 29);
    assert!(index.is_full(), "29 >= 30 - 1");
    match index.maybe_append(10_000, 1000) {
        Err(IndexError::IndexFull { entries, kind, .. }) => {
            assert_eq!((entries, kind), (29, "time index"))
        }
        other => panic!("expected IndexFull, got {other:?}"),
    }
    match index.maybe_append_final(10_000, 280) {
        Err(IndexError::InvalidOffset {
            offset,
            slot,
            last_offset,
            ..
        }) => assert_eq!((offset, slot, last_offset), (280, 29, 335)),
        other => panic!("expected InvalidOffset, got {other:?}"),
    }
    assert!(index.maybe_append_final(10_000, 1000).unwrap());
    assert_eq!(index.entries(), 30);
    assert_eq!(index.last_entry().unwrap(), to(10_000, 1000));
    // No room even with skip_full_check (Kafka: BufferOverflowException): typed error,
    // entries unchanged.
    match index.maybe_append_final(20_000, 2000) {
        Err(IndexError::IndexFull { entries, .. }) => assert_eq!(entries, 30),
        other => panic!("expected IndexFull, got {other:?}"),
    }
    assert_eq!(index.entries(), 30);
    assert_eq!(index.last_entry().unwrap(), to(10_000, 1000));
    // The full-check comes first, even for an append that would be ignored.
    assert!(matches!(
        index.maybe_append(5, 1000),
        Err(IndexError::IndexFull { .. })
    ));
}

/// Acceptance case 24: acceptance rules, check order, exact bytes.
#[test]
fn case24_maybe_append_acceptance_rules() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    let index = new_index(dir.path(), 45, 360);
    assert!(!index.maybe_append(-1, 50).unwrap(), "NO_TIMESTAMP ignored");
    assert_eq!(index.entries(), 0);
    assert!(index.maybe_append(0, 46).unwrap());
    assert!(
        !index.maybe_append(0, 47).unwrap(),
        "same timestamp ignored"
    );
    assert!(
        index.maybe_append(5, 46).unwrap(),
        "same offset, larger timestamp"
    );
    match index.maybe_append(4, 60) {
        Err(IndexError::InvalidTimestamp {
            timestamp,
            slot,
            last_timestamp,
            ..
        }) => assert_eq!((timestamp, slot, last_timestamp), (4, 2, 5)),
        other => panic!("expected InvalidTimestamp, got {other:?}"),
    }
    assert!(matches!(
        index.maybe_append(10, 45),
        Err(IndexError::InvalidOffset {
            offset: 45,
            last_offset: 46,
            ..
        })
    ));
    // Both regress: the offset is checked first.
    assert!(matches!(
        index.maybe_append(3, 40),
        Err(IndexError::InvalidOffset { offset: 40, .. })
    ));
    assert_eq!(index.all_entries().unwrap(), vec![to(0, 46), to(5, 46)]);
    for (t, want) in [
        (-5, to(-1, 45)),
        (0, to(0, 46)),
        (4, to(0, 46)),
        (5, to(5, 46)),
        (100, to(5, 46)),
    ] {
        assert_eq!(index.lookup(t).unwrap(), want, "lookup({t})");
    }
    index.flush().unwrap();
    let expected: [u8; 24] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1,
    ];
    assert_eq!(&fs::read(&path).unwrap()[..24], &expected);
    assert!(matches!(
        index.entry(2),
        Err(IndexError::SlotOutOfRange {
            slot: 2,
            entries: 2,
            ..
        })
    ));
    index.close().unwrap();
    assert_eq!(fs::read(&path).unwrap(), expected);
}

/// An unrepresentable offset is rejected before anything is written; the next valid
/// append lands in the right slot with the right bytes (Kafka would have advanced its
/// cursor by 8 and failed the next append).
#[test]
fn offset_overflow_writes_nothing() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(100));
    let index = new_index(dir.path(), 100, 120);
    assert!(index.maybe_append(10, 100).unwrap());
    for bad in [100 + (1i64 << 31), i64::MAX] {
        match index.maybe_append(20, bad) {
            Err(IndexError::OffsetOverflow {
                offset,
                base_offset,
                ..
            }) => assert_eq!((offset, base_offset), (bad, 100)),
            other => panic!("expected OffsetOverflow, got {other:?}"),
        }
        assert_eq!(index.entries(), 1);
    }
    // On an empty index an offset below the base is an overflow too.
    let below = new_index(dir.path(), 200, 120);
    assert!(matches!(
        below.maybe_append(20, 199),
        Err(IndexError::OffsetOverflow { .. })
    ));
    assert!(below.maybe_append(20, 200 + i32::MAX as i64).unwrap());

    assert!(index.maybe_append(20, 101).unwrap());
    assert_eq!(index.entries(), 2);
    index.close().unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        encode_timeindex(&[(10, 0), (20, 1)])
    );
}

/// Ignored appends (timestamp not larger) are checked before representability: an
/// unrepresentable offset with an old timestamp is simply ignored, as in Kafka.
#[test]
fn ignored_append_does_not_check_representability() {
    let dir = tmp();
    let index = new_index(dir.path(), 100, 120);
    assert!(index.maybe_append(10, 100).unwrap());
    assert!(!index.maybe_append(10, i64::MAX).unwrap());
    assert!(matches!(
        index.maybe_append(-1, 5_000_000_000),
        Err(IndexError::InvalidTimestamp {
            timestamp: -1,
            last_timestamp: 10,
            ..
        })
    ));
    assert_eq!(index.entries(), 1);
}
