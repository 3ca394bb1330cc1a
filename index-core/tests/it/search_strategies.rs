//! Every search strategy returns the same slot as a sorted-Vec model, for both bounds
//! (with Kafka's slot-0 quirk for the smallest upper bound), by key and by value, on
//! arbitrary strictly increasing data; and warm/cold tail lookups stay within the warm
//! section's pages.

use index_core::codec::{I64Be, IndexEntry};
use index_core::search::search;
use index_core::{Bound, IndexFile, NoProbe, OpenMode, PageProbe, SearchField, SearchStrategy};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Kv {
    k: I64Be,
    v: I64Be,
}
impl IndexEntry for Kv {
    const SIZE: usize = 16;
    const KIND: &'static str = "kv index";
    fn key(&self, _base: i64) -> i64 {
        self.k.get()
    }
    fn value(&self, _base: i64) -> i64 {
        self.v.get()
    }
}

const STRATEGIES: [SearchStrategy; 11] = [
    SearchStrategy::Binary,
    SearchStrategy::HYBRID,
    SearchStrategy::Hybrid {
        warm_section_bytes: 48,
        page_size: 64,
    },
    SearchStrategy::Hybrid {
        warm_section_bytes: 0,
        page_size: 4096,
    },
    SearchStrategy::Hybrid {
        warm_section_bytes: 8192,
        page_size: 16,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 8192,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 0,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 16,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 48,
    },
    SearchStrategy::PageDirectory { page_size: 4096 },
    SearchStrategy::PageDirectory { page_size: 64 },
];

fn model_llb(f: &[i64], t: i64) -> Option<usize> {
    f.partition_point(|&x| x <= t).checked_sub(1)
}

fn model_sub(f: &[i64], t: i64) -> Option<usize> {
    let first = *f.first()?;
    let slot = if first == t {
        1
    } else {
        f.partition_point(|&x| x < t)
    };
    (slot < f.len()).then_some(slot)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn all_strategies_match_the_model(
        start in any::<i32>(),
        gaps in proptest::collection::vec((1i64..50, 1i64..50), 0..1200),
        raw in proptest::collection::vec(any::<u32>(), 24),
    ) {
        let mut k = start as i64;
        let mut v = -(start as i64);
        let slots: Vec<Kv> = gaps
            .iter()
            .map(|&(dk, dv)| {
                k += dk;
                v += dv;
                Kv { k: I64Be::new(k), v: I64Be::new(v) }
            })
            .collect();
        let keys: Vec<i64> = slots.iter().map(|e| e.k.get()).collect();
        let values: Vec<i64> = slots.iter().map(|e| e.v.get()).collect();
        // Page-directory searches need the index's directory: go through an IndexFile.
        let dir = crate::common::tmp();
        let path = dir.path().join("0.kv");
        std::fs::write(&path, bytemuck::cast_slice::<Kv, u8>(&slots)).unwrap();
        for strategy in STRATEGIES {
            let index = IndexFile::<Kv>::open(&path, 0, None, OpenMode::ReadOnly)
                .unwrap()
                .with_search_strategy(strategy);
            let snap = index.snapshot().unwrap();
            for (field, f) in [(SearchField::Key, &keys), (SearchField::Value, &values)] {
                let (lo, hi) = (f.first().copied().unwrap_or(0) - 3, f.last().copied().unwrap_or(0) + 3);
                let mut targets: Vec<i64> = raw.iter().map(|&r| lo + (r as i64 % (hi - lo + 1))).collect();
                targets.extend(f.iter().step_by((f.len() / 16).max(1)).copied());
                targets.extend([i64::MIN, i64::MAX]);
                for t in targets {
                    let llb = snap.search(t, field, Bound::LargestLowerBound, &mut NoProbe);
                    let sub = snap.search(t, field, Bound::SmallestUpperBound, &mut NoProbe);
                    prop_assert_eq!(llb, model_llb(f, t), "{:?} {:?} llb {}", strategy, field, t);
                    prop_assert_eq!(sub, model_sub(f, t), "{:?} {:?} sub {}", strategy, field, t);
                    // The free function agrees (it runs warm/cold for PageDirectory and
                    // Hybrid).
                    prop_assert_eq!(
                        search(&slots, 0, t, field, Bound::LargestLowerBound, strategy, &mut NoProbe),
                        llb
                    );
                }
            }
        }
    }
}

/// Kafka's warm/cold: any lookup at or above the first warm entry touches at most the
/// warm section's pages (8192 bytes: 3 pages at most, 4 if unaligned by a slot).
#[test]
fn warm_cold_tail_lookups_stay_in_warm_pages() {
    let n = 20_000usize;
    let slots: Vec<Kv> = (0..n as i64)
        .map(|i| Kv {
            k: I64Be::new(2 * i),
            v: I64Be::new(i),
        })
        .collect();
    let s = SearchStrategy::WARM_COLD;
    let first_warm = s.first_warm_slot(n, 16).unwrap();
    assert_eq!(first_warm, n - 1 - 512);
    for t in (2 * first_warm as i64 + 1..2 * n as i64 + 10).step_by(3) {
        let mut probe = PageProbe::new(4096);
        let slot = search(
            &slots,
            0,
            t,
            SearchField::Key,
            Bound::LargestLowerBound,
            s,
            &mut probe,
        );
        assert_eq!(slot, Some(((t / 2) as usize).min(n - 1)));
        assert!(
            probe.distinct_pages() <= 3,
            "target {t}: {:?}",
            probe.pages()
        );
        assert!(probe.pages().iter().all(|&p| p >= first_warm * 16 / 4096));
    }
    // Binary search from the middle touches pages far from the tail.
    let mut probe = PageProbe::new(4096);
    search(
        &slots,
        0,
        2 * n as i64 - 2,
        SearchField::Key,
        Bound::LargestLowerBound,
        SearchStrategy::Binary,
        &mut probe,
    );
    assert!(
        probe.pages().contains(&0),
        "binary search compares slot 0 first"
    );
    assert!(probe.distinct_pages() > 3);
}
