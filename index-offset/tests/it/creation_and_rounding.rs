//! Acceptance cases 1, 2 and 3: creating a new offset index, preallocation, size
//! rounding and invalid max sizes.

use std::fs;

use crate::common::*;
use index_offset::{IndexError, OffsetIndex, OpenMode, ENTRY_SIZE};

/// Acceptance case 1: OI(45, 240) is a 240-byte preallocated, zero-filled file with 30 slots and no
/// entries; after close() it is a 0-byte file.
#[test]
fn case01_creation_and_preallocation() {
    let dir = tmp();
    let path = dir.path().join(index_name(45));
    let index = OffsetIndex::open(&path, 45, 240).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 240);
    assert_eq!(fs::read(&path).unwrap(), vec![0u8; 240], "zero-filled");
    assert_eq!(index.length(), 240);
    assert_eq!(index.max_entries(), 30);
    assert_eq!(index.entries(), 0);
    assert!(!index.is_full());
    assert_eq!(index.last_offset().unwrap(), 45);
    assert_eq!(index.last_entry().unwrap(), op(45, 0));
    assert_eq!(index.size_in_bytes(), 0);
    assert_eq!(index.base_offset(), 45);
    assert_eq!(index.path(), path);
    assert_eq!(index.lookup(92).unwrap(), op(45, 0));
    assert_eq!(index.all_entries().unwrap(), vec![]);
    assert_eq!(ENTRY_SIZE, 8);
    index.close().unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        0,
        "closed empty index is 0 bytes"
    );
}

/// Acceptance case 2: the max size is rounded down to a multiple of 8.
#[test]
fn case02_size_rounding() {
    let dir = tmp();
    for (i, (max, bytes, slots)) in [
        (100usize, 96u64, 12usize),
        (8, 8, 1),
        (1000, 1000, 125),
        (10_485_760, 10_485_760, 1_310_720),
        (15, 8, 1),
        (17, 16, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("{i}.index"));
        let index = OffsetIndex::open(&path, 45, max).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), bytes, "max {max}");
        assert_eq!(index.length() as u64, bytes, "max {max}");
        assert_eq!(index.max_entries(), slots, "max {max}");
        assert_eq!(index.entries(), 0);
        assert!(!index.is_full());
    }
}

/// Acceptance case 3: a new file with a max size below one entry (7, or Kafka's -1 = no max size) is
/// rejected with InvalidArgument naming the value; the empty file stays on disk.
#[test]
fn case03_invalid_max_size_on_new_file() {
    let dir = tmp();
    let p7 = dir.path().join("a.index");
    match OffsetIndex::open(&p7, 0, 7) {
        Err(IndexError::InvalidArgument { path, reason }) => {
            assert_eq!(path, p7);
            assert!(reason.contains("invalid max index size 7"), "{reason}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(
        fs::metadata(&p7).unwrap().len(),
        0,
        "file left on disk, empty"
    );

    let pm1 = dir.path().join("b.index");
    match OffsetIndex::open_with(&pm1, 0, None, OpenMode::ReadWrite) {
        Err(IndexError::InvalidArgument { reason, .. }) => {
            assert!(reason.contains("invalid max index size -1"), "{reason}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(fs::metadata(&pm1).unwrap().len(), 0);

    // Now the (empty) file exists: reopening it is not a creation, so any max size is
    // accepted and the index has 0 slots (full: 0 >= 0).
    let index = OffsetIndex::open(&p7, 0, 7).unwrap();
    assert_eq!((index.entries(), index.max_entries()), (0, 0));
    assert!(index.is_full());
    assert!(matches!(
        index.append(0, 0),
        Err(IndexError::IndexFull { entries: 0, .. })
    ));
    let index = OffsetIndex::open_with(&pm1, 0, None, OpenMode::ReadWrite).unwrap();
    assert_eq!(
        (index.entries(), index.max_entries(), index.length()),
        (0, 0, 0)
    );
    assert_eq!(index.lookup(5).unwrap(), op(0, 0));
}

/// Opening read-only never creates a file.
#[test]
fn read_only_open_of_missing_file_is_not_found() {
    let dir = tmp();
    let p = dir.path().join(index_name(0));
    match OffsetIndex::open_read_only(&p, 0) {
        Err(IndexError::Io { path, source }) => {
            assert_eq!(path, p);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Io(NotFound), got {other:?}"),
    }
    assert!(!p.exists());
}

/// Reopening an existing file ignores the max size (Kafka never resizes on open).
#[test]
fn existing_file_is_not_resized_on_open() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 240);
    index.append(50, 7).unwrap();
    index.flush().unwrap();
    drop(index); // no close: the file stays 240 bytes
    let path = dir.path().join(index_name(45));
    let index = OffsetIndex::open(&path, 45, 4096).unwrap();
    assert_eq!(index.length(), 240);
    assert_eq!(index.max_entries(), 30);
    // Every slot of an existing file counts, including the 29 zero slots.
    assert_eq!(index.entries(), 30);
    assert_eq!(index.entry(0).unwrap(), op(50, 7));
    assert_eq!(index.entry(1).unwrap(), op(45, 0));
}
