//! Use after force_unmap: every operation returns IndexError::Closed.

use std::fs;

use crate::common::*;
use index_time::IndexError;

fn closed<T: std::fmt::Debug>(r: Result<T, IndexError>, what: &str) {
    assert!(
        matches!(r, Err(IndexError::Closed { .. })),
        "{what}: expected Closed, got {r:?}"
    );
}

#[test]
fn every_operation_after_force_unmap_is_closed() {
    let dir = tmp();
    let path = dir.path().join(timeindex_name(0));
    let index = new_index(dir.path(), 0, 120);
    index.maybe_append(10, 1).unwrap();
    index.force_unmap();
    closed(index.lookup(10), "lookup");
    closed(index.entry(0), "entry");
    closed(index.last_entry(), "last_entry");
    closed(index.all_entries(), "all_entries");
    closed(index.maybe_append(20, 2), "maybe_append");
    closed(index.maybe_append_final(20, 2), "maybe_append skip");
    closed(index.truncate_to(1), "truncate_to");
    closed(index.resize(240), "resize");
    closed(index.trim_to_valid_size(), "trim");
    closed(index.sanity_check(), "sanity_check");
    assert_eq!(fs::metadata(&path).unwrap().len(), 120, "not trimmed");
    assert_eq!(
        &fs::read(&path).unwrap()[..12],
        &encode_timeindex(&[(10, 1)])[..]
    );
    closed(index.close(), "close");
}
