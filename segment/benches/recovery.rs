//! Criterion benchmark of log recovery time (`cargo bench -p segment --bench recovery`),
//! in the spirit of raft-engine's recovery benches: [`Log::open`] after an **unclean
//! shutdown** with N MiB of unflushed data, i.e. the loader plus Kafka's `recoverLog`
//! over every segment (read, CRC validation of every batch, offset/time/transaction index
//! rebuild, trim, flush, recovery-point checkpoint). Throughput is in bytes of `.log`
//! data recovered.
//!
//! Data: uncompressed magic v2 batches of 10 records with 100-byte values (≈ 1.2 KiB per
//! batch) in 16 MiB segments, default `index.interval.bytes` (4096) and
//! `segment.index.bytes` (10 MiB). Sizes: 16 and 64 MiB (`RECOVERY_BENCH_MIB=8,32` to
//! change). Before every timed open the directory is put back in its crashed state
//! (no clean-shutdown marker, recovery point 0), so each iteration recovers everything.
//! `log-open-clean/<size>` opens the same log after a clean shutdown, for scale.
//! Files live in `/dev/shm` when it exists (else the system temp dir): the `.log` data is
//! in the page cache, so the numbers are the CPU cost of recovery plus tmpfs "fsyncs", not
//! disk costs.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use segment::record::BatchBuilder;
use segment::{Clock, Log, LogConfig, MockTime};

const SEGMENT_BYTES: u64 = 16 << 20;

fn sizes_mib() -> Vec<u64> {
    std::env::var("RECOVERY_BENCH_MIB")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| vec![16, 64])
}

fn temp_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new()
            .prefix("seg-recovery-bench")
            .tempdir_in(shm)
        {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: SEGMENT_BYTES,
        retention_ms: -1,
        ..LogConfig::default()
    }
}

fn clock() -> Clock {
    Arc::new(MockTime::new(1_700_000_000_000))
}

/// Writes `mib` MiB of batches without flushing and "crashes" (drops the log without
/// closing it). Returns the bytes written.
fn build_crashed_log(dir: &Path, mib: u64) -> u64 {
    let log = Log::options()
        .clock(clock())
        .open(dir, config())
        .expect("open");
    let value = [b'v'; 100];
    let mut offset = 0i64;
    let mut bytes = 0u64;
    while bytes < mib << 20 {
        let mut b = BatchBuilder::new(offset).partition_leader_epoch(0);
        for i in 0..10 {
            b = b.record(1_700_000_000_000 + offset + i, None, Some(&value));
        }
        let batch = b.build().expect("batch");
        log.append(&batch).expect("append");
        bytes += batch.len() as u64;
        offset += 10;
    }
    log.close_handlers();
    bytes
}

/// Puts the directory back in its crashed state: no marker, recovery point 0.
fn crash_state(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(segment::log::CLEAN_SHUTDOWN_FILE));
    std::fs::write(dir.join(segment::log::RECOVERY_POINT_FILE), "0\n0\n").expect("checkpoint");
}

fn recovery(c: &mut Criterion) {
    let mut g = c.benchmark_group("log-recovery");
    g.sample_size(10);
    for mib in sizes_mib() {
        let dir = temp_dir();
        let bytes = build_crashed_log(dir.path(), mib);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function(BenchmarkId::new("unclean-open", format!("{mib}MiB")), |b| {
            b.iter_batched(
                || crash_state(dir.path()),
                |()| {
                    let log = Log::options()
                        .clock(clock())
                        .open(dir.path(), config())
                        .expect("open");
                    assert_eq!(
                        log.stats().scanned_segments(),
                        log.segments().number_of_segments() as u64
                    );
                    black_box(log)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// The clean open of the same logs, for scale (no segment is scanned; no throughput).
fn clean_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("log-open-clean");
    g.sample_size(10);
    for mib in sizes_mib() {
        let dir = temp_dir();
        build_crashed_log(dir.path(), mib);
        g.bench_function(BenchmarkId::new("clean-open", format!("{mib}MiB")), |b| {
            b.iter_batched(
                || {
                    let log = Log::options()
                        .clock(clock())
                        .open(dir.path(), config())
                        .expect("open");
                    log.close().expect("close");
                },
                |()| {
                    let log = Log::options()
                        .clock(clock())
                        .open(dir.path(), config())
                        .expect("open");
                    assert_eq!(log.stats().scanned_segments(), 0);
                    black_box(log)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, recovery, clean_open);
criterion_main!(benches);
