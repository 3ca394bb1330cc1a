//! The remote index cache's hit path against a local mapped lookup
//! (`cargo bench -p segment --bench remote_cache`; `docs/kafka-behaviour.md#remote-index-cache`).
//!
//! Three competitors answer the same offset lookups on the same 1 MiB offset index
//! (131 072 entries), interleaved slice by slice (`bench_support::race_rounds_sliced`):
//!
//! * `cache-lookup`: `RemoteIndexCache::lookup_offset` of one of 16 cached segments (all
//!   sharing the index's bytes), Kafka's `RemoteIndexCache.lookupOffset` on a hit: what a
//!   remote fetch pays for its start position once the indexes are cached;
//! * `cache-get`: `RemoteIndexCache::get` (an `Arc` of the entry, cloned and dropped)
//!   then `OffsetIndexView::lookup` on it;
//! * `view`: `OffsetIndexView::lookup` alone (no cache);
//! * `mmap`: `OffsetIndex::lookup` on the mapped `.index` file (the local read path).
//!
//! Targets are uniform over the index's keys (`uniform`) or over its last 8 KiB of
//! entries (`hot-tail`). The goal: `cache-lookup` within 1.2x of `mmap`. The ratios are
//! printed and written to `<criterion dir>/ratios/remote_cache.json`.

use std::hint::black_box;
use std::sync::Arc;

use bench_support as ratios;
use index_offset::OffsetIndex;
use segment::tier::{RemoteIndexCache, RemoteIndexes};

const ENTRIES: usize = 131_072;
const KEYS: u64 = 16;

fn targets(hot_tail: bool) -> Vec<i64> {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let first = if hot_tail { ENTRIES - 1024 } else { 0 };
    (0..65_536)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let slot = first + (rng as usize) % (ENTRIES - first);
            3 * slot as i64 + (rng >> 40) as i64 % 3
        })
        .collect()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.index");
    let index = OffsetIndex::open(&path, 0, ENTRIES * 8).unwrap();
    for i in 0..ENTRIES {
        index
            .append(3 * i as i64, (i as u32).wrapping_mul(4000))
            .unwrap();
    }
    index.flush().unwrap();
    let bytes: Arc<[u8]> = Arc::from(std::fs::read(&path).unwrap());
    let indexes = RemoteIndexes::from_bytes(0, Arc::clone(&bytes), Vec::new(), None).unwrap();
    let view = indexes.offset_index.clone();
    let cache = RemoteIndexCache::<u64>::new(64 << 20);
    for k in 0..KEYS {
        cache.get_or_load(&k, || Ok(indexes.clone())).unwrap();
    }
    // Same answers first.
    for &t in &targets(false)[..4096] {
        let hit = cache
            .get(&(t as u64 % KEYS))
            .unwrap()
            .offset_index
            .lookup(t);
        assert_eq!(hit, index.lookup(t).unwrap());
        assert_eq!(hit, view.lookup(t));
    }
    let mut report = ratios::Report::default();
    for (name, hot) in [("uniform", false), ("hot-tail", true)] {
        let ts = targets(hot);
        let (mut a, mut b, mut c, mut d) = (0usize, 0usize, 0usize, 0usize);
        let mut racers: Vec<ratios::Competitor> = vec![
            Box::new(|n| {
                for _ in 0..n {
                    let t = ts[a % ts.len()];
                    a += 1;
                    let e = cache.get(&(a as u64 % KEYS)).unwrap();
                    black_box(e.offset_index.lookup(black_box(t)));
                }
            }),
            Box::new(|n| {
                for _ in 0..n {
                    let t = ts[d % ts.len()];
                    d += 1;
                    black_box(
                        cache
                            .lookup_offset(&(d as u64 % KEYS), black_box(t))
                            .unwrap(),
                    );
                }
            }),
            Box::new(|n| {
                for _ in 0..n {
                    let t = ts[b % ts.len()];
                    b += 1;
                    black_box(view.lookup(black_box(t)));
                }
            }),
            Box::new(|n| {
                for _ in 0..n {
                    let t = ts[c % ts.len()];
                    c += 1;
                    black_box(index.lookup(black_box(t)).unwrap());
                }
            }),
        ];
        let per_round = ratios::race_rounds_sliced(&mut racers, 200_000, 10_000, ratios::rounds());
        let get = ratios::median_ratio(&per_round, 0, 3);
        let hit = ratios::median_ratio(&per_round, 1, 3);
        let plain = ratios::median_ratio(&per_round, 2, 3);
        println!(
            "{name}: cache lookup_offset / mmap median {:.2}x (q1 {:.2}, q3 {:.2}); \
             cache get + lookup / mmap {:.2}x; view / mmap {:.2}x",
            hit.median, hit.q1, hit.q3, get.median, plain.median
        );
        report.add(
            format!("remote-cache-lookup-offset/{name} vs mmap lookup"),
            hit.numerator_ns,
            hit.denominator_ns,
            Some(1.2),
        );
        report.add(
            format!("remote-cache-get-then-lookup/{name} vs mmap lookup"),
            get.numerator_ns,
            get.denominator_ns,
            None,
        );
        report.add(
            format!("remote-view-lookup/{name} vs mmap lookup"),
            plain.numerator_ns,
            plain.denominator_ns,
            None,
        );
    }
    report.finish("remote_cache");
}
