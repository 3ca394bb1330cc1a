//! The throughput of the prediction, measured on this machine: a temporary segment of
//! generated batches is recovered with [`LogSegment::recover`], the code the loader runs
//! for every segment it rescans. And the check of a prediction: a temporary copy of a
//! partition opened with [`Log::open`].
//!
//! Both work in a fresh directory under [`std::env::temp_dir`] that they remove again;
//! the directory examined is never touched. The calibration reads its segment from the
//! page cache (it was just written), so it is the CPU-bound rate (framing, CRC-32C,
//! index rebuild); a broker restarting on a cold cache reads at most at the disk's rate.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::{PartitionReport, Throughput};
use crate::config::LogConfig;
use crate::log_file::LogFileMode;
use crate::producer::ProducerStateManager;
use crate::record::BatchBuilder;
use crate::segment::{LogSegment, SegmentOptions};

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let p = std::env::temp_dir().join(format!(
            "dump-log-doctor-{what}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Recovers a temporary segment of `mib` MiB (uncompressed v2 batches of 64 records of
/// 256-byte values, Kafka's `index.interval.bytes` 4096) and returns the throughput.
///
/// # Errors
/// A description of an I/O or recovery failure.
pub fn calibrate(mib: u64) -> Result<Throughput, String> {
    let tmp = TempDir::new("calibrate")?;
    let target = mib.max(1) << 20;
    let value = [0x5au8; 256];
    let mut bytes = Vec::with_capacity(usize::try_from(target).unwrap_or(0) + (64 << 10));
    let mut offset = 0i64;
    while (bytes.len() as u64) < target {
        let mut b = BatchBuilder::new(offset);
        for i in 0..64 {
            b = b.record(
                1_700_000_000_000 + offset + i,
                Some(b"calibration"),
                Some(&value),
            );
        }
        b.write_to(&mut bytes).map_err(|e| e.to_string())?;
        offset += 64;
    }
    let log = crate::names::log_file(&tmp.0, 0, "");
    std::fs::write(&log, &bytes).map_err(|e| format!("{}: {e}", log.display()))?;
    let config = LogConfig::default();
    let seg: LogSegment = LogSegment::open(
        &tmp.0,
        0,
        &config,
        SegmentOptions::existing().mode(LogFileMode::ReadWrite),
    )
    .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let truncated = seg
        .recover(&mut ProducerStateManager::new(), None)
        .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    if truncated != 0 {
        return Err(format!(
            "calibration segment lost {truncated} bytes in recovery"
        ));
    }
    drop(seg);
    let n = bytes.len() as u64;
    let (segment_overhead_s, partition_overhead_s) = overheads()?;
    Ok(Throughput::Calibrated {
        mb_per_s: n as f64 / seconds / 1e6,
        bytes: n,
        seconds,
        segment_overhead_s,
        partition_overhead_s,
    })
}

/// The median of three timed [`Log::open`](crate::Log::open)s of a partition of
/// `segments` one-batch segments, without a clean-shutdown marker (so every segment is
/// recovered).
fn open_time(segments: i64) -> Result<f64, String> {
    let mut times = Vec::new();
    for _ in 0..3 {
        let tmp = TempDir::new("overhead")?;
        for base in 0..segments {
            let mut batch = Vec::new();
            BatchBuilder::new(base)
                .record(1_700_000_000_000, Some(b"calibration"), Some(b"v"))
                .write_to(&mut batch)
                .map_err(|e| e.to_string())?;
            let log = crate::names::log_file(&tmp.0, base, "");
            std::fs::write(&log, &batch).map_err(|e| format!("{}: {e}", log.display()))?;
        }
        let start = Instant::now();
        let opened = crate::Log::open(&tmp.0, LogConfig::default()).map_err(|e| e.to_string())?;
        times.push(start.elapsed().as_secs_f64());
        drop(opened);
    }
    times.sort_by(f64::total_cmp);
    Ok(times.get(1).copied().unwrap_or(0.0))
}

/// `(per segment, per partition)` seconds of a recovering load besides the bytes: from
/// loads of one and of three tiny segments.
fn overheads() -> Result<(f64, f64), String> {
    let one = open_time(1)?;
    let three = open_time(3)?;
    let per_segment = ((three - one) / 2.0).max(0.0);
    Ok((per_segment, (one - per_segment).max(0.0)))
}

/// What opening a temporary copy of a partition with [`Log::open`](crate::Log::open) did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeasuredRecovery {
    /// Seconds `Log::open` took (the whole load: leftovers, checks, recovery, producer
    /// state).
    pub seconds: f64,
    /// Segments it recovered (`LogStats::segments_recovered`).
    pub segments_recovered: u64,
    /// Bytes it truncated (`LogStats::bytes_truncated`).
    pub bytes_truncated: u64,
    /// The log end offset after the load.
    pub log_end_offset: i64,
}

/// Copies the regular files of `report`'s partition directory into a temporary directory,
/// writes there the marker and checkpoints the report read (in this library's layout), and
/// times [`Log::open`](crate::Log::open) of the copy.
///
/// # Errors
/// A description of a copy or load failure.
pub fn measure_recovery(report: &PartitionReport) -> Result<MeasuredRecovery, String> {
    let tmp = TempDir::new("measure")?;
    copy_files(&report.dir, &tmp.0)?;
    let write = |name: &str, text: String| {
        let p = tmp.0.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    // The copy takes the checkpoints the report used, whatever layout they came from.
    for name in [
        crate::log::RECOVERY_POINT_FILE,
        crate::log::LOG_START_OFFSET_FILE,
        crate::log::CLEAN_SHUTDOWN_FILE,
    ] {
        let _ = std::fs::remove_file(tmp.0.join(name));
    }
    if let Some(rp) = report.recovery_point {
        write(crate::log::RECOVERY_POINT_FILE, format!("0\n{rp}\n"))?;
    }
    if let Some(ls) = report.log_start_offset {
        write(crate::log::LOG_START_OFFSET_FILE, format!("0\n{ls}\n"))?;
    }
    if report.clean_shutdown {
        write(crate::log::CLEAN_SHUTDOWN_FILE, String::new())?;
    }
    let start = Instant::now();
    let log = crate::Log::open(&tmp.0, LogConfig::default()).map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let stats = log.stats();
    let out = MeasuredRecovery {
        seconds,
        segments_recovered: stats
            .segments_recovered
            .load(std::sync::atomic::Ordering::Relaxed),
        bytes_truncated: stats
            .bytes_truncated
            .load(std::sync::atomic::Ordering::Relaxed),
        log_end_offset: log.log_end_offset(),
    };
    drop(log);
    Ok(out)
}

fn copy_files(from: &Path, to: &Path) -> Result<(), String> {
    let rd = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for e in rd {
        let e = e.map_err(|e| e.to_string())?;
        let p = e.path();
        if !p.is_file() || crate::names::file_name(&p) == ".lock" {
            continue;
        }
        let dest = to.join(e.file_name());
        std::fs::copy(&p, &dest).map_err(|er| format!("{}: {er}", p.display()))?;
        // On disk before the clock starts, as a broker's files are: otherwise the load's
        // fsyncs of the recovered segments would write the whole copy and be timed.
        std::fs::File::open(&dest)
            .and_then(|f| f.sync_all())
            .map_err(|er| format!("{}: {er}", dest.display()))?;
    }
    Ok(())
}
