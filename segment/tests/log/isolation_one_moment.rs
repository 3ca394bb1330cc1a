//! Issue 37, item 1: a read at any isolation level sees the log end, the high watermark,
//! the last stable offset and the aborted transactions as of one moment
//! (`docs/kafka-behaviour.md#one-moment-bounds`).
//!
//! Two races that broke it, each widened so that it shows within a second:
//!
//! * an append published its new log end before the producer state knew the batch began
//!   a transaction, so a `read_committed` fetch could be served that batch, whose
//!   transaction later aborted, with no abort entry (widened by a thread that copies a
//!   large producer state, holding its lock);
//! * `truncate_to` that cut an ABORT marker rebuilt the producer state only after its
//!   fsync and checkpoint, so meanwhile `read_committed` fetches were served the aborted
//!   data with an empty aborted list (widened by a file system whose fsync is slow).
//!
//! The check is Kafka's consumer contract: a transactional batch served to a
//! `read_committed` fetch either belongs to a transaction that commits, or comes with
//! the abort entry of its producer that covers it.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use segment::fs::{FileSystem, FsRef};
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::{FetchDataInfo, FetchIsolation, Log, LogOptions};

const TXN_PRODUCER: i64 = 7;

fn txn(o: i64) -> Vec<u8> {
    BatchBuilder::new(o)
        .producer(TXN_PRODUCER, 0, 0)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

fn abort(o: i64) -> Vec<u8> {
    control_batch(o, TXN_PRODUCER, 0, ControlRecordType::Abort, 0, o).unwrap()
}

/// The transactional batches of the producer in a `read_committed` answer that no abort
/// entry of the answer covers (every transaction of these tests aborts).
fn uncovered_aborted(r: &FetchDataInfo) -> Vec<i64> {
    let aborted = r.aborted_transactions.clone().unwrap_or_default();
    segment::format::scan::<segment::KafkaBatchFormat>(&r.records, 0)
        .filter_map(|b| b.ok())
        .filter(|b| {
            b.info.producer_id == TXN_PRODUCER && b.info.is_transactional && !b.info.is_control
        })
        .map(|b| b.info.base_offset)
        .filter(|&o| {
            !aborted
                .iter()
                .any(|t| t.producer_id == TXN_PRODUCER && t.first_offset <= o)
        })
        .collect()
}

#[test]
fn an_append_never_shows_a_transaction_before_the_producer_state_has_it() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = Arc::new(open_log(dir.path(), config(4096, 1 << 20), clock));
    // A producer state large enough that copying it holds its lock for a while.
    let mut o = 0;
    for pid in 1000..4000 {
        let b = BatchBuilder::new(o)
            .producer(pid, 0, 0)
            .record(o, None, Some(b"p"))
            .build()
            .unwrap();
        log.append(&b).unwrap();
        o += 1;
    }
    let done = Arc::new(AtomicBool::new(false));
    let txn_start = Arc::new(AtomicI64::new(o));
    let copier = {
        let (log, done) = (log.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::hint::black_box(log.producer_state());
            }
        })
    };
    let reader = {
        let (log, done, txn_start) = (log.clone(), done.clone(), txn_start.clone());
        std::thread::spawn(move || {
            let (mut reads, mut bad) = (0u64, Vec::new());
            while !done.load(Ordering::Relaxed) {
                let at = txn_start.load(Ordering::Acquire);
                match log.read_with(at, 1 << 20, FetchIsolation::TxnCommitted, true) {
                    Ok(r) => {
                        reads += 1;
                        let u = uncovered_aborted(&r);
                        if !u.is_empty() {
                            bad.push(u);
                        }
                    }
                    Err(e) => panic!("read_committed at {at}: {e}"),
                }
            }
            (reads, bad)
        })
    };
    let deadline = Instant::now() + Duration::from_millis(1500);
    let mut cycles = 0u64;
    while Instant::now() < deadline {
        txn_start.store(o, Ordering::Release);
        log.append(&txn(o)).unwrap();
        log.append(&abort(o + 1)).unwrap();
        o += 2;
        cycles += 1;
    }
    done.store(true, Ordering::Relaxed);
    copier.join().unwrap();
    let (reads, bad) = reader.join().unwrap();
    eprintln!("cycles: {cycles}, reads: {reads}, anomalies: {}", bad.len());
    assert!(
        bad.is_empty(),
        "{} read_committed fetches were served aborted batches without their abort \
         entry, first: {:?}",
        bad.len(),
        bad.first()
    );
}

/// A file system whose data fsyncs take a while, widening everything that runs after a
/// truncation's fsync.
#[derive(Debug)]
struct SlowSync(Arc<AtomicU64>);

impl FileSystem for SlowSync {
    fn sync_data(&self, path: &Path, file: &std::fs::File) -> io::Result<()> {
        let ms = self.0.load(Ordering::Relaxed);
        if ms > 0 {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let _ = path;
        file.sync_data()
    }
}

#[test]
fn a_truncation_that_cuts_an_abort_marker_never_serves_the_aborted_data() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let delay = Arc::new(AtomicU64::new(0));
    let fs: FsRef = Arc::new(SlowSync(delay.clone()));
    let log: Log = LogOptions::new()
        .clock(clock)
        .fs(fs)
        .open(dir.path(), config(4096, 1 << 20))
        .unwrap();
    let log = Arc::new(log);
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (log, done) = (log.clone(), done.clone());
        std::thread::spawn(move || {
            let (mut reads, mut bad) = (0u64, Vec::new());
            while !done.load(Ordering::Relaxed) {
                if let Ok(r) = log.read_with(0, 1 << 20, FetchIsolation::TxnCommitted, true) {
                    reads += 1;
                    let u = uncovered_aborted(&r);
                    if !u.is_empty() {
                        bad.push(u);
                    }
                }
            }
            (reads, bad)
        })
    };
    for round in 0..5 {
        // A transaction at 0..5 whose ABORT marker is at 5, then plain data, flushed:
        // the truncation below the recovery point fsyncs before its checkpoint.
        log.truncate_fully_and_start_at(0)
            .unwrap_or_else(|e| panic!("{round}: {e}"));
        delay.store(0, Ordering::Relaxed);
        for o in 0..5 {
            log.append(&txn(o)).unwrap();
        }
        log.append(&abort(5)).unwrap();
        log.append(&batch(6, 1, 0)).unwrap();
        log.flush().unwrap();
        delay.store(100, Ordering::Relaxed);
        // Cut the marker: the transaction is open again, and the LSO is its first offset.
        assert!(log.truncate_to(5).unwrap());
        assert_eq!(log.last_stable_offset(), 0);
    }
    done.store(true, Ordering::Relaxed);
    let (reads, bad) = reader.join().unwrap();
    eprintln!("reads: {reads}, anomalies: {}", bad.len());
    assert!(
        bad.is_empty(),
        "{} read_committed fetches were served the cut transaction's data without an \
         abort entry, first: {:?}",
        bad.len(),
        bad.first()
    );
}
