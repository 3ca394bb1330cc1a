//! The searches that walk the segments (`offset_for_timestamp`, `collect_aborted_txns`)
//! never hide an error behind a later segment's answer.
//!
//! `Log::offset_for_timestamp`: a
//! segment whose time index cannot be read (here its `.timeindex` was replaced by a
//! directory after it was unloaded) fails the lookup with a typed error, where skipping
//! it would answer a later record and hide the earlier ones. Only a segment deleted by
//! retention under the lookup is skipped (its offsets are below the log start by then).

use crate::common::*;
use segment::names::FileKind;

#[test]
fn an_unreadable_time_index_fails_the_lookup_instead_of_skipping_the_segment() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    fill(&log, 0, 4, 5, 1_000); // 0..20, timestamps 1000..1015
    log.roll(None).unwrap(); // segment 0 is inactive: its indexes are unloaded
    fill(&log, 20, 4, 5, 1_000); // 20..40, timestamps 1020..1035
    assert_eq!(
        log.offset_for_timestamp(1_005).unwrap().map(|t| t.offset),
        Some(5)
    );
    log.segments()
        .first_segment()
        .unwrap()
        .unload_indexes()
        .unwrap();
    let ti = segment::names::time_index_file(dir.path(), 0, "");
    std::fs::remove_file(&ti).unwrap();
    std::fs::create_dir(&ti).unwrap();
    match log.offset_for_timestamp(1_005) {
        Err(e) => assert!(e.to_string().contains("timeindex"), "names the file: {e}"),
        Ok(found) => panic!("the unreadable segment was skipped: {found:?}"),
    }
    // the later segment still answers for its own timestamps
    assert_eq!(
        log.offset_for_timestamp(1_025).unwrap().map(|t| t.offset),
        Some(25)
    );
}

/// A cleanly closed log of segments 0 (0..20) and 20 (20..40), reopened (nothing of
/// segment 0 loaded yet), whose segment-0 file of `kind` is then made a symlink loop
/// (opening it fails with ELOOP).
fn reopened_with_a_looping_file_of_segment_0(kind: FileKind) -> (tempfile::TempDir, segment::Log) {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1_000);
    log.roll(None).unwrap();
    fill(&log, 20, 4, 5, 1_000);
    log.close().unwrap();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    let file = segment::names::segment_file(dir.path(), 0, kind, "");
    let _ = std::fs::remove_file(&file);
    std::os::unix::fs::symlink(&file, &file).unwrap();
    (dir, log)
}

#[test]
fn a_time_index_that_cannot_be_opened_is_an_error_not_no_timestamps() {
    // The largest timestamp of an unloaded segment is peeked from its time index file
    // without mapping it; a file that cannot be opened (here a symlink loop) must give
    // the index's typed error, never "no timestamps" (which would make time retention
    // use the mtime and offset_for_timestamp skip the segment).
    let (_dir, log) = reopened_with_a_looping_file_of_segment_0(FileKind::TimeIndex);
    let first = log.segments().first_segment().unwrap();
    match first.max_timestamp_so_far() {
        Err(_) => {}
        Ok(ts) => panic!("an unopenable time index read as largest timestamp {ts}"),
    }
}

#[test]
fn an_unreadable_txn_index_fails_collect_aborted_txns() {
    // A segment whose `.txnindex` cannot be opened (a symlink loop) fails the collection
    // with its error; skipping it would serve a read_committed reader the records of
    // transactions it aborted.
    let (_dir, log) = reopened_with_a_looping_file_of_segment_0(FileKind::TxnIndex);
    match log.collect_aborted_txns(3, 30) {
        Err(e) => assert!(e.to_string().contains("txnindex"), "names the file: {e}"),
        Ok(found) => panic!("the unreadable transaction index was skipped: {found:?}"),
    }
}
