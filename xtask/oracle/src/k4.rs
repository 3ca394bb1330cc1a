//! K4 (`k4-epochs`): differential leader-epoch histories. Seeded random histories of
//! leader-epoch operations are run by our `LeaderEpochCache` with our checkpoint codec and
//! by Kafka's `LeaderEpochFileCache` over a `LeaderEpochCheckpointFile` (the helper's
//! `EpochOracle`), each in a directory of its own
//! (`docs/kafka-behaviour.md#leader-epoch-assign`). A history is:
//!
//! * maybe a `leader-epoch-checkpoint` to start from, the same bytes on both sides, its
//!   lines in order, out of order (equal start offsets, start offsets going down, lower
//!   epochs at higher offsets) or with duplicate lines; both sides load it (ours:
//!   `read_leader_epoch_checkpoint` and `LeaderEpochCache::from_entries`, Kafka: the
//!   cache's constructor);
//! * operations: `assign(epoch, start_offset)` of every shape the rule distinguishes (a new
//!   epoch above, the latest epoch again, the latest epoch at a lower offset, another epoch
//!   at the latest entry's start offset, at an earlier entry's start offset, a start offset
//!   going down, a lower epoch at a higher offset); `truncate_from_end` (Kafka's
//!   `truncateFromEndAsyncFlush`, what our `Log::truncate_to` calls) and
//!   `truncate_from_start` (`truncateFromStartAsyncFlush`, what a log-start advance
//!   calls), at entries' offsets, between and around them, and at −1; a reload (a restart:
//!   each side loads the file it wrote).
//!
//! Compared: the entries and the latest epoch after the load and after every operation,
//! and the checkpoint files byte for byte at the end. Our side writes its file as `Log`
//! does: after every operation that changed the cache, and at a load that the assign rule
//! changed. Kafka's load does not write, so a history whose load was changed and that
//! Kafka never wrote afterwards ends with Kafka's file still holding the loaded bytes: that
//! documented deviation is checked exactly (Kafka's file is the loaded bytes, ours the
//! entries) and counted. A side that never wrote: Kafka's constructor created the file
//! empty, ours has none; only that pair counts as equal. Our cache has no `endOffsetFor`
//! or `epochForOffset`: the entries and `latest_epoch` are the answers both sides have.
//! Negative epochs and offsets in an `assign` or a file are not generated (Kafka throws,
//! ours ignores them; documented).
//!
//! The first operation of case `i` is chosen by `i`, and so is the kind of its file, so
//! every run has every kind; the result line counts them and a run without one fails.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::fs::RealFs;
use segment::producer::read_leader_epoch_checkpoint;
use segment::producer::snapshot::{
    decode_leader_epoch_checkpoint, encode_leader_epoch_checkpoint, write_file_atomically,
    LEADER_EPOCH_CHECKPOINT_FILE,
};
use segment::LeaderEpochCache;

use super::Ctx;

/// The shape of an `assign`, relative to the cache it is applied to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    /// The cache is empty.
    First,
    /// An epoch above the latest, at an offset above its start.
    Newer,
    /// The latest epoch, at or above its start offset (nothing changes).
    RepeatLatest,
    /// The latest epoch below its start offset.
    LatestLower,
    /// Another epoch (above or below) at the latest entry's start offset.
    EqualOffset,
    /// An epoch above the latest at an earlier entry's start offset.
    EarlierOffset,
    /// An epoch above the latest at an offset below the latest start offset.
    LowerOffset,
    /// An epoch below the latest at an offset above the latest start offset.
    LowerEpoch,
}

const SHAPES: &[Shape] = &[
    Shape::Newer,
    Shape::RepeatLatest,
    Shape::LatestLower,
    Shape::EqualOffset,
    Shape::EarlierOffset,
    Shape::LowerOffset,
    Shape::LowerEpoch,
];

impl Shape {
    /// Named in findings. Only [`Shape::EqualOffset`] says "equal start offset" (the
    /// sabotage `k4-equal-offset-kept` is caught by that phrase).
    fn what(self) -> &'static str {
        match self {
            Shape::First => "the first entry",
            Shape::Newer => "a new epoch above the latest",
            Shape::RepeatLatest => "the latest epoch again",
            Shape::LatestLower => "the latest epoch at a lower offset",
            Shape::EqualOffset => "another epoch at the latest entry's equal start offset",
            Shape::EarlierOffset => "a higher epoch at an earlier entry's start offset",
            Shape::LowerOffset => "a higher epoch with the start offset going down",
            Shape::LowerEpoch => "a lower epoch at a higher offset",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Assign(i32, i64, Shape),
    TruncateFromEnd(i64),
    TruncateFromStart(i64),
    Reload,
}

impl Op {
    /// The helper's input line (without `op `).
    fn text(&self) -> String {
        match self {
            Op::Assign(e, o, _) => format!("assign {e} {o}"),
            Op::TruncateFromEnd(x) => format!("truncate_from_end {x}"),
            Op::TruncateFromStart(x) => format!("truncate_from_start {x}"),
            Op::Reload => "reload".into(),
        }
    }

    fn what(&self) -> String {
        match self {
            Op::Assign(_, _, s) => format!("`{}` ({})", self.text(), s.what()),
            _ => format!("`{}`", self.text()),
        }
    }
}

/// The kind of a case's starting checkpoint.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Start {
    /// No file.
    Empty,
    /// A file whose lines are in order (the load keeps them).
    InOrder,
    /// A file whose lines the assign rule resolves.
    OutOfOrder,
    /// A file with a line repeated (and maybe more out of order).
    Duplicates,
}

const STARTS: &[Start] = &[
    Start::Empty,
    Start::InOrder,
    Start::OutOfOrder,
    Start::Duplicates,
];

struct Case {
    id: String,
    /// The starting `leader-epoch-checkpoint`, if any.
    file: Option<Vec<u8>>,
    ops: Vec<Op>,
    /// Only operations that change nothing after a load that the assign rule changed.
    quiet: bool,
}

/// What the generated histories did, for the result line and the coverage check.
#[derive(Default, Debug)]
struct Coverage {
    loads_in_order: usize,
    loads_resolved: usize,
    loads_with_duplicates: usize,
    assigns: [usize; 8],
    assigns_changed: usize,
    ends: usize,
    ends_removing: usize,
    starts: usize,
    starts_changing: usize,
    negative_targets: usize,
    reloads: usize,
    /// Quiet cases (see [`gen_case`]).
    quiet: usize,
}

impl Coverage {
    fn assign_count(&self, s: Shape) -> usize {
        self.assigns[s as usize]
    }

    /// The kinds no history exercised.
    fn missing(&self) -> Vec<String> {
        let mut m: Vec<String> = [
            (self.loads_in_order, "load of a file in order"),
            (
                self.loads_resolved,
                "load of a file the assign rule resolves",
            ),
            (
                self.loads_with_duplicates,
                "load of a file with duplicate lines",
            ),
            (self.assigns_changed, "assign that changed the cache"),
            (self.ends, "truncate_from_end"),
            (self.ends_removing, "truncate_from_end that removed entries"),
            (self.starts, "truncate_from_start"),
            (
                self.starts_changing,
                "truncate_from_start that changed the cache",
            ),
            (self.negative_targets, "truncation at -1"),
            (self.reloads, "reload"),
            (self.quiet, "quiet case (Kafka never writes after the load)"),
        ]
        .iter()
        .filter(|(n, _)| *n == 0)
        .map(|(_, w)| w.to_string())
        .collect();
        for &s in SHAPES.iter().chain([Shape::First].iter()) {
            if self.assign_count(s) == 0 {
                m.push(format!("assign of {}", s.what()));
            }
        }
        m
    }
}

fn entries_text(entries: &[(i32, i64)]) -> String {
    if entries.is_empty() {
        return "-".into();
    }
    let mut s = String::new();
    for (i, (e, o)) in entries.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{e}:{o}");
    }
    s
}

fn state_text(c: &LeaderEpochCache) -> String {
    format!(
        "{} latest {}",
        entries_text(c.entries()),
        c.latest_epoch()
            .map_or_else(|| "none".to_string(), |e| e.to_string())
    )
}

/// A starting checkpoint of kind `start`: a valid history of entries, then perturbed.
fn gen_file(rng: &mut StdRng, start: Start) -> Vec<(i32, i64)> {
    let n = rng.gen_range(2..10);
    let mut v: Vec<(i32, i64)> = Vec::with_capacity(n + 4);
    let (mut e, mut o): (i32, i64) = (rng.gen_range(0..3), rng.gen_range(0..20));
    for _ in 0..n {
        v.push((e, o));
        e += rng.gen_range(1..4);
        o += rng.gen_range(1..60);
    }
    match start {
        Start::Empty | Start::InOrder => {}
        Start::OutOfOrder => {
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..v.len());
                let (ei, oi) = v[i];
                let line = match rng.gen_range(0..4) {
                    // Another epoch at an entry's start offset.
                    0 => (ei + rng.gen_range(1..3), oi),
                    // A start offset going down.
                    1 => (ei + rng.gen_range(1..3), (oi - rng.gen_range(1..30)).max(0)),
                    // A lower epoch at a higher offset.
                    2 => ((ei - rng.gen_range(1..3)).max(0), oi + rng.gen_range(1..90)),
                    // Two lines swapped.
                    _ => {
                        let j = rng.gen_range(0..v.len());
                        v.swap(i, j);
                        continue;
                    }
                };
                let at = rng.gen_range(i..=v.len());
                v.insert(at, line);
            }
        }
        Start::Duplicates => {
            for _ in 0..rng.gen_range(1..3) {
                let i = rng.gen_range(0..v.len());
                let at = rng.gen_range(i..=v.len());
                v.insert(at, v[i]);
            }
            if rng.gen_bool(0.3) {
                let i = rng.gen_range(0..v.len());
                v.insert(rng.gen_range(0..=v.len()), (v[i].0 + 1, v[i].1));
            }
        }
    }
    v
}

/// A truncation target: an entry's offset (or one off it), any offset around the entries,
/// or −1.
fn target(rng: &mut StdRng, c: &LeaderEpochCache, negative: bool) -> i64 {
    let offs: Vec<i64> = c.entries().iter().map(|e| e.1).collect();
    if negative {
        return -1;
    }
    let (lo, hi) = (
        offs.first().copied().unwrap_or(0),
        offs.last().copied().unwrap_or(50),
    );
    if offs.is_empty() || rng.gen_bool(0.3) {
        rng.gen_range((lo - 5).max(0)..=hi + 40)
    } else {
        offs[rng.gen_range(0..offs.len())] + rng.gen_range(-1..=1)
    }
}

/// An `assign` of `shape` against `c`, or `None` if `c` has no such assign (e.g. no earlier
/// entry).
fn gen_assign(rng: &mut StdRng, c: &LeaderEpochCache, shape: Shape) -> Option<Op> {
    let Some(&(le, lo)) = c.entries().last() else {
        return Some(Op::Assign(
            rng.gen_range(0..4),
            rng.gen_range(0..50),
            Shape::First,
        ));
    };
    let (e, o) = match shape {
        Shape::First => return None,
        Shape::Newer => (le + rng.gen_range(1..4), lo + rng.gen_range(1..80)),
        Shape::RepeatLatest => (le, lo + rng.gen_range(0..50)),
        Shape::LatestLower if lo > 0 => (le, rng.gen_range(0..lo)),
        Shape::EqualOffset => {
            let e = if le > 0 && rng.gen_bool(0.3) {
                rng.gen_range(0..le)
            } else {
                le + rng.gen_range(1..3)
            };
            (e, lo)
        }
        Shape::EarlierOffset if c.entries().len() >= 2 => {
            let n = c.entries().len();
            (
                le + rng.gen_range(1..3),
                c.entries()[rng.gen_range(0..n - 1)].1,
            )
        }
        Shape::LowerOffset if lo > 0 => (le + rng.gen_range(1..3), rng.gen_range(0..lo)),
        Shape::LowerEpoch if le > 0 => (rng.gen_range(0..le), lo + rng.gen_range(1..80)),
        _ => return None,
    };
    Some(Op::Assign(e, o, shape))
}

/// Case `i`: the kind of its file and its first operation are chosen by `i`; the history
/// is played on a cache as it is generated (so that each assign has its shape).
fn gen_case(rng: &mut StdRng, i: usize, cov: &mut Coverage) -> Case {
    let start = STARTS[i % STARTS.len()];
    // A quiet case: a file the load resolves, then only operations that change nothing,
    // so that Kafka never writes its file (the documented deviation, checked exactly).
    let quiet =
        matches!(start, Start::OutOfOrder | Start::Duplicates) && (i / STARTS.len()) % 6 == 5;
    let (file, mut cache) = match start {
        Start::Empty => (None, LeaderEpochCache::new()),
        _ => {
            let mut lines = gen_file(rng, start);
            for _ in 0..50 {
                if !quiet || LeaderEpochCache::from_entries(lines.clone()).entries() != lines {
                    break;
                }
                lines = gen_file(rng, start);
            }
            let cache = LeaderEpochCache::from_entries(lines.clone());
            match (start, cache.entries() == lines.as_slice()) {
                (Start::Duplicates, _) => cov.loads_with_duplicates += 1,
                (_, true) => cov.loads_in_order += 1,
                (_, false) => cov.loads_resolved += 1,
            }
            (
                Some(encode_leader_epoch_checkpoint(&lines).into_bytes()),
                cache,
            )
        }
    };
    if quiet {
        cov.quiet += 1;
        let &(le, lo) = cache.entries().last().expect("a file has entries");
        let first = cache.entries()[0].1;
        let ops = (0..rng.gen_range(1..8))
            .map(|_| match rng.gen_range(0..5) {
                0 => Op::Reload,
                1 => Op::Assign(le, lo + rng.gen_range(0..50), Shape::RepeatLatest),
                2 => Op::TruncateFromEnd(lo + rng.gen_range(1..50)),
                3 => Op::TruncateFromEnd(-1),
                _ => Op::TruncateFromStart(first - 1),
            })
            .collect();
        return Case {
            id: format!("e{i}"),
            file,
            ops,
            quiet,
        };
    }
    // Kinds of operation: 0..7 the assign shapes, 7 truncate_from_end, 8
    // truncate_from_start, 9 reload.
    let n = rng.gen_range(4..40);
    let mut ops = Vec::with_capacity(n);
    for k in 0..n {
        let kind = if k == 0 {
            (i / STARTS.len()) % 10
        } else {
            match rng.gen_range(0..100) {
                0..=59 => rng.gen_range(0..SHAPES.len()),
                60..=74 => 7,
                75..=89 => 8,
                _ => 9,
            }
        };
        let op = match kind {
            0..=6 => match gen_assign(rng, &cache, SHAPES[kind]) {
                Some(op) => op,
                None => gen_assign(rng, &cache, Shape::Newer).expect("a newer epoch"),
            },
            7 | 8 => {
                let negative = rng.gen_bool(0.05);
                let x = target(rng, &cache, negative);
                if kind == 7 {
                    Op::TruncateFromEnd(x)
                } else {
                    Op::TruncateFromStart(x)
                }
            }
            _ => Op::Reload,
        };
        match op {
            Op::Assign(e, o, s) => {
                cov.assigns[s as usize] += 1;
                cov.assigns_changed += usize::from(cache.assign(e, o));
            }
            Op::TruncateFromEnd(x) => {
                cov.ends += 1;
                cov.negative_targets += usize::from(x < 0);
                cov.ends_removing += usize::from(cache.truncate_from_end(x));
            }
            Op::TruncateFromStart(x) => {
                cov.starts += 1;
                cov.negative_targets += usize::from(x < 0);
                cov.starts_changing += usize::from(cache.truncate_from_start(x));
            }
            Op::Reload => cov.reloads += 1,
        }
        ops.push(op);
    }
    Case {
        id: format!("e{i}"),
        file,
        ops,
        quiet,
    }
}

/// Our side of one case in `dir`: the state after the load and after each operation (the
/// helper's line format), and whether the sabotage damaged an operation.
struct Ours {
    states: Vec<String>,
    /// The entries at the end.
    entries: Vec<(i32, i64)>,
    damaged: bool,
}

/// Loads `path` as `Log` does: our parser, then Kafka's assign rule over the lines; a file
/// the rule changed is rewritten with what it kept. A missing file is an empty cache.
fn load(path: &Path) -> Result<LeaderEpochCache, String> {
    match read_leader_epoch_checkpoint(path).map_err(|e| format!("load: {e}"))? {
        None if path.exists() => Err(format!(
            "load: our reader refused {} (malformed?)",
            path.display()
        )),
        None => Ok(LeaderEpochCache::new()),
        Some(lines) => {
            let cache = LeaderEpochCache::from_entries(lines.clone());
            if cache.entries() != lines.as_slice() {
                write(path, &cache)?;
            }
            Ok(cache)
        }
    }
}

fn write(path: &Path, c: &LeaderEpochCache) -> Result<(), String> {
    write_file_atomically(
        &RealFs,
        path,
        encode_leader_epoch_checkpoint(c.entries()).as_bytes(),
    )
    .map_err(|e| format!("write: {e}"))
}

/// Runs `c` with our types in `dir`. With `keep_equal` (the sabotage
/// `k4-equal-offset-kept`) an assign of another epoch at the latest entry's start offset
/// is dropped, so the older epoch stays where Kafka replaces it.
fn run_ours(c: &Case, dir: &Path, keep_equal: bool) -> Result<Ours, String> {
    let path = dir.join(LEADER_EPOCH_CHECKPOINT_FILE);
    let mut cache = load(&path)?;
    let mut out = Ours {
        states: vec![format!("open {}", state_text(&cache))],
        entries: Vec::new(),
        damaged: false,
    };
    for (k, op) in c.ops.iter().enumerate() {
        let changed = match *op {
            Op::Assign(e, o, _) => {
                let equal = cache
                    .entries()
                    .last()
                    .is_some_and(|&(le, lo)| lo == o && le != e);
                if keep_equal && equal {
                    out.damaged = true;
                    false
                } else {
                    cache.assign(e, o)
                }
            }
            Op::TruncateFromEnd(x) => cache.truncate_from_end(x),
            Op::TruncateFromStart(x) => cache.truncate_from_start(x),
            Op::Reload => {
                cache = load(&path)?;
                false
            }
        };
        if changed {
            write(&path, &cache)?;
        }
        out.states.push(format!("{k} {}", state_text(&cache)));
    }
    out.entries = cache.entries().to_vec();
    Ok(out)
}

fn case_text(c: &Case, kafka_dir: &Path) -> String {
    let mut s = format!("case {} {}\n", c.id, kafka_dir.display());
    for op in &c.ops {
        let _ = writeln!(s, "op {}", op.text());
    }
    s.push_str("end\n");
    s
}

/// What a file holds, for a finding: its lines joined by `|`, or `absent`.
fn show(bytes: Option<&[u8]>) -> String {
    match bytes {
        None => "absent".into(),
        Some(b) => format!("{:?}", String::from_utf8_lossy(b).replace('\n', "|")),
    }
}

/// The K4 scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let dir = ctx.scratch.join("k4");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let seed = ctx.seed;
    let replay =
        format!("seed {seed}, replay with `cargo xtask kafka --only k4-epochs --seed {seed}`");
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b34);
    let mut cov = Coverage::default();
    let n_cases = 40 * ctx.scale as usize;
    let cases: Vec<Case> = (0..n_cases)
        .map(|i| gen_case(&mut rng, i, &mut cov))
        .collect();
    let keep_equal = ctx.sabotaged("k4-equal-offset-kept");
    let mut damaged = 0usize;
    let mut input = String::new();
    let mut ours_runs: Vec<Result<Ours, String>> = Vec::new();
    let mut dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
    for c in &cases {
        let (od, kd) = (
            dir.join(format!("{}-ours", c.id)),
            dir.join(format!("{}-kafka", c.id)),
        );
        for d in [&od, &kd] {
            std::fs::create_dir_all(d).map_err(|e| format!("{d:?}: {e}"))?;
            if let Some(bytes) = &c.file {
                let p = d.join(LEADER_EPOCH_CHECKPOINT_FILE);
                std::fs::write(&p, bytes).map_err(|e| format!("{p:?}: {e}"))?;
            }
        }
        let r = run_ours(c, &od, keep_equal);
        if let Ok(o) = &r {
            damaged += usize::from(o.damaged);
        }
        ours_runs.push(r);
        input.push_str(&case_text(c, &kd));
        dirs.push((od, kd));
    }
    if keep_equal {
        eprintln!("kafka k4-epochs: sabotage k4-equal-offset-kept: {damaged} cases damaged");
    }
    let cases_file = dir.join("cases.txt");
    let answers_file = dir.join("answers.txt");
    std::fs::write(&cases_file, input).map_err(|e| e.to_string())?;
    ctx.jvm.run(
        "oracle.Oracle",
        &[
            "k4-epochs".into(),
            cases_file.display().to_string(),
            answers_file.display().to_string(),
        ],
        Duration::from_secs(300),
    )?;
    let text = std::fs::read_to_string(&answers_file).map_err(|e| e.to_string())?;
    let mut kafka: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for line in text.lines() {
        if let Some((id, rest)) = line.split_once(' ') {
            kafka.entry(id).or_default().push(rest);
        }
    }
    let (mut compared, mut files, mut flushes, mut ops) = (0usize, 0usize, 0usize, 0usize);
    let mut diffs = Vec::new();
    let mut deviations = 0usize;
    for ((c, ours), (od, kd)) in cases.iter().zip(&ours_runs).zip(&dirs) {
        ops += c.ops.len();
        let ours = match ours {
            Ok(o) => o,
            Err(e) => {
                diffs.push(format!("{}: our history failed: {e}", c.id));
                continue;
            }
        };
        let Some(k) = kafka.get(c.id.as_str()) else {
            diffs.push(format!("{}: no answers from Kafka", c.id));
            continue;
        };
        let (k_states, k_tail): (Vec<&str>, Vec<&str>) =
            k.iter().partition(|l| !l.starts_with("flushes "));
        match k_tail.first().and_then(|l| l.strip_prefix("flushes ")) {
            Some(n) => flushes += n.parse::<usize>().unwrap_or(0),
            None => diffs.push(format!(
                "{}: Kafka did not finish the history: {:?}",
                c.id,
                k_states.last()
            )),
        }
        // The first state that differs (later ones follow from it).
        let first = ours
            .states
            .iter()
            .zip(&k_states)
            .position(|(a, b)| a != b)
            .or((ours.states.len() != k_states.len())
                .then(|| ours.states.len().min(k_states.len())));
        compared += 2 * ours.states.len().min(k_states.len());
        if let Some(at) = first {
            let what = match at {
                0 => format!("the load of {}", show(c.file.as_deref())),
                k => format!("op {} {}", k - 1, c.ops[k - 1].what()),
            };
            diffs.push(format!(
                "{}: after {what}: ours `{}`, Kafka's `{}`",
                c.id,
                ours.states.get(at).map_or("(none)", String::as_str),
                k_states.get(at).copied().unwrap_or("(none)")
            ));
            continue;
        }
        // The files, whole.
        files += 1;
        let read = |d: &Path| std::fs::read(d.join(LEADER_EPOCH_CHECKPOINT_FILE)).ok();
        let (a, b) = (read(od), read(kd));
        let equal = match (&a, &b) {
            (Some(x), Some(y)) => x == y,
            // Kafka's constructor creates the file empty; ours writes one only on a change.
            (None, Some(y)) => y.is_empty(),
            _ => false,
        };
        if equal {
            if c.quiet {
                diffs.push(format!(
                    "{}: Kafka wrote its checkpoint in a quiet case (loaded {}, Kafka's {})",
                    c.id,
                    show(c.file.as_deref()),
                    show(b.as_deref())
                ));
            }
            continue;
        }
        // The documented deviation: Kafka's load does not rewrite a file the assign rule
        // changed, ours does; Kafka's file is the loaded bytes if it never wrote since.
        let ours_is_entries =
            a.as_deref() == Some(encode_leader_epoch_checkpoint(&ours.entries).as_bytes());
        let load_changed = c.file.as_deref().is_some_and(|f| {
            let lines = decode_leader_epoch_checkpoint(f).unwrap_or_default();
            LeaderEpochCache::from_entries(lines.clone()).entries() != lines.as_slice()
        });
        if load_changed && b.as_deref() == c.file.as_deref() && ours_is_entries {
            deviations += 1;
            continue;
        }
        diffs.push(format!(
            "{}: checkpoint files differ: ours {}, Kafka's {}",
            c.id,
            show(a.as_deref()),
            show(b.as_deref())
        ));
    }
    if keep_equal && damaged == 0 {
        diffs.push(
            "sabotage k4-equal-offset-kept: no assign at an equal start offset to damage".into(),
        );
    }
    let missing = cov.missing();
    if !missing.is_empty() {
        diffs.push(format!(
            "the generated histories have no {}: {cov:?}",
            missing.join(", ")
        ));
    }
    let a = |s: Shape| cov.assign_count(s);
    let line = format!(
        "seed {seed}: {} cases, {ops} ops ({} loads: {} in order, {} resolved by assign, {} with duplicate lines; {} assigns: {} first, {} new epoch, {} latest again, {} latest lower, {} equal start offset, {} earlier start offset, {} offset down, {} lower epoch, {} changed the cache; {} truncate_from_end ({} removing), {} truncate_from_start ({} changing), {} at -1; {} reloads; {} async flushes by Kafka), {compared} answers compared, {files} checkpoint files compared whole, {deviations} documented deviations checked, {} mismatches",
        cases.len(),
        cov.loads_in_order + cov.loads_resolved + cov.loads_with_duplicates,
        cov.loads_in_order,
        cov.loads_resolved,
        cov.loads_with_duplicates,
        cov.assigns.iter().sum::<usize>(),
        a(Shape::First),
        a(Shape::Newer),
        a(Shape::RepeatLatest),
        a(Shape::LatestLower),
        a(Shape::EqualOffset),
        a(Shape::EarlierOffset),
        a(Shape::LowerOffset),
        a(Shape::LowerEpoch),
        cov.assigns_changed,
        cov.ends,
        cov.ends_removing,
        cov.starts,
        cov.starts_changing,
        cov.negative_targets,
        cov.reloads,
        flushes,
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line} ({replay}):\n  {}", diffs.join("\n  ")))
    }
}
