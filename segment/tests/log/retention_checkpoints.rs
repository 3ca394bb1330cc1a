//! Issue 11, finding 12 (mutation check): the checkpoints that retention and
//! `delete_records` must write at once (Kafka's `UnifiedLog.deleteSegments` /
//! `maybeIncrementLogStartOffset`): the `log-start-offset` checkpoint, and the
//! `recovery-point` raised to the new log start, checked in the files and after a crash
//! (no `close`, no flush) and a reopen.
use std::path::Path;
use std::sync::Arc;

use crate::common::*;
use segment::checkpoint::read_checkpoint;
use segment::log::{LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE};
use segment::{LogConfig, MockTime, SegmentError};

const NOW: i64 = 1_000_000_000;

fn cfg(retention_ms: i64) -> LogConfig {
    LogConfig {
        retention_ms,
        retention_bytes: -1,
        file_delete_delay_ms: 0,
        ..config(4096, 1 << 20)
    }
}

/// Three segments `[0, 10, 20]` of 10 records each, stamped `ts`, never flushed.
fn three(dir: &Path, cfg: LogConfig, ts: i64) -> (MockTime, segment::Log) {
    let t = MockTime::new(NOW);
    let log = open_log(dir, cfg, Arc::new(t.clone()));
    fill(&log, 0, 1, 10, ts - 10);
    log.roll(None).unwrap();
    fill(&log, 10, 1, 10, ts - 10);
    log.roll(None).unwrap();
    fill(&log, 20, 1, 10, ts - 10);
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
    assert!(log.recovery_point() < 10, "{}", log.recovery_point());
    (t, log)
}

fn file(dir: &Path, name: &str) -> Option<i64> {
    read_checkpoint(&dir.join(name)).unwrap()
}

/// Crash (no flush, no checkpoints, no clean-shutdown marker) and reopen.
fn crash_and_reopen(dir: &Path, log: segment::Log, cfg: LogConfig) -> segment::Log {
    log.close_handlers();
    open_log(dir, cfg, Arc::new(MockTime::new(NOW)))
}

#[test]
fn delete_records_inside_a_segment_survives_a_crash() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1), NOW);
    assert_eq!(log.delete_records(15).unwrap(), 15);
    assert_eq!(file(dir.path(), LOG_START_OFFSET_FILE), Some(15));
    let log = crash_and_reopen(dir.path(), log, cfg(-1));
    assert_eq!(log.log_start_offset(), 15);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert!(matches!(
        log.read(14, 1000),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    assert_eq!(read_all(&log, 15), (15..30).collect::<Vec<_>>());
}

#[test]
fn increment_log_start_offset_survives_a_crash() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1), NOW);
    assert_eq!(log.increment_log_start_offset(25).unwrap(), 25);
    assert_eq!(file(dir.path(), LOG_START_OFFSET_FILE), Some(25));
    let log = crash_and_reopen(dir.path(), log, cfg(-1));
    assert_eq!(log.log_start_offset(), 25);
    assert_eq!(read_all(&log, 25), (25..30).collect::<Vec<_>>());
}

#[test]
fn retention_checkpoints_log_start_and_raises_the_recovery_point() {
    let dir = tmpdir();
    let (t, log) = three(dir.path(), cfg(1000), NOW);
    // Segments 0 and 10 expire; 20 is refreshed by a new batch.
    log.append(&batch(30, 1, NOW + 5000)).unwrap();
    t.set(NOW + 2000);
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(log.recovery_point(), 20);
    assert_eq!(file(dir.path(), LOG_START_OFFSET_FILE), Some(20));
    assert_eq!(file(dir.path(), RECOVERY_POINT_FILE), Some(20));
    let log = crash_and_reopen(dir.path(), log, cfg(1000));
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(log.segments().base_offsets(), vec![20]);
    assert_eq!(read_all(&log, 20), (20..31).collect::<Vec<_>>());
}

#[test]
fn retention_of_every_segment_survives_a_crash() {
    let dir = tmpdir();
    let (t, log) = three(dir.path(), cfg(1000), NOW);
    t.set(NOW + 2000);
    assert_eq!(log.delete_old_segments().unwrap(), 3);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(file(dir.path(), LOG_START_OFFSET_FILE), Some(30));
    assert_eq!(file(dir.path(), RECOVERY_POINT_FILE), Some(30));
    let log = crash_and_reopen(dir.path(), log, cfg(1000));
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.log_end_offset(), 30);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    // Offsets below the old end are never reused.
    assert!(log.append(&batch(0, 1, NOW + 2000)).is_err());
    log.append(&batch(30, 1, NOW + 2000)).unwrap();
    assert_eq!(read_all(&log, 30), vec![30]);
}

#[test]
fn delete_records_at_the_log_end_survives_a_crash() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1), NOW);
    assert_eq!(log.delete_records(30).unwrap(), 30);
    assert_eq!(file(dir.path(), LOG_START_OFFSET_FILE), Some(30));
    assert_eq!(file(dir.path(), RECOVERY_POINT_FILE), Some(30));
    let log = crash_and_reopen(dir.path(), log, cfg(-1));
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.log_end_offset(), 30);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert!(log.append(&batch(29, 1, NOW)).is_err());
    log.append(&batch(30, 3, NOW)).unwrap();
    assert_eq!(read_all(&log, 30), vec![30, 31, 32]);
}
