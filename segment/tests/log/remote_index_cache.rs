//! Issue 42, branch `remoteread`: `tier::RemoteIndexCache`
//! (`docs/kafka-behaviour.md#remote-index-cache`). One test per class of race Kafka's
//! `RemoteIndexCache` had (KAFKA-15481, 15511, 15169, 17184, 19971), then a stress run of
//! readers, loads, evictions and removals: no wrong answer, only typed errors.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;

use index_offset::OffsetPosition;
use segment::tier::{RemoteIndexCache, RemoteIndexes};
use segment::SegmentError;

/// Offset-index bytes of `n` entries: offsets `base + 10 i`, positions `100 i`.
fn offset_bytes(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * 8);
    for i in 0..n {
        v.extend(((10 * i) as i32).to_be_bytes());
        v.extend(((100 * i) as u32).to_be_bytes());
    }
    v
}

/// The indexes of remote segment `key`: base offset `key * 1_000_000`, `n` entries.
fn indexes(key: u64, n: usize) -> RemoteIndexes {
    RemoteIndexes::from_bytes(base(key), offset_bytes(n), Vec::new(), None).unwrap()
}

fn base(key: u64) -> i64 {
    key as i64 * 1_000_000
}

fn entries_of(key: u64) -> usize {
    (key % 5 + 1) as usize * 4
}

/// Checks that `got` answers as the indexes of `key` must: every lookup.
fn assert_answers(key: u64, got: &RemoteIndexes) {
    let n = entries_of(key);
    assert_eq!(got.offset_index.entries(), n, "segment {key}");
    for i in 0..n {
        let o = base(key) + 10 * i as i64;
        assert_eq!(
            got.offset_index.lookup(o + 3),
            OffsetPosition {
                offset: o,
                position: 100 * i as u32
            },
            "segment {key}"
        );
    }
}

/// KAFKA-15481: a removal raced a reader's reload of the same segment, and the removal's
/// late cleanup destroyed the files the reload had just written. Here a removal during a
/// load keeps the loaded entry valid for its reader and does not cache it (the segment is
/// gone); a reload after the removal is untouched by it.
#[test]
fn kafka_15481_a_removal_during_a_reload_leaves_the_reloaded_entry_intact() {
    let cache = Arc::new(RemoteIndexCache::<u64>::new(1 << 20));
    let first = cache
        .get_or_load(&1, || Ok(indexes(1, entries_of(1))))
        .unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    assert!(cache.remove(&1));
    let c = Arc::clone(&cache);
    let reader = thread::spawn(move || {
        c.get_or_load(&1, move || {
            started_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            Ok(indexes(1, entries_of(1)))
        })
        .unwrap()
    });
    started_rx.recv().unwrap();
    assert!(!cache.remove(&1)); // nothing cached yet: cancels the load in flight
    go_tx.send(()).unwrap();
    let reloaded = reader.join().unwrap();
    assert_answers(1, &reloaded);
    assert_answers(1, &first);
    assert!(
        !cache.contains(&1),
        "a load cancelled by a removal was cached"
    );
    // A reload after the removal is cached and stays valid.
    let again = cache
        .get_or_load(&1, || Ok(indexes(1, entries_of(1))))
        .unwrap();
    assert!(cache.contains(&1));
    assert!(!Arc::ptr_eq(&again, &reloaded));
    assert_answers(1, &again);
}

/// KAFKA-15511: a corrupt index left where the cache looks was never replaced: every
/// later fetch failed. Here a load of corrupt bytes fails with a typed `CorruptIndex`,
/// caches nothing, and the next call loads again.
#[test]
fn kafka_15511_a_corrupt_download_is_an_error_and_the_next_call_refetches() {
    let cache = RemoteIndexCache::<u64>::new(1 << 20);
    let err = cache
        .get_or_load(&2, || {
            RemoteIndexes::from_bytes(base(2), vec![0u8; 7], Vec::new(), None)
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            SegmentError::Index(index_offset::IndexError::CorruptIndex { .. })
        ),
        "{err}"
    );
    assert!(cache.is_empty());
    let ok = cache
        .get_or_load(&2, || Ok(indexes(2, entries_of(2))))
        .unwrap();
    assert_answers(2, &ok);
    assert_eq!(cache.stats().loads, 2);
}

/// KAFKA-15169: a fetch that got the offset index and then a corrupt time index left
/// half an entry behind (the offset index file), which later fetches trusted. Here a
/// load failing midway leaves nothing: the next load fetches all three indexes again.
#[test]
fn kafka_15169_a_load_failing_midway_leaves_nothing_behind() {
    let cache = RemoteIndexCache::<u64>::new(1 << 20);
    let fetched = AtomicUsize::new(0);
    let load = |time_index: Vec<u8>| {
        let f = &fetched;
        move || {
            f.fetch_add(1, Ordering::SeqCst); // the offset index
            let offset = offset_bytes(entries_of(3));
            f.fetch_add(1, Ordering::SeqCst); // the time index
            let txn = Some(Arc::from(Vec::new()));
            f.fetch_add(1, Ordering::SeqCst); // the transaction index
            RemoteIndexes::from_bytes(base(3), offset, time_index, txn)
        }
    };
    assert!(cache.get_or_load(&3, load(vec![1; 13])).is_err());
    assert_eq!((cache.len(), cache.weight()), (0, 0));
    let before = fetched.load(Ordering::SeqCst);
    let ok = cache.get_or_load(&3, load(Vec::new())).unwrap();
    assert_eq!(fetched.load(Ordering::SeqCst) - before, 3);
    assert_answers(3, &ok);
    assert_eq!(cache.weight(), ok.size_in_bytes());
}

/// KAFKA-17184: a deleter marked an entry for cleanup while a reader held it, and the
/// reader's next lookup threw `IllegalStateException`. Here a reader's entry answers
/// through its removal and its eviction, until the reader drops it.
#[test]
fn kafka_17184_a_reader_keeps_its_entry_through_removal_and_eviction() {
    let weight = indexes(4, entries_of(4)).size_in_bytes();
    let cache = RemoteIndexCache::<u64>::new(weight * 2);
    let held = cache
        .get_or_load(&4, || Ok(indexes(4, entries_of(4))))
        .unwrap();
    assert!(cache.remove(&4));
    assert_answers(4, &held);
    let held = cache
        .get_or_load(&4, || Ok(indexes(4, entries_of(4))))
        .unwrap();
    for k in [9u64, 14, 19] {
        // same weight as segment 4: each insert evicts the least recently used
        cache
            .get_or_load(&k, || Ok(indexes(k, entries_of(k))))
            .unwrap();
    }
    assert!(!cache.contains(&4));
    assert!(cache.stats().evictions >= 1);
    assert_answers(4, &held);
}

/// KAFKA-19971: an evicted entry, already marked for cleanup, could still be returned by
/// the cache, and lookups on it failed. Here an evicted entry is never handed out: a
/// lookup after its eviction is a miss that loads a fresh entry, and under concurrent
/// evictions every entry handed out answers correctly.
#[test]
fn kafka_19971_an_evicted_entry_is_never_handed_out() {
    let weight = indexes(5, entries_of(5)).size_in_bytes();
    let cache = Arc::new(RemoteIndexCache::<u64>::new(weight));
    let old = cache
        .get_or_load(&5, || Ok(indexes(5, entries_of(5))))
        .unwrap();
    cache
        .get_or_load(&10, || Ok(indexes(10, entries_of(10))))
        .unwrap();
    assert!(cache.get(&5).is_none());
    let loads = cache.stats().loads;
    let fresh = cache
        .get_or_load(&5, || Ok(indexes(5, entries_of(5))))
        .unwrap();
    assert_eq!(cache.stats().loads, loads + 1);
    assert!(!Arc::ptr_eq(&old, &fresh));
    // Concurrently: two keys of one weight in a cache of one: every get evicts the other.
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (c, stop) = (Arc::clone(&cache), Arc::clone(&stop));
            thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) || n < 200 {
                    let k = if (n + t).is_multiple_of(2) { 5 } else { 10 };
                    let e = c.get_or_load(&k, || Ok(indexes(k, entries_of(k)))).unwrap();
                    assert_answers(k, &e);
                    n += 1;
                }
            })
        })
        .collect();
    thread::sleep(std::time::Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    assert!(cache.weight() <= cache.capacity_bytes());
}

/// Readers, loads (some failing), evictions and removals at once: every entry handed out
/// answers as its segment's indexes must, every error is a typed `CorruptIndex`, the
/// weight stays within the capacity, and only one load of a key runs at a time.
#[test]
fn stress_readers_loads_evictions_and_removals() {
    let cap = indexes(4, entries_of(4)).size_in_bytes() * 6;
    let cache = Arc::new(RemoteIndexCache::<u64>::new(cap));
    let loading: Arc<Vec<AtomicUsize>> = Arc::new((0..32).map(|_| AtomicUsize::new(0)).collect());
    let threads = 6;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let errors = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for t in 0..threads {
        let (c, b, l, errors) = (
            Arc::clone(&cache),
            Arc::clone(&barrier),
            Arc::clone(&loading),
            Arc::clone(&errors),
        );
        handles.push(thread::spawn(move || {
            let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ t as u64;
            let mut next = move || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            b.wait();
            for _ in 0..3_000 {
                let k = next() % 32;
                let fail = next() % 13 == 0;
                let r = c.get_or_load(&k, || {
                    let now = l[k as usize].fetch_add(1, Ordering::SeqCst);
                    assert_eq!(now, 0, "two loads of segment {k} at once");
                    thread::yield_now();
                    l[k as usize].fetch_sub(1, Ordering::SeqCst);
                    if fail {
                        RemoteIndexes::from_bytes(base(k), vec![0; 9], Vec::new(), None)
                    } else {
                        Ok(indexes(k, entries_of(k)))
                    }
                });
                match r {
                    Ok(e) => assert_answers(k, &e),
                    Err(SegmentError::Index(index_offset::IndexError::CorruptIndex { .. })) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("untyped error {e}"),
                }
                if t == 0 && next() % 4 == 0 {
                    c.remove(&(next() % 32));
                }
                if let Some(e) = c.get(&k) {
                    assert_answers(k, &e);
                }
            }
        }));
    }
    barrier.wait();
    for h in handles {
        h.join().unwrap();
    }
    let s = cache.stats();
    assert!(cache.weight() <= cap);
    assert!(s.evictions > 0 && s.misses > 0 && s.loads > 0, "{s:?}");
    assert!(errors.load(Ordering::Relaxed) > 0);
}
