//! Issue 21, branch `reads`: `read_with` (every isolation) and `read_region` under
//! concurrent appends (with transactions), `truncate_to`, `delete_records` and
//! retention, with the high watermark following the log end and with a manual one
//! advanced by the writer. Every answer holds the offset asked for or is one of the
//! documented answers (`docs/kafka-behaviour.md#concurrent-reads`,
//! `docs/kafka-behaviour.md#fetch-isolation`):
//!
//! * data whose first record is the offset, all below the isolation's bound;
//! * empty, only at or above the bound;
//! * `OffsetOutOfRange`, only outside `[log start, log end]`;
//! * from a region, `UnexpectedEof` only when a truncation ran meanwhile.
//!
//! "Below / at the bound" is checked when no truncation overlapped the call (between
//! truncations the bounds only move up). Bounded: the writer appends a fixed number of
//! batches and everything stops with it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::common::*;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::{FetchIsolation, Log, LogConfig, MockTime, SegmentError, Time};

const BATCHES: i64 = 1200;
const CYCLE: i64 = 20;

fn txn(o: i64) -> Vec<u8> {
    BatchBuilder::new(o)
        .producer(7, 0, 0)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

/// The batch at offset `o`: a cycle of 20 offsets holds a transaction of producer 7
/// from +5 to its marker at +10 (an abort in odd cycles, a commit in even ones).
fn batch_at(o: i64, ts: i64) -> Vec<u8> {
    match o % CYCLE {
        5..=8 => txn(o),
        10 => {
            let kind = if (o / CYCLE) % 2 == 1 {
                ControlRecordType::Abort
            } else {
                ControlRecordType::Commit
            };
            control_batch(o, 7, 0, kind, 0, ts).unwrap()
        }
        _ => batch(o, 1, ts),
    }
}

struct Counters {
    begun: AtomicU64,
    ended: AtomicU64,
}

impl Counters {
    /// A token such that `quiet(token)` after a call says no truncation overlapped it.
    fn start(&self) -> (u64, u64) {
        let e = self.ended.load(Ordering::SeqCst);
        let b = self.begun.load(Ordering::SeqCst);
        (e, b)
    }
    fn quiet(&self, (e, b): (u64, u64)) -> bool {
        e == b && self.begun.load(Ordering::SeqCst) == b
    }
}

fn bound(log: &Log, iso: FetchIsolation) -> i64 {
    match iso {
        FetchIsolation::LogEnd => log.log_end_offset(),
        FetchIsolation::HighWatermark => log.high_watermark(),
        FetchIsolation::TxnCommitted => log.last_stable_offset(),
    }
}

fn reader(log: Arc<Log>, done: Arc<AtomicBool>, c: Arc<Counters>, seed: u64) -> [u64; 3] {
    let isos = [
        FetchIsolation::LogEnd,
        FetchIsolation::HighWatermark,
        FetchIsolation::TxnCommitted,
    ];
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut seen = [0u64; 3]; // data, empty, out of range
    while !done.load(Ordering::Acquire) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let iso = isos[((x >> 40) % 3) as usize];
        let region = !(x >> 50).is_multiple_of(2);
        let token = c.start();
        let start = log.log_start_offset();
        let leo = log.log_end_offset();
        let before = bound(&log, iso);
        let o = (start - 2 + ((x >> 20) % ((leo - start).max(0) as u64 + 5)) as i64).max(0);
        let answer = if region {
            log.read_region(o, 1 << 12, iso, true).map(|r| {
                (
                    r.region.to_vec(),
                    r.aborted_transactions,
                    r.fetch_offset_metadata,
                )
            })
        } else {
            log.read_with(o, 1 << 12, iso, true).map(|r| {
                (
                    Ok(r.records),
                    r.aborted_transactions,
                    r.fetch_offset_metadata,
                )
            })
        };
        let after = bound(&log, iso);
        let quiet = c.quiet(token);
        match answer {
            Ok((bytes, aborted, meta)) => {
                assert_eq!(meta.message_offset, o);
                assert_eq!(aborted.is_some(), iso == FetchIsolation::TxnCommitted);
                let bytes = match bytes {
                    Ok(b) => b,
                    Err(e) => {
                        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");
                        assert!(!quiet, "{iso:?}: region of {o} cut without a truncation");
                        continue;
                    }
                };
                let offs = offsets_in(&bytes);
                if offs.is_empty() {
                    assert!(
                        !quiet || o >= before,
                        "{iso:?}: empty read of {o} below the bound {before} (log [{start}, {leo}])"
                    );
                    seen[1] += 1;
                } else {
                    assert_eq!(offs[0], o, "{iso:?}: read({o}) answered {offs:?}");
                    let last = *offs.last().unwrap();
                    assert!(
                        !quiet || last < after,
                        "{iso:?}: read({o}) returned {last}, at or above the bound {after}"
                    );
                    seen[0] += 1;
                }
            }
            Err(SegmentError::OffsetOutOfRange {
                log_start_offset,
                log_end_offset,
                ..
            }) => {
                assert!(
                    o < log_start_offset || o > log_end_offset,
                    "{iso:?}: OffsetOutOfRange for {o} inside [{log_start_offset}, {log_end_offset}]"
                );
                seen[2] += 1;
            }
            Err(e) => panic!("{iso:?} region={region}: read({o}) failed: {e}"),
        }
    }
    seen
}

fn stress(manual_hw: bool) {
    let dir = tmpdir();
    let one = batch(0, 1, 0).len() as u64;
    let t = MockTime::new(1_000_000);
    let cfg = LogConfig {
        segment_bytes: 8 * one,
        index_interval_bytes: 1,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let mut options = Log::options().clock(Arc::new(t.clone()));
    if manual_hw {
        options = options.manual_high_watermark(0);
    }
    let log = Arc::new(options.open(dir.path(), cfg).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let c = Arc::new(Counters {
        begun: AtomicU64::new(0),
        ended: AtomicU64::new(0),
    });
    let readers: Vec<_> = (0..3u64)
        .map(|seed| {
            let (log, done, c) = (log.clone(), done.clone(), c.clone());
            std::thread::spawn(move || reader(log, done, c, seed))
        })
        .collect();
    let mut next = 0i64;
    let mut x = 12345u64;
    for i in 0..BATCHES {
        log.append(&batch_at(next, t.milliseconds())).unwrap();
        next += 1;
        t.sleep(1);
        if manual_hw && i % 3 == 0 {
            log.maybe_increment_high_watermark(next - 2).unwrap();
        }
        if next % CYCLE == 0 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (x >> 60) % 4 {
                // Truncate outside a transaction: to the cycle's start or after its marker.
                0 => {
                    let to = next - CYCLE + if (x >> 50).is_multiple_of(2) { 0 } else { 15 };
                    c.begun.fetch_add(1, Ordering::SeqCst);
                    log.truncate_to(to).unwrap();
                    c.ended.fetch_add(1, Ordering::SeqCst);
                    next = to;
                }
                1 | 2 => {
                    let to = (next - 60).min(log.high_watermark());
                    if to > log.log_start_offset() {
                        log.delete_records(to).unwrap();
                    }
                }
                _ => {
                    log.delete_old_segments().unwrap();
                }
            }
        }
    }
    done.store(true, Ordering::Release);
    let mut seen = [0u64; 3];
    for r in readers {
        let s = r.join().unwrap();
        for k in 0..3 {
            seen[k] += s[k];
        }
    }
    assert!(seen[0] > 0 && seen[1] > 0, "answers: {seen:?}");
    assert_eq!(log.log_end_offset(), next);
}

#[test]
fn isolated_reads_and_regions_under_appends_truncation_and_retention() {
    stress(false);
}

#[test]
fn isolated_reads_under_change_with_a_manual_high_watermark() {
    stress(true);
}
