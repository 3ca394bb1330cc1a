//! Concurrency smoke test for the time index: one writer (maybe_append, resize,
//! truncate_to, trim) and three readers whose answers must always be entries of the
//! deterministic sequence `(T0 + 5i, BASE + 2i)` at or below the target, or the
//! `(-1, BASE)` default.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use crate::common::*;
use index_time::{IndexError, SearchStrategy, TimestampOffset};

const BASE: i64 = 500;
const T0: i64 = 1_700_000_000_000;

fn entry(i: usize) -> TimestampOffset {
    to(T0 + 5 * i as i64, BASE + 2 * i as i64)
}

fn valid(e: TimestampOffset, target: i64) -> bool {
    if e == to(-1, BASE) {
        return true;
    }
    let d = e.timestamp - T0;
    d >= 0 && d % 5 == 0 && e == entry((d / 5) as usize) && e.timestamp <= target
}

#[test]
fn readers_stay_consistent_while_writer_appends_resizes_truncates_and_trims() {
    for strategy in [
        SearchStrategy::default(),
        SearchStrategy::PageDirectory { page_size: 4096 },
    ] {
        let dir = tmp();
        let index = Arc::new(new_index(dir.path(), BASE, 12 * 1024).with_search_strategy(strategy));
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3u64)
            .map(|r| {
                let (index, done) = (index.clone(), done.clone());
                thread::spawn(move || {
                    let mut rng = Rng(77 + r);
                    let mut n = 0;
                    while !done.load(Ordering::Acquire) || n == 0 {
                        let t = rng.range(T0 - 10, T0 + 5 * 30_000);
                        let got = index.lookup(t).unwrap();
                        assert!(valid(got, t), "{strategy:?}: lookup({t}) = {got:?}");
                        let snap = index.snapshot().unwrap();
                        for (i, e) in snap.slots().iter().enumerate().step_by(331) {
                            assert_eq!(e.decode(BASE), entry(i));
                        }
                        drop(snap);
                        n += 1;
                    }
                })
            })
            .collect();
        let mut rng = Rng(5);
        let mut next = 0usize;
        for round in 0..25 {
            while next < (round + 1) * 1200 {
                let e = entry(next);
                match index.maybe_append(e.timestamp, e.offset) {
                    Ok(true) => next += 1,
                    Err(IndexError::IndexFull { .. }) => {
                        assert!(index.resize(index.length() + 12 * 341).unwrap());
                    }
                    other => panic!("{other:?}"),
                }
            }
            let keep = rng.range(0, next as i64 - 1) as usize;
            index.truncate_to(entry(keep).offset).unwrap();
            assert_eq!(index.entries(), keep);
            next = keep;
            if round % 3 == 0 {
                index.trim_to_valid_size().unwrap();
            }
        }
        done.store(true, Ordering::Release);
        for r in readers {
            r.join().unwrap();
        }
        let all = index.all_entries().unwrap();
        assert_eq!(all.len(), next);
        assert!(all.iter().enumerate().all(|(i, e)| *e == entry(i)));
    }
}
