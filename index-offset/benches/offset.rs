//! Criterion benchmarks of the offset index (`cargo bench -p index-offset`).
//!
//! * `offset-lookup-{hot-tail,uniform}/<strategy>/<size>`: [`OffsetIndex::lookup`] (the
//!   whole API call: snapshot, search, decode) per search strategy, on a full index of
//!   4 KiB, 64 KiB, 1 MiB and 10 MiB, side by side with `partition_point`: the same keys
//!   in an in-memory `Vec<i64>` (native-endian, no mapping, no snapshot), the physical
//!   limit of a binary search. *Hot-tail* targets are uniform over the keys of the last
//!   8192 bytes of entries (consumers and followers near the end of the log); *uniform*
//!   targets over all keys.
//! * `offset-search-hot-tail/<strategy>/<size>`: the search alone
//!   ([`Snapshot::search_with`](index_offset::Snapshot::search_with) on a snapshot taken
//!   once), to separate the algorithm from the per-lookup snapshot cost.
//! * `offset-append/<what>`: entries appended per second. `offset-index` is
//!   [`OffsetIndex::append`] (Kafka's checks, then the write, one writer lock per
//!   call); `appender` makes the same calls through one `appender()` per run (the lock
//!   taken once); `raw-index-file` is
//!   `IndexFile::<RawOffsetEntry>::append` of pre-encoded entries (writer lock and
//!   publication, no Kafka checks); `plain-mmap-copy` copies the same 8 bytes into the
//!   same kind of mapping (`index_core::sys::Mapping::write`: a bounds check and a
//!   `memcpy`, no lock, no publication) and is the baseline of the append goal;
//!   `vec-copy` (`copy_from_slice` into a `Vec<u8>`) is a lower bound;
//!   `offset-index-warm-cold` is `offset-index` on an index with Kafka's warm/cold
//!   strategy, which keeps no page directory (the default's directory costs each
//!   append its fence and block-key stores).
//! * `offset-readers/<strategy>/{idle,appending}`: hot-tail lookups per second on a 1 MiB
//!   index, alone and with a concurrent appender thread.
//!
//! After the benchmarks a **ratios** section measures the goals' ratios again with the
//! competitors interleaved (robust to load changes on a shared machine, see the
//! `bench-support` crate), prints them and writes `<criterion dir>/ratios/offset.json`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use index_core::codec::IndexEntry;
use index_core::sys::Mapping;
use index_offset::{
    Bound, IndexFile, NoProbe, OffsetIndex, OpenMode, RawOffsetEntry, SearchField, SearchStrategy,
};

use bench_support as ratios;

const KIND: &str = "offset";
const SIZES: [(&str, usize); 4] = [
    ("4KiB", 4 << 10),
    ("64KiB", 64 << 10),
    ("1MiB", 1 << 20),
    ("10MiB", 10 << 20),
];
const STRATEGIES: [SearchStrategy; 4] = [
    SearchStrategy::Binary,
    SearchStrategy::WARM_COLD,
    SearchStrategy::PAGE_DIRECTORY,
    SearchStrategy::HYBRID,
];
/// Targets per benchmark (a power of two), cycled through.
const TARGETS: usize = 1024;

/// Key (absolute offset) of entry `i`.
fn key(i: usize) -> i64 {
    3 * i as i64
}
/// Value (position) of entry `i`.
fn position(i: usize) -> u32 {
    (i as u32).wrapping_mul(4000)
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(800))
        .configure_from_args()
}

/// A full index of `bytes` bytes in a temporary directory, opened once per strategy, and
/// the same keys and values in memory.
struct Fixture {
    _dir: tempfile::TempDir,
    indexes: Vec<OffsetIndex>,
    keys: Vec<i64>,
    values: Vec<i64>,
}

fn fixture(bytes: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.index");
    let writer = OffsetIndex::open(&path, 0, bytes).unwrap();
    let n = writer.max_entries();
    for i in 0..n {
        writer.append(key(i), position(i)).unwrap();
    }
    writer.close().unwrap();
    let indexes = STRATEGIES
        .iter()
        .map(|&s| {
            let index = OffsetIndex::open(&path, 0, bytes)
                .unwrap()
                .with_search_strategy(s);
            assert_eq!(index.entries(), n);
            index
        })
        .collect();
    Fixture {
        _dir: dir,
        indexes,
        keys: (0..n).map(key).collect(),
        values: (0..n).map(|i| position(i) as i64).collect(),
    }
}

/// `TARGETS` pseudo-random targets over the keys of slots `[first, n)` (plus up to one
/// key gap beyond the last).
fn targets(keys: &[i64], hot_tail: bool) -> Vec<i64> {
    let n = keys.len();
    let first = if hot_tail {
        n.saturating_sub(8192 / RawOffsetEntry::SIZE)
    } else {
        0
    };
    let (lo, hi) = (keys[first], keys[n - 1] + 3);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..TARGETS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (x % (hi - lo) as u64) as i64
        })
        .collect()
}

/// The physical limit: the answer of a largest-lower-bound lookup over keys in memory.
#[inline]
fn partition_point(keys: &[i64], values: &[i64], target: i64) -> (i64, i64) {
    match keys.partition_point(|&k| k <= target).checked_sub(1) {
        Some(i) => (keys[i], values[i]),
        None => (0, 0),
    }
}

fn lookups(c: &mut Criterion) {
    for (dist, hot) in [("hot-tail", true), ("uniform", false)] {
        let mut group = c.benchmark_group(format!("{KIND}-lookup-{dist}"));
        for (size, bytes) in SIZES {
            let f = fixture(bytes);
            let t = targets(&f.keys, hot);
            // Every strategy answers like the in-memory search.
            for index in &f.indexes {
                for &target in &t {
                    let got = index.lookup(target).unwrap();
                    let want = partition_point(&f.keys, &f.values, target);
                    assert_eq!((got.offset, got.position as i64), want);
                }
            }
            group.bench_function(BenchmarkId::new("partition_point", size), |b| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) & (TARGETS - 1);
                    partition_point(&f.keys, &f.values, black_box(t[i]))
                })
            });
            for index in &f.indexes {
                let name = index.index_file().search_strategy().name();
                group.bench_function(BenchmarkId::new(name, size), |b| {
                    let mut i = 0;
                    b.iter(|| {
                        i = (i + 1) & (TARGETS - 1);
                        index.lookup(black_box(t[i])).unwrap()
                    })
                });
            }
        }
        group.finish();
    }
}

fn searches(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{KIND}-search-hot-tail"));
    for (size, bytes) in SIZES {
        let f = fixture(bytes);
        let t = targets(&f.keys, true);
        for index in &f.indexes {
            let strategy = index.index_file().search_strategy();
            let snap = index.snapshot().unwrap();
            group.bench_function(BenchmarkId::new(strategy.name(), size), |b| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) & (TARGETS - 1);
                    snap.search_with(
                        strategy,
                        black_box(t[i]),
                        SearchField::Key,
                        Bound::LargestLowerBound,
                        &mut NoProbe,
                    )
                })
            });
        }
    }
    group.finish();
}

/// Index size used by the append benchmarks (1 MiB: 131072 entries); when it is full it
/// is truncated, untimed, and appending starts over.
const APPEND_BYTES: usize = 1 << 20;

/// Times `iters` appends made by `run` over ranges `0..k` of at most `cap` entries, on
/// the state `a`, calling `reset` (untimed) after each range.
fn time_runs<A>(
    iters: u64,
    cap: usize,
    a: &mut A,
    mut run: impl FnMut(&mut A, std::ops::Range<usize>),
    mut reset: impl FnMut(&mut A),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters as usize;
    while left > 0 {
        let chunk = left.min(cap);
        let start = Instant::now();
        run(a, 0..chunk);
        total += start.elapsed();
        reset(a);
        left -= chunk;
    }
    total
}

/// An append arm's timed run over a range of entries, and its untimed reset.
type Run = fn(&mut Appenders, std::ops::Range<usize>);
type Reset = fn(&mut Appenders);

/// The five appenders of the append benchmarks, each over its own 1 MiB target.
struct Appenders {
    _dir: tempfile::TempDir,
    cap: usize,
    encoded: Vec<RawOffsetEntry>,
    index: OffsetIndex,
    /// Appended through one `appender()` per run of entries.
    batched: OffsetIndex,
    /// `OffsetIndex::append` on an index with Kafka's warm/cold strategy: no page
    /// directory to maintain (the default before the hybrid).
    warm_cold: OffsetIndex,
    raw: IndexFile<RawOffsetEntry>,
    mapping: Mapping,
    vec: Vec<u8>,
}

impl Appenders {
    /// The append arms, in the order the criterion group and the ratios run them:
    /// Kafka's append one call at a time, the same calls through one appender per run,
    /// `IndexFile::append`, the plain copy into a mapping (the goal's baseline) and the
    /// `Vec` copy.
    fn arms() -> [(String, Run, Reset); 6] {
        [
            (
                format!("{KIND}-index"),
                |a, r| r.for_each(|i| a.index(i)),
                |a| a.reset_index(),
            ),
            (
                "appender".into(),
                |a, r| a.batched(r),
                |a| a.reset_batched(),
            ),
            (
                "raw-index-file".into(),
                |a, r| r.for_each(|i| a.raw(i)),
                |a| a.reset_raw(),
            ),
            (
                "plain-mmap-copy".into(),
                |a, r| r.for_each(|i| a.mmap_copy(i)),
                |_| {},
            ),
            (
                "vec-copy".into(),
                |a, r| r.for_each(|i| a.vec_copy(i)),
                |_| {},
            ),
            (
                format!("{KIND}-index-warm-cold"),
                |a, r| r.for_each(|i| a.warm_cold(i)),
                |a| a.reset_warm_cold(),
            ),
        ]
    }

    fn new() -> Self {
        let cap = APPEND_BYTES / RawOffsetEntry::SIZE;
        let dir = tempfile::tempdir().unwrap();
        let index = OffsetIndex::open(dir.path().join("1.index"), 0, APPEND_BYTES).unwrap();
        let batched = OffsetIndex::open(dir.path().join("4.index"), 0, APPEND_BYTES).unwrap();
        let warm_cold = OffsetIndex::open(dir.path().join("5.index"), 0, APPEND_BYTES)
            .unwrap()
            .with_search_strategy(SearchStrategy::WARM_COLD);
        let raw = IndexFile::<RawOffsetEntry>::open(
            dir.path().join("2.index"),
            0,
            Some(APPEND_BYTES),
            OpenMode::ReadWrite,
        )
        .unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("3.index"))
            .unwrap();
        file.set_len(APPEND_BYTES as u64).unwrap();
        let mapping = Mapping::map(&file, APPEND_BYTES, true).unwrap();
        Appenders {
            _dir: dir,
            cap,
            encoded: (0..cap)
                .map(|i| RawOffsetEntry::new(key(i) as i32, position(i)))
                .collect(),
            index,
            batched,
            warm_cold,
            raw,
            mapping,
            vec: vec![0u8; APPEND_BYTES],
        }
    }
    /// Kafka's append (checks, then write and publish) of entry `i`.
    fn index(&self, i: usize) {
        self.index.append(key(i), position(i)).unwrap()
    }
    fn reset_index(&self) {
        self.index.truncate().unwrap()
    }
    /// Kafka's append of entries `range` through one appender (the writer lock taken
    /// once for the run).
    fn batched(&mut self, range: std::ops::Range<usize>) {
        let mut w = self.batched.appender().unwrap();
        for i in range {
            w.append(key(i), position(i)).unwrap();
        }
    }
    fn reset_batched(&self) {
        self.batched.truncate().unwrap()
    }
    /// [`Appenders::index`] without a page directory.
    fn warm_cold(&self, i: usize) {
        self.warm_cold.append(key(i), position(i)).unwrap()
    }
    fn reset_warm_cold(&self) {
        self.warm_cold.truncate().unwrap()
    }
    /// `IndexFile::append` of pre-encoded entry `i` (no Kafka checks).
    fn raw(&self, i: usize) {
        self.raw.append(&self.encoded[i]).unwrap()
    }
    fn reset_raw(&self) {
        self.raw.truncate_to_entries(0).unwrap()
    }
    /// The same bytes copied into the same kind of mapping (bounds check and memcpy).
    fn mmap_copy(&self, i: usize) {
        let bytes = bytemuck::bytes_of(&self.encoded[i]);
        assert!(self
            .mapping
            .write(i * RawOffsetEntry::SIZE, black_box(bytes)));
    }
    /// The same bytes copied into a `Vec<u8>` (lower bound).
    fn vec_copy(&mut self, i: usize) {
        let at = i * RawOffsetEntry::SIZE;
        self.vec[at..at + RawOffsetEntry::SIZE]
            .copy_from_slice(black_box(bytemuck::bytes_of(&self.encoded[i])));
    }
}

fn appends(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{KIND}-append"));
    group.throughput(Throughput::Elements(1));
    let mut a = Appenders::new();
    let cap = a.cap;
    for (name, run, reset) in Appenders::arms() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| time_runs(iters, cap, &mut a, run, reset))
        });
    }
    black_box(&a.vec);
    group.finish();
}

/// The interleaved ratios (see the `bench-support` crate).
fn ratio_section() {
    let mut report = ratios::Report::default();
    let ops = 16 * TARGETS;
    let mask = TARGETS - 1;
    for (size, bytes) in SIZES {
        let f = fixture(bytes);
        let snaps: Vec<_> = f.indexes.iter().map(|i| i.snapshot().unwrap()).collect();
        for (dist, hot) in [("hot-tail", true), ("uniform", false)] {
            let t = targets(&f.keys, hot);
            let t = &t;
            let (keys, values) = (&f.keys, &f.values);
            let mut racers: Vec<ratios::Competitor> = vec![Box::new(move |ops| {
                for j in 0..ops {
                    black_box(partition_point(keys, values, black_box(t[j & mask])));
                }
            })];
            for index in &f.indexes {
                racers.push(Box::new(move |ops| {
                    for j in 0..ops {
                        black_box(index.lookup(black_box(t[j & mask])).unwrap());
                    }
                }));
            }
            if hot {
                for (index, snap) in f.indexes.iter().zip(&snaps) {
                    let strategy = index.index_file().search_strategy();
                    racers.push(Box::new(move |ops| {
                        for j in 0..ops {
                            black_box(snap.search_with(
                                strategy,
                                black_box(t[j & mask]),
                                SearchField::Key,
                                Bound::LargestLowerBound,
                                &mut NoProbe,
                            ));
                        }
                    }));
                }
            }
            let times = ratios::race(&mut racers, ops);
            drop(racers);
            let names: Vec<&str> = f
                .indexes
                .iter()
                .map(|i| i.index_file().search_strategy().name())
                .collect();
            for (k, name) in names.iter().enumerate() {
                let goal = match (hot, *name) {
                    (true, "warm-cold") => Some(1.5),
                    (true, "page-directory") => Some(1.2),
                    _ => None,
                };
                report.add(
                    format!("{KIND} lookup {dist} {size}: {name} / partition_point"),
                    times[1 + k],
                    times[0],
                    goal,
                );
            }
            if hot {
                for (k, name) in names.iter().enumerate() {
                    report.add(
                        format!("{KIND} search-only {dist} {size}: {name} / partition_point"),
                        times[1 + names.len() + k],
                        times[0],
                        None,
                    );
                }
            }
        }
    }

    let a = std::cell::RefCell::new(Appenders::new());
    let cap = a.borrow().cap;
    // Each racer appends `ops` entries per round from its own cursor, starting over
    // (after an O(1) truncation) when the next round would not fit.
    let racer = |run: Run, reset: Reset| {
        let a = &a;
        let mut next = 0usize;
        Box::new(move |ops: usize| {
            let mut a = a.borrow_mut();
            if next + ops > cap {
                reset(&mut a);
                next = 0;
            }
            run(&mut a, next..next + ops);
            next += ops;
        }) as ratios::Competitor
    };
    let arms = Appenders::arms();
    let mut racers: Vec<_> = arms
        .iter()
        .map(|&(_, run, reset)| racer(run, reset))
        .collect();
    let times = ratios::race(&mut racers, 8 * TARGETS);
    drop(racers);
    // (numerator, denominator, goal) as indexes into `arms`.
    let (index, appender, raw, mmap, vec, warm_cold) = (0, 1, 2, 3, 4, 5);
    for (num, den, goal) in [
        (index, warm_cold, None),
        (warm_cold, mmap, None),
        (index, raw, None),
        (index, mmap, Some(2.0)),
        (index, vec, None),
        (raw, mmap, None),
        (appender, mmap, Some(2.0)),
    ] {
        report.add(
            format!("{KIND} append: {} / {}", arms[num].0, arms[den].0),
            times[num],
            times[den],
            goal,
        );
    }
    report.finish(KIND);
}

fn readers(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{KIND}-readers"));
    group.throughput(Throughput::Elements(1));
    let bytes = 1 << 20;
    for strategy in [SearchStrategy::default(), SearchStrategy::PAGE_DIRECTORY] {
        let dir = tempfile::tempdir().unwrap();
        let index = Arc::new(
            OffsetIndex::open(dir.path().join("0.index"), 0, bytes)
                .unwrap()
                .with_search_strategy(strategy),
        );
        let half = index.max_entries() / 2;
        for i in 0..half {
            index.append(key(i), position(i)).unwrap();
        }
        let keys: Vec<i64> = (0..half).map(key).collect();
        let t = targets(&keys, true);
        let lookup = |b: &mut criterion::Bencher| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) & (TARGETS - 1);
                index.lookup(black_box(t[i])).unwrap()
            })
        };
        group.bench_function(BenchmarkId::new(strategy.name(), "idle"), lookup);
        // An appender that keeps writing past the readers' keys, truncating back to
        // half when full.
        let stop = Arc::new(AtomicBool::new(false));
        let appender = {
            let (index, stop) = (index.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut appended = 0u64;
                let mut i = half;
                while !stop.load(Ordering::Relaxed) {
                    if index.is_full() {
                        index.truncate_to(key(half)).unwrap();
                        i = half;
                    }
                    index.append(key(i), position(i)).unwrap();
                    i += 1;
                    appended += 1;
                }
                appended
            })
        };
        group.bench_function(BenchmarkId::new(strategy.name(), "appending"), lookup);
        stop.store(true, Ordering::Relaxed);
        let appended = appender.join().unwrap();
        assert!(appended > 0);
    }
    group.finish();
}

/// `RATIOS_ONLY=1` skips the criterion benchmarks and runs only the ratios section;
/// `NO_RATIOS=1` skips the ratios section.
fn main() {
    if std::env::var_os("RATIOS_ONLY").is_none() {
        let mut c = config();
        lookups(&mut c);
        searches(&mut c);
        appends(&mut c);
        readers(&mut c);
        c.final_summary();
    }
    if std::env::var_os("NO_RATIOS").is_none() {
        ratio_section();
    }
}
