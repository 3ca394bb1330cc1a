//! field case B8 (prefix rule, future timestamps), field case B9 (mtime fallback), B18d (empty last segment),
//! size and log-start-offset retention.
use std::sync::Arc;

use crate::common::*;
use segment::{LogConfig, MockTime};

const DAY: i64 = 24 * 3600 * 1000;

#[test]
fn b8a_prefix_rule_then_size_retention() {
    let dir = tempfile::tempdir().unwrap();
    let now = 100 * 365 * DAY;
    let t = MockTime::new(now);
    let clock: segment::Clock = Arc::new(t.clone());
    let cfg = LogConfig {
        retention_ms: 7 * DAY,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    log.append(&batch(0, 10, now - 10 * DAY)).unwrap();
    log.roll(None).unwrap();
    log.append(&batch(10, 1, now + 365 * DAY)).unwrap();
    log.append(&batch(11, 9, now - 9 * DAY)).unwrap();
    log.roll(Some(100)).unwrap();
    log.append(&batch(100, 10, now - 8 * DAY)).unwrap();
    log.roll(Some(200)).unwrap();
    log.append(&batch(200, 10, now)).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![0, 10, 100, 200]);
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.log_start_offset(), 10);
    assert_eq!(log.segments().base_offsets(), vec![10, 100, 200]);
    drop(log);
    // size-based retention still deletes S1 then S2, in order
    let t2 = MockTime::new(now);
    let one = batch(200, 10, now).len() as i64;
    let cfg = LogConfig {
        retention_ms: 7 * DAY,
        retention_bytes: one,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, Arc::new(t2));
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![200]);
    assert_eq!(log.log_start_offset(), 200);
}

#[test]
fn b8b_out_of_order_batch_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.append(&batch(0, 1, 1_000_000)).unwrap();
    log.append(&batch(1, 1, 999_000)).unwrap();
    log.append(&batch(2, 1, 1_000_500)).unwrap();
    let s = log.segments().active_segment().unwrap();
    assert_eq!(s.max_timestamp_so_far().unwrap(), 1_000_500);
    let ti = s.time_index().unwrap().all_entries().unwrap();
    assert!(ti.windows(2).all(|w| w[0].timestamp < w[1].timestamp));
    assert_eq!(
        log.offset_for_timestamp(999_500).unwrap().unwrap().offset,
        0
    );
}

#[test]
fn b9_no_timestamps_use_mtime_which_restarts_do_not_touch() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = 1_600_000_000_000i64;
    let retention = 7 * DAY;
    let t = MockTime::new(t0);
    let clock: segment::Clock = Arc::new(t.clone());
    let cfg = LogConfig {
        retention_ms: retention,
        ..config(4096, 1 << 20)
    };
    {
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        let mut b = Vec::new();
        for o in 0..10 {
            b.extend(
                segment::record::LegacyMessage::v1(
                    o,
                    -1,
                    b"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop",
                )
                .to_vec()
                .unwrap(),
            );
        }
        log.append(&b).unwrap();
        log.roll(None).unwrap();
        log.close_handlers(); // no marker
    }
    let log_path = dir.path().join("00000000000000000000.log");
    segment::fs::set_last_modified_ms(&log_path, t0).unwrap();
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    log.close().unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(segment::fs::last_modified_ms(&log_path).unwrap(), t0);
    let s0 = log.segments().first_segment().unwrap();
    assert_eq!(s0.time_index().unwrap().entries(), 0);
    t.set(t0 + retention - 1000);
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    t.set(t0 + retention + 1000);
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.log_start_offset(), 10);
}

#[test]
fn b18d_empty_last_segment_sets_log_start_to_its_base() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = LogConfig {
        retention_bytes: 0,
        retention_ms: -1,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    fill(&log, 0, 2, 10, 0);
    log.roll(None).unwrap();
    let active = log.segments().active_segment().unwrap();
    assert_eq!(active.read_next_offset().unwrap(), 20);
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.log_start_offset(), 20);
    assert_eq!(log.segments().base_offsets(), vec![20]);
}

#[test]
fn delete_records_moves_log_start_and_drops_whole_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: -1,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    fill(&log, 0, 1, 10, 0);
    log.roll(None).unwrap();
    fill(&log, 10, 1, 10, 0);
    log.roll(None).unwrap();
    fill(&log, 20, 1, 10, 0);
    assert_eq!(log.delete_records(15).unwrap(), 15);
    assert_eq!(log.segments().base_offsets(), vec![10, 20]);
    assert!(matches!(
        log.read(12, 100),
        Err(segment::SegmentError::OffsetOutOfRange { .. })
    ));
    assert_eq!(offsets_in(&log.read(15, 1000).unwrap().records)[0], 10);
}
