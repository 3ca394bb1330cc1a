//! K3: differential index tests. Random index histories are applied by our crates and by
//! Kafka's `OffsetIndex`, `TimeIndex` and `TransactionIndex` (the helper's `IndexOracle`),
//! each writing its own file. A history is appends, then one to three events, each
//! followed by more appends: `truncate_to` an offset or `truncate_to_entries`; a clean
//! close (trimmed) and a reopen, then a resize; a close **without** the trim and a reopen
//! (every slot of the file is then an entry, zero slots included, by Kafka's rules), then
//! maybe a truncation or a resize; a resize. The first event of case `i` is chosen by `i`,
//! so every run has every kind; the result line counts them. The RNG comes from the run's
//! seed (`--seed` replays it). Then:
//!
//! * the two files must be byte-identical;
//! * Kafka's classes answer `lookup`, `fetchUpperBoundOffset`, `collectAbortedTxns`,
//!   `sanityCheck` and the entry count on **our** file and on **theirs**, and our crates do
//!   the same on both files: all four answer lists must be equal.
//!
//! Targets are random, plus every neighbour of entries around the warm/cold boundary (the
//! last 8 KiB of an index, Kafka's warm section). Documented deviations get their own cases
//! (`dev-*`), which check exactly the documented difference.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use index_offset::{OffsetIndex, OffsetPosition, RawOffsetEntry};
use index_time::TimeIndex;
use index_txn::{AbortedTxn, TransactionIndex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::Ctx;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Offset,
    Time,
    Txn,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Offset => "offset",
            Kind::Time => "time",
            Kind::Txn => "txn",
        }
    }

    fn entry_size(self) -> usize {
        match self {
            Kind::Offset => 8,
            Kind::Time => 12,
            Kind::Txn => 34,
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Append(Vec<i64>),
    TruncateTo(i64),
    /// Kafka's (private) `truncateToEntries`: the entry count set to `n <= entries`.
    TruncateToEntries(usize),
    Resize(usize),
    /// A clean close (trimmed to the used bytes, as a segment closes) and a reopen.
    Reopen,
    /// A close without the trim (Kafka 4.4's `AbstractIndex.close`, a crash) and a reopen:
    /// the file keeps its length, and every slot of it counts as an entry.
    ReopenUntrimmed,
}

#[derive(Clone, Debug)]
enum Query {
    Lookup(i64),
    Upper(u32, i32),
    Collect(i64, i64),
}

struct Case {
    id: String,
    kind: Kind,
    base: i64,
    max_size: usize,
    ops: Vec<Op>,
    queries: Vec<Query>,
    /// A raw file given instead of one written by both sides (deviation cases).
    raw: Option<Vec<u8>>,
}

/// Warm section of Kafka's indexes, in bytes.
const WARM_BYTES: usize = 8192;

/// Timestamps of the generated time-index entries start here.
const T0: i64 = 1_700_000_000_000;

fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

enum Idx {
    Offset(OffsetIndex),
    Time(TimeIndex),
    Txn(TransactionIndex),
}

/// One of our indexes with its history's parameters: applies [`Op`]s with our crates.
/// Used twice: by the generator (a scratch file whose state decides which operation is
/// valid next, e.g. how many slots an untrimmed reopen left) and by [`write_ours`].
struct Live {
    kind: Kind,
    base: i64,
    max_size: usize,
    path: PathBuf,
    idx: Option<Idx>,
}

impl Live {
    fn open(kind: Kind, base: i64, max_size: usize, path: &Path) -> Result<Live, String> {
        let mut l = Live {
            kind,
            base,
            max_size,
            path: path.to_path_buf(),
            idx: None,
        };
        l.idx = Some(l.open_idx("open")?);
        Ok(l)
    }

    fn open_idx(&self, what: &str) -> Result<Idx, String> {
        let (p, b, m) = (&self.path, self.base, self.max_size);
        Ok(match self.kind {
            Kind::Offset => Idx::Offset(OffsetIndex::open(p, b, m).map_err(e(what))?),
            Kind::Time => Idx::Time(TimeIndex::open(p, b, m).map_err(e(what))?),
            Kind::Txn => Idx::Txn(TransactionIndex::open(p, b).map_err(e(what))?),
        })
    }

    fn idx(&self) -> &Idx {
        self.idx.as_ref().expect("open")
    }

    fn entries(&self) -> Result<usize, String> {
        Ok(match self.idx() {
            Idx::Offset(i) => i.entries(),
            Idx::Time(i) => i.entries(),
            Idx::Txn(i) => i.len().map_err(e("len"))?,
        })
    }

    /// File length in bytes (0 for the transaction index: it is not preallocated).
    fn length(&self) -> usize {
        match self.idx() {
            Idx::Offset(i) => i.length(),
            Idx::Time(i) => i.length(),
            Idx::Txn(_) => 0,
        }
    }

    fn is_full(&self) -> bool {
        match self.idx() {
            Idx::Offset(i) => i.is_full(),
            Idx::Time(i) => i.is_full(),
            Idx::Txn(_) => false,
        }
    }

    /// Every entry as (key, value): (offset, position), (timestamp, offset) or
    /// (last offset, first offset).
    fn slots(&self) -> Result<Vec<(i64, i64)>, String> {
        Ok(match self.idx() {
            Idx::Offset(i) => i
                .all_entries()
                .map_err(e("all_entries"))?
                .iter()
                .map(|x| (x.offset, i64::from(x.position)))
                .collect(),
            Idx::Time(i) => i
                .all_entries()
                .map_err(e("all_entries"))?
                .iter()
                .map(|x| (x.timestamp, x.offset))
                .collect(),
            Idx::Txn(i) => i
                .all_aborted_txns()
                .map_err(e("all_aborted_txns"))?
                .iter()
                .map(|t| (t.last_offset, t.first_offset))
                .collect(),
        })
    }

    fn apply(&mut self, op: &Op) -> Result<(), String> {
        match (op, self.idx.as_ref().expect("open")) {
            (Op::Append(a), Idx::Offset(i)) => i.append(a[0], a[1] as u32).map_err(e("append")),
            (Op::Append(a), Idx::Time(i)) => i
                .maybe_append(a[0], a[1])
                .map(|_| ())
                .map_err(e("maybe_append")),
            (Op::Append(a), Idx::Txn(i)) => i
                .append(&AbortedTxn::new(a[0], a[1], a[2], a[3]))
                .map_err(e("append")),
            (Op::TruncateTo(x), Idx::Offset(i)) => i.truncate_to(*x).map_err(e("truncate_to")),
            (Op::TruncateTo(x), Idx::Time(i)) => i.truncate_to(*x).map_err(e("truncate_to")),
            (Op::TruncateTo(x), Idx::Txn(i)) => i.truncate_to(*x).map_err(e("truncate_to")),
            (Op::TruncateToEntries(n), Idx::Offset(i)) => i
                .index_file()
                .truncate_to_entries(*n)
                .map_err(e("truncate_to_entries")),
            (Op::TruncateToEntries(n), Idx::Time(i)) => i
                .index_file()
                .truncate_to_entries(*n)
                .map_err(e("truncate_to_entries")),
            (Op::Resize(n), Idx::Offset(i)) => i.resize(*n).map(|_| ()).map_err(e("resize")),
            (Op::Resize(n), Idx::Time(i)) => i.resize(*n).map(|_| ()).map_err(e("resize")),
            (Op::Reopen, _) => {
                match self.idx.take().expect("open") {
                    Idx::Offset(i) => i.close().map_err(e("close"))?,
                    Idx::Time(i) => i.close().map_err(e("close"))?,
                    Idx::Txn(i) => i.close(),
                }
                self.idx = Some(self.open_idx("reopen")?);
                Ok(())
            }
            (Op::ReopenUntrimmed, Idx::Offset(_) | Idx::Time(_)) => {
                match self.idx.take().expect("open") {
                    Idx::Offset(i) => i.force_unmap(),
                    Idx::Time(i) => i.force_unmap(),
                    Idx::Txn(_) => unreachable!(),
                }
                self.idx = Some(self.open_idx("untrimmed reopen")?);
                Ok(())
            }
            (op, _) => Err(format!("{op:?} on a {} index", self.kind.name())),
        }
    }

    /// The sabotage `k3-late-slot`: the last offset-index entry moves one slot late (the
    /// slot it belongs in is left zero). Returns whether it could be done (an offset index
    /// with an entry and a free slot).
    fn late_slot(&mut self) -> Result<bool, String> {
        let Idx::Offset(i) = self.idx() else {
            return Ok(false);
        };
        let f = i.index_file();
        let n = f.entries();
        if n == 0 || n >= f.max_entries() {
            return Ok(false);
        }
        let last = f.entry(n - 1).map_err(e("entry"))?;
        f.truncate_to_entries(n - 1)
            .map_err(e("truncate_to_entries"))?;
        f.append(&RawOffsetEntry::new(0, 0)).map_err(e("append"))?;
        f.append(&last).map_err(e("append"))?;
        Ok(true)
    }

    /// Closes as a segment does: trimmed to the used bytes.
    fn close(mut self) -> Result<(), String> {
        match self.idx.take().expect("open") {
            Idx::Offset(i) => i.close().map_err(e("close")),
            Idx::Time(i) => i.close().map_err(e("close")),
            Idx::Txn(i) => {
                i.close();
                Ok(())
            }
        }
    }
}

/// The later events of a history, each followed by more appends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Event {
    /// `truncate_to` an offset.
    Truncate,
    /// `truncate_to_entries`.
    TruncateEntries,
    /// A clean close, a reopen (the index is then full) and a resize, as a log does when
    /// it loads its active segment.
    Reopen,
    /// A close without the trim and a reopen, then maybe a truncation or a resize.
    Untrimmed,
    /// A resize, growing or shrinking (never below the used bytes).
    Resize,
}

const EVENTS: &[Event] = &[
    Event::Truncate,
    Event::TruncateEntries,
    Event::Reopen,
    Event::Untrimmed,
    Event::Resize,
];
const TXN_EVENTS: &[Event] = &[Event::Truncate, Event::Reopen];

/// What the generated histories did, for the result line (and the check that every kind
/// of operation was generated).
#[derive(Default, Debug)]
struct Coverage {
    truncates: usize,
    truncates_to_entries: usize,
    reopens: usize,
    untrimmed_reopens: usize,
    resizes: usize,
    after_truncate: usize,
    after_reopen: usize,
    after_untrimmed: usize,
    after_resize: usize,
}

impl Coverage {
    fn count(&mut self, op: &Op) {
        match op {
            Op::TruncateTo(_) => self.truncates += 1,
            Op::TruncateToEntries(_) => self.truncates_to_entries += 1,
            Op::Reopen => self.reopens += 1,
            Op::ReopenUntrimmed => self.untrimmed_reopens += 1,
            Op::Resize(_) => self.resizes += 1,
            Op::Append(_) => {}
        }
    }

    fn appended(&mut self, since: Option<Event>) {
        match since {
            None => {}
            Some(Event::Truncate | Event::TruncateEntries) => self.after_truncate += 1,
            Some(Event::Reopen) => self.after_reopen += 1,
            Some(Event::Untrimmed) => self.after_untrimmed += 1,
            Some(Event::Resize) => self.after_resize += 1,
        }
    }

    /// The kinds of operation no history exercised.
    fn missing(&self) -> Vec<&'static str> {
        [
            (self.truncates, "truncate_to"),
            (self.truncates_to_entries, "truncate_to_entries"),
            (self.reopens, "reopen"),
            (self.untrimmed_reopens, "untrimmed reopen"),
            (self.resizes, "resize"),
            (self.after_truncate, "appends after truncate"),
            (self.after_reopen, "appends after reopen"),
            (self.after_untrimmed, "appends after an untrimmed reopen"),
            (self.after_resize, "appends after resize"),
        ]
        .iter()
        .filter(|(n, _)| *n == 0)
        .map(|(_, w)| *w)
        .collect()
    }
}

/// A history being generated: the operations so far, applied to `live` as they are
/// chosen, so that each next one is valid for Kafka too (no append to a full index, no
/// decreasing offset, no resize below the used bytes).
struct Gen<'a> {
    live: Live,
    ops: Vec<Op>,
    cov: &'a mut Coverage,
    since: Option<Event>,
}

impl Gen<'_> {
    fn apply(&mut self, op: Op) -> Result<(), String> {
        self.live
            .apply(&op)
            .map_err(|err| format!("generator: {op:?}: {err}"))?;
        self.cov.count(&op);
        self.ops.push(op);
        Ok(())
    }

    /// Appends one random entry valid after the current last one; `false` if full.
    fn append(&mut self, rng: &mut StdRng) -> Result<bool, String> {
        if self.live.is_full() {
            return Ok(false);
        }
        let base = self.live.base;
        let op = match self.live.idx() {
            Idx::Offset(i) => {
                let last = i.last_entry().map_err(e("last_entry"))?;
                let off = if i.entries() == 0 {
                    base + rng.gen_range(0..40)
                } else {
                    last.offset + rng.gen_range(1..40)
                };
                let pos = i64::from(last.position) + rng.gen_range(0..5000);
                Op::Append(vec![off, pos])
            }
            Idx::Time(i) => {
                // Offsets and timestamps never decrease (both sides refuse that); an
                // equal timestamp is ignored by maybeAppend, on both sides.
                let last = i.last_entry().map_err(e("last_entry"))?;
                let off = last.offset.max(base) + rng.gen_range(0..30);
                let ts = if last.timestamp < T0 {
                    T0 + rng.gen_range(0..400)
                } else {
                    last.timestamp + rng.gen_range(0..400) * i64::from(rng.gen_bool(0.9))
                };
                Op::Append(vec![ts, off])
            }
            Idx::Txn(i) => {
                let prev = i
                    .all_aborted_txns()
                    .map_err(e("all_aborted_txns"))?
                    .last()
                    .map_or(base - 1, |t| t.last_offset);
                let last = prev.max(base) + rng.gen_range(1..200);
                let first = last - rng.gen_range(0..500);
                let lso = first.min(last) - rng.gen_range(0..50);
                let pid = rng.gen_range(0..20);
                Op::Append(vec![pid, first, last, lso])
            }
        };
        self.apply(op)?;
        self.cov.appended(self.since);
        Ok(true)
    }

    fn appends(&mut self, rng: &mut StdRng, n: usize) -> Result<(), String> {
        for _ in 0..n {
            if !self.append(rng)? {
                break;
            }
        }
        Ok(())
    }

    /// A `truncate_to` target: mostly an entry's offset (or one past it), sometimes any
    /// offset around the entries.
    fn truncate_target(&self, rng: &mut StdRng) -> Result<i64, String> {
        let offsets: Vec<i64> = self
            .live
            .slots()?
            .iter()
            .map(|&(k, v)| if self.live.kind == Kind::Time { v } else { k })
            .collect();
        let base = self.live.base;
        let (lo, hi) = (
            offsets.iter().copied().min().unwrap_or(base),
            offsets.iter().copied().max().unwrap_or(base),
        );
        Ok(if offsets.is_empty() || rng.gen_bool(0.25) {
            rng.gen_range(lo - 5..=hi + 5)
        } else {
            offsets[rng.gen_range(0..offsets.len())] + rng.gen_range(0..2)
        })
    }

    /// A resize to at least the used bytes: `from` plus some slots and a few stray bytes
    /// (both sides round down).
    fn resize_size(&self, rng: &mut StdRng, from: usize, min_slots: usize) -> usize {
        let entry = self.live.kind.entry_size();
        from + rng.gen_range(min_slots..min_slots + 300) * entry + rng.gen_range(0..entry)
    }

    fn event(&mut self, rng: &mut StdRng, ev: Event, forced: bool) -> Result<(), String> {
        let entry = self.live.kind.entry_size();
        match ev {
            Event::Truncate => {
                let x = self.truncate_target(rng)?;
                self.apply(Op::TruncateTo(x))?;
            }
            Event::TruncateEntries => {
                let n = self.live.entries()?;
                let k = rng.gen_range(0..=n);
                self.apply(Op::TruncateToEntries(if forced {
                    k.min(n.saturating_sub(2))
                } else {
                    k
                }))?;
            }
            Event::Reopen => {
                self.apply(Op::Reopen)?;
                if self.live.kind != Kind::Txn {
                    // Reopened trimmed, the index is full: a log resizes its active
                    // segment's indexes to the max index size when it loads them.
                    let used = self.live.entries()? * entry;
                    let size = if rng.gen_bool(0.6) && self.live.max_size >= used + 2 * entry {
                        self.live.max_size
                    } else {
                        self.resize_size(rng, used, 2)
                    };
                    self.apply(Op::Resize(size))?;
                }
            }
            Event::Untrimmed => {
                self.apply(Op::ReopenUntrimmed)?;
                // Every slot is an entry now, so the index is full; free some room (or
                // not: then the file is closed with the zero slots as entries).
                match rng.gen_range(0..if forced { 3 } else { 4 }) {
                    0 => {
                        let n = self.live.entries()?;
                        self.apply(Op::TruncateToEntries(rng.gen_range(0..n.max(1))))?;
                    }
                    1 => {
                        let x = self.truncate_target(rng)?;
                        self.apply(Op::TruncateTo(x))?;
                    }
                    2 => {
                        let size = self.resize_size(rng, self.live.length(), 2);
                        self.apply(Op::Resize(size))?;
                    }
                    _ => {}
                }
            }
            Event::Resize => {
                let used = self.live.entries()? * entry;
                let size = self.resize_size(rng, used, if forced { 2 } else { 0 });
                self.apply(Op::Resize(size))?;
            }
        }
        self.since = Some(ev);
        Ok(())
    }
}

/// Case `i`: appends, then one to three events (truncate, reopen, untrimmed reopen,
/// resize), each followed by more appends; the first event is chosen by `i`, so that
/// every kind of event is in every run. The history is played on our index at `scratch`
/// as it is generated (see [`Gen`]).
fn gen_case(
    rng: &mut StdRng,
    i: usize,
    scratch: &Path,
    cov: &mut Coverage,
) -> Result<Case, String> {
    let kind = [Kind::Offset, Kind::Time, Kind::Txn][i % 3];
    let base: i64 = if rng.gen_bool(0.3) {
        0
    } else {
        rng.gen_range(0..1_000_000_000)
    };
    let entry = kind.entry_size();
    // Sizes around the warm/cold boundary and beyond it.
    let warm_entries = WARM_BYTES / entry;
    let n: usize = match rng.gen_range(0..5) {
        0 => rng.gen_range(0..20),
        1 => warm_entries + rng.gen_range(0..4) - 2,
        2 => rng.gen_range(warm_entries..3 * warm_entries),
        _ => rng.gen_range(0..2 * warm_entries),
    };
    let n = if kind == Kind::Txn { n.min(300) } else { n };
    // Capacity: exactly full (time index: one reserved slot) or with room; the size given
    // is not always a multiple of the entry size (both round down).
    let full = rng.gen_bool(0.25);
    let cap = if full {
        n + usize::from(kind == Kind::Time)
    } else {
        n + 1 + rng.gen_range(0..500)
    };
    let max_size = (cap.max(2) * entry) + rng.gen_range(0..entry);
    let id = format!("c{i}-{}", kind.name());
    let path = scratch.join(&id);
    let _ = std::fs::remove_file(&path);
    let mut g = Gen {
        live: Live::open(kind, base, max_size, &path)?,
        ops: Vec::new(),
        cov,
        since: None,
    };
    g.appends(rng, n)?;
    let events = if kind == Kind::Txn {
        TXN_EVENTS
    } else {
        EVENTS
    };
    for k in 0..rng.gen_range(1..=3) {
        let ev = if k == 0 {
            events[(i / 3) % events.len()]
        } else {
            events[rng.gen_range(0..events.len())]
        };
        g.event(rng, ev, k == 0)?;
        let more = match rng.gen_range(0..4) {
            0 => 0,
            1 | 2 => rng.gen_range(1..30),
            _ => rng.gen_range(1..2 * warm_entries),
        };
        let more = if kind == Kind::Txn {
            more.min(100)
        } else {
            more
        };
        g.appends(rng, if k == 0 { more.max(1) } else { more })?;
    }
    // The entries as both sides will have them after the final (trimmed) close.
    let model = g.live.slots()?;
    let ops = std::mem::take(&mut g.ops);
    g.live.close()?;
    let _ = std::fs::remove_file(&path);
    // Queries: random targets, and neighbours of the entries around the warm boundary.
    let mut queries = Vec::new();
    let keys: Vec<i64> = model
        .iter()
        .map(|&(k, v)| if kind == Kind::Txn { v } else { k })
        .collect();
    let (lo, hi) = match (keys.iter().min(), keys.iter().max()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (base, base + 100),
    };
    match kind {
        Kind::Offset | Kind::Time => {
            for _ in 0..150 {
                queries.push(Query::Lookup(rng.gen_range(lo - 20..=hi + 20)));
            }
            let boundary = model.len().saturating_sub(warm_entries);
            let around = boundary.saturating_sub(3)..(boundary + 3).min(model.len());
            for &(k, _) in &model[around] {
                for d in -1..=1 {
                    queries.push(Query::Lookup(k + d));
                }
            }
            for _ in 0..10 {
                if let Some(&(k, _)) = model.get(rng.gen_range(0..model.len().max(1))) {
                    queries.push(Query::Lookup(k));
                }
            }
            if kind == Kind::Offset {
                let max_pos = model.iter().map(|&(_, p)| p).max().unwrap_or(1000) as u32;
                for _ in 0..60 {
                    queries.push(Query::Upper(
                        rng.gen_range(0..=max_pos + 100),
                        rng.gen_range(0..20_000),
                    ));
                }
            }
        }
        Kind::Txn => {
            let top = model.iter().map(|&(l, _)| l).max().unwrap_or(base + 100);
            for _ in 0..150 {
                let f = rng.gen_range(base - 600..=top + 10);
                let u = f + rng.gen_range(0..2000);
                queries.push(Query::Collect(f, u));
            }
        }
    }
    Ok(Case {
        id,
        kind,
        base,
        max_size,
        ops,
        queries,
        raw: None,
    })
}

/// Deviation cases: a file shape where our crates deliberately answer otherwise.
fn deviation_cases(rng: &mut StdRng) -> Vec<Case> {
    // Deviation 1 of index-txn: a partial trailing entry. Kafka's sanityCheck ignores it;
    // ours reports it. Reads (collect) agree.
    let base = 1000;
    let mut raw = Vec::new();
    let mut last = base;
    for _ in 0..5 {
        last += rng.gen_range(1..50);
        raw.extend_from_slice(
            bytemuck_bytes(&AbortedTxn::new(7, last - 10, last, last - 20)).as_slice(),
        );
    }
    raw.extend_from_slice(&[0u8, 0, 0, 0, 0, 0, 0, 3, 1, 2]); // 10 bytes of an entry
    let queries = (0..40)
        .map(|_| {
            let f = rng.gen_range(base - 50..last + 10);
            Query::Collect(f, f + rng.gen_range(0..300))
        })
        .collect();
    vec![Case {
        id: "dev-txn-partial-tail".into(),
        kind: Kind::Txn,
        base,
        max_size: 0,
        ops: Vec::new(),
        queries,
        raw: Some(raw),
    }]
}

/// The 34 bytes of a version-0 transaction-index entry.
fn bytemuck_bytes(t: &AbortedTxn) -> Vec<u8> {
    let mut v = Vec::with_capacity(34);
    v.extend_from_slice(&0i16.to_be_bytes());
    v.extend_from_slice(&t.producer_id.to_be_bytes());
    v.extend_from_slice(&t.first_offset.to_be_bytes());
    v.extend_from_slice(&t.last_offset.to_be_bytes());
    v.extend_from_slice(&t.last_stable_offset.to_be_bytes());
    v
}

/// Whether the keys in an offset- or time-index file increase strictly (always true for
/// a transaction index).
/// Whether `ours` and `kafka` are `lookup T A B` answers for the same target `T`, and ours
/// `(A, B)` is a slot of `file` whose key is at most `T`: the documented deviation of the
/// fast key search on keys that do not increase strictly.
fn lookup_deviation(c: &Case, file: &[u8], ours: &str, kafka: &str) -> bool {
    let parse = |l: &str| -> Option<(i64, i64, i64)> {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w[..] {
            ["lookup", t, x, y] => Some((t.parse().ok()?, x.parse().ok()?, y.parse().ok()?)),
            _ => None,
        }
    };
    let (Some((t, key, value)), Some((tk, _, _))) = (parse(ours), parse(kafka)) else {
        return false;
    };
    if t != tk || key > t || c.kind == Kind::Txn {
        return false;
    }
    file.chunks_exact(c.kind.entry_size()).any(|e| {
        let slot = match c.kind {
            Kind::Offset => (
                c.base + i64::from(i32::from_be_bytes(e[..4].try_into().unwrap())),
                i64::from(i32::from_be_bytes(e[4..8].try_into().unwrap())),
            ),
            _ => (
                i64::from_be_bytes(e[..8].try_into().unwrap()),
                c.base + i64::from(i32::from_be_bytes(e[8..12].try_into().unwrap())),
            ),
        };
        slot == (key, value)
    })
}

fn keys_increase(kind: Kind, base: i64, bytes: &[u8]) -> bool {
    let key = |c: &[u8]| match kind {
        Kind::Offset => base + i64::from(i32::from_be_bytes(c[..4].try_into().unwrap())),
        _ => i64::from_be_bytes(c[..8].try_into().unwrap()),
    };
    kind == Kind::Txn
        || bytes
            .chunks_exact(kind.entry_size())
            .map(key)
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| w[0] < w[1])
}

/// Applies the history with our crates; with `late_slot` (the sabotage `k3-late-slot`),
/// damages the result if it can and says whether it did.
fn write_ours(c: &Case, path: &Path, late_slot: bool) -> Result<bool, String> {
    let mut live = Live::open(c.kind, c.base, c.max_size, path)?;
    for op in &c.ops {
        live.apply(op)?;
    }
    let damaged = late_slot && live.late_slot()?;
    live.close()?;
    Ok(damaged)
}

/// Our answers on `path`, in the helper's line format (without the `ID SIDE` prefix).
fn answer_ours(c: &Case, path: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    match c.kind {
        Kind::Offset => {
            let idx = OffsetIndex::open_read_only(path, c.base).map_err(e("open"))?;
            out.push(format!("entries {}", idx.entries()));
            out.push(format!(
                "sanity {}",
                if idx.sanity_check().is_ok() {
                    "ok"
                } else {
                    "err"
                }
            ));
            for q in &c.queries {
                match q {
                    Query::Lookup(t) => {
                        let r = idx.lookup(*t).map_err(e("lookup"))?;
                        out.push(format!("lookup {t} {} {}", r.offset, r.position));
                    }
                    Query::Upper(p, s) => {
                        let r = idx
                            .fetch_upper_bound_offset(
                                OffsetPosition {
                                    offset: 0,
                                    position: *p,
                                },
                                *s,
                            )
                            .map_err(e("fetch_upper_bound_offset"))?;
                        out.push(format!(
                            "upper {p} {s} {}",
                            r.map_or("none".to_string(), |x| format!(
                                "{} {}",
                                x.offset, x.position
                            ))
                        ));
                    }
                    Query::Collect(..) => {}
                }
            }
        }
        Kind::Time => {
            let idx = TimeIndex::open_read_only(path, c.base).map_err(e("open"))?;
            out.push(format!("entries {}", idx.entries()));
            out.push(format!(
                "sanity {}",
                if idx.sanity_check().is_ok() {
                    "ok"
                } else {
                    "err"
                }
            ));
            for q in &c.queries {
                if let Query::Lookup(t) = q {
                    let r = idx.lookup(*t).map_err(e("lookup"))?;
                    out.push(format!("lookup {t} {} {}", r.timestamp, r.offset));
                }
            }
        }
        Kind::Txn => {
            let idx = TransactionIndex::open(path, c.base).map_err(e("open"))?;
            let all = idx.all_aborted_txns().map_err(e("all_aborted_txns"))?;
            out.push(format!("entries {}", all.len()));
            out.push(format!(
                "sanity {}",
                if idx.sanity_check().is_ok() {
                    "ok"
                } else {
                    "err"
                }
            ));
            for q in &c.queries {
                if let Query::Collect(f, u) = q {
                    let r = idx
                        .collect_aborted_txns(*f, *u)
                        .map_err(e("collect_aborted_txns"))?;
                    let mut s = format!(
                        "collect {f} {u} {}",
                        if r.is_complete { "complete" } else { "partial" }
                    );
                    for t in &r.aborted_transactions {
                        let _ = write!(
                            s,
                            " {}:{}:{}:{}",
                            t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset
                        );
                    }
                    out.push(s);
                }
            }
            idx.close();
        }
    }
    Ok(out)
}

fn case_text(c: &Case, ours: &Path, kafka: Option<&Path>) -> String {
    let mut s = format!(
        "case {} {} {} {} {} {}\n",
        c.id,
        c.kind.name(),
        c.base,
        c.max_size,
        ours.display(),
        kafka.map_or("-".to_string(), |k| k.display().to_string())
    );
    for op in &c.ops {
        match op {
            Op::Append(a) => {
                s.push_str("op append");
                for x in a {
                    let _ = write!(s, " {x}");
                }
                s.push('\n');
            }
            Op::TruncateTo(x) => {
                let _ = writeln!(s, "op truncate_to {x}");
            }
            Op::Resize(n) => {
                let _ = writeln!(s, "op resize {n}");
            }
            Op::TruncateToEntries(n) => {
                let _ = writeln!(s, "op truncate_to_entries {n}");
            }
            Op::Reopen => s.push_str("op reopen\n"),
            Op::ReopenUntrimmed => s.push_str("op reopen_untrimmed\n"),
        }
    }
    for q in &c.queries {
        match q {
            Query::Lookup(t) => {
                let _ = writeln!(s, "q lookup {t}");
            }
            Query::Upper(p, z) => {
                let _ = writeln!(s, "q upper {p} {z}");
            }
            Query::Collect(f, u) => {
                let _ = writeln!(s, "q collect {f} {u}");
            }
        }
    }
    s.push_str("end\n");
    s
}

/// The K3 scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let dir = ctx.scratch.join("k3");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // The run's seed, so that a failure replays with `--seed`.
    let seed = ctx.seed;
    let replay = format!("seed {seed}, replay with `cargo xtask kafka --only k3 --seed {seed}`");
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b33);
    let scratch = dir.join("gen");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let mut cov = Coverage::default();
    let mut cases = Vec::new();
    for i in 0..60 {
        cases.push(
            gen_case(&mut rng, i, &scratch, &mut cov).map_err(|e| format!("{e} ({replay})"))?,
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    cases.extend(deviation_cases(&mut rng));
    // The sabotage damages the first case it can (an offset index with a free slot).
    let mut late_slot = ctx.sabotaged("k3-late-slot");
    let ext = |k: Kind| match k {
        Kind::Offset => "index",
        Kind::Time => "timeindex",
        Kind::Txn => "txnindex",
    };
    let mut input = String::new();
    let mut paths = Vec::new();
    let mut diffs = Vec::new();
    for c in &cases {
        let ours = dir.join(format!("{}-ours.{}", c.id, ext(c.kind)));
        let kafka = dir.join(format!("{}-kafka.{}", c.id, ext(c.kind)));
        match &c.raw {
            Some(bytes) => {
                std::fs::write(&ours, bytes).map_err(|e| e.to_string())?;
                input.push_str(&case_text(c, &ours, None));
            }
            None => {
                match write_ours(c, &ours, late_slot) {
                    Ok(damaged) => {
                        if damaged {
                            eprintln!("kafka k3: sabotage k3-late-slot: {} damaged", c.id);
                            late_slot = false;
                        }
                    }
                    Err(err) => {
                        diffs.push(format!("{}: our history failed: {err}", c.id));
                        paths.push(None);
                        continue;
                    }
                }
                input.push_str(&case_text(c, &ours, Some(&kafka)));
            }
        }
        paths.push(Some((ours, kafka)));
    }
    let cases_file = dir.join("cases.txt");
    let answers_file = dir.join("answers.txt");
    std::fs::write(&cases_file, input).map_err(|e| e.to_string())?;
    ctx.jvm.run(
        "oracle.Oracle",
        &[
            "k3".into(),
            cases_file.display().to_string(),
            answers_file.display().to_string(),
        ],
        Duration::from_secs(300),
    )?;
    let text = std::fs::read_to_string(&answers_file).map_err(|e| e.to_string())?;
    let mut kafka_answers: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let mut it = line.splitn(3, ' ');
        let (Some(id), Some(side), Some(rest)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        kafka_answers
            .entry((id.to_string(), side.to_string()))
            .or_default()
            .push(rest.to_string());
    }
    let (mut compared, mut files, mut entries) = (0usize, 0usize, 0usize);
    let mut deviations = Vec::new();
    for (c, p) in cases.iter().zip(&paths) {
        let Some((ours_path, kafka_path)) = p else {
            continue;
        };
        let get = |side: &str| kafka_answers.get(&(c.id.clone(), side.to_string()));
        let Some(k_on_ours) = get("ours") else {
            diffs.push(format!(
                "{}: no answers from Kafka: {:?}",
                c.id,
                get("kafka")
            ));
            continue;
        };
        let ours_on_ours = answer_ours(c, ours_path)?;
        if c.raw.is_some() {
            // The documented deviation: only the sanity check differs, Kafka "ok", ours "err".
            let mut expected = k_on_ours.clone();
            if let Some(s) = expected.iter_mut().find(|l| l.starts_with("sanity ")) {
                if s == "sanity ok" {
                    *s = "sanity err".into();
                }
            }
            if k_on_ours.iter().any(|l| l == "sanity ok") && ours_on_ours == expected {
                deviations.push(format!(
                    "{}: Kafka's sanityCheck passes, ours reports the partial tail; {} reads equal",
                    c.id,
                    ours_on_ours.len() - 2
                ));
            } else {
                diffs.push(format!(
                    "{}: not exactly the documented deviation: kafka {:?} ours {:?}",
                    c.id,
                    &k_on_ours[..2.min(k_on_ours.len())],
                    &ours_on_ours[..2.min(ours_on_ours.len())]
                ));
            }
            compared += ours_on_ours.len();
            continue;
        }
        files += 2;
        let Some(k_on_kafka) = get("kafka") else {
            diffs.push(format!("{}: Kafka wrote no file", c.id));
            continue;
        };
        // Both absent is identical (a transaction index without entries is never created).
        if ours_path.exists() != kafka_path.exists() {
            diffs.push(format!(
                "{}: file exists: ours {}, Kafka's {}",
                c.id,
                ours_path.exists(),
                kafka_path.exists()
            ));
        }
        let a = std::fs::read(ours_path).unwrap_or_default();
        let b = std::fs::read(kafka_path).unwrap_or_default();
        if a != b {
            // The first differing byte (or the shorter length), and the entry there.
            let at = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            let entry = c.kind.entry_size();
            let slot = at / entry;
            let bytes = |f: &[u8]| {
                let r = (slot * entry).min(f.len())..((slot + 1) * entry).min(f.len());
                format!("{:02x?}", &f[r])
            };
            diffs.push(format!(
                "{}: files differ: ours {} bytes, Kafka's {} bytes, first difference at byte {at} (slot {slot}: ours {}, Kafka's {})",
                c.id,
                a.len(),
                b.len(),
                bytes(&a),
                bytes(&b)
            ));
        }
        let ours_on_kafka = answer_ours(c, kafka_path)?;
        entries += ours_on_ours
            .first()
            .and_then(|l| l.strip_prefix("entries ")?.parse::<usize>().ok())
            .unwrap_or(0);
        for (what, got) in [
            ("Kafka on Kafka's file", k_on_kafka),
            ("ours on ours", &ours_on_ours),
            ("ours on Kafka's file", &ours_on_kafka),
        ] {
            compared += got.len();
            // The documented deviation of index-core's fast key search (`search` docs):
            // on a file whose keys do not increase strictly, a lookup may answer another
            // slot than Kafka's bisection, which stops at the first exact match it meets.
            // Checked exactly: only `lookup` lines differ, for the same target, and ours
            // is a slot of the file whose key is at most the target.
            if what != "Kafka on Kafka's file"
                && got != k_on_ours
                && !keys_increase(c.kind, c.base, &a)
                && got.len() == k_on_ours.len()
                && got
                    .iter()
                    .zip(k_on_ours)
                    .all(|(x, y)| x == y || lookup_deviation(c, &a, x, y))
            {
                let n = got.iter().zip(k_on_ours).filter(|(x, y)| x != y).count();
                deviations.push(format!(
                    "{}: {what}: {n} lookups on keys that do not increase strictly answer another slot of the file than Kafka's bisection (ours a slot with key <= target)",
                    c.id
                ));
                continue;
            }
            if got != k_on_ours {
                let first = got
                    .iter()
                    .zip(k_on_ours)
                    .find(|(x, y)| x != y)
                    .map(|(x, y)| format!("{x} vs Kafka on ours: {y}"))
                    .unwrap_or_else(|| format!("{} vs {} answers", got.len(), k_on_ours.len()));
                // Not an excuse, a pointer: index-core's fast key search answers as
                // Kafka's only on strictly increasing keys (its `search` docs).
                let note = if keys_increase(c.kind, c.base, &a) {
                    String::new()
                } else {
                    format!(
                        " [the file's keys do not increase strictly (zero slots of an untrimmed reopen?); Kafka's {}]",
                        k_on_ours
                            .iter()
                            .find(|l| l.starts_with("sanity "))
                            .map_or("sanity ?", String::as_str)
                    )
                };
                diffs.push(format!("{}: {what}: {first}{note}", c.id));
            }
        }
        compared += k_on_ours.len();
    }
    for d in &deviations {
        eprintln!("kafka k3: deviation checked: {d}");
    }
    if late_slot {
        diffs.push("sabotage k3-late-slot: no case had an offset index to damage".into());
    }
    let missing = cov.missing();
    if !missing.is_empty() {
        diffs.push(format!(
            "the generated histories have no {}: {cov:?}",
            missing.join(", ")
        ));
    }
    let line = format!(
        "seed {seed}: {} cases ({} files, {} entries; {} appends after truncate, {} after reopen, {} after resize, {} untrimmed reopens with {} appends after them), {} answers compared, {} pairs of files compared whole, {} documented deviations checked, {} mismatches",
        cases.len(),
        files,
        entries,
        cov.after_truncate,
        cov.after_reopen,
        cov.after_resize,
        cov.untrimmed_reopens,
        cov.after_untrimmed,
        compared,
        files / 2,
        deviations.len(),
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line} ({replay}):\n  {}", diffs.join("\n  ")))
    }
}
