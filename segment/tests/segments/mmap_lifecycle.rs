//! field case B17: memory-mapped index lifecycle, counted from `/proc/self/maps`.
//!
//! (a) a log with thousands of segments maps only the indexes that lookups touch;
//! (b) deleted segments leave no "(deleted)" mapping behind; (c) rolling thousands of
//! times keeps the mapping count flat (inactive segments' indexes are trimmed and unmapped
//! after the roll, and mapped again on demand); (d) lookups racing with trims, resizes,
//! unloads and the deletion of their segment return a correct result or a typed "closed"
//! error, never a crash.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::common::*;
use index_core::IndexError;
use segment::{LogConfig, LogSegment, SegmentError};

const SLACK: usize = 2;

#[test]
fn b17a_thousands_of_segments_map_only_what_lookups_touch() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = config(4096, 4096);
    let n: i64 = 2000;
    for i in 0..n {
        let s = new_segment(dir.path(), i * 10, &cfg, clock.clone());
        s.append(
            i * 10 + 9,
            1_000 + i,
            i * 10 + 9,
            &batch(i * 10, 10, 1_000 + i),
        )
        .unwrap();
        // as a log's segments have: both index files exist (flush materialises them)
        s.flush().unwrap();
        s.close().unwrap();
    }
    assert_eq!(index_mappings(dir.path()), (0, 0));
    for clean in [true, false] {
        std::fs::write(
            dir.path().join("recovery-point"),
            format!("0\n{}\n", if clean { n * 10 } else { 0 }),
        )
        .unwrap();
        let marker = dir.path().join(".kafka_cleanshutdown");
        if clean {
            std::fs::write(&marker, b"").unwrap();
        } else {
            segment::fs::remove_if_exists(&marker).unwrap();
        }
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        assert_eq!(log.segments().number_of_segments(), n as usize);
        assert_eq!(log.log_end_offset(), n * 10);
        let expected_scans = if clean { 0 } else { n as u64 };
        assert_eq!(log.stats().scanned_segments(), expected_scans);
        let (after_open, _) = index_mappings(dir.path());
        assert!(
            after_open <= 2 + SLACK,
            "clean={clean}: {after_open} mappings after open"
        );
        // lookups (offset, fetch and timestamp) in the last two segments only
        for o in (n - 2) * 10..n * 10 {
            let r = log.read(o, 1).unwrap();
            assert!(offsets_in(&r.records).contains(&o));
        }
        for i in [n - 2, n - 1] {
            let r = log.offset_for_timestamp(1_000 + i).unwrap().unwrap();
            assert_eq!(r.offset, i * 10);
        }
        // retention looks at every segment's largest timestamp without mapping its index
        assert_eq!(log.delete_old_segments().unwrap(), 0);
        let (mapped, deleted) = index_mappings(dir.path());
        assert!(
            mapped <= 4 + SLACK,
            "clean={clean}: {mapped} mappings for lookups in 2 segments"
        );
        assert_eq!(deleted, 0);
        log.close().unwrap();
        assert_eq!(index_mappings(dir.path()), (0, 0));
    }
}

#[test]
fn b17b_deleted_segments_leave_no_deleted_mappings() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 10_000,
        ..config(1, 4096)
    };
    let log = open_log(dir.path(), cfg, clock);
    let now = segment::Time::milliseconds(&t);
    for i in 0..200 {
        log.append(&batch(i * 5, 5, now + i)).unwrap();
        log.roll(None).unwrap();
    }
    // touch every segment's indexes, then let retention delete them all
    for o in (0..1000).step_by(5) {
        log.read(o, 1).unwrap();
    }
    log.offset_for_timestamp(now).unwrap();
    t.sleep(1_000_000);
    assert!(log.delete_old_segments().unwrap() >= 200);
    let (mapped, deleted) = index_mappings(dir.path());
    assert_eq!(deleted, 0, "mappings of deleted index files remain");
    assert!(mapped <= 2 + SLACK, "{mapped}");
}

#[test]
fn b17c_mapping_count_stays_flat_while_rolling() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 4096), clock);
    let mut counts = Vec::new();
    for i in 0..2000i64 {
        log.append(&batch(i * 2, 2, 1_000 + i)).unwrap();
        // a lookup in the previous segment and in the active one
        if i > 0 {
            log.read(i * 2 - 1, 1).unwrap();
        }
        log.read(i * 2, 1).unwrap();
        log.roll(None).unwrap();
        if i % 250 == 0 || i == 1999 {
            counts.push(index_mappings(dir.path()).0);
        }
    }
    assert_eq!(log.segments().number_of_segments(), 2001);
    let max = *counts.iter().max().unwrap();
    assert!(max <= 4 + SLACK, "mapping counts while rolling: {counts:?}");
    log.close().unwrap();
    assert_eq!(index_mappings(dir.path()), (0, 0));
}

#[test]
fn b17d_lookups_racing_trim_resize_unload_and_delete() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = config(1, 64 << 10);
    let n: i64 = 2000;
    let seg: Arc<LogSegment> = Arc::new(new_segment(dir.path(), 0, &cfg, clock));
    for o in 0..n {
        seg.append(o, 1_000 + o, o, &v2(o, 1_000 + o)).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicU64::new(0));
    let gone = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..8u64)
        .map(|t| {
            let (seg, stop, ok, gone) = (seg.clone(), stop.clone(), ok.clone(), gone.clone());
            std::thread::spawn(move || {
                let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut after_stop = 0;
                while after_stop < 200 {
                    if stop.load(Ordering::Acquire) {
                        after_stop += 1;
                    }
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let o = (x % n as u64) as i64;
                    let res = match x % 3 {
                        0 => seg.translate_offset(o, 0).map(|r| r.map(|p| p.offset)),
                        1 => seg
                            .find_offset_by_timestamp(1_000 + o, 0)
                            .map(|r| r.map(|f| f.offset)),
                        _ => seg
                            .read_min_one_message(o, 1, seg.size())
                            .map(|r| r.map(|f| offsets_in(&f.records)[0])),
                    };
                    match res {
                        Ok(found) => {
                            assert_eq!(found, Some(o), "lookup of {o}");
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        // After the deletion: the indexes are closed, and the `.log`'s
                        // handle too (its disk space is freed at once).
                        Err(SegmentError::Index(IndexError::Closed { .. }))
                        | Err(SegmentError::SegmentDeleted { .. }) => {
                            gone.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("lookup of {o}: unexpected error {e}"),
                    }
                }
            })
        })
        .collect();
    // Let the readers get going before the segment is remapped and deleted: on a loaded
    // machine the 100 rounds below can finish before any reader thread has run, and then
    // every lookup sees the deleted segment (`ok == 0`, a spurious failure).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ok.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    for round in 0..100 {
        seg.resize_indexes(if round % 2 == 0 { 128 << 10 } else { 64 << 10 })
            .unwrap();
        seg.on_become_inactive_segment().unwrap();
        seg.offset_index().unwrap().trim_to_valid_size().unwrap();
        seg.unload_indexes().unwrap();
    }
    seg.change_file_suffixes("", ".deleted").unwrap();
    seg.delete_if_exists().unwrap();
    assert!(seg.files_removed());
    stop.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    assert!(ok.load(Ordering::Relaxed) > 0);
    assert!(
        gone.load(Ordering::Relaxed) > 0,
        "no lookup saw the deletion"
    );
    // the deleted segment never recreated an index file
    assert!(
        seg.files_removed(),
        "an index file was recreated after the deletion"
    );
    drop(seg);
    assert_eq!(index_mappings(dir.path()), (0, 0));
}
