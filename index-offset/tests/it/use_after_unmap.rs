//! Acceptance case 19: every use after force_unmap returns IndexError::Closed (Kafka: NPE), never
//! touches unmapped memory.

use std::fs;

use crate::common::*;
use index_offset::IndexError;

fn closed<T: std::fmt::Debug>(r: Result<T, IndexError>, what: &str) {
    match r {
        Err(IndexError::Closed { .. }) => {}
        other => panic!("{what}: expected Closed, got {other:?}"),
    }
}

#[test]
fn case19_use_after_force_unmap() {
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    let index = new_index(dir.path(), 0, 80);
    index.force_unmap();
    closed(index.lookup(1), "lookup");
    assert_eq!(index.length(), 0);
    closed(index.close(), "close");
    // force_unmap does not trim: the file keeps its preallocated length.
    assert_eq!(fs::metadata(&path).unwrap().len(), 80);
}

#[test]
fn every_operation_after_force_unmap_is_closed() {
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    let index = new_index(dir.path(), 0, 80);
    index.append(1, 10).unwrap();
    index.append(2, 20).unwrap();
    index.force_unmap();
    closed(index.lookup(1), "lookup");
    closed(index.entry(0), "entry");
    closed(index.last_entry(), "last_entry");
    closed(index.last_offset(), "last_offset");
    closed(index.all_entries(), "all_entries");
    closed(index.snapshot(), "snapshot");
    closed(
        index.fetch_upper_bound_offset(op(1, 10), 5),
        "fetch_upper_bound",
    );
    closed(index.append(3, 30), "append");
    closed(index.truncate_to(1), "truncate_to");
    closed(index.resize(160), "resize");
    closed(index.trim_to_valid_size(), "trim");
    closed(index.sanity_check(), "sanity_check");
    index.force_unmap(); // idempotent
                         // The bytes written before the unmap are on disk (the unmap flushes).
    let bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[..16], &encode_index(&[(1, 10), (2, 20)])[..]);
    assert!(index.delete_if_exists().unwrap());
    assert!(!path.exists());
    assert!(!index.delete_if_exists().unwrap());
    closed(index.close(), "close");
}
