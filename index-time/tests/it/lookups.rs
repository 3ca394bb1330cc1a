//! Acceptance cases 20 and 21: time-index lookups and entry(n), every strategy.

use crate::common::*;
use index_time::IndexError;

fn case20_index(
    dir: &std::path::Path,
    strategy: index_time::SearchStrategy,
) -> index_time::TimeIndex {
    let index = new_index(dir, 45, 360).with_search_strategy(strategy);
    assert_eq!(index.lookup(100).unwrap(), to(-1, 45), "empty");
    for i in 1..30 {
        assert!(index.maybe_append(10 * i, 45 + 10 * i).unwrap());
    }
    assert_eq!(index.entries(), 29);
    index
}

/// Acceptance case 20 (TimeIndexTest.testLookUp).
#[test]
fn case20_lookup() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = case20_index(dir.path(), strategy);
        assert_eq!(index.lookup(9).unwrap(), to(-1, 45), "{strategy:?}");
        assert_eq!(index.lookup(25).unwrap(), to(20, 65), "{strategy:?}");
        assert_eq!(index.lookup(30).unwrap(), to(30, 75), "{strategy:?}");
        assert_eq!(index.lookup(10).unwrap(), to(10, 55));
        assert_eq!(index.lookup(290).unwrap(), to(290, 335));
        assert_eq!(index.lookup(i64::MAX).unwrap(), to(290, 335));
        assert_eq!(index.lookup(i64::MIN).unwrap(), to(-1, 45));
        for t in 0..300 {
            let want = if t < 10 {
                to(-1, 45)
            } else {
                to(t / 10 * 10, 45 + t / 10 * 10)
            };
            assert_eq!(index.lookup(t).unwrap(), want, "{strategy:?} {t}");
        }
    }
}

/// Acceptance case 21 (TimeIndexTest.testEntry / testEntryOverflow).
#[test]
fn case21_entry_n() {
    let dir = tmp();
    let index = case20_index(dir.path(), Default::default());
    assert_eq!(index.entry(0).unwrap(), to(10, 55));
    assert_eq!(index.entry(1).unwrap(), to(20, 65));
    assert_eq!(index.entry(2).unwrap(), to(30, 75));
    assert_eq!(index.entry(3).unwrap(), to(40, 85));
    assert!(matches!(
        index.entry(29),
        Err(IndexError::SlotOutOfRange { slot: 29, entries: 29, kind, .. }) if kind == "time index"
    ));
    let empty = new_index(dir.path(), 46, 360);
    assert!(matches!(
        empty.entry(0),
        Err(IndexError::SlotOutOfRange {
            slot: 0,
            entries: 0,
            ..
        })
    ));
}

/// Random increasing timestamps, every strategy, against the sorted-Vec model.
#[test]
fn random_lookups_match_model() {
    for strategy in STRATEGIES {
        for seed in 1..=10u64 {
            let dir = tmp();
            let index = new_index(dir.path(), 1000, 12 * 2000).with_search_strategy(strategy);
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (mut ts, mut off) = (1_700_000_000_000i64, 1000i64);
            let mut stored = Vec::new();
            for _ in 0..1500 {
                ts += rng.range(1, 100);
                off += rng.range(0, 5);
                assert!(index.maybe_append(ts, off).unwrap());
                stored.push((ts, off));
            }
            for _ in 0..300 {
                let t = rng.range(stored[0].0 - 10, ts + 10);
                assert_eq!(
                    index.lookup(t).unwrap(),
                    model_lookup(&stored, 1000, t),
                    "{strategy:?} {t}"
                );
            }
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
        let index = new_index(dir.path(), 100, 12 * 4000).with_search_strategy(strategy);
        let mut stored = Vec::new();
        for i in 0..3000i64 {
            let (t, o) = (1_000 + 5 * i, 100 + 2 * i);
            assert!(index.maybe_append(t, o).unwrap());
            stored.push((t, o));
        }
        let mut rng = Rng(11);
        index.with_reader(|r| {
            for _ in 0..2000 {
                let t = rng.range(900, 1_000 + 5 * 3000 + 5);
                let want = model_lookup(&stored, 100, t);
                assert_eq!(r.lookup(t).unwrap(), want, "{strategy:?} target {t}");
                assert_eq!(index.lookup(t).unwrap(), want, "{strategy:?} target {t}");
            }
            // An append inside the batch is seen by the next lookup.
            assert!(index.maybe_append(50_000, 9_000).unwrap());
            assert_eq!(r.lookup(60_000).unwrap(), to(50_000, 9_000));
            assert_eq!(index.lookup(1_000).unwrap(), to(1_000, 100));
            assert_eq!(r.lookup(1_000).unwrap(), to(1_000, 100));
        });
    }
    let dir = tmp();
    let index = new_index(dir.path(), 0, 4096);
    assert!(index.maybe_append(5, 7).unwrap());
    index.force_unmap();
    index.with_reader(|r| match r.lookup(5) {
        Err(IndexError::Closed { .. }) => {}
        other => panic!("expected Closed, got {other:?}"),
    });
}
