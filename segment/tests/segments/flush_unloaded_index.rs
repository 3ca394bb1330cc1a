//! `LogSegment::flush` of a segment whose indexes were unloaded fsyncs the index files
//! through plain handles. An index file that exists but cannot be opened (here a symlink
//! loop) is an `open` error that names it; only a missing file is created again, as
//! Kafka's flush materialises a missing index.

use crate::common::*;
use segment::SegmentError;

#[test]
fn an_unopenable_unloaded_index_fails_the_flush_with_an_open_error() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(10, 4096), clock);
    for i in 0..4 {
        seg.append(i, 1_000 + i, i, &v2(i, 1_000 + i)).unwrap();
    }
    seg.flush().unwrap();
    seg.unload_indexes().unwrap();
    let index = seg.offset_index_file();
    std::fs::remove_file(&index).unwrap();
    std::os::unix::fs::symlink(&index, &index).unwrap();
    match seg.flush() {
        Err(SegmentError::Io {
            op: "open", path, ..
        }) => assert_eq!(path, index),
        other => panic!("expected an open error naming {index:?}, got {other:?}"),
    }
    // The loop is still there: nothing was created in its place.
    assert!(std::fs::symlink_metadata(&index)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_missing_unloaded_index_is_created_again_by_the_flush() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(10, 4096), clock);
    seg.append(0, 1_000, 0, &v2(0, 1_000)).unwrap();
    seg.flush().unwrap();
    seg.unload_indexes().unwrap();
    let index = seg.time_index_file();
    std::fs::remove_file(&index).unwrap();
    seg.flush().unwrap();
    assert!(index.is_file());
}
