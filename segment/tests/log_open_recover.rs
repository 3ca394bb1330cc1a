//! Loader and recovery scenarios: field case B1 (zero-padded time index), field case B3 (recovery scans only
//! unflushed segments), field case B12 (marker removed before writes; torn tail after a crash).
mod common;
use std::sync::Arc;

use common::*;
use segment::{Log, LogConfig, MockTime};

fn crash(log: Log) {
    log.close_handlers();
}

#[test]
fn b12_marker_removed_on_open_and_crash_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(4096, 10 << 20);
    // Run 1
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    fill(&log, 0, 10, 10, 0);
    log.flush().unwrap();
    log.close().unwrap();
    let marker = dir.path().join(".kafka_cleanshutdown");
    assert!(marker.exists());
    // Run 2
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert!(!marker.exists(), "marker must be removed before any write");
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(log.recovery_point(), 100);
    fill(&log, 100, 5, 10, 0);
    let active = log.segments().active_segment().unwrap();
    let path = active.log_path();
    let len = active.size();
    crash(log);
    // the active indexes are still 10 MiB (zero-padded); cut 30 bytes off the last batch
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 30)
        .unwrap();
    // Run 3
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert_eq!(log.stats().scanned_segments(), 1);
    assert_eq!(log.log_end_offset(), 140);
    assert_eq!(read_all(&log, 0), (0..140).collect::<Vec<_>>());
    assert!(log.recovery_point() <= 140);
    log.close().unwrap();
    // Run 4: clean
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(log.log_end_offset(), 140);
}

#[test]
fn b1_zero_padded_time_index_is_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let base_ts = 1_700_000_000_000i64;
    let t = MockTime::new(base_ts);
    let clock: segment::Clock = Arc::new(t.clone());
    let cfg = LogConfig {
        index_interval_bytes: 1,
        retention_ms: 7 * 24 * 3600 * 1000,
        ..LogConfig::default()
    };
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    log.append(&batch(0, 10, base_ts)).unwrap();
    log.append(&batch(10, 10, base_ts + 100)).unwrap();
    log.append(&batch(20, 10, base_ts + 200)).unwrap();
    log.roll(None).unwrap();
    log.append(&batch(30, 1, base_ts + 300)).unwrap();
    log.close().unwrap();
    // S0's time index: (..100, 10), (..200, 20) then 12 zero bytes
    let ti = dir.path().join("00000000000000000000.timeindex");
    let mut bytes = std::fs::read(&ti).unwrap();
    let keep: Vec<u8> = bytes.iter().copied().skip(12).take(24).collect();
    bytes = keep;
    bytes.extend([0u8; 12]);
    std::fs::write(&ti, &bytes).unwrap();
    t.set(base_ts + 3_600_000);
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(
        log.stats()
            .indexes_rebuilt
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    let s0 = log.segments().first_segment().unwrap();
    assert_eq!(s0.largest_timestamp().unwrap(), base_ts + 200);
    let r = log.offset_for_timestamp(base_ts + 150).unwrap().unwrap();
    assert_eq!((r.offset, r.timestamp), (20, base_ts + 200));
    assert_eq!(log.log_start_offset(), 0);
    assert_eq!(read_all(&log, 0), (0..31).collect::<Vec<_>>());
}

#[test]
fn b3_recovery_scans_only_segments_from_recovery_point() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    // scaled down: 20 closed segments of 100 records
    let cfg = LogConfig {
        segment_bytes: 6_000,
        ..config(4096, 10 << 20)
    };
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    let mut o = 0;
    for _ in 0..20 {
        o = fill(&log, o, 10, 10, 0);
        log.roll(None).unwrap();
    }
    log.flush().unwrap();
    let rp = log.recovery_point();
    // unflushed tail in the active segment, last batch torn by 40 bytes
    let end = fill(&log, o, 30, 10, 0);
    let segs_before = log.segments().number_of_segments();
    let active = log.segments().active_segment().unwrap();
    let path = active.log_path();
    let len = active.size();
    crash(log);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 40)
        .unwrap();
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    // the floor segment of the recovery point (empty active at flush time) and nothing else
    assert!(
        log.stats().scanned_segments() <= 2,
        "scanned {}",
        log.stats().scanned_segments()
    );
    assert_eq!(log.log_end_offset(), end - 10);
    let loaded = log
        .segments()
        .values()
        .iter()
        .filter(|s| s.base_offset() < rp && s.lazy_offset_index().is_loaded())
        .count();
    assert_eq!(loaded, 0, "no index below the checkpoint is mapped eagerly");
    assert_eq!(log.segments().number_of_segments(), segs_before);
    log.close().unwrap();
    let mtimes: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| segment::names::is_index_file(p))
        .map(|p| {
            (
                p.clone(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.stats().scanned_segments(), 0);
    for (p, m) in mtimes {
        assert_eq!(
            std::fs::metadata(&p).unwrap().modified().unwrap(),
            m,
            "{} rewritten",
            p.display()
        );
    }
    assert_eq!(read_all(&log, 0), (0..end - 10).collect::<Vec<_>>());
}

#[test]
fn b4_empty_active_segment_with_zero_byte_or_missing_index_is_reused() {
    for missing in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (_t, clock) = mock();
        let cfg = config(1, 10 << 20);
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        fill(&log, 0, 50, 10, 0);
        log.roll(None).unwrap();
        log.close().unwrap();
        let idx = dir.path().join("00000000000000000500.index");
        assert_eq!(std::fs::metadata(&idx).unwrap().len(), 0);
        if missing {
            std::fs::remove_file(&idx).unwrap();
        }
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        assert_eq!(log.stats().scanned_segments(), 0);
        fill(&log, 500, 5, 1, 0);
        log.close().unwrap();
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        fill(&log, 505, 5, 1, 0);
        assert_eq!(log.segments().base_offsets(), vec![0, 500]);
        let s = log.segments().active_segment().unwrap();
        assert_eq!(s.offset_index().unwrap().max_entries(), (10 << 20) / 8);
        for o in 500..510 {
            assert_eq!(offsets_in(&log.read(o, 100).unwrap().records)[0], o);
        }
    }
}
