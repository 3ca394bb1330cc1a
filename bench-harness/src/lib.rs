//! # bench-harness
//!
//! Replays Kafka index workloads against the real index crates (`index-offset`,
//! `index-time`) and compares, per lookup, the distinct pages touched by the textbook
//! binary search, Kafka's warm/cold search and the page directory
//! (`index_core::SearchStrategy`), the page faults each would cause in a simulated LRU
//! page cache, the pages each really brings into the page cache, and their latency.
//!
//! * [`scenario`]: KAFKA-6432, a 13-page offset index grown into a 14th page.
//! * [`producer`]: the producer and segment model (batches, Kafka's index-interval rule).
//! * [`workload`]: hot-tail, lagging, uniform and mixed lookup targets.
//! * [`lru`]: the simulated LRU page cache.
//! * [`replay`]: the replay engine (appends interleaved with lookups, answer checks).
//! * [`real_data`]: the same replay over real `.index`/`.timeindex` files.
//! * [`real_faults`]: real page-ins (`mincore`) and major faults on evicted index files.
//! * [`latency`]: ns per lookup against an in-memory `partition_point`.
//! * [`warm_sweep`]: "why 8192": warm section sizes against consumer lag in bytes of log.
//! * [`pollution`]: a lagging consumer's scan against in-sync consumers in a memory cgroup.
//! * [`report`]: result rows (JSON) and aligned text tables.
//! * [`bench_report`]: the `--report-dir` size sweep, Markdown report and SVG plots.
//! * [`cli`]: command-line options and the full run.
//!
//! All randomness comes from `StdRng`s seeded from one run seed, so runs are
//! reproducible.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::path::PathBuf;

pub mod bench_report;
pub mod cli;
pub mod latency;
pub mod lru;
pub mod pollution;
pub mod producer;
pub mod real_data;
pub mod real_faults;
pub mod replay;
pub mod report;
pub mod scenario;
pub mod warm_sweep;
pub mod workload;

pub use cli::{run, Cli, RunOutcome};
pub use replay::{replay_synthetic, IndexKind, ReplayConfig, ReplayOutcome};

/// Errors of the harness.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An error of the index crates.
    #[error(transparent)]
    Index(#[from] index_core::IndexError),
    /// An I/O error on a path.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The real-data directory does not exist.
    #[error("data directory {} does not exist (the real Kafka index fixtures are expected there)", .0.display())]
    MissingData(PathBuf),
    /// An invalid option.
    #[error("invalid configuration: {0}")]
    Config(String),
}
