//! Acceptance cases 4 and 6: lookups (floor semantics) and entry(n), with every search strategy.

use crate::common::*;
use index_offset::{IndexError, OffsetIndex, PageProbe, SearchStrategy};

/// Acceptance case 4 (OffsetIndexTest.randomLookupTest): 30 strictly increasing offsets starting
/// above 46 with random gaps 1..15; a stored offset returns its own entry, any other
/// target the greatest offset <= target, targets below the first return (45, 0).
#[test]
fn case04_random_lookups_floor_semantics() {
    for strategy in STRATEGIES {
        for seed in 1..=25u64 {
            let dir = tmp();
            let index = new_index(dir.path(), 45, 240).with_search_strategy(strategy);
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut offset = 46;
            let mut position = 0u32;
            let mut stored = Vec::new();
            for _ in 0..30 {
                offset += rng.range(1, 15);
                position += rng.range(1, 500) as u32;
                index.append(offset, position).unwrap();
                stored.push((offset, position));
            }
            assert!(index.is_full());
            assert_eq!(index.entries(), 30);
            for &(o, p) in &stored {
                assert_eq!(
                    index.lookup(o).unwrap(),
                    op(o, p),
                    "{strategy:?} seed {seed}"
                );
            }
            let last = stored.last().unwrap().0;
            for _ in 0..30 {
                let t = rng.range(45, last - 1);
                assert_eq!(
                    index.lookup(t).unwrap(),
                    model_lookup(&stored, 45, t),
                    "{strategy:?} seed {seed} target {t}"
                );
            }
            // Below the first entry: (base, 0); far above: the last entry.
            assert_eq!(index.lookup(stored[0].0 - 1).unwrap(), op(45, 0));
            assert_eq!(index.lookup(i64::MIN).unwrap(), op(45, 0));
            assert_eq!(
                index.lookup(i64::MAX).unwrap(),
                op(last, stored.last().unwrap().1)
            );
        }
    }
}

/// A fixed sparse index looked up at, between, below and above its entries.
#[test]
fn lookup_fixed_values_every_strategy() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 1000, 4096).with_search_strategy(strategy);
        for i in 0..10i64 {
            index.append(1000 + 10 * i + 5, (100 * i) as u32).unwrap();
        }
        // entries: (1005,0) (1015,100) ... (1095,900)
        let cases = [
            (0, op(1000, 0)),
            (1000, op(1000, 0)),
            (1004, op(1000, 0)),
            (1005, op(1005, 0)),
            (1006, op(1005, 0)),
            (1014, op(1005, 0)),
            (1015, op(1015, 100)),
            (1050, op(1045, 400)),
            (1094, op(1085, 800)),
            (1095, op(1095, 900)),
            (5000, op(1095, 900)),
        ];
        for (t, want) in cases {
            assert_eq!(index.lookup(t).unwrap(), want, "{strategy:?} target {t}");
            let mut probe = PageProbe::new(4096);
            assert_eq!(index.lookup_with_probe(t, &mut probe).unwrap(), want);
            // 80 bytes live in page 0; only the page directory answers targets below
            // the first key without reading any slot.
            if t >= 1005 || !matches!(strategy, SearchStrategy::PageDirectory { .. }) {
                assert!(probe.reads() >= 1, "{strategy:?} {t}");
                assert_eq!(probe.pages(), &[0]);
            } else {
                assert_eq!(probe.reads(), 0, "{strategy:?} {t}");
            }
        }
    }
}

/// Empty index: every lookup is (base, 0) for every strategy.
#[test]
fn lookup_on_empty_index_returns_base() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 77, 800).with_search_strategy(strategy);
        for t in [i64::MIN, -1, 0, 76, 77, 78, i64::MAX] {
            assert_eq!(index.lookup(t).unwrap(), op(77, 0));
        }
    }
}

/// Acceptance case 6 (OffsetIndexTest.testEntry / testEntryOverflow).
#[test]
fn case06_entry_n() {
    let dir = tmp();
    let index = new_index(dir.path(), 45, 240);
    // On an empty index entry(0) is out of range.
    match index.entry(0) {
        Err(IndexError::SlotOutOfRange {
            slot: 0,
            entries: 0,
            kind,
            ..
        }) => assert_eq!(kind, "offset index"),
        other => panic!("expected SlotOutOfRange, got {other:?}"),
    }
    for i in 0..3i64 {
        index.append(45 + i, i as u32).unwrap(); // first entry == base offset is allowed
    }
    assert!(matches!(
        index.entry(4),
        Err(IndexError::SlotOutOfRange {
            slot: 4,
            entries: 3,
            ..
        })
    ));
    assert!(matches!(
        index.entry(3),
        Err(IndexError::SlotOutOfRange {
            slot: 3,
            entries: 3,
            ..
        })
    ));
    for i in 3..30i64 {
        index.append(45 + i, i as u32).unwrap();
    }
    for i in 0..30usize {
        assert_eq!(index.entry(i).unwrap(), op(45 + i as i64, i as u32));
    }
    assert_eq!(
        index.all_entries().unwrap(),
        (0..30).map(|i| op(45 + i, i as u32)).collect::<Vec<_>>()
    );
    assert!(matches!(
        index.entry(30),
        Err(IndexError::SlotOutOfRange {
            slot: 30,
            entries: 30,
            ..
        })
    ));
    assert_eq!(index.last_entry().unwrap(), op(74, 29));
    assert_eq!(index.last_offset().unwrap(), 74);
    // A stored offset equal to the base offset is found by lookup.
    assert_eq!(index.lookup(45).unwrap(), op(45, 0));
    assert_eq!(index.lookup(44).unwrap(), op(45, 0));
}

/// The index a lookup runs on can be wider than the warm section: both paths agree with
/// the model at every target (5000 entries, default 1024-entry warm section).
#[test]
fn warm_and_cold_paths_agree_with_model_on_large_index() {
    let dir = tmp();
    let mut stored = Vec::new();
    let index = new_index(dir.path(), 0, 5000 * 8);
    for i in 0..5000i64 {
        index.append(3 * i + 2, (i * 11) as u32).unwrap();
        stored.push((3 * i + 2, (i * 11) as u32));
    }
    assert!(index.is_full());
    for strategy in STRATEGIES {
        let path = dir.path().join(format!("{strategy:?}.index"));
        std::fs::copy(index.path(), &path).unwrap();
        let ro = OffsetIndex::open_read_only(&path, 0)
            .unwrap()
            .with_search_strategy(strategy);
        assert_eq!(ro.entries(), 5000);
        for t in (-3..15_010).step_by(7) {
            assert_eq!(
                ro.lookup(t).unwrap(),
                model_lookup(&stored, 0, t),
                "{strategy:?} {t}"
            );
        }
    }
}

/// `with_reader`: a batch of lookups announced once answers every target as
/// `lookup` does (and as the model does), for every strategy, sees appends published
/// during the batch, and reports `Closed` on an unmapped index.
#[test]
fn with_reader_answers_as_lookup() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 100, 8 * 4000).with_search_strategy(strategy);
        let mut stored = Vec::new();
        for i in 0..3000i64 {
            let (o, p) = (101 + 3 * i, 40 * i as u32);
            index.append(o, p).unwrap();
            stored.push((o, p));
        }
        let mut rng = Rng(7);
        index.with_reader(|r| {
            for _ in 0..2000 {
                let t = rng.range(90, 101 + 3 * 3000 + 5);
                let want = model_lookup(&stored, 100, t);
                assert_eq!(r.lookup(t).unwrap(), want, "{strategy:?} target {t}");
                assert_eq!(index.lookup(t).unwrap(), want, "{strategy:?} target {t}");
            }
            // An append inside the batch is seen by the next lookup.
            index.append(20_000, 123_456).unwrap();
            assert_eq!(r.lookup(30_000).unwrap(), op(20_000, 123_456));
            // Nested: a per-call lookup inside the batch, then the reader again.
            assert_eq!(index.lookup(101).unwrap(), op(101, 0));
            assert_eq!(r.lookup(101).unwrap(), op(101, 0));
        });
    }
    let dir = tmp();
    let index = new_index(dir.path(), 0, 4096);
    index.append(5, 7).unwrap();
    index.force_unmap();
    index.with_reader(|r| match r.lookup(5) {
        Err(IndexError::Closed { .. }) => {}
        other => panic!("expected Closed, got {other:?}"),
    });
}
