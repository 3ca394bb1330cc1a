//! `dump-log doctor DIR`: the command line of `segment::dump::doctor`.
//!
//! Exit status: 0 nothing for the broker to do; 1 warnings (the broker will run recovery,
//! rebuild an index, complete a swap, or trust a file that lies); 2 errors (the broker will
//! truncate or delete data or refuse a partition), a usage error, or an unreadable
//! directory or standard output; 141 standard output's reader went away.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use clap::Parser;
use segment::dump::doctor::{self, DoctorOptions, Throughput, DEFAULT_THROUGHPUT_MBPS};
use segment::dump::text;

use super::{operational_error, parse_args, Out};

/// The progress line is shown for log directories of at least this many partitions.
const PROGRESS_MIN_PARTITIONS: usize = 8;

#[derive(Parser, Debug)]
#[command(
    name = "dump-log doctor",
    about = "Pre-flight check of a Kafka log directory or partition directory: what a Kafka 4.4 broker will find and do when it starts",
    long_about = "Pre-flight check of a Kafka log directory (its partitions, the clean-shutdown marker and the \
        recovery-point, log-start-offset and replication-offset checkpoints at its root) or of one \
        partition directory. Reads only; takes no lock.\n\n\
        Per partition: zero-filled or torn .log tails, untrimmed or never-written indexes, indexes that \
        disagree with their logs, leftover .swap/.cleaned/.deleted/.tmp files and what the loader does \
        with them, corrupt or too-new producer snapshots and leader-epoch checkpoints, and the segments \
        the broker will rescan, with the predicted seconds at this library's recovery throughput \
        (measured on this machine unless --no-calibrate or --throughput-mbps).\n\n\
        Exit status: 0 nothing to do; 1 warnings (among them: the broker will run recovery); 2 errors \
        (the broker will truncate or delete data or refuse a partition), bad usage, or an unreadable \
        directory; 141 standard output's reader went away."
)]
struct DoctorCli {
    /// A log directory (holding partition directories) or one partition directory.
    dir: PathBuf,

    /// Print one JSON object (the report, with "type": "doctor" and "exit_code"; on a
    /// usage or path error, {"type": "error", "exit_code": 2, "error": "..."}).
    #[arg(long)]
    json: bool,

    /// Do not measure the recovery throughput; use --throughput-mbps or 500 MB/s.
    #[arg(long)]
    no_calibrate: bool,

    /// The recovery throughput to predict with, in MB/s (10^6 bytes); no calibration.
    #[arg(long, value_name = "MB_PER_S")]
    throughput_mbps: Option<f64>,

    /// With --no-calibrate or --throughput-mbps: milliseconds added per recovered segment
    /// (the size-independent cost calibration measures; default 0).
    #[arg(long, value_name = "MS")]
    segment_overhead_ms: Option<f64>,

    /// With --no-calibrate or --throughput-mbps: milliseconds added per partition that
    /// recovers a segment (default 0).
    #[arg(long, value_name = "MS")]
    partition_overhead_ms: Option<f64>,

    /// Size of the temporary segment the calibration recovers (1 to 4096 MiB).
    #[arg(
        long,
        value_name = "MIB",
        default_value_t = 32,
        value_parser = clap::value_parser!(u64).range(1..=4096),
        conflicts_with_all = ["no_calibrate", "throughput_mbps"]
    )]
    calibrate_mib: u64,

    /// Also read every .log in full with recovery's rules and verify every index entry
    /// against it (as --verify-index-only does): finds corrupt batches and wrong entries
    /// inside segments that the loader's cheap end checks pass. Reads every byte.
    #[arg(long)]
    deep: bool,

    /// Also open a temporary copy of each partition with this library's loader and print the
    /// measured time beside the prediction (copies the partitions to the temp directory).
    #[arg(long)]
    measure: bool,

    /// Never show the progress line (shown on a terminal's stderr for log directories of
    /// 8 partitions or more).
    #[arg(long)]
    no_progress: bool,
}

/// Calibrates, saying so on a terminal's stderr (it takes a tenth of a second or more).
fn calibrate(cli: &DoctorCli) -> Result<Throughput, String> {
    if !cli.no_progress && io::stderr().is_terminal() {
        eprint!("doctor: calibrating the recovery throughput\r");
    }
    doctor::calibrate(cli.calibrate_mib)
}

/// Runs `dump-log doctor` (the arguments after the binary's name) and returns the exit code.
pub(super) fn main(mut out: Out) -> i32 {
    let cli: DoctorCli = match parse_args(std::env::args_os().skip(1).collect(), &mut out) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let json = cli.json;
    let fail = |out: &mut Out, msg: &str| operational_error(out, json, "dump-log doctor", msg);
    let mut overheads = [0.0f64; 2];
    for (slot, (flag, given)) in overheads.iter_mut().zip([
        ("--segment-overhead-ms", cli.segment_overhead_ms),
        ("--partition-overhead-ms", cli.partition_overhead_ms),
    ]) {
        let Some(ms) = given else { continue };
        if !(ms.is_finite() && ms >= 0.0) {
            return fail(&mut out, &format!("{flag} must be a number >= 0"));
        }
        if !cli.no_calibrate && cli.throughput_mbps.is_none() {
            return fail(
                &mut out,
                &format!(
                    "{flag} needs --no-calibrate or --throughput-mbps (calibration measures it)"
                ),
            );
        }
        *slot = ms / 1e3;
    }
    let [overhead_s, partition_s] = overheads;
    let throughput = match cli.throughput_mbps {
        Some(v) if !(v.is_finite() && v >= 0.001) => {
            return fail(
                &mut out,
                "--throughput-mbps must be a number of at least 0.001 (1 KB/s)",
            );
        }
        Some(v) => Throughput::Given {
            mb_per_s: v,
            segment_overhead_s: overhead_s,
            partition_overhead_s: partition_s,
        },
        None if cli.no_calibrate => Throughput::Given {
            mb_per_s: DEFAULT_THROUGHPUT_MBPS,
            segment_overhead_s: overhead_s,
            partition_overhead_s: partition_s,
        },
        None => match calibrate(&cli) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "dump-log doctor: calibration failed ({}); predicting with {DEFAULT_THROUGHPUT_MBPS} MB/s",
                    text::escape(&e)
                );
                Throughput::Given {
                    mb_per_s: DEFAULT_THROUGHPUT_MBPS,
                    segment_overhead_s: overhead_s,
                    partition_overhead_s: partition_s,
                }
            }
        },
    };
    let show = !cli.no_progress && io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize, name: &str| {
        // Only a directory of several partitions takes long enough to need it.
        if show && total >= PROGRESS_MIN_PARTITIONS {
            let mut e = io::stderr().lock();
            let _ = write!(
                e,
                "\rdoctor: {done}/{total} partitions, {}\x1b[K",
                text::escape(name)
            );
            let _ = e.flush();
        }
    };
    let report = doctor::examine(
        &cli.dir,
        &DoctorOptions {
            throughput,
            deep: cli.deep,
        },
        &mut progress,
    );
    if show {
        eprint!("\r\x1b[K");
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return fail(&mut out, &e),
    };
    let mut measured = Vec::new();
    if cli.measure {
        for p in &report.partitions {
            measured.push((p, doctor::measure_recovery(p)));
        }
    }
    if cli.json {
        let mut v = serde_json::to_value(&report).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("type".into(), "doctor".into());
            m.insert("exit_code".into(), report.exit_code().into());
            if cli.measure {
                let mut mm = serde_json::Map::new();
                for (p, r) in &measured {
                    let val = match r {
                        Ok(r) => serde_json::to_value(r).unwrap_or_default(),
                        Err(e) => serde_json::json!({ "error": e }),
                    };
                    mm.insert(p.name.clone(), val);
                }
                m.insert("measured".into(), mm.into());
            }
        }
        out.put(&text::json_inert(&v.to_string()));
        out.put("\n");
    } else {
        out.put(&doctor::render_text(&report));
        if !measured.is_empty() {
            out.put("\npredicted vs measured (Log::open of a temporary copy):\n");
            for (p, r) in &measured {
                let line = match r {
                    Ok(m) => format!(
                        "  {}: predicted {:.3} s for {} bytes in {} segment(s), {} bytes cut; measured {:.3} s, {} segment(s) recovered, {} bytes truncated, log end {}\n",
                        text::escape(&p.name),
                        p.predicted_seconds,
                        p.rescan_bytes,
                        p.recovered_segments.len(),
                        p.truncate_bytes,
                        m.seconds,
                        m.segments_recovered,
                        m.bytes_truncated,
                        m.log_end_offset
                    ),
                    Err(e) => format!(
                        "  {}: predicted {:.3} s; the copy did not open: {}\n",
                        text::escape(&p.name),
                        p.predicted_seconds,
                        text::escape(e)
                    ),
                };
                out.put(&line);
            }
        }
    }
    out.flush();
    report.exit_code()
}
