//! The text form of a [`DoctorReport`]: one table row per partition, then each
//! partition's findings, then the verdict.

use std::fmt::Write as _;

use super::{DataLoss, DoctorReport, Finding, Severity, Throughput};
use crate::dump::text::{escape, escape_path};

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn finding_line(out: &mut String, f: &Finding) {
    let file = f
        .file
        .as_deref()
        .map_or_else(String::new, |n| format!(" {}", escape(n)));
    let _ = writeln!(
        out,
        "  {:<7} {}{file}: {}",
        f.severity.as_str(),
        f.kind.name(),
        escape(&f.detail)
    );
}

/// Renders `report` as the text `dump-log doctor` prints (names escaped as the dump's are).
pub fn render_text(report: &DoctorReport) -> String {
    let mut out = String::new();
    let what = if report.log_dir {
        format!("log directory, {} partition(s)", report.partitions.len())
    } else {
        "partition directory".to_string()
    };
    let _ = writeln!(
        out,
        "dump-log doctor: {} ({what})",
        escape_path(&report.path)
    );
    match &report.throughput {
        Throughput::Calibrated {
            mb_per_s,
            bytes,
            seconds,
            segment_overhead_s,
            partition_overhead_s,
        } => {
            let _ = writeln!(
                out,
                "recovery throughput: {mb_per_s:.1} MB/s + {:.1} ms per recovered segment + {:.1} ms per recovering partition (calibrated: LogSegment::recover of {bytes} bytes took {seconds:.3} s; Log::open of 1 and 3 one-batch segments)",
                segment_overhead_s * 1e3,
                partition_overhead_s * 1e3
            );
        }
        Throughput::Given {
            mb_per_s,
            segment_overhead_s,
            partition_overhead_s,
        } => {
            let _ = writeln!(
                out,
                "recovery throughput: {mb_per_s:.1} MB/s + {:.1} ms per recovered segment + {:.1} ms per recovering partition (given)",
                segment_overhead_s * 1e3,
                partition_overhead_s * 1e3
            );
        }
    }
    for f in &report.findings {
        finding_line(&mut out, f);
    }
    let _ = writeln!(out);
    let width = report
        .partitions
        .iter()
        .map(|p| escape(&p.name).chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    let _ = writeln!(
        out,
        "{:<width$} {:>8} {:>12} {:>10} {:>10} {:>5} {:>4} {:>4} {:>4} {:>12} {:>9}",
        "partition",
        "segments",
        "bytes",
        "log end",
        "recov pt",
        "clean",
        "err",
        "warn",
        "info",
        "rescan bytes",
        "rescan s"
    );
    for p in &report.partitions {
        let count = |s: Severity| p.findings.iter().filter(|f| f.severity == s).count();
        let _ = writeln!(
            out,
            "{:<width$} {:>8} {:>12} {:>10} {:>10} {:>5} {:>4} {:>4} {:>4} {:>12} {:>9.3}",
            escape(&p.name),
            p.segments,
            p.bytes,
            opt(p.log_end_offset),
            opt(p.recovery_point),
            if p.clean_shutdown { "yes" } else { "no" },
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
            p.rescan_bytes,
            p.predicted_seconds
        );
    }
    if report.partitions.len() > 1 {
        let _ = writeln!(
            out,
            "{:<width$} {:>8} {:>12} {:>10} {:>10} {:>5} {:>4} {:>4} {:>4} {:>12} {:>9.3}",
            "total",
            report.partitions.iter().map(|p| p.segments).sum::<usize>(),
            report.partitions.iter().map(|p| p.bytes).sum::<u64>(),
            "",
            "",
            "",
            "",
            "",
            "",
            report.rescan_bytes(),
            report.predicted_seconds()
        );
    }
    for p in &report.partitions {
        if p.findings.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}:", escape(&p.name));
        for f in &p.findings {
            finding_line(&mut out, f);
        }
    }
    let unread: usize = report
        .partitions
        .iter()
        .map(|p| p.unread_recovered_segments.len())
        .sum();
    let unknown = format!(
        "the broker will recover, rebuild or complete files (whether acknowledged data is lost is unknown without --deep: recovery rescans {unread} segment(s) whose ends pass the loader's checks, and only a full read finds a corrupt batch inside one)"
    );
    let verdict = match report.severity() {
        Severity::Info => "nothing to do: the broker loads these partitions as they are",
        Severity::Warning if report.data_loss() == DataLoss::Unknown => unknown.as_str(),
        Severity::Warning => {
            "the broker will recover, rebuild or complete files (no acknowledged data lost)"
        }
        Severity::Error => {
            "acknowledged data is missing, or the broker will truncate or delete data, or refuse a partition"
        }
    };
    let _ = writeln!(out, "\nverdict: {verdict} (exit {})", report.exit_code());
    out
}
