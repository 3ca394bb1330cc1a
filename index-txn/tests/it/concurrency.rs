//! Readers concurrent with one appender, and with truncation/reset.
//!
//! The writer runs on its own thread and raises a flag when it ends, also by panicking;
//! readers stop at that flag or after [`DEADLINE`], so a failing writer fails the test
//! (its panic is propagated by the join) instead of leaving the readers spinning.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex};

const fn assert_send_sync<T: Send + Sync>() {}
const _: () = assert_send_sync::<TransactionIndex>();

/// Longest a reader waits for the writer before the test fails.
const DEADLINE: Duration = Duration::from_secs(120);

/// Sets its flag when dropped: when the writer returns and when it unwinds.
struct RaiseOnDrop<'a>(&'a AtomicBool);

impl Drop for RaiseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Joins the writer, re-raising its panic (with its own message) if it panicked.
fn join_writer(writer: std::thread::ScopedJoinHandle<'_, ()>) {
    if let Err(panic) = writer.join() {
        std::panic::resume_unwind(panic);
    }
}

/// Readers always see a prefix of the appended entries, and it only grows.
#[test]
fn readers_see_growing_prefixes_while_appending() {
    let (_dir, path) = temp_path();
    let index = Arc::new(TransactionIndex::open(&path, 0).unwrap());
    let n = 1500i64;
    let entry = |i: i64| AbortedTxn::new(i, i, 2 * i, 2 * i + 1);
    let writer_done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writer = {
            let index = Arc::clone(&index);
            let writer_done = &writer_done;
            s.spawn(move || {
                let _raise = RaiseOnDrop(writer_done);
                for i in 0..n {
                    index.append(&entry(i)).unwrap();
                }
            })
        };
        for _ in 0..2 {
            let index = Arc::clone(&index);
            let writer_done = &writer_done;
            s.spawn(move || {
                let start = Instant::now();
                let mut seen = 0;
                while seen < n as usize {
                    // Read the flag before the entries: once the writer has ended, this
                    // read is the last one that can see anything new.
                    let ended = writer_done.load(Ordering::Acquire);
                    assert!(
                        start.elapsed() < DEADLINE,
                        "reader timed out at {seen} of {n}"
                    );
                    let all = index.all_aborted_txns().unwrap();
                    assert!(all.len() >= seen);
                    for (i, t) in all.iter().enumerate() {
                        assert_eq!(*t, entry(i as i64));
                    }
                    seen = all.len();
                    let res = index.collect_aborted_txns(0, i64::MAX).unwrap();
                    assert!(res.aborted_transactions.len() >= seen);
                    if ended {
                        break; // the writer's panic, if any, fails the test at the join
                    }
                }
            });
        }
        join_writer(writer);
    });
    assert_eq!(index.len().unwrap(), n as usize);
}

/// A writer repeatedly resets/truncates and refills the index with a new generation of
/// entries; every read returns entries of a single generation, in order.
#[test]
fn reads_never_mix_generations_across_reset_and_truncate() {
    let (_dir, path) = temp_path();
    let index = Arc::new(TransactionIndex::open(&path, 0).unwrap());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let index = Arc::clone(&index);
            let done = &done;
            s.spawn(move || {
                let start = Instant::now();
                while !done.load(Ordering::Acquire) {
                    assert!(start.elapsed() < DEADLINE, "reader timed out");
                    let all = index.all_aborted_txns().unwrap();
                    if let Some(first) = all.first() {
                        for (i, t) in all.iter().enumerate() {
                            assert_eq!(t.producer_id, first.producer_id, "mixed read");
                            assert_eq!(t.last_offset, i as i64);
                        }
                    }
                }
            });
        }
        let writer = {
            let index = Arc::clone(&index);
            let done = &done;
            s.spawn(move || {
                let _raise = RaiseOnDrop(done);
                for generation in 0..200i64 {
                    if generation % 2 == 0 {
                        index.reset().unwrap();
                    } else {
                        index.truncate_to(0).unwrap();
                    }
                    for i in 0..200i64 {
                        index.append(&AbortedTxn::new(generation, i, i, i)).unwrap();
                    }
                }
            })
        };
        join_writer(writer);
    });
}
