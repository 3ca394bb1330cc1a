//! Issue 11, finding 2 and deliverable 2 (the file side): a segment that leaves the log is
//! renamed `.deleted` and its files are removed after `file_delete_delay_ms` (Kafka's
//! `file.delete.delay.ms`, default 60 s); a reader still holding it keeps reading, and
//! flushing it is a no-op. Retention and `delete_records` write the log-start and
//! recovery-point checkpoints, which a reopen after a crash honours.

use std::path::Path;
use std::sync::Arc;

use crate::common::*;
use segment::{Log, LogConfig, MockTime, SegmentError};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('0'))
        .collect();
    v.sort();
    v
}

fn deleted(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".deleted"))
        .collect()
}

/// Three segments: 0..10, 10..20, 20..30.
fn three_segments(dir: &Path, cfg: LogConfig) -> (MockTime, Log) {
    let t = MockTime::new(1_000_000);
    let log = Log::options()
        .clock(Arc::new(t.clone()))
        .open(dir, cfg)
        .unwrap();
    fill(&log, 0, 2, 5, 1000);
    log.roll(None).unwrap();
    fill(&log, 10, 2, 5, 1000);
    log.roll(None).unwrap();
    fill(&log, 20, 2, 5, 1000);
    (t, log)
}

fn read_checkpoint(dir: &Path, name: &str) -> i64 {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    text.lines().nth(1).unwrap().trim().parse().unwrap()
}

#[test]
fn deleted_segments_wait_for_the_delay_and_held_handles_keep_reading() {
    let dir = tmpdir();
    let cfg = config(1, 1 << 20);
    assert_eq!(cfg.file_delete_delay_ms, 60_000, "Kafka's default");
    let (t, log) = three_segments(dir.path(), cfg);
    let held = log.segments().first_segment().unwrap();
    held.offset_index().unwrap(); // mapped, as a reader's lookup maps it
    assert_eq!(log.delete_records(10).unwrap(), 10);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    // Renamed, not removed.
    let renamed = deleted(dir.path());
    assert!(
        renamed.contains(&"00000000000000000000.log.deleted".to_string()),
        "{renamed:?}"
    );
    assert!(renamed.contains(&"00000000000000000000.index.deleted".to_string()));
    assert!(!dir.path().join("00000000000000000000.log").exists());
    assert_eq!(log.pending_segment_deletions(), 1);
    // The held segment still answers, and flushing it is a no-op.
    assert!(held.is_deleted());
    let r = held
        .read_min_one_message(3, 1 << 20, held.size())
        .unwrap()
        .unwrap();
    assert_eq!(offsets_in(&r.records), (0..10).collect::<Vec<_>>());
    held.flush().unwrap();
    assert!(
        held.collect_aborted_txns(0, 100).is_ok(),
        "its .txnindex still reads"
    );
    // The log itself answers OffsetOutOfRange with the new start for the deleted offsets.
    assert!(matches!(
        log.read(3, 1 << 20),
        Err(SegmentError::OffsetOutOfRange {
            log_start_offset: 10,
            ..
        })
    ));
    // Not yet: one millisecond short of the delay.
    t.sleep(59_999);
    log.delete_old_segments().unwrap();
    assert_eq!(log.delete_expired_segment_files().unwrap(), 0);
    assert_eq!(deleted(dir.path()).len(), renamed.len());
    // Due: the next maintenance call removes the files.
    t.sleep(1);
    log.flush().unwrap();
    assert!(deleted(dir.path()).is_empty(), "{:?}", names(dir.path()));
    assert_eq!(log.pending_segment_deletions(), 0);
    held.flush().unwrap(); // still a no-op once the files are gone
                           // a missing .txnindex reads as no aborted transactions (as Kafka's TransactionIndex)
    assert!(held
        .collect_aborted_txns(0, 100)
        .unwrap()
        .aborted_transactions
        .is_empty());
    assert_eq!(read_all(&log, 10), (10..30).collect::<Vec<_>>());
}

#[test]
fn a_zero_delay_removes_the_files_at_once() {
    let dir = tmpdir();
    let cfg = LogConfig {
        file_delete_delay_ms: 0,
        ..config(1, 1 << 20)
    };
    let (_t, log) = three_segments(dir.path(), cfg);
    log.delete_records(20).unwrap();
    assert!(deleted(dir.path()).is_empty());
    assert_eq!(log.pending_segment_deletions(), 0);
    assert_eq!(log.segments().base_offsets(), vec![20]);
}

#[test]
fn close_removes_pending_files_and_open_removes_those_a_crash_left() {
    let dir = tmpdir();
    let (_t, log) = three_segments(dir.path(), config(1, 1 << 20));
    log.delete_records(10).unwrap();
    assert!(!deleted(dir.path()).is_empty());
    log.close().unwrap();
    assert!(
        deleted(dir.path()).is_empty(),
        "close removes pending files"
    );

    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.delete_records(20).unwrap();
    assert!(!deleted(dir.path()).is_empty());
    drop(log); // crash with files pending
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert!(
        deleted(dir.path()).is_empty(),
        "open removes leftover .deleted files"
    );
    assert_eq!(log.segments().base_offsets(), vec![20]);
    assert_eq!(read_all(&log, 20), (20..30).collect::<Vec<_>>());
}

#[test]
fn retention_writes_the_checkpoints_a_reopen_after_a_crash_honours() {
    let dir = tmpdir();
    let (_t, log) = three_segments(dir.path(), config(1, 1 << 20));
    // delete_records into the middle of the second segment.
    log.delete_records(15).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(read_checkpoint(dir.path(), "log-start-offset"), 15);
    assert!(read_checkpoint(dir.path(), "recovery-point") >= 15);
    drop(log); // crash: only the checkpoints tell where the log starts
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert_eq!(log.log_start_offset(), 15);
    assert!(matches!(
        log.read(12, 1 << 20),
        Err(SegmentError::OffsetOutOfRange {
            log_start_offset: 15,
            ..
        })
    ));
    // Size retention deleting every segment: the log restarts at its end.
    drop(log);
    let one_byte = LogConfig {
        retention_bytes: 0,
        ..config(1, 1 << 20)
    };
    let (_t, clock) = mock();
    let log = open_log(dir.path(), one_byte, clock);
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(read_checkpoint(dir.path(), "log-start-offset"), 30);
    assert_eq!(read_checkpoint(dir.path(), "recovery-point"), 30);
    drop(log);
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (30, 30));
    assert_eq!(log.recovery_point(), 30);
}

#[test]
fn delete_expired_segment_files_alone_removes_what_is_due_and_counts_it() {
    // Without any other maintenance call: a timer calling `delete_expired_segment_files`
    // removes the files once `file.delete.delay.ms` has passed, and says how many
    // segments' files it removed.
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 1_000,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg.clone(), clock);
    assert_eq!(log.config(), &cfg);
    fill(&log, 0, 2, 5, 0); // 0..10
    log.roll(None).unwrap();
    fill(&log, 10, 2, 5, 0);
    log.roll(None).unwrap();
    fill(&log, 20, 2, 5, 1_000_000_000);
    log.delete_old_segments().unwrap();
    assert_eq!(log.segments().base_offsets(), vec![20]);
    assert_eq!(log.pending_segment_deletions(), 2);
    t.sleep(cfg.file_delete_delay_ms);
    assert_eq!(log.delete_expired_segment_files().unwrap(), 2);
    assert!(deleted(dir.path()).is_empty(), "{:?}", names(dir.path()));
    assert_eq!(log.pending_segment_deletions(), 0);
    assert_eq!(log.delete_expired_segment_files().unwrap(), 0);
}
