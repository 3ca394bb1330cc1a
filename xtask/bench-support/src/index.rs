//! The criterion benchmarks of a typed index, shared by `index-offset/benches/offset.rs`
//! and `index-time/benches/time.rs` (feature `index`): each bench implements
//! [`BenchIndex`] for its index and calls [`main`]. The benchmark names, the checks and
//! the ratios are the ones the two benches wrote out separately before; their module docs
//! say what each measures.

use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use index_core::codec::IndexEntry;
use index_core::sys::Mapping;
use index_core::{Bound, NoProbe, OpenMode, SearchField};
pub use index_core::{IndexFile, SearchStrategy, Snapshot};

/// What the shared benchmarks need of a typed index, and the keys and values of its
/// entries.
pub trait BenchIndex: Sized + Send + Sync + 'static {
    /// Its on-disk entry.
    type Entry: IndexEntry;
    /// The benchmark groups' prefix (`offset`, `time`) and the ratios' JSON name.
    const KIND: &'static str;
    /// The index files' suffix (`index`, `timeindex`).
    const SUFFIX: &'static str;
    /// The gap between two consecutive keys (hot-tail targets reach one gap past the last).
    const KEY_GAP: i64;
    /// Whether the append benchmarks add `<KIND>-index-warm-cold`: Kafka's append on an
    /// index with the warm/cold strategy, which keeps no page directory.
    const WARM_COLD_ARM: bool;

    /// Key of entry `i`.
    fn key(i: usize) -> i64;
    /// Value of entry `i`, as [`lookup`](Self::lookup) answers it.
    fn value(i: usize) -> i64;
    /// Entry `i`, encoded (base offset 0).
    fn encode(i: usize) -> Self::Entry;
    /// Opens (creating) the index at `path` with base offset 0 and `bytes` bytes.
    fn open(path: &Path, bytes: usize) -> Self;
    /// The same index with another search strategy.
    fn with_search_strategy(self, s: SearchStrategy) -> Self;
    /// Its file (for the strategy's name).
    fn index_file(&self) -> &IndexFile<Self::Entry>;
    /// A snapshot of its entries.
    fn snapshot(&self) -> Snapshot<Self::Entry>;
    /// Its capacity in entries.
    fn max_entries(&self) -> usize;
    /// Its entries.
    fn entries(&self) -> usize;
    /// Whether it is full.
    fn is_full(&self) -> bool;
    /// Closes it.
    fn close(self);
    /// Kafka's append of entry `i`, checked to have happened.
    fn append(&self, i: usize);
    /// Kafka's append of entries `range` through one appender.
    fn append_batched(&mut self, range: std::ops::Range<usize>);
    /// The readers' appender thread's append of entry `i`.
    fn append_reader(&self, i: usize);
    /// The (key, value) a lookup of `target` answers.
    fn lookup(&self, target: i64) -> (i64, i64);
    /// Empties the index.
    fn truncate(&self);
    /// Truncates to the first `n` entries (the readers' appender, when full).
    fn truncate_to_entries(&self, n: usize);
}

/// The [`BenchIndex`] methods that only pass a call on to the typed index `$index` (of
/// entries `$entry`) that the implementing newtype wraps: `open` … `truncate`.
#[macro_export]
macro_rules! delegate_index {
    ($index:ty, $entry:ty) => {
        fn open(path: &::std::path::Path, bytes: usize) -> Self {
            Self(<$index>::open(path, 0, bytes).unwrap())
        }
        fn with_search_strategy(self, s: $crate::index::SearchStrategy) -> Self {
            Self(self.0.with_search_strategy(s))
        }
        fn index_file(&self) -> &$crate::index::IndexFile<$entry> {
            self.0.index_file()
        }
        fn snapshot(&self) -> $crate::index::Snapshot<$entry> {
            self.0.snapshot().unwrap()
        }
        fn max_entries(&self) -> usize {
            self.0.max_entries()
        }
        fn entries(&self) -> usize {
            self.0.entries()
        }
        fn is_full(&self) -> bool {
            self.0.is_full()
        }
        fn close(self) {
            self.0.close().unwrap()
        }
        fn truncate(&self) {
            self.0.truncate().unwrap()
        }
    };
}

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

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(800))
        .configure_from_args()
}

/// A full index of `bytes` bytes in a temporary directory, opened once per strategy, and
/// the same keys and values in memory.
struct Fixture<I> {
    _dir: tempfile::TempDir,
    indexes: Vec<I>,
    keys: Vec<i64>,
    values: Vec<i64>,
}

fn fixture<I: BenchIndex>(bytes: usize) -> Fixture<I> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(format!("00000000000000000000.{}", I::SUFFIX));
    let writer = I::open(&path, bytes);
    let n = writer.max_entries();
    for i in 0..n {
        writer.append(i);
    }
    writer.close();
    let indexes = STRATEGIES
        .iter()
        .map(|&s| {
            let index = I::open(&path, bytes).with_search_strategy(s);
            assert_eq!(index.entries(), n);
            index
        })
        .collect();
    Fixture {
        _dir: dir,
        indexes,
        keys: (0..n).map(I::key).collect(),
        values: (0..n).map(I::value).collect(),
    }
}

/// `TARGETS` pseudo-random targets over the keys of slots `[first, n)` (plus up to one
/// key gap beyond the last).
fn targets<I: BenchIndex>(keys: &[i64], hot_tail: bool) -> Vec<i64> {
    let n = keys.len();
    let first = if hot_tail {
        n.saturating_sub(8192 / I::Entry::SIZE)
    } else {
        0
    };
    let (lo, hi) = (keys[first], keys[n - 1] + I::KEY_GAP);
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

fn lookups<I: BenchIndex>(c: &mut Criterion) {
    let kind = I::KIND;
    for (dist, hot) in [("hot-tail", true), ("uniform", false)] {
        let mut group = c.benchmark_group(format!("{kind}-lookup-{dist}"));
        for (size, bytes) in SIZES {
            let f = fixture::<I>(bytes);
            let t = targets::<I>(&f.keys, hot);
            // Every strategy answers like the in-memory search.
            for index in &f.indexes {
                for &target in &t {
                    let got = index.lookup(target);
                    let want = partition_point(&f.keys, &f.values, target);
                    assert_eq!(got, want);
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
                        index.lookup(black_box(t[i]))
                    })
                });
            }
        }
        group.finish();
    }
}

fn searches<I: BenchIndex>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{}-search-hot-tail", I::KIND));
    for (size, bytes) in SIZES {
        let f = fixture::<I>(bytes);
        let t = targets::<I>(&f.keys, true);
        for index in &f.indexes {
            let strategy = index.index_file().search_strategy();
            let snap = index.snapshot();
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

/// Index size used by the append benchmarks (1 MiB); when it is full it is truncated,
/// untimed, and appending starts over.
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
type Run<I> = fn(&mut Appenders<I>, std::ops::Range<usize>);
type Reset<I> = fn(&mut Appenders<I>);

/// The appenders of the append benchmarks, each over its own 1 MiB target.
struct Appenders<I: BenchIndex> {
    _dir: tempfile::TempDir,
    cap: usize,
    encoded: Vec<I::Entry>,
    index: I,
    /// Appended through one `appender()` per run of entries.
    batched: I,
    /// Kafka's append on an index with Kafka's warm/cold strategy: no page directory to
    /// maintain (the default before the hybrid); with [`BenchIndex::WARM_COLD_ARM`].
    warm_cold: Option<I>,
    raw: IndexFile<I::Entry>,
    mapping: Mapping,
    vec: Vec<u8>,
}

impl<I: BenchIndex> Appenders<I> {
    /// The append arms, in the order the criterion group and the ratios run them:
    /// Kafka's append one call at a time, the same calls through one appender per run,
    /// `IndexFile::append`, the plain copy into a mapping (the goal's baseline), the
    /// `Vec` copy, and the warm/cold index where there is one.
    fn arms() -> Vec<(String, Run<I>, Reset<I>)> {
        let mut arms: Vec<(String, Run<I>, Reset<I>)> = vec![
            (
                format!("{}-index", I::KIND),
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
        ];
        if I::WARM_COLD_ARM {
            arms.push((
                format!("{}-index-warm-cold", I::KIND),
                |a, r| r.for_each(|i| a.warm_cold(i)),
                |a| a.reset_warm_cold(),
            ));
        }
        arms
    }

    fn new() -> Self {
        let cap = APPEND_BYTES / I::Entry::SIZE;
        let dir = tempfile::tempdir().unwrap();
        let file = |n: u32| dir.path().join(format!("{n}.{}", I::SUFFIX));
        let index = I::open(&file(1), APPEND_BYTES);
        let batched = I::open(&file(4), APPEND_BYTES);
        let warm_cold = I::WARM_COLD_ARM.then(|| {
            I::open(&file(5), APPEND_BYTES).with_search_strategy(SearchStrategy::WARM_COLD)
        });
        let raw = IndexFile::<I::Entry>::open(file(2), 0, Some(APPEND_BYTES), OpenMode::ReadWrite)
            .unwrap();
        let mapped = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(file(3))
            .unwrap();
        mapped.set_len(APPEND_BYTES as u64).unwrap();
        let mapping = Mapping::map(&mapped, APPEND_BYTES, true).unwrap();
        Appenders {
            _dir: dir,
            cap,
            encoded: (0..cap).map(I::encode).collect(),
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
        self.index.append(i)
    }
    fn reset_index(&self) {
        self.index.truncate()
    }
    /// Kafka's append of entries `range` through one appender (the writer lock taken
    /// once for the run).
    fn batched(&mut self, range: std::ops::Range<usize>) {
        self.batched.append_batched(range)
    }
    fn reset_batched(&self) {
        self.batched.truncate()
    }
    /// [`Appenders::index`] without a page directory.
    fn warm_cold(&self, i: usize) {
        if let Some(w) = &self.warm_cold {
            w.append(i)
        }
    }
    fn reset_warm_cold(&self) {
        if let Some(w) = &self.warm_cold {
            w.truncate()
        }
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
        assert!(self.mapping.write(i * I::Entry::SIZE, black_box(bytes)));
    }
    /// The same bytes copied into a `Vec<u8>` (lower bound).
    fn vec_copy(&mut self, i: usize) {
        let at = i * I::Entry::SIZE;
        self.vec[at..at + I::Entry::SIZE]
            .copy_from_slice(black_box(bytemuck::bytes_of(&self.encoded[i])));
    }
}

fn appends<I: BenchIndex>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{}-append", I::KIND));
    group.throughput(Throughput::Elements(1));
    let mut a = Appenders::<I>::new();
    let cap = a.cap;
    for (name, run, reset) in Appenders::<I>::arms() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| time_runs(iters, cap, &mut a, run, reset))
        });
    }
    black_box(&a.vec);
    group.finish();
}

/// The interleaved ratios (see the crate's docs).
fn ratio_section<I: BenchIndex>() {
    let kind = I::KIND;
    let mut report = crate::Report::default();
    let ops = 16 * TARGETS;
    let mask = TARGETS - 1;
    for (size, bytes) in SIZES {
        let f = fixture::<I>(bytes);
        let snaps: Vec<_> = f.indexes.iter().map(|i| i.snapshot()).collect();
        for (dist, hot) in [("hot-tail", true), ("uniform", false)] {
            let t = targets::<I>(&f.keys, hot);
            let t = &t;
            let (keys, values) = (&f.keys, &f.values);
            let mut racers: Vec<crate::Competitor> = vec![Box::new(move |ops| {
                for j in 0..ops {
                    black_box(partition_point(keys, values, black_box(t[j & mask])));
                }
            })];
            for index in &f.indexes {
                racers.push(Box::new(move |ops| {
                    for j in 0..ops {
                        black_box(index.lookup(black_box(t[j & mask])));
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
            let times = crate::race(&mut racers, ops);
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
                    format!("{kind} lookup {dist} {size}: {name} / partition_point"),
                    times[1 + k],
                    times[0],
                    goal,
                );
            }
            if hot {
                for (k, name) in names.iter().enumerate() {
                    report.add(
                        format!("{kind} search-only {dist} {size}: {name} / partition_point"),
                        times[1 + names.len() + k],
                        times[0],
                        None,
                    );
                }
            }
        }
    }

    let a = std::cell::RefCell::new(Appenders::<I>::new());
    let cap = a.borrow().cap;
    // Each racer appends `ops` entries per round from its own cursor, starting over
    // (after an O(1) truncation) when the next round would not fit.
    let racer = |run: Run<I>, reset: Reset<I>| {
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
        }) as crate::Competitor
    };
    let arms = Appenders::<I>::arms();
    let mut racers: Vec<_> = arms
        .iter()
        .map(|&(_, run, reset)| racer(run, reset))
        .collect();
    let times = crate::race(&mut racers, 8 * TARGETS);
    drop(racers);
    // (numerator, denominator, goal) as indexes into `arms`.
    let (index, appender, raw, mmap, vec, warm_cold) = (0, 1, 2, 3, 4, 5);
    let mut pairs = Vec::new();
    if I::WARM_COLD_ARM {
        pairs.extend([(index, warm_cold, None), (warm_cold, mmap, None)]);
    }
    pairs.extend([
        (index, raw, None),
        (index, mmap, Some(2.0)),
        (index, vec, None),
        (raw, mmap, None),
        (appender, mmap, Some(2.0)),
    ]);
    for (num, den, goal) in pairs {
        report.add(
            format!("{kind} append: {} / {}", arms[num].0, arms[den].0),
            times[num],
            times[den],
            goal,
        );
    }
    report.finish(kind);
}

fn readers<I: BenchIndex>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("{}-readers", I::KIND));
    group.throughput(Throughput::Elements(1));
    let bytes = 1 << 20;
    for strategy in [SearchStrategy::default(), SearchStrategy::PAGE_DIRECTORY] {
        let dir = tempfile::tempdir().unwrap();
        let index = Arc::new(
            I::open(&dir.path().join(format!("0.{}", I::SUFFIX)), bytes)
                .with_search_strategy(strategy),
        );
        let half = index.max_entries() / 2;
        for i in 0..half {
            index.append_reader(i);
        }
        let keys: Vec<i64> = (0..half).map(I::key).collect();
        let t = targets::<I>(&keys, true);
        let lookup = |b: &mut criterion::Bencher| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) & (TARGETS - 1);
                index.lookup(black_box(t[i]))
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
                        index.truncate_to_entries(half);
                        i = half;
                    }
                    index.append_reader(i);
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

/// The whole bench: lookups, searches, appends and readers under criterion, then the
/// ratios. `RATIOS_ONLY=1` skips the criterion benchmarks and runs only the ratios
/// section; `NO_RATIOS=1` skips the ratios section.
pub fn main<I: BenchIndex>() {
    if std::env::var_os("RATIOS_ONLY").is_none() {
        let mut c = config();
        lookups::<I>(&mut c);
        searches::<I>(&mut c);
        appends::<I>(&mut c);
        readers::<I>(&mut c);
        c.final_summary();
    }
    if std::env::var_os("NO_RATIOS").is_none() {
        ratio_section::<I>();
    }
}
