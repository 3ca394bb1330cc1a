//! Command-line options and the whole run (scenario, synthetic replays, real-data
//! replay, real page faults, latency, optional report directory), kept out of `main.rs`
//! so tests can drive it.

use std::path::PathBuf;

use clap::Parser;

use crate::bench_report;
use crate::latency::{self, LatencyConfig, LatencyRow};
use crate::pollution::{self, PollutionConfig, PollutionOutcome, PollutionScale};
use crate::producer::ProducerConfig;
use crate::real_data::{self, RealDataOutcome, RealReplayConfig};
use crate::real_faults::{self, Readahead, RealFaultConfig, RealFaultOutcome};
use crate::replay::{self, IndexKind, ReplayConfig, ReplayOutcome};
use crate::report::{self, ResultRow};
use crate::scenario::{self, ScenarioResult};
use crate::warm_sweep::{self, PageIns, WarmSweepConfig, WarmSweepOutcome};
use crate::workload::{Workload, WorkloadConfig};
use crate::BenchError;
use index_core::SearchStrategy;

/// Replays Kafka index workloads and compares the pages touched (and the page faults in a
/// simulated LRU page cache and in the real page cache) of the textbook binary search,
/// Kafka's warm/cold search and the page directory (fence pointers).
///
/// With no arguments it runs: (1) the KAFKA-6432 scenario (13-page offset index grown to
/// 14 pages), (2) a hot-tail replay on a 10 MiB offset index and a 10 MiB time index with
/// hot-tail, lagging, uniform and mixed lookups, (3) the same replay over every real
/// `.index`/`.timeindex` file under the data directory, (4) real page-ins of hot-tail
/// lookups on evicted 10 MiB index files, (5) lookup latency against an in-memory
/// `partition_point`, and (6) the warm section sweep ("why 8192": warm section sizes of
/// 4-64 KiB against consumer lag in bytes of log, at Kafka's index.interval.bytes 4096).
/// With --report-dir it also sweeps index sizes and writes a Markdown report with SVG
/// plots.
#[derive(Clone, Debug, Parser)]
#[command(name = "bench-harness", version, about, long_about)]
pub struct Cli {
    /// Directory holding real Kafka index files (searched recursively). Default: the
    /// repository's partition directories, `segment/tests/data`.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Also write every result row as a JSON array of objects to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Capacity of the simulated LRU page cache, in pages (one cache per strategy and
    /// workload; the appender's page is touched in it on every append).
    #[arg(long, default_value_t = 32, value_name = "PAGES")]
    pub cache_pages: usize,

    /// Page size in bytes used to count pages, for the simulated cache and for the page
    /// directory's fence pointers (a power of two, at least 8).
    #[arg(long, default_value_t = 4096, value_name = "BYTES")]
    pub page_size: usize,

    /// Lookups per workload per synthetic index, spread evenly over the whole fill.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub lookups: usize,

    /// Lookups each workload makes after every round of appends (m); the number of appends
    /// per round (k, entries) follows from the index capacity and --lookups.
    #[arg(long, default_value_t = 4, value_name = "M")]
    pub lookups_per_round: usize,

    /// Seed of every random stream (producer model, workloads, real-data targets).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Size of each synthetic index file, in bytes (Kafka's segment.index.bytes).
    #[arg(long, default_value_t = 10 * 1024 * 1024, value_name = "BYTES")]
    pub index_bytes: usize,

    /// Warm-section size of the warm/cold strategy, in bytes (Kafka uses 8192). Also the
    /// criterion for the "warm lookups" columns of both strategies.
    #[arg(long, default_value_t = 8192, value_name = "BYTES")]
    pub warm_section_bytes: usize,

    /// Number of in-sync consumers in the hot-tail workload.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub consumers: usize,

    /// In-sync consumers are up to this many offsets behind the log end after each fetch.
    #[arg(long, default_value_t = 300, value_name = "OFFSETS")]
    pub hot_lag: u64,

    /// Smallest lag of the lagging consumer, in offsets.
    #[arg(long, default_value_t = 2_000, value_name = "OFFSETS")]
    pub lag_min: u64,

    /// Largest lag of the lagging consumer, in offsets.
    #[arg(long, default_value_t = 20_000, value_name = "OFFSETS")]
    pub lag_max: u64,

    /// Kafka's index.interval.bytes for the producer model (bytes of log between index
    /// entries). Kafka's default is 4096, but then a 10 MiB offset index cannot fill before
    /// the 2 GiB segment limit; page touches depend only on the entries, not the interval.
    /// The warm section sweep, whose lags are bytes of log, always uses Kafka's 4096.
    #[arg(long, default_value_t = 512, value_name = "BYTES")]
    pub index_interval_bytes: u32,

    /// Lookups after every append in the real-data replay.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub real_lookups_per_append: usize,

    /// Skip the replay of real index files.
    #[arg(long)]
    pub skip_real: bool,

    /// Skip the real page-fault measurement (evicting index files from the page cache and
    /// counting the pages hot-tail lookups bring back).
    #[arg(long)]
    pub skip_real_faults: bool,

    /// Directory for the real page-fault measurement's index files. Default: the first of
    /// the temporary directory, /var/tmp, the workspace's target/ and the current
    /// directory where the kernel evicts a file's pages on request.
    #[arg(long, value_name = "DIR")]
    pub real_faults_dir: Option<PathBuf>,

    /// Hot-tail lookups of each growing-phase run of the real page-fault measurement
    /// (the static phase always makes 1000).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub real_fault_lookups: usize,

    /// Lookups per timed loop of the latency measurement (0 skips it).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub latency_lookups: usize,

    /// Lookups per point of the warm section sweep (each warm section size and the page
    /// directory, per lag distribution and index kind; 0 skips the sweep).
    #[arg(long, default_value_t = warm_sweep::DEFAULT_LOOKUPS, value_name = "N")]
    pub warm_sweep_lookups: usize,

    /// Warm section sizes of the warm section sweep, in bytes (comma-separated).
    #[arg(
        long,
        value_name = "BYTES,...",
        value_delimiter = ',',
        default_value = "4096,8192,16384,32768,65536"
    )]
    pub warm_sweep_sizes: Vec<usize>,

    /// Segment size of the warm section sweep, in bytes of log (Kafka's segment.bytes,
    /// default 1 GiB): its lookups are made while the segment grows from half full to full.
    #[arg(long, default_value_t = warm_sweep::KAFKA_SEGMENT_BYTES, value_name = "BYTES")]
    pub warm_sweep_segment_bytes: u64,

    /// Also sweep index sizes and write report.md with SVG plots (pages per lookup, page
    /// faults and latency versus index size) into this directory.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,

    /// Index sizes of the --report-dir sweep, in bytes (comma-separated).
    #[arg(
        long,
        value_name = "BYTES,...",
        value_delimiter = ',',
        default_value = "16384,65536,262144,1048576,4194304,10485760"
    )]
    pub report_sizes: Vec<usize>,

    /// Criterion's output directory, whose mean times report.md lists if it exists.
    /// Default: `criterion` next to the report directory (`target/criterion` for
    /// `target/bench-report`).
    #[arg(long, value_name = "DIR")]
    pub criterion_dir: Option<PathBuf>,

    /// No progress indicator (it is also hidden when stdout is not a terminal).
    #[arg(long, short)]
    pub quiet: bool,

    /// After the summary, print every table: the KAFKA-6432 scenario, every workload on both
    /// indexes, the real index files, each page-fault run, the latency rows, the warm
    /// section sweep and the memory-pressure workload (which only runs with --details,
    /// --report-dir or --pollution-only).
    #[arg(long)]
    pub details: bool,

    /// Skip the memory-pressure workload (a lagging consumer's scan against in-sync
    /// consumers in a memory cgroup; also off with BENCH_HARNESS_CGROUP=off).
    #[arg(long)]
    pub skip_pollution: bool,

    /// Run only the memory-pressure workload and print its table (with --report-dir, also
    /// write pollution.svg there).
    #[arg(long)]
    pub pollution_only: bool,

    /// Memory limits of the memory-pressure workload's cgroup, in MiB (comma-separated).
    #[arg(
        long,
        value_name = "MIB,...",
        value_delimiter = ',',
        default_value = "896,256,64,32,16,12"
    )]
    pub pollution_limits_mib: Vec<u64>,

    /// Scale of the memory-pressure workload: `full` (a 1 GiB active segment with a 10 MiB
    /// index and three older 256 MiB segments) or `small` (64 MiB, for tests).
    #[arg(long, value_enum, default_value_t = PollutionScaleArg::Full)]
    pub pollution_scale: PollutionScaleArg,

    /// Length of each arm of the memory-pressure workload in milliseconds (default: the
    /// scale's, 2500 full, 1200 small; the first fifth is a warm-up that is not counted).
    #[arg(long, value_name = "MS")]
    pub pollution_arm_ms: Option<u64>,

    /// Run the memory-pressure arms without the mitigation only (no
    /// POSIX_FADV_DONTNEED arms).
    #[arg(long)]
    pub pollution_no_mitigation: bool,

    /// Internal: run one arm of the memory-pressure workload (a JSON spec) and print its
    /// result; the parent re-executes the binary with it inside a cgroup.
    #[arg(long, hide = true, value_name = "JSON")]
    pub pollution_arm: Option<String>,
}

/// The scale of the memory-pressure workload (`--pollution-scale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PollutionScaleArg {
    /// [`crate::pollution::PollutionScale::full`].
    Full,
    /// [`crate::pollution::PollutionScale::small`].
    Small,
}

/// The largest memory limit `--pollution-limits-mib` takes, in MiB (1 TiB): larger values
/// would not limit anything, and in bytes they could overflow.
pub const MAX_POLLUTION_LIMIT_MIB: u64 = 1 << 20;

/// The most lines [`RunOutcome::render_summary`] prints.
pub const SUMMARY_MAX_LINES: usize = 25;

/// The widest line [`RunOutcome::render_summary`] prints, in columns.
pub const SUMMARY_MAX_COLUMNS: usize = 100;

/// Interleaved rounds of the latency measurement (each times every strategy and the
/// limit once); rows give medians.
pub const LATENCY_REPEATS: usize = 7;

impl Default for Cli {
    fn default() -> Self {
        Cli::parse_from(["bench-harness"])
    }
}

impl Cli {
    /// The synthetic replay configuration these options describe.
    pub fn replay_config(&self) -> ReplayConfig {
        ReplayConfig {
            index_bytes: self.index_bytes,
            page_size: self.page_size,
            cache_pages: self.cache_pages,
            lookups: self.lookups,
            lookups_per_round: self.lookups_per_round,
            seed: self.seed,
            warm_section_bytes: self.warm_section_bytes,
            producer: ProducerConfig {
                index_interval_bytes: self.index_interval_bytes,
                ..ProducerConfig::default()
            },
            workload: WorkloadConfig {
                consumers: self.consumers,
                hot_lag_offsets: self.hot_lag,
                lag_min_offsets: self.lag_min,
                lag_max_offsets: self.lag_max,
            },
            workloads: Workload::ALL.to_vec(),
        }
    }

    /// The real page-fault configuration these options describe, for indexes of
    /// `index_bytes` bytes.
    pub fn real_fault_config(&self, index_bytes: usize) -> RealFaultConfig {
        let cfg = self.replay_config();
        RealFaultConfig {
            index_bytes,
            page_size: self.page_size,
            warm_section_bytes: self.warm_section_bytes,
            growing_lookups: self.real_fault_lookups,
            lookups_per_round: self.lookups_per_round,
            seed: self.seed,
            producer: cfg.producer,
            workload: cfg.workload,
            dir: self.real_faults_dir.clone(),
            kinds: vec![IndexKind::Offset, IndexKind::Time],
            readaheads: vec![Readahead::Kernel, Readahead::Off],
        }
    }

    /// The latency configuration these options describe, for indexes of `index_bytes`
    /// bytes.
    pub fn latency_config(&self, index_bytes: usize) -> LatencyConfig {
        let cfg = self.replay_config();
        LatencyConfig {
            index_bytes,
            page_size: self.page_size,
            warm_section_bytes: self.warm_section_bytes,
            lookups: self.latency_lookups,
            repeats: LATENCY_REPEATS,
            seed: self.seed,
            producer: cfg.producer,
            workload: cfg.workload,
            kinds: vec![IndexKind::Offset, IndexKind::Time],
        }
    }

    /// The warm section sweep configuration these options describe: the producer model
    /// with Kafka's index.interval.bytes (4096, whatever --index-interval-bytes says), a
    /// segment of --warm-sweep-segment-bytes, index files of 10 MiB, the page-ins measured
    /// unless --skip-real-faults.
    pub fn warm_sweep_config(&self) -> WarmSweepConfig {
        let cfg = self.replay_config();
        WarmSweepConfig {
            warm_sizes: self.warm_sweep_sizes.clone(),
            page_size: self.page_size,
            lookups: self.warm_sweep_lookups,
            lookups_per_round: self.lookups_per_round,
            seed: self.seed,
            producer: ProducerConfig {
                index_interval_bytes: warm_sweep::KAFKA_INDEX_INTERVAL_BYTES,
                ..cfg.producer
            },
            segment_bytes: self.warm_sweep_segment_bytes,
            page_ins: if self.skip_real_faults {
                PageIns::Skip {
                    reason: "skipped (--skip-real-faults)".to_string(),
                }
            } else {
                PageIns::Measure {
                    dir: self.real_faults_dir.clone(),
                }
            },
            ..WarmSweepConfig::default()
        }
    }

    /// The memory-pressure workload's configuration these options describe; arms
    /// re-execute the running executable. It is skipped (`skip` set) unless --details,
    /// --report-dir or --pollution-only asks for it, and with --skip-pollution.
    pub fn pollution_config(&self) -> PollutionConfig {
        let mut scale = match self.pollution_scale {
            PollutionScaleArg::Full => PollutionScale::full(),
            PollutionScaleArg::Small => PollutionScale::small(),
        };
        if let Some(ms) = self.pollution_arm_ms {
            scale.arm_ms = ms;
            scale.warmup_ms = ms / 5;
        }
        let wanted = self.details || self.report_dir.is_some() || self.pollution_only;
        let skip = if self.skip_pollution {
            Some("--skip-pollution".to_string())
        } else if !wanted {
            Some("runs with --details, --report-dir or --pollution-only".to_string())
        } else {
            None
        };
        PollutionConfig {
            scale,
            limits_mib: self.pollution_limits_mib.clone(),
            strategies: pollution::strategies(),
            mitigation: !self.pollution_no_mitigation,
            seed: self.seed,
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("bench-harness")),
            dir: self.real_faults_dir.clone(),
            skip,
        }
    }

    /// The real-data replay configuration these options describe.
    pub fn real_config(&self) -> RealReplayConfig {
        RealReplayConfig {
            page_size: self.page_size,
            cache_pages: self.cache_pages,
            lookups_per_append: self.real_lookups_per_append,
            seed: self.seed,
            warm_section_bytes: self.warm_section_bytes,
        }
    }

    /// Checks option values.
    ///
    /// # Errors
    /// [`BenchError::Config`] describing the first invalid option.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |m: String| Err(BenchError::Config(m));
        if self.page_size < 8 || !self.page_size.is_power_of_two() {
            return bad(format!(
                "--page-size must be a power of two of at least 8 bytes, got {}",
                self.page_size
            ));
        }
        if self.index_bytes < 12 {
            return bad(format!(
                "--index-bytes must be at least 12, got {}",
                self.index_bytes
            ));
        }
        if self.lookups == 0 || self.lookups_per_round == 0 {
            return bad("--lookups and --lookups-per-round must be positive".to_string());
        }
        if self.lag_min > self.lag_max {
            return bad(format!(
                "--lag-min ({}) exceeds --lag-max ({})",
                self.lag_min, self.lag_max
            ));
        }
        if self.warm_section_bytes == 0 {
            return bad("--warm-section-bytes must be positive".to_string());
        }
        if self.report_sizes.iter().any(|&b| b < 12) || self.report_sizes.is_empty() {
            return bad(format!(
                "--report-sizes must list sizes of at least 12 bytes, got {:?}",
                self.report_sizes
            ));
        }
        if self.pollution_limits_mib.is_empty()
            || self
                .pollution_limits_mib
                .iter()
                .any(|&m| m == 0 || m > MAX_POLLUTION_LIMIT_MIB)
        {
            return bad(format!(
                "--pollution-limits-mib must list limits of 1 to {MAX_POLLUTION_LIMIT_MIB} MiB, got {:?}",
                self.pollution_limits_mib
            ));
        }
        if self.pollution_arm_ms == Some(0) {
            return bad("--pollution-arm-ms must be at least 1 ms".to_string());
        }
        if self.warm_sweep_lookups > 0 {
            self.warm_sweep_config().validate().map_err(|e| match e {
                BenchError::Config(m) => BenchError::Config(format!(
                    "--warm-sweep-sizes / --warm-sweep-segment-bytes: {m}"
                )),
                other => other,
            })?;
        }
        Ok(())
    }

    /// The data directory to replay: `--data-dir`, else the first existing default
    /// candidate; `None` when no default exists.
    pub fn resolve_data_dir(&self) -> Option<PathBuf> {
        self.data_dir.clone().or_else(real_data::default_data_dir)
    }
}

/// Progress of a phase: called with the phase name, work done and total work (units are
/// entries appended for the synthetic phases and files for the real-data phase).
pub type ProgressFn<'a> = dyn FnMut(&str, u64, u64) + 'a;

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The KAFKA-6432 scenario.
    pub scenario: ScenarioResult,
    /// Synthetic replays (offset index, time index).
    pub synthetic: Vec<ReplayOutcome>,
    /// The real-data replay, unless skipped or no data directory was found.
    pub real: Option<RealDataOutcome>,
    /// Why the real-data replay did not run, if it did not.
    pub real_skipped: Option<String>,
    /// The real page-fault measurement, if it ran and found a directory that evicts.
    pub real_faults: Option<RealFaultOutcome>,
    /// Why there are no real page-fault figures, if there are none (text for stdout).
    pub real_faults_skipped: Option<String>,
    /// Lookup latency rows (empty when skipped).
    pub latency: Vec<LatencyRow>,
    /// The warm section sweep, unless skipped (`--warm-sweep-lookups 0`).
    pub warm_sweep: Option<WarmSweepOutcome>,
    /// Why the warm section sweep did not run, if it did not.
    pub warm_sweep_skipped: Option<String>,
    /// The memory-pressure workload, if asked for (--details, --report-dir); `skipped`
    /// says why when it was asked for but did not run.
    pub pollution: Option<PollutionOutcome>,
    /// Files written into --report-dir.
    pub report_files: Vec<PathBuf>,
}

impl RunOutcome {
    /// Every result row (scenario, synthetic, real, real faults, latency, warm sweep,
    /// memory pressure), for `--json`.
    pub fn rows(&self) -> Vec<ResultRow> {
        let mut rows = report::scenario_rows(&self.scenario);
        for o in &self.synthetic {
            rows.extend(report::synthetic_rows(o));
        }
        if let Some(r) = &self.real {
            rows.extend(report::real_rows(r));
        }
        if let Some(r) = &self.real_faults {
            rows.extend(report::real_fault_rows(r));
        }
        rows.extend(report::latency_rows(&self.latency));
        if let Some(w) = &self.warm_sweep {
            rows.extend(report::warm_sweep_rows(w));
        }
        if let Some(p) = &self.pollution {
            rows.extend(report::pollution_rows(p));
        }
        rows
    }

    /// The text printed on stdout: the summary, then the details with `--details`.
    pub fn render(&self, cli: &Cli) -> String {
        let mut out = self.render_summary(cli);
        if cli.details {
            out.push_str("\nDetails\n=======\n\n");
            out.push_str(&self.render_details(cli));
        }
        out
    }

    /// The summary for a newcomer (at most [`SUMMARY_MAX_LINES`] lines of at most
    /// [`SUMMARY_MAX_COLUMNS`] columns): what was compared, one verdict line per strategy
    /// on the hot-tail offset index (distinct pages per lookup, page-ins from the real page
    /// cache, ns per lookup and its ratio to the in-memory limit), the uniform-lookup
    /// caveat, the warm section sweep's answer ([`warm_sweep::summary_sentence`]), and
    /// where the details are.
    pub fn render_summary(&self, cli: &Cli) -> String {
        use std::fmt::Write as _;
        let cfg = cli.replay_config();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "bench-harness: four index search strategies on Kafka's offset index (.index)"
        );
        let _ = writeln!(
            out,
            "Compared: binary search (Kafka before 2.1), warm/cold (Kafka since 2.1, KAFKA-6432, {}-byte",
            cfg.warm_section_bytes
        );
        let _ = writeln!(
            out,
            "warm section), a page directory (a key per {}-byte page and per cache line) and the hybrid",
            cfg.page_size
        );
        let _ = writeln!(
            out,
            "(the default): warm/cold's warm section, its cold part through the page directory."
        );
        let offset = self.synthetic.iter().find(|o| o.kind == IndexKind::Offset);
        if let Some(o) = offset {
            let _ = writeln!(
                out,
                "Workload: a producer fills a {} MiB index ({} entries) while {} in-sync consumers",
                o.index_bytes >> 20,
                o.entries,
                cfg.workload.consumers
            );
            let _ = writeln!(
                out,
                "look up the tail ({} hot-tail lookups, seed {}).",
                cfg.lookups, cfg.seed
            );
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "strategy        pages/lookup  page-ins  ns/lookup  vs in-memory  verdict"
        );
        let hot = offset.and_then(|o| o.workload(Workload::HotTail));
        let uniform = offset.and_then(|o| o.workload(Workload::Uniform));
        let binary_pages = hot
            .and_then(|w| w.strategies.first())
            .map(|s| s.mean_pages());
        let latency = |name: &str| {
            self.latency.iter().find(|r| {
                r.kind == IndexKind::Offset
                    && r.workload == Workload::HotTail.name()
                    && r.strategy == name
            })
        };
        for s in hot.map(|w| w.strategies.as_slice()).unwrap_or_default() {
            let name = s.strategy.name();
            let page_ins = self
                .real_faults
                .as_ref()
                .and_then(|r| {
                    r.get(
                        IndexKind::Offset,
                        real_faults::Phase::Growing,
                        Readahead::Off,
                        name,
                    )
                })
                .map_or("n/a".to_string(), |r| r.page_ins.to_string());
            let (ns, ratio) = latency(name).map_or(("n/a".to_string(), "n/a".to_string()), |r| {
                (
                    format!("{:.1}", r.ns_per_lookup),
                    format!("{:.2}x", r.ratio_to_in_memory),
                )
            });
            let verdict = match (s.strategy, binary_pages) {
                (SearchStrategy::Binary, _) => "the baseline".to_string(),
                (_, Some(b)) if s.mean_pages() > 0.0 => {
                    format!("{:.1}x fewer pages than binary", b / s.mean_pages())
                }
                _ => "-".to_string(),
            };
            let _ = writeln!(
                out,
                "{name:<15} {:>12}  {page_ins:>8}  {ns:>9}  {ratio:>12}  {verdict}",
                format!("{:.2}", s.mean_pages())
            );
        }
        let limit = self.latency.iter().find(|r| {
            r.kind == IndexKind::Offset
                && r.workload == Workload::HotTail.name()
                && r.strategy == latency::IN_MEMORY
        });
        let _ = writeln!(
            out,
            "{:<15} {:>12}  {:>8}  {:>9}  {:>12}  partition_point on a Vec<i64>",
            "in-memory",
            "-",
            "-",
            limit.map_or("n/a".to_string(), |r| format!("{:.1}", r.ns_per_lookup)),
            "1.00x"
        );
        out.push('\n');
        let _ = writeln!(
            out,
            "pages/lookup: distinct {}-byte index pages a lookup reads (mean). page-ins: pages read",
            cfg.page_size
        );
        let _ = writeln!(
            out,
            "back from disk by {} hot-tail lookups while the evicted index grows from half to full",
            cli.real_fault_lookups
        );
        let _ = writeln!(
            out,
            "(readahead off; n/a: see --details). ns: search on resident pages, median of {LATENCY_REPEATS}"
        );
        let _ = writeln!(
            out,
            "interleaved rounds; vs in-memory: median of the per-round ratios."
        );
        if let Some(u) = uniform {
            let pages: Vec<String> = u
                .strategies
                .iter()
                .map(|s| format!("{} {:.2}", s.strategy.name(), s.mean_pages()))
                .collect();
            let text = format!(
                "Uniform random lookups miss the warm section; their pages/lookup: {}.",
                pages.join(", ")
            );
            for line in wrap(&text, SUMMARY_MAX_COLUMNS) {
                let _ = writeln!(out, "{line}");
            }
        }
        if let Some(text) = self
            .warm_sweep
            .as_ref()
            .and_then(warm_sweep::summary_sentence)
        {
            for line in wrap(&text, SUMMARY_MAX_COLUMNS) {
                let _ = writeln!(out, "{line}");
            }
        }
        out.push('\n');
        match &cli.report_dir {
            Some(dir) => {
                let _ = writeln!(out, "Full report: {}.", dir.join("report.md").display());
            }
            None => {
                let _ = writeln!(
                    out,
                    "All tables (time index, other workloads, real files, page-fault runs): --details."
                );
                let _ = writeln!(
                    out,
                    "Full report with plots: cargo xtask bench (bench-report/report.md in the target dir)."
                );
            }
        }
        out
    }

    /// Every table of the run (what `--details` prints after the summary).
    pub fn render_details(&self, cli: &Cli) -> String {
        let mut out = report::render_scenario(&self.scenario);
        out.push('\n');
        let cfg = cli.replay_config();
        if !self.synthetic.is_empty() {
            out.push_str(&format!(
                "2. Synthetic replay: a producer fills {}-byte indexes (batches of 1-{} records, index.interval.bytes {});\n",
                cfg.index_bytes, cfg.producer.max_records_per_batch, cfg.producer.index_interval_bytes
            ));
            for s in &self.synthetic {
                let rounds = (cfg.lookups / cfg.lookups_per_round.max(1)).max(1);
                out.push_str(&format!(
                    "   {} index: {} of {} entries ({} pages), {} offsets, {:.2} GiB of log; ~{} appends between rounds of {} lookups\n",
                    s.kind.name(),
                    s.entries,
                    s.capacity,
                    (s.entries * s.kind.entry_size()).div_ceil(cfg.page_size.max(1)),
                    s.offsets,
                    s.segment_bytes as f64 / (1u64 << 30) as f64,
                    (s.capacity / rounds).max(1),
                    cfg.lookups_per_round,
                ));
                if s.segment_full {
                    out.push_str(&format!(
                        "   note: the {} index stopped at {} of {} entries: the segment reached its 2 GiB limit first.\n",
                        s.kind.name(),
                        s.entries,
                        s.capacity
                    ));
                }
            }
            out.push_str(&format!(
                "   Workloads (seed {}): hot-tail = {} in-sync consumers 0-{} offsets behind the log end; lagging = one\n   \
                 consumer {}-{} offsets behind; uniform = random keys over the index; mixed = 80% hot-tail,\n   \
                 10% lagging, 10% uniform. Time-index targets are the timestamps of those offsets.\n",
                cfg.seed,
                cfg.workload.consumers,
                cfg.workload.hot_lag_offsets,
                cfg.workload.lag_min_offsets,
                cfg.workload.lag_max_offsets,
            ));
        }
        out.push_str(&report::render_synthetic(
            &self.synthetic,
            cfg.cache_pages,
            cfg.warm_section_bytes,
        ));
        out.push('\n');
        match (&self.real, &self.real_skipped) {
            (Some(r), _) => {
                out.push_str(&format!(
                    "3. Real index files: entries appended one by one into a fresh index, {} hot-tail lookups after each append\n   \
                     (targets among the last {} keys, between entries or up to {} past the last).\n",
                    cli.real_lookups_per_append,
                    real_data::HOT_ENTRIES,
                    real_data::PAST_END_KEYS
                ));
                out.push_str(&report::render_real(r, cli.page_size));
            }
            (None, Some(why)) => out.push_str(&format!("3. Real index files: skipped ({why}).\n")),
            (None, None) => {}
        }
        out.push('\n');
        match (&self.real_faults, &self.real_faults_skipped) {
            (Some(r), _) => {
                out.push_str(&format!(
                    "4. Real page faults: {}-byte indexes evicted from the page cache, then hot-tail lookups ({} in the static\n   \
                     phase on the full index; {} in the growing phase while the index fills from half to full), fresh\n   \
                     mapping and eviction before every run.\n",
                    r.index_bytes,
                    real_faults::STATIC_LOOKUPS,
                    cli.real_fault_lookups
                ));
                out.push_str(&report::render_real_faults(r));
            }
            (None, Some(why)) => {
                out.push_str("4. Real page faults: not measured.\n");
                out.push_str(why);
            }
            (None, None) => {}
        }
        if !self.latency.is_empty() {
            out.push('\n');
            out.push_str(&format!(
                "5. Lookup latency on full {}-byte indexes vs the in-memory limit\n",
                cli.index_bytes
            ));
            out.push_str(&report::render_latency(&self.latency, LATENCY_REPEATS));
        }
        match (&self.warm_sweep, &self.warm_sweep_skipped) {
            (Some(w), _) => {
                out.push('\n');
                out.push_str(&report::render_warm_sweep(w));
            }
            (None, Some(why)) => {
                out.push_str(&format!("\n6. Warm section sweep: skipped ({why}).\n"));
            }
            (None, None) => {}
        }
        if let Some(p) = &self.pollution {
            out.push('\n');
            out.push_str(&report::render_pollution(p));
        }
        out
    }
}

/// Splits `text` at spaces into lines of at most `width` columns (a longer word stays
/// whole). A byte unit (`B`, `KiB`, `MiB`, `GiB`, also followed by punctuation, as in
/// `MiB,` or `MiB-behind`) stays on the line of the number before it.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let unit = ["B", "KiB", "MiB", "GiB"].iter().any(|u| {
            word.strip_prefix(u)
                .is_some_and(|rest| rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
        });
        match words.last_mut() {
            Some(last) if unit => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    let mut lines = vec![String::new()];
    for word in words {
        let last = lines.last_mut().expect("at least one line");
        if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > width {
            lines.push(word);
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(&word);
        }
    }
    lines
}

/// Runs everything `cli` asks for, creating scratch index files in a temporary directory.
///
/// # Errors
/// Invalid options, I/O errors, index errors, or a `--data-dir` that does not exist.
pub fn run(cli: &Cli, progress: &mut ProgressFn<'_>) -> Result<RunOutcome, BenchError> {
    cli.validate()?;
    let scratch = tempfile::tempdir().map_err(|e| BenchError::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    progress("KAFKA-6432 scenario", 0, 1);
    let scenario = scenario::run_kafka_6432(scratch.path(), cli.page_size, cli.warm_section_bytes)?;
    progress("KAFKA-6432 scenario", 1, 1);
    let cfg = cli.replay_config();
    let mut synthetic = Vec::new();
    for kind in [IndexKind::Offset, IndexKind::Time] {
        let phase = format!("{} index replay", kind.name());
        let o = replay::replay_synthetic(kind, &cfg, scratch.path(), &mut |d, t| {
            progress(&phase, d, t)
        })?;
        synthetic.push(o);
    }
    let (real, real_skipped) = if cli.skip_real {
        (None, Some("--skip-real".to_string()))
    } else {
        match cli.resolve_data_dir() {
            Some(dir) => {
                let o = real_data::replay_dir(&dir, &cli.real_config(), &mut |d, t| {
                    progress("real index files", d, t)
                })?;
                (Some(o), None)
            }
            None => {
                let tried: Vec<String> = real_data::default_data_dir_candidates()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                (
                    None,
                    Some(format!(
                        "no data directory found; tried {}",
                        tried.join(", ")
                    )),
                )
            }
        }
    };
    let (real_faults, real_faults_skipped) = if cli.skip_real_faults {
        (None, Some("   skipped (--skip-real-faults).\n".to_string()))
    } else {
        match real_faults::measure(&cli.real_fault_config(cli.index_bytes), &mut |d, t| {
            progress("real page faults", d, t)
        })? {
            Ok(o) => (Some(o), None),
            Err(rejected) => (None, Some(report::render_real_faults_rejected(&rejected))),
        }
    };
    let latency = if cli.latency_lookups == 0 {
        Vec::new()
    } else {
        progress("latency", 0, 1);
        let rows = latency::measure(&cli.latency_config(cli.index_bytes), scratch.path())?;
        progress("latency", 1, 1);
        rows
    };
    let (warm_sweep, warm_sweep_skipped) = if cli.warm_sweep_lookups == 0 {
        (None, Some("--warm-sweep-lookups 0".to_string()))
    } else {
        let o = warm_sweep::run(&cli.warm_sweep_config(), scratch.path(), &mut |d, t| {
            progress("warm section sweep", d, t)
        })?;
        (Some(o), None)
    };
    // Only where asked for (the default main job, and CI's run of it, do not pay for it).
    let pollution = if cli.details || cli.report_dir.is_some() || cli.pollution_only {
        Some(pollution::run(
            &cli.pollution_config(),
            &mut |phase, d, t| progress(phase, d, t),
        )?)
    } else {
        None
    };
    let mut outcome = RunOutcome {
        scenario,
        synthetic,
        real,
        real_skipped,
        real_faults,
        real_faults_skipped,
        latency,
        warm_sweep,
        warm_sweep_skipped,
        pollution,
        report_files: Vec::new(),
    };
    if let Some(dir) = &cli.report_dir {
        outcome.report_files = bench_report::write_report(cli, &outcome, dir, progress)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_keeps_byte_units_with_their_numbers() {
        assert_eq!(
            wrap("spans 4.4 MiB of log, 2-8 MiB-behind lookups", 12),
            ["spans", "4.4 MiB of", "log,", "2-8 MiB-behind", "lookups"]
        );
        // Only whole units are glued.
        assert_eq!(wrap("8 Bytes", 3), ["8", "Bytes"]);
        assert_eq!(wrap("1 GiB, 2 KiB.", 5), ["1 GiB,", "2 KiB."]);
    }
}
