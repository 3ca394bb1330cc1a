//! Issue 11, finding 4 and deliverable 4: offsets never go back or get reused. After the
//! log start offset moves past the log end (a `log-start-offset` checkpoint beyond the
//! log end, which deletes every segment on open as Kafka does, or `delete_records` at the
//! end), the log end is the log start and appends below it are refused with a typed
//! error, while appends at it work — the log can leave the state it was put in.

use crate::common::*;
use segment::{Log, SegmentError};

fn reopen(dir: &std::path::Path) -> Log {
    let (_t, clock) = mock();
    open_log(dir, config(4096, 1 << 20), clock)
}

fn assert_refused(log: &Log, base: i64, n: usize) {
    match log.append(&batch(base, n, 1000)) {
        Err(SegmentError::NonMonotonicOffset {
            expected_at_least,
            found,
            ..
        }) => {
            assert_eq!((expected_at_least, found), (log.log_end_offset(), base));
        }
        other => panic!("append at {base} below the log end must be refused, got {other:?}"),
    }
}

#[test]
fn a_log_start_checkpoint_beyond_the_end_never_lets_offsets_be_reused() {
    let dir = tmpdir();
    let log = reopen(dir.path());
    fill(&log, 0, 2, 5, 1000); // 0..10
    log.close().unwrap();
    std::fs::write(dir.path().join("log-start-offset"), "0\n50\n").unwrap();
    let log = reopen(dir.path());
    // Kafka's loader deletes every segment below the checkpoint.
    assert_eq!(log.segments().base_offsets(), vec![50]);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (50, 50));
    assert_refused(&log, 0, 5);
    assert_refused(&log, 45, 5); // ends at 49, below the log end
    assert!(matches!(
        log.read(0, 1 << 20),
        Err(SegmentError::OffsetOutOfRange {
            log_start_offset: 50,
            ..
        })
    ));
    log.append(&batch(50, 5, 1000)).unwrap();
    assert_eq!(read_all(&log, 50), (50..55).collect::<Vec<_>>());
    drop(log); // crash
    let log = reopen(dir.path());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (50, 55));
    assert_refused(&log, 0, 5);
    assert_eq!(read_all(&log, 50), (50..55).collect::<Vec<_>>());
}

#[test]
fn delete_records_at_the_log_end_leaves_an_empty_log_that_refuses_old_offsets() {
    let dir = tmpdir();
    let log = reopen(dir.path());
    fill(&log, 0, 2, 5, 1000); // 0..10
    assert_eq!(log.delete_records(10).unwrap(), 10);
    assert_eq!(log.size(), 0);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (10, 10));
    assert_refused(&log, 0, 5);
    assert_refused(&log, 5, 5);
    log.append(&batch(10, 5, 1000)).unwrap();
    assert_eq!(read_all(&log, 10), (10..15).collect::<Vec<_>>());
    drop(log);
    let log = reopen(dir.path());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (10, 15));
}

#[test]
fn an_empty_log_still_accepts_a_batch_that_reaches_its_end_but_keeps_its_start() {
    // Kafka's follower rule (B18c) after deleteRecords into the middle of a batch.
    let dir = tmpdir();
    let log = reopen(dir.path());
    fill(&log, 0, 3, 5, 1000); // 0..15
    log.delete_records(15).unwrap();
    assert_refused(&log, 5, 5); // 5..=9 lies wholly below the log end
    log.append(&batch(10, 10, 1000)).unwrap(); // 10..=19 reaches it
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (15, 20));
    assert!(matches!(
        log.read(12, 1 << 20),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    let r = log.read(15, 1 << 20).unwrap();
    assert_eq!(offsets_in(&r.records), (10..20).collect::<Vec<_>>());
    drop(log);
    let log = reopen(dir.path());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (15, 20));
}

#[test]
fn a_log_restarted_beyond_its_end_refuses_offsets_below_the_restart() {
    let dir = tmpdir();
    let log = reopen(dir.path());
    fill(&log, 0, 2, 5, 1000);
    log.truncate_fully_and_start_at(100).unwrap();
    assert_refused(&log, 10, 5);
    assert_refused(&log, 50, 5);
    log.append(&batch(100, 5, 1000)).unwrap();
    assert_eq!(read_all(&log, 100), (100..105).collect::<Vec<_>>());
}

#[test]
fn a_log_start_checkpoint_exactly_at_the_end_keeps_the_segments() {
    // Kafka deletes every segment only when the log end is *below* the checkpoint: at
    // equality the segments stay (their records are below the log start, so unreadable),
    // and the log goes on at its end.
    let dir = tmpdir();
    let log = reopen(dir.path());
    fill(&log, 0, 2, 5, 1000); // 0..10
    let size = log.size();
    log.close().unwrap();
    std::fs::write(dir.path().join("log-start-offset"), "0\n10\n").unwrap();
    let log = reopen(dir.path());
    assert_eq!(log.segments().base_offsets(), vec![0]);
    assert_eq!(log.size(), size);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (10, 10));
    assert_refused(&log, 5, 5);
    log.append(&batch(10, 5, 1000)).unwrap();
    assert_eq!(read_all(&log, 10), (10..15).collect::<Vec<_>>());
}
