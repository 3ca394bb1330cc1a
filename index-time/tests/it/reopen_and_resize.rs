//! Acceptance case 27 and reopen behaviour for the time index: resize return values, a reopened
//! trimmed index is full (entries >= max_entries - 1), and resize below the used size is
//! rejected without changing anything.

use std::fs;

use crate::common::*;
use index_time::{IndexError, OpenMode, TimeIndex};

/// Acceptance case 27 (TimeIndexTest.testResize).
#[test]
fn case27_resize_return_values() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    let index = new_index(dir.path(), 45, 360);
    assert!(!index.resize(360).unwrap());
    assert!(index.resize(180).unwrap());
    assert_eq!((index.length(), index.max_entries()), (180, 15));
    assert!(index.resize(720).unwrap());
    assert_eq!((index.length(), index.max_entries()), (720, 60));
    assert_eq!(fs::metadata(&path).unwrap().len(), 720);
    assert!(!index.resize(730).unwrap(), "730 rounds down to 720");
}

#[test]
fn reopened_trimmed_index_is_full_until_resized() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(45));
    let index = new_index(dir.path(), 45, 360);
    for i in 1..=3 {
        index.maybe_append(100 * i, 45 + i).unwrap();
    }
    index.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 36);
    let index = TimeIndex::open_with(&path, 45, None, OpenMode::ReadWrite).unwrap();
    assert_eq!((index.entries(), index.max_entries()), (3, 3));
    assert!(index.is_full());
    assert_eq!(index.last_entry().unwrap(), to(300, 48));
    assert!(matches!(
        index.maybe_append(400, 49),
        Err(IndexError::IndexFull { entries: 3, .. })
    ));
    assert!(matches!(
        index.maybe_append_final(400, 49),
        Err(IndexError::IndexFull { entries: 3, .. })
    ));
    // Resize below the used size: rejected, nothing changed.
    assert!(matches!(
        index.resize(24),
        Err(IndexError::InvalidArgument { .. })
    ));
    assert_eq!(
        (index.length(), index.entries(), index.max_entries()),
        (36, 3, 3)
    );
    assert_eq!(fs::metadata(&path).unwrap().len(), 36);
    assert!(index.resize(120).unwrap());
    assert!(!index.is_full());
    assert!(index.maybe_append(400, 49).unwrap());
    assert_eq!(index.entries(), 4);
    // reset() with no max size: 0 bytes, 0 slots, full.
    index.reset().unwrap();
    assert_eq!(
        (index.entries(), index.length(), index.max_entries()),
        (0, 0, 0)
    );
    assert_eq!(index.last_entry().unwrap(), to(-1, 45));
    assert!(index.is_full());
}

/// A 1-slot time index is full while empty; skip_full_check fills the reserved slot.
#[test]
fn one_slot_index_is_full_while_empty() {
    let dir = tmp();
    let index = new_index(dir.path(), 0, 12);
    assert!(index.is_full());
    assert!(matches!(
        index.maybe_append(5, 1),
        Err(IndexError::IndexFull { entries: 0, .. })
    ));
    assert!(index.maybe_append_final(5, 1).unwrap());
    assert_eq!(index.all_entries().unwrap(), vec![to(5, 1)]);
    // The repeated final entry is deduplicated (same timestamp) even when full.
    assert!(!index.maybe_append_final(5, 1).unwrap());
}

#[test]
fn reset_with_max_size_and_trim() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(0));
    let index = new_index(dir.path(), 0, 360);
    index.maybe_append(7, 3).unwrap();
    assert!(index.trim_to_valid_size().unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), 12);
    index.reset().unwrap();
    assert_eq!((index.entries(), index.length()), (0, 360));
    assert_eq!(fs::metadata(&path).unwrap().len(), 360);
}
