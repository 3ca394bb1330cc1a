//! Acceptance cases 12 and 18: a reopened trimmed index is full until resized; resize/reset edge
//! cases (the Rust port rejects a resize below the used size without changing anything).

use std::fs;

use crate::common::*;
use index_offset::{IndexError, OffsetIndex, OpenMode};

/// Builds the state at the end of acceptance case 12: reopened without a max size, grown to 240
/// bytes, 3 entries (51,0) (52,1) (53,2).
fn case12(dir: &std::path::Path) -> OffsetIndex {
    let path = dir.join(index_name(45));
    let index = new_index(dir, 45, 240);
    index.append(51, 0).unwrap();
    index.append(52, 1).unwrap();
    index.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 16);

    let index = OffsetIndex::open_with(&path, 45, None, OpenMode::ReadWrite).unwrap();
    assert_eq!(index.max_index_size_for_test(), None);
    assert_eq!(index.length(), 16);
    assert_eq!(index.entries(), 2);
    assert_eq!(index.max_entries(), 2);
    assert_eq!(index.last_offset().unwrap(), 52);
    assert!(index.is_full());
    assert_eq!(index.lookup(51).unwrap(), op(51, 0));
    assert_eq!(index.lookup(52).unwrap(), op(52, 1));
    assert!(matches!(
        index.append(53, 2),
        Err(IndexError::IndexFull { entries: 2, .. })
    ));
    assert!(index.resize(240).unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), 240);
    assert_eq!(index.length(), 240);
    assert_eq!(index.max_entries(), 30);
    assert_eq!(index.entries(), 2, "resize keeps the entries");
    index.append(53, 2).unwrap();
    assert_eq!(index.entries(), 3);
    assert!(
        !index.resize(245).unwrap(),
        "245 rounds to 240 = current length"
    );
    assert_eq!(index.length(), 240);
    index
}

trait MaxSize {
    fn max_index_size_for_test(&self) -> Option<usize>;
}
impl MaxSize for OffsetIndex {
    fn max_index_size_for_test(&self) -> Option<usize> {
        self.index_file().max_index_size()
    }
}

/// Acceptance case 12 (OffsetIndexTest.testReopen + edge).
#[test]
fn case12_reopen_after_clean_close_is_full_until_resized() {
    let dir = tmp();
    let index = case12(dir.path());
    assert_eq!(
        index.all_entries().unwrap(),
        vec![op(51, 0), op(52, 1), op(53, 2)]
    );
    index.close().unwrap();
    assert_eq!(
        fs::read(dir.path().join(index_name(45))).unwrap(),
        encode_index(&[(6, 0), (7, 1), (8, 2)])
    );
}

/// Acceptance case 18: resize(8) with 3 entries is rejected up front, changing nothing (Kafka would
/// have shrunk the file to 8 bytes first); reset() on an index opened without a max
/// size empties it and resizes it to 0 bytes.
#[test]
fn case18_resize_below_used_size_and_reset() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    let index = case12(dir.path());
    index.flush().unwrap();
    let bytes_before = fs::read(&path).unwrap();

    match index.resize(8) {
        Err(IndexError::InvalidArgument { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(reason.contains('8'), "{reason}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    // Nothing changed: file, mapping, counts, entries.
    assert_eq!(fs::metadata(&path).unwrap().len(), 240);
    assert_eq!(fs::read(&path).unwrap(), bytes_before);
    assert_eq!(index.length(), 240);
    assert_eq!(index.max_entries(), 30);
    assert_eq!(index.entries(), 3);
    assert_eq!(index.last_offset().unwrap(), 53);
    assert_eq!(
        index.all_entries().unwrap(),
        vec![op(51, 0), op(52, 1), op(53, 2)]
    );
    // 23 rounds down to 16 < 24 used bytes: also rejected; exactly 24 is accepted.
    assert!(matches!(
        index.resize(23),
        Err(IndexError::InvalidArgument { .. })
    ));
    assert_eq!(index.length(), 240);

    index.reset().unwrap();
    assert_eq!(index.entries(), 0);
    assert_eq!(index.length(), 0);
    assert_eq!(index.max_entries(), 0);
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    assert_eq!(index.last_offset().unwrap(), 45);
    assert_eq!(index.lookup(52).unwrap(), op(45, 0));
    assert!(index.is_full());
    assert!(matches!(
        index.append(60, 0),
        Err(IndexError::IndexFull { entries: 0, .. })
    ));
}

/// resize to exactly the used size, trim_to_valid_size and reset with a max size.
#[test]
fn trim_and_reset_with_max_size() {
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    let index = new_index(dir.path(), 0, 240);
    for i in 1..=3 {
        index.append(i, i as u32 * 10).unwrap();
    }
    assert!(index.resize(24).unwrap(), "exactly the used size is fine");
    assert_eq!((index.length(), index.max_entries()), (24, 3));
    assert!(index.is_full());
    assert!(!index.trim_to_valid_size().unwrap(), "already trimmed");
    assert!(index.resize(100).unwrap());
    assert_eq!((index.length(), index.max_entries()), (96, 12));
    assert!(index.trim_to_valid_size().unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), 24);
    assert_eq!(index.lookup(2).unwrap(), op(2, 20));

    index.reset().unwrap();
    assert_eq!(index.entries(), 0);
    assert_eq!(
        index.length(),
        240,
        "reset grows back to the max index size"
    );
    assert_eq!(index.max_entries(), 30);
    assert_eq!(fs::metadata(&path).unwrap().len(), 240);
    index.append(7, 70).unwrap();
    assert_eq!(index.all_entries().unwrap(), vec![op(7, 70)]);
}

/// A read-only index rejects appends and resizes with InvalidArgument, but answers
/// lookups; a no-op resize is still false.
#[test]
fn read_only_reopen_rejects_writes() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    let index = new_index(dir.path(), 45, 240);
    index.append(50, 5).unwrap();
    index.close().unwrap();
    let ro = OffsetIndex::open_read_only(&path, 45).unwrap();
    assert_eq!((ro.entries(), ro.max_entries(), ro.length()), (1, 1, 8));
    assert!(!ro.index_file().is_writable());
    assert_eq!(ro.lookup(60).unwrap(), op(50, 5));
    assert!(!ro.resize(8).unwrap(), "same size: no-op even read-only");
    assert!(matches!(
        ro.resize(80),
        Err(IndexError::InvalidArgument { .. })
    ));
    assert!(matches!(
        ro.append(60, 6),
        Err(IndexError::IndexFull { .. })
    ));
    ro.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 8);
}

/// A truncated index reopened from disk keeps its used slots and file length.
#[test]
fn reopen_untrimmed_after_truncate_counts_every_slot() {
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    let index = new_index(dir.path(), 0, 32);
    for i in 1..=4 {
        index.append(i, i as u32).unwrap();
    }
    index.truncate_to(3).unwrap();
    assert_eq!(index.entries(), 2);
    index.flush().unwrap();
    drop(index);
    let index = OffsetIndex::open(&path, 0, 32).unwrap();
    // Kafka leaves the bytes of truncated slots in place: a reopened untrimmed file
    // counts them again.
    assert_eq!(index.entries(), 4);
    assert_eq!(index.last_offset().unwrap(), 4);
}
