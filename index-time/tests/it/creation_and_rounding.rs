//! Acceptance cases 2, 3 and 30 for the time index: preallocation, rounding to 12-byte slots,
//! invalid max sizes, last entry and entry size.

use std::fs;

use crate::common::*;
use index_time::{IndexError, OpenMode, TimeIndex, ENTRY_SIZE, NO_TIMESTAMP};

#[test]
fn new_time_index_is_preallocated_and_empty() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    let index = TimeIndex::open(&path, 45, 360).unwrap();
    assert_eq!(fs::read(&path).unwrap(), vec![0u8; 360]);
    assert_eq!(
        (index.length(), index.max_entries(), index.entries()),
        (360, 30, 0)
    );
    assert!(!index.is_full());
    assert_eq!(index.size_in_bytes(), 0);
    assert_eq!(index.last_entry().unwrap(), to(NO_TIMESTAMP, 45));
    assert_eq!(index.lookup(100).unwrap(), to(-1, 45));
    index.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
}

/// Acceptance case 2: TI(45,100) → 96 bytes / 8 slots; TI(45,1500) → 125 slots;
/// TI(45,10485760) → 10485756 bytes / 873813 slots.
#[test]
fn case02_size_rounding() {
    let dir = tmp();
    for (i, (max, bytes, slots)) in [
        (100usize, 96u64, 8usize),
        (1500, 1500, 125),
        (10_485_760, 10_485_756, 873_813),
        (12, 12, 1),
        (23, 12, 1),
        (24, 24, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("{i}.timeindex"));
        let index = TimeIndex::open(&path, 45, max).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), bytes, "max {max}");
        assert_eq!(index.max_entries(), slots, "max {max}");
        assert_eq!(index.entries(), 0);
    }
}

/// Acceptance case 3: TI(45, 11) → InvalidArgument naming 11; the empty file stays.
#[test]
fn case03_invalid_max_size() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    match TimeIndex::open(&path, 45, 11) {
        Err(IndexError::InvalidArgument { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(reason.contains("invalid max index size 11"), "{reason}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    let p2 = dir.path().join("x.timeindex");
    assert!(matches!(
        TimeIndex::open_with(&p2, 45, None, OpenMode::ReadWrite),
        Err(IndexError::InvalidArgument { reason, .. }) if reason.contains("-1")
    ));
    assert_eq!(fs::metadata(&p2).unwrap().len(), 0);
    // Reopened (exists now): 0 slots, full (0 >= 0 - 1), appends rejected.
    let index = TimeIndex::open(&path, 45, 11).unwrap();
    assert!(index.is_full());
    assert!(matches!(
        index.maybe_append(5, 46),
        Err(IndexError::IndexFull { entries: 0, .. })
    ));
    assert!(matches!(
        index.maybe_append_final(5, 46),
        Err(IndexError::IndexFull { entries: 0, .. })
    ));
}

/// Acceptance case 30 (TimeIndexTest.testLastEntry / testParseEntry / testEntrySize).
#[test]
fn case30_parse_entry_and_last_entry() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 360);
    assert_eq!(index.last_entry().unwrap(), to(-1, 45));
    assert!(index.maybe_append(1, 46).unwrap());
    assert_eq!(index.last_entry().unwrap(), to(1, 46));
    assert_eq!(index.entry(0).unwrap(), to(1, 46));
    assert_eq!(ENTRY_SIZE, 12);
    assert_eq!(index.size_in_bytes(), 12);
}
