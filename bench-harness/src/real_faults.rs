//! Real page faults: the hot-tail workload on real index files whose pages were evicted
//! from the operating system's page cache, counting the pages the kernel actually brings
//! back in (`mincore` before and after) and this process's major page faults
//! (`getrusage`), per search strategy.
//!
//! Each run uses a fresh mapping of a file in a directory where eviction was verified to
//! work ([`choose_location`]): the file is flushed, every mapping of it drops its page
//! table entries (`madvise(MADV_DONTNEED)`), the kernel is asked to drop its pages
//! (`fdatasync` + `posix_fadvise(POSIX_FADV_DONTNEED)`), and residency is checked right
//! after (a run whose file is still resident is not measured). Two phases per index kind:
//!
//! * **static**: the index is full (as at the end of the synthetic replay) and evicted;
//!   then [`STATIC_LOOKUPS`] hot-tail lookups, nothing else. Each strategy's page-ins are
//!   the cold-start cost of the hot tail.
//! * **growing**: the index is half full and evicted; then the producer fills the second
//!   half while the hot-tail consumers look up (as in the synthetic replay). Only pages
//!   that existed before the replay (below the appender's first page) are counted: the
//!   appender writes new pages, which become resident for every strategy alike. An
//!   appends-only baseline run (no lookups) measures what the appender itself brings in
//!   (the first page it reads back and the kernel's read-around); each strategy's
//!   lookup page-ins are its count minus the baseline's.
//!
//! Every phase runs twice: with the kernel's default readahead (a fault also reads the
//! pages around it, 128 KiB by default) and with readahead off (`madvise(MADV_RANDOM)`,
//! a fault reads one page). Without readahead the page-ins equal the distinct pages the
//! lookups touched (as counted by the page probe), which the tests check.
//!
//! Residency is counted in pages of the operating system's size ([`sys::page_size`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use index_core::search::{Bound, SearchField, SearchStrategy};
use index_core::sys::{self, Mapping};
use index_core::{IndexEntry, IndexError, PageProbe, Snapshot};
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use serde::Serialize;

use crate::producer::{ProducerConfig, SegmentModel};
use crate::replay::{compared_strategies, strategy_is_native, IndexKind, ReplayIndex};
use crate::workload::{LogView, TargetGenerator, Workload, WorkloadConfig};
use crate::BenchError;

/// Hot-tail lookups of the static phase (lookups): the first thousand lookups after the
/// page cache was emptied, so its page-ins are also its page-ins per 1000 lookups.
pub const STATIC_LOOKUPS: usize = 1000;

/// Eviction counts as working when at most this share of the file's pages is still
/// resident right after evicting (fraction).
pub const MAX_RESIDENT_AFTER_EVICT: f64 = 0.01;

/// Parameters of the real-fault measurement.
#[derive(Clone, Debug)]
pub struct RealFaultConfig {
    /// Size of each index file in bytes.
    pub index_bytes: usize,
    /// Page size of the page-directory strategy, in bytes.
    pub page_size: usize,
    /// Warm-section size of the warm/cold strategy, in bytes.
    pub warm_section_bytes: usize,
    /// Hot-tail lookups of each growing-phase run (lookups).
    pub growing_lookups: usize,
    /// Lookups after every round of appends in the growing phase.
    pub lookups_per_round: usize,
    /// Seed of the producer model and the targets.
    pub seed: u64,
    /// The producer model.
    pub producer: ProducerConfig,
    /// The consumers (only the hot-tail settings are used).
    pub workload: WorkloadConfig,
    /// Directory for the index files; `None`: try [`default_candidates`] in order.
    pub dir: Option<PathBuf>,
    /// Index kinds to measure.
    pub kinds: Vec<IndexKind>,
    /// Readahead settings to measure.
    pub readaheads: Vec<Readahead>,
}

/// Which phase a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Full index, lookups only.
    Static,
    /// Half-full index filled to the end while consumers look up.
    Growing,
}

impl Phase {
    /// `static` or `growing`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Static => "static",
            Phase::Growing => "growing",
        }
    }
}

/// The kernel's readahead for page faults during a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Readahead {
    /// The default (`MADV_NORMAL`): a fault reads the pages around it too.
    Kernel,
    /// Off (`MADV_RANDOM`): a fault reads only its page.
    Off,
}

impl Readahead {
    /// `kernel` or `off`.
    pub fn name(self) -> &'static str {
        match self {
            Readahead::Kernel => "kernel",
            Readahead::Off => "off",
        }
    }
}

/// One measured run.
#[derive(Clone, Debug, Serialize)]
pub struct FaultRun {
    /// Offset or time index.
    pub kind: IndexKind,
    /// Static or growing.
    pub phase: Phase,
    /// Readahead setting.
    pub readahead: Readahead,
    /// Strategy name, or `appends-only` for the growing phase's baseline.
    pub strategy: String,
    /// Hot-tail lookups made (lookups).
    pub lookups: u64,
    /// Pages of the file (OS pages).
    pub file_pages: usize,
    /// Pages counted (OS pages): the whole file (static) or the pages that existed before
    /// the replay (growing).
    pub counted_pages: usize,
    /// Counted pages still resident right after evicting (OS pages; 0 when eviction
    /// worked).
    pub resident_after_evict: usize,
    /// Counted pages resident after the run that were not right after evicting (OS
    /// pages).
    pub raw_page_ins: u64,
    /// Major page faults of the process during the run.
    pub raw_major_faults: u64,
    /// `raw_page_ins` minus the appends-only baseline's (growing phase; equal to
    /// `raw_page_ins` in the static phase, which has no appends), at least 0 (OS pages).
    pub page_ins: u64,
    /// `raw_major_faults` minus the baseline's, at least 0.
    pub major_faults: u64,
    /// Distinct counted pages the lookups touched according to the page probe (OS
    /// pages): what the run must bring in without readahead.
    pub probed_pages: usize,
    /// Page-directory lookups answered without the directory (must be 0).
    pub directory_fallbacks: u64,
}

impl FaultRun {
    /// Page-ins per 1000 lookups (0 without lookups).
    pub fn page_ins_per_1000(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            1000.0 * self.page_ins as f64 / self.lookups as f64
        }
    }
}

/// Where the index files were put and whether eviction works there.
#[derive(Clone, Debug, Serialize)]
pub struct Location {
    /// The directory.
    pub dir: PathBuf,
    /// Filesystem type from `/proc/self/mountinfo` (`?` if unknown).
    pub fs_type: String,
    /// Mount point of that filesystem.
    pub mount_point: String,
    /// The block device's readahead (`read_ahead_kb` in sysfs), in KiB, if known: the
    /// kernel's read-around on a page fault covers up to this much.
    pub readahead_kib: Option<u64>,
}

/// A directory tried for the measurement and why it was not used.
#[derive(Clone, Debug, Serialize)]
pub struct Rejected {
    /// The directory.
    pub dir: PathBuf,
    /// Filesystem type (`?` if unknown).
    pub fs_type: String,
    /// Why it was not used.
    pub reason: String,
}

impl std::fmt::Display for Rejected {
    /// `/dev/shm (tmpfs): why`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.dir.display(),
            self.fs_type,
            self.reason
        )
    }
}

/// The rejected directories with their reasons, `; `-separated.
pub fn describe_rejected(rejected: &[Rejected]) -> String {
    rejected
        .iter()
        .map(Rejected::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Everything the real-fault measurement produced.
#[derive(Clone, Debug, Serialize)]
pub struct RealFaultOutcome {
    /// Where the files were.
    pub location: Location,
    /// Directories tried before it.
    pub rejected: Vec<Rejected>,
    /// OS page size in bytes.
    pub os_page_size: usize,
    /// Index file size in bytes.
    pub index_bytes: usize,
    /// Per index kind: OS pages brought in by opening the full index with the page
    /// directory after evicting it (0: the fences start unknown and the lookups fill
    /// them in).
    pub directory_build_page_ins: Vec<(IndexKind, u64)>,
    /// Every run, in order: per kind, static then growing; per readahead setting; per
    /// strategy (the growing phase's baseline first).
    pub runs: Vec<FaultRun>,
    /// Runs that could not be measured, with the reason.
    pub unmeasured: Vec<String>,
}

impl RealFaultOutcome {
    /// The run of `kind`, `phase`, `readahead` and strategy `name`, if measured.
    pub fn get(
        &self,
        kind: IndexKind,
        phase: Phase,
        readahead: Readahead,
        name: &str,
    ) -> Option<&FaultRun> {
        self.runs.iter().find(|r| {
            r.kind == kind && r.phase == phase && r.readahead == readahead && r.strategy == name
        })
    }
}

/// Directories tried in order when no directory is given: the system temporary
/// directory, `/var/tmp`, the workspace's `target/` directory and the current directory
/// (tmpfs or overlay filesystems may not evict).
pub fn default_candidates() -> Vec<PathBuf> {
    let mut v = vec![std::env::temp_dir(), PathBuf::from("/var/tmp")];
    v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    if let Ok(cwd) = std::env::current_dir() {
        v.push(cwd);
    }
    v
}

/// The filesystem type and mount point holding `dir`, from `/proc/self/mountinfo`
/// (`("?", "?")` when unknown).
pub fn filesystem_of(dir: &Path) -> (String, String) {
    let (fs, mp, _) = mount_of(dir);
    (fs, mp)
}

/// The readahead (KiB) of the block device holding `dir`, from sysfs.
pub fn readahead_kib_of(dir: &Path) -> Option<u64> {
    let (_, _, dev) = mount_of(dir);
    let dev = dev?;
    let candidates = [
        format!("/sys/dev/block/{dev}/queue/read_ahead_kb"),
        format!("/sys/dev/block/{dev}/../queue/read_ahead_kb"),
        format!("/sys/class/bdi/{dev}/read_ahead_kb"),
    ];
    candidates.iter().find_map(|p| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    })
}

/// `(filesystem type, mount point, major:minor)` of the mount holding `dir`.
fn mount_of(dir: &Path) -> (String, String, Option<String>) {
    let unknown = ("?".to_string(), "?".to_string(), None);
    let Ok(dir) = dir.canonicalize() else {
        return unknown;
    };
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return unknown;
    };
    let mut best: Option<(usize, String, String, String)> = None;
    for line in info.lines() {
        // id parent major:minor root mount-point options [optional...] - fstype source ...
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(mp), Some(dash)) = (fields.get(4), fields.iter().position(|f| *f == "-")) else {
            continue;
        };
        let Some(fs) = fields.get(dash + 1) else {
            continue;
        };
        let mp = mp.replace("\\040", " ");
        if dir.starts_with(&mp) && best.as_ref().is_none_or(|b| mp.len() >= b.0) {
            let dev = fields.get(2).unwrap_or(&"").to_string();
            best = Some((mp.len(), fs.to_string(), mp, dev));
        }
    }
    best.map_or(unknown, |(_, fs, mp, dev)| (fs, mp, Some(dev)))
}

fn resident_count(
    m: &Mapping,
    range: std::ops::Range<usize>,
) -> Result<(Vec<bool>, usize), String> {
    let r = m
        .resident_pages()
        .map_err(|e| format!("mincore failed: {e}"))?;
    let n = r[range.start.min(r.len())..range.end.min(r.len())]
        .iter()
        .filter(|&&b| b)
        .count();
    Ok((r, n))
}

/// Flushes, drops `mapping`'s page-table entries and asks the kernel to drop the file's
/// pages.
fn evict(mapping: &Mapping, path: &Path) -> Result<(), String> {
    mapping.flush().map_err(|e| format!("msync failed: {e}"))?;
    mapping
        .advise_dont_need()
        .map_err(|e| format!("madvise(MADV_DONTNEED) failed: {e}"))?;
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    sys::evict_from_page_cache(&file).map_err(|e| format!("posix_fadvise(DONTNEED) failed: {e}"))
}

/// Checks that a small file in `dir` can be evicted: writes 64 pages, reads them, evicts
/// them and requires that none stays resident.
pub fn probe_eviction(dir: &Path) -> Result<(), String> {
    let tmp = tempfile::Builder::new()
        .prefix("evict-probe")
        .tempdir_in(dir)
        .map_err(|e| format!("cannot create a directory there: {e}"))?;
    let path = tmp.path().join("probe");
    let page = sys::page_size();
    let len = 64 * page;
    std::fs::write(&path, vec![7u8; len]).map_err(|e| format!("cannot write: {e}"))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open: {e}"))?;
    let map = Mapping::map(&file, len, true).map_err(|e| format!("mmap failed: {e}"))?;
    let sum: u64 = map.bytes(len).iter().step_by(page).map(|&b| b as u64).sum();
    black_box(sum);
    let (_, before) = resident_count(&map, 0..64)?;
    if before == 0 {
        return Err("mincore reports no page resident right after reading all of them".into());
    }
    evict(&map, &path)?;
    let (_, after) = resident_count(&map, 0..64)?;
    if after > 0 {
        return Err(format!(
            "{after} of 64 pages stay resident after madvise(DONTNEED) + posix_fadvise(DONTNEED): the kernel ignores the eviction here"
        ));
    }
    Ok(())
}

/// Picks the directory for the measurement: `cfg.dir` if given, else the first of
/// [`default_candidates`] where [`probe_eviction`] succeeds.
///
/// # Errors
/// Every candidate with its reason, when none works.
pub fn choose_location(dir: Option<&Path>) -> Result<(Location, Vec<Rejected>), Vec<Rejected>> {
    let candidates = match dir {
        Some(d) => vec![d.to_path_buf()],
        None => default_candidates(),
    };
    let mut rejected = Vec::new();
    for d in candidates {
        let (fs_type, mount_point) = filesystem_of(&d);
        match probe_eviction(&d) {
            Ok(()) => {
                return Ok((
                    Location {
                        readahead_kib: readahead_kib_of(&d),
                        dir: d,
                        fs_type,
                        mount_point,
                    },
                    rejected,
                ))
            }
            Err(reason) => rejected.push(Rejected {
                dir: d,
                fs_type,
                reason,
            }),
        }
    }
    Err(rejected)
}

/// A temporary directory for the index files in `location`, named `prefix...`.
pub(crate) fn scratch_dir(
    location: &Location,
    prefix: &str,
) -> Result<tempfile::TempDir, BenchError> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&location.dir)
        .map_err(|e| BenchError::Io {
            path: location.dir.clone(),
            source: e,
        })
}

/// Creates an empty `I` index of `index_bytes` at `path` for the segment starting at
/// `base_offset`, searched with the page directory of `page_size`.
pub(crate) fn create_index<I: ReplayIndex>(
    path: &Path,
    base_offset: i64,
    index_bytes: usize,
    page_size: usize,
) -> Result<I, IndexError> {
    I::create(
        path,
        base_offset,
        index_bytes,
        SearchStrategy::PageDirectory { page_size },
    )
}

/// Removes the file at its path when dropped, however the run using it ends (a run that
/// succeeds has usually deleted it already).
pub(crate) struct RemoveOnDrop<'a>(pub(crate) &'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// Fills a fresh `I` index at `path` with the producer model up to `entries` entries (or
/// until it is full), returning the index and the model (for targets).
fn fill<I: ReplayIndex>(
    path: &Path,
    cfg: &RealFaultConfig,
    entries: usize,
) -> Result<(I, SegmentModel, Option<i64>), BenchError> {
    let index = create_index::<I>(
        path,
        cfg.producer.base_offset,
        cfg.index_bytes,
        cfg.page_size,
    )?;
    let mut model = SegmentModel::new(cfg.producer.clone(), cfg.seed);
    let mut first_key = None;
    let goal = entries.min(index.capacity(false));
    while index.entries() < goal {
        let Some(point) = model.next_index_point() else {
            break;
        };
        let (k, v) = I::key_value(&point);
        if index.append_entry(k, v, false)? {
            first_key.get_or_insert(k);
        }
    }
    Ok((index, model, first_key))
}

struct Lookups {
    generator: TargetGenerator,
    probe: PageProbe,
    touched: BTreeSet<usize>,
    fallbacks: u64,
    made: u64,
}

impl Lookups {
    fn new(cfg: &RealFaultConfig) -> Self {
        Lookups {
            generator: TargetGenerator::new(
                Workload::HotTail,
                cfg.workload.clone(),
                Workload::HotTail.seed(cfg.seed),
            ),
            probe: PageProbe::new(sys::page_size()),
            touched: BTreeSet::new(),
            fallbacks: 0,
            made: 0,
        }
    }

    /// Makes `m` hot-tail lookups with `strategy` on `snap`, reading each answer entry.
    fn run<E: IndexEntry>(
        &mut self,
        snap: &Snapshot<E>,
        strategy: SearchStrategy,
        view: &LogView<'_>,
        m: usize,
    ) {
        if !strategy_is_native(snap, strategy) {
            self.fallbacks += m as u64;
        }
        let base = snap.base_offset();
        for _ in 0..m {
            let Some((_, target)) = self.generator.next_target(view) else {
                return;
            };
            self.probe.clear();
            let slot = snap.search_with(
                strategy,
                target,
                SearchField::Key,
                Bound::LargestLowerBound,
                &mut self.probe,
            );
            if let Some(e) = slot.and_then(|i| snap.answer_with(strategy, i, &mut self.probe)) {
                black_box((e.key(base), e.value(base)));
            }
            self.touched.extend(self.probe.pages().iter().copied());
            self.made += 1;
        }
    }
}

fn key_of_offset_fn<'a>(kind: IndexKind, model: &'a SegmentModel) -> impl Fn(i64) -> i64 + 'a {
    let start = model.config().start_timestamp_ms;
    move |o| match kind {
        IndexKind::Offset => o,
        IndexKind::Time => model.timestamp_of(o).unwrap_or(start),
    }
}

/// Residency and fault counters at the start of a run.
pub(crate) struct Start {
    resident: Vec<bool>,
    resident_counted: usize,
    major: u64,
}

/// Sets the readahead of `mapping`, evicts the file at `path` and records residency and
/// major faults; fails when more than [`MAX_RESIDENT_AFTER_EVICT`] of the `counted` pages
/// stay resident.
pub(crate) fn start_run(
    mapping: &Mapping,
    path: &Path,
    readahead: Readahead,
    counted: std::ops::Range<usize>,
) -> Result<Start, String> {
    mapping
        .advise_random(readahead == Readahead::Off)
        .map_err(|e| format!("madvise(MADV_RANDOM/NORMAL) failed: {e}"))?;
    evict(mapping, path)?;
    let (resident, resident_counted) = resident_count(mapping, counted.clone())?;
    let limit = (MAX_RESIDENT_AFTER_EVICT * counted.len() as f64).ceil() as usize;
    if resident_counted > limit {
        return Err(format!(
            "eviction did not work: {resident_counted} of {} pages still resident right after evicting",
            counted.len()
        ));
    }
    let major = sys::page_faults()
        .map_err(|e| format!("getrusage failed: {e}"))?
        .0;
    Ok(Start {
        resident,
        resident_counted,
        major,
    })
}

/// `(new page-ins among counted pages, major faults)` since `start`.
pub(crate) fn finish_run(
    mapping: &Mapping,
    start: &Start,
    counted: std::ops::Range<usize>,
) -> Result<(u64, u64), String> {
    let major = sys::page_faults()
        .map_err(|e| format!("getrusage failed: {e}"))?
        .0;
    let (after, _) = resident_count(mapping, counted.clone())?;
    let ins = counted
        .filter(|&p| after.get(p) == Some(&true) && start.resident.get(p) != Some(&true))
        .count();
    Ok((ins as u64, major.saturating_sub(start.major)))
}

fn static_run<I: ReplayIndex>(
    path: &Path,
    cfg: &RealFaultConfig,
    model: &SegmentModel,
    first_key: i64,
    last_key: i64,
    strategy: SearchStrategy,
    readahead: Readahead,
) -> Result<FaultRun, String> {
    let index = I::open_existing(
        path,
        cfg.producer.base_offset,
        SearchStrategy::PageDirectory {
            page_size: cfg.page_size,
        },
    )
    .map_err(|e| e.to_string())?;
    let snap = index.snapshot().map_err(|e| e.to_string())?;
    let file_pages = snap.mapping().len().div_ceil(sys::page_size());
    let counted = 0..file_pages;
    let start = start_run(snap.mapping(), path, readahead, counted.clone())?;
    let key_of_offset = key_of_offset_fn(I::KIND, model);
    let view = LogView {
        first_offset: cfg.producer.base_offset,
        log_end_offset: model.log_end_offset(),
        key_range: Some((first_key, last_key)),
        key_of_offset: &key_of_offset,
    };
    let mut lookups = Lookups::new(cfg);
    lookups.run(&snap, strategy, &view, STATIC_LOOKUPS);
    let (ins, major) = finish_run(snap.mapping(), &start, counted)?;
    Ok(FaultRun {
        kind: I::KIND,
        phase: Phase::Static,
        readahead,
        strategy: strategy.name().to_string(),
        lookups: lookups.made,
        file_pages,
        counted_pages: file_pages,
        resident_after_evict: start.resident_counted,
        raw_page_ins: ins,
        raw_major_faults: major,
        page_ins: ins,
        major_faults: major,
        probed_pages: lookups.touched.len(),
        directory_fallbacks: lookups.fallbacks,
    })
}

fn growing_run<I: ReplayIndex>(
    path: &Path,
    cfg: &RealFaultConfig,
    strategy: Option<SearchStrategy>,
    readahead: Readahead,
) -> Result<FaultRun, String> {
    // Declared first, so dropped last: after the index is unmapped.
    let _remove = RemoveOnDrop(path);
    let _ = std::fs::remove_file(path);
    let capacity = cfg.index_bytes / I::Entry::SIZE;
    let (index, mut model, first_key) =
        fill::<I>(path, cfg, capacity / 2).map_err(|e| e.to_string())?;
    let capacity = index.capacity(false);
    let first_key = first_key.ok_or("the producer wrote no index entry")?;
    index.flush_index().map_err(|e| e.to_string())?;
    let snap = index.snapshot().map_err(|e| e.to_string())?;
    let os_page = sys::page_size();
    let file_pages = snap.mapping().len().div_ceil(os_page);
    // Pages wholly written before the replay; the appender starts in the next one.
    let counted = 0..(index.entries() * I::Entry::SIZE) / os_page;
    let start = start_run(snap.mapping(), path, readahead, counted.clone())?;
    drop(snap);
    let mut lookups = Lookups::new(cfg);
    let m = cfg.lookups_per_round.max(1);
    let rounds = (cfg.growing_lookups / m).max(1);
    let from = index.entries();
    let mut last_key = first_key;
    for r in 0..rounds {
        let goal = from + ((r as u128 + 1) * (capacity - from) as u128 / rounds as u128) as usize;
        while index.entries() < goal {
            let Some(point) = model.next_index_point() else {
                break;
            };
            let (k, v) = I::key_value(&point);
            if index.append_entry(k, v, false).map_err(|e| e.to_string())? {
                last_key = k;
            }
        }
        if let Some(strategy) = strategy {
            let snap = index.snapshot().map_err(|e| e.to_string())?;
            let key_of_offset = key_of_offset_fn(I::KIND, &model);
            let view = LogView {
                first_offset: cfg.producer.base_offset,
                log_end_offset: model.log_end_offset(),
                key_range: Some((first_key, last_key)),
                key_of_offset: &key_of_offset,
            };
            lookups.run(&snap, strategy, &view, m);
        }
    }
    let snap = index.snapshot().map_err(|e| e.to_string())?;
    let (ins, major) = finish_run(snap.mapping(), &start, counted.clone())?;
    drop(snap);
    index.delete().map_err(|e| e.to_string())?;
    let probed = lookups
        .touched
        .iter()
        .filter(|p| counted.contains(p))
        .count();
    Ok(FaultRun {
        kind: I::KIND,
        phase: Phase::Growing,
        readahead,
        strategy: strategy.map_or("appends-only", |s| s.name()).to_string(),
        lookups: lookups.made,
        file_pages,
        counted_pages: counted.len(),
        resident_after_evict: start.resident_counted,
        raw_page_ins: ins,
        raw_major_faults: major,
        page_ins: ins,
        major_faults: major,
        probed_pages: probed,
        directory_fallbacks: lookups.fallbacks,
    })
}

/// Opens the full index at `path` with the page directory after evicting it and returns
/// the OS pages that building the directory brought in.
fn directory_build_page_ins<I: ReplayIndex>(
    path: &Path,
    cfg: &RealFaultConfig,
) -> Result<u64, String> {
    // A plain mapping watches residency while the index is opened with the directory.
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let len = file.metadata().map_err(|e| e.to_string())?.len() as usize;
    let watch = Mapping::map(&file, len, false).map_err(|e| format!("mmap failed: {e}"))?;
    let pages = len.div_ceil(sys::page_size());
    let start = start_run(&watch, path, Readahead::Kernel, 0..pages)?;
    let index = I::open_existing(
        path,
        cfg.producer.base_offset,
        SearchStrategy::PageDirectory {
            page_size: cfg.page_size,
        },
    )
    .map_err(|e| e.to_string())?;
    let (ins, _) = finish_run(&watch, &start, 0..pages)?;
    drop(index);
    Ok(ins)
}

fn measure_kind<I: ReplayIndex>(
    dir: &Path,
    cfg: &RealFaultConfig,
    out: &mut RealFaultOutcome,
    progress: &mut dyn FnMut(u64, u64),
    done: &mut u64,
    total: u64,
) -> Result<(), BenchError> {
    let kind = I::KIND;
    let path = dir.join(kind.file_name(cfg.producer.base_offset));
    let strategies = compared_strategies(cfg.warm_section_bytes, cfg.page_size);
    // Static phase: one full file, reopened (fresh mapping) for every run.
    let (index, model, first_key) = fill::<I>(&path, cfg, usize::MAX)?;
    let last_key = index
        .snapshot()?
        .last()
        .map(|e| e.key(cfg.producer.base_offset));
    index.flush_index()?;
    index.trim()?;
    drop(index);
    match (first_key, last_key) {
        (Some(first), Some(last)) => {
            match directory_build_page_ins::<I>(&path, cfg) {
                Ok(n) => out.directory_build_page_ins.push((kind, n)),
                Err(e) => out
                    .unmeasured
                    .push(format!("{} directory build: {e}", kind.name())),
            }
            for &readahead in &cfg.readaheads {
                for &s in &strategies {
                    match static_run::<I>(&path, cfg, &model, first, last, s, readahead) {
                        Ok(r) => out.runs.push(r),
                        Err(e) => out.unmeasured.push(format!(
                            "{} static {} readahead {}: {e}",
                            kind.name(),
                            s.name(),
                            readahead.name()
                        )),
                    }
                    *done += 1;
                    progress(*done, total);
                }
            }
        }
        _ => out
            .unmeasured
            .push(format!("{} static: the index is empty", kind.name())),
    }
    let _ = std::fs::remove_file(&path);
    // Growing phase: a fresh file per run; the appends-only baseline first.
    for &readahead in &cfg.readaheads {
        let mut baseline: Option<(u64, u64)> = None;
        let runs = std::iter::once(None).chain(strategies.iter().copied().map(Some));
        for s in runs {
            match growing_run::<I>(&path, cfg, s, readahead) {
                Ok(mut r) => {
                    match baseline {
                        None => baseline = Some((r.raw_page_ins, r.raw_major_faults)),
                        Some((ins, major)) => {
                            r.page_ins = r.raw_page_ins.saturating_sub(ins);
                            r.major_faults = r.raw_major_faults.saturating_sub(major);
                        }
                    }
                    out.runs.push(r);
                }
                Err(e) => out.unmeasured.push(format!(
                    "{} growing {} readahead {}: {e}",
                    kind.name(),
                    s.map_or("appends-only", |s| s.name()),
                    readahead.name()
                )),
            }
            *done += 1;
            progress(*done, total);
        }
    }
    Ok(())
}

/// Runs the whole measurement for both index kinds. `progress(done, total)` counts runs.
///
/// # Errors
/// `Ok(Err(rejected))` when no directory evicts (nothing can be measured);
/// `Err` on an I/O or index error while preparing the files.
pub fn measure(
    cfg: &RealFaultConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Result<RealFaultOutcome, Vec<Rejected>>, BenchError> {
    let (location, rejected) = match choose_location(cfg.dir.as_deref()) {
        Ok(x) => x,
        Err(rejected) => return Ok(Err(rejected)),
    };
    let scratch = scratch_dir(&location, "bench-harness-faults")?;
    let mut out = RealFaultOutcome {
        location,
        rejected,
        os_page_size: sys::page_size(),
        index_bytes: cfg.index_bytes,
        directory_build_page_ins: Vec::new(),
        runs: Vec::new(),
        unmeasured: Vec::new(),
    };
    let total = (cfg.kinds.len() * cfg.readaheads.len() * 7) as u64;
    let mut done = 0;
    for &kind in &cfg.kinds {
        match kind {
            IndexKind::Offset => measure_kind::<OffsetIndex>(
                scratch.path(),
                cfg,
                &mut out,
                progress,
                &mut done,
                total,
            )?,
            IndexKind::Time => measure_kind::<TimeIndex>(
                scratch.path(),
                cfg,
                &mut out,
                progress,
                &mut done,
                total,
            )?,
        }
    }
    Ok(Ok(out))
}
