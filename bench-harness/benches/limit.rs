//! Lookups at the in-memory limit (`cargo bench -p bench-harness --bench limit`).
//!
//! Reproduces the table of the lookup-speed issue, for both indexes:
//!
//! * **The index**: 1,000,000 entries in a 10 MiB offset index (8-byte entries) and in a
//!   16 MiB time index (12-byte entries), page-cache resident (just written), one file
//!   per strategy.
//! * **The targets**: 100,000 per set, either the *hot tail* (uniform over the keys of
//!   the last 1024 slots, up to one key gap past the last) or *uniform* over all keys.
//! * **The figure**: ns per lookup as a ratio to `slice::partition_point` over a
//!   `Vec<u64>` of the same keys, both measured in the same interleaved round (each round
//!   runs all 100,000 targets of every arm, the arms taking turns every 1,000 lookups,
//!   an arm's round time being its median slice: [`bench_support::race_rounds_sliced`]);
//!   the median of 51 rounds (`LIMIT_ROUNDS`), with the interquartile range of the
//!   per-round ratios as the noise figure.
//! * **Lagging and mixed** (a second table, skipped with `LIMIT_WORKLOADS=hot-uniform`):
//!   a consumer 1024 to 8192 entries behind the last (past the warm section), and each
//!   target drawn from hot tail, lagging and uniform (80 % / 10 % / 10 %, the main job's
//!   mixed workload).
//! * **The modes**: *throughput* runs lookups back to back (independent lookups overlap
//!   in the out-of-order core); *isolated* puts an `lfence` ([`index_core::sys::lfence`])
//!   between lookups, so each one pays its full latency.
//!
//! Arms: `OffsetIndex::lookup` / `TimeIndex::lookup` (the whole API call) with Kafka's
//! warm/cold, the page directory, binary search and the hybrid (the default); the search
//! kernel alone over the same mapped bytes (a snapshot taken once; an arm that reads the file of the lookup arm
//! before it in every slice, so its *uniform* columns run on lines that arm just cached);
//! Kafka's kernel step by step (the oracle the fast kernels are checked against, Kafka
//! 4.4's search without the cost of a JVM call, on a file of its own: the reference the
//! default's lookups are held to); and an Eytzinger layout with prefetch, key only
//! (a `Vec<u64>` in BFS order: a reference for the limit); and the **floor**: the answer
//! entry read from a mapping with its slot computed (no search at all), the part of any
//! lookup that no index layout can avoid, on a file of its own (the arms take turns
//! over the same targets, so reading another arm's mapping would warm the lines that arm
//! reads next); and the default's lookups **in batches** (`with_reader`: the thread
//! announces itself in its reader slot once per slice of 1,000 lookups instead of once per
//! lookup; on a file of its own). Every arm's answers are first checked against `partition_point`.
//!
//! `LIMIT_PROBE=1` adds two arms to the offset table that split a warm/cold lookup's cost:
//! `IndexFile::search` alone (reader slot, published mapping, entry count and search, no
//! decode) and a snapshot's search, answer and decode (everything but the reader slot
//! and the published mapping). They read the same mapping as the warm/cold lookup arm
//! just before them in every slice, so their *uniform* columns run on lines that arm
//! just cached and are not comparable; the hot-tail columns fit in the caches anyway.
//!
//! A last table (offset index, hot tail, throughput mode) races the same lookups **idle**
//! and **next to an appender**: another thread appends entries past the readers' keys
//! in a 64-slot window at the tail (appending, then truncating back), as fast as it can
//! or at Kafka's rate for 1 GB/s of log (one entry per 4096 bytes: 250,000 entries/s),
//! switched on for exactly the slices of the "appending" arms. The readers'
//! targets and warm section stay the same; what changes is that the entry count and the
//! tail slots are written by the other core all the time. A count-only arm (`entries()`,
//! no search) isolates the cost of reading that one shared cache line.
//!
//! The tables are printed and written to `<criterion dir>/ratios/limit.json`.

use std::hint::black_box;

use bench_support::{median_ratio, race_rounds_sliced, Competitor, RatioStats};
use index_core::search::{self, Bound, SearchField, SearchStrategy};
use index_core::sys::{lfence, prefetch};
use index_core::{IndexEntry, NoProbe, Snapshot};
use index_offset::OffsetIndex;
use index_time::TimeIndex;

const ENTRIES: usize = 1_000_000;
const TARGETS: usize = 100_000;
const HOT_SLOTS: usize = 1024;
/// Lookups per turn: the competitors of a round take turns every `SLICE` lookups.
const SLICE: usize = 1000;
const STRATEGIES: [SearchStrategy; 4] = [
    SearchStrategy::WARM_COLD,
    SearchStrategy::PAGE_DIRECTORY,
    SearchStrategy::Binary,
    SearchStrategy::HYBRID,
];
/// Report names of [`STRATEGIES`].
const NAMES: [&str; 4] = [
    "warm/cold (Kafka's)",
    "page directory",
    "binary",
    "hybrid (default)",
];
/// Kernel arms [`kernel_arms`] puts after the API-call arms.
const TRAILING: usize = 4;

fn rounds() -> usize {
    std::env::var("LIMIT_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(51)
}

/// Keys in Eytzinger (BFS) order, 1-based (`tree[0]` unused), padded so that the
/// prefetch of `16 k` stays in bounds.
struct Eytzinger {
    tree: Vec<u64>,
    n: usize,
}

impl Eytzinger {
    fn new(sorted: &[u64]) -> Self {
        let n = sorted.len();
        let mut tree = vec![u64::MAX; 16 * (n + 1) + 16];
        fn fill(tree: &mut [u64], sorted: &[u64], next: &mut usize, k: usize, n: usize) {
            if k <= n {
                fill(tree, sorted, next, 2 * k, n);
                tree[k] = sorted[*next];
                *next += 1;
                fill(tree, sorted, next, 2 * k + 1, n);
            }
        }
        let mut next = 0;
        fill(&mut tree, sorted, &mut next, 1, n);
        Eytzinger { tree, n }
    }

    /// The Eytzinger index of the first key `> x` (0 if none): the largest lower bound
    /// is the key before it in sorted order.
    #[inline]
    fn upper_bound(&self, x: u64) -> usize {
        let mut k = 1;
        while k <= self.n {
            prefetch(&self.tree[16 * k]);
            k = 2 * k + usize::from(self.tree[k] <= x);
        }
        k >> (k.trailing_ones() + 1)
    }
}

/// A generator of pseudo-random numbers (xorshift64), so that both indexes and every run
/// get the same targets.
fn targets(keys: &[i64], first_slot: usize, gap: i64) -> Vec<i64> {
    targets_between(
        keys,
        (first_slot, keys.len() - 1),
        gap,
        0x9E37_79B9_7F4A_7C15,
    )
}

/// [`targets`] uniform over the keys of the slots `[first, last]` plus `gap`, from `seed`.
fn targets_between(keys: &[i64], (first, last): (usize, usize), gap: i64, seed: u64) -> Vec<i64> {
    let (lo, hi) = (keys[first], keys[last] + gap);
    let mut x: u64 = seed;
    (0..TARGETS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (x % (hi - lo) as u64) as i64
        })
        .collect()
}

/// The lagging targets (a consumer 1024 to 8192 entries behind the last one: past the
/// warm section, within 64 KiB of offset index) and the mixed ones (each drawn from hot,
/// lagging and uniform, 80 % / 10 % / 10 %, as the main job's mixed workload).
fn lagging_and_mixed(keys: &[i64], hot: &[i64], uniform: &[i64], gap: i64) -> (Vec<i64>, Vec<i64>) {
    let n = keys.len();
    let lagging = targets_between(
        keys,
        (n - 8 * HOT_SLOTS, n - HOT_SLOTS),
        gap,
        0x6c_6167_5eed,
    );
    let mut x: u64 = 0x6d_6978_5eed;
    let mixed = (0..TARGETS)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 10 {
                0 => lagging[i],
                1 => uniform[i],
                _ => hot[i],
            }
        })
        .collect();
    (lagging, mixed)
}

/// Whether the lagging/mixed table runs (`LIMIT_WORKLOADS=hot-uniform` skips it).
fn lagging_table() -> bool {
    std::env::var("LIMIT_WORKLOADS").as_deref() != Ok("hot-uniform")
}

/// The u64 image of an i64 key that preserves order (flip the sign bit).
fn ordered(k: i64) -> u64 {
    (k as u64) ^ (1 << 63)
}

/// One lookup arm: a name and a function from target to a value depending on the answer.
type Arm<'a> = (String, Box<dyn Fn(i64) -> u64 + 'a>);

/// The timed form of a batch arm (`with_reader`: one announcement for a slice of
/// lookups): looks up every target of the slice in turn, handing each answer to the sink
/// (and `lfence` between lookups when isolated). Its arm of the same name is the
/// per-target form, used for the answers' check; [`check_batches`] checks this one.
type Batch<'a> = (String, Box<BatchFn<'a>>);

/// A batch arm's function: the slice's targets, isolated mode, the answers' sink.
type BatchFn<'a> = dyn Fn(&[i64], bool, &mut dyn FnMut(u64)) + 'a;

struct Row {
    arm: String,
    /// hot-tail throughput, hot-tail isolated, uniform throughput, uniform isolated.
    cells: [RatioStats; 4],
}

/// A competitor cycling through the targets `t`, `ops` lookups per call.
fn competitor<'a>(
    f: &'a (dyn Fn(i64) -> u64 + 'a),
    t: &'a [i64],
    isolated: bool,
) -> Competitor<'a> {
    let mut next = 0;
    Box::new(move |ops| {
        for _ in 0..ops {
            let x = t[next];
            next = if next + 1 == t.len() { 0 } else { next + 1 };
            black_box(f(black_box(x)));
            if isolated {
                lfence();
            }
        }
    })
}

/// A competitor running the batch arm `b` over the targets `t`, one batch per call
/// (`ops` lookups, wrapping at the end of `t`).
fn batch_competitor<'a>(b: &'a BatchFn<'a>, t: &'a [i64], isolated: bool) -> Competitor<'a> {
    let mut next = 0;
    Box::new(move |mut ops| {
        while ops > 0 {
            let n = ops.min(t.len() - next);
            b(&t[next..next + n], isolated, &mut |r| {
                black_box(r);
            });
            next = if next + n == t.len() { 0 } else { next + n };
            ops -= n;
        }
    })
}

/// Checks each batch arm's answers against the per-target arm of the same name.
fn check_batches(arms: &[Arm<'_>], batches: &[Batch<'_>], t: &[i64]) {
    for (name, b) in batches {
        let (_, f) = arms
            .iter()
            .find(|(n, _)| n == name)
            .expect("a batch arm's arm");
        let mut got = Vec::with_capacity(t.len());
        b(t, false, &mut |r| got.push(r));
        let want: Vec<u64> = t.iter().map(|&x| f(x)).collect();
        assert!(got == want, "{name}: the batch's answers differ");
    }
}

/// Races `arms` (arm 0 must be `partition_point`) on the hot-tail and uniform targets in
/// both modes and returns one row per arm after the first.
/// The rows of two target sets (`hot` and `uniform`, or lagging and mixed).
/// An arm named in `batches` runs in its batch form.
fn table(
    arms: &[Arm<'_>],
    batches: &[Batch<'_>],
    hot: &[i64],
    uniform: &[i64],
    rounds: usize,
) -> Vec<Row> {
    let mut cells: Vec<Vec<RatioStats>> = vec![Vec::new(); arms.len()];
    for t in [hot, uniform] {
        for isolated in [false, true] {
            let mut cs: Vec<Competitor> = arms
                .iter()
                .map(|(name, f)| match batches.iter().find(|(n, _)| n == name) {
                    Some((_, b)) => batch_competitor(b.as_ref(), t, isolated),
                    None => competitor(f.as_ref(), t, isolated),
                })
                .collect();
            let per_round = race_rounds_sliced(&mut cs, t.len(), SLICE, rounds);
            for (k, c) in cells.iter_mut().enumerate() {
                c.push(median_ratio(&per_round, k, 0));
            }
        }
    }
    arms.iter()
        .zip(cells)
        .skip(1)
        .map(|((name, _), c)| Row {
            arm: name.clone(),
            cells: [c[0], c[1], c[2], c[3]],
        })
        .collect()
}

/// Checks every arm against the expected slot of every target (`answer` maps the arm's
/// result to a slot comparable across arms).
fn check(
    arms: &[Arm<'_>],
    expect: &[Option<usize>],
    t: &[i64],
    decode: &[&dyn Fn(u64) -> Option<usize>],
) {
    for ((name, f), decode) in arms.iter().zip(decode) {
        for (&x, &want) in t.iter().zip(expect) {
            assert_eq!(decode(f(x)), want, "{name}: target {x}");
        }
    }
}

/// The arms shared by both indexes: partition_point, Eytzinger, and for each strategy's
/// snapshot the kernel alone; `lookups` adds the API calls.
#[allow(clippy::type_complexity)]
fn kernel_arms<'a, E: IndexEntry>(
    keys: &'a [u64],
    eytz: &'a Eytzinger,
    snaps: &'a [Snapshot<E>],
    floor: &'a Snapshot<E>,
    kafka: &'a Snapshot<E>,
    slot_of: fn(i64) -> usize,
) -> (Vec<Arm<'a>>, Vec<Box<dyn Fn(u64) -> Option<usize> + 'a>>) {
    let slot = answer_slot;
    let mut arms: Vec<Arm<'a>> = vec![(
        "partition_point over Vec<u64>".into(),
        Box::new(move |t| keys.partition_point(|&k| k <= ordered(t)) as u64),
    )];
    let mut decode: Vec<Box<dyn Fn(u64) -> Option<usize> + 'a>> = vec![Box::new(slot)];
    arms.push((
        "Eytzinger layout with prefetch, key only".into(),
        Box::new(move |t| eytz.upper_bound(ordered(t)) as u64),
    ));
    // The Eytzinger answer is a tree index: compare the key before it instead.
    decode.push(Box::new(move |r| {
        let k = r as usize;
        let rank = if k == 0 {
            keys.len()
        } else {
            keys.partition_point(|&x| x < eytz.tree[k])
        };
        rank.checked_sub(1)
    }));
    let pd = &snaps[1];
    // A file of its own: reading another arm's mapping would warm the lines that arm
    // reads next (the arms take turns over the same targets).
    arms.push((
        "floor: the answer's entry read with its slot known (no search)".into(),
        Box::new(move |t| {
            let s = slot_of(t).min(floor.slots().len() - 1);
            black_box(floor.slots()[s].key(floor.base_offset()));
            s as u64 + 1
        }),
    ));
    decode.push(Box::new(slot));
    let wc = &snaps[0];
    arms.push((
        "warm/cold kernel alone (snapshot search)".into(),
        Box::new(move |t| {
            wc.search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                .map_or(0, |s| s as u64 + 1)
        }),
    ));
    decode.push(Box::new(slot));
    arms.push((
        "page-directory kernel alone (snapshot search)".into(),
        Box::new(move |t| {
            pd.search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                .map_or(0, |s| s as u64 + 1)
        }),
    ));
    decode.push(Box::new(slot));
    let hybrid = &snaps[3];
    arms.push((
        "hybrid kernel alone (snapshot search)".into(),
        Box::new(move |t| {
            hybrid
                .search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                .map_or(0, |s| s as u64 + 1)
        }),
    ));
    decode.push(Box::new(slot));
    arms.push((
        "Kafka's warm/cold kernel step by step (the oracle)".into(),
        Box::new(move |t| {
            search::kafka_search(
                kafka.slots(),
                kafka.base_offset(),
                t,
                SearchField::Key,
                Bound::LargestLowerBound,
                SearchStrategy::WARM_COLD,
                &mut NoProbe,
            )
            .map_or(0, |s| s as u64 + 1)
        }),
    ));
    decode.push(Box::new(slot));
    (arms, decode)
}

fn print((kind, dists): (&str, [&str; 2]), rows: &[Row], rounds: usize, json: &mut Vec<String>) {
    println!("\n{kind} index: ns per lookup / partition_point ns, median of {rounds} interleaved rounds [interquartile range]");
    println!(
        "| arm | {0} throughput | {0} isolated | {1} throughput | {1} isolated |",
        dists[0], dists[1]
    );
    println!("|---|---:|---:|---:|---:|");
    for r in rows {
        let cells: Vec<String> = r
            .cells
            .iter()
            .map(|c| format!("{:.2}x [{:.2}-{:.2}]", c.median, c.q1, c.q3))
            .collect();
        println!("| {} | {} |", r.arm, cells.join(" | "));
        for (cell, (dist, mode)) in r.cells.iter().zip([
            (dists[0], "throughput"),
            (dists[0], "isolated"),
            (dists[1], "throughput"),
            (dists[1], "isolated"),
        ]) {
            json.push(format!(
                "  {{\"index\": \"{kind}\", \"arm\": \"{}\", \"targets\": \"{dist}\", \"mode\": \"{mode}\", \"ratio\": {:.4}, \"q1\": {:.4}, \"q3\": {:.4}, \"ns\": {:.3}, \"partition_point_ns\": {:.3}}}",
                r.arm, cell.median, cell.q1, cell.q3, cell.numerator_ns, cell.denominator_ns
            ));
        }
    }
    let pp: Vec<String> = rows[0]
        .cells
        .iter()
        .map(|c| format!("{:.1}", c.denominator_ns))
        .collect();
    println!("partition_point itself (ns, median): {}", pp.join(" / "));
    println!(
        "lookups announce themselves with {}",
        if index_core::readers::asymmetric_fences() {
            "a compiler fence (membarrier asymmetric fences)"
        } else {
            "a SeqCst fence (no membarrier)"
        }
    );
}

/// Offset of slot `i` in the offset indexes of this bench (every third offset).
fn offset_key(i: usize) -> i64 {
    3 * i as i64
}

/// The slot answering an offset-lookup arm's result (the offset found + 1, 0 for none).
fn offset_slot(r: u64) -> Option<usize> {
    r.checked_sub(1).map(|o| (o / 3) as usize)
}

/// The slot answering a kernel arm's result (the slot found + 1, 0 for none).
fn answer_slot(r: u64) -> Option<usize> {
    r.checked_sub(1).map(|s| s as usize)
}

/// An offset index of `bytes` at `path`, searched with `strategy`, filled with `ENTRIES`
/// entries (slot `i`: [`offset_key`]`(i)`, position `4000 i`).
fn filled_offset_index(
    path: std::path::PathBuf,
    bytes: usize,
    strategy: SearchStrategy,
) -> OffsetIndex {
    let mut index = OffsetIndex::open(path, 0, bytes)
        .unwrap()
        .with_search_strategy(strategy);
    let mut a = index.appender().unwrap();
    for i in 0..ENTRIES {
        a.append(offset_key(i), (i as u32).wrapping_mul(4000))
            .unwrap();
    }
    drop(a);
    index
}

fn offset_table(dir: &std::path::Path, rounds: usize, json: &mut Vec<String>) {
    let key = offset_key;
    let indexes: Vec<OffsetIndex> = STRATEGIES
        .iter()
        .enumerate()
        .map(|(k, &s)| filled_offset_index(dir.join(format!("{k:020}.index")), 10 << 20, s))
        .collect();
    let snaps: Vec<_> = indexes.iter().map(|i| i.snapshot().unwrap()).collect();
    // The floor arm's and Kafka's kernel's own files.
    let floor_index = filled_offset_index(dir.join("floor.index"), 10 << 20, STRATEGIES[0]);
    let floor = floor_index.snapshot().unwrap();
    let kafka_index = filled_offset_index(dir.join("kafka.index"), 10 << 20, STRATEGIES[0]);
    let kafka = kafka_index.snapshot().unwrap();
    // The batch arm's own file.
    let batch_index = filled_offset_index(dir.join("batch.index"), 10 << 20, STRATEGIES[3]);
    let keys: Vec<i64> = (0..ENTRIES).map(key).collect();
    let ukeys: Vec<u64> = keys.iter().map(|&k| ordered(k)).collect();
    let eytz = Eytzinger::new(&ukeys);
    let (mut arms, mut decode) =
        kernel_arms(&ukeys, &eytz, &snaps, &floor, &kafka, |t| (t / 3) as usize);
    for (index, name) in indexes.iter().zip(NAMES) {
        arms.insert(
            arms.len() - TRAILING,
            (
                format!("`OffsetIndex::lookup`, {name}"),
                Box::new(move |t| index.lookup(t).unwrap().offset as u64 + 1),
            ),
        );
        decode.insert(decode.len() - TRAILING, Box::new(offset_slot));
    }
    // The default's lookups in batches of a slice, the thread announced once per batch,
    // on its own file (the arms take turns over the same targets).
    let default = &batch_index;
    let batch_name =
        "`OffsetIndex::with_reader` lookups, hybrid (default), one announcement per 1,000"
            .to_string();
    arms.insert(
        arms.len() - TRAILING,
        (
            batch_name.clone(),
            Box::new(move |t| default.lookup(t).unwrap().offset as u64 + 1),
        ),
    );
    decode.insert(decode.len() - TRAILING, Box::new(offset_slot));
    let batches: Vec<Batch> = vec![(
        batch_name,
        Box::new(
            move |ts: &[i64], isolated: bool, sink: &mut dyn FnMut(u64)| {
                default.with_reader(|r| {
                    for &t in ts {
                        sink(r.lookup(black_box(t)).unwrap().offset as u64 + 1);
                        if isolated {
                            lfence();
                        }
                    }
                })
            },
        ),
    )];
    if std::env::var_os("LIMIT_PROBE").is_some() {
        let wc = &indexes[0];
        arms.insert(
            arms.len() - TRAILING,
            (
                "`IndexFile::search` alone, warm/cold (LIMIT_PROBE)".into(),
                Box::new(move |t| {
                    wc.index_file()
                        .search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                        .unwrap()
                        .map_or(0, |(s, _)| s as u64 + 1)
                }),
            ),
        );
        decode.insert(decode.len() - TRAILING, Box::new(answer_slot));
        let snap = &snaps[0];
        arms.insert(
            arms.len() - TRAILING,
            (
                "snapshot search, answer and decode, warm/cold (LIMIT_PROBE)".into(),
                Box::new(move |t| {
                    snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut NoProbe)
                        .and_then(|s| snap.answer(s, &mut NoProbe))
                        .map_or(0, |e| e.decode(0).offset as u64 + 1)
                }),
            ),
        );
        decode.insert(decode.len() - TRAILING, Box::new(offset_slot));
    }
    let hot = targets(&keys, ENTRIES - HOT_SLOTS, 3);
    let uniform = targets(&keys, 0, 3);
    let (lagging, mixed) = lagging_and_mixed(&keys, &hot, &uniform, 3);
    for t in [&hot, &uniform, &lagging, &mixed] {
        let expect: Vec<Option<usize>> = t
            .iter()
            .map(|&x| keys.partition_point(|&k| k <= x).checked_sub(1))
            .collect();
        let decode: Vec<&dyn Fn(u64) -> Option<usize>> =
            decode.iter().map(|d| d.as_ref()).collect();
        check(&arms, &expect, t, &decode);
        check_batches(&arms, &batches, t);
    }
    let rows = table(&arms, &batches, &hot, &uniform, rounds);
    print(("offset", ["hot-tail", "uniform"]), &rows, rounds, json);
    if lagging_table() {
        let rows = table(&arms, &batches, &lagging, &mixed, rounds);
        print(("offset", ["lagging", "mixed"]), &rows, rounds, json);
    }
}

fn time_table(dir: &std::path::Path, rounds: usize, json: &mut Vec<String>) {
    let key = |i: usize| 1_700_000_000_000 + 7 * i as i64;
    let mut indexes: Vec<TimeIndex> = STRATEGIES
        .iter()
        .chain(&STRATEGIES[..1])
        .chain(&STRATEGIES[..1])
        .chain(&STRATEGIES[3..4])
        .enumerate()
        .map(|(k, &s)| {
            let index = TimeIndex::open(dir.join(format!("{k:020}.timeindex")), 0, 16 << 20)
                .unwrap()
                .with_search_strategy(s);
            for i in 0..ENTRIES {
                assert!(index.maybe_append(key(i), 2 * i as i64).unwrap());
            }
            index
        })
        .collect();
    // The last three are the floor arm's, Kafka's kernel's and the batch arm's own files.
    let batch_index = indexes.pop().unwrap();
    let kafka_index = indexes.pop().unwrap();
    let kafka = kafka_index.snapshot().unwrap();
    let floor_index = indexes.pop().unwrap();
    let floor = floor_index.snapshot().unwrap();
    let snaps: Vec<_> = indexes.iter().map(|i| i.snapshot().unwrap()).collect();
    let keys: Vec<i64> = (0..ENTRIES).map(key).collect();
    let ukeys: Vec<u64> = keys.iter().map(|&k| ordered(k)).collect();
    let eytz = Eytzinger::new(&ukeys);
    let (mut arms, mut decode) = kernel_arms(&ukeys, &eytz, &snaps, &floor, &kafka, |t| {
        ((t - 1_700_000_000_000) / 7) as usize
    });
    for (index, name) in indexes.iter().zip(NAMES) {
        arms.insert(
            arms.len() - TRAILING,
            (
                format!("`TimeIndex::lookup`, {name}"),
                Box::new(move |t| index.lookup(t).unwrap().offset as u64 + 1),
            ),
        );
        decode.insert(
            decode.len() - TRAILING,
            Box::new(|r: u64| Some(((r - 1) / 2) as usize)),
        );
    }
    let default = &batch_index;
    let batch_name =
        "`TimeIndex::with_reader` lookups, hybrid (default), one announcement per 1,000"
            .to_string();
    arms.insert(
        arms.len() - TRAILING,
        (
            batch_name.clone(),
            Box::new(move |t| default.lookup(t).unwrap().offset as u64 + 1),
        ),
    );
    decode.insert(
        decode.len() - TRAILING,
        Box::new(|r: u64| Some(((r - 1) / 2) as usize)),
    );
    let batches: Vec<Batch> = vec![(
        batch_name,
        Box::new(
            move |ts: &[i64], isolated: bool, sink: &mut dyn FnMut(u64)| {
                default.with_reader(|r| {
                    for &t in ts {
                        sink(r.lookup(black_box(t)).unwrap().offset as u64 + 1);
                        if isolated {
                            lfence();
                        }
                    }
                })
            },
        ),
    )];
    let hot = targets(&keys, ENTRIES - HOT_SLOTS, 7);
    let uniform = targets(&keys, 0, 7);
    let (lagging, mixed) = lagging_and_mixed(&keys, &hot, &uniform, 7);
    for t in [&hot, &uniform, &lagging, &mixed] {
        let expect: Vec<Option<usize>> = t
            .iter()
            .map(|&x| keys.partition_point(|&k| k <= x).checked_sub(1))
            .collect();
        let decode: Vec<&dyn Fn(u64) -> Option<usize>> =
            decode.iter().map(|d| d.as_ref()).collect();
        check(&arms, &expect, t, &decode);
        check_batches(&arms, &batches, t);
    }
    let rows = table(&arms, &batches, &hot, &uniform, rounds);
    print(("time", ["hot-tail", "uniform"]), &rows, rounds, json);
    if lagging_table() {
        let rows = table(&arms, &batches, &lagging, &mixed, rounds);
        print(("time", ["lagging", "mixed"]), &rows, rounds, json);
    }
}

/// Slots the appender of [`appending_table`] appends past the readers' keys before it
/// truncates back.
const APPEND_WINDOW: usize = 64;

/// Hot-tail lookups idle and next to an appender (see the module docs), per strategy.
fn appending_table(dir: &std::path::Path, rounds: usize, json: &mut Vec<String>) {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
    use std::time::{Duration, Instant};
    /// The appender's modes: off, as fast as it can, or at [`PACE`].
    const OFF: u8 = 0;
    const FAST: u8 = 1;
    const PACED: u8 = 2;
    /// Kafka's rate at 1 GB/s of log: one entry per `index.interval.bytes` (4096).
    const PACE: Duration = Duration::from_nanos(4096);
    let key = offset_key;
    let keys: Vec<i64> = (0..ENTRIES).map(key).collect();
    let hot = targets(&keys, ENTRIES - HOT_SLOTS, 3);
    println!(
        "\noffset index, hot tail, throughput: ns per lookup next to an appender / idle, median of {rounds} interleaved rounds [interquartile range]"
    );
    println!("| arm | appender | appending / idle | idle ns | appending ns | entries appended |");
    println!("|---|---|---:|---:|---:|---:|");
    for (k, (name, strategy)) in [
        (NAMES[0], STRATEGIES[0]),
        (NAMES[1], STRATEGIES[1]),
        (NAMES[3], STRATEGIES[3]),
    ]
    .into_iter()
    .enumerate()
    {
        let index = filled_offset_index(
            dir.join(format!("{:020}.index", 100 + k)),
            (ENTRIES + APPEND_WINDOW) * 8,
            strategy,
        );
        let index = &index;
        let (mode, stop) = (AtomicU8::new(OFF), AtomicBool::new(false));
        let appended = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        let stats = std::thread::scope(|s| {
            s.spawn(|| {
                let (mut at, mut next) = (0, Instant::now());
                while !stop.load(Relaxed) {
                    let m = mode.load(Relaxed);
                    if m == OFF {
                        std::hint::spin_loop();
                        continue;
                    }
                    if m == PACED {
                        let now = Instant::now();
                        if now < next {
                            std::hint::spin_loop();
                            continue;
                        }
                        // Back from a pause: restart the clock rather than catch up.
                        next = if now - next > 16 * PACE {
                            now + PACE
                        } else {
                            next + PACE
                        };
                    }
                    if at == APPEND_WINDOW {
                        index.truncate_to(key(ENTRIES)).unwrap();
                        at = 0;
                    }
                    index.append(key(ENTRIES + at), at as u32).unwrap();
                    at += 1;
                    appended[m as usize].fetch_add(1, Relaxed);
                }
            });
            let lookup = |t: i64| index.lookup(t).unwrap().offset as u64;
            let count = |_: i64| index.entries() as u64;
            let mut competitors: Vec<Competitor> = Vec::new();
            for f in [&lookup as &(dyn Fn(i64) -> u64 + Sync), &count] {
                for m in [OFF, FAST, PACED] {
                    let (hot, mode) = (&hot, &mode);
                    let mut at = 0;
                    competitors.push(Box::new(move |ops| {
                        mode.store(m, Relaxed);
                        for _ in 0..ops {
                            black_box(f(black_box(hot[at])));
                            at = if at + 1 == hot.len() { 0 } else { at + 1 };
                        }
                        mode.store(OFF, Relaxed);
                    }));
                }
            }
            let per_round = race_rounds_sliced(&mut competitors, hot.len(), SLICE, rounds);
            drop(competitors);
            stop.store(true, Relaxed);
            [
                median_ratio(&per_round, 1, 0),
                median_ratio(&per_round, 2, 0),
                median_ratio(&per_round, 4, 3),
                median_ratio(&per_round, 5, 3),
            ]
        });
        let arms = [
            format!("`OffsetIndex::lookup`, {name}"),
            format!("`OffsetIndex::entries` alone (the shared count), {name}"),
        ];
        for (j, stat) in stats.iter().enumerate() {
            let arm = &arms[j / 2];
            let (pace, count) = if j % 2 == 0 {
                ("as fast as it can", appended[FAST as usize].load(Relaxed))
            } else {
                ("250,000 entries/s", appended[PACED as usize].load(Relaxed))
            };
            println!(
                "| {arm} | {pace} | {:.2}x [{:.2}-{:.2}] | {:.1} | {:.1} | {count} |",
                stat.median, stat.q1, stat.q3, stat.denominator_ns, stat.numerator_ns
            );
            json.push(format!(
                "  {{\"index\": \"offset\", \"arm\": \"{arm}\", \"appender\": \"{pace}\", \"targets\": \"hot-tail\", \"mode\": \"appending/idle\", \"ratio\": {:.4}, \"q1\": {:.4}, \"q3\": {:.4}, \"ns\": {:.3}, \"idle_ns\": {:.3}, \"appended\": {count}}}",
                stat.median, stat.q1, stat.q3, stat.numerator_ns, stat.denominator_ns
            ));
        }
    }
}

/// `LIMIT_INDEX=offset|time|appending` runs one table only.
fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let rounds = rounds();
    let dir = tempfile::tempdir().unwrap();
    let only = std::env::var("LIMIT_INDEX").ok();
    let mut json = Vec::new();
    if only.is_none() || only.as_deref() == Some("offset") {
        offset_table(dir.path(), rounds, &mut json);
    }
    if only.is_none() || only.as_deref() == Some("time") {
        time_table(dir.path(), rounds, &mut json);
    }
    if only.is_none() || only.as_deref() == Some("appending") {
        appending_table(dir.path(), rounds, &mut json);
    }
    bench_support::write_json("limit", &format!("[\n{}\n]\n", json.join(",\n")));
}
