//! Setup shared by the integration tests: the small main job they run.

// Every test crate includes this module and uses only some of it.
#![allow(dead_code)]

use bench_harness::Cli;
use clap::Parser;

/// Options of a small warm section sweep: 2000 lookups per point while a 128 MiB segment
/// grows from half full to full.
pub const SMALL_WARM_SWEEP: [&str; 4] = [
    "--warm-sweep-lookups",
    "2000",
    "--warm-sweep-segment-bytes",
    "134217728",
];

/// The small main job of the tests: 64 KiB indexes, 2000 lookups per workload, no real
/// index files, no memory-pressure workload (`tests/pollution.rs` runs it at its small
/// scale), no progress output, and then `extra`.
pub fn small_cli(extra: &[&str]) -> Cli {
    let mut args = vec![
        "bench-harness",
        "--index-bytes",
        "65536",
        "--lookups",
        "2000",
        "--skip-real",
        "--skip-pollution",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    Cli::parse_from(args)
}
