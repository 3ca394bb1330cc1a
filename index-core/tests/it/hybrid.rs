//! The default strategy, [`SearchStrategy::HYBRID`]: on indexes of many pages opened the
//! default way (so with the page directory the open builds), every key lookup answers
//! Kafka's warm/cold slot (`kafka_search` with `kafka_equivalent`, the oracle), around
//! the warm/cold boundary and slot 0 too; a warm lookup touches at most 3 pages, a cold
//! one, once the fences it needs are known, the first warm slot's page and exactly one
//! page of the cold part (answer included); and on an index
//! reopened untrimmed (zero slots as entries, keys that do not increase) a largest lower
//! bound is none exactly when Kafka's is, and else a slot whose key is at most the target.

use crate::common::{E12, E8};
use index_core::codec::IndexEntry;
use index_core::search::kafka_search;
use index_core::{Bound, IndexFile, NoProbe, OpenMode, PageProbe, SearchField, SearchStrategy};

const BASE: i64 = 5000;

/// Strictly increasing keys from `BASE + 1`, gaps of 1 to 16 (a fixed LCG).
fn keys(n: usize, seed: u64) -> Vec<i64> {
    let mut x = seed;
    let mut k = BASE;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            k += 1 + (x >> 60) as i64;
            k
        })
        .collect()
}

fn build<E: IndexEntry>(
    dir: &tempfile::TempDir,
    make: impl Fn(i64, i64) -> E,
    keys: &[i64],
) -> IndexFile<E> {
    build_with(dir, make, keys, keys.len() + 7)
}

/// [`build`] with room for `slots` entries.
fn build_with<E: IndexEntry>(
    dir: &tempfile::TempDir,
    make: impl Fn(i64, i64) -> E,
    keys: &[i64],
    slots: usize,
) -> IndexFile<E> {
    let index = IndexFile::<E>::open(
        dir.path().join("0.idx"),
        BASE,
        Some(slots * E::SIZE),
        OpenMode::ReadWrite,
    )
    .unwrap();
    assert_eq!(index.search_strategy(), SearchStrategy::HYBRID);
    for (i, &k) in keys.iter().enumerate() {
        index.append(&make(k, BASE + i as i64)).unwrap();
    }
    index
}

fn e8(k: i64, v: i64) -> E8 {
    crate::common::e8(BASE, k, v)
}

fn e12(k: i64, v: i64) -> E12 {
    crate::common::e12(BASE, k, v)
}

/// Every key lookup of the default strategy against Kafka's warm/cold, on the lookup
/// path and on a snapshot, both bounds.
fn answers_equal_kafka<E: IndexEntry>(make: impl Fn(i64, i64) -> E, n: usize, seed: u64) {
    let dir = crate::common::tmp();
    let keys = keys(n, seed);
    let index = build(&dir, make, &keys);
    let snap = index.snapshot().unwrap();
    assert!(
        snap.directory().is_some(),
        "the default open builds the directory"
    );
    let slots = snap.slots();
    let s = SearchStrategy::HYBRID;
    assert_eq!(s.kafka_equivalent(), SearchStrategy::WARM_COLD);
    let first_warm = s.first_warm_slot(n, E::SIZE).unwrap();
    let mut targets: Vec<i64> = vec![i64::MIN, BASE - 1, BASE, i64::MAX];
    for &i in &[
        0,
        1,
        2,
        first_warm.saturating_sub(1),
        first_warm,
        first_warm + 1,
    ] {
        if let Some(&k) = keys.get(i) {
            targets.extend([k - 1, k, k + 1]);
        }
    }
    targets.extend(keys.iter().step_by(7).flat_map(|&k| [k - 1, k, k + 1]));
    for t in targets {
        for bound in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
            let want = kafka_search(slots, BASE, t, SearchField::Key, bound, s, &mut NoProbe);
            let got = snap.search(t, SearchField::Key, bound, &mut NoProbe);
            assert_eq!(got, want, "n {n} {bound:?} target {t}");
            let lookup = index
                .search(t, SearchField::Key, bound, &mut NoProbe)
                .unwrap()
                .map(|(slot, _)| slot);
            assert_eq!(lookup, want, "lookup path: n {n} {bound:?} target {t}");
        }
    }
}

#[test]
fn the_default_answers_as_kafkas_warm_cold() {
    for (n, seed) in [(1, 1), (2, 2), (700, 3), (1025, 4), (1026, 5), (20_000, 6)] {
        answers_equal_kafka(e8, n, seed);
        answers_equal_kafka(e12, n, seed);
    }
}

/// Pages a lookup touches (search and answer), through a snapshot.
fn pages<E: IndexEntry>(snap: &index_core::Snapshot<E>, t: i64) -> (Option<usize>, usize) {
    let (slot, probe) = probe(snap, t);
    (slot, probe.distinct_pages())
}

fn probe<E: IndexEntry>(snap: &index_core::Snapshot<E>, t: i64) -> (Option<usize>, PageProbe) {
    let mut probe = PageProbe::new(4096);
    let slot = snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut probe);
    if let Some(slot) = slot {
        snap.answer(slot, &mut probe).unwrap();
    }
    (slot, probe)
}

fn page_touches<E: IndexEntry>(make: impl Fn(i64, i64) -> E) {
    let dir = crate::common::tmp();
    let n = 64 * 4096 / E::SIZE;
    let keys = keys(n, 9);
    let index = build(&dir, make, &keys);
    let snap = index.snapshot().unwrap();
    let first_warm = SearchStrategy::HYBRID.first_warm_slot(n, E::SIZE).unwrap();
    // Warm: at most the warm section's 3 pages, as Kafka's warm/cold.
    for t in (keys[first_warm] + 1..keys[n - 1] + 3).step_by(5) {
        let (slot, pages) = pages(&snap, t);
        assert!(slot.unwrap() >= first_warm);
        assert!(pages <= 3, "warm target {t}: {pages} pages");
    }
    // Cold: a first pass learns the fences; then a lookup reads the first warm slot (as
    // Kafka's warm/cold decision does: a page of the warm section, which every lookup
    // reads) and one page of the cold part, answer included.
    // (A 12-byte first warm slot may straddle two pages.)
    let warm_pages = first_warm * E::SIZE / 4096..=((first_warm + 1) * E::SIZE - 1) / 4096;
    let cold: Vec<i64> = keys[..=first_warm]
        .iter()
        .step_by(3)
        .flat_map(|&k| [k - 1, k])
        .collect();
    for &t in &cold {
        pages(&snap, t);
    }
    for &t in &cold {
        let (slot, probe) = probe(&snap, t);
        assert!(slot.is_none_or(|s| s <= first_warm));
        assert!(warm_pages.contains(&probe.pages()[0]), "cold target {t}");
        // Below slot 0 the answer comes from fence 0, without a cold page.
        let cold_pages = probe
            .pages()
            .iter()
            .filter(|p| !warm_pages.contains(p))
            .count();
        let in_warm_page = slot.is_some_and(|s| warm_pages.contains(&(s * E::SIZE / 4096)));
        let want = usize::from(t >= keys[0] && !in_warm_page);
        assert_eq!(cold_pages, want, "cold target {t}: {:?}", probe.pages());
    }
    assert_eq!(
        pages(&snap, keys[0] - 1),
        (None, warm_pages.clone().count())
    );
}

#[test]
fn warm_lookups_touch_at_most_three_pages_cold_ones_one() {
    page_touches(e8);
    page_touches(e12);
}

/// An offset index closed without its trim and reopened: every slot of the preallocated
/// file is an entry, the zero slots with key `BASE` (relative offset 0), below every real
/// key. Kafka's `sanityCheck` accepts it.
#[test]
fn an_untrimmed_reopen_answers_slots_at_or_below_the_target() {
    let cases = [
        (3000, 3000, false),
        (3000, 1500, false),
        (600, 5000, false),
        (5000, 1024, false),
        (5000, 1025, false),
        // Slot 0 at the base offset, as a zero slot: the cold part's fences then
        // neither increase nor decrease (page 0 and the zero pages qualify for the base
        // offset, the pages between do not).
        (700, 1500, true),
        (600, 1600, true),
        (1100, 1500, true),
    ];
    for (real, zeros, from_base) in cases {
        let dir = crate::common::tmp();
        let path = dir.path().join("0.idx");
        let mut keys = keys(real, real as u64 + zeros as u64);
        if from_base {
            keys[0] = BASE;
        }
        {
            let index =
                IndexFile::<E8>::open(&path, BASE, Some((real + zeros) * 8), OpenMode::ReadWrite)
                    .unwrap();
            for (i, &k) in keys.iter().enumerate() {
                index.append(&e8(k, i as i64)).unwrap();
            }
            // Dropped without close(): the file keeps its preallocated length.
        }
        let index = IndexFile::<E8>::open(&path, BASE, None, OpenMode::ReadOnly).unwrap();
        assert_eq!(index.entries(), real + zeros);
        let snap = index.snapshot().unwrap();
        let slots = snap.slots();
        let key = |slot: usize| slots[slot].key(BASE);
        let mut targets = vec![BASE - 1, BASE, BASE + 1, i64::MAX];
        targets.extend(keys.iter().step_by(11).flat_map(|&k| [k - 1, k]));
        for _pass in 0..2 {
            for &t in &targets {
                let bound = Bound::LargestLowerBound;
                let want = kafka_search(
                    slots,
                    BASE,
                    t,
                    SearchField::Key,
                    bound,
                    SearchStrategy::HYBRID,
                    &mut NoProbe,
                );
                let got = snap.search(t, SearchField::Key, bound, &mut NoProbe);
                assert_eq!(got.is_none(), want.is_none(), "{real}+{zeros} target {t}");
                if let Some(slot) = got {
                    assert!(key(slot) <= t, "{real}+{zeros} target {t}: slot {slot}");
                }
            }
        }
    }
}

/// The same shape written by the index's own writer (so every fence is known from the
/// start): slot 0 at the base offset, a page of real keys, zero slots after them. For the
/// base offset the cold part's first page and its zero pages qualify, the page between
/// does not: the tail count of the directory picks that page, which neither the hybrid
/// nor the page directory may search (its slots are all above the target).
#[test]
fn fences_that_do_not_increase_never_answer_above_the_target() {
    // The first four shapes give the hybrid's cold part (three pages) that pattern, the
    // last two the whole index (the page directory's tail).
    let shapes = [
        (1024, 1300),
        (1024, 1100),
        (1536, 1800),
        (512, 1300),
        (1024, 300),
        (1024, 500),
    ];
    for (real, zeros) in shapes {
        let dir = crate::common::tmp();
        let mut keys = keys(real, 77);
        keys[0] = BASE;
        let index = build_with(&dir, e8, &keys, real + zeros);
        for _ in 0..zeros {
            index.append(&e8(BASE, 0)).unwrap();
        }
        let snap = index.snapshot().unwrap();
        let slots = snap.slots();
        for t in [BASE - 1, BASE] {
            let want = kafka_search(
                slots,
                BASE,
                t,
                SearchField::Key,
                Bound::LargestLowerBound,
                SearchStrategy::HYBRID,
                &mut NoProbe,
            );
            // The page directory's search has the same tail count (same directory).
            for s in [SearchStrategy::HYBRID, SearchStrategy::PAGE_DIRECTORY] {
                let got = snap.search_with(
                    s,
                    t,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    &mut NoProbe,
                );
                assert_eq!(
                    got.is_none(),
                    want.is_none(),
                    "{s:?} {real}+{zeros} target {t}"
                );
                if let Some(slot) = got {
                    let key = slots[slot].key(BASE);
                    assert!(
                        key <= t,
                        "{s:?} {real}+{zeros} target {t}: slot {slot} key {key}"
                    );
                }
            }
        }
    }
}
