//! The load check of `Log::open` tells damage from failure: a corrupt index file (here a
//! `.txnindex` whose length is not whole entries) costs a recovery of its segment, as in
//! Kafka's `LogLoader` (`CorruptIndexException` → `recoverSegment`), while an I/O error
//! while checking fails the open with that error (Kafka takes the log dir offline), and
//! is never papered over by rebuilding the segment.
use std::sync::Arc;

use crate::common::*;
use segment::fs::{Fault, FaultyFs, FsOp, EIO};
use segment::Log;

/// A cleanly closed log: segment 0 holds 0..20, segment 20 holds 20..30.
fn closed_log() -> tempfile::TempDir {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    fill(&log, 0, 4, 5, 1_000);
    log.roll(None).unwrap();
    fill(&log, 20, 2, 5, 2_000);
    log.close().unwrap();
    dir
}

#[test]
fn a_corrupt_txn_index_after_a_clean_shutdown_is_rebuilt() {
    let dir = closed_log();
    let txn = segment::names::transaction_index_file(dir.path(), 0, "");
    std::fs::write(&txn, [0xAB; 10]).unwrap(); // not a whole 34-byte entry
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert_eq!(log.stats().scanned_segments(), 1);
    assert_eq!(read_all(&log, 0), (0..30).collect::<Vec<i64>>());
    assert!(log.collect_aborted_txns(0, 30).unwrap().is_empty());
    log.close().unwrap();
    assert_eq!(std::fs::metadata(&txn).map(|m| m.len()).unwrap_or(0), 0);
}

#[test]
fn an_io_error_in_the_load_check_fails_the_open() {
    let dir = closed_log();
    // a missing time index is created and resized by the check: make that resize fail
    std::fs::remove_file(segment::names::time_index_file(dir.path(), 0, "")).unwrap();
    let fs = Arc::new(FaultyFs::new());
    fs.inject(Fault::new(FsOp::IndexResize, EIO).times(1));
    let (_t, clock) = mock();
    let first = Log::options()
        .clock(clock.clone())
        .fs(fs.clone())
        .open(dir.path(), config(1, 1 << 20));
    assert_eq!(fs.injected(), 1);
    match first {
        Err(e) => assert!(!e.is_corruption(), "an I/O error, not corruption: {e}"),
        Ok(log) => panic!(
            "the open absorbed an I/O error ({} segments recovered)",
            log.stats().scanned_segments()
        ),
    }
    // without the fault the open recovers the segment and rebuilds its time index (the
    // failed open may have consumed the clean-shutdown marker: then the active segment
    // is recovered too)
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert!((1..=2).contains(&log.stats().scanned_segments()));
    assert_eq!(
        log.offset_for_timestamp(1_010).unwrap().map(|t| t.offset),
        Some(10)
    );
}
