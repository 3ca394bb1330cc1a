//! "Why 8192": the warm section size of Kafka's warm/cold search, measured against
//! consumer lag in **bytes of log** behind the log end.
//!
//! Kafka's warm section is the last 8192 bytes of an index (KAFKA-6432). The size trades
//! two things: a warm lookup searches only the warm section, so it touches at most
//! `ceil(warm_section_bytes / page) + 1` pages (3 for 8 KiB), and the warm section must
//! reach far enough back into the log that the lookups of in-sync consumers land in it.
//! At Kafka's default `index.interval.bytes` (4096) an index entry is written at most once
//! per 4 KiB of log, so 8192 bytes of offset index (1024 entries of 8 bytes) cover at
//! least 4 MiB of log, and 8192 bytes of time index (682 entries of 12 bytes) at least
//! 2.7 MiB.
//!
//! This module sweeps `SearchStrategy::WarmCold { warm_section_bytes }` over
//! [`WARM_SECTION_SIZES`] (4 to 64 KiB) against lag distributions in bytes of log
//! ([`LagDistribution::standard`]: in-sync, a few MiB behind, tens of MiB behind, and a
//! mix), on the offset index and the time index, with the page directory
//! (`SearchStrategy::PageDirectory`) as the reference. For every point it reports the
//! share of lookups served by the warm section ([`lands_in_warm_section`] with that
//! point's warm section), the mean and maximum distinct pages per lookup, and the real
//! page-ins on an evicted file (the [`crate::real_faults`] machinery: `mincore` and
//! `getrusage`, readahead off).
//!
//! ## Bytes of log to index entries
//!
//! The sweep's producer model always uses Kafka's default `index.interval.bytes`,
//! [`KAFKA_INDEX_INTERVAL_BYTES`] (4096), whatever `--index-interval-bytes` says (the
//! other replays use 512 so that a 10 MiB offset index can fill within a 2 GiB segment):
//! how many entries a lag of so many bytes spans depends on the interval. The measured
//! mean log bytes per entry is reported ([`SweepIndex::log_bytes_per_entry`]); it is a
//! little above 4096, because an entry is written before the first batch that starts
//! more than 4096 bytes after the previous entry's.
//!
//! ## The segment and the lookups
//!
//! One segment of [`KAFKA_SEGMENT_BYTES`] (Kafka's default `segment.bytes`, 1 GiB) with
//! index files of [`KAFKA_SEGMENT_INDEX_BYTES`] (`segment.index.bytes`, 10 MiB). The
//! lookups are made while the segment grows from half full to full, in rounds: after every
//! round of appends each pass draws `lookups_per_round` lags from its distribution, and a
//! consumer `lag` bytes behind the log end looks up the offset of the batch holding byte
//! `log end - lag` (the offset index) or that batch's timestamp (the time index). Every
//! draw comes from a `StdRng` seeded from the run seed and the distribution's name, so
//! every strategy sees the same targets.
//!
//! * **Simulated pass** (shares, pages): one per index kind and distribution; every
//!   lookup is answered by every strategy on the same snapshot, counting distinct pages of
//!   `page_size` bytes (the search's reads plus the answer entry, as in
//!   [`crate::replay`]), and checked against a `partition_point` oracle.
//! * **Page-in runs**: one per index kind, distribution and strategy, as the growing phase
//!   of [`crate::real_faults`]: a fresh file holding the first half of the segment's
//!   entries is evicted from the page cache, then the same growth with the same targets,
//!   answered by that strategy only, with readahead off (`MADV_RANDOM`). Page-ins are the
//!   pages written before the run that are resident after it, minus an appends-only
//!   baseline per index kind. When no directory evicts (or the measurement is skipped),
//!   the page-in figures are absent and [`PageInsInfo::absent`] says why.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use index_core::search::{lands_in_warm_section, Bound, SearchField, SearchStrategy};
use index_core::sys;
use index_core::{IndexEntry, IndexError, NoProbe, PageProbe, Snapshot};
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::producer::{IndexPoint, ProducerConfig, SegmentModel, MAX_SEGMENT_BYTES};
use crate::real_faults::{self, Location, Readahead, Rejected};
use crate::replay::{ratio, strategy_is_native, IndexKind, ReplayIndex};
use crate::BenchError;

/// One mebibyte (bytes).
pub const MIB: u64 = 1 << 20;

/// Kafka's default `index.interval.bytes` (bytes of log between index entries), used by
/// the sweep's producer model whatever the harness's `--index-interval-bytes`.
pub const KAFKA_INDEX_INTERVAL_BYTES: u32 = 4096;

/// Kafka's default `segment.bytes` (1 GiB): the sweep's lookups are made while the
/// segment grows from half of this to this (bytes).
pub const KAFKA_SEGMENT_BYTES: u64 = 1 << 30;

/// Kafka's default `segment.index.bytes` (10 MiB): the size of the sweep's index files
/// (bytes; a 1 GiB segment at a 4096-byte interval uses about a fifth of the offset
/// index's).
pub const KAFKA_SEGMENT_INDEX_BYTES: usize = 10 << 20;

/// The warm section sizes swept (bytes): 4, 8 (Kafka's), 16, 32 and 64 KiB.
pub const WARM_SECTION_SIZES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// Kafka's warm section size (bytes).
pub const KAFKA_WARM_SECTION_BYTES: usize = index_core::DEFAULT_WARM_SECTION_BYTES;

/// Lookups per point of the default sweep (lookups).
pub const DEFAULT_LOOKUPS: usize = 20_000;

/// Uniformly distributed lags between two bounds, with a weight within a
/// [`LagDistribution`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LagRange {
    /// Relative weight of this range in its distribution (any positive number).
    pub weight: u32,
    /// Smallest lag, in bytes of log behind the log end.
    pub min_bytes: u64,
    /// Largest lag (inclusive), in bytes of log behind the log end.
    pub max_bytes: u64,
}

impl LagRange {
    /// `0-1 MiB`, `2-8 MiB`, `100-2048 KiB`, ...
    pub fn describe(&self) -> String {
        bytes_range_text(self.min_bytes, self.max_bytes)
    }
}

/// `0-1 MiB`, `4-64 KiB`: a range of byte counts in the unit of its upper end.
pub fn bytes_range_text(min: u64, max: u64) -> String {
    format!("{}-{}", bytes_number(min, max), bytes_text(max))
}

/// The unit [`bytes_text`] writes `n` in: GiB, MiB or KiB when `n` is a whole or
/// quarter multiple of it, else bytes.
fn unit_of(n: u64) -> (u64, &'static str) {
    if n >= 1024 * MIB && n.is_multiple_of(256 * MIB) {
        (1024 * MIB, "GiB")
    } else if n >= MIB && n.is_multiple_of(MIB / 4) {
        (MIB, "MiB")
    } else if n >= 1024 && n.is_multiple_of(1024) {
        (1024, "KiB")
    } else {
        (1, "B")
    }
}

/// `n` in the unit [`bytes_text`] uses for `like`, without the unit.
fn bytes_number(n: u64, like: u64) -> String {
    trim(n as f64 / unit_of(like).0 as f64)
}

/// `1 GiB`, `60 MiB`, `512 KiB`, `4190209 B`: whole or quarter units only.
pub fn bytes_text(n: u64) -> String {
    format!("{} {}", bytes_number(n, n), unit_of(n).1)
}

fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// How far behind the log end consumers are when they look up, in bytes of log: a
/// weighted mix of uniform ranges.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LagDistribution {
    /// Stable short name used in tables and JSON (`in-sync`, `few-mib`, ...).
    pub name: String,
    /// The ranges; a lookup picks one by weight, then a lag uniformly within it.
    pub ranges: Vec<LagRange>,
}

impl LagDistribution {
    /// Lags uniform in `min_bytes..=max_bytes` bytes of log.
    pub fn uniform(name: &str, min_bytes: u64, max_bytes: u64) -> Self {
        LagDistribution {
            name: name.to_string(),
            ranges: vec![LagRange {
                weight: 1,
                min_bytes,
                max_bytes,
            }],
        }
    }

    /// In-sync consumers: 0 to 1 MiB of log behind the log end.
    pub fn in_sync() -> Self {
        Self::uniform("in-sync", 0, MIB)
    }

    /// Consumers a few MiB behind: 2 to 8 MiB of log.
    pub fn few_mib_behind() -> Self {
        Self::uniform("few-mib", 2 * MIB, 8 * MIB)
    }

    /// Consumers tens of MiB behind: 10 to 60 MiB of log.
    pub fn tens_of_mib_behind() -> Self {
        Self::uniform("tens-of-mib", 10 * MIB, 60 * MIB)
    }

    /// 80 % in-sync, 10 % a few MiB behind, 10 % tens of MiB behind.
    pub fn mixed() -> Self {
        let part = |weight, d: LagDistribution| LagRange {
            weight,
            ..d.ranges[0]
        };
        LagDistribution {
            name: "mixed".to_string(),
            ranges: vec![
                part(8, Self::in_sync()),
                part(1, Self::few_mib_behind()),
                part(1, Self::tens_of_mib_behind()),
            ],
        }
    }

    /// The four distributions of the main job, in report order: in-sync, a few MiB
    /// behind, tens of MiB behind, mixed.
    pub fn standard() -> Vec<Self> {
        vec![
            Self::in_sync(),
            Self::few_mib_behind(),
            Self::tens_of_mib_behind(),
            Self::mixed(),
        ]
    }

    /// The largest lag it can draw (bytes of log).
    pub fn max_lag_bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.max_bytes).max().unwrap_or(0)
    }

    /// `0-1 MiB`, or `80% 0-1 MiB + 10% 2-8 MiB + 10% 10-60 MiB` for a mix.
    pub fn describe(&self) -> String {
        if self.ranges.len() == 1 {
            return self.ranges[0].describe();
        }
        self.weight_percents()
            .iter()
            .zip(&self.ranges)
            .map(|(w, r)| format!("{w}% {}", r.describe()))
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// `in-sync (0-1 MiB)`: the name and the ranges, for labels. A mix is labelled with
    /// its weights only: `mixed (80/10/10)`.
    pub fn label(&self) -> String {
        if self.ranges.len() == 1 {
            format!("{} ({})", self.name, self.describe())
        } else {
            format!("{} ({})", self.name, self.weight_percents().join("/"))
        }
    }

    /// Each range's share of the total weight, in percent without the sign: `80`, `10`.
    fn weight_percents(&self) -> Vec<String> {
        let total: u64 = self.ranges.iter().map(|r| u64::from(r.weight)).sum();
        self.ranges
            .iter()
            .map(|r| trim(100.0 * f64::from(r.weight) / total.max(1) as f64))
            .collect()
    }

    /// The seed of this distribution's lag stream, derived from the run seed and the
    /// name (so distributions draw independent, reproducible streams).
    pub fn seed(&self, run_seed: u64) -> u64 {
        // FNV-1a over the name.
        let salt = self.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        run_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt
    }
}

/// Draws lags (bytes of log) from a [`LagDistribution`] with a seeded `StdRng`.
#[derive(Debug)]
pub struct LagSampler {
    ranges: Vec<LagRange>,
    total_weight: u64,
    rng: StdRng,
}

impl LagSampler {
    /// A sampler of `dist` whose random stream is seeded with `seed`.
    pub fn new(dist: &LagDistribution, seed: u64) -> Self {
        LagSampler {
            total_weight: dist.ranges.iter().map(|r| u64::from(r.weight)).sum(),
            ranges: dist.ranges.clone(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The next lag, in bytes of log behind the log end (0 for an empty distribution).
    pub fn next_lag_bytes(&mut self) -> u64 {
        let range = match self.ranges.as_slice() {
            [] => return 0,
            [only] => *only,
            ranges => {
                let mut pick = self.rng.gen_range(0..self.total_weight.max(1));
                let mut chosen = ranges[ranges.len() - 1];
                for r in ranges {
                    if pick < u64::from(r.weight) {
                        chosen = *r;
                        break;
                    }
                    pick -= u64::from(r.weight);
                }
                chosen
            }
        };
        self.rng
            .gen_range(range.min_bytes..=range.max_bytes.max(range.min_bytes))
    }
}

/// Whether and where the page-in runs are made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageIns {
    /// Measure them in `dir`, or in the first of [`real_faults::default_candidates`] where
    /// eviction works when `None`.
    Measure {
        /// The directory for the index files.
        dir: Option<PathBuf>,
    },
    /// Do not measure them; the reason is reported in their place.
    Skip {
        /// Why (for the report).
        reason: String,
    },
}

/// Parameters of the warm section sweep.
#[derive(Clone, Debug)]
pub struct WarmSweepConfig {
    /// Warm section sizes of the warm/cold points (bytes).
    pub warm_sizes: Vec<usize>,
    /// Lag distributions (bytes of log behind the log end).
    pub distributions: Vec<LagDistribution>,
    /// Index kinds to sweep.
    pub kinds: Vec<IndexKind>,
    /// Page size for counting pages and for the page directory (bytes).
    pub page_size: usize,
    /// Lookups per point (lookups).
    pub lookups: usize,
    /// Lookups after every round of appends (lookups).
    pub lookups_per_round: usize,
    /// Seed of the producer model and the lag streams.
    pub seed: u64,
    /// The producer model; its `index_interval_bytes` is the one the sweep maps bytes of
    /// log to entries with ([`KAFKA_INDEX_INTERVAL_BYTES`] by default).
    pub producer: ProducerConfig,
    /// Segment size (bytes of log, Kafka's `segment.bytes`): the lookups are made while
    /// the segment grows from half of this to this.
    pub segment_bytes: u64,
    /// Index file size (bytes, Kafka's `segment.index.bytes`).
    pub index_bytes: usize,
    /// The page-in runs.
    pub page_ins: PageIns,
}

impl Default for WarmSweepConfig {
    fn default() -> Self {
        WarmSweepConfig {
            warm_sizes: WARM_SECTION_SIZES.to_vec(),
            distributions: LagDistribution::standard(),
            kinds: vec![IndexKind::Offset, IndexKind::Time],
            page_size: index_core::DEFAULT_PAGE_SIZE,
            lookups: DEFAULT_LOOKUPS,
            lookups_per_round: 4,
            seed: 42,
            producer: ProducerConfig {
                index_interval_bytes: KAFKA_INDEX_INTERVAL_BYTES,
                ..ProducerConfig::default()
            },
            segment_bytes: KAFKA_SEGMENT_BYTES,
            index_bytes: KAFKA_SEGMENT_INDEX_BYTES,
            page_ins: PageIns::Measure { dir: None },
        }
    }
}

impl WarmSweepConfig {
    /// The strategies of every distribution, in report order: warm/cold with each warm
    /// section size, then the page directory.
    pub fn strategies(&self) -> Vec<SearchStrategy> {
        self.warm_sizes
            .iter()
            .map(|&warm_section_bytes| SearchStrategy::WarmCold { warm_section_bytes })
            .chain(std::iter::once(SearchStrategy::PageDirectory {
                page_size: self.page_size,
            }))
            .collect()
    }

    /// The largest lag any distribution can draw (bytes of log; 0 without distributions).
    pub fn max_lag_bytes(&self) -> u64 {
        self.distributions
            .iter()
            .map(LagDistribution::max_lag_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`BenchError::Config`] naming the first invalid parameter.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: String| Err(BenchError::Config(m));
        if self.warm_sizes.is_empty() || self.warm_sizes.contains(&0) {
            return bad(format!(
                "warm section sizes must be non-empty and positive, got {:?}",
                self.warm_sizes
            ));
        }
        if self.page_size < 8 || !self.page_size.is_power_of_two() {
            return bad(format!(
                "the page size must be a power of two of at least 8 bytes, got {}",
                self.page_size
            ));
        }
        if self.segment_bytes > MAX_SEGMENT_BYTES {
            return bad(format!(
                "the warm section sweep's segment of {} bytes exceeds Kafka's limit of {MAX_SEGMENT_BYTES}",
                self.segment_bytes
            ));
        }
        let max_lag = self.max_lag_bytes();
        if self.segment_bytes / 2 < max_lag {
            return bad(format!(
                "the warm section sweep's segment of {} bytes must be at least twice the largest lag ({max_lag} bytes): \
                 lookups start when it is half full",
                self.segment_bytes
            ));
        }
        for d in &self.distributions {
            if d.ranges.is_empty()
                || d.ranges
                    .iter()
                    .any(|r| r.weight == 0 || r.min_bytes > r.max_bytes)
            {
                return bad(format!(
                    "lag distribution {} has an empty or inverted range",
                    d.name
                ));
            }
        }
        Ok(())
    }
}

/// What the sweep's index of one kind held.
#[derive(Clone, Debug, Serialize)]
pub struct SweepIndex {
    /// Offset or time index.
    pub kind: IndexKind,
    /// Entries when the lookups started (the segment half full).
    pub entries_before: usize,
    /// Entries when they ended (the segment full).
    pub entries_after: usize,
    /// Bytes of log when the lookups started.
    pub log_bytes_before: u64,
    /// Bytes of log when they ended.
    pub log_bytes_after: u64,
    /// Mean bytes of log per index entry at the end (bytes).
    pub log_bytes_per_entry: f64,
    /// Whether the index file filled up before the segment did (the growth then stopped
    /// early).
    pub index_full: bool,
}

/// One point of the sweep: one index kind, lag distribution and strategy.
#[derive(Clone, Debug, Serialize)]
pub struct WarmSweepPoint {
    /// Offset or time index.
    pub kind: IndexKind,
    /// The lag distribution's name.
    pub lag: String,
    /// `warm-cold` or `page-directory`.
    pub strategy: String,
    /// Warm section size (bytes); `None` for the page directory.
    pub warm_section_bytes: Option<usize>,
    /// Entries the warm section holds besides its first slot
    /// (`warm_section_bytes / entry size`, Kafka's `warmEntries`); `None` for the page
    /// directory.
    pub warm_section_entries: Option<usize>,
    /// Bytes of log those entries cover, at the measured mean log bytes per entry
    /// (bytes).
    pub warm_section_log_bytes: Option<f64>,
    /// The most pages a warm lookup can touch, `ceil(warm_section_bytes / page) + 1`
    /// (pages).
    pub warm_section_page_bound: Option<usize>,
    /// Lookups made (lookups).
    pub lookups: u64,
    /// Lookups served by the warm section ([`lands_in_warm_section`] with this point's
    /// warm section; 0 for the page directory).
    pub warm_section_lookups: u64,
    /// `warm_section_lookups / lookups` (fraction); `None` for the page directory.
    pub warm_share: Option<f64>,
    /// Mean distinct pages per lookup (pages of the sweep's page size).
    pub mean_pages: f64,
    /// Most distinct pages one lookup touched (pages).
    pub max_pages: usize,
    /// Mean distinct pages per lookup served by the warm section (pages; 0 without any).
    pub warm_section_mean_pages: f64,
    /// Most distinct pages one lookup served by the warm section touched (pages).
    pub warm_section_max_pages: usize,
    /// Mean distinct pages per lookup not served by the warm section (pages; 0 without
    /// any).
    pub cold_mean_pages: f64,
    /// Lookups whose answer differed from the `partition_point` oracle (must be 0).
    pub answer_mismatches: u64,
    /// Page-directory lookups answered without the directory (must be 0).
    pub directory_fallbacks: u64,
    /// Real page-ins of the page-in run, minus the appends-only baseline (OS pages);
    /// `None` when not measured ([`PageInsInfo::absent`] or
    /// [`PageInsInfo::unmeasured`] says why).
    pub page_ins: Option<u64>,
    /// Page-ins of the run before the baseline is subtracted (OS pages).
    pub raw_page_ins: Option<u64>,
    /// Major page faults of the run minus the baseline's (`getrusage`).
    pub major_faults: Option<u64>,
    /// Distinct pages written before the run that its lookups touched per the page probe
    /// (OS pages): without readahead, what the run must bring in.
    pub probed_pages: Option<u64>,
    /// `page_ins` per 1000 lookups (OS pages).
    pub page_ins_per_1000: Option<f64>,
}

/// A point's cell in a line of the sweep's tables (`None`: no figure).
pub type TableCell = fn(&WarmSweepPoint) -> Option<String>;

/// The figures of the sweep's tables (the `--details` text and `report.md`), one line each
/// per index kind and lag distribution: the label and a point's cell (`None`: no figure).
pub const TABLE_FIGURES: [(&str, TableCell); 3] = [
    ("warm share", |p| p.warm_share.map(pct)),
    ("pages mean / max", |p| {
        Some(format!("{:.2} / {}", p.mean_pages, p.max_pages))
    }),
    ("page-ins", |p| p.page_ins.map(|n| n.to_string())),
];

/// Where the page-in runs were made, or why they were not.
#[derive(Clone, Debug, Serialize)]
pub struct PageInsInfo {
    /// Where the files were, if anywhere.
    pub location: Option<Location>,
    /// Directories tried and not used.
    pub rejected: Vec<Rejected>,
    /// Why no page-in figure exists at all (skipped, or no directory evicts); `None` when
    /// they were measured.
    pub absent: Option<String>,
    /// Per index kind: page-ins of the appends-only baseline run (OS pages).
    pub baselines: Vec<(IndexKind, u64)>,
    /// Runs that could not be measured, with the reason.
    pub unmeasured: Vec<String>,
    /// OS page size (bytes).
    pub os_page_size: usize,
}

impl PageInsInfo {
    /// The appends-only baselines per index kind: `offset 3, time 2`.
    pub fn baselines_text(&self) -> String {
        self.baselines
            .iter()
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Everything the sweep measured.
#[derive(Clone, Debug, Serialize)]
pub struct WarmSweepOutcome {
    /// Page size for pages per lookup and the page directory (bytes).
    pub page_size: usize,
    /// Lookups per point.
    pub lookups: usize,
    /// Lookups after every round of appends.
    pub lookups_per_round: usize,
    /// The run seed.
    pub seed: u64,
    /// `index.interval.bytes` of the producer model (bytes of log).
    pub index_interval_bytes: u32,
    /// Segment size (bytes of log).
    pub segment_bytes: u64,
    /// Index file size (bytes).
    pub index_bytes: usize,
    /// The warm section sizes swept (bytes).
    pub warm_sizes: Vec<usize>,
    /// The lag distributions.
    pub distributions: Vec<LagDistribution>,
    /// Per index kind, what the index held.
    pub indexes: Vec<SweepIndex>,
    /// Every point: per kind, per distribution, the warm sizes then the page directory.
    pub points: Vec<WarmSweepPoint>,
    /// The page-in runs.
    pub page_ins: PageInsInfo,
}

impl WarmSweepOutcome {
    /// The warm/cold point of `kind`, distribution `lag` and warm section `warm_bytes`.
    pub fn warm(&self, kind: IndexKind, lag: &str, warm_bytes: usize) -> Option<&WarmSweepPoint> {
        self.points
            .iter()
            .find(|p| p.kind == kind && p.lag == lag && p.warm_section_bytes == Some(warm_bytes))
    }

    /// The page-directory point of `kind` and distribution `lag`.
    pub fn page_directory(&self, kind: IndexKind, lag: &str) -> Option<&WarmSweepPoint> {
        self.points
            .iter()
            .find(|p| p.kind == kind && p.lag == lag && p.warm_section_bytes.is_none())
    }

    /// The first of the swept warm sections (in sweep order) that serves at least
    /// [`SERVES_SHARE`] of the lookups of `kind` and distribution `lag`.
    pub fn smallest_serving(&self, kind: IndexKind, lag: &str) -> Option<usize> {
        self.warm_sizes.iter().copied().find(|&w| {
            self.warm(kind, lag, w)
                .and_then(|p| p.warm_share)
                .is_some_and(|s| s >= SERVES_SHARE)
        })
    }

    /// The lines of the sweep's tables (the `--details` text and `report.md`) for `kind`
    /// and distribution `lag`: per figure of [`TABLE_FIGURES`], its label and its cells, for
    /// every swept warm section and then the page directory (`-` where there is no figure).
    pub fn table_lines(&self, kind: IndexKind, lag: &str) -> Vec<(&'static str, Vec<String>)> {
        let points: Vec<Option<&WarmSweepPoint>> = self
            .warm_sizes
            .iter()
            .map(|&w| self.warm(kind, lag, w))
            .chain(std::iter::once(self.page_directory(kind, lag)))
            .collect();
        TABLE_FIGURES
            .iter()
            .map(|&(label, cell)| {
                let cells = points
                    .iter()
                    .map(|p| p.and_then(cell).unwrap_or_else(|| "-".to_string()))
                    .collect();
                (label, cells)
            })
            .collect()
    }

    /// What the index of `kind` held.
    pub fn index(&self, kind: IndexKind) -> Option<&SweepIndex> {
        self.indexes.iter().find(|i| i.kind == kind)
    }

    /// The distribution named `lag`.
    pub fn distribution(&self, lag: &str) -> Option<&LagDistribution> {
        self.distributions.iter().find(|d| d.name == lag)
    }
}

/// The segment's first half: the index points written before the lookups start, and the
/// model at that point (cloned for every pass, so every pass appends the same entries).
struct Prefix {
    points: Vec<IndexPoint>,
    model: SegmentModel,
}

impl Prefix {
    fn new(cfg: &WarmSweepConfig) -> Self {
        let history = cfg.max_lag_bytes() + MIB;
        let mut model = SegmentModel::with_history_bytes(cfg.producer.clone(), cfg.seed, history);
        let mut points = Vec::new();
        while model.segment_bytes() < cfg.segment_bytes / 2 {
            match model.next_index_point() {
                Some(p) => points.push(p),
                None => break,
            }
        }
        Prefix { points, model }
    }
}

/// The target key of a consumer `lag` bytes behind the log end: the offset of the batch
/// holding that byte, or its timestamp for the time index.
fn target_key(kind: IndexKind, model: &SegmentModel, lag: u64) -> i64 {
    let cfg = model.config();
    let offset = model
        .offset_at_position(model.segment_bytes().saturating_sub(lag))
        .unwrap_or(cfg.base_offset);
    match kind {
        IndexKind::Offset => offset,
        IndexKind::Time => model.timestamp_of(offset).unwrap_or(cfg.start_timestamp_ms),
    }
}

fn index_path(dir: &Path, cfg: &WarmSweepConfig, kind: IndexKind) -> PathBuf {
    dir.join(kind.file_name(cfg.producer.base_offset))
}

/// A fresh index at `path` holding the prefix's entries.
fn fill_prefix<I: ReplayIndex>(
    path: &Path,
    cfg: &WarmSweepConfig,
    prefix: &Prefix,
) -> Result<I, IndexError> {
    let _ = std::fs::remove_file(path);
    let index = real_faults::create_index::<I>(
        path,
        cfg.producer.base_offset,
        cfg.index_bytes,
        cfg.page_size,
    )?;
    let capacity = index.capacity(false);
    for p in &prefix.points {
        if index.entries() >= capacity {
            break;
        }
        let (k, v) = I::key_value(p);
        index.append_entry(k, v, false)?;
    }
    Ok(index)
}

/// How a growth went.
struct Grown {
    entries_before: usize,
    entries_after: usize,
    bytes_before: u64,
    bytes_after: u64,
    index_full: bool,
}

/// Grows `index` (holding the prefix) until the segment reaches `cfg.segment_bytes`, in
/// rounds; after every round, when `lags` is given, calls `lookup` with the snapshot and
/// the target of each of `cfg.lookups_per_round` lags.
fn grow<I: ReplayIndex>(
    index: &I,
    cfg: &WarmSweepConfig,
    prefix: &Prefix,
    lags: Option<&LagDistribution>,
    lookup: &mut dyn FnMut(&Snapshot<I::Entry>, i64),
) -> Result<Grown, IndexError> {
    let mut model = prefix.model.clone();
    let mut sampler = lags.map(|d| LagSampler::new(d, d.seed(cfg.seed)));
    let m = cfg.lookups_per_round.max(1);
    let rounds = (cfg.lookups / m).max(1);
    let from = model.segment_bytes();
    let to = cfg.segment_bytes.max(from);
    let capacity = index.capacity(false);
    let entries_before = index.entries();
    let mut index_full = index.entries() >= capacity;
    let mut stopped = index_full;
    for r in 0..rounds {
        let goal = from + ((r as u128 + 1) * u128::from(to - from) / rounds as u128) as u64;
        while !stopped && model.segment_bytes() < goal {
            if index.entries() >= capacity {
                index_full = true;
                stopped = true;
                break;
            }
            let Some(p) = model.next_index_point() else {
                stopped = true;
                break;
            };
            let (k, v) = I::key_value(&p);
            index.append_entry(k, v, false)?;
        }
        let Some(sampler) = sampler.as_mut() else {
            continue;
        };
        let snap = index.snapshot()?;
        for _ in 0..m {
            let target = target_key(I::KIND, &model, sampler.next_lag_bytes());
            lookup(&snap, target);
        }
    }
    Ok(Grown {
        entries_before,
        entries_after: index.entries(),
        bytes_before: from,
        bytes_after: model.segment_bytes(),
        index_full,
    })
}

/// Running totals of one strategy in a simulated pass.
struct Acc {
    strategy: SearchStrategy,
    lookups: u64,
    pages_total: u64,
    max_pages: usize,
    warm_lookups: u64,
    warm_pages_total: u64,
    warm_max_pages: usize,
    mismatches: u64,
    fallbacks: u64,
}

/// The simulated pass of one kind and distribution: every strategy on the same
/// snapshots; returns one point per strategy and what the index held.
fn simulate<I: ReplayIndex>(
    dir: &Path,
    cfg: &WarmSweepConfig,
    prefix: &Prefix,
    dist: &LagDistribution,
) -> Result<(Vec<WarmSweepPoint>, SweepIndex), BenchError> {
    let path = index_path(dir, cfg, I::KIND);
    let index = fill_prefix::<I>(&path, cfg, prefix)?;
    let mut accs: Vec<Acc> = cfg
        .strategies()
        .into_iter()
        .map(|strategy| Acc {
            strategy,
            lookups: 0,
            pages_total: 0,
            max_pages: 0,
            warm_lookups: 0,
            warm_pages_total: 0,
            warm_max_pages: 0,
            mismatches: 0,
            fallbacks: 0,
        })
        .collect();
    let mut probe = PageProbe::new(cfg.page_size);
    let grown = grow(&index, cfg, prefix, Some(dist), &mut |snap, target| {
        let slots = snap.slots();
        let base = snap.base_offset();
        let oracle = slots
            .partition_point(|e| e.key(base) <= target)
            .checked_sub(1);
        for a in &mut accs {
            if !strategy_is_native(snap, a.strategy) {
                a.fallbacks += 1;
            }
            probe.clear();
            let slot = snap.search_with(
                a.strategy,
                target,
                SearchField::Key,
                Bound::LargestLowerBound,
                &mut probe,
            );
            if let Some(i) = slot {
                black_box(snap.answer_with(a.strategy, i, &mut probe));
            }
            let pages = probe.distinct_pages();
            a.lookups += 1;
            a.pages_total += pages as u64;
            a.max_pages = a.max_pages.max(pages);
            if lands_in_warm_section(
                slots,
                base,
                target,
                SearchField::Key,
                a.strategy,
                &mut NoProbe,
            ) {
                a.warm_lookups += 1;
                a.warm_pages_total += pages as u64;
                a.warm_max_pages = a.warm_max_pages.max(pages);
            }
            if slot != oracle {
                a.mismatches += 1;
            }
        }
    });
    let deleted = index.delete();
    let grown = grown?;
    deleted?;
    let per_entry = ratio(grown.bytes_after, grown.entries_after as u64);
    let entry_size = I::Entry::SIZE;
    let points = accs
        .iter()
        .map(|a| {
            let warm_bytes = warm_section_of(a.strategy);
            let warm_entries = warm_bytes.map(|w| w / entry_size);
            WarmSweepPoint {
                kind: I::KIND,
                lag: dist.name.clone(),
                strategy: a.strategy.name().to_string(),
                warm_section_bytes: warm_bytes,
                warm_section_entries: warm_entries,
                warm_section_log_bytes: warm_entries.map(|e| e as f64 * per_entry),
                warm_section_page_bound: warm_bytes.map(|w| w.div_ceil(cfg.page_size) + 1),
                lookups: a.lookups,
                warm_section_lookups: a.warm_lookups,
                warm_share: warm_bytes.map(|_| ratio(a.warm_lookups, a.lookups)),
                mean_pages: ratio(a.pages_total, a.lookups),
                max_pages: a.max_pages,
                warm_section_mean_pages: ratio(a.warm_pages_total, a.warm_lookups),
                warm_section_max_pages: a.warm_max_pages,
                cold_mean_pages: ratio(
                    a.pages_total - a.warm_pages_total,
                    a.lookups - a.warm_lookups,
                ),
                answer_mismatches: a.mismatches,
                directory_fallbacks: a.fallbacks,
                page_ins: None,
                raw_page_ins: None,
                major_faults: None,
                probed_pages: None,
                page_ins_per_1000: None,
            }
        })
        .collect();
    let held = SweepIndex {
        kind: I::KIND,
        entries_before: grown.entries_before,
        entries_after: grown.entries_after,
        log_bytes_before: grown.bytes_before,
        log_bytes_after: grown.bytes_after,
        log_bytes_per_entry: per_entry,
        index_full: grown.index_full,
    };
    Ok((points, held))
}

/// What one page-in run measured.
struct PageInRun {
    raw_page_ins: u64,
    major_faults: u64,
    probed_pages: usize,
    fallbacks: u64,
}

/// One page-in run: `strategy` (none: the appends-only baseline) over `dist`'s targets
/// while the evicted index grows, readahead off.
fn page_in_run<I: ReplayIndex>(
    path: &Path,
    cfg: &WarmSweepConfig,
    prefix: &Prefix,
    dist: &LagDistribution,
    strategy: Option<SearchStrategy>,
) -> Result<PageInRun, String> {
    // Declared first, so dropped last: after the index is unmapped.
    let _remove = real_faults::RemoveOnDrop(path);
    let index = fill_prefix::<I>(path, cfg, prefix).map_err(|e| e.to_string())?;
    index.flush_index().map_err(|e| e.to_string())?;
    let os_page = sys::page_size();
    // Pages wholly written before the run; the appender starts in the next one.
    let counted = 0..(index.entries() * I::Entry::SIZE) / os_page;
    let snap = index.snapshot().map_err(|e| e.to_string())?;
    let start = real_faults::start_run(snap.mapping(), path, Readahead::Off, counted.clone())?;
    drop(snap);
    let mut probe = PageProbe::new(os_page);
    let mut touched = BTreeSet::new();
    let mut fallbacks = 0;
    let lags = strategy.map(|_| dist);
    grow(&index, cfg, prefix, lags, &mut |snap, target| {
        let Some(s) = strategy else {
            return;
        };
        if !strategy_is_native(snap, s) {
            fallbacks += 1;
        }
        let base = snap.base_offset();
        probe.clear();
        let slot = snap.search_with(
            s,
            target,
            SearchField::Key,
            Bound::LargestLowerBound,
            &mut probe,
        );
        if let Some(e) = slot.and_then(|i| snap.answer_with(s, i, &mut probe)) {
            black_box((e.key(base), e.value(base)));
        }
        touched.extend(
            probe
                .pages()
                .iter()
                .copied()
                .filter(|p| counted.contains(p)),
        );
    })
    .map_err(|e| e.to_string())?;
    let snap = index.snapshot().map_err(|e| e.to_string())?;
    let (raw_page_ins, major_faults) = real_faults::finish_run(snap.mapping(), &start, counted)?;
    drop(snap);
    index.delete().map_err(|e| e.to_string())?;
    Ok(PageInRun {
        raw_page_ins,
        major_faults,
        probed_pages: touched.len(),
        fallbacks,
    })
}

/// The page-in runs of one kind: the appends-only baseline, then every distribution and
/// strategy; fills in the points' page-in fields.
fn page_ins_of_kind<I: ReplayIndex>(
    dir: &Path,
    cfg: &WarmSweepConfig,
    prefix: &Prefix,
    points: &mut [WarmSweepPoint],
    info: &mut PageInsInfo,
    progress: &mut dyn FnMut(),
) {
    let kind = I::KIND;
    let path = index_path(dir, cfg, kind);
    let Some(first) = cfg.distributions.first() else {
        return;
    };
    let baseline = match page_in_run::<I>(&path, cfg, prefix, first, None) {
        Ok(b) => b,
        Err(e) => {
            info.unmeasured.push(format!(
                "{} appends-only baseline: {e} (no page-ins of this index)",
                kind.name()
            ));
            return;
        }
    };
    progress();
    info.baselines.push((kind, baseline.raw_page_ins));
    for dist in &cfg.distributions {
        for strategy in cfg.strategies() {
            let warm = warm_section_of(strategy);
            match page_in_run::<I>(&path, cfg, prefix, dist, Some(strategy)) {
                Ok(r) => {
                    if let Some(p) = points.iter_mut().find(|p| {
                        p.kind == kind && p.lag == dist.name && p.warm_section_bytes == warm
                    }) {
                        let ins = r.raw_page_ins.saturating_sub(baseline.raw_page_ins);
                        p.page_ins = Some(ins);
                        p.raw_page_ins = Some(r.raw_page_ins);
                        p.major_faults = Some(r.major_faults.saturating_sub(baseline.major_faults));
                        p.probed_pages = Some(r.probed_pages as u64);
                        p.page_ins_per_1000 = Some(1000.0 * ratio(ins, p.lookups));
                        p.directory_fallbacks += r.fallbacks;
                    }
                }
                Err(e) => info.unmeasured.push(format!(
                    "{} {} {}: {e}",
                    kind.name(),
                    dist.name,
                    strategy_label(strategy)
                )),
            }
            progress();
        }
    }
}

/// The warm section of a warm/cold strategy (bytes); `None` for any other strategy.
fn warm_section_of(s: SearchStrategy) -> Option<usize> {
    match s {
        SearchStrategy::WarmCold { warm_section_bytes } => Some(warm_section_bytes),
        _ => None,
    }
}

/// `warm-cold 8 KiB` or `page-directory`.
pub fn strategy_label(s: SearchStrategy) -> String {
    match warm_section_of(s) {
        Some(w) => format!("warm-cold {}", warm_size_text(w)),
        None => s.name().to_string(),
    }
}

/// `4 KiB`, `8 KiB`, `64 KiB`: a warm section size for labels.
pub fn warm_size_text(bytes: usize) -> String {
    bytes_text(bytes as u64)
}

/// Runs the sweep: the simulated passes in `scratch`, then the page-in runs (if asked for
/// and a directory evicts). `progress(done, total)` counts passes and runs.
///
/// # Errors
/// Invalid parameters, or I/O and index errors of the simulated passes (a page-in run
/// that fails is reported in [`PageInsInfo::unmeasured`] instead).
pub fn run(
    cfg: &WarmSweepConfig,
    scratch: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<WarmSweepOutcome, BenchError> {
    cfg.validate()?;
    let kinds = cfg.kinds.len() as u64;
    let dists = cfg.distributions.len() as u64;
    let strategies = cfg.strategies().len() as u64;
    let measure = matches!(cfg.page_ins, PageIns::Measure { .. });
    let total = kinds * dists
        + if measure {
            kinds * (1 + dists * strategies)
        } else {
            0
        };
    let mut done = 0;
    progress(done, total);
    let prefix = Prefix::new(cfg);
    let mut points = Vec::new();
    let mut indexes = Vec::new();
    for &kind in &cfg.kinds {
        let simulate_kind = match kind {
            IndexKind::Offset => simulate::<OffsetIndex>,
            IndexKind::Time => simulate::<TimeIndex>,
        };
        for dist in &cfg.distributions {
            let (p, held) = simulate_kind(scratch, cfg, &prefix, dist)?;
            points.extend(p);
            if !indexes.iter().any(|i: &SweepIndex| i.kind == kind) {
                indexes.push(held);
            }
            done += 1;
            progress(done, total);
        }
    }
    let mut info = PageInsInfo {
        location: None,
        rejected: Vec::new(),
        absent: None,
        baselines: Vec::new(),
        unmeasured: Vec::new(),
        os_page_size: sys::page_size(),
    };
    match &cfg.page_ins {
        PageIns::Skip { reason } => info.absent = Some(reason.clone()),
        PageIns::Measure { dir } => match real_faults::choose_location(dir.as_deref()) {
            Err(rejected) => {
                info.absent = Some(format!(
                    "no directory where the kernel evicts a file's pages on request: {}",
                    real_faults::describe_rejected(&rejected)
                ));
                info.rejected = rejected;
            }
            Ok((location, rejected)) => {
                info.rejected = rejected;
                let tmp = real_faults::scratch_dir(&location, "bench-harness-warm-sweep")?;
                info.location = Some(location);
                let mut tick = || {
                    done += 1;
                    progress(done, total);
                };
                for &kind in &cfg.kinds {
                    let page_ins = match kind {
                        IndexKind::Offset => page_ins_of_kind::<OffsetIndex>,
                        IndexKind::Time => page_ins_of_kind::<TimeIndex>,
                    };
                    page_ins(tmp.path(), cfg, &prefix, &mut points, &mut info, &mut tick);
                }
            }
        },
    }
    progress(total, total);
    Ok(WarmSweepOutcome {
        page_size: cfg.page_size,
        lookups: cfg.lookups,
        lookups_per_round: cfg.lookups_per_round,
        seed: cfg.seed,
        index_interval_bytes: cfg.producer.index_interval_bytes,
        segment_bytes: cfg.segment_bytes,
        index_bytes: cfg.index_bytes,
        warm_sizes: cfg.warm_sizes.clone(),
        distributions: cfg.distributions.clone(),
        indexes,
        points,
        page_ins: info,
    })
}

/// The share `x` (fraction) as `42.3%`.
pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Share (fraction) a warm section must serve to count as serving a distribution in
/// [`answer`]: 99 %.
pub const SERVES_SHARE: f64 = 0.99;

/// The measured answer, as sentences: per index kind, what Kafka's 8 KiB warm section
/// serves of each lag distribution and how many pages its warm lookups read, and the
/// smallest swept warm section that serves at least [`SERVES_SHARE`] of each
/// distribution.
pub fn answer(o: &WarmSweepOutcome) -> Vec<String> {
    let mut lines = Vec::new();
    let kafka = KAFKA_WARM_SECTION_BYTES;
    for i in &o.indexes {
        let kind = i.kind;
        let Some(k0) = o
            .distributions
            .first()
            .and_then(|d| o.warm(kind, &d.name, kafka))
        else {
            continue;
        };
        let shares: Vec<String> = o
            .distributions
            .iter()
            .filter_map(|d| {
                let p = o.warm(kind, &d.name, kafka)?;
                Some(format!(
                    "{} of {} ({})",
                    pct(p.warm_share?),
                    d.name,
                    d.describe()
                ))
            })
            .collect();
        let max_warm = o
            .points
            .iter()
            .filter(|p| p.kind == kind && p.warm_section_bytes == Some(kafka))
            .map(|p| p.warm_section_max_pages)
            .max()
            .unwrap_or(0);
        lines.push(format!(
            "{} index: Kafka's 8 KiB warm section ({} entries, {} of log) served {}; a warm lookup read at most {} pages.",
            kind.name(),
            k0.warm_section_entries.unwrap_or(0),
            crate::bench_report::human_bytes(k0.warm_section_log_bytes.unwrap_or(0.0)),
            shares.join(", "),
            max_warm
        ));
        let smallest: Vec<String> = o
            .distributions
            .iter()
            .map(|d| match o.smallest_serving(kind, &d.name) {
                Some(w) => {
                    let p = o.warm(kind, &d.name, w);
                    format!(
                        "{} {} (warm lookups <= {} pages)",
                        d.name,
                        warm_size_text(w),
                        p.map_or(0, |p| p.warm_section_max_pages)
                    )
                }
                None => {
                    let largest = o.warm_sizes.iter().copied().max().unwrap_or(0);
                    let share = o
                        .warm(kind, &d.name, largest)
                        .and_then(|p| p.warm_share)
                        .unwrap_or(0.0);
                    format!(
                        "{} none up to {} ({} served)",
                        d.name,
                        warm_size_text(largest),
                        pct(share)
                    )
                }
            })
            .collect();
        lines.push(format!(
            "{} index: smallest warm section serving at least {}: {}.",
            kind.name(),
            pct(SERVES_SHARE),
            smallest.join("; ")
        ));
        let ins: Vec<String> = o
            .distributions
            .iter()
            .filter_map(|d| {
                let at = |w: usize| o.warm(kind, &d.name, w).and_then(|p| p.page_ins);
                let all: Vec<u64> = o.warm_sizes.iter().filter_map(|&w| at(w)).collect();
                let (lo, hi) = (all.iter().min()?, all.iter().max()?);
                let pd = o.page_directory(kind, &d.name).and_then(|p| p.page_ins)?;
                let sizes = bytes_range_text(
                    *o.warm_sizes.iter().min()? as u64,
                    *o.warm_sizes.iter().max()? as u64,
                );
                Some(format!(
                    "{} {} at 8 KiB ({lo}-{hi} over {sizes}), page directory {pd}",
                    d.name,
                    at(kafka)?,
                ))
            })
            .collect();
        if !ins.is_empty() {
            lines.push(format!(
                "{} index: real page-ins of {} lookups while the evicted index grows: {}.",
                kind.name(),
                o.lookups,
                ins.join("; ")
            ));
        }
    }
    lines
}

/// The sentence of the main job's summary (offset index): what Kafka's 8 KiB warm
/// section spans in bytes of log, the share it serves of the first two single-range lag
/// distributions (in-sync and a few MiB behind by default) and the pages its warm lookups
/// read, and the smallest swept warm section serving at least [`SERVES_SHARE`] of the
/// second. `None` without 8 KiB points or without two single-range distributions.
pub fn summary_sentence(o: &WarmSweepOutcome) -> Option<String> {
    let kind = IndexKind::Offset;
    let kafka = KAFKA_WARM_SECTION_BYTES;
    let mut single = o.distributions.iter().filter(|d| d.ranges.len() == 1);
    let (near, far) = (single.next()?, single.next()?);
    let a = o.warm(kind, &near.name, kafka)?;
    let b = o.warm(kind, &far.name, kafka)?;
    let max_pages = a.warm_section_max_pages.max(b.warm_section_max_pages);
    let mut text = format!(
        "Warm section: Kafka's 8 KiB = {} of log at index.interval.bytes {}; it serves {} of in-sync \
         ({} behind) and {} of {}-behind lookups in <= {} pages",
        crate::bench_report::human_bytes(a.warm_section_log_bytes?),
        o.index_interval_bytes,
        pct(a.warm_share?),
        near.describe(),
        pct(b.warm_share?),
        far.describe(),
        max_pages
    );
    match o
        .smallest_serving(kind, &far.name)
        .and_then(|w| Some((w, o.warm(kind, &far.name, w)?)))
    {
        Some((w, p)) if w != kafka => text.push_str(&format!(
            " ({}: {} in <= {}).",
            warm_size_text(w),
            pct(p.warm_share?),
            p.warm_section_max_pages
        )),
        _ => text.push('.'),
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(LagDistribution::in_sync().describe(), "0-1 MiB");
        assert_eq!(LagDistribution::few_mib_behind().describe(), "2-8 MiB");
        assert_eq!(
            LagDistribution::mixed().describe(),
            "80% 0-1 MiB + 10% 2-8 MiB + 10% 10-60 MiB"
        );
        assert_eq!(LagDistribution::mixed().label(), "mixed (80/10/10)");
        assert_eq!(
            LagDistribution::uniform("x", 0, 4 * MIB - 4096).describe(),
            "0-4092 KiB"
        );
        assert_eq!(warm_size_text(8192), "8 KiB");
        assert_eq!(
            strategy_label(SearchStrategy::WarmCold {
                warm_section_bytes: 65536
            }),
            "warm-cold 64 KiB"
        );
    }

    #[test]
    fn mixed_lags_follow_the_weights() {
        let d = LagDistribution::mixed();
        let mut s = LagSampler::new(&d, d.seed(42));
        let (mut a, mut b, mut c) = (0, 0, 0);
        for _ in 0..10_000 {
            match s.next_lag_bytes() {
                l if l <= MIB => a += 1,
                l if (2 * MIB..=8 * MIB).contains(&l) => b += 1,
                l if (10 * MIB..=60 * MIB).contains(&l) => c += 1,
                l => panic!("lag {l} outside every range"),
            }
        }
        assert!((7700..=8300).contains(&a), "{a}");
        assert!(
            (800..=1200).contains(&b) && (800..=1200).contains(&c),
            "{b} {c}"
        );
    }
}
