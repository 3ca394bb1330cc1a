//! Concurrency smoke tests with std threads: one writer, three lock-free readers.
//!
//! Entry `i` is always `(BASE + 10 + 3i, 7i)`, whether written for the first time or
//! re-written after a truncation, so every answer a reader can legitimately see (even a
//! stale one) is an entry of that sequence or the `(BASE, 0)` default; anything else
//! would be an out-of-bounds or torn read.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use crate::common::*;
use index_offset::{Bound, NoProbe, OffsetPosition, SearchField, SearchStrategy};

const BASE: i64 = 1_000;

fn entry(i: usize) -> OffsetPosition {
    op(BASE + 10 + 3 * i as i64, 7 * i as u32)
}

/// The LLB slot for `target` in the first `n` entries of the sequence.
fn llb(n: usize, target: i64) -> Option<usize> {
    if n == 0 || target < BASE + 10 {
        return None;
    }
    Some((((target - BASE - 10) / 3) as usize).min(n - 1))
}

fn is_sequence_entry(e: OffsetPosition) -> bool {
    let rel = e.offset - BASE - 10;
    rel >= 0 && rel % 3 == 0 && e == entry((rel / 3) as usize)
}

const STRATEGIES_UNDER_TEST: [SearchStrategy; 3] = [
    SearchStrategy::WarmCold {
        warm_section_bytes: 8192,
    },
    SearchStrategy::Binary,
    SearchStrategy::PageDirectory { page_size: 4096 },
];

/// 200k appends (50k for the other strategies, to keep the suite fast) while 3 readers check that every lookup answer is the exact largest
/// lower bound for some entry count between the counts they saw before and after it,
/// and that every snapshot answers exactly for its own count.
#[test]
fn readers_see_valid_largest_lower_bounds_during_200k_appends() {
    for (strategy, n) in STRATEGIES_UNDER_TEST
        .into_iter()
        .zip([200_000, 50_000, 50_000])
    {
        let big_n: usize = n;
        let dir = tmp();
        let index = Arc::new(new_index(dir.path(), BASE, big_n * 8).with_search_strategy(strategy));
        let done = Arc::new(AtomicBool::new(false));
        let checks = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..3u64)
            .map(|r| {
                let (index, done, checks) = (index.clone(), done.clone(), checks.clone());
                thread::spawn(move || {
                    let mut rng = Rng(0x1234_5678 + r);
                    let mut local = 0usize;
                    while !done.load(Ordering::Acquire) || local == 0 {
                        let c1 = index.entries();
                        let hi = BASE + 20 + 3 * c1 as i64;
                        let t = rng.range(BASE - 5, hi);
                        let got = index.lookup(t).unwrap();
                        let c2 = index.entries();
                        assert!(c1 <= c2, "entries never decrease during appends");
                        let ok = (c1..=c2).any(|n| got == llb(n, t).map_or(op(BASE, 0), entry));
                        assert!(
                            ok,
                            "{strategy:?}: lookup({t}) = {got:?} with {c1}..={c2} entries"
                        );

                        let snap = index.snapshot().unwrap();
                        let n = snap.len();
                        assert!(n >= c2);
                        let slot = snap.search(
                            t,
                            SearchField::Key,
                            Bound::LargestLowerBound,
                            &mut NoProbe,
                        );
                        assert_eq!(slot, llb(n, t), "{strategy:?}: snapshot of {n}, target {t}");
                        if n > 0 {
                            let i = (rng.next_u64() % n as u64) as usize;
                            assert_eq!(snap.slots()[i].decode(BASE), entry(i));
                            assert_eq!(snap.last().unwrap().decode(BASE), entry(n - 1));
                        }
                        local += 1;
                    }
                    checks.fetch_add(local, Ordering::Relaxed);
                })
            })
            .collect();
        for i in 0..big_n {
            let e = entry(i);
            index.append(e.offset, e.position).unwrap();
        }
        done.store(true, Ordering::Release);
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(index.entries(), big_n);
        assert!(index.is_full());
        assert_eq!(index.last_entry().unwrap(), entry(big_n - 1));
        assert!(checks.load(Ordering::Relaxed) >= 3);
    }
}

/// Readers keep looking up while the writer grows the file, truncates, trims and
/// re-appends: no crash, and every answer is a sequence entry at or below the target (or
/// the default), never garbage.
#[test]
fn readers_stay_consistent_across_resize_truncate_and_trim() {
    for strategy in STRATEGIES_UNDER_TEST {
        let dir = tmp();
        let index = Arc::new(new_index(dir.path(), BASE, 4096).with_search_strategy(strategy));
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3u64)
            .map(|r| {
                let (index, done) = (index.clone(), done.clone());
                thread::spawn(move || {
                    let mut rng = Rng(0xfeed + r);
                    let mut n = 0usize;
                    while !done.load(Ordering::Acquire) || n == 0 {
                        let t = rng.range(BASE - 5, BASE + 20 + 3 * 40_000);
                        let got = index.lookup(t).unwrap();
                        assert!(
                            got == op(BASE, 0) || (is_sequence_entry(got) && got.offset <= t),
                            "{strategy:?}: lookup({t}) = {got:?}"
                        );
                        let snap = index.snapshot().unwrap();
                        for (i, e) in snap.slots().iter().enumerate().step_by(997) {
                            assert_eq!(e.decode(BASE), entry(i));
                        }
                        if let Some(slot) =
                            snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                        {
                            let e = snap.slots()[slot].decode(BASE);
                            assert!(is_sequence_entry(e) && e.offset <= t);
                        }
                        drop(snap);
                        if let Ok(Some(fub)) =
                            index.fetch_upper_bound_offset(op(BASE, 0), (t % 50_000) as i32)
                        {
                            assert!(is_sequence_entry(fub), "{fub:?}");
                        }
                        n += 1;
                    }
                })
            })
            .collect();

        let mut rng = Rng(99);
        let mut next = 0usize;
        for round in 0..40 {
            // Append until full, growing the file in steps.
            let target = (round + 1) * 1000;
            while next < target {
                let e = entry(next);
                match index.append(e.offset, e.position) {
                    Ok(()) => next += 1,
                    Err(index_offset::IndexError::IndexFull { .. }) => {
                        assert!(index.resize(index.length() + 8 * 512).unwrap());
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            // Truncate back to a random entry and re-append the same sequence later.
            let keep = rng.range(0, next as i64 - 1) as usize;
            index.truncate_to(entry(keep).offset).unwrap();
            assert_eq!(index.entries(), keep);
            next = keep;
            if round % 3 == 0 {
                index.trim_to_valid_size().unwrap();
                assert_eq!(index.length(), keep * 8);
            }
            if round % 5 == 0 {
                index.flush().unwrap();
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
