//! `cargo xtask crash`: the crash-state enumerator (ALICE / CrashMonkey applied to this
//! library; numbered as in "Crash states", `docs/testing.md#crash-states`).
//!
//! 1. A seeded [`workload`] runs against a real directory through the trace
//!    [`Recorder`](trace::Recorder), which logs every file operation the `segment`
//!    crate performs or reports through its `FileSystem` seam.
//! 2. The trace is replayed into a shadow file system ([`model::Shadow`]); at every
//!    fsync-family operation (just before and just after it) and at random points in
//!    between, the persistence [`model`] (`--model`) builds crash states: the extremes
//!    (nothing unsynced survives, everything does) and random mixes of 4 KiB pages,
//!    lengths and directory operations. Duplicate states of a workload are skipped.
//! 3. Each state is materialised in a temporary directory and [`check`]ed: recovered
//!    with `Log::open` and held to invariants 1–6, and a tiered workload's to 7
//!    (local deletion removes only uploaded data, `docs/testing.md#crash-tiered`).
//!
//! Before recovery, each state is also given to `dump-log doctor`'s prediction (its
//! library function, default mode and `--deep`), which [`check`] holds to what the open
//! did (`docs/testing.md#doctor-vs-loader`): `doctor vs loader: N states, M
//! disagreements`, and the run fails when M > 0.
//!
//! Prints `crash states: N explored, V violations` (N counts second-crash states of
//! invariant 6 too) and fails when V > 0. `--mutant NAME` weakens the build at one point
//! ([`mutants`]) and must then report violations; `--mutants` runs every mutant.
//!
//! This crate (`xtask/crash`, its `crash` and `lin` binaries) is its own workspace, the
//! only build of `segment` with the `crash-mutants` feature: `cargo xtask crash ARGS` runs
//! `cargo run --release --manifest-path xtask/crash/Cargo.toml --bin crash -- ARGS`.

mod check;
mod model;
mod mutants;
mod trace;
mod workload;

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use model::Model;

const HELP: &str = "\
usage: cargo xtask crash [--smoke | --long | --states N] [--seed S] [--model weak|ordered]
                         [--mutant NAME | --mutants] [--steps N] [--threads N]
                         [--second-every K]

Records seeded workloads through the segment crate's file-system seam, builds every
crash state the persistence model allows at each fsync (and at random points between),
recovers each with Log::open and checks that nothing acknowledged is lost, nothing
removed or never written is served, the directory verifies, transactions agree, appends
continue, a second crash during recovery converges, and, for tiered logs, that local
deletion removes only uploaded segments and never moves the log start. Before each recovery,
dump-log doctor's prediction (default and --deep) is compared with what the open
does: segments recovered, bytes cut, segments deleted, log end, data lost. Prints
`doctor vs loader: N states, M disagreements` and
`crash states: N explored, V violations`, and exits 1 if M > 0 or V > 0.

  --smoke         10,000 states (CI)
  --long          1,000,000 states
  --states N      explore at least N states (default 10,000)
  --seed S        first workload seed (default 1); workload k uses S + k
  --model M       weak (default: ext4 data=writeback, the issue's model) or ordered
                  (ext4 data=ordered); see docs/kafka-behaviour.md#crash-persistence-model
  --mutant NAME   run against a weakened build (must report violations):
                  no-dir-fsync, checkpoint-before-data, no-trim-fsync, flush-before-trim,
                  clean-swap-no-dir-fsync, clean-checkpoint-before-swap,
                  split-swap-no-dir-fsync, split-rename-no-dir-fsync (run with --split),
                  local-delete-one-too-many, tiered-open-moves-log-start
  --mutants       every mutant, 3,000 states each; fails unless each reports violations
  --split         only split workloads: a legacy segment whose offsets overflow, split
                  by the open's recovery (the split mutants' run)
  --tiered        only tiered workloads (remote.storage.enable, uploads, local deletion
                  and local retention; one workload in four otherwise)
  --steps N       calls per workload (default 80)
  XTASK_CRASH_DEBUG=INV (environment): for the first violation of invariant INV
                  (e.g. 3) of each workload, print the trace up to the cut and the state
  XTASK_CRASH_CALLS=1 (environment): print each workload's failed calls and the
                  leader appends Kafka's rules refused
  --threads N     worker threads (default 2)
  --second-every K  invariant 6 for every K-th state, up to 4 recovery cuts each
                  (default 8)
";

/// Options of one enumeration.
#[derive(Clone, Debug)]
struct Opts {
    states: u64,
    seed: u64,
    model: Model,
    mutant: Option<mutants::Mutant>,
    steps: usize,
    threads: usize,
    second_every: u64,
    /// Only split workloads (`--split`).
    split: bool,
    /// Only tiered workloads (`--tiered`).
    tiered: bool,
}

/// One violation, with what reproduces it.
#[derive(Debug)]
struct Found {
    seed: u64,
    /// States of the workload explored up to and including this one: with `--threads 1`,
    /// `--seed seed --states states` explores this state again.
    states: u64,
    cut: usize,
    op: String,
    messages: Vec<String>,
}

/// Result of one enumeration.
#[derive(Debug, Default)]
struct Report {
    explored: u64,
    violations: u64,
    found: Vec<Found>,
    workloads: u64,
    failed_calls: u64,
    gap_only: u64,
    /// Batches the workloads appended through `append_as_leader`, of all appended.
    leader_batches: u64,
    batches: u64,
    /// Leader appends refused by Kafka's rules, and retries answered as duplicates.
    refused: u64,
    duplicates: u64,
    /// Crash states checked whose required batches include one the leader appended.
    leader_states: u64,
    /// States whose doctor prediction was compared with the loader, those it predicted
    /// "unknown without --deep", and its disagreements (seed, cut, what).
    doctor_states: u64,
    doctor_unknown: u64,
    doctor_loader_cut: u64,
    doctor_disagreements: Vec<(u64, usize, String)>,
    /// Compacted-topic workloads, their `Log::clean` calls (and those that replaced
    /// segments), and their states (checked by key).
    compact_workloads: u64,
    cleans: u64,
    cleans_swapped: u64,
    compact_states: u64,
    /// Tiered workloads, their local deletions that returned `Ok` (`delete_local_through`
    /// and local retention) and the segments those deleted, and their states.
    tiered_workloads: u64,
    local_deletions: u64,
    local_segments_deleted: u64,
    tiered_states: u64,
}

/// `cargo xtask crash ARGS`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut o = Opts {
        states: 10_000,
        seed: 1,
        model: Model::Weak,
        mutant: None,
        steps: 80,
        threads: 2,
        second_every: 8,
        split: false,
        tiered: false,
    };
    let mut all_mutants = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{HELP}"))
        };
        let num = |s: String, name: &str| {
            s.replace(['_', ','], "")
                .parse::<u64>()
                .map_err(|e| format!("{name} {s}: {e}"))
        };
        match a.as_str() {
            "--smoke" => o.states = 10_000,
            "--long" => o.states = 1_000_000,
            "--states" => o.states = num(val("--states")?, "--states")?,
            "--seed" => o.seed = num(val("--seed")?, "--seed")?,
            "--steps" => o.steps = num(val("--steps")?, "--steps")? as usize,
            "--threads" => o.threads = num(val("--threads")?, "--threads")?.max(1) as usize,
            "--second-every" => {
                o.second_every = num(val("--second-every")?, "--second-every")?.max(1)
            }
            "--model" => {
                let m = val("--model")?;
                o.model = Model::parse(&m).ok_or_else(|| format!("unknown model `{m}`\n{HELP}"))?;
            }
            "--mutant" => {
                let m = val("--mutant")?;
                o.mutant = Some(
                    mutants::Mutant::parse(&m)
                        .ok_or_else(|| format!("unknown mutant `{m}`\n{HELP}"))?,
                );
            }
            "--mutants" => all_mutants = true,
            "--split" => o.split = true,
            "--tiered" => o.tiered = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{HELP}")),
        }
    }
    if all_mutants {
        let mut failed = Vec::new();
        let mut split_real_passed = None;
        for m in mutants::Mutant::ALL {
            let mut mo = Opts {
                mutant: Some(m),
                states: 3_000,
                ..o.clone()
            };
            if matches!(
                m,
                mutants::Mutant::SplitSwapNoDirFsync | mutants::Mutant::SplitRenameNoDirFsync
            ) {
                // Only a split renames several `.swap` files; under the weak model any
                // subset of its unsynced renames survives (docs/testing.md#crash-split):
                // the real build must pass where the mutants are run.
                mo.split = true;
                mo.model = Model::Weak;
                let passed = match split_real_passed {
                    Some(p) => p,
                    None => {
                        let real = enumerate(&Opts {
                            mutant: None,
                            ..mo.clone()
                        })?;
                        println!(
                            "real build, split workloads, model weak: crash states: {} explored, {} violations",
                            real.explored, real.violations
                        );
                        *split_real_passed.insert(real.violations == 0)
                    }
                };
                if !passed {
                    failed.push(m.name());
                    continue;
                }
            }
            let r = enumerate(&mo)?;
            println!(
                "mutant {}: crash states: {} explored, {} violations",
                m.name(),
                r.explored,
                r.violations
            );
            if let Some(f) = r.found.first() {
                println!(
                    "  e.g. seed {} cut {} ({}): {}",
                    f.seed, f.cut, f.op, f.messages[0]
                );
            }
            if r.violations == 0 {
                failed.push(m.name());
            }
        }
        return if failed.is_empty() {
            println!("every mutant was caught");
            Ok(())
        } else {
            Err(format!(
                "mutants not caught (the checker cannot see them): {failed:?}"
            ))
        };
    }
    let t0 = Instant::now();
    let r = enumerate(&o)?;
    let secs = t0.elapsed().as_secs_f64();
    // A few of each invariant's violations.
    let mut shown: std::collections::BTreeMap<String, usize> = Default::default();
    for f in r.found.iter().filter(|f| {
        let inv = f.messages[0].split(':').next().unwrap_or("?").to_string();
        let n = shown.entry(inv).or_default();
        *n += 1;
        *n <= 2
    }) {
        println!(
            "violation: workload seed {} (cargo xtask crash --seed {} --states {} --threads 1), cut at trace op {} ({}):",
            f.seed, f.seed, f.states, f.cut, f.op
        );
        for m in f.messages.iter().take(4) {
            println!("  {m}");
        }
    }
    if !r.found.is_empty() {
        let mut by: std::collections::BTreeMap<String, u64> = Default::default();
        for f in &r.found {
            for m in &f.messages {
                let inv = m.split(':').next().unwrap_or("?").to_string();
                *by.entry(inv).or_default() += 1;
            }
        }
        println!("violations by invariant: {by:?}");
    }
    println!(
        "model {}{}: {} workloads, {} failed calls in them, {} second-crash recoveries ending at another log end (a gap only), {:.1} s, {:.0} states/s",
        o.model.name(),
        o.mutant.map(|m| format!(", mutant {}", m.name())).unwrap_or_default(),
        r.workloads,
        r.failed_calls,
        r.gap_only,
        secs,
        r.explored as f64 / secs.max(1e-9)
    );
    println!(
        "leader path: {} of {} batches appended by append_as_leader ({} refused by Kafka's rules, {} duplicates); {} states require a leader batch",
        r.leader_batches, r.batches, r.refused, r.duplicates, r.leader_states
    );
    println!(
        "cleaning: {} compacted-topic workloads, {} cleans ({} replaced segments), {} of the states checked by key",
        r.compact_workloads, r.cleans, r.cleans_swapped, r.compact_states
    );
    println!(
        "tiered: {} workloads with remote storage, {} local deletions ({} segments deleted), {} of the states",
        r.tiered_workloads, r.local_deletions, r.local_segments_deleted, r.tiered_states
    );
    for (seed, cut, what) in r.doctor_disagreements.iter().take(6) {
        println!("doctor disagrees: workload seed {seed}, cut at trace op {cut}: {what}");
    }
    println!(
        "doctor vs loader: {} states, {} disagreements ({} predicted unknown without --deep, all known with it; the loader cut bytes or deleted segments in {})",
        r.doctor_states,
        r.doctor_disagreements.len(),
        r.doctor_unknown,
        r.doctor_loader_cut
    );
    println!(
        "crash states: {} explored, {} violations",
        r.explored, r.violations
    );
    if o.mutant.is_none() && !r.doctor_disagreements.is_empty() {
        return Err(format!(
            "{} crash states where dump-log doctor disagrees with the loader",
            r.doctor_disagreements.len()
        ));
    }
    match (o.mutant, r.violations) {
        (None, 0) => Ok(()),
        (None, v) => Err(format!("{v} crash-state violations")),
        (Some(m), 0) => Err(format!(
            "mutant {} reported no violation: the checker cannot see it",
            m.name()
        )),
        (Some(_), _) => Ok(()),
    }
}

/// The temporary base directory: tmpfs when available (fsync is free there; the model,
/// not the device, decides what survives).
fn temp_base() -> Result<tempfile::TempDir, String> {
    let shm = Path::new("/dev/shm");
    let b = tempfile::Builder::new().prefix("xtask-crash-").to_owned();
    if shm.is_dir() {
        if let Ok(d) = b.tempdir_in(shm) {
            return Ok(d);
        }
    }
    b.tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))
}

fn enumerate(o: &Opts) -> Result<Report, String> {
    mutants::select(o.mutant);
    let base = temp_base()?;
    let explored = AtomicU64::new(0);
    let next = AtomicU64::new(0);
    let report = Mutex::new(Report::default());
    std::thread::scope(|s| {
        for t in 0..o.threads {
            let (base, explored, next, report) = (base.path(), &explored, &next, &report);
            s.spawn(move || {
                let wdir = base.join(format!("w{t}"));
                // Named as a partition (`<topic>-<partition>`), as `dump-log doctor` expects.
                let sdir = base.join(format!("s{t}")).join("crash-0");
                while explored.load(Ordering::Relaxed) < o.states {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let seed = o.seed + k;
                    let (n, found, failed, gaps, w) = one_workload(o, seed, &wdir, &sdir, explored);
                    let mut r = report.lock().unwrap_or_else(|e| e.into_inner());
                    r.leader_batches += w.leader_batches;
                    r.batches += w.batches;
                    r.refused += w.refused;
                    r.duplicates += w.duplicates;
                    r.leader_states += w.leader_states;
                    r.doctor_states += w.doctor_states;
                    r.doctor_unknown += w.doctor_unknown;
                    r.doctor_loader_cut += w.doctor_loader_cut;
                    r.doctor_disagreements.extend(w.doctor_disagreements);
                    r.compact_workloads += w.compact_workloads;
                    r.cleans += w.cleans;
                    r.cleans_swapped += w.cleans_swapped;
                    r.compact_states += w.compact_states;
                    r.tiered_workloads += w.tiered_workloads;
                    r.local_deletions += w.local_deletions;
                    r.local_segments_deleted += w.local_segments_deleted;
                    r.tiered_states += w.tiered_states;
                    r.gap_only += gaps;
                    r.workloads += 1;
                    r.failed_calls += failed;
                    r.violations += found.len() as u64;
                    r.explored += n;
                    r.found.extend(found);
                }
            });
        }
    });
    mutants::select(None);
    let mut r = report.into_inner().unwrap_or_else(|e| e.into_inner());
    r.found.sort_by_key(|f| (f.seed, f.cut));
    Ok(r)
}

fn hash_state(s: &model::State) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// What one workload did through the leader path, for the summary.
#[derive(Default)]
struct LeaderCounts {
    leader_batches: u64,
    batches: u64,
    refused: u64,
    duplicates: u64,
    leader_states: u64,
    doctor_states: u64,
    doctor_unknown: u64,
    doctor_loader_cut: u64,
    doctor_disagreements: Vec<(u64, usize, String)>,
    compact_workloads: u64,
    cleans: u64,
    cleans_swapped: u64,
    compact_states: u64,
    tiered_workloads: u64,
    local_deletions: u64,
    local_segments_deleted: u64,
    tiered_states: u64,
}

/// Runs workload `seed` and checks its crash states; returns (states explored,
/// violations, failed calls of the workload, gap-only second crashes, leader counts).
fn one_workload(
    o: &Opts,
    seed: u64,
    wdir: &PathBuf,
    sdir: &PathBuf,
    explored: &AtomicU64,
) -> (u64, Vec<Found>, u64, u64, LeaderCounts) {
    let _ = std::fs::remove_dir_all(wdir);
    let _ = std::fs::remove_dir_all(sdir);
    if std::fs::create_dir_all(sdir).is_err() {
        return (0, Vec::new(), 0, 0, LeaderCounts::default());
    }
    // One workload in four is a compacted topic's, with cleans (named as a partition:
    // the cleaner keeps its checkpoint in the parent directory).
    // One in four is a tiered log's, with uploads and local deletion.
    let compact = seed % 4 == 3;
    let tiered = seed % 4 == 2;
    let oracle = if o.split {
        workload::run_split(wdir, seed, o.steps)
    } else if o.tiered || tiered {
        workload::run_tiered(wdir, seed, o.steps)
    } else if compact {
        workload::run_compact(&wdir.join("compact-0"), seed, o.steps)
    } else {
        workload::run(wdir, seed, o.steps)
    };
    if std::env::var_os("XTASK_CRASH_CALLS").is_some() {
        for c in oracle.failed_calls.iter().chain(&oracle.refused) {
            eprintln!("workload {seed}: {c}");
        }
    }
    let mut counts = LeaderCounts {
        leader_batches: oracle.batches.iter().filter(|b| b.origin.is_some()).count() as u64,
        batches: oracle.batches.len() as u64,
        refused: oracle.refused.len() as u64,
        duplicates: oracle.duplicates,
        compact_workloads: u64::from(oracle.compact),
        cleans: oracle.cleans,
        cleans_swapped: oracle.cleans_swapped,
        tiered_workloads: u64::from(oracle.tiered),
        local_deletions: oracle.local_deletions,
        local_segments_deleted: oracle.local_segments_deleted,
        ..LeaderCounts::default()
    };
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_c4a5);
    let mut sh = model::Shadow::default();
    let mut seen = HashSet::new();
    let mut n = 0u64;
    let mut gaps = 0u64;
    let mut checked = 0u64;
    let mut found = Vec::new();
    let ops = &oracle.ops;
    for i in 0..=ops.len() {
        // A cut at `i`: ops[..i] happened.
        let is_cut = i == ops.len()
            || ops[i].is_sync()
            || (i > 0 && ops[i - 1].is_sync())
            || rng.gen_bool(0.1);
        if is_cut && explored.load(Ordering::Relaxed) < o.states {
            let exp = check::expect(&oracle, i);
            let keeps: &[f64] = if sh.has_pending() {
                &[0.0, 1.0, -1.0, -1.0]
            } else {
                &[1.0]
            };
            for &k in keeps {
                let keep = if k < 0.0 { rng.gen::<f64>() } else { k };
                let state = sh.crash(o.model, keep, &mut rng);
                if !seen.insert(hash_state(&state)) {
                    continue;
                }
                checked += 1;
                if exp
                    .required
                    .iter()
                    .any(|&b| oracle.batches[b].origin.is_some())
                {
                    counts.leader_states += 1;
                }
                let second = if checked.is_multiple_of(o.second_every) {
                    4
                } else {
                    0
                };
                let out = check::check(
                    &oracle,
                    &exp,
                    i,
                    &state,
                    sdir,
                    check::SecondCrash {
                        model: o.model,
                        points: second,
                        rng: &mut rng,
                    },
                );
                if let Some(d) = &out.doctor {
                    counts.doctor_states += 1;
                    counts.doctor_unknown += u64::from(d.unknown);
                    counts.doctor_loader_cut += u64::from(d.loader_cut);
                    if !d.disagreements.is_empty() {
                        if std::env::var_os("XTASK_CRASH_DEBUG_DOCTOR").is_some() {
                            for (name, bytes) in &state {
                                eprintln!("  state: {name} {} bytes", bytes.len());
                            }
                            eprintln!("  doctor disagrees at cut {i}: {:?}", d.disagreements);
                        }
                        counts
                            .doctor_disagreements
                            .push((seed, i, d.disagreements.join("; ")));
                    }
                }
                let states = 1 + out.second;
                if oracle.compact {
                    counts.compact_states += states;
                }
                if oracle.tiered {
                    counts.tiered_states += states;
                }
                gaps += out.gap_only;
                n += states;
                explored.fetch_add(states, Ordering::Relaxed);
                if !out.violations.is_empty() {
                    let want = std::env::var("XTASK_CRASH_DEBUG").ok();
                    if want
                        .as_ref()
                        .is_some_and(|w| out.violations[0].starts_with(w.as_str()))
                        && !found
                            .iter()
                            .any(|f: &Found| f.messages[0][..2] == out.violations[0][..2])
                    {
                        for (j, op) in ops[..i].iter().enumerate() {
                            eprintln!("  op {j}: {}", describe(op));
                        }
                        for (name, bytes) in &state {
                            eprintln!("  state: {name} {} bytes", bytes.len());
                        }
                        eprintln!("  keep {keep}: {:?}", out.violations);
                    }
                    found.push(Found {
                        seed,
                        states: n,
                        cut: i,
                        op: if i == 0 {
                            "before the first op".into()
                        } else {
                            describe(&ops[i - 1])
                        },
                        messages: out.violations,
                    });
                }
            }
        }
        if i < ops.len() {
            sh.apply(&ops[i]);
        }
    }
    let _ = std::fs::remove_dir_all(wdir);
    (n, found, oracle.failed_calls.len() as u64, gaps, counts)
}

fn describe(op: &trace::Op) -> String {
    use trace::Op::*;
    match op {
        Create(n) => format!("after creating {n}"),
        Write(n, p, d) => format!("after writing {} bytes at {p} of {n}", d.len()),
        SetLen(n, l) => format!("after setting the length of {n} to {l}"),
        Capture(n, d) => format!("after an index crate changed {n} ({} bytes)", d.len()),
        Sync(n) => format!("after fsync of {n}"),
        Rename(f, t) => format!("after renaming {f} to {t}"),
        Remove(n) => format!("after deleting {n}"),
        SyncDir => "after fsync of the directory".into(),
        SyncParentDir => "after fsync of the parent directory".into(),
    }
}
