//! Seeded workloads: appends (plain, idempotent and transactional producers), commits
//! and aborts, flushes, rolls, `truncate_to`, `delete_records`, retention, clean closes
//! and reopens, all through a [`Recorder`]. The [`Oracle`] keeps what each call did and
//! where in the trace it started and ended.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::record::{BatchBuilder, ControlRecordType};
use segment::time::Clock;
use segment::{Log, LogConfig, MockTime};

use super::trace::{Op, Recorder};

/// One batch whose append returned `Ok`.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Base offset.
    pub base: i64,
    /// Last offset.
    pub last: i64,
    /// The exact bytes appended.
    pub bytes: Vec<u8>,
    /// Producer id of a transactional batch (data or marker); `None` otherwise.
    pub txn_pid: Option<i64>,
    /// `Some(abort?)` for a transaction marker.
    pub marker: Option<bool>,
    /// Trace length when the append started / returned.
    pub start: usize,
    /// See `start`.
    pub end: usize,
}

/// A call that changes durability or the offsets: its trace span.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    /// Trace length when the call started.
    pub start: usize,
    /// Trace length when it returned `Ok`.
    pub end: usize,
}

/// What the workload did.
#[derive(Debug, Default)]
pub struct Oracle {
    /// Every successful append, in order.
    pub batches: Vec<Batch>,
    /// Every `flush()` (and clean `close()`) that returned `Ok`.
    pub flushes: Vec<Span>,
    /// `truncate_to(target)` calls that returned `Ok`.
    pub truncations: Vec<(i64, Span)>,
    /// The log start offset after each call that may move it, with the call's start.
    pub log_starts: Vec<(usize, i64)>,
    /// The recorded trace.
    pub ops: Vec<Op>,
    /// The configuration the log was opened with.
    pub config: Option<LogConfig>,
    /// Calls that failed (not a violation by themselves; reported for information).
    pub failed_calls: Vec<String>,
}

/// The log configuration of workload `seed`: tiny segments and indexes so that a short
/// workload rolls, fills indexes and preallocates often.
pub fn config(rng: &mut StdRng) -> LogConfig {
    LogConfig {
        segment_bytes: rng.gen_range(1500..=6000),
        max_index_size: [96, 240, 480][rng.gen_range(0..3)],
        index_interval_bytes: rng.gen_range(0..=600),
        preallocate: rng.gen_bool(0.5),
        retention_bytes: if rng.gen_bool(0.5) { 6000 } else { -1 },
        retention_ms: -1,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

/// Opens the log at `dir` through `fs`.
pub fn open(
    dir: &Path,
    config: &LogConfig,
    clock: Clock,
    fs: Arc<dyn segment::fs::FileSystem>,
) -> segment::Result<Log> {
    Log::options().clock(clock).fs(fs).open(dir, config.clone())
}

#[derive(Default)]
struct Producers {
    /// Next sequence per producer id.
    seq: BTreeMap<i64, i32>,
    /// Transactional producers with an open transaction.
    open_txn: std::collections::BTreeSet<i64>,
}

fn data_batch(rng: &mut StdRng, base: i64, pid: i64, seq: i32, txn: bool, now: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(rng.gen_range(0..3));
    if pid >= 0 {
        b = b.producer(pid, 0, seq).transactional(txn);
    }
    for i in 0..rng.gen_range(1..=4) {
        let len = rng.gen_range(1..=400);
        let v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        b = b.record(now + i, None, Some(&v));
    }
    b.build().expect("valid batch")
}

fn marker(base: i64, pid: i64, abort: bool, now: i64) -> Vec<u8> {
    let t = if abort {
        ControlRecordType::Abort
    } else {
        ControlRecordType::Commit
    };
    BatchBuilder::new(base)
        .producer(pid, 0, -1)
        .build_end_txn_marker(t, 1, now)
        .expect("valid marker")
}

/// Runs workload `seed` of `steps` calls in `dir` (which must be empty) and returns its
/// oracle.
pub fn run(dir: &Path, seed: u64, steps: usize) -> Oracle {
    let mut rng = StdRng::seed_from_u64(seed);
    let config = config(&mut rng);
    let rec = Arc::new(Recorder::new(dir, []));
    let time = MockTime::new(1_000_000);
    let clock: Clock = Arc::new(time.clone());
    let mut oracle = Oracle {
        config: Some(config.clone()),
        ..Oracle::default()
    };
    let mut log = open(dir, &config, clock.clone(), rec.clone()).expect("open an empty log");
    let mut prod = Producers::default();
    for _ in 0..steps {
        time.sleep(rng.gen_range(1..50));
        let now = clock.milliseconds();
        let start = rec.len();
        let leo = log.log_end_offset();
        let roll: u32 = rng.gen_range(0..100);
        let what = match roll {
            0..=44 => "append",
            45..=59 => "txn",
            60..=71 => "flush",
            72..=76 => "roll",
            77..=81 => "truncate",
            82..=85 => "delete_records",
            86..=89 => "retention",
            _ => "reopen",
        };
        // Calls that move the log start or remove data run only with no open
        // transaction, so that the transaction model of the checker stays simple.
        let quiet = prod.open_txn.is_empty();
        let res: Result<(), String> = match what {
            "append" | "txn" => {
                let (bytes, pid, txn_pid, mark) = if what == "txn" {
                    let pid = 10 + rng.gen_range(0..3);
                    if prod.open_txn.contains(&pid) && rng.gen_bool(0.4) {
                        let abort = rng.gen_bool(0.5);
                        (marker(leo, pid, abort, now), pid, Some(pid), Some(abort))
                    } else {
                        let seq = *prod.seq.get(&pid).unwrap_or(&0);
                        let b = data_batch(&mut rng, leo, pid, seq, true, now);
                        (b, pid, Some(pid), None)
                    }
                } else {
                    let pid = if rng.gen_bool(0.5) {
                        -1
                    } else {
                        rng.gen_range(1..4)
                    };
                    let seq = *prod.seq.get(&pid).unwrap_or(&0);
                    (
                        data_batch(&mut rng, leo, pid, seq, false, now),
                        pid,
                        None,
                        None,
                    )
                };
                match log.append(&bytes) {
                    Ok(info) => {
                        match (txn_pid, mark) {
                            (Some(p), Some(_)) => {
                                prod.open_txn.remove(&p);
                            }
                            (Some(p), None) => {
                                prod.open_txn.insert(p);
                            }
                            _ => {}
                        }
                        if pid >= 0 && mark.is_none() {
                            let n = (info.last_offset - info.first_offset + 1) as i32;
                            *prod.seq.entry(pid).or_insert(0) += n;
                        }
                        oracle.batches.push(Batch {
                            base: info.first_offset,
                            last: info.last_offset,
                            bytes,
                            txn_pid,
                            marker: mark,
                            start,
                            end: rec.len(),
                        });
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            "flush" => log.flush().map_err(|e| e.to_string()).map(|()| {
                oracle.flushes.push(Span {
                    start,
                    end: rec.len(),
                })
            }),
            "roll" => log.roll(None).map(|_| ()).map_err(|e| e.to_string()),
            "truncate" if quiet && leo > log.log_start_offset() => {
                let target = rng.gen_range(log.log_start_offset()..=leo);
                log.truncate_to(target).map_err(|e| e.to_string()).map(|_| {
                    oracle.truncations.push((
                        target,
                        Span {
                            start,
                            end: rec.len(),
                        },
                    ));
                    oracle.log_starts.push((start, log.log_start_offset()));
                })
            }
            "delete_records" if quiet && leo > log.log_start_offset() => {
                let target = rng.gen_range(log.log_start_offset()..=leo);
                log.delete_records(target)
                    .map_err(|e| e.to_string())
                    .map(|ls| oracle.log_starts.push((start, ls)))
            }
            "retention" if quiet => log
                .delete_old_segments()
                .map_err(|e| e.to_string())
                .map(|_| oracle.log_starts.push((start, log.log_start_offset()))),
            "reopen" => {
                let clean = rng.gen_bool(0.7);
                let closed = if clean {
                    log.close().map_err(|e| e.to_string()).map(|()| {
                        oracle.flushes.push(Span {
                            start,
                            end: rec.len(),
                        })
                    })
                } else {
                    log.close_handlers();
                    Ok(())
                };
                // Open transactions stay open across a reopen (the producer state is
                // recovered), so nothing changes for the producers.
                log = match open(dir, &config, clock.clone(), rec.clone()) {
                    Ok(l) => l,
                    Err(e) => {
                        oracle.failed_calls.push(format!("reopen: {e}"));
                        oracle.ops = rec.ops();
                        return oracle;
                    }
                };
                closed
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            oracle.failed_calls.push(format!("{what}: {e}"));
        }
    }
    // End with a clean close: the marker states are part of every trace.
    let start = rec.len();
    match log.close() {
        Ok(()) => oracle.flushes.push(Span {
            start,
            end: rec.len(),
        }),
        Err(e) => oracle.failed_calls.push(format!("final close: {e}")),
    }
    oracle.ops = rec.ops();
    oracle
}
