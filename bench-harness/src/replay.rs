//! The replay engine: a producer appends to a real memory-mapped index (`index-offset`'s
//! [`OffsetIndex`] or `index-time`'s [`TimeIndex`]) while workloads look up targets; every
//! lookup is answered by each search strategy on the same snapshot, and the pages each
//! strategy touches are recorded and fed to a simulated LRU page cache per strategy.
//!
//! Every lookup is also checked three ways: the strategies must return the same slot,
//! that slot must equal an independent oracle (`slice::partition_point` over the keys),
//! and the index crate's own `lookup` must return the same entry.
//!
//! The indexes are opened with [`SearchStrategy::PageDirectory`], so they keep the page
//! directory (fence pointers) that strategy needs; [`Snapshot::search_with`] with the
//! binary or warm/cold strategy ignores the directory and reads the same slots as on an
//! index without one. Every page-directory lookup checks that the directory is there
//! ([`WorkloadStats::directory_fallbacks`] counts lookups where it was not, which would
//! silently measure warm/cold instead; it must be 0).
//!
//! A lookup's pages are those its search reads **plus the answer entry**, which every
//! caller reads next (the index crates' `lookup` decodes it). For the binary and warm/cold
//! searches the answer slot is always one they compared, so this adds no page; the
//! page-directory search never compares its first slot (its key is the fence), so the
//! answer read can be its only page read.

use std::hint::black_box;
use std::path::Path;

use index_core::search::{lands_in_warm_section, Bound, SearchField, SearchStrategy};
use index_core::{IndexEntry, IndexError, NoProbe, PageProbe, Snapshot};
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use serde::Serialize;

use crate::lru::LruPageCache;
use crate::producer::{IndexPoint, ProducerConfig, SegmentModel};
use crate::workload::{LogView, TargetGenerator, Workload, WorkloadConfig};
use crate::BenchError;

/// Which kind of index a replay runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexKind {
    /// Offset index (`.index`, 8-byte entries: relative offset + position).
    Offset,
    /// Time index (`.timeindex`, 12-byte entries: timestamp in ms + relative offset).
    Time,
}

impl IndexKind {
    /// `offset` or `time`.
    pub fn name(self) -> &'static str {
        match self {
            IndexKind::Offset => "offset",
            IndexKind::Time => "time",
        }
    }
    /// Entry size in bytes (8 or 12).
    pub fn entry_size(self) -> usize {
        match self {
            IndexKind::Offset => index_offset::ENTRY_SIZE,
            IndexKind::Time => index_time::ENTRY_SIZE,
        }
    }
    /// File extension without the dot: `index` or `timeindex`.
    pub fn extension(self) -> &'static str {
        match self {
            IndexKind::Offset => "index",
            IndexKind::Time => "timeindex",
        }
    }
    /// Kafka's name for this kind's index file of the segment starting at `base_offset`:
    /// `00000000000000000000.index`, `00000000000000000000.timeindex`.
    pub fn file_name(self, base_offset: i64) -> String {
        format!("{base_offset:020}.{}", self.extension())
    }
}

/// The operations a replay needs from an index crate, implemented for [`OffsetIndex`]
/// and [`TimeIndex`]. Keys and values are absolute, as in [`IndexEntry`].
pub trait ReplayIndex {
    /// The raw on-disk entry type.
    type Entry: IndexEntry;
    /// Which kind of index this is.
    const KIND: IndexKind;
    /// A lock-free view of the used slots.
    fn snapshot(&self) -> Result<Snapshot<Self::Entry>, IndexError>;
    /// The crate's own `lookup(target)` as `(key, value)`; see
    /// [`ReplayIndex::not_found`] for what it returns below the first entry.
    fn api_lookup(&self, target: i64) -> Result<(i64, i64), IndexError>;
    /// What the crate's `lookup` returns when no entry is `<=` the target:
    /// `(base_offset, 0)` for the offset index, `(-1, base_offset)` for the time index.
    fn not_found(&self) -> (i64, i64);
    /// Number of entries.
    fn entries(&self) -> usize;
    /// Number of entries at which appends stop: `max_entries` for the offset index,
    /// `max_entries - 1` for the time index unless `skip_full_check` (Kafka keeps one
    /// slot for the entry written when the segment rolls or closes).
    fn capacity(&self, skip_full_check: bool) -> usize;
    /// Appends `(key, value)`: `append(offset, position)` or
    /// `maybe_append(timestamp, offset)`, or `maybe_append_final` with `skip_full_check`
    /// (Kafka's `skipFullCheck`). Returns whether an entry was
    /// written (the time index skips a timestamp that does not increase).
    fn append_entry(&self, key: i64, value: i64, skip_full_check: bool)
        -> Result<bool, IndexError>;
    /// The `(key, value)` this index gets for an index point of the producer model.
    fn key_value(point: &IndexPoint) -> (i64, i64);
    /// Creates a new index file of `bytes` bytes at `path` (read-write), configured with
    /// `strategy`.
    fn create(
        path: &Path,
        base_offset: i64,
        bytes: usize,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError>
    where
        Self: Sized;
    /// Opens an existing index file read-only (every slot counts as an entry), configured
    /// with `strategy` (the page directory is built here, reading one slot per page).
    fn open_existing(
        path: &Path,
        base_offset: i64,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError>
    where
        Self: Sized;
    /// Writes dirty pages back to the file (`msync`).
    fn flush_index(&self) -> Result<(), IndexError>;
    /// Shrinks the file to the used slots (Kafka's `trimToValidSize`).
    fn trim(&self) -> Result<(), IndexError>;
    /// Deletes the file.
    fn delete(&self) -> Result<(), IndexError>;
}

impl ReplayIndex for OffsetIndex {
    type Entry = index_offset::RawOffsetEntry;
    const KIND: IndexKind = IndexKind::Offset;
    fn snapshot(&self) -> Result<Snapshot<Self::Entry>, IndexError> {
        self.index_file().snapshot()
    }
    fn api_lookup(&self, target: i64) -> Result<(i64, i64), IndexError> {
        let r = self.lookup(target)?;
        Ok((r.offset, r.position as i64))
    }
    fn not_found(&self) -> (i64, i64) {
        (self.base_offset(), 0)
    }
    fn entries(&self) -> usize {
        self.index_file().entries()
    }
    fn capacity(&self, _skip_full_check: bool) -> usize {
        self.max_entries()
    }
    fn append_entry(&self, key: i64, value: i64, _skip: bool) -> Result<bool, IndexError> {
        let position = u32::try_from(value).map_err(|_| IndexError::InvalidArgument {
            path: self.path(),
            reason: format!("position {value} does not fit in u32"),
        })?;
        self.append(key, position)?;
        Ok(true)
    }
    fn key_value(p: &IndexPoint) -> (i64, i64) {
        (p.offset, p.position as i64)
    }
    fn create(
        path: &Path,
        base_offset: i64,
        bytes: usize,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError> {
        Ok(OffsetIndex::open(path, base_offset, bytes)?.with_search_strategy(strategy))
    }
    fn open_existing(
        path: &Path,
        base_offset: i64,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError> {
        Ok(OffsetIndex::open_read_only(path, base_offset)?.with_search_strategy(strategy))
    }
    fn flush_index(&self) -> Result<(), IndexError> {
        self.flush()
    }
    fn trim(&self) -> Result<(), IndexError> {
        self.trim_to_valid_size().map(|_| ())
    }
    fn delete(&self) -> Result<(), IndexError> {
        self.delete_if_exists().map(|_| ())
    }
}

impl ReplayIndex for TimeIndex {
    type Entry = index_time::RawTimeEntry;
    const KIND: IndexKind = IndexKind::Time;
    fn snapshot(&self) -> Result<Snapshot<Self::Entry>, IndexError> {
        self.index_file().snapshot()
    }
    fn api_lookup(&self, target: i64) -> Result<(i64, i64), IndexError> {
        let r = self.lookup(target)?;
        Ok((r.timestamp, r.offset))
    }
    fn not_found(&self) -> (i64, i64) {
        (index_time::NO_TIMESTAMP, self.base_offset())
    }
    fn entries(&self) -> usize {
        self.index_file().entries()
    }
    fn capacity(&self, skip_full_check: bool) -> usize {
        if skip_full_check {
            self.max_entries()
        } else {
            self.max_entries().saturating_sub(1)
        }
    }
    fn append_entry(&self, key: i64, value: i64, skip: bool) -> Result<bool, IndexError> {
        if skip {
            self.maybe_append_final(key, value)
        } else {
            self.maybe_append(key, value)
        }
    }
    fn key_value(p: &IndexPoint) -> (i64, i64) {
        (p.max_timestamp, p.offset_of_max_timestamp)
    }
    fn create(
        path: &Path,
        base_offset: i64,
        bytes: usize,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError> {
        Ok(TimeIndex::open(path, base_offset, bytes)?.with_search_strategy(strategy))
    }
    fn open_existing(
        path: &Path,
        base_offset: i64,
        strategy: SearchStrategy,
    ) -> Result<Self, IndexError> {
        Ok(TimeIndex::open_read_only(path, base_offset)?.with_search_strategy(strategy))
    }
    fn flush_index(&self) -> Result<(), IndexError> {
        self.flush()
    }
    fn trim(&self) -> Result<(), IndexError> {
        self.trim_to_valid_size().map(|_| ())
    }
    fn delete(&self) -> Result<(), IndexError> {
        self.delete_if_exists().map(|_| ())
    }
}

/// The strategies every replay compares, in report order: Kafka's pre-2.1 binary search,
/// its warm/cold search with a warm section of `warm_section_bytes` bytes, the page
/// directory (fence pointers) with pages of `page_size` bytes, and the hybrid of the two
/// (the default strategy: that warm section, the cold part through that directory).
pub fn compared_strategies(warm_section_bytes: usize, page_size: usize) -> [SearchStrategy; 4] {
    [
        SearchStrategy::Binary,
        SearchStrategy::WarmCold { warm_section_bytes },
        SearchStrategy::PageDirectory { page_size },
        SearchStrategy::Hybrid {
            warm_section_bytes,
            page_size,
        },
    ]
}

/// The warm/cold strategy among `strategies` (its warm section decides the "warm lookups"
/// columns of every strategy); Kafka's warm/cold ([`SearchStrategy::WARM_COLD`]) if there
/// is none.
pub fn warm_strategy(strategies: &[SearchStrategy]) -> SearchStrategy {
    strategies
        .iter()
        .copied()
        .find(|s| matches!(s, SearchStrategy::WarmCold { .. }))
        .unwrap_or(SearchStrategy::WARM_COLD)
}

/// Whether `snap` can answer `strategy` as asked: always, except a page-directory or
/// hybrid search on a snapshot without a directory of that page size (it would fall back
/// to warm/cold).
pub fn strategy_is_native<E: IndexEntry>(snap: &Snapshot<E>, strategy: SearchStrategy) -> bool {
    match strategy.directory_page_size() {
        Some(page_size) => snap.directory().is_some_and(|d| {
            d.page_size() == index_core::directory::normalize_page_size(page_size)
        }),
        None => true,
    }
}

/// Largest number of distinct pages one lookup can be counted with in
/// [`StrategyStats::pages_histogram`]; lookups touching more are counted in the last bucket.
pub const HISTOGRAM_PAGES: usize = 64;

/// Pages touched by one strategy over one workload.
#[derive(Clone, Debug)]
pub struct StrategyStats {
    /// The strategy.
    pub strategy: SearchStrategy,
    /// Lookups answered.
    pub lookups: u64,
    /// Sum over lookups of the distinct pages touched (pages).
    pub pages_total: u64,
    /// Most distinct pages touched by one lookup (pages).
    pub max_pages: usize,
    /// Sum over lookups of the slots read (entries compared).
    pub reads_total: u64,
    /// Lookups that land in the warm section (same criterion for every strategy:
    /// [`lands_in_warm_section`] with the warm/cold strategy's section size).
    pub warm_section_lookups: u64,
    /// Sum of distinct pages over the warm-section lookups (pages).
    pub warm_section_pages_total: u64,
    /// Most distinct pages touched by one warm-section lookup (pages).
    pub warm_section_max_pages: usize,
    /// Lookup page touches that missed the simulated LRU cache (pages).
    pub lru_faults: u64,
    /// Appender page touches that missed the simulated LRU cache (pages).
    pub append_faults: u64,
    /// `pages_histogram[p]`: lookups that touched exactly `p` distinct pages (the last
    /// bucket, [`HISTOGRAM_PAGES`], also counts lookups touching more).
    pub pages_histogram: Vec<u64>,
    cache: LruPageCache,
}

impl StrategyStats {
    fn new(strategy: SearchStrategy, cache_pages: usize) -> Self {
        StrategyStats {
            strategy,
            lookups: 0,
            pages_total: 0,
            max_pages: 0,
            reads_total: 0,
            warm_section_lookups: 0,
            warm_section_pages_total: 0,
            warm_section_max_pages: 0,
            lru_faults: 0,
            append_faults: 0,
            pages_histogram: vec![0; HISTOGRAM_PAGES + 1],
            cache: LruPageCache::new(cache_pages),
        }
    }

    /// Mean distinct pages per lookup (pages; 0 without lookups).
    pub fn mean_pages(&self) -> f64 {
        ratio(self.pages_total, self.lookups)
    }

    /// Mean slots read per lookup (entries).
    pub fn mean_reads(&self) -> f64 {
        ratio(self.reads_total, self.lookups)
    }

    /// Mean distinct pages per warm-section lookup (pages; 0 without such lookups).
    pub fn warm_section_mean_pages(&self) -> f64 {
        ratio(self.warm_section_pages_total, self.warm_section_lookups)
    }

    /// The simulated page cache of this strategy.
    pub fn cache(&self) -> &LruPageCache {
        &self.cache
    }
}

/// `a / b`, 0 when `b` is 0.
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Everything measured for one workload on one index: per-strategy page statistics and
/// the answer checks.
#[derive(Clone, Debug)]
pub struct WorkloadStats {
    /// Workload label (`hot-tail`, `lagging`, `uniform`, `mixed`).
    pub workload: String,
    /// One entry per compared strategy, in [`compared_strategies`] order.
    pub strategies: Vec<StrategyStats>,
    /// Lookups whose slot differed between strategies (must be 0).
    pub answer_mismatches: u64,
    /// Strategy answers that differed from the `partition_point` oracle (must be 0).
    pub oracle_mismatches: u64,
    /// Lookups where the index crate's `lookup` returned a different entry (must be 0).
    pub api_mismatches: u64,
    /// Page-directory lookups made on a snapshot without a directory of the strategy's
    /// page size, i.e. answered by the warm/cold fallback (must be 0: otherwise the
    /// page-directory figures would be warm/cold's).
    pub directory_fallbacks: u64,
    /// Lookups whose target is below the first key (no answer; the page directory
    /// answers them from memory without reading a page).
    pub below_first_key_lookups: u64,
    /// Lookups whose answer entry straddles a page boundary (12-byte entries only; the
    /// same lookups for every strategy).
    pub straddling_answers: u64,
    warm: SearchStrategy,
    page_size: usize,
    probe: PageProbe,
}

impl WorkloadStats {
    /// Fresh statistics for `workload`, comparing `strategies` with one LRU cache of
    /// `cache_pages` pages each, counting pages of `page_size` bytes. Warm-section
    /// membership is decided with `warm`.
    pub fn new(
        workload: impl Into<String>,
        strategies: &[SearchStrategy],
        warm: SearchStrategy,
        page_size: usize,
        cache_pages: usize,
    ) -> Self {
        WorkloadStats {
            workload: workload.into(),
            strategies: strategies
                .iter()
                .map(|&s| StrategyStats::new(s, cache_pages))
                .collect(),
            answer_mismatches: 0,
            oracle_mismatches: 0,
            api_mismatches: 0,
            directory_fallbacks: 0,
            below_first_key_lookups: 0,
            straddling_answers: 0,
            warm,
            page_size,
            probe: PageProbe::new(page_size),
        }
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Statistics of `strategy`, if it was compared.
    pub fn get(&self, strategy: SearchStrategy) -> Option<&StrategyStats> {
        self.strategies.iter().find(|s| s.strategy == strategy)
    }

    /// Records that the appender touched `pages` (in order) in every strategy's cache.
    pub fn record_appends(&mut self, pages: &[usize]) {
        for s in &mut self.strategies {
            for &p in pages {
                if s.cache.touch(p) {
                    s.append_faults += 1;
                }
            }
        }
    }

    /// Answers a lookup of `target` (largest lower bound by key, as `lookup` does) with
    /// every strategy on `snap`, recording pages (the search's plus the answer entry's),
    /// cache faults and answer checks.
    /// `api_answer` is what the index crate's own `lookup` returned and `not_found` what
    /// it returns when no entry is `<= target`.
    pub fn record_lookup<E: IndexEntry>(
        &mut self,
        snap: &Snapshot<E>,
        target: i64,
        api_answer: (i64, i64),
        not_found: (i64, i64),
    ) {
        let slots = snap.slots();
        let base = snap.base_offset();
        let in_warm = lands_in_warm_section(
            slots,
            base,
            target,
            SearchField::Key,
            self.warm,
            &mut NoProbe,
        );
        let oracle = slots
            .partition_point(|e| e.key(base) <= target)
            .checked_sub(1);
        match oracle {
            None => self.below_first_key_lookups += 1,
            Some(i) => {
                if slot_pages(i, E::SIZE, self.page_size).count() > 1 {
                    self.straddling_answers += 1;
                }
            }
        }
        let mut first: Option<Option<usize>> = None;
        for s in &mut self.strategies {
            if !strategy_is_native(snap, s.strategy) {
                self.directory_fallbacks += 1;
            }
            self.probe.clear();
            let slot = snap.search_with(
                s.strategy,
                target,
                SearchField::Key,
                Bound::LargestLowerBound,
                &mut self.probe,
            );
            let reads = self.probe.reads();
            if let Some(i) = slot {
                // The caller reads the answer entry next (from the page directory's
                // memory when it holds it).
                black_box(snap.answer_with(s.strategy, i, &mut self.probe));
            }
            let pages = self.probe.pages();
            s.lookups += 1;
            s.pages_total += pages.len() as u64;
            s.max_pages = s.max_pages.max(pages.len());
            s.pages_histogram[pages.len().min(HISTOGRAM_PAGES)] += 1;
            s.reads_total += reads as u64;
            if in_warm {
                s.warm_section_lookups += 1;
                s.warm_section_pages_total += pages.len() as u64;
                s.warm_section_max_pages = s.warm_section_max_pages.max(pages.len());
            }
            for &p in pages {
                if s.cache.touch(p) {
                    s.lru_faults += 1;
                }
            }
            if slot != oracle {
                self.oracle_mismatches += 1;
            }
            match first {
                None => first = Some(slot),
                Some(f) if f != slot => self.answer_mismatches += 1,
                Some(_) => {}
            }
        }
        let expected = oracle.map_or(not_found, |i| (slots[i].key(base), slots[i].value(base)));
        if api_answer != expected {
            self.api_mismatches += 1;
        }
    }
}

/// The pages (of `page_size` bytes) that slot `slot` of `entry_size`-byte entries
/// occupies: one page, or two when the entry straddles a page boundary.
pub fn slot_pages(
    slot: usize,
    entry_size: usize,
    page_size: usize,
) -> std::ops::RangeInclusive<usize> {
    let start = slot * entry_size;
    let end = start + entry_size - 1;
    (start / page_size)..=(end / page_size)
}

/// Parameters of a synthetic replay.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    /// Size of each index file, in bytes (Kafka's `segment.index.bytes`, 10 MiB default).
    pub index_bytes: usize,
    /// Page size in bytes for page counting and the LRU cache.
    pub page_size: usize,
    /// Capacity of the simulated LRU page cache, in pages (one cache per strategy and
    /// workload; the appender's page is touched in it too).
    pub cache_pages: usize,
    /// Lookups per workload per index (spread evenly over the whole fill).
    pub lookups: usize,
    /// Lookups per round: after every `k` appends each workload makes this many lookups,
    /// with `k = capacity / (lookups / lookups_per_round)` (entries).
    pub lookups_per_round: usize,
    /// Seed of every random stream.
    pub seed: u64,
    /// Warm-section size of the warm/cold strategy, in bytes (Kafka: 8192).
    pub warm_section_bytes: usize,
    /// The producer model.
    pub producer: ProducerConfig,
    /// The consumer population.
    pub workload: WorkloadConfig,
    /// Workloads to run.
    pub workloads: Vec<Workload>,
}

impl ReplayConfig {
    /// The page-directory strategy with this configuration's page size.
    pub fn page_directory(&self) -> SearchStrategy {
        SearchStrategy::PageDirectory {
            page_size: self.page_size,
        }
    }
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            index_bytes: 10 * 1024 * 1024,
            page_size: index_core::DEFAULT_PAGE_SIZE,
            cache_pages: 32,
            lookups: 200_000,
            lookups_per_round: 4,
            seed: 42,
            warm_section_bytes: index_core::DEFAULT_WARM_SECTION_BYTES,
            producer: ProducerConfig::default(),
            workload: WorkloadConfig::default(),
            workloads: Workload::ALL.to_vec(),
        }
    }
}

/// The outcome of a synthetic replay on one index.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// Which index.
    pub kind: IndexKind,
    /// File size in bytes.
    pub index_bytes: usize,
    /// Entries when the replay ended.
    pub entries: usize,
    /// Entries the index can take (see [`ReplayIndex::capacity`]).
    pub capacity: usize,
    /// Offsets produced (log end offset minus base offset).
    pub offsets: i64,
    /// Bytes the producer wrote to the segment.
    pub segment_bytes: u64,
    /// Whether the segment filled up before the index did.
    pub segment_full: bool,
    /// Per-workload statistics, in the configured order.
    pub workloads: Vec<WorkloadStats>,
}

impl ReplayOutcome {
    /// Statistics of `workload`, if it was run.
    pub fn workload(&self, workload: Workload) -> Option<&WorkloadStats> {
        self.workloads
            .iter()
            .find(|w| w.workload == workload.name())
    }
}

/// Runs the synthetic replay on a fresh `kind` index file of `cfg.index_bytes` bytes
/// created in `dir`: the producer model appends until the index is full while every
/// workload makes `cfg.lookups_per_round` lookups after each round of appends.
/// `progress(entries, capacity)` is called after every round.
///
/// # Errors
/// Any error of the index crates (I/O, or a rejected append, which would be a bug).
pub fn replay_synthetic(
    kind: IndexKind,
    cfg: &ReplayConfig,
    dir: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ReplayOutcome, BenchError> {
    let base = cfg.producer.base_offset;
    let path = dir.join(kind.file_name(base));
    match kind {
        IndexKind::Offset => {
            let index = OffsetIndex::open(&path, base, cfg.index_bytes)?
                .with_search_strategy(cfg.page_directory());
            let out = run_synthetic(&index, cfg, progress);
            index.delete_if_exists()?;
            out
        }
        IndexKind::Time => {
            let index = TimeIndex::open(&path, base, cfg.index_bytes)?
                .with_search_strategy(cfg.page_directory());
            let out = run_synthetic(&index, cfg, progress);
            index.delete_if_exists()?;
            out
        }
    }
}

fn run_synthetic<I: ReplayIndex>(
    index: &I,
    cfg: &ReplayConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ReplayOutcome, BenchError> {
    let page_size = cfg.page_size.max(1);
    let strategies = compared_strategies(cfg.warm_section_bytes, page_size);
    let warm = warm_strategy(&strategies);
    let mut model = SegmentModel::new(cfg.producer.clone(), cfg.seed);
    let mut gens: Vec<TargetGenerator> = cfg
        .workloads
        .iter()
        .map(|&w| TargetGenerator::new(w, cfg.workload.clone(), w.seed(cfg.seed)))
        .collect();
    let mut stats: Vec<WorkloadStats> = cfg
        .workloads
        .iter()
        .map(|w| WorkloadStats::new(w.name(), &strategies, warm, page_size, cfg.cache_pages))
        .collect();
    let capacity = index.capacity(false);
    let m = cfg.lookups_per_round.max(1);
    let rounds = (cfg.lookups / m).max(1);
    let mut pages: Vec<usize> = Vec::new();
    let mut segment_full = false;
    let entry_size = I::Entry::SIZE;
    let first_offset = cfg.producer.base_offset;
    for r in 0..rounds {
        let goal = ((r as u128 + 1) * capacity as u128 / rounds as u128) as usize;
        pages.clear();
        while index.entries() < goal {
            let Some(point) = model.next_index_point() else {
                segment_full = true;
                break;
            };
            let (k, v) = I::key_value(&point);
            if index.append_entry(k, v, false)? {
                for p in slot_pages(index.entries() - 1, entry_size, page_size) {
                    if pages.last() != Some(&p) {
                        pages.push(p);
                    }
                }
            }
        }
        let snap = index.snapshot()?;
        let key_range = match (snap.slots().first(), snap.last()) {
            (Some(f), Some(l)) => Some((f.key(snap.base_offset()), l.key(snap.base_offset()))),
            _ => None,
        };
        let key_of_offset = |o: i64| -> i64 {
            match I::KIND {
                IndexKind::Offset => o,
                IndexKind::Time => model
                    .timestamp_of(o)
                    .unwrap_or(cfg.producer.start_timestamp_ms),
            }
        };
        let view = LogView {
            first_offset,
            log_end_offset: model.log_end_offset(),
            key_range,
            key_of_offset: &key_of_offset,
        };
        for (gen, st) in gens.iter_mut().zip(stats.iter_mut()) {
            st.record_appends(&pages);
            for _ in 0..m {
                let Some((_, target)) = gen.next_target(&view) else {
                    break;
                };
                let api = index.api_lookup(target)?;
                st.record_lookup(&snap, target, api, index.not_found());
            }
        }
        progress(index.entries() as u64, capacity as u64);
        if segment_full {
            break;
        }
    }
    Ok(ReplayOutcome {
        kind: I::KIND,
        index_bytes: cfg.index_bytes,
        entries: index.entries(),
        capacity,
        offsets: model.log_end_offset() - first_offset,
        segment_bytes: model.segment_bytes(),
        segment_full,
        workloads: stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_pages_straddle() {
        assert_eq!(slot_pages(0, 8, 4096), 0..=0);
        assert_eq!(slot_pages(511, 8, 4096), 0..=0);
        assert_eq!(slot_pages(512, 8, 4096), 1..=1);
        // 12-byte entry at bytes 4092..4104 straddles pages 0 and 1.
        assert_eq!(slot_pages(341, 12, 4096), 0..=1);
    }
}
