//! Issue 11, deliverable 4 (found by the `log_open` fuzz target): `truncate_to` never
//! leaves the log end below the log start. When the segments have a gap at the log start
//! (a `log-start-offset` checkpoint that falls between two segments), truncating into the
//! gap deletes every segment above the target, and what is left ends below the log start.
//! The log then restarts empty at its start: the log end is the log start, appends below
//! it are refused, appends at it work, and a reopen sees the same state.

use crate::common::*;
use segment::{Log, SegmentError};

fn reopen(dir: &std::path::Path) -> Log {
    let (_t, clock) = mock();
    open_log(dir, config(4096, 1 << 20), clock)
}

/// Segment 0 holds 0..5 and segment 20 holds 20..25 (a batch an offset); the log start
/// is 10, in the gap.
fn log_with_a_gap_at_its_start(dir: &std::path::Path) -> Log {
    let log = reopen(dir);
    log.append(&batch(0, 5, 1000)).unwrap();
    log.roll(Some(20)).unwrap();
    assert_eq!(fill(&log, 20, 5, 1, 2000), 25); // one record a batch
    log.close().unwrap();
    std::fs::write(dir.join("log-start-offset"), "0\n10\n").unwrap();
    let log = reopen(dir);
    assert_eq!(log.log_start_offset(), 10);
    assert_eq!(log.log_end_offset(), 25);
    log
}

#[test]
fn truncating_into_a_gap_at_the_log_start_restarts_the_log_at_its_start() {
    let dir = tmpdir();
    let log = log_with_a_gap_at_its_start(dir.path());
    assert!(log.truncate_to(15).unwrap(), "offsets 20..25 were removed");
    assert_eq!(
        (log.log_start_offset(), log.log_end_offset()),
        (10, 10),
        "the log end must never be below the log start"
    );
    assert_eq!(log.segments().base_offsets(), vec![10]);
    match log.append(&batch(5, 3, 3000)) {
        Err(SegmentError::NonMonotonicOffset {
            expected_at_least,
            found,
            ..
        }) => assert_eq!((expected_at_least, found), (10, 5)),
        other => panic!("an append below the log start must be refused, got {other:?}"),
    }
    let info = log.append(&batch(10, 3, 3000)).unwrap();
    assert_eq!(info.first_offset, 10);
    assert_eq!(read_all(&log, 10), vec![10, 11, 12]);
    log.close().unwrap();

    let log = reopen(dir.path());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (10, 13));
    assert_eq!(read_all(&log, 10), vec![10, 11, 12]);
    log.close().unwrap();
}

#[test]
fn truncating_above_the_gap_keeps_what_is_at_or_above_the_log_start() {
    let dir = tmpdir();
    let log = log_with_a_gap_at_its_start(dir.path());
    assert!(log.truncate_to(22).unwrap());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (10, 22));
    assert_eq!(read_all(&log, 10), vec![20, 21]);
    log.close().unwrap();
}
