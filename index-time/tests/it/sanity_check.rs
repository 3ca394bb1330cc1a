//! Acceptance case 26: the time-index sanity check and the order of its checks.

use std::fs;

use crate::common::*;
use index_time::{IndexError, TimeIndex};

fn corrupt_reason(index: &TimeIndex) -> String {
    match index.sanity_check() {
        Err(IndexError::CorruptIndex { reason, .. }) => reason,
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
}

#[test]
fn case26a_last_timestamp_below_first() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    fs::write(&path, encode_timeindex(&[(100, 1), (50, 2)])).unwrap();
    let index = TimeIndex::open_read_only(&path, 45).unwrap();
    assert_eq!(index.all_entries().unwrap(), vec![to(100, 46), to(50, 47)]);
    let reason = corrupt_reason(&index);
    assert!(reason.contains("50") && reason.contains("100"), "{reason}");
}

#[test]
fn case26b_last_offset_below_base_checked_after_timestamps() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    fs::write(&path, encode_timeindex(&[(100, 1), (50, 2), (200, -3)])).unwrap();
    let index = TimeIndex::open_read_only(&path, 45).unwrap();
    assert_eq!(index.last_entry().unwrap(), to(200, 42));
    let reason = corrupt_reason(&index);
    assert!(reason.contains("42") && reason.contains("45"), "{reason}");
}

#[test]
fn case26c_length_not_multiple_of_12() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    let mut bytes = encode_timeindex(&[(100, 1)]);
    bytes.push(0);
    fs::write(&path, &bytes).unwrap();
    let index = TimeIndex::open_read_only(&path, 45).unwrap();
    assert_eq!((index.entries(), index.length()), (1, 13));
    let reason = corrupt_reason(&index);
    assert!(reason.contains("13") && reason.contains("12"), "{reason}");
}

#[test]
fn case26_five_valid_entries_pass() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 360);
    for i in 0..5 {
        index.maybe_append(1000 + i, 45 + i).unwrap();
    }
    index.sanity_check().unwrap();
    // Empty passes too.
    new_index(dir.path(), 46, 360).sanity_check().unwrap();
}
