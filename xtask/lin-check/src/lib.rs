//! Linearizability of the whole [`segment::Log`] API, checked like a database (issue 37,
//! item 4): concurrent histories of `append_as_leader` (transactional producers with
//! their COMMIT and ABORT markers, idempotent and plain ones), `append` (the follower
//! path, racing the leaders in every fourth history, which has no `truncate_to`),
//! `read_with` at the three isolation levels and `read_region`, `update_high_watermark`,
//! `high_watermark`,
//! `last_stable_offset`, `producer_state`, `truncate_to`, `delete_records`, retention,
//! `roll`, `flush`, and `close` plus reopen as a barrier between phases
//! ([`workload`]), each checked against a sequential model of the log ([`model`]) by
//! the Wing–Gong algorithm with Lowe's memoisation, as Porcupine runs it ([`wgl`]).
//! The rules the model encodes are `docs/kafka-behaviour.md#fetch-isolation`,
//! `docs/kafka-behaviour.md#fetch-aborted-transactions`,
//! `docs/kafka-behaviour.md#high-watermark` and
//! `docs/kafka-behaviour.md#concurrent-reads`.
//!
//! # Why our own checker
//!
//! * `shuttle` (a deterministic scheduler) controls only the threads and locks built on
//!   its own primitives; `segment` synchronises through `parking_lot` locks, std atomics
//!   (the seqlock generation of its segment map, the published log end and high
//!   watermark) and `crossbeam-skiplist`, and its windows span `pwrite`s and `fsync`s,
//!   none of which shuttle schedules. Using it would mean rewriting the code under test.
//! * `stateright`'s `LinearizabilityTester` (0.31) compares each response with the one
//!   its `SequentialSpec::invoke` returns (`PartialEq`), so a read whose length a
//!   `max_bytes` cut or a segment end decides can only be checked through a contrived
//!   equality; its search backtracks over the interleavings without memoising
//!   (linearized set, state) pairs; and it brings twelve direct dependencies (an HTTP
//!   server and `serde_json` among them) into the test build. Measured on this
//!   workload with the same search and the memo switched off (`cargo xtask lin
//!   --no-memo`, which is the search shape of stateright's tester): on 6 histories of
//!   the `lin-aborted-drop` mutant (1,488 operations) the memoised search decides all
//!   six (4 anomalies) in 9,121 model steps and 0.9 s; without the memo 3 of the 6 are
//!   still undecided after 5,000,000 steps each (16.5 million steps, 12.4 s); for
//!   `lin-hw-unclamped`, 6,559 steps against 4 of 6 undecided after 20 million. On
//!   linearizable histories the memo saves a factor of 32 (12 histories, 2,923
//!   operations: 10,254 steps against 331,090).
//! * Porcupine is Go. The algorithm is small; implementing it ([`wgl`], about 150
//!   lines) keeps the model in Rust next to the code it checks.

pub mod model;
pub mod wgl;
pub mod workload;

use std::path::Path;
use std::time::{Duration, Instant};

/// Which high watermark the histories use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The high watermark follows the log end (a single-replica log).
    Auto,
    /// `LogOptions::manual_high_watermark`, moved by `update_high_watermark`.
    Manual,
    /// Alternating, one history each.
    Both,
}

/// A run's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Histories to record and check.
    pub histories: u64,
    /// The first history's seed (history `i` uses `seed + i`).
    pub seed: u64,
    /// Phases per history (a close and reopen between two).
    pub phases: usize,
    /// Operations per thread and phase.
    pub ops: usize,
    /// The high-watermark family.
    pub family: Family,
    /// Memoise (linearized set, state) pairs; `false` only to measure what it buys.
    pub memo: bool,
    /// Model steps after which one history's check gives up (counted as undecided).
    pub budget: u64,
    /// Stop at the first anomaly.
    pub stop_at_first: bool,
    /// Stop after this long, whatever `histories` says.
    pub time_limit: Option<Duration>,
    /// The administrator truncates (`false` isolates the append window from the
    /// truncation window).
    pub truncate: bool,
}

impl Config {
    /// The CI smoke: 1,000 histories of 3 phases, 6 threads × 8 operations per phase
    /// (readers 24): about 30 s in a debug build on tmpfs on a shared 2-core machine.
    pub fn smoke() -> Self {
        Config {
            histories: 1_000,
            seed: 1,
            phases: 3,
            ops: 8,
            family: Family::Both,
            memo: true,
            budget: 5_000_000,
            stop_at_first: false,
            time_limit: None,
            truncate: true,
        }
    }

    /// The long run: 20,000 histories of 3 phases, 6 threads × 12 operations per phase.
    pub fn long() -> Self {
        Config {
            histories: 20_000,
            ops: 12,
            ..Config::smoke()
        }
    }
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Histories recorded and checked.
    pub histories: u64,
    /// Operations in them.
    pub operations: u64,
    /// Histories with no linearization.
    pub anomalies: u64,
    /// Histories whose check ran out of budget.
    pub undecided: u64,
    /// Model steps of every check.
    pub steps: u64,
    /// Histories and operations recorded up to and including the first anomaly.
    pub first_at: Option<(u64, u64)>,
    /// The first anomaly, described.
    pub first: Option<String>,
    /// Anomalies by the kind of the operation no linearization passes and what overlapped
    /// it (a `truncate_to`, else a transactional append, else neither), with the
    /// histories and operations recorded up to the first of each.
    pub by_cause: std::collections::BTreeMap<String, (u64, u64, u64)>,
    /// Time taken.
    pub elapsed: Duration,
}

impl Report {
    /// The summary line: `linearizability: N histories, M operations, K anomalies`.
    pub fn line(&self) -> String {
        format!(
            "linearizability: {} histories, {} operations, {} anomalies ({} undecided, {} model steps, {:.1} s)",
            self.histories,
            self.operations,
            self.anomalies,
            self.undecided,
            self.steps,
            self.elapsed.as_secs_f64()
        )
    }
}

/// Records and checks `cfg.histories` histories in temporary directories under `root`.
///
/// # Errors
/// The harness's own failures (a log that does not open or close), as text.
pub fn run(cfg: &Config, root: &Path) -> Result<Report, String> {
    let t0 = Instant::now();
    let mut rep = Report::default();
    for i in 0..cfg.histories {
        if cfg.time_limit.is_some_and(|l| t0.elapsed() > l) {
            break;
        }
        let manual = match cfg.family {
            Family::Auto => false,
            Family::Manual => true,
            Family::Both => i % 2 == 1,
        };
        let shape = workload::Shape {
            manual,
            phases: cfg.phases,
            ops: cfg.ops,
            seed: cfg.seed.wrapping_add(i),
            two_txn: i % 3 != 0,
            truncate: cfg.truncate,
            follower: i % 4 == 3,
        };
        let h = workload::record(shape, root)?;
        rep.histories += 1;
        rep.operations += h.len() as u64;
        let m = model::LogModel { manual };
        let out = wgl::check(&m, &h, cfg.memo, cfg.budget);
        rep.steps += out.steps;
        match out.verdict {
            wgl::Verdict::Linearizable => {}
            wgl::Verdict::Undecided => rep.undecided += 1,
            wgl::Verdict::Violation { deepest, stuck } => {
                rep.anomalies += 1;
                let c = cause(&h[stuck], &h);
                rep.by_cause
                    .entry(c.clone())
                    .or_insert((0, rep.histories, rep.operations))
                    .0 += 1;
                // `LIN_CAUSE=TEXT`: describe (and stop at) the first anomaly whose class
                // contains TEXT, e.g. `read LogEnd`.
                let wanted = std::env::var("LIN_CAUSE").map_or(true, |w| c.contains(&w));
                // `LIN_ALL=1`: every anomaly described on standard error as it is found.
                if wanted && std::env::var_os("LIN_ALL").is_some() {
                    eprintln!("{}\n", describe(&shape, &h, deepest, stuck));
                }
                if rep.first.is_none() && wanted {
                    rep.first_at = Some((rep.histories, rep.operations));
                    rep.first = Some(describe(&shape, &h, deepest, stuck));
                    if cfg.stop_at_first {
                        break;
                    }
                }
            }
        }
    }
    rep.elapsed = t0.elapsed();
    Ok(rep)
}

/// The class of an anomaly at `stuck` (see [`Report::by_cause`]).
fn cause(stuck: &wgl::Entry<model::Op, model::Ret>, h: &workload::History) -> String {
    let overlaps = |f: &dyn Fn(&model::Op) -> bool| {
        h.iter()
            .any(|e| e.call < stuck.ret && e.ret > stuck.call && f(&e.op))
    };
    let what = match &stuck.op {
        model::Op::Read { iso, .. } => format!("read {iso:?}"),
        other => {
            let d = format!("{other:?}");
            d.split([' ', '(']).next().unwrap_or_default().to_string()
        }
    };
    let during = if overlaps(&|op| matches!(op, model::Op::TruncateTo(_))) {
        "during a truncate_to"
    } else if overlaps(&|op| {
        matches!(
            op,
            model::Op::Append {
                kind: model::Kind::Txn | model::Kind::Commit | model::Kind::Abort,
                ..
            }
        )
    }) {
        "during a transactional append"
    } else {
        "during neither"
    };
    format!("{what} {during}")
}

/// The anomaly: the history's seed and family, the operation no linearization could
/// pass, and the operations that overlap it (every operation of the history when the
/// environment sets `LIN_FULL_HISTORY`).
fn describe(
    shape: &workload::Shape,
    h: &workload::History,
    deepest: usize,
    stuck: usize,
) -> String {
    let s = &h[stuck];
    let mut out = format!(
        "history seed {} ({} high watermark): {} of {} operations linearized at most; \
         no linearization passes thread {}'s\n  [{}..{}] {:?} -> {:?}\noverlapping it:\n",
        shape.seed,
        if shape.manual { "manual" } else { "auto" },
        deepest,
        h.len(),
        s.thread,
        s.call,
        s.ret,
        s.op,
        s.out
    );
    let all = std::env::var_os("LIN_FULL_HISTORY").is_some();
    let mut near: Vec<&wgl::Entry<model::Op, model::Ret>> = h
        .iter()
        .filter(|e| all || (e.call < s.ret && e.ret > s.call.saturating_sub(40)))
        .collect();
    near.sort_by_key(|e| e.call);
    for e in near {
        out.push_str(&format!(
            "  t{} [{}..{}] {:?} -> {:?}\n",
            e.thread, e.call, e.ret, e.op, e.out
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of operation of a history answers, and answers as the model expects at
    /// least once: appends on both paths land, reads return batches.
    #[test]
    fn histories_exercise_every_path() {
        let root = tempfile::tempdir().unwrap();
        let mut follows = 0;
        let mut leaders = 0;
        let mut reads = 0;
        for (i, follower) in [(0, false), (1, true)] {
            let shape = workload::Shape {
                manual: i == 1,
                phases: 2,
                ops: 8,
                seed: 9,
                two_txn: true,
                truncate: !follower,
                follower,
            };
            let h = workload::record(shape, root.path()).unwrap();
            for e in &h {
                match (&e.op, &e.out) {
                    (model::Op::Follow { .. }, model::Ret::Appended { .. }) => follows += 1,
                    (model::Op::Append { .. }, model::Ret::Appended { .. }) => leaders += 1,
                    (model::Op::Read { .. }, model::Ret::Read { batches, .. })
                        if !batches.is_empty() =>
                    {
                        reads += 1;
                    }
                    _ => {}
                }
            }
            let m = model::LogModel {
                manual: shape.manual,
            };
            assert_ne!(
                wgl::check(&m, &h, true, 5_000_000).verdict,
                wgl::Verdict::Undecided
            );
        }
        assert!(
            follows > 0 && leaders > 0 && reads > 0,
            "{follows} {leaders} {reads}"
        );
    }
}
