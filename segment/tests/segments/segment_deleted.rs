//! `LogSegment::files_removed` (Kafka's `deleted()`): `true` iff none of the segment's four
//! files exists any more. One file left on disk is enough to answer `false`.

use crate::common::*;

#[test]
fn deleted_only_when_every_file_is_gone() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(10, 4096), clock);
    seg.append(0, 1_000, 0, &v2(0, 1_000)).unwrap();
    seg.append(1, 1_001, 1, &v2(1, 1_001)).unwrap();
    seg.flush().unwrap();
    assert!(!seg.files_removed());
    // Only the `.log` gone: the indexes are still on disk.
    let log = seg.log_path();
    let kept = std::fs::read(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    assert!(!seg.files_removed());
    std::fs::write(&log, kept).unwrap();
    // Everything but the `.log` gone.
    for path in [seg.offset_index_file(), seg.time_index_file()] {
        std::fs::remove_file(path).unwrap();
    }
    let _ = std::fs::remove_file(seg.txn_index().path());
    assert!(!seg.files_removed());
    seg.delete_if_exists().unwrap();
    assert!(seg.files_removed());
}
