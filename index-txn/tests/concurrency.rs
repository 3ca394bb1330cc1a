//! Readers concurrent with one appender, and with truncation/reset.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use index_txn::{AbortedTxn, TransactionIndex};

const fn assert_send_sync<T: Send + Sync>() {}
const _: () = assert_send_sync::<TransactionIndex>();

/// Readers always see a prefix of the appended entries, and it only grows.
#[test]
fn readers_see_growing_prefixes_while_appending() {
    let (_dir, path) = temp_path();
    let index = Arc::new(TransactionIndex::open(&path, 0).unwrap());
    let n = 1500i64;
    let entry = |i: i64| AbortedTxn::new(i, i, 2 * i, 2 * i + 1);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let index = Arc::clone(&index);
            s.spawn(move || {
                let mut seen = 0;
                while seen < n as usize {
                    let all = index.all_aborted_txns().unwrap();
                    assert!(all.len() >= seen);
                    for (i, t) in all.iter().enumerate() {
                        assert_eq!(*t, entry(i as i64));
                    }
                    seen = all.len();
                    let res = index.collect_aborted_txns(0, i64::MAX).unwrap();
                    assert!(res.aborted_transactions.len() >= seen);
                }
            });
        }
        for i in 0..n {
            index.append(&entry(i)).unwrap();
        }
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
                while !done.load(Ordering::Relaxed) {
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
        done.store(true, Ordering::Relaxed);
    });
}
