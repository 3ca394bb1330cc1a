//! Issue 11, finding 2 and deliverable 2: retention (time, size, log start offset),
//! `delete_records`, `truncate_fully_and_start_at` and `truncate_to` below the log
//! start (both empty the log and move its start and its end, up or down) running under
//! concurrent readers. Every read answers with its data
//! (a batch holding the offset) or `OffsetOutOfRange` carrying a log start above the
//! offset; never an empty fetch inside the log, never another error (such as
//! `Index(Closed)` from a segment deleted under the reader). An observer checks that
//! the log start offset is published before a segment leaves the map.
//!
//! Bounded: the writer appends a fixed number of batches and everything stops with it.
//! Deterministic offsets (an LCG per reader); only the interleaving varies.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::common::*;
use segment::{Log, LogConfig, MockTime, SegmentError, Time};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Time,
    Size,
    LogStart,
    DeleteRecords,
    StartAt,
    TruncateBelowStart,
}

const BATCHES: i64 = 1500;

fn stress(kind: Kind, file_delete_delay_ms: i64) {
    let dir = tmpdir();
    let one = batch(0, 1, 0).len() as u64;
    let t = MockTime::new(1_000_000);
    let cfg = LogConfig {
        segment_bytes: 8 * one + 8,
        index_interval_bytes: 1,
        max_index_size: 4096,
        retention_ms: if matches!(kind, Kind::Time) { 40 } else { -1 },
        retention_bytes: if matches!(kind, Kind::Size) {
            40 * one as i64
        } else {
            -1
        },
        file_delete_delay_ms,
        ..LogConfig::default()
    };
    let log = Arc::new(
        Log::options()
            .clock(Arc::new(t.clone()))
            .open(dir.path(), cfg)
            .unwrap(),
    );
    let done = Arc::new(AtomicBool::new(false));
    // Truncations begun and ended (`truncate_to` moves the log end back: a log end a
    // reader loaded before or during one may lie above the log end its read meets). A
    // read ran under a truncation when more had begun after it than had ended before it:
    // a truncation begun before the read's first load but still running counts too.
    let truncations = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let mut readers = Vec::new();
    for seed in 0..2u64 {
        let (log, done, truncations) = (log.clone(), done.clone(), truncations.clone());
        readers.push(std::thread::spawn(move || {
            let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (mut data, mut out_of_range) = (0u64, 0u64);
            while !done.load(Ordering::Acquire) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let ended = truncations[1].load(Ordering::SeqCst);
                let start = log.log_start_offset();
                let leo = log.log_end_offset();
                // Mostly the oldest offsets, where retention deletes; some anywhere.
                let span = if x >> 60 < 12 { 12 } else { (leo - start).max(1) as u64 + 3 };
                let o = (start - 3 + ((x >> 33) % span) as i64).max(0);
                match log.read(o, 1 << 16) {
                    Ok(r) if o < leo => {
                        let offs = offsets_in(&r.records);
                        // A truncation under this read may have put the log end at `o`
                        // (appends then start again below the old one), where a fetch is
                        // empty, as in Kafka. Anything else must hold `o`.
                        let moved_back = truncations[0].load(Ordering::SeqCst) != ended;
                        assert!(
                            offs.contains(&o) || (offs.is_empty() && moved_back),
                            "{kind:?}: read({o}) inside [{start}, {leo}) returned offsets {offs:?}"
                        );
                        data += 1;
                    }
                    Ok(_) => {}
                    Err(SegmentError::OffsetOutOfRange {
                        log_start_offset,
                        log_end_offset,
                        ..
                    }) => {
                        assert!(
                            o < log_start_offset || o > log_end_offset,
                            "{kind:?}: OffsetOutOfRange for {o} inside [{log_start_offset}, {log_end_offset}]"
                        );
                        out_of_range += 1;
                    }
                    Err(e) => panic!("{kind:?}: read({o}) failed: {e}"),
                }
                if x >> 62 == 0 {
                    // Searches walk every segment: one deleted under them is skipped.
                    let found = log.offset_for_timestamp(0);
                    // (`None` only while no record is left: the log start at its end.)
                    assert!(found.is_ok(), "{kind:?}: offset_for_timestamp failed: {found:?}");
                    if let Err(e) = log.collect_aborted_txns(o, o + 10) {
                        panic!("{kind:?}: collect_aborted_txns({o}) failed: {e}");
                    }
                }
            }
            (data, out_of_range)
        }));
    }
    let observer = {
        let (log, done) = (log.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                // First segment first, then the log start: published before removal, the
                // log start is then at or above the first base offset seen.
                // (Not for a truncation below the log start: it publishes the lowered log
                // start and log end together before it deletes the segments above them;
                // the readers check that case.)
                let first = log.segments().first_segment_base_offset();
                let start = log.log_start_offset();
                if let Some(first) = first.filter(|_| !matches!(kind, Kind::TruncateBelowStart)) {
                    assert!(
                        first <= start,
                        "{kind:?}: first segment {first} seen while the log start was {start}"
                    );
                }
            }
        })
    };
    let mut deleted = 0;
    let mut next = 0; // the offset of the next batch
    for i in 0..BATCHES {
        let o = next;
        log.append(&batch(o, 1, t.milliseconds())).unwrap();
        next += 1;
        t.sleep(1);
        if i % 10 == 9 {
            deleted += match kind {
                Kind::Time | Kind::Size => log.delete_old_segments().unwrap(),
                Kind::LogStart => {
                    log.increment_log_start_offset(o - 30).unwrap();
                    log.delete_old_segments().unwrap()
                }
                Kind::DeleteRecords => {
                    log.delete_records(o - 30 + (o % 7)).unwrap();
                    0
                }
                Kind::StartAt if i % 50 == 49 => {
                    let segments = log.segments().number_of_segments();
                    next += 5;
                    log.truncate_fully_and_start_at(next).unwrap();
                    segments
                }
                Kind::StartAt => 0,
                Kind::TruncateBelowStart if i % 50 == 49 => {
                    let segments = log.segments().number_of_segments();
                    log.increment_log_start_offset(o - 5).unwrap();
                    next = o - 20;
                    truncations[0].fetch_add(1, Ordering::SeqCst);
                    assert!(log.truncate_to(next).unwrap());
                    truncations[1].fetch_add(1, Ordering::SeqCst);
                    segments
                }
                Kind::TruncateBelowStart => 0,
            };
        }
    }
    done.store(true, Ordering::Release);
    observer.join().unwrap();
    let (mut data, mut oor) = (0, 0);
    for r in readers {
        let (d, o) = r.join().unwrap();
        data += d;
        oor += o;
    }
    assert!(
        data > 0 && oor > 0,
        "{kind:?}: {data} data, {oor} out of range answers"
    );
    if !matches!(kind, Kind::DeleteRecords) {
        assert!(
            deleted > 10,
            "{kind:?}: retention deleted only {deleted} segments"
        );
    }
    assert!(log.log_start_offset() > next - 100);
    assert_eq!(log.log_end_offset(), next);
    if !matches!(kind, Kind::StartAt | Kind::TruncateBelowStart) {
        assert_eq!(
            read_all(&log, log.log_start_offset()).last(),
            Some(&(next - 1))
        );
    }
}

#[test]
fn time_retention_under_readers() {
    stress(Kind::Time, 0);
    stress(Kind::Time, 60_000);
}

#[test]
fn size_retention_under_readers() {
    stress(Kind::Size, 0);
    stress(Kind::Size, 60_000);
}

#[test]
fn log_start_retention_under_readers() {
    stress(Kind::LogStart, 0);
    stress(Kind::LogStart, 60_000);
}

#[test]
fn delete_records_under_readers() {
    stress(Kind::DeleteRecords, 0);
    stress(Kind::DeleteRecords, 60_000);
}

#[test]
fn truncate_fully_and_start_at_under_readers() {
    stress(Kind::StartAt, 0);
    stress(Kind::StartAt, 60_000);
}

#[test]
fn truncate_to_below_the_log_start_under_readers() {
    stress(Kind::TruncateBelowStart, 0);
    stress(Kind::TruncateBelowStart, 60_000);
}
