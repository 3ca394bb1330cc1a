//! Replays of real Kafka index files (`.index`, `.timeindex`) written by real brokers.
//!
//! Each file is opened read-only with the index crates, its entries are taken, and they
//! are appended one by one into a fresh index of the same size in a scratch directory;
//! after every append, hot-tail lookups with targets drawn from the real keys are answered
//! by every strategy (see [`crate::replay`]). The fixtures are small (at most 2 pages), so
//! every strategy touches at most 2 pages: the point of this replay is that the strategies
//! agree on real data, not the page counts. The fresh index is opened with the
//! page-directory strategy so its fence pointers exist.

use std::path::{Path, PathBuf};

use index_core::search::SearchStrategy;
use index_core::IndexEntry;
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::replay::{
    compared_strategies, slot_pages, warm_strategy, IndexKind, ReplayIndex, WorkloadStats,
};
use crate::BenchError;

/// Workload label of the real-data replay.
pub const REAL_WORKLOAD: &str = "real-hot-tail";

/// Hot-tail targets are drawn among the last this many entries (entries).
pub const HOT_ENTRIES: usize = 16;

/// Past the last entry, targets go up to this many keys (offsets or ms) beyond it.
pub const PAST_END_KEYS: i64 = 100;

/// Where to look for index files when `--data-dir` is not given: the repository's own
/// partition directories, `segment/tests/data` (so the main job replays the same files on
/// every clone; give `--data-dir` for others).
pub fn default_data_dir_candidates() -> Vec<PathBuf> {
    vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../segment/tests/data")]
}

/// The first existing directory of [`default_data_dir_candidates`].
pub fn default_data_dir() -> Option<PathBuf> {
    default_data_dir_candidates()
        .into_iter()
        .find(|p| p.is_dir())
}

/// A real index file found under the data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFileInfo {
    /// Path of the file.
    pub path: PathBuf,
    /// Path relative to the data directory (for reports).
    pub name: String,
    /// Offset or time index.
    pub kind: IndexKind,
    /// Segment base offset parsed from the file name.
    pub base_offset: i64,
    /// File length in bytes.
    pub bytes: u64,
}

/// Finds every `<base offset>.index` and `<base offset>.timeindex` file under `dir`
/// (recursively), sorted by path.
///
/// # Errors
/// [`BenchError::Io`] if a directory cannot be read.
pub fn discover(dir: &Path) -> Result<Vec<IndexFileInfo>, BenchError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| BenchError::Io {
            path: d.clone(),
            source: e,
        })?;
        for entry in rd {
            let entry = entry.map_err(|e| BenchError::Io {
                path: d.clone(),
                source: e,
            })?;
            let path = entry.path();
            let meta = entry.metadata().map_err(|e| BenchError::Io {
                path: path.clone(),
                source: e,
            })?;
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some((stem, ext)) = file_name.rsplit_once('.') else {
                continue;
            };
            let kind = match ext {
                "index" => IndexKind::Offset,
                "timeindex" => IndexKind::Time,
                _ => continue,
            };
            let Ok(base_offset) = stem.parse::<i64>() else {
                continue;
            };
            let name = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            out.push(IndexFileInfo {
                path,
                name,
                kind,
                base_offset,
                bytes: meta.len(),
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The replay of one real file.
#[derive(Clone, Debug)]
pub struct RealReplay {
    /// The file.
    pub file: IndexFileInfo,
    /// Entries read from the file (its slots up to the last one that is not all zeros).
    pub entries: usize,
    /// All-zero slots after the last entry: the preallocated tail of an index that was
    /// never trimmed because its broker crashed (Kafka's `sanityCheck` rejects such a file
    /// and recovery rebuilds it). They are not replayed; 0 on cleanly closed files.
    pub zero_tail_slots: usize,
    /// Pages (of the configured size) the file occupies.
    pub pages: usize,
    /// Entries the replayed index did not take (a time-index timestamp that does not
    /// increase is skipped by `maybe_append`, as in Kafka); 0 on the fixtures.
    pub skipped_appends: usize,
    /// Statistics of the hot-tail lookups, per strategy.
    pub stats: WorkloadStats,
}

/// Parameters of the real-data replay.
#[derive(Clone, Debug)]
pub struct RealReplayConfig {
    /// Page size in bytes.
    pub page_size: usize,
    /// Simulated LRU cache capacity in pages.
    pub cache_pages: usize,
    /// Lookups after every append.
    pub lookups_per_append: usize,
    /// Seed of the target stream.
    pub seed: u64,
    /// Warm-section size of the warm/cold strategy, in bytes.
    pub warm_section_bytes: usize,
}

/// Replays `file` (see the module docs) in the scratch directory `scratch`.
///
/// # Errors
/// Opening or reading the real file, or creating and appending to the scratch index.
pub fn replay_file(
    file: &IndexFileInfo,
    cfg: &RealReplayConfig,
    scratch: &Path,
) -> Result<RealReplay, BenchError> {
    let strategies = compared_strategies(cfg.warm_section_bytes, cfg.page_size);
    let pd = SearchStrategy::PageDirectory {
        page_size: cfg.page_size,
    };
    let scratch_path = scratch.join(file.kind.file_name(file.base_offset));
    let size = (file.bytes as usize).max(file.kind.entry_size());
    match file.kind {
        IndexKind::Offset => {
            let real = OffsetIndex::open_read_only(&file.path, file.base_offset)?;
            let mut kv = key_values(&real)?;
            let zero_tail = strip_zero_tail(&mut kv, (file.base_offset, 0));
            let sim =
                OffsetIndex::open(&scratch_path, file.base_offset, size)?.with_search_strategy(pd);
            let out = replay_entries(&sim, file, &kv, zero_tail, cfg, &strategies);
            sim.delete_if_exists()?;
            out
        }
        IndexKind::Time => {
            let real = TimeIndex::open_read_only(&file.path, file.base_offset)?;
            let mut kv = key_values(&real)?;
            let zero_tail = strip_zero_tail(&mut kv, (0, file.base_offset));
            let sim =
                TimeIndex::open(&scratch_path, file.base_offset, size)?.with_search_strategy(pd);
            let out = replay_entries(&sim, file, &kv, zero_tail, cfg, &strategies);
            sim.delete_if_exists()?;
            out
        }
    }
}

/// Removes the run of all-zero slots after the last entry (slot 0 always stays: a real
/// first entry can decode like a zero slot) and returns how many there were. `zero` is
/// what an all-zero slot decodes to: `(base offset, 0)` for the offset index, `(0, base
/// offset)` for the time index.
fn strip_zero_tail(kv: &mut Vec<(i64, i64)>, zero: (i64, i64)) -> usize {
    let keep = kv
        .iter()
        .rposition(|&e| e != zero)
        .map_or(1, |last| last + 1)
        .min(kv.len());
    let tail = kv.len() - keep;
    kv.truncate(keep);
    tail
}

fn key_values<I: ReplayIndex>(index: &I) -> Result<Vec<(i64, i64)>, BenchError> {
    let snap = index.snapshot()?;
    let base = snap.base_offset();
    Ok(snap
        .slots()
        .iter()
        .map(|e| (e.key(base), e.value(base)))
        .collect())
}

fn replay_entries<I: ReplayIndex>(
    sim: &I,
    file: &IndexFileInfo,
    kv: &[(i64, i64)],
    zero_tail_slots: usize,
    cfg: &RealReplayConfig,
    strategies: &[SearchStrategy],
) -> Result<RealReplay, BenchError> {
    let page_size = cfg.page_size.max(1);
    let mut stats = WorkloadStats::new(
        REAL_WORKLOAD,
        strategies,
        warm_strategy(strategies),
        page_size,
        cfg.cache_pages,
    );
    let mut rng =
        StdRng::seed_from_u64(cfg.seed ^ file.bytes.rotate_left(17) ^ file.base_offset as u64);
    let mut keys: Vec<i64> = Vec::with_capacity(kv.len());
    let mut skipped = 0;
    for &(k, v) in kv {
        if !sim.append_entry(k, v, true)? {
            skipped += 1;
            continue;
        }
        keys.push(k);
        let pages: Vec<usize> = slot_pages(sim.entries() - 1, I::Entry::SIZE, page_size).collect();
        stats.record_appends(&pages);
        let snap = sim.snapshot()?;
        let n = keys.len();
        for _ in 0..cfg.lookups_per_append.max(1) {
            let j = n - 1 - rng.gen_range(0..n.min(HOT_ENTRIES));
            // A key between this entry and the next (or a little past the last one).
            let room = if j + 1 < n {
                (keys[j + 1] - keys[j] - 1).max(0)
            } else {
                PAST_END_KEYS
            };
            let target = keys[j].saturating_add(rng.gen_range(0..=room));
            let api = sim.api_lookup(target)?;
            stats.record_lookup(&snap, target, api, sim.not_found());
        }
    }
    Ok(RealReplay {
        file: file.clone(),
        entries: kv.len(),
        zero_tail_slots,
        pages: (file.bytes as usize).div_ceil(page_size),
        skipped_appends: skipped,
        stats,
    })
}

/// The replay over a whole data directory.
#[derive(Clone, Debug)]
pub struct RealDataOutcome {
    /// The data directory.
    pub dir: PathBuf,
    /// Every index file found, including empty ones.
    pub files: Vec<IndexFileInfo>,
    /// One replay per non-empty file, in path order.
    pub replays: Vec<RealReplay>,
    /// Files that could not be replayed, with the reason.
    pub failures: Vec<(IndexFileInfo, String)>,
}

impl RealDataOutcome {
    /// Number of `.index` files found (including empty ones).
    pub fn offset_files(&self) -> usize {
        self.files
            .iter()
            .filter(|f| f.kind == IndexKind::Offset)
            .count()
    }
    /// Number of `.timeindex` files found (including empty ones).
    pub fn time_files(&self) -> usize {
        self.files
            .iter()
            .filter(|f| f.kind == IndexKind::Time)
            .count()
    }
    /// Number of 0-byte files (nothing to look up).
    pub fn empty_files(&self) -> usize {
        self.files.iter().filter(|f| f.bytes == 0).count()
    }
    /// Largest file in pages of `page_size` bytes.
    pub fn max_file_pages(&self, page_size: usize) -> usize {
        self.files
            .iter()
            .map(|f| (f.bytes as usize).div_ceil(page_size.max(1)))
            .max()
            .unwrap_or(0)
    }
}

/// Discovers and replays every index file under `dir`. `progress(done, total)` is called
/// after each file.
///
/// # Errors
/// [`BenchError::MissingData`] if `dir` is not a directory; discovery I/O errors. Errors of
/// single files are collected in [`RealDataOutcome::failures`] instead.
pub fn replay_dir(
    dir: &Path,
    cfg: &RealReplayConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RealDataOutcome, BenchError> {
    if !dir.is_dir() {
        return Err(BenchError::MissingData(dir.to_path_buf()));
    }
    let files = discover(dir)?;
    let scratch = tempfile::tempdir().map_err(|e| BenchError::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let mut replays = Vec::new();
    let mut failures = Vec::new();
    let total = files.len() as u64;
    for (i, f) in files.iter().enumerate() {
        if f.bytes > 0 {
            match replay_file(f, cfg, scratch.path()) {
                Ok(r) => replays.push(r),
                Err(e) => failures.push((f.clone(), e.to_string())),
            }
        }
        progress(i as u64 + 1, total);
    }
    Ok(RealDataOutcome {
        dir: dir.to_path_buf(),
        files,
        replays,
        failures,
    })
}
