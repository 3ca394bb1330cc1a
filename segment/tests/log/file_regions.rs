//! Issue 21, branch `reads`: zero-copy reads (`Log::read_region`, Kafka's
//! `FileRecords.slice`). A region holds the segment's open file: it reads the same bytes
//! as `read_with`, survives retention's rename and unlink, and fails with
//! `UnexpectedEof` (never other bytes) once a truncation cut it.
use std::io::ErrorKind;
use std::sync::Arc;

use crate::common::*;
use segment::{FetchIsolation, Log, LogConfig, MockTime};

fn log_of(dir: &std::path::Path, t: &MockTime, per_segment: u64) -> Log {
    let one = batch(0, 1, 0).len() as u64;
    let cfg = LogConfig {
        segment_bytes: per_segment * one,
        index_interval_bytes: 1,
        retention_ms: 10,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    Log::options()
        .clock(Arc::new(t.clone()))
        .open(dir, cfg)
        .unwrap()
}

#[test]
fn a_region_holds_the_bytes_read_with_reads() {
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let log = log_of(dir.path(), &t, 4);
    fill(&log, 0, 10, 1, 100);
    for iso in [
        FetchIsolation::LogEnd,
        FetchIsolation::HighWatermark,
        FetchIsolation::TxnCommitted,
    ] {
        for o in 0..=10 {
            for max in [0u64, 10, 200, 1 << 20] {
                for min_one in [false, true] {
                    let a = log.read_with(o, max, iso, min_one).unwrap();
                    let r = log.read_region(o, max, iso, min_one).unwrap();
                    assert_eq!(r.region.to_vec().unwrap(), a.records, "{iso:?} {o} {max}");
                    assert_eq!(r.region.len(), a.records.len() as u64);
                    assert_eq!(r.region.is_empty(), a.records.is_empty());
                    assert_eq!(
                        r.region.position(),
                        a.fetch_offset_metadata.relative_position_in_segment
                    );
                    assert_eq!(r.fetch_offset_metadata, a.fetch_offset_metadata);
                    assert_eq!(r.first_entry_incomplete, a.first_entry_incomplete);
                    assert_eq!(r.aborted_transactions, a.aborted_transactions);
                    let mut w = Vec::new();
                    assert_eq!(r.region.write_to(&mut w).unwrap(), r.region.len());
                    assert_eq!(w, a.records);
                }
            }
        }
    }
}

#[test]
fn read_at_reads_inside_the_region_only() {
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let log = log_of(dir.path(), &t, 100);
    fill(&log, 0, 3, 1, 100);
    let r = log
        .read_region(1, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    let all = r.to_vec().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    assert_eq!(r.read_at(&mut buf, 5).unwrap(), all.len() - 5);
    assert_eq!(&buf[..all.len() - 5], &all[5..]);
    assert_eq!(r.read_at(&mut buf, r.len()).unwrap(), 0);
    assert_eq!(r.read_at(&mut buf, r.len() + 9).unwrap(), 0);
}

#[test]
fn a_region_survives_retention_rename_and_unlink() {
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let log = log_of(dir.path(), &t, 4);
    fill(&log, 0, 10, 1, 100);
    let r = log
        .read_region(0, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    let want = log.read(0, 1 << 20).unwrap().records;
    let path = log.segments().get(0).unwrap().log_path();
    t.sleep(1_000_000);
    assert!(log.delete_old_segments().unwrap() >= 2);
    // file.delete.delay.ms = 0: renamed `.deleted`, then unlinked at the next call.
    log.delete_expired_segment_files().unwrap();
    assert!(!path.exists());
    assert_eq!(log.pending_segment_deletions(), 0);
    assert_eq!(r.region.to_vec().unwrap(), want);
    let mut w = Vec::new();
    r.region.write_to(&mut w).unwrap();
    assert_eq!(w, want);
}

#[test]
fn a_region_cut_by_truncation_fails_instead_of_reading_new_bytes() {
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let log = log_of(dir.path(), &t, 100);
    fill(&log, 0, 6, 1, 100);
    let r = log
        .read_region(2, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    let before = r.to_vec().unwrap();
    let safe = log
        .read_region(0, 1, FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    // Cut at 4 and write other bytes over the same positions.
    log.truncate_to(4).unwrap();
    fill(&log, 4, 2, 1, 999);
    assert_ne!(log.read(4, 1 << 20).unwrap().records, before[2 * 73..]);
    let e = r.to_vec().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    let e = r.write_to(&mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    let mut buf = vec![0u8; 1 << 16];
    assert_eq!(
        r.read_at(&mut buf, 0).unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
    // A region wholly below the cut is untouched by it.
    assert_eq!(safe.to_vec().unwrap(), log.read(0, 1).unwrap().records);
    // A region taken after the cut reads the new bytes.
    let after = log
        .read_region(2, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    assert_eq!(
        after.to_vec().unwrap(),
        log.read(2, 1 << 20).unwrap().records
    );
}

#[cfg(target_os = "linux")]
#[test]
fn sendfile_copies_a_region_to_a_socket_and_fails_once_cut() {
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let log = log_of(dir.path(), &t, 100);
    fill(&log, 0, 50, 3, 100);
    let r = log
        .read_region(30, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    let want = log.read(30, 1 << 20).unwrap().records;
    let (a, mut b) = UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        b.read_to_end(&mut got).unwrap();
        got
    });
    assert_eq!(r.sendfile_to(&a).unwrap(), want.len() as u64);
    drop(a);
    assert_eq!(reader.join().unwrap(), want);

    log.truncate_to(60).unwrap();
    let (a, b) = UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = b;
        let mut got = Vec::new();
        b.read_to_end(&mut got).unwrap();
    });
    let e = r.sendfile_to(&a).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
    drop(a);
    reader.join().unwrap();
}
