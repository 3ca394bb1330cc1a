//! Integration tests of the replay library: the claims the report makes, checked on a
//! 1 MiB index (debug-mode friendly).

use std::sync::OnceLock;

use bench_harness::replay::{
    compared_strategies, replay_synthetic, IndexKind, ReplayConfig, ReplayOutcome,
};
use bench_harness::workload::Workload;
use index_core::SearchStrategy;

const LOOKUPS: usize = 20_000;

fn config() -> ReplayConfig {
    ReplayConfig {
        index_bytes: 1024 * 1024,
        lookups: LOOKUPS,
        ..ReplayConfig::default()
    }
}

/// Both synthetic replays, computed once per test binary.
fn outcomes() -> &'static [ReplayOutcome; 2] {
    static OUT: OnceLock<[ReplayOutcome; 2]> = OnceLock::new();
    OUT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config();
        let run = |k| replay_synthetic(k, &cfg, dir.path(), &mut |_, _| {}).unwrap();
        [run(IndexKind::Offset), run(IndexKind::Time)]
    })
}

const BINARY: SearchStrategy = SearchStrategy::Binary;
fn warm_cold() -> SearchStrategy {
    compared_strategies(8192)[1]
}

#[test]
fn indexes_fill_completely_with_every_lookup_made() {
    for o in outcomes() {
        let entry = o.kind.entry_size();
        let slots = 1024 * 1024 / entry;
        let expected = match o.kind {
            IndexKind::Offset => slots,
            IndexKind::Time => slots - 1, // Kafka keeps one slot for the close entry
        };
        assert_eq!(o.capacity, expected, "{:?}", o.kind);
        assert_eq!(o.entries, expected, "{:?} index did not fill", o.kind);
        assert!(!o.segment_full);
        assert_eq!(o.workloads.len(), Workload::ALL.len());
        for w in &o.workloads {
            for s in &w.strategies {
                assert_eq!(s.lookups as usize, LOOKUPS, "{:?} {}", o.kind, w.workload);
            }
        }
    }
}

/// (a) Warm/cold touches at most 3 distinct pages on every hot-tail lookup that lands in
/// the warm section, and almost every hot-tail lookup does.
#[test]
fn warm_cold_touches_at_most_three_pages_in_the_warm_section() {
    for o in outcomes() {
        let hot = o.workload(Workload::HotTail).unwrap();
        let wc = hot.get(warm_cold()).unwrap();
        assert!(
            wc.warm_section_lookups as f64 >= 0.99 * LOOKUPS as f64,
            "{:?}: only {} of {LOOKUPS} hot-tail lookups landed in the warm section",
            o.kind,
            wc.warm_section_lookups
        );
        assert!(
            wc.warm_section_max_pages <= 3,
            "{:?}: {}",
            o.kind,
            wc.warm_section_max_pages
        );
        assert!(wc.warm_section_mean_pages() <= 3.0);
        // The same holds for every workload's warm-section lookups.
        for w in &o.workloads {
            assert!(
                w.get(warm_cold()).unwrap().warm_section_max_pages <= 3,
                "{:?} {}",
                o.kind,
                w.workload
            );
        }
    }
}

/// (b) For the same lookups, binary search touches more pages than warm/cold.
#[test]
fn binary_touches_more_pages_for_the_same_lookups() {
    for o in outcomes() {
        let hot = o.workload(Workload::HotTail).unwrap();
        let (b, wc) = (hot.get(BINARY).unwrap(), hot.get(warm_cold()).unwrap());
        // Same criterion, same lookups.
        assert_eq!(b.warm_section_lookups, wc.warm_section_lookups);
        assert!(
            b.warm_section_mean_pages() > wc.warm_section_mean_pages() + 3.0,
            "{:?}: binary {} vs warm-cold {}",
            o.kind,
            b.warm_section_mean_pages(),
            wc.warm_section_mean_pages()
        );
        assert!(b.warm_section_max_pages > 3);
        assert!(b.mean_pages() > wc.mean_pages());
        // And it faults far more in the simulated 32-page LRU cache.
        assert!(
            b.lru_faults > 10 * wc.lru_faults.max(1),
            "{:?}: binary {} faults vs warm-cold {}",
            o.kind,
            b.lru_faults,
            wc.lru_faults
        );
    }
}

/// (c) Both strategies return identical answers on every lookup, equal to a
/// `partition_point` oracle and to the index crate's own `lookup`.
#[test]
fn strategies_agree_on_every_lookup() {
    for o in outcomes() {
        for w in &o.workloads {
            assert_eq!(w.answer_mismatches, 0, "{:?} {}", o.kind, w.workload);
            assert_eq!(w.oracle_mismatches, 0, "{:?} {}", o.kind, w.workload);
            assert_eq!(w.api_mismatches, 0, "{:?} {}", o.kind, w.workload);
        }
    }
}

/// Uniform lookups give warm/cold no advantage: both strategies touch about log2 of the
/// pages, and the warm section is rarely hit.
#[test]
fn uniform_lookups_rarely_land_in_the_warm_section() {
    for o in outcomes() {
        let u = o.workload(Workload::Uniform).unwrap();
        let (b, wc) = (u.get(BINARY).unwrap(), u.get(warm_cold()).unwrap());
        assert!(
            wc.warm_section_lookups < LOOKUPS as u64 / 20,
            "{}",
            wc.warm_section_lookups
        );
        assert!(
            (b.mean_pages() - wc.mean_pages()).abs() < 1.5,
            "{} vs {}",
            b.mean_pages(),
            wc.mean_pages()
        );
    }
}

#[test]
fn replays_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ReplayConfig {
        index_bytes: 64 * 1024,
        lookups: 2_000,
        ..ReplayConfig::default()
    };
    let a = replay_synthetic(IndexKind::Time, &cfg, dir.path(), &mut |_, _| {}).unwrap();
    let b = replay_synthetic(IndexKind::Time, &cfg, dir.path(), &mut |_, _| {}).unwrap();
    let c = replay_synthetic(
        IndexKind::Time,
        &ReplayConfig {
            seed: 7,
            ..cfg.clone()
        },
        dir.path(),
        &mut |_, _| {},
    )
    .unwrap();
    let sig = |o: &ReplayOutcome| -> Vec<(u64, u64, u64)> {
        o.workloads
            .iter()
            .flat_map(|w| {
                w.strategies
                    .iter()
                    .map(|s| (s.pages_total, s.lru_faults, s.warm_section_lookups))
            })
            .collect()
    };
    assert_eq!(sig(&a), sig(&b));
    assert_eq!(a.offsets, b.offsets);
    assert_ne!((sig(&a), a.offsets), (sig(&c), c.offsets));
}
