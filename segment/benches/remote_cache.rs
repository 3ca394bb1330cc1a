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
//! entries (`hot-tail`). The goal: `cache-lookup` within 1.2x of `mmap`.
//!
//! Then a whole fetch of the same batch both ways, on a log of 8 segments of 1 MiB
//! (batches of 10 records, about 1.2 KiB each), interleaved the same way:
//!
//! * `remote-fetch`: the remote segment holding the offset found among the uploaded ones
//!   (their `.log` bytes in memory, as fetched from remote storage), its indexes from the
//!   cache (a hit), then `read_remote_kafka` (Kafka's `RemoteLogManager.read`);
//! * `local-fetch`: `Log::read` of the same offset and `max_bytes` on the local log.
//!
//! Both answer the same bytes (checked first). The ratios are printed and written to
//! `<criterion dir>/ratios/remote_cache.json`.

use std::hint::black_box;
use std::sync::Arc;

use bench_support as ratios;
use index_offset::OffsetIndex;
use segment::record::BatchBuilder;
use segment::tier::{read_remote_kafka, RemoteIndexCache, RemoteIndexes, RemoteSegment};
use segment::{Log, LogConfig, SegmentUpload};

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
    fetch_race(&mut report);
    report.finish("remote_cache");
}

fn bytes_of(f: &std::fs::File) -> Arc<[u8]> {
    use std::io::Read;
    let mut v = Vec::new();
    (&*f).read_to_end(&mut v).unwrap();
    Arc::from(v)
}

/// One uploaded segment: its range, its `.log` bytes and its indexes' bytes.
struct Uploaded {
    base: i64,
    end: i64,
    log: Arc<[u8]>,
    indexes: RemoteIndexes,
}

fn uploaded(u: &SegmentUpload) -> Uploaded {
    Uploaded {
        base: u.base_offset,
        end: u.end_offset,
        log: Arc::from(u.log.to_vec().unwrap()),
        indexes: RemoteIndexes::from_bytes(
            u.base_offset,
            bytes_of(&u.offset_index),
            bytes_of(&u.time_index),
            u.txn_index.as_ref().map(bytes_of),
        )
        .unwrap(),
    }
}

/// A remote fetch through the cache against a local fetch of the same batch.
fn fetch_race(report: &mut ratios::Report) {
    const MAX_BYTES: u64 = 4096;
    let dir = tempfile::tempdir().unwrap();
    let cfg = LogConfig {
        segment_bytes: 1 << 20,
        remote_storage_enable: true,
        retention_ms: -1,
        ..LogConfig::default()
    };
    let log = Log::open(dir.path().join("bench-0"), cfg).unwrap();
    let value = [7u8; 100];
    let mut o = 0i64;
    while log.segments().number_of_segments() < 9 {
        let mut b = BatchBuilder::new(o);
        for i in 0..10 {
            b = b.record(1_700_000_000_000 + o + i, None, Some(&value[..]));
        }
        log.append(&b.build().unwrap()).unwrap();
        o += 10;
    }
    let ups: Vec<Uploaded> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(uploaded)
        .collect();
    let end = ups.last().unwrap().end;
    let cache = RemoteIndexCache::<i64>::new(64 << 20);
    for u in &ups {
        cache
            .get_or_load(&u.base, || Ok(u.indexes.clone()))
            .unwrap();
    }
    let bases: Vec<i64> = ups.iter().map(|u| u.base).collect();
    let remote_fetch = |t: i64| {
        let i = bases.partition_point(|&b| b <= t) - 1;
        let u = &ups[i];
        let idx = cache.get(&u.base).unwrap();
        let seg = RemoteSegment::new(u.base, u.end, Arc::clone(&u.log), idx).unwrap();
        read_remote_kafka(std::slice::from_ref(&seg), t, MAX_BYTES, true, false)
            .unwrap()
            .records
    };
    let local_fetch = |t: i64| log.read(t, MAX_BYTES).unwrap().records;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let ts: Vec<i64> = (0..16_384)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % (end as u64 + 1)) as i64
        })
        .collect();
    // Same answers first.
    for &t in &ts[..2048] {
        assert_eq!(remote_fetch(t), local_fetch(t), "fetch of {t}");
    }
    let (mut a, mut b) = (0usize, 0usize);
    let mut racers: Vec<ratios::Competitor> = vec![
        Box::new(|n| {
            for _ in 0..n {
                let t = ts[a % ts.len()];
                a += 1;
                black_box(remote_fetch(black_box(t)));
            }
        }),
        Box::new(|n| {
            for _ in 0..n {
                let t = ts[b % ts.len()];
                b += 1;
                black_box(local_fetch(black_box(t)));
            }
        }),
    ];
    let per_round = ratios::race_rounds_sliced(&mut racers, 20_000, 1_000, ratios::rounds());
    let r = ratios::median_ratio(&per_round, 0, 1);
    println!(
        "fetch of {MAX_BYTES} bytes: remote through the cache / local median {:.2}x (q1 {:.2}, q3 {:.2}); {:.0} ns against {:.0} ns",
        r.median, r.q1, r.q3, r.numerator_ns, r.denominator_ns
    );
    report.add(
        "remote-fetch-through-cache vs local fetch".to_string(),
        r.numerator_ns,
        r.denominator_ns,
        None,
    );
}
