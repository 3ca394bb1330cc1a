//! The checker: recovers a crash state with `Log::open` and checks the invariants of
//! "Crash states" in `docs/testing.md#crash-states` (numbered as there).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;
use segment::dump::{DumpOptions, Event, Problem, Sink};
use segment::format::{scan, KafkaBatchFormat};
use segment::log::{CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_FILE};
use segment::record::BatchBuilder;
use segment::{Log, LogConfig, MockTime};

use super::model::{Model, Shadow, State};
use super::trace::{Op, Recorder};
use super::workload::Oracle;

/// What the oracle allows and requires of a recovery after a cut at trace length `cut`.
#[derive(Debug)]
pub struct Expect {
    /// Batches acknowledged by a flush that returned `Ok` before the cut and not
    /// removed by a `truncate_to` that started before it (indices into the oracle).
    pub required: Vec<usize>,
    /// Batches that may be served, by base offset: appended (at least started) before
    /// the cut and not removed by a `truncate_to` that a later flush made durable.
    pub allowed: HashMap<i64, Vec<usize>>,
    /// Batches removed by a flushed `truncate_to` (served: a violation of invariant 2).
    pub forbidden: HashMap<i64, Vec<usize>>,
    /// The highest log start offset any call started before the cut set.
    pub max_log_start: i64,
    /// The log start offset of the last call that moved it and returned before the cut
    /// (its checkpoint is durable): the recovered log start is at least this (tiered
    /// workloads, invariant 7).
    pub min_log_start: i64,
    /// The highest uploaded offset any call started before the cut reported to the log
    /// (−1: none): local deletion may have removed the segments up to it, and no higher
    /// (tiered workloads, invariant 7).
    pub uploaded: i64,
}

/// The expectations after a cut at trace length `cut`.
pub fn expect(o: &Oracle, cut: usize) -> Expect {
    let mut e = Expect {
        required: Vec::new(),
        allowed: HashMap::new(),
        forbidden: HashMap::new(),
        max_log_start: 0,
        min_log_start: 0,
        uploaded: -1,
    };
    for (i, b) in o.batches.iter().enumerate() {
        if b.start >= cut {
            continue;
        }
        let removed_by = |t: &(i64, super::workload::Span)| t.1.start >= b.end && b.last >= t.0;
        let flushed_removal = o
            .truncations
            .iter()
            .filter(|t| removed_by(t))
            .any(|t| o.flushes.iter().any(|f| f.start >= t.1.end && f.end <= cut));
        if flushed_removal {
            e.forbidden.entry(b.base).or_default().push(i);
            continue;
        }
        e.allowed.entry(b.base).or_default().push(i);
        let acked = o.flushes.iter().any(|f| f.start >= b.end && f.end <= cut);
        let maybe_removed = o
            .truncations
            .iter()
            .any(|t| removed_by(t) && t.1.start < cut);
        if acked && !maybe_removed {
            e.required.push(i);
        }
    }
    e.max_log_start = o
        .log_starts
        .iter()
        .filter(|(s, _)| *s < cut)
        .map(|&(_, ls)| ls)
        .max()
        .unwrap_or(0);
    e.min_log_start = o
        .log_starts_done
        .iter()
        .filter(|(end, _)| *end <= cut)
        .map(|&(_, ls)| ls)
        .max()
        .unwrap_or(0);
    e.uploaded = o
        .uploads
        .iter()
        .filter(|(s, _)| *s < cut)
        .map(|&(_, u)| u)
        .max()
        .unwrap_or(-1);
    e
}

/// What a recovery serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// Log start offset.
    pub log_start: i64,
    /// Local log start offset (the log start offset unless uploaded segments were
    /// deleted locally): the batches are read from it.
    pub local_start: i64,
    /// Log end offset.
    pub log_end: i64,
    /// Every batch served from the log start on: (base, last, bytes).
    pub batches: Vec<(i64, i64, Vec<u8>)>,
}

/// Makes `dir` hold exactly `state`: the files of `dir` (and the parent's files the
/// recorder follows) that `state` does not name are removed, and every file of `state` is
/// written, truncating a file of that name left by the previous state (cheaper on tmpfs
/// than an unlink and a creation; the content and the names are the same).
///
/// # Errors
/// I/O errors.
pub fn materialize(dir: &Path, state: &State) -> std::io::Result<()> {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            if !name.to_str().is_some_and(|n| state.contains_key(n)) {
                std::fs::remove_file(e.path())?;
            }
        }
    }
    if let Some(parent) = dir.parent() {
        for n in PARENT_FOLLOWED {
            if !state.contains_key(&format!("{}{n}", super::trace::PARENT)) {
                let _ = std::fs::remove_file(parent.join(n));
            }
        }
    }
    for (name, bytes) in state {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

/// The parent directory's files that [`materialize`] removes when a state lacks them.
const PARENT_FOLLOWED: [&str; 2] = ["cleaner-offset-checkpoint", "cleaner-offset-checkpoint.tmp"];

fn open(
    dir: &Path,
    config: &LogConfig,
    fs: Arc<dyn segment::fs::FileSystem>,
) -> segment::Result<Log> {
    Log::options()
        .clock(Arc::new(MockTime::new(2_000_000_000)))
        .fs(fs)
        .open(dir, config.clone())
}

/// Reads every batch from the local log start to the log end (below it a read answers
/// `OffsetMovedToTieredStorage`).
///
/// # Errors
/// A description of a read that failed or returned nothing below the log end.
pub fn read_all(log: &Log) -> Result<Recovered, String> {
    let log_start = log.log_start_offset();
    let local_start = log.local_log_start_offset();
    let log_end = log.log_end_offset();
    let mut out = Vec::new();
    let mut o = local_start;
    while o < log_end {
        let r = log
            .read(o, 1 << 20)
            .map_err(|e| format!("read({o}) below the log end {log_end}: {e}"))?;
        let mut progressed = false;
        for b in scan::<KafkaBatchFormat>(&r.records, 0) {
            let b = b.map_err(|e| format!("read({o}): a served batch does not parse: {e}"))?;
            if b.info.last_offset < o {
                continue;
            }
            out.push((b.info.base_offset, b.info.last_offset, b.bytes.to_vec()));
            o = b.info.last_offset + 1;
            progressed = true;
        }
        if !progressed {
            // Nothing from `o` to the end of its segment and the segments after it that
            // the read looked at: after a crash, offsets handed out but never flushed may
            // be missing below the next segment's base (a gap, as compaction leaves;
            // invariant 1 checks that no acknowledged batch is among them). Go on at the
            // next segment holding a batch.
            let segs = log.segments();
            let mut next = segs
                .floor_segment(o)
                .and_then(|s| segs.higher_segment(s.base_offset()));
            while let Some(s) = &next {
                if s.size() > 0 {
                    break;
                }
                next = segs.higher_segment(s.base_offset());
            }
            match next {
                Some(s) if s.base_offset() > o => o = s.base_offset(),
                // A gap up to the log end (the active segment's base).
                _ => break,
            }
        }
    }
    Ok(Recovered {
        log_start,
        local_start,
        log_end,
        batches: out,
    })
}

/// [`verify`], less what a compacted log (`compact`) shows by design: a cleaned
/// segment keeps a producer's last batch empty with its header's max timestamp, and the
/// cleaner indexes that timestamp (Kafka's `Cleaner.cleanInto`, byte for byte in k7), so
/// Kafka's tool reports a mismatch with the records' (none: -1), and so does ours.
fn verify_log(dir: &Path, compact: bool) -> Vec<String> {
    let mut found = verify(dir);
    if compact {
        found.retain(|f| !(f.starts_with("TimestampMismatch") && f.contains("log_timestamp: -1 ")));
    }
    found
}

/// A sink that keeps only the failing problems: `--verify-index-only` prints every batch
/// of every `.log`, as Kafka's tool does, and a crash run verifies thousands of states.
#[derive(Default)]
struct Failures(Vec<Problem>);

impl Sink for Failures {
    fn event(&mut self, event: Event) {
        if let Event::Problem(p) = event {
            if p.is_failure() {
                self.0.push(p);
            }
        }
    }
}

/// `dump-log --verify-index-only` over `dir`, in-process: the failing problems found.
pub fn verify(dir: &Path) -> Vec<String> {
    let opts = DumpOptions {
        verify_index_only: true,
        ..DumpOptions::default()
    };
    let mut sink = Failures::default();
    let summary = segment::dump::run(&[dir.to_path_buf()], &opts, &mut sink);
    if summary.failures == 0 {
        return Vec::new();
    }
    sink.0.iter().take(3).map(|p| format!("{p:?}")).collect()
}

fn checkpoint_value(state: &State, name: &str) -> Option<i64> {
    let text = std::str::from_utf8(state.get(name)?).ok()?;
    let mut lines = text.lines();
    (lines.next()? == "0").then_some(())?;
    lines.next()?.trim().parse().ok()
}

/// The result of checking one crash state.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Violations found (empty: the state passed).
    pub violations: Vec<String>,
    /// Second-crash states explored (invariant 6).
    pub second: u64,
    /// Of those, recoveries that served the same batches with another log end (a gap).
    pub gap_only: u64,
    /// The doctor's prediction against the loader (`None`: not compared, the open
    /// failed or the state holds no segment).
    pub doctor: Option<DoctorVs>,
}

/// `dump-log doctor`'s default-mode prediction, made before recovery, against what
/// `Log::open` of the state did.
#[derive(Debug, Default)]
pub struct DoctorVs {
    /// The doctor said "unknown without --deep" about the data lost.
    pub unknown: bool,
    /// The loader cut bytes or deleted segments.
    pub loader_cut: bool,
    /// Where it disagrees with the loader (empty: it agrees).
    pub disagreements: Vec<String>,
}

/// The doctor's prediction of `dir`, read-only, as `dump-log doctor --no-calibrate` makes
/// it, with `--deep` if `deep` (`None` when it finds no partition: a state without a
/// segment).
fn doctor_predicts(dir: &Path, deep: bool) -> Option<segment::dump::doctor::PartitionReport> {
    use segment::dump::doctor::{examine, DoctorOptions, Throughput, DEFAULT_THROUGHPUT_MBPS};
    let opts = DoctorOptions {
        throughput: Throughput::Given {
            mb_per_s: DEFAULT_THROUGHPUT_MBPS,
            segment_overhead_s: 0.0,
            partition_overhead_s: 0.0,
        },
        deep,
    };
    let report = examine(dir, &opts, &mut |_, _, _| {}).ok()?;
    report.partitions.into_iter().next()
}

/// Compares the doctor's prediction `p` with the open of `log` from `state`;
/// `acked_lost` says whether the oracle finds acknowledged data missing.
fn doctor_vs_loader(
    p: &segment::dump::doctor::PartitionReport,
    state: &State,
    log: &Log,
    acked_lost: bool,
) -> DoctorVs {
    use segment::dump::doctor::DataLoss;
    let mut out = DoctorVs {
        unknown: p.data_loss == DataLoss::Unknown,
        loader_cut: false,
        disagreements: Vec::new(),
    };
    let stats = log.stats();
    let recovered = stats
        .segments_recovered
        .load(std::sync::atomic::Ordering::Relaxed);
    let cut = stats
        .bytes_truncated
        .load(std::sync::atomic::Ordering::Relaxed);
    let before: Vec<(i64, u64)> = state
        .iter()
        .filter_map(|(name, bytes)| {
            let base = name.strip_suffix(".log")?.parse::<i64>().ok()?;
            Some((base, bytes.len() as u64))
        })
        .collect();
    let after: HashSet<i64> = log
        .segments()
        .values()
        .iter()
        .map(|s| s.base_offset())
        .collect();
    // A completed swap (an interrupted clean's) replaces segments: not a deletion of
    // data, which the swap holds (the doctor reports it as a completed swap).
    let swapped: Vec<i64> = stats
        .swap_replacement()
        .map(|r| r.replaced_base_offsets)
        .unwrap_or_default();
    let mut deleted: Vec<i64> = before
        .iter()
        .map(|&(b, _)| b)
        .filter(|b| !after.contains(b) && !swapped.contains(b))
        .collect();
    deleted.sort_unstable();
    let deleted_data = before.iter().any(|&(b, n)| n > 0 && deleted.contains(&b));
    out.loader_cut = cut > 0 || !deleted.is_empty();
    let d = &mut out.disagreements;
    let known = p.unread_recovered_segments.is_empty();
    // The segments a cut inside an unread segment would delete are unknown; those the
    // doctor read are not.
    // A split segment is rescanned once (its recovery stops at the overflow), then each
    // of its pieces.
    let predicted_recovered = (p.recovered_segments.len() + p.split_pieces.len()) as u64;
    if known && predicted_recovered != recovered {
        d.push(format!(
            "segments recovered: doctor {:?} and split pieces {:?}, loader {recovered}",
            p.recovered_segments, p.split_pieces
        ));
    }
    if known && p.truncate_bytes != cut {
        d.push(format!(
            "bytes cut: doctor {}, loader {cut}",
            p.truncate_bytes
        ));
    }
    // A log start above the log end: the loader deletes every segment and starts an
    // empty one at the log start, which may reuse the base of an empty segment it
    // deleted (the doctor lists that one as deleted, the bases after the open do not).
    let fresh = log.log_start_offset();
    let fresh_empty = log.log_end_offset() == fresh
        && log
            .segments()
            .values()
            .iter()
            .all(|s| s.base_offset() == fresh && s.size() == 0);
    let doctor_deleted: Vec<i64> = p
        .deleted_segments
        .iter()
        .copied()
        .filter(|b| !(fresh_empty && *b == fresh && after.contains(b)))
        .collect();
    if known && doctor_deleted != deleted {
        d.push(format!(
            "segments deleted: doctor {:?}, loader {deleted:?}",
            p.deleted_segments
        ));
    }
    if let Some(end) = p.recovered_log_end_offset {
        if end != log.log_end_offset() {
            d.push(format!(
                "log end: doctor {end}, loader {}",
                log.log_end_offset()
            ));
        }
    }
    if p.data_loss == DataLoss::None && (acked_lost || deleted_data) {
        d.push(format!(
            "the doctor says no acknowledged data is lost but the open {}",
            if acked_lost {
                "loses acknowledged batches"
            } else {
                "deletes segments holding data"
            }
        ));
    }
    out
}

/// The second crashes of invariant 6: under `model`, at up to `points` fsync-family
/// points of the recovery (0: none), drawn with `rng`.
pub struct SecondCrash<'r> {
    /// The crash model of the second crash.
    pub model: Model,
    /// At most this many recovery points are crashed (each is one more state).
    pub points: usize,
    /// Picks the points and the kept fraction of unsynced writes.
    pub rng: &'r mut StdRng,
}

/// Checks invariants 1–5 on `state` (materialised in the empty directory `dir`), and
/// with `second.points > 0` invariant 6: a crash at up to that many fsync-family points
/// of the recovery, then another recovery, must serve what the uninterrupted recovery
/// served.
pub fn check(
    o: &Oracle,
    exp: &Expect,
    cut: usize,
    state: &State,
    dir: &Path,
    second: SecondCrash<'_>,
) -> Outcome {
    let SecondCrash {
        model,
        points: second_crash,
        rng,
    } = second;
    let mut out = Outcome::default();
    let v = &mut out.violations;
    let config = o.config.clone().unwrap_or_default();
    if let Err(e) = materialize(dir, state) {
        v.push(format!("cannot materialise the state: {e}"));
        return out;
    }
    // The marker promises that no recovery is needed (Kafka then trusts every file):
    // the state itself must be consistent (invariant 3, before recovery).
    if state.contains_key(CLEAN_SHUTDOWN_FILE) {
        let found = verify_log(dir, o.compact);
        if !found.is_empty() {
            v.push(format!(
                "3: the clean-shutdown marker is durable but the files are not clean: {}",
                found.join("; ")
            ));
        }
    }
    // The doctor's prediction, before anything is recovered; `--deep`'s is compared
    // only for the workloads checked batch by batch (below), so only they pay for it.
    let predicted = doctor_predicts(dir, false);
    let predicted_deep = if o.compact {
        None
    } else {
        doctor_predicts(dir, true)
    };
    let rec = Arc::new(Recorder::new(dir, state.keys().cloned()));
    let fs: Arc<dyn segment::fs::FileSystem> = if second_crash > 0 {
        rec.clone()
    } else {
        segment::fs::real()
    };
    let log = match open(dir, &config, fs) {
        Ok(l) => l,
        Err(e) => {
            v.push(format!("recovery failed: {e}"));
            return out;
        }
    };
    let recovery_ops = rec.ops();
    let got = match read_all(&log) {
        Ok(r) => r,
        Err(e) => {
            v.push(format!("1/2: {e}"));
            return out;
        }
    };
    if o.compact {
        let acked_lost = compact_invariants(o, exp, &got, &log, state, v);
        if let Some(p) = &predicted {
            out.doctor = Some(doctor_vs_loader(p, state, &log, acked_lost));
        }
    } else {
        // 1: every acknowledged batch is served, same bytes, same offset.
        let by_base: BTreeMap<i64, &Vec<u8>> =
            got.batches.iter().map(|(b, _, x)| (*b, x)).collect();
        let violations_before = v.len();
        for &i in &exp.required {
            let b = &o.batches[i];
            if b.last < got.log_start {
                continue;
            }
            if b.last < got.local_start {
                // 7: below the local log start only what was uploaded.
                if b.last > exp.uploaded {
                    v.push(format!(
                        "7: acknowledged batch {}..={} is deleted locally (local log start {}) but the uploaded offset is {}",
                        b.base, b.last, got.local_start, exp.uploaded
                    ));
                }
                continue;
            }
            match by_base.get(&b.base) {
                Some(x) if **x == b.bytes => {}
                Some(_) => v.push(format!(
                    "1: acknowledged batch {}..={} is served with different bytes",
                    b.base, b.last
                )),
                None => v.push(format!(
                    "1: acknowledged batch {}..={} is lost (log {}..{})",
                    b.base, b.last, got.log_start, got.log_end
                )),
            }
        }
        if o.tiered {
            // 7: the local log start stays within the uploaded data (every segment it
            // passed was uploaded whole), and the log start offset survives: local
            // deletion never moves it, a remote-tier deletion that returned is durable.
            if got.local_start > got.log_start.max(exp.uploaded + 1) {
                v.push(format!(
                    "7: the local log start {} is past the uploaded offset {} (log start {})",
                    got.local_start, exp.uploaded, got.log_start
                ));
            }
            if got.log_start < exp.min_log_start {
                v.push(format!(
                    "7: the log start {} is below {}, which a returned call made durable",
                    got.log_start, exp.min_log_start
                ));
            }
        }
        if got.log_start > exp.max_log_start {
            v.push(format!(
                "1: the log start {} is beyond every log start set ({}): records below it are lost",
                got.log_start, exp.max_log_start
            ));
        }
        if let Some(rp) = checkpoint_value(state, RECOVERY_POINT_FILE) {
            // A truncate_to that started before the cut may lower the log end below the
            // durable recovery point before it rewrites it: down to the batch holding its
            // target.
            let bound = o
                .truncations
                .iter()
                .filter(|(target, span)| span.start < cut && *target < rp)
                .map(|&(target, _)| {
                    o.batches
                        .iter()
                        .find(|b| b.base <= target && target <= b.last)
                        .map_or(target, |b| b.base)
                })
                .min()
                .map_or(rp, |b| b.min(rp));
            if got.log_end < bound {
                v.push(format!(
                "1: the durable recovery point {rp} acknowledges offsets the recovered log (end {}) does not hold",
                got.log_end
            ));
            }
        }
        let acked_lost = v.len() > violations_before;
        if let Some(p) = &predicted {
            let mut vs = doctor_vs_loader(p, state, &log, acked_lost);
            // With --deep every segment is read in full: nothing is unknown.
            if let Some(deep) = &predicted_deep {
                let d = doctor_vs_loader(deep, state, &log, acked_lost);
                if d.unknown {
                    vs.disagreements
                        .push("--deep: the doctor still says unknown".to_string());
                }
                vs.disagreements
                    .extend(d.disagreements.into_iter().map(|m| format!("--deep: {m}")));
            }
            out.doctor = Some(vs);
        }
        let v = &mut out.violations;
        // 2: nothing served that was never appended or was removed by a flushed truncate_to.
        let mut meta = Vec::with_capacity(got.batches.len());
        for (base, last, bytes) in &got.batches {
            let find = |m: &HashMap<i64, Vec<usize>>| {
                m.get(base)
                    .and_then(|is| is.iter().copied().find(|&i| o.batches[i].bytes == *bytes))
            };
            match find(&exp.allowed) {
                Some(i) => meta.push(i),
                None if find(&exp.forbidden).is_some() => {
                    v.push(format!(
                    "2: batch {base}..={last} is served although a flushed truncate_to removed it"
                ));
                    return out;
                }
                None => {
                    v.push(format!(
                        "2: batch {base}..={last} is served but was never appended"
                    ));
                    return out;
                }
            }
        }
        // 4: aborted transactions and the last stable offset agree with the served batches.
        let mut ongoing: BTreeMap<i64, i64> = BTreeMap::new();
        let mut aborted: Vec<(i64, Option<i64>, i64)> = Vec::new();
        for &i in &meta {
            let b = &o.batches[i];
            let Some(pid) = b.txn_pid else { continue };
            match b.marker {
                None => {
                    ongoing.entry(pid).or_insert(b.base);
                }
                Some(abort) => {
                    let first = ongoing.remove(&pid);
                    if abort {
                        aborted.push((pid, first, b.base));
                    }
                }
            }
        }
        // Kafka clamps the first unstable offset to the log start, which may lie inside the
        // first served batch (`UnifiedLog.maybeIncrementFirstUnstableOffset`).
        let lso = ongoing
            .values()
            .copied()
            .min()
            .map_or(got.log_end, |o| o.max(got.log_start).min(got.log_end));
        // A transaction whose data lies wholly below the log start is not in the served
        // batches, yet Kafka's producer state keeps it ongoing when a snapshot knew it; the
        // last stable offset is then the log start (the first unstable offset clamped to it,
        // `UnifiedLog.maybeIncrementFirstUnstableOffset`). Whether a snapshot survived the
        // crash decides which, so both are allowed: a producer whose last transactional batch
        // below the log start is data, and that no served marker completes.
        let served_markers: HashSet<i64> = meta
            .iter()
            .filter_map(|&i| {
                let b = &o.batches[i];
                b.marker.and(b.txn_pid)
            })
            .collect();
        let mut below: BTreeMap<i64, (i64, bool)> = BTreeMap::new();
        for is in exp.allowed.values() {
            for &i in is {
                let b = &o.batches[i];
                if let (Some(pid), true) = (b.txn_pid, b.last < got.log_start) {
                    let e = below.entry(pid).or_insert((b.base, b.marker.is_none()));
                    if b.base >= e.0 {
                        *e = (b.base, b.marker.is_none());
                    }
                }
            }
        }
        let open_below_pids: HashSet<i64> = below
            .iter()
            .filter(|(_, &(_, data))| data)
            .map(|(&pid, _)| pid)
            .collect();
        let open_below = open_below_pids
            .iter()
            .any(|pid| !served_markers.contains(pid));
        let lso_ok = log.last_stable_offset() == lso
            || (open_below && log.last_stable_offset() == got.log_start.min(got.log_end));
        if !lso_ok {
            v.push(format!(
                "4: last_stable_offset {} but the served batches give {lso}",
                log.last_stable_offset()
            ));
        }
        match log.collect_aborted_txns(got.log_start, got.log_end) {
            Ok(txns) => {
                let mut have: Vec<(i64, i64, i64)> = txns
                    .iter()
                    .map(|t| (t.producer_id, t.first_offset, t.last_offset))
                    .filter(|t| t.2 >= got.log_start)
                    .collect();
                have.sort_by_key(|t| t.2);
                // A marker whose transaction's data is not served (below the log start, or
                // lost with a truncated segment while a later one survived) may or may not
                // have an entry: the producer state knows the transaction from a snapshot
                // in the first case, and nothing was ongoing to abort in the second. Every
                // other entry must match exactly.
                let mut rest = have.iter().peekable();
                let mut same = true;
                for a in &aborted {
                    match rest.peek() {
                        // A transaction open across the log start began below it: its entry
                        // has that first offset, which the served batches cannot show.
                        Some(h)
                            if h.0 == a.0
                                && h.2 == a.2
                                && a.1.is_none_or(|f| {
                                    f == h.1
                                        || (h.1 < got.log_start && open_below_pids.contains(&a.0))
                                }) =>
                        {
                            rest.next();
                        }
                        _ if a.1.is_none() => {}
                        _ => same = false,
                    }
                }
                let same = same && rest.next().is_none();
                if !same {
                    v.push(format!(
                    "4: collect_aborted_txns gives {have:?} but the served batches give {aborted:?}"
                ));
                }
            }
            Err(e) => v.push(format!("4: collect_aborted_txns failed: {e}")),
        }
    }
    let v = &mut out.violations;
    // 5: appends continue.
    let leo = log.log_end_offset();
    let next = BatchBuilder::new(leo)
        .record(2_000_000_000, None, Some(b"after recovery"))
        .build()
        .expect("valid batch");
    match log.append(&next).and_then(|_| log.read(leo, 1 << 20)) {
        Ok(r) if r.records.starts_with(&next) => {
            if let Err(e) = log.flush() {
                v.push(format!("5: flush after recovery failed: {e}"));
            }
        }
        Ok(_) => v.push(format!(
            "5: the batch appended at {leo} after recovery is not served"
        )),
        Err(e) => v.push(format!("5: append after recovery failed: {e}")),
    }
    // 3: after a clean close, the recovered directory verifies clean (an open log's
    // active segment may be preallocated, which the tool reports as a zero tail).
    match log.close() {
        Ok(()) => {
            let found = verify_log(dir, o.compact);
            if !found.is_empty() {
                v.push(format!(
                    "3: the recovered directory does not verify: {}",
                    found.join("; ")
                ));
            }
        }
        Err(e) => v.push(format!("5: clean close after recovery failed: {e}")),
    }
    // 6: a second crash during the recovery, then another recovery, converges.
    if second_crash > 0 && v.is_empty() {
        let cuts: Vec<usize> = recovery_ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.is_sync())
            .map(|(i, _)| i + 1)
            .collect();
        let mut picked: Vec<usize> = cuts.clone();
        while picked.len() > second_crash {
            picked.swap_remove(rng.gen_range(0..picked.len()));
        }
        for cut in picked {
            let mut sh = Shadow::with_files(state);
            for op in &recovery_ops[..cut] {
                sh.apply(op);
            }
            let keep = rng.gen::<f64>();
            let s2 = sh.crash(model, keep, rng);
            out.second += 1;
            if let Err(e) = materialize(dir, &s2) {
                out.violations.push(format!("cannot materialise: {e}"));
                break;
            }
            let again = open(dir, &config, segment::fs::real())
                .map_err(|e| e.to_string())
                .and_then(|l| {
                    let r = read_all(&l);
                    l.close_handlers();
                    r
                });
            match again {
                Ok(r) if r == got => {}
                // The same batches at the same offsets; the log end differs only by a gap
                // no batch holds (offsets handed out but never flushed, after a recovery
                // that truncated a segment and then removed the empty segments after it
                // was cut short). Counted, not a violation.
                Ok(r) if r.batches == got.batches && r.log_start == got.log_start => {
                    out.gap_only += 1;
                }
                Ok(r) => {
                    if std::env::var_os("XTASK_CRASH_DEBUG").is_some() {
                        for (j, op) in recovery_ops[..cut].iter().enumerate() {
                            eprintln!("  recovery op {j}: {}", super::describe(op));
                        }
                        for (name, bytes) in state {
                            eprintln!("  first state: {name} {} bytes", bytes.len());
                        }
                        for (name, bytes) in &s2 {
                            eprintln!("  second state: {name} {} bytes", bytes.len());
                        }
                        eprintln!(
                            "  first: {:?}",
                            got.batches.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>()
                        );
                        eprintln!(
                            "  second: {:?}",
                            r.batches.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>()
                        );
                    }
                    out.violations.push(format!(
                        "6: a crash at op {cut} of the recovery, then a recovery, serves log {}..{} ({} batches), not {}..{} ({} batches)",
                        r.log_start, r.log_end, r.batches.len(), got.log_start, got.log_end, got.batches.len()
                    ));
                    break;
                }
                Err(e) => {
                    out.violations.push(format!(
                        "6: a crash at op {cut} of the recovery, then a recovery: {e}"
                    ));
                    break;
                }
            }
        }
    }
    let _: &[Op] = &recovery_ops;
    out
}

/// One record of the model of a compacted workload.
struct ModelRecord {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    /// The oracle batch that appended it.
    batch: usize,
}

/// One record: offset, key, value.
type KeyedRecord = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// The records of a batch's bytes, or `None` for a control batch.
fn records_of(bytes: &[u8]) -> Result<Option<Vec<KeyedRecord>>, String> {
    let b = segment::record::FileBatch::at(bytes, 0).map_err(|e| e.to_string())?;
    if b.is_control() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for r in b.records().map_err(|e| e.to_string())? {
        let r = r.map_err(|e| e.to_string())?;
        out.push((
            r.offset,
            r.key().map(<[u8]>::to_vec),
            r.value().map(<[u8]>::to_vec),
        ));
    }
    Ok(Some(out))
}

/// The invariants of a compacted workload (`docs/testing.md#crash-states`, "cleaning
/// workloads"), in place of 1, 2 and 4, which compare batch bytes that a clean rewrites:
///
/// * 2c: every served record is the record appended at its offset (key and value), and
///   every served marker a marker appended at its offset by its producer;
/// * 1c: for every key, the latest acknowledged committed record (a flush returned after
///   it, and for transactional data after its COMMIT marker) is not superseded in what is
///   served by an older record: a value must be served at its offset or a later committed
///   one, a tombstone may also have been removed with every older record of its key;
/// * 4c: a read_committed consumer (the aborted transactions of `collect_aborted_txns`
///   and the served ABORT markers) drops every served record of an aborted transaction.
///
/// Returns whether acknowledged data was lost (1c), for the doctor's comparison.
fn compact_invariants(
    o: &Oracle,
    exp: &Expect,
    got: &Recovered,
    log: &Log,
    state: &State,
    v: &mut Vec<String>,
) -> bool {
    // The model: every record and marker appended (at least started) before the cut.
    let mut model: HashMap<i64, ModelRecord> = HashMap::new();
    let mut markers: HashMap<i64, usize> = HashMap::new();
    for is in exp.allowed.values() {
        for &i in is {
            match records_of(&o.batches[i].bytes) {
                Ok(Some(rs)) => {
                    for (off, key, value) in rs {
                        model.insert(
                            off,
                            ModelRecord {
                                key,
                                value,
                                batch: i,
                            },
                        );
                    }
                }
                Ok(None) => {
                    markers.insert(o.batches[i].base, i);
                }
                Err(e) => v.push(format!("the oracle's batch {i} does not parse: {e}")),
            }
        }
    }
    // A transactional data batch's outcome: the first marker its producer appended after
    // it (`Some(abort)`, with the marker's batch index), `None` while open.
    let outcome = |i: usize| -> Option<(bool, usize)> {
        let pid = o.batches[i].txn_pid?;
        o.batches[i + 1..]
            .iter()
            .enumerate()
            .find(|(_, b)| b.txn_pid == Some(pid) && b.marker.is_some())
            .and_then(|(j, b)| b.marker.map(|abort| (abort, i + 1 + j)))
    };
    let committed = |i: usize| -> bool {
        o.batches[i].txn_pid.is_none() || matches!(outcome(i), Some((false, _)))
    };
    // 2c: what is served was appended at its offset.
    let mut served: Vec<(i64, usize)> = Vec::new();
    let mut served_markers: HashSet<usize> = HashSet::new();
    for (base, last, bytes) in &got.batches {
        match records_of(bytes) {
            Ok(None) => {
                // The cleaner may give a kept marker a delete horizon (a new base
                // timestamp, so other record bytes): compare producer and marker.
                use segment::BatchFormat as _;
                let marker_of = |b: &[u8]| {
                    segment::KafkaBatchFormat::end_txn_marker(b, 0)
                        .ok()
                        .flatten()
                        .map(|m| (m.control_type, m.coordinator_epoch))
                };
                let fb = segment::record::FileBatch::at(bytes, 0);
                let same = markers.get(base).is_some_and(|&i| {
                    fb.as_ref()
                        .is_ok_and(|b| Some(b.producer_id()) == o.batches[i].txn_pid)
                        && marker_of(&o.batches[i].bytes).is_some()
                        && marker_of(&o.batches[i].bytes) == marker_of(bytes)
                });
                if !same {
                    v.push(format!(
                        "2c: the control batch {base}..={last} served was never appended there"
                    ));
                    return false;
                }
                served_markers.extend(markers.get(base).copied());
            }
            Ok(Some(rs)) => {
                for (off, key, value) in rs {
                    match model.get(&off) {
                        Some(m) if m.key == key && m.value == value => served.push((off, m.batch)),
                        _ => {
                            v.push(format!(
                                "2c: the record at offset {off} (batch {base}..={last}) served was never appended there"
                            ));
                            return false;
                        }
                    }
                }
            }
            Err(e) => {
                v.push(format!(
                    "2c: a served batch {base}..={last} does not parse: {e}"
                ));
                return false;
            }
        }
    }
    // 1c: per key, the latest acknowledged committed record against what is served.
    let required: HashSet<usize> = exp.required.iter().copied().collect();
    let mut latest_acked: BTreeMap<Vec<u8>, (i64, bool)> = BTreeMap::new();
    for &i in &exp.required {
        if o.batches[i].marker.is_some() || !committed(i) {
            continue;
        }
        if o.batches[i].txn_pid.is_some() && !outcome(i).is_some_and(|(_, j)| required.contains(&j))
        {
            continue; // its COMMIT is not acknowledged
        }
        if let Ok(Some(rs)) = records_of(&o.batches[i].bytes) {
            for (off, key, value) in rs {
                let Some(key) = key else { continue };
                let e = latest_acked.entry(key).or_insert((off, value.is_none()));
                if off >= e.0 {
                    *e = (off, value.is_none());
                }
            }
        }
    }
    // Committed in the recovered log: not transactional, or its COMMIT marker served
    // (a transaction whose marker is not served is open there: no consumer sees it).
    let committed_here = |i: usize| -> bool {
        o.batches[i].txn_pid.is_none()
            || matches!(outcome(i), Some((false, j)) if served_markers.contains(&j))
    };
    let mut latest_served: HashMap<Vec<u8>, i64> = HashMap::new();
    for &(off, i) in &served {
        if !committed_here(i) {
            continue;
        }
        if let Some(key) = model.get(&off).and_then(|m| m.key.clone()) {
            let e = latest_served.entry(key).or_insert(off);
            *e = (*e).max(off);
        }
    }
    let mut lost = false;
    for (key, &(off, tombstone)) in &latest_acked {
        let s = latest_served.get(key).copied();
        let ok = match s {
            Some(s) => s >= off,
            None => tombstone,
        };
        if !ok {
            lost = true;
            v.push(format!(
                "1c: key {}: the acknowledged {} at offset {off} is superseded by what is served (latest committed record of the key served: {s:?})",
                String::from_utf8_lossy(key),
                if tombstone { "tombstone" } else { "value" }
            ));
        }
    }
    // 5c: below the durable cleaner checkpoint of the partition, the log is clean: no
    // key is served twice (a checkpoint written before its clean's swaps were durable
    // promises what a crash undid).
    let checkpoint = state
        .get(&format!(
            "{}cleaner-offset-checkpoint",
            super::trace::PARENT
        ))
        .and_then(|b| {
            let text = String::from_utf8_lossy(b).into_owned();
            text.lines().skip(2).find_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.len() == 3 && f[0] == "compact" && f[1] == "0")
                    .then(|| f[2].parse::<i64>().ok())
                    .flatten()
            })
        });
    if let Some(cp) = checkpoint {
        let mut seen: HashMap<&[u8], i64> = HashMap::new();
        for &(off, _) in served.iter().filter(|(off, _)| *off < cp) {
            let Some(key) = model.get(&off).and_then(|m| m.key.as_deref()) else {
                continue;
            };
            if let Some(first) = seen.insert(key, off) {
                v.push(format!(
                    "5c: the cleaner checkpoint {cp} is durable, but key {} is served at offsets {first} and {off} below it",
                    String::from_utf8_lossy(key)
                ));
                break;
            }
        }
    }
    // 4c: a read_committed consumer drops every served record of an aborted transaction.
    match log.collect_aborted_txns(got.log_start, got.log_end) {
        Ok(txns) => {
            let mut pending: Vec<(i64, i64)> = txns
                .iter()
                .map(|t| (t.first_offset, t.producer_id))
                .collect();
            pending.sort_unstable();
            let mut pending = pending.into_iter().peekable();
            let mut aborting: HashSet<i64> = HashSet::new();
            for (base, last, bytes) in &got.batches {
                let Ok(fb) = segment::record::FileBatch::at(bytes, 0) else {
                    continue;
                };
                let pid = fb.producer_id();
                if pid < 0 {
                    continue;
                }
                while let Some(&(first, p)) = pending.peek() {
                    if first > *last {
                        break;
                    }
                    aborting.insert(p);
                    pending.next();
                }
                if fb.is_control() {
                    if markers.get(base).and_then(|&i| o.batches[i].marker) == Some(true) {
                        aborting.remove(&pid);
                    }
                    continue;
                }
                let aborted = served
                    .iter()
                    .filter(|(off, _)| off >= base && off <= last)
                    .any(|&(_, i)| matches!(outcome(i), Some((true, j)) if served_markers.contains(&j)));
                if aborted && fb.is_transactional() && !aborting.contains(&pid) {
                    v.push(format!(
                        "4c: the aborted batch {base}..={last} of producer {pid} is served to read_committed as committed"
                    ));
                    break;
                }
            }
        }
        Err(e) => v.push(format!("4c: collect_aborted_txns failed: {e}")),
    }
    lost
}
