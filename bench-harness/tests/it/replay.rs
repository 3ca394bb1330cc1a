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
    compared_strategies(8192, 4096)[1]
}
const PAGE_DIRECTORY: SearchStrategy = SearchStrategy::PageDirectory { page_size: 4096 };

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

/// The page directory's numbers are its own: the replayed indexes keep the directory, so
/// no page-directory lookup fell back to warm/cold.
#[test]
fn page_directory_lookups_use_the_directory() {
    for o in outcomes() {
        for w in &o.workloads {
            assert_eq!(w.directory_fallbacks, 0, "{:?} {}", o.kind, w.workload);
            assert_eq!(w.strategies.len(), 4);
            assert_eq!(w.strategies[2].strategy, PAGE_DIRECTORY);
            assert_eq!(w.strategies[3].strategy.name(), "hybrid");
        }
    }
}

/// 8-byte offset index: every lookup with an answer (target at or above the first key)
/// reads EXACTLY ONE index page (the search's reads plus the answer entry), whatever the
/// workload; a target below the first key is answered from the in-memory fences with no
/// page read at all.
#[test]
fn page_directory_reads_exactly_one_page_per_offset_lookup() {
    let o = &outcomes()[0];
    assert_eq!(o.kind, IndexKind::Offset);
    for w in &o.workloads {
        let pd = w.get(PAGE_DIRECTORY).unwrap();
        let answered = pd.lookups - w.below_first_key_lookups;
        assert_eq!(pd.pages_histogram[1], answered, "{}", w.workload);
        assert_eq!(
            pd.pages_histogram[0], w.below_first_key_lookups,
            "{}",
            w.workload
        );
        assert_eq!(pd.pages_total, answered, "{}", w.workload);
        assert_eq!(pd.max_pages, 1, "{}", w.workload);
        // 8 divides 4096: no entry straddles a page.
        assert_eq!(w.straddling_answers, 0);
    }
    // Only the first rounds (a few dozen entries) can have targets below the first key.
    let hot = o.workload(Workload::HotTail).unwrap();
    assert!(
        hot.below_first_key_lookups < 50,
        "{}",
        hot.below_first_key_lookups
    );
    let uniform = o.workload(Workload::Uniform).unwrap();
    assert_eq!(uniform.below_first_key_lookups, 0);
    assert_eq!(
        uniform.get(PAGE_DIRECTORY).unwrap().pages_histogram[1],
        LOOKUPS as u64
    );
}

/// 12-byte time index: 4096 = 341 * 12 + 4, so at two of every three page boundaries an
/// entry straddles two pages. The page-directory search itself reads only slots wholly
/// inside the answer's page, and a straddling entry is always the fence slot of the later
/// page, whose whole entry the directory keeps in memory: when the answer IS the
/// straddling entry, it comes from there. So every lookup with an answer reads exactly one
/// page, straddling answers included (issue 10, goal 6). Binary and warm/cold read the
/// straddling answer from the mapping (two pages).
#[test]
fn page_directory_reads_exactly_one_page_per_time_lookup_straddling_answers_included() {
    let o = &outcomes()[1];
    assert_eq!(o.kind, IndexKind::Time);
    for w in &o.workloads {
        let pd = w.get(PAGE_DIRECTORY).unwrap();
        let answered = pd.lookups - w.below_first_key_lookups;
        assert_eq!(
            pd.pages_histogram[0], w.below_first_key_lookups,
            "{}",
            w.workload
        );
        assert_eq!(pd.pages_histogram[1], answered, "{}", w.workload);
        assert!(pd.max_pages <= 1, "{}: {}", w.workload, pd.max_pages);
        assert_eq!(pd.pages_total, answered, "{}", w.workload);
    }
    // Uniform targets hit a straddling answer about once per 512 entries (2 of every
    // 1024 slots): some, but few; binary search reads both pages of each.
    let u = o.workload(Workload::Uniform).unwrap();
    assert!(
        u.straddling_answers > 0 && u.straddling_answers < LOOKUPS as u64 / 100,
        "{}",
        u.straddling_answers
    );
    assert!(u.get(BINARY).unwrap().max_pages >= 2);
}

/// The page directory's single page per lookup also means far fewer simulated faults on
/// the workloads warm/cold cannot help (uniform, lagging).
#[test]
fn page_directory_faults_less_than_kafkas_searches_off_the_tail() {
    for o in outcomes() {
        for wl in [Workload::Lagging, Workload::Uniform] {
            let w = o.workload(wl).unwrap();
            let pd = w.get(PAGE_DIRECTORY).unwrap();
            for other in [BINARY, warm_cold()] {
                let s = w.get(other).unwrap();
                assert!(
                    pd.lru_faults * 3 < s.lru_faults.max(1),
                    "{:?} {}: page-directory {} vs {:?} {}",
                    o.kind,
                    w.workload,
                    pd.lru_faults,
                    other,
                    s.lru_faults
                );
            }
        }
    }
}
