//! Issue 11, finding 12 (mutation check): `Log::delete_old_segments` (Kafka's
//! `deleteOldSegments`) and `delete_records` at their boundaries: `retention.ms` at
//! equality, `retention.bytes` leaving the log exactly at the limit, a log start exactly
//! at a segment boundary or at the log end (beyond it is refused), disabled retention,
//! and retention that deletes every segment. The returned counts are checked too.
use std::sync::Arc;

use crate::common::*;
use segment::{LogConfig, MockTime, SegmentError, Time};

const NOW: i64 = 1_000_000_000;
const RETENTION_MS: i64 = 1000;

fn cfg(retention_ms: i64, retention_bytes: i64) -> LogConfig {
    LogConfig {
        retention_ms,
        retention_bytes,
        file_delete_delay_ms: 0,
        ..config(4096, 1 << 20)
    }
}

/// A log of three segments `[0, 10, 20]`, each one batch of 10 records, the records of
/// segment `i` stamped `ts[i]`; the last one is the (non-empty) active segment.
fn three(dir: &std::path::Path, cfg: LogConfig, ts: [i64; 3]) -> (MockTime, segment::Log) {
    let t = MockTime::new(NOW);
    let log = open_log(dir, cfg, Arc::new(t.clone()));
    for (i, ts) in ts.into_iter().enumerate() {
        let base = 10 * i as i64;
        if i > 0 {
            log.roll(None).unwrap();
        }
        log.append(&batch(base, 10, ts)).unwrap();
    }
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
    assert_eq!(log.log_end_offset(), 30);
    (t, log)
}

fn sizes(log: &segment::Log) -> Vec<i64> {
    log.segments()
        .values()
        .iter()
        .map(|s| s.size() as i64)
        .collect()
}

#[test]
fn retention_ms_at_equality_keeps_the_segment() {
    let dir = tmpdir();
    let (t, log) = three(
        dir.path(),
        cfg(RETENTION_MS, -1),
        [NOW - RETENTION_MS, NOW - RETENTION_MS, NOW],
    );
    // Exactly retention.ms old: kept (Kafka deletes when `now - largest > retention`).
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
    assert_eq!(log.log_start_offset(), 0);
    // One millisecond later both old segments go, the active one (not old) stays.
    t.set(NOW + 1);
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![20]);
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(read_all(&log, 20), (20..30).collect::<Vec<_>>());
}

#[test]
fn retention_ms_stops_at_the_first_young_segment() {
    let dir = tmpdir();
    let (_t, log) = three(
        dir.path(),
        cfg(RETENTION_MS, -1),
        [
            NOW - RETENTION_MS - 1,
            NOW - RETENTION_MS,
            NOW - 5 * RETENTION_MS,
        ],
    );
    // Only the first is older than retention.ms; the prefix rule keeps the third.
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(log.log_start_offset(), 10);
}

#[test]
fn retention_bytes_leaves_the_log_exactly_at_the_limit() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    let s = sizes(&log);
    drop(log);

    // Limit = size of the last segment: the first two go (the log ends exactly at it).
    let t = MockTime::new(NOW);
    let log = open_log(dir.path(), cfg(-1, s[2]), Arc::new(t));
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![20]);
    assert_eq!(log.size() as i64, s[2]);
    assert_eq!(log.log_start_offset(), 20);

    // One byte more than the last two: only the first goes.
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    drop(log);
    let t = MockTime::new(NOW);
    let log = open_log(dir.path(), cfg(-1, s[1] + s[2]), Arc::new(t));
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(log.size() as i64, s[1] + s[2]);

    // A limit of 0: every segment goes (the active one too), a new empty active segment
    // starts at the log end.
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    drop(log);
    let t = MockTime::new(NOW);
    let log = open_log(dir.path(), cfg(-1, 0), Arc::new(t));
    assert_eq!(log.delete_old_segments().unwrap(), 3);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.log_end_offset(), 30);
}

#[test]
fn disabled_retention_deletes_nothing() {
    let dir = tmpdir();
    // Records stamped at 0, the clock at NOW: ancient, but retention is off.
    let (_t, log) = three(dir.path(), cfg(-1, -1), [0, 0, 0]);
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
    assert_eq!(log.log_start_offset(), 0);
    assert_eq!(read_all(&log, 0), (0..30).collect::<Vec<_>>());
}

#[test]
fn log_start_at_a_segment_boundary_deletes_exactly_the_segments_below() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    assert_eq!(log.increment_log_start_offset(10).unwrap(), 10);
    assert_eq!(log.log_start_offset(), 10);
    // Nothing deleted yet: reads below the log start are refused.
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(read_all(&log, 10), (10..30).collect::<Vec<_>>());
    // One below the next boundary: segment 10 still holds offset 19, so it stays.
    assert_eq!(log.delete_records(19).unwrap(), 19);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(log.delete_records(20).unwrap(), 20);
    assert_eq!(log.segments().base_offsets(), vec![20]);
}

#[test]
fn log_start_at_the_log_end_empties_the_log_which_goes_on_at_its_end() {
    let dir = tmpdir();
    let (t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    assert_eq!(log.delete_records(30).unwrap(), 30);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.log_end_offset(), 30);
    assert_eq!(log.size(), 0);
    assert!(log.read(30, 1000).unwrap().records.is_empty());
    assert!(matches!(
        log.read(29, 1000),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    log.append(&batch(30, 5, NOW)).unwrap();
    assert_eq!(read_all(&log, 30), (30..35).collect::<Vec<_>>());
    log.close().unwrap();
    let log = open_log(dir.path(), cfg(-1, -1), Arc::new(t));
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(read_all(&log, 30), (30..35).collect::<Vec<_>>());
}

#[test]
fn log_start_beyond_the_log_end_is_refused_and_changes_nothing() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    for off in [31, 1000] {
        assert!(matches!(
            log.delete_records(off),
            Err(SegmentError::OffsetOutOfRange { offset, .. }) if offset == off
        ));
        assert!(matches!(
            log.increment_log_start_offset(off),
            Err(SegmentError::OffsetOutOfRange { .. })
        ));
    }
    assert_eq!(log.log_start_offset(), 0);
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 20]);
}

#[test]
fn log_start_never_moves_back() {
    let dir = tmpdir();
    let (_t, log) = three(dir.path(), cfg(-1, -1), [NOW; 3]);
    assert_eq!(log.increment_log_start_offset(15).unwrap(), 15);
    // Lower or equal requests keep (and return) the current log start.
    assert_eq!(log.increment_log_start_offset(3).unwrap(), 15);
    assert_eq!(log.increment_log_start_offset(15).unwrap(), 15);
    assert_eq!(log.delete_records(12).unwrap(), 15);
    assert_eq!(log.log_start_offset(), 15);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert_eq!(read_all(&log, 15), (15..30).collect::<Vec<_>>());
}

#[test]
fn retention_ms_that_deletes_every_segment_restarts_at_the_log_end() {
    let dir = tmpdir();
    let (t, log) = three(
        dir.path(),
        cfg(RETENTION_MS, -1),
        [
            NOW - 3 * RETENTION_MS,
            NOW - 2 * RETENTION_MS,
            NOW - 2 * RETENTION_MS,
        ],
    );
    assert_eq!(log.delete_old_segments().unwrap(), 3);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert_eq!(log.log_start_offset(), 30);
    assert_eq!(log.log_end_offset(), 30);
    // The empty last segment is never deleted, however old the log.
    t.set(NOW + 100 * RETENTION_MS);
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    assert_eq!(log.segments().base_offsets(), vec![30]);
    assert!(log.append(&batch(29, 1, NOW)).is_err());
    log.append(&batch(30, 2, t.milliseconds())).unwrap();
    assert_eq!(read_all(&log, 30), vec![30, 31]);
}
