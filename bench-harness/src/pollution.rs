//! "Why warm/cold, under real memory pressure": a lagging consumer's catch-up scan
//! against in-sync consumers, in a page cache that a memory cgroup limits.
//!
//! # Setup
//!
//! One partition directory is written once per run with the workspace's own writer
//! (`segment::LogSegment::append`, Kafka's `index.interval.bytes` rule at 4096 bytes:
//! an offset-index entry after more than 4096 bytes of batches): a few older segments
//! (their indexes trimmed, as Kafka leaves inactive segments) and the active segment
//! ([`PollutionScale::active_log_bytes`] of `.log`, its `.index` reopened at
//! [`PollutionScale::index_bytes`], Kafka's `segment.index.bytes`, as the broker reopens
//! an active segment). Record batches are Kafka v2 batches built with
//! `segment::record::BatchBuilder`.
//!
//! # An arm
//!
//! Each arm (one search strategy, one memory limit, with or without the mitigation) is a
//! child process: the bench-harness binary re-executed with the hidden
//! `--pollution-arm <json>` option ([`arm_main`]). The parent evicts every file of the
//! partition from the page cache, restores the active segment's `.log` length and
//! `.index` bytes (the previous arm appended to them), creates a memory cgroup
//! ([`Cgroup`]: v2 `memory.max` or v1 `memory.limit_in_bytes`) with the arm's limit,
//! starts the child, moves it into the cgroup and only then lets it start (a line on its
//! stdin), so that every page the arm brings in is charged to the limited cgroup. In the
//! child:
//!
//! * one **producer** appends batches at the tail at [`PollutionScale::produce_bytes_per_sec`]
//!   (positioned writes to the `.log`, an index entry by Kafka's rule, then the log end
//!   offset is published);
//! * [`PollutionScale::consumers`] **in-sync consumers** look up an offset at most
//!   [`PollutionScale::hot_lag_offsets`] behind the log end in the active segment's
//!   index with the arm's strategy, then read 16 KiB of `.log` from the answer, one
//!   lookup every [`PollutionScale::lookup_interval_us`]; each counts its own major page
//!   faults (`getrusage(RUSAGE_THREAD)`), its index page-ins (the pages a lookup reads,
//!   recorded by a `PageProbe`, that `mincore` found not resident just before it) and
//!   each lookup's latency (the index lookup alone, probe included);
//! * one **lagging consumer** starts at the first offset of the oldest segment and reads
//!   forward at full speed, 1 MiB fetches (Kafka's `max.partition.fetch.bytes`), each
//!   preceded by its own index lookup in the segment it reads (same strategy); with the
//!   mitigation it calls `posix_fadvise(POSIX_FADV_DONTNEED)` on every range it has read
//!   of an older segment. When it reaches the tail it starts again at the beginning.
//!
//! The first [`PollutionScale::warmup_ms`] of an arm are not counted: the figures are the
//! steady state, not the cold start. An arm the kernel's OOM killer kills is reported as
//! [`ArmOutcome::OomKilled`], not as an error.
//!
//! # Where it does not run
//!
//! Without root, without a memory controller, off Linux, with `BENCH_HARNESS_CGROUP=off`
//! or `--skip-pollution`, [`run`] returns a [`PollutionOutcome`] with a `skipped` reason
//! (one line), and the rest of the main job runs.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use index_core::search::SearchStrategy;
use index_core::sys;
use index_core::PageProbe;
use index_offset::OffsetIndex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::record::{BatchBuilder, RecordBatch};
use segment::{LogConfig, LogSegment};
use serde::{Deserialize, Serialize};

use crate::real_faults;
use crate::BenchError;

/// Kafka's `index.interval.bytes` default (bytes of batches between offset-index entries).
pub const INDEX_INTERVAL_BYTES: u64 = 4096;

/// The environment variable that turns the workload off when set to `off` (or `0`).
pub const CGROUP_ENV: &str = "BENCH_HARNESS_CGROUP";

/// Memory limits of the default sweep, in MiB: from "everything the consumers touch
/// fits" down to "the hot tail's pages barely fit".
pub const DEFAULT_LIMITS_MIB: [u64; 6] = [896, 256, 64, 32, 16, 12];

/// Bytes one lagging-consumer fetch reads (Kafka's `max.partition.fetch.bytes`, 1 MiB).
pub const LAGGING_FETCH_BYTES: usize = 1 << 20;

/// Bytes an in-sync consumer reads from the position its lookup answered.
pub const IN_SYNC_READ_BYTES: usize = 16 << 10;

/// The sizes and rates of the workload.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PollutionScale {
    /// Bytes of batches in the active segment's `.log` before an arm starts.
    pub active_log_bytes: u64,
    /// Number of older (inactive) segments before the active one.
    pub old_segments: usize,
    /// Bytes of batches in each older segment's `.log`.
    pub old_segment_bytes: u64,
    /// Size of the active segment's `.index` file in bytes (Kafka's `segment.index.bytes`).
    pub index_bytes: usize,
    /// Length of an arm in milliseconds, warm-up included.
    pub arm_ms: u64,
    /// Milliseconds at the start of an arm that are not counted.
    pub warmup_ms: u64,
    /// Number of in-sync consumers (threads).
    pub consumers: usize,
    /// In-sync consumers look up offsets up to this many offsets behind the log end.
    pub hot_lag_offsets: i64,
    /// Pause between two lookups of one in-sync consumer, in microseconds.
    pub lookup_interval_us: u64,
    /// The producer's append rate in bytes of batches per second.
    pub produce_bytes_per_sec: u64,
}

impl PollutionScale {
    /// The main job's scale: a 1 GiB active `.log` with a 10 MiB `.index`, three older
    /// 256 MiB segments, 4 in-sync consumers, a producer at 2 MiB/s, 2.5 s arms.
    pub fn full() -> Self {
        PollutionScale {
            active_log_bytes: 1 << 30,
            old_segments: 3,
            old_segment_bytes: 256 << 20,
            index_bytes: 10 << 20,
            arm_ms: 2500,
            warmup_ms: 500,
            consumers: 4,
            hot_lag_offsets: 300,
            lookup_interval_us: 200,
            produce_bytes_per_sec: 2 << 20,
        }
    }

    /// A reduced scale for tests: a 64 MiB active `.log` (an index of about 120 KiB of
    /// entries), two older 32 MiB segments, 1.2 s arms.
    pub fn small() -> Self {
        PollutionScale {
            active_log_bytes: 64 << 20,
            old_segments: 2,
            old_segment_bytes: 32 << 20,
            index_bytes: 1 << 20,
            arm_ms: 1200,
            warmup_ms: 300,
            ..Self::full()
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct PollutionConfig {
    /// Sizes and rates.
    pub scale: PollutionScale,
    /// Memory limits of the cgroup, in MiB, one arm set per limit.
    pub limits_mib: Vec<u64>,
    /// Strategies measured.
    pub strategies: Vec<SearchStrategy>,
    /// Also run each arm with the mitigation (`POSIX_FADV_DONTNEED` behind the lagging
    /// consumer).
    pub mitigation: bool,
    /// Seed of the batch sizes and the in-sync targets.
    pub seed: u64,
    /// The executable the arms re-execute (the bench-harness binary).
    pub exe: PathBuf,
    /// Directory for the partition; `None`: the real page-fault measurement's choice
    /// ([`real_faults::choose_location`]).
    pub dir: Option<PathBuf>,
    /// `Some(reason)`: do not run, report this reason.
    pub skip: Option<String>,
}

/// One arm's parameters, passed to the child as JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArmSpec {
    /// Sizes and rates.
    pub scale: PollutionScale,
    /// The strategy's name ([`SearchStrategy::name`]).
    pub strategy: String,
    /// Warm section of warm/cold, bytes.
    pub warm_section_bytes: usize,
    /// Page size of the page directory, bytes.
    pub page_size: usize,
    /// Whether the lagging consumer drops what it has read from the page cache.
    pub mitigation: bool,
    /// The segments, oldest first; the last is the active one.
    pub segments: Vec<SegmentFiles>,
    /// Seed of the in-sync targets and the producer's batches.
    pub seed: u64,
}

/// One segment's files and extent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SegmentFiles {
    /// Base offset.
    pub base_offset: i64,
    /// The `.log` file.
    pub log: PathBuf,
    /// The `.index` file.
    pub index: PathBuf,
    /// Bytes of `.log` (before an arm appends).
    pub log_bytes: u64,
    /// One past the last offset (before an arm appends).
    pub end_offset: i64,
}

/// What one child arm measured (its stdout, as JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ArmResult {
    /// In-sync lookups counted (after the warm-up), all consumers.
    pub lookups: u64,
    /// Major page faults of the in-sync consumer threads while counted.
    pub major_faults: u64,
    /// Index pages brought into memory by the counted in-sync lookups (`mincore`).
    pub page_ins: u64,
    /// Lookup latency percentiles of the counted in-sync lookups, ns: p50, p99, p99.9.
    pub latency_ns: [u64; 3],
    /// Bytes of batches the lagging consumer read while counted.
    pub lagging_bytes: u64,
    /// Seconds the lagging consumer was counted.
    pub lagging_secs: f64,
    /// Times the lagging consumer reached the tail and started again.
    pub lagging_wraps: u32,
    /// Bytes of batches the producer appended (whole arm).
    pub produced_bytes: u64,
}

impl ArmResult {
    /// Major faults per 1000 in-sync lookups.
    pub fn major_faults_per_1000(&self) -> f64 {
        per_1000(self.major_faults, self.lookups)
    }

    /// Index page-ins per 1000 in-sync lookups.
    pub fn page_ins_per_1000(&self) -> f64 {
        per_1000(self.page_ins, self.lookups)
    }

    /// The lagging consumer's throughput in MB/s (10^6 bytes per second).
    pub fn lagging_mb_per_sec(&self) -> f64 {
        if self.lagging_secs > 0.0 {
            self.lagging_bytes as f64 / 1e6 / self.lagging_secs
        } else {
            0.0
        }
    }
}

fn per_1000(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        1000.0 * n as f64 / of as f64
    }
}

/// How an arm ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum ArmOutcome {
    /// The child finished and reported its figures.
    Measured(ArmResult),
    /// The kernel's OOM killer killed the child (the limit is below what the arm needs).
    OomKilled,
    /// The child failed otherwise (its exit status and last stderr line).
    Failed(String),
}

/// One arm of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct ArmRow {
    /// The cgroup's memory limit, MiB.
    pub limit_mib: u64,
    /// The strategy's name.
    pub strategy: String,
    /// Whether the mitigation was on.
    pub mitigation: bool,
    /// What happened.
    pub outcome: ArmOutcome,
}

/// The workload's result.
#[derive(Clone, Debug, Serialize)]
pub struct PollutionOutcome {
    /// Why it did not run (one line), if it did not.
    pub skipped: Option<String>,
    /// The cgroup interface used (`cgroup v1` / `cgroup v2`).
    pub cgroup: String,
    /// Sizes and rates.
    pub scale: PollutionScale,
    /// Every arm, by limit (as given), then strategy, then mitigation off/on.
    pub arms: Vec<ArmRow>,
    /// Seconds the setup (writing the partition) took.
    pub setup_secs: f64,
}

impl PollutionOutcome {
    fn skipped(reason: String, scale: PollutionScale) -> Self {
        PollutionOutcome {
            skipped: Some(reason),
            cgroup: String::new(),
            scale,
            arms: Vec::new(),
            setup_secs: 0.0,
        }
    }

    /// The arm of `strategy` at `limit_mib` with `mitigation`, if it ran.
    pub fn get(&self, limit_mib: u64, strategy: &str, mitigation: bool) -> Option<&ArmRow> {
        self.arms.iter().find(|a| {
            a.limit_mib == limit_mib && a.strategy == strategy && a.mitigation == mitigation
        })
    }
}

/// Why the workload cannot run here, if it cannot: `BENCH_HARNESS_CGROUP=off`, not
/// Linux, or no memory cgroup this process may create.
pub fn unavailable_reason() -> Option<String> {
    if let Ok(v) = std::env::var(CGROUP_ENV) {
        if v == "off" || v == "0" {
            return Some(format!("{CGROUP_ENV}={v}"));
        }
    }
    if !cfg!(target_os = "linux") {
        return Some("memory cgroups are Linux-only".to_string());
    }
    CgroupKind::detect().err()
}

/// The cgroup interface found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupKind {
    /// cgroup v1's memory controller at `/sys/fs/cgroup/memory`.
    V1,
    /// The unified hierarchy at `/sys/fs/cgroup` with the memory controller enabled.
    V2,
}

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";

impl CgroupKind {
    /// Finds a memory controller this process may create groups in (checked by creating
    /// and removing one).
    ///
    /// # Errors
    /// A one-line reason when there is none.
    pub fn detect() -> Result<CgroupKind, String> {
        let kind = if Path::new(V2_ROOT).join("cgroup.subtree_control").exists() {
            let ctl = std::fs::read_to_string(Path::new(V2_ROOT).join("cgroup.subtree_control"))
                .unwrap_or_default();
            if !ctl.split_whitespace().any(|c| c == "memory") {
                return Err("cgroup v2 without the memory controller enabled".to_string());
            }
            CgroupKind::V2
        } else if Path::new(V1_ROOT).join("memory.limit_in_bytes").exists() {
            CgroupKind::V1
        } else {
            return Err("no cgroup memory controller (v1 or v2) mounted".to_string());
        };
        let probe = Cgroup::create(kind, 1 << 30)
            .map_err(|e| format!("cannot create a memory cgroup (root needed): {e}"))?;
        drop(probe);
        Ok(kind)
    }

    /// `cgroup v1` or `cgroup v2`.
    pub fn name(self) -> &'static str {
        match self {
            CgroupKind::V1 => "cgroup v1",
            CgroupKind::V2 => "cgroup v2",
        }
    }
}

/// A memory cgroup this process created, removed when dropped (after its processes have
/// exited).
#[derive(Debug)]
pub struct Cgroup {
    kind: CgroupKind,
    path: PathBuf,
}

impl Cgroup {
    /// Creates a cgroup with a memory limit of `limit_bytes` bytes.
    ///
    /// # Errors
    /// The file-system errors of creating it or writing its limit (the directory is
    /// removed again on error).
    pub fn create(kind: CgroupKind, limit_bytes: u64) -> std::io::Result<Cgroup> {
        use std::sync::atomic::AtomicU64;
        static N: AtomicU64 = AtomicU64::new(0);
        let root = match kind {
            CgroupKind::V1 => V1_ROOT,
            CgroupKind::V2 => V2_ROOT,
        };
        let name = format!(
            "bench-harness-pollution-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let path = Path::new(root).join(name);
        std::fs::create_dir(&path)?;
        let cg = Cgroup { kind, path };
        let limit = match kind {
            CgroupKind::V1 => "memory.limit_in_bytes",
            CgroupKind::V2 => "memory.max",
        };
        std::fs::write(cg.path.join(limit), limit_bytes.to_string())?;
        if kind == CgroupKind::V2 {
            // No swap here either way; keep the arm from swapping where there is some.
            let _ = std::fs::write(cg.path.join("memory.swap.max"), "0");
        }
        Ok(cg)
    }

    /// Removes the cgroups an earlier run left behind (one interrupted before it could
    /// remove them): `bench-harness-pollution-<pid>-<n>` groups of a `pid` that no longer
    /// runs and that hold no process. Returns how many were removed.
    pub fn remove_stale(kind: CgroupKind) -> usize {
        let root = match kind {
            CgroupKind::V1 => V1_ROOT,
            CgroupKind::V2 => V2_ROOT,
        };
        let Ok(entries) = std::fs::read_dir(root) else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let pid = name
                    .strip_prefix("bench-harness-pollution-")
                    .and_then(|rest| rest.split('-').next())
                    .and_then(|p| p.parse::<u32>().ok());
                pid.is_some_and(|p| !Path::new("/proc").join(p.to_string()).exists())
            })
            .filter(|e| std::fs::remove_dir(e.path()).is_ok())
            .count()
    }

    /// Moves the process `pid` into the cgroup.
    ///
    /// # Errors
    /// The write's error.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        std::fs::write(self.path.join("cgroup.procs"), pid.to_string())
    }

    /// The OOM kills the kernel reports for the cgroup (`oom_kill` of v1's
    /// `memory.oom_control` or v2's `memory.events`; 0 if the kernel does not report it).
    pub fn oom_kills(&self) -> u64 {
        let file = match self.kind {
            CgroupKind::V1 => "memory.oom_control",
            CgroupKind::V2 => "memory.events",
        };
        std::fs::read_to_string(self.path.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The processes have exited, but the kernel may need a moment to release the group.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.path).is_ok() || !self.path.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Kills and reaps the child when dropped (a panic or an error of the parent never leaves
/// an arm running).
struct ChildGuard(Option<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn seg_err(e: segment::SegmentError) -> BenchError {
    BenchError::Config(format!("writing the partition: {e}"))
}

/// Builds the next batch of 1-8 records of 100-300-byte values at `offset`.
fn next_batch(rng: &mut StdRng, offset: i64, value: &[u8]) -> Result<(Vec<u8>, i64), BenchError> {
    let n = rng.gen_range(1..=8);
    let now = 1_700_000_000_000 + offset;
    let mut b = BatchBuilder::new(offset);
    for _ in 0..n {
        let len = rng.gen_range(100..=300);
        b = b.record(now, None, Some(&value[..len]));
    }
    let bytes = b
        .build()
        .map_err(|e| BenchError::Config(format!("building a batch: {e}")))?;
    Ok((bytes, offset + n as i64 - 1))
}

/// Writes the partition into `dir` with `segment::LogSegment`; returns its segments,
/// oldest first.
///
/// # Errors
/// Segment and I/O errors.
pub fn write_partition(
    dir: &Path,
    scale: &PollutionScale,
    seed: u64,
) -> Result<Vec<SegmentFiles>, BenchError> {
    let config = LogConfig {
        index_interval_bytes: INDEX_INTERVAL_BYTES,
        max_index_size: scale.index_bytes.max(1 << 20),
        ..LogConfig::default()
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let value = vec![b'v'; 300];
    let mut offset = 0i64;
    let mut out = Vec::new();
    let sizes = std::iter::repeat_n(scale.old_segment_bytes, scale.old_segments)
        .chain(std::iter::once(scale.active_log_bytes));
    for bytes in sizes {
        let base = offset;
        let seg: LogSegment = LogSegment::create(dir, base, &config, segment::time::system_clock())
            .map_err(seg_err)?;
        let mut buf = Vec::with_capacity(1 << 20);
        let mut written = 0u64;
        while written < bytes {
            let (batch, last) = next_batch(&mut rng, offset, &value)?;
            buf.extend_from_slice(&batch);
            offset = last + 1;
            written += batch.len() as u64;
            // One append per batch, as a follower appends batch by batch: the index
            // interval rule sees every batch.
            seg.append(last, 1_700_000_000_000 + last, last, &buf)
                .map_err(seg_err)?;
            buf.clear();
        }
        seg.flush().map_err(seg_err)?;
        let files = SegmentFiles {
            base_offset: base,
            log: seg.log_path(),
            index: seg.offset_index_file(),
            log_bytes: seg.size(),
            end_offset: offset,
        };
        seg.close().map_err(seg_err)?;
        out.push(files);
    }
    Ok(out)
}

/// The strategies of the sweep: every [`SearchStrategy`] variant, with Kafka's 8192-byte
/// warm section and 4096-byte pages.
pub fn strategies() -> Vec<SearchStrategy> {
    crate::replay::compared_strategies(8192, 4096).to_vec()
}

fn strategy_by_name(name: &str, warm: usize, page: usize) -> Option<SearchStrategy> {
    crate::replay::compared_strategies(warm, page)
        .into_iter()
        .find(|s| s.name() == name)
}

/// Runs the sweep: writes the partition, then every arm.
///
/// # Errors
/// Setup errors (writing the partition, evicting it). An arm that fails or is OOM-killed
/// is a row, not an error.
pub fn run(
    cfg: &PollutionConfig,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<PollutionOutcome, BenchError> {
    if let Some(why) = cfg.skip.clone().or_else(unavailable_reason) {
        return Ok(PollutionOutcome::skipped(why, cfg.scale.clone()));
    }
    let kind = match CgroupKind::detect() {
        Ok(k) => k,
        Err(e) => return Ok(PollutionOutcome::skipped(e, cfg.scale.clone())),
    };
    Cgroup::remove_stale(kind);
    let location = match real_faults::choose_location(cfg.dir.as_deref()) {
        Ok((l, _)) => l,
        Err(rejected) => {
            return Ok(PollutionOutcome::skipped(
                format!(
                    "no directory where the page cache can be evicted ({})",
                    real_faults::describe_rejected(&rejected).trim()
                ),
                cfg.scale.clone(),
            ))
        }
    };
    let dir = tempfile::Builder::new()
        .prefix("pollution")
        .tempdir_in(&location.dir)
        .map_err(io_err(&location.dir))?;
    progress("pollution: setup", 0, 1);
    let t = Instant::now();
    let segments = write_partition(dir.path(), &cfg.scale, cfg.seed)?;
    let setup_secs = t.elapsed().as_secs_f64();
    let active = segments
        .last()
        .expect("at least the active segment")
        .clone();
    let pristine_index = std::fs::read(&active.index).map_err(io_err(&active.index))?;
    let total =
        (cfg.limits_mib.len() * cfg.strategies.len() * (1 + cfg.mitigation as usize)) as u64;
    // One arm first whose figures are dropped: right after the partition was written,
    // the first arm's scan ran at a tenth of the speed of the next ones (the disk still
    // busy with the setup's writes).
    if let (Some(&limit_mib), Some(&strategy)) = (cfg.limits_mib.first(), cfg.strategies.first()) {
        progress("pollution: priming", 0, 1);
        restore(&active, &pristine_index)?;
        let spec = arm_spec(cfg, strategy, false, &segments);
        run_arm(&cfg.exe, kind, limit_mib << 20, &spec)?;
    }
    let mut arms = Vec::new();
    for &limit_mib in &cfg.limits_mib {
        for &strategy in &cfg.strategies {
            for mitigation in [false, true] {
                if mitigation && !cfg.mitigation {
                    continue;
                }
                progress("pollution: arms", arms.len() as u64, total);
                restore(&active, &pristine_index)?;
                for s in &segments {
                    evict(&s.log)?;
                    evict(&s.index)?;
                }
                let spec = arm_spec(cfg, strategy, mitigation, &segments);
                let outcome = run_arm(&cfg.exe, kind, limit_mib << 20, &spec)?;
                arms.push(ArmRow {
                    limit_mib,
                    strategy: spec.strategy,
                    mitigation,
                    outcome,
                });
            }
        }
    }
    progress("pollution: arms", total, total);
    restore(&active, &pristine_index)?;
    Ok(PollutionOutcome {
        skipped: None,
        cgroup: kind.name().to_string(),
        scale: cfg.scale.clone(),
        arms,
        setup_secs,
    })
}

fn arm_spec(
    cfg: &PollutionConfig,
    strategy: SearchStrategy,
    mitigation: bool,
    segments: &[SegmentFiles],
) -> ArmSpec {
    let (warm_section_bytes, page_size) = match strategy {
        SearchStrategy::WarmCold { warm_section_bytes } => (warm_section_bytes, 4096),
        SearchStrategy::PageDirectory { page_size } => (8192, page_size),
        _ => (8192, 4096),
    };
    ArmSpec {
        scale: cfg.scale.clone(),
        strategy: strategy.name().to_string(),
        warm_section_bytes,
        page_size,
        mitigation,
        segments: segments.to_vec(),
        seed: cfg.seed,
    }
}

/// Puts the active segment back as the setup left it: the `.log` cut to its length, the
/// `.index` bytes rewritten.
fn restore(active: &SegmentFiles, index: &[u8]) -> Result<(), BenchError> {
    let log = OpenOptions::new()
        .write(true)
        .open(&active.log)
        .map_err(io_err(&active.log))?;
    log.set_len(active.log_bytes).map_err(io_err(&active.log))?;
    std::fs::write(&active.index, index).map_err(io_err(&active.index))
}

fn evict(path: &Path) -> Result<(), BenchError> {
    let f = File::open(path).map_err(io_err(path))?;
    sys::evict_from_page_cache(&f).map_err(io_err(path))
}

/// Runs one arm in a child process inside a fresh cgroup of `limit_bytes`.
///
/// # Errors
/// Creating the cgroup or spawning the child; what the child does is an [`ArmOutcome`].
pub fn run_arm(
    exe: &Path,
    kind: CgroupKind,
    limit_bytes: u64,
    spec: &ArmSpec,
) -> Result<ArmOutcome, BenchError> {
    let root = match kind {
        CgroupKind::V1 => V1_ROOT,
        CgroupKind::V2 => V2_ROOT,
    };
    let cg = Cgroup::create(kind, limit_bytes).map_err(io_err(Path::new(root)))?;
    let json = serde_json::to_string(spec).map_err(|e| BenchError::Config(e.to_string()))?;
    let child = Command::new(exe)
        .arg("--pollution-arm")
        .arg(json)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_err(exe))?;
    let mut guard = ChildGuard(Some(child));
    let child = guard.0.as_mut().expect("just set");
    cg.add(child.id()).map_err(io_err(cg.path()))?;
    // Only now may the child start: everything it brings in is charged to the cgroup.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"go\n");
    }
    let deadline =
        Instant::now() + Duration::from_millis(spec.scale.arm_ms) + Duration::from_secs(120);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() > deadline => {
                return Ok(ArmOutcome::Failed("timed out (killed)".to_string()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(io_err(exe)(e)),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut stdout);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    guard.0 = None;
    let oom = cg.oom_kills() > 0;
    if status.success() {
        return Ok(match serde_json::from_str::<ArmResult>(stdout.trim()) {
            Ok(r) => ArmOutcome::Measured(r),
            Err(e) => ArmOutcome::Failed(format!("unreadable result ({e}): {}", stdout.trim())),
        });
    }
    #[cfg(unix)]
    let killed = {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(9)
    };
    #[cfg(not(unix))]
    let killed = false;
    if oom || killed {
        return Ok(ArmOutcome::OomKilled);
    }
    let last = stderr.lines().last().unwrap_or("").to_string();
    Ok(ArmOutcome::Failed(format!("{status}: {last}")))
}

/// The child's side (`bench-harness --pollution-arm <json>`): waits for a line on stdin
/// (the parent has moved it into its cgroup), runs the arm and prints its
/// [`ArmResult`] as one JSON line.
///
/// # Errors
/// An unreadable spec, index or I/O errors.
pub fn arm_main(spec_json: &str) -> Result<(), BenchError> {
    let spec: ArmSpec = serde_json::from_str(spec_json)
        .map_err(|e| BenchError::Config(format!("--pollution-arm: {e}")))?;
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    let result = run_arm_here(&spec)?;
    let text = serde_json::to_string(&result).map_err(|e| BenchError::Config(e.to_string()))?;
    println!("{text}");
    Ok(())
}

struct Seg {
    files: SegmentFiles,
    index: OffsetIndex,
    log: File,
}

/// Runs an arm in this process (the child's work; also usable without a cgroup).
///
/// # Errors
/// Index or I/O errors.
pub fn run_arm_here(spec: &ArmSpec) -> Result<ArmResult, BenchError> {
    let strategy = strategy_by_name(&spec.strategy, spec.warm_section_bytes, spec.page_size)
        .ok_or_else(|| BenchError::Config(format!("unknown strategy {}", spec.strategy)))?;
    let scale = &spec.scale;
    let mut segs = Vec::new();
    for (i, f) in spec.segments.iter().enumerate() {
        let active = i + 1 == spec.segments.len();
        let index = OffsetIndex::open(&f.index, f.base_offset, scale.index_bytes)?
            .with_search_strategy(strategy);
        if active {
            // As the broker reopens its active segment: back to segment.index.bytes.
            index.resize(scale.index_bytes)?;
        }
        let log = OpenOptions::new()
            .read(true)
            .write(active)
            .open(&f.log)
            .map_err(io_err(&f.log))?;
        segs.push(Seg {
            files: f.clone(),
            index,
            log,
        });
    }
    let active = segs.last().expect("at least one segment");
    let end = AtomicI64::new(active.files.end_offset);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let warmup = Duration::from_millis(scale.warmup_ms);
    let arm = Duration::from_millis(scale.arm_ms);
    let (produced, lagging, consumers) = std::thread::scope(|s| {
        let producer = s.spawn(|| produce(spec, active, &end, &stop));
        let lagging = s.spawn(|| lag(spec, &segs, &end, &stop, start + warmup));
        let consumers: Vec<_> = (0..scale.consumers)
            .map(|c| {
                let (end, stop) = (&end, &stop);
                s.spawn(move || in_sync(spec, active, end, stop, start + warmup, c as u64))
            })
            .collect();
        std::thread::sleep(arm.saturating_sub(start.elapsed()));
        stop.store(true, Ordering::Release);
        let join = |e| BenchError::Config(format!("a thread of the arm panicked: {e:?}"));
        let produced = producer.join().map_err(join);
        let lagging = lagging.join().map_err(join);
        let consumers: Vec<_> = consumers
            .into_iter()
            .map(|h| h.join().map_err(join))
            .collect();
        (produced, lagging, consumers)
    });
    let produced = produced??;
    let (lagging_bytes, lagging_secs, lagging_wraps) = lagging??;
    let mut r = ArmResult {
        produced_bytes: produced,
        lagging_bytes,
        lagging_secs,
        lagging_wraps,
        ..ArmResult::default()
    };
    let mut latencies = Vec::new();
    for c in consumers {
        let c = c??;
        r.lookups += c.lookups;
        r.major_faults += c.major_faults;
        r.page_ins += c.page_ins;
        latencies.extend(c.latencies);
    }
    latencies.sort_unstable();
    let pct = |q: f64| -> u64 {
        if latencies.is_empty() {
            return 0;
        }
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        u64::from(latencies[i])
    };
    r.latency_ns = [pct(0.50), pct(0.99), pct(0.999)];
    Ok(r)
}

/// The producer: appends batches at the tail at the configured rate until `stop`.
/// Returns the bytes appended.
fn produce(
    spec: &ArmSpec,
    active: &Seg,
    end: &AtomicI64,
    stop: &AtomicBool,
) -> Result<u64, BenchError> {
    use std::os::unix::fs::FileExt;
    let mut rng = StdRng::seed_from_u64(spec.seed ^ 0x5052_4f44);
    let value = vec![b'p'; 300];
    let mut position = active.files.log_bytes;
    let mut offset = active.files.end_offset;
    let mut since_entry = 0u64;
    let mut produced = 0u64;
    let start = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let due = (start.elapsed().as_secs_f64() * spec.scale.produce_bytes_per_sec as f64) as u64;
        while produced < due {
            let (batch, last) = next_batch(&mut rng, offset, &value)?;
            active
                .log
                .write_all_at(&batch, position)
                .map_err(io_err(&active.files.log))?;
            if since_entry > INDEX_INTERVAL_BYTES {
                active.index.append(last, position as u32)?;
                since_entry = 0;
            }
            since_entry += batch.len() as u64;
            position += batch.len() as u64;
            produced += batch.len() as u64;
            offset = last + 1;
            end.store(offset, Ordering::Release);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(produced)
}

struct InSync {
    lookups: u64,
    major_faults: u64,
    page_ins: u64,
    latencies: Vec<u32>,
}

/// An in-sync consumer: tail lookups and reads until `stop`, counted from `count_from`.
fn in_sync(
    spec: &ArmSpec,
    active: &Seg,
    end: &AtomicI64,
    stop: &AtomicBool,
    count_from: Instant,
    id: u64,
) -> Result<InSync, BenchError> {
    use std::os::unix::fs::FileExt;
    let mut rng = StdRng::seed_from_u64(spec.seed.wrapping_add(id + 1));
    let snap = active.index.snapshot()?;
    let mapping = snap.mapping();
    let mut buf = vec![0u8; IN_SYNC_READ_BYTES];
    let mut probe = PageProbe::new(sys::page_size());
    let mut out = InSync {
        lookups: 0,
        major_faults: 0,
        page_ins: 0,
        latencies: Vec::with_capacity(16_384),
    };
    let mut counting = false;
    let mut major_start = 0;
    let pause = Duration::from_micros(spec.scale.lookup_interval_us);
    while !stop.load(Ordering::Acquire) {
        if !counting && Instant::now() >= count_from {
            counting = true;
            major_start = sys::thread_page_faults()
                .map_err(io_err(&active.files.index))?
                .0;
        }
        let leo = end.load(Ordering::Acquire);
        let target = (leo - 1 - rng.gen_range(0..spec.scale.hot_lag_offsets.max(1)))
            .max(active.files.base_offset);
        let before = if counting {
            mapping.resident_pages().unwrap_or_default()
        } else {
            Vec::new()
        };
        probe.clear();
        let t = Instant::now();
        let answer = active.index.lookup_with_probe(target, &mut probe)?;
        let ns = t.elapsed().as_nanos();
        if counting {
            // The pages this lookup read that were not resident just before it: the
            // kernel had to bring each back for it (or for a consumer racing it).
            out.page_ins += probe
                .pages()
                .iter()
                .filter(|&&p| before.get(p) == Some(&false))
                .count() as u64;
            out.latencies.push(u32::try_from(ns).unwrap_or(u32::MAX));
            out.lookups += 1;
        }
        let _ = active.log.read_at(&mut buf, u64::from(answer.position));
        std::thread::sleep(pause);
    }
    if counting {
        let major_end = sys::thread_page_faults()
            .map_err(io_err(&active.files.index))?
            .0;
        out.major_faults = major_end.saturating_sub(major_start);
    }
    Ok(out)
}

/// The lagging consumer: reads forward from the oldest offset at full speed until `stop`.
/// Returns (bytes read while counted, seconds counted, wraps).
fn lag(
    spec: &ArmSpec,
    segs: &[Seg],
    end: &AtomicI64,
    stop: &AtomicBool,
    count_from: Instant,
) -> Result<(u64, f64, u32), BenchError> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; LAGGING_FETCH_BYTES];
    let mut seg = 0usize;
    let mut offset = segs[0].files.base_offset;
    let mut bytes = 0u64;
    let mut wraps = 0u32;
    let mut counted_since: Option<Instant> = None;
    while !stop.load(Ordering::Acquire) {
        if counted_since.is_none() && Instant::now() >= count_from {
            counted_since = Some(Instant::now());
            bytes = 0;
        }
        let s = &segs[seg];
        let last = seg + 1 == segs.len();
        let seg_end = if last {
            end.load(Ordering::Acquire)
        } else {
            s.files.end_offset
        };
        if offset >= seg_end {
            if last {
                seg = 0;
                wraps += 1;
                offset = segs[0].files.base_offset;
            } else {
                seg += 1;
            }
            continue;
        }
        let position = u64::from(s.index.lookup(offset)?.position);
        let n = s
            .log
            .read_at(&mut buf, position)
            .map_err(io_err(&s.files.log))?;
        let mut at = 0usize;
        let mut next = offset;
        while let Ok(batch) = RecordBatch::new(&buf[at..n]) {
            if batch.last_offset() >= offset {
                bytes += batch.size_in_bytes() as u64;
            }
            next = next.max(batch.last_offset() + 1);
            at += batch.size_in_bytes();
        }
        if at == 0 {
            // Nothing whole to read (the tail is being written): move on.
            if last {
                offset = seg_end;
            } else {
                seg += 1;
            }
            continue;
        }
        if spec.mitigation && !last {
            let _ = sys::advise_range_dont_need(&s.log, position, at as u64);
        }
        offset = next;
    }
    let secs = counted_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
    Ok((bytes, secs, wraps))
}
