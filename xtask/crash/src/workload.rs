//! Seeded workloads: appends (plain, idempotent and transactional producers), commits
//! and aborts, flushes, rolls, `truncate_to`, `delete_records`, retention, clean closes
//! and reopens, all through a [`Recorder`]. Appends go through the follower path
//! (`Log::append`, offsets chosen here) and the leader path (`Log::append_as_leader`
//! from a client or the coordinator: offsets, epochs and, with the topic's codec or
//! LogAppendTime, the stored bytes chosen by the log). The [`Oracle`] keeps what each call
//! did (for a leader append, the offsets it assigned and the bytes it stored, read back at
//! once) and where in the trace it started and ended. [`run_compact`] is a compacted
//! topic's workload, [`run_split`] a legacy split's, [`run_tiered`] a tiered log's
//! (uploads, `delete_local_through`, local retention).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::format::{scan, KafkaBatchFormat};
use segment::record::{BatchBuilder, CompressionType, ControlRecordType};
use segment::time::Clock;
use segment::{AppendOrigin, Log, LogConfig, MockTime, TimestampType, TopicCompression};

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
    /// Who appended it: `None` through the follower path, else the leader's origin.
    pub origin: Option<AppendOrigin>,
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
    /// Leader appends refused by Kafka's rules (a producer whose sequence or epoch the
    /// log no longer knows after a truncation or a crash-free reopen, as a real producer
    /// meets them; it then bumps its epoch). Not failures: reported for information.
    pub refused: Vec<String>,
    /// Leader retries answered as duplicates (nothing appended).
    pub duplicates: u64,
    /// A compacted-topic workload ([`run_compact`]): checked by key, not by batch bytes.
    pub compact: bool,
    /// `Log::clean` calls that returned `Ok`, and those that replaced segments.
    pub cleans: u64,
    /// See `cleans`.
    pub cleans_swapped: u64,
    /// A tiered workload ([`run_tiered`]): a log with `remote.storage.enable`, whose
    /// uploaded segments go locally (checked against the uploaded offsets).
    pub tiered: bool,
    /// The highest uploaded offset each call reported to the log (through
    /// `update_highest_offset_in_remote_storage` or `delete_local_through`), with the
    /// call's start: a deletion started before a cut may have used it.
    pub uploads: Vec<(usize, i64)>,
    /// The log start offset after each call that moved it and returned `Ok`, with the
    /// call's end: its checkpoint is durable from then on.
    pub log_starts_done: Vec<(usize, i64)>,
    /// `delete_local_through` and local-retention calls that returned `Ok`, and the
    /// segments they deleted.
    pub local_deletions: u64,
    /// See `local_deletions`.
    pub local_segments_deleted: u64,
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
        // The leader path: the producer's codec kept (in place), or, in one workload of
        // five, another stored (rebuilt); CreateTime or LogAppendTime (stamped, CRC
        // recomputed). Compressed batches cost the checker most of its time: most
        // workloads keep the producer's codec, and most producers do not compress.
        compression_type: match rng.gen_range(0..20) {
            0..=15 => TopicCompression::Producer,
            16 => TopicCompression::Uncompressed,
            _ => TopicCompression::ALL[2..][rng.gen_range(0..4)],
        },
        message_timestamp_type: if rng.gen_bool(0.25) {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        },
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
    /// Producer epoch per producer id (leader producers bump it after a refusal).
    epoch: BTreeMap<i64, i16>,
    /// Transactional producers with an open transaction.
    open_txn: std::collections::BTreeSet<i64>,
    /// The last batch each leader producer sent, with the offsets it got: a retry.
    last_sent: BTreeMap<i64, (Vec<u8>, i64, i64)>,
}

const CODECS: [CompressionType; 5] = CompressionType::ALL;

/// A producer's batch for the leader (base offset 0, no epoch: the log sets both), a
/// quarter of them compressed; keyed when `keyed` (as the coordinator writes).
fn produce_batch(
    rng: &mut StdRng,
    (pid, epoch, seq): (i64, i16, i32),
    txn: bool,
    keyed: bool,
    now: i64,
) -> Vec<u8> {
    // A quarter of the batches compressed, in each codec alike.
    let codec = if rng.gen_bool(0.25) {
        CODECS[rng.gen_range(1..CODECS.len())]
    } else {
        CompressionType::None
    };
    let mut b = BatchBuilder::new(0).compression(codec);
    if pid >= 0 {
        b = b.producer(pid, epoch, seq).transactional(txn);
    }
    for i in 0..rng.gen_range(1..=4) {
        let len = rng.gen_range(1..=400);
        let v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let key = keyed.then_some(&b"key"[..]);
        b = b.record(now + i, key, Some(&v));
    }
    b.build().expect("valid batch")
}

/// The batch the log stored at `base`, right after the leader append (the log chose its
/// offsets, epoch, and maybe its codec and timestamps): read from the segment's `.log`
/// with plain `std::fs`, outside the recorded seam, so that the check does not change the
/// trace (`Log::read` may load an index lazily, which the recorder captures).
fn stored_at(log: &Log, base: i64) -> Result<Vec<u8>, String> {
    let seg = log
        .segments()
        .floor_segment(base)
        .ok_or_else(|| format!("read back of {base}: no segment"))?;
    let path = seg.log_path();
    let file = std::fs::read(&path).map_err(|e| format!("read back of {base}: {e}"))?;
    for b in scan::<KafkaBatchFormat>(&file, 0) {
        let b = b.map_err(|e| format!("read back of {base}: {e}"))?;
        if b.info.base_offset == base {
            return Ok(b.bytes.to_vec());
        }
    }
    Err(format!("read back of {base}: not in {}", path.display()))
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

fn marker(base: i64, pid: i64, epoch: i16, abort: bool, now: i64) -> Vec<u8> {
    let t = if abort {
        ControlRecordType::Abort
    } else {
        ControlRecordType::Commit
    };
    BatchBuilder::new(base)
        .producer(pid, epoch, -1)
        .build_end_txn_marker(t, 1, now)
        .expect("valid marker")
}

/// What one append call is.
struct Planned {
    bytes: Vec<u8>,
    pid: i64,
    txn_pid: Option<i64>,
    marker: Option<bool>,
    origin: Option<AppendOrigin>,
    /// A retry of the producer's last batch: expected to be a duplicate.
    retry: bool,
}

/// Plans a follower (`leader` false) or leader append; `txn` for a transactional
/// producer's batch or marker. Follower producers are 1-3 (idempotent) and 10-12
/// (transactional); leader producers 31-33 and 21-23; the coordinator's own batches have
/// no producer id.
fn plan(
    rng: &mut StdRng,
    prod: &Producers,
    leo: i64,
    txn: bool,
    leader: bool,
    now: i64,
) -> Planned {
    let epoch_of = |pid: i64| *prod.epoch.get(&pid).unwrap_or(&0);
    let seq_of = |pid: i64| *prod.seq.get(&pid).unwrap_or(&0);
    if txn {
        let pid = if leader { 21 } else { 10 } + rng.gen_range(0..3);
        let epoch = epoch_of(pid);
        if prod.open_txn.contains(&pid) && rng.gen_bool(0.4) {
            let abort = rng.gen_bool(0.5);
            let (base, origin) = if leader {
                (0, Some(AppendOrigin::Coordinator))
            } else {
                (leo, None)
            };
            return Planned {
                bytes: marker(base, pid, epoch, abort, now),
                pid,
                txn_pid: Some(pid),
                marker: Some(abort),
                origin,
                retry: false,
            };
        }
        let bytes = if leader {
            produce_batch(rng, (pid, epoch, seq_of(pid)), true, false, now)
        } else {
            data_batch(rng, leo, pid, seq_of(pid), true, now)
        };
        return Planned {
            bytes,
            pid,
            txn_pid: Some(pid),
            marker: None,
            origin: leader.then_some(AppendOrigin::Client),
            retry: false,
        };
    }
    if !leader {
        let pid = if rng.gen_bool(0.5) {
            -1
        } else {
            rng.gen_range(1..4)
        };
        return Planned {
            bytes: data_batch(rng, leo, pid, seq_of(pid), false, now),
            pid,
            txn_pid: None,
            marker: None,
            origin: None,
            retry: false,
        };
    }
    match rng.gen_range(0..10) {
        // The coordinator's own keyed batch (as the group coordinator writes offsets).
        0 => Planned {
            bytes: produce_batch(rng, (-1, -1, -1), false, true, now),
            pid: -1,
            txn_pid: None,
            marker: None,
            origin: Some(AppendOrigin::Coordinator),
            retry: false,
        },
        1..=3 => Planned {
            bytes: produce_batch(rng, (-1, -1, -1), false, false, now),
            pid: -1,
            txn_pid: None,
            marker: None,
            origin: Some(AppendOrigin::Client),
            retry: false,
        },
        k => {
            let pid = 31 + rng.gen_range(0..3);
            match prod.last_sent.get(&pid) {
                Some((bytes, _, _)) if k == 9 => Planned {
                    bytes: bytes.clone(),
                    pid,
                    txn_pid: None,
                    marker: None,
                    origin: Some(AppendOrigin::Client),
                    retry: true,
                },
                _ => Planned {
                    bytes: produce_batch(rng, (pid, epoch_of(pid), seq_of(pid)), false, false, now),
                    pid,
                    txn_pid: None,
                    marker: None,
                    origin: Some(AppendOrigin::Client),
                    retry: false,
                },
            }
        }
    }
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
    let mut leader_epoch = 0i32;
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
                let leader = rng.gen_bool(0.5);
                if leader && rng.gen_bool(0.05) {
                    leader_epoch += 1;
                }
                let p = plan(&mut rng, &prod, leo, what == "txn", leader, now);
                let appended = match p.origin {
                    None => log
                        .append(&p.bytes)
                        .map(|info| (info.first_offset, info.last_offset, false)),
                    Some(origin) => log
                        .append_as_leader(&p.bytes, leader_epoch, origin)
                        .map(|info| (info.first_offset, info.last_offset, info.duplicate)),
                };
                match appended {
                    Ok((first, last, true)) => {
                        // A duplicate: nothing appended, the original's offsets.
                        oracle.duplicates += 1;
                        match prod.last_sent.get(&p.pid) {
                            Some(&(_, f, l)) if p.retry && (f, l) == (first, last) => Ok(()),
                            _ => Err(format!(
                                "a duplicate answered {first}..={last}, not the retried batch's offsets"
                            )),
                        }
                    }
                    Ok((first, last, false)) => {
                        let bytes = if p.origin.is_some() {
                            let before = rec.len();
                            let b = stored_at(&log, first);
                            if rec.len() != before {
                                oracle
                                    .failed_calls
                                    .push("reading a batch back changed the trace".into());
                            }
                            match b {
                                Ok(b) => b,
                                Err(e) => {
                                    oracle.failed_calls.push(e);
                                    p.bytes.clone()
                                }
                            }
                        } else {
                            p.bytes.clone()
                        };
                        match (p.txn_pid, p.marker) {
                            (Some(pid), Some(_)) => {
                                prod.open_txn.remove(&pid);
                            }
                            (Some(pid), None) => {
                                prod.open_txn.insert(pid);
                            }
                            _ => {}
                        }
                        if p.pid >= 0 && p.marker.is_none() {
                            let n = (last - first + 1) as i32;
                            *prod.seq.entry(p.pid).or_insert(0) += n;
                        }
                        if p.origin == Some(AppendOrigin::Client) && p.pid >= 0 {
                            prod.last_sent.insert(p.pid, (p.bytes.clone(), first, last));
                        }
                        oracle.batches.push(Batch {
                            base: first,
                            last,
                            bytes,
                            txn_pid: p.txn_pid,
                            marker: p.marker,
                            origin: p.origin,
                            start,
                            end: rec.len(),
                        });
                        Ok(())
                    }
                    Err(e @ segment::SegmentError::Rejected { .. }) => {
                        // Kafka's rules refused it: the producer starts a new epoch (its
                        // sequence from 0), as a real one does after such an answer.
                        oracle.refused.push(format!("{what}: {e}"));
                        if p.pid >= 0 {
                            *prod.epoch.entry(p.pid).or_insert(0) += 1;
                            prod.seq.insert(p.pid, 0);
                            prod.last_sent.remove(&p.pid);
                        }
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
                // Open transactions stay open across a reopen (the producer state is
                // recovered), so nothing changes for the producers.
                let Some((reopened, closed)) =
                    reopen(log, &mut rng, &rec, &mut oracle, start, || {
                        open(dir, &config, clock.clone(), rec.clone())
                    })
                else {
                    return oracle;
                };
                log = reopened;
                closed
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            oracle.failed_calls.push(format!("{what}: {e}"));
        }
    }
    // End with a clean close: the marker states are part of every trace.
    finish(log, &rec, oracle)
}

/// Ends a workload: a clean close (the marker states are part of every trace), recorded
/// as a flush when it succeeds, and the recorded operations.
fn finish(log: Log, rec: &Recorder, mut oracle: Oracle) -> Oracle {
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

/// A `reopen` step: [`close_for_reopen`], then `open`. `None` when the open failed: the
/// failure is recorded with the operations so far, and the workload ends there (its
/// caller returns the oracle).
fn reopen<E: std::fmt::Display>(
    log: Log,
    rng: &mut StdRng,
    rec: &Recorder,
    oracle: &mut Oracle,
    start: usize,
    open: impl FnOnce() -> Result<Log, E>,
) -> Option<(Log, Result<(), String>)> {
    let closed = close_for_reopen(log, rng, rec, oracle, start);
    match open() {
        Ok(log) => Some((log, closed)),
        Err(e) => {
            oracle.failed_calls.push(format!("reopen: {e}"));
            oracle.ops = rec.ops();
            None
        }
    }
}

/// The close before a `reopen` step: clean (and recorded as a flush from `start`) seven
/// times in ten, else the handles dropped without a flush, as a crash leaves them.
fn close_for_reopen(
    log: Log,
    rng: &mut StdRng,
    rec: &Recorder,
    oracle: &mut Oracle,
    start: usize,
) -> Result<(), String> {
    if rng.gen_bool(0.7) {
        log.close().map_err(|e| e.to_string()).map(|()| {
            oracle.flushes.push(Span {
                start,
                end: rec.len(),
            })
        })
    } else {
        log.close_handlers();
        Ok(())
    }
}

/// The keys of the compacted workloads: few, so that cleans find superseded records.
const KEYS: u8 = 8;

/// A keyed batch for the compacted workloads: 1-4 records of keys `k0`..`k7`, each value
/// unique in the workload (`seed:counter`), one in eight a tombstone (no value).
fn keyed_batch(
    rng: &mut StdRng,
    base: i64,
    (pid, seq, txn): (i64, i32, bool),
    now: i64,
    counter: &mut u64,
    seed: u64,
) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(0);
    if pid >= 0 {
        b = b.producer(pid, 0, seq).transactional(txn);
    }
    for i in 0..rng.gen_range(1..=4) {
        let key = format!("k{}", rng.gen_range(0..KEYS));
        *counter += 1;
        let value = format!("{seed}:{counter}:{}", "v".repeat(rng.gen_range(1..=120)));
        let value = (!rng.gen_bool(0.125)).then_some(value.as_bytes());
        b = b.record(now + i, Some(key.as_bytes()), value);
    }
    b.build().expect("valid batch")
}

/// Runs compacted-topic workload `seed` of `steps` calls in `dir` (which must be empty and
/// named as a partition, `<topic>-<partition>`: `Log::clean` keeps its checkpoint in the
/// parent directory) and returns its oracle. Keyed appends through the follower path
/// (plain, idempotent and transactional producers, commits and aborts, tombstones),
/// flushes, rolls, reopens and `Log::clean` rounds with small offset maps (partial
/// cleans) and delete retentions of 0 ms, 100 ms or a day (tombstones and markers removed
/// on a later pass, or kept). No truncation or retention: the checker's model of a
/// compacted log is the latest committed record per key.
pub fn run_compact(dir: &Path, seed: u64, steps: usize) -> Oracle {
    use segment::clean::{CleanerConfig, CompactionConfig};
    let mut rng = StdRng::seed_from_u64(seed);
    let config = LogConfig {
        segment_bytes: rng.gen_range(1200..=4000),
        max_index_size: [96, 240, 480][rng.gen_range(0..3)],
        index_interval_bytes: rng.gen_range(0..=600),
        preallocate: rng.gen_bool(0.5),
        retention_bytes: -1,
        retention_ms: -1,
        file_delete_delay_ms: 0,
        compact: true,
        ..LogConfig::default()
    };
    let delete_retention_ms = [0, 100, 86_400_000][rng.gen_range(0..3)];
    let rec = Arc::new(Recorder::new(dir, []));
    let time = MockTime::new(1_000_000);
    let clock: Clock = Arc::new(time.clone());
    let mut oracle = Oracle {
        config: Some(config.clone()),
        compact: true,
        ..Oracle::default()
    };
    // The high watermark is what a flush made durable (the recovery point), set before
    // each clean: the cleaner cleans below it only, as Kafka's below its replicated one.
    // With the high watermark at the log end, a clean may drop an acknowledged record in
    // favour of a newer one that a crash then loses (Kafka's cleaner alike).
    let open_compact = |rec: Arc<Recorder>| {
        Log::options()
            .clock(clock.clone())
            .fs(rec)
            .manual_high_watermark(0)
            .open(dir, config.clone())
    };
    let mut log = open_compact(rec.clone()).expect("open an empty log");
    let mut prod = Producers::default();
    let mut counter = 0u64;
    for _ in 0..steps {
        time.sleep(rng.gen_range(1..50));
        let now = clock.milliseconds();
        let start = rec.len();
        let leo = log.log_end_offset();
        let what = match rng.gen_range(0..100) {
            0..=44 => "append",
            45..=59 => "txn",
            60..=69 => "flush",
            70..=78 => "roll",
            79..=93 => "clean",
            _ => "reopen",
        };
        let res: Result<(), String> = match what {
            "append" | "txn" => {
                let txn = what == "txn";
                let pid = if txn {
                    10 + rng.gen_range(0..3)
                } else if rng.gen_bool(0.5) {
                    -1
                } else {
                    rng.gen_range(1..4)
                };
                let seq = *prod.seq.get(&pid).unwrap_or(&0);
                let (bytes, marker) = if txn && prod.open_txn.contains(&pid) && rng.gen_bool(0.4) {
                    let abort = rng.gen_bool(0.5);
                    (self::marker(leo, pid, 0, abort, now), Some(abort))
                } else {
                    (
                        keyed_batch(&mut rng, leo, (pid, seq, txn), now, &mut counter, seed),
                        None,
                    )
                };
                match log.append(&bytes) {
                    Ok(info) => {
                        let (first, last) = (info.first_offset, info.last_offset);
                        match marker {
                            Some(_) => {
                                prod.open_txn.remove(&pid);
                            }
                            None if txn => {
                                prod.open_txn.insert(pid);
                            }
                            None => {}
                        }
                        if pid >= 0 && marker.is_none() {
                            *prod.seq.entry(pid).or_insert(0) += (last - first + 1) as i32;
                        }
                        oracle.batches.push(Batch {
                            base: first,
                            last,
                            bytes,
                            txn_pid: txn.then_some(pid),
                            marker,
                            origin: None,
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
            "clean" => {
                let cleaner = CleanerConfig {
                    // 4 to 64 map slots: many cleans stop part way.
                    dedupe_buffer_size: 24 * rng.gen_range(4..=64),
                    dedupe_buffer_load_factor: 0.9,
                    io_buffer_size: 1024,
                    ..CleanerConfig::default()
                };
                let compaction = CompactionConfig {
                    min_cleanable_dirty_ratio: 0.0,
                    min_compaction_lag_ms: 0,
                    delete_retention_ms,
                    ..CompactionConfig::default()
                };
                // Half the cleans follow a flush (recorded as one), so that the rolled
                // segments below the active one are below the high watermark.
                if rng.gen_bool(0.5) {
                    let flush_start = rec.len();
                    match log.flush() {
                        Ok(()) => oracle.flushes.push(Span {
                            start: flush_start,
                            end: rec.len(),
                        }),
                        Err(e) => oracle
                            .failed_calls
                            .push(format!("flush before a clean: {e}")),
                    }
                }
                log.update_high_watermark(log.recovery_point())
                    .map_err(|e| e.to_string())
                    .and_then(|_| {
                        log.clean(&cleaner, &compaction, now)
                            .map_err(|e| e.to_string())
                    })
                    .map(|st| {
                        oracle.cleans += 1;
                        oracle.cleans_swapped += u64::from(st.segments_written > 0);
                    })
            }
            "reopen" => {
                let Some((reopened, closed)) =
                    reopen(log, &mut rng, &rec, &mut oracle, start, || {
                        open_compact(rec.clone())
                    })
                else {
                    return oracle;
                };
                log = reopened;
                closed
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            oracle.failed_calls.push(format!("{what}: {e}"));
        }
    }
    finish(log, &rec, oracle)
}

/// Runs tiered workload `seed` of `steps` calls in `dir` (which must be empty) and
/// returns its oracle: a log with `remote.storage.enable` and local retention
/// (`local.retention.bytes` and `local.retention.ms` drawn per workload), follower-path
/// appends (plain and idempotent producers), flushes, rolls, an uploader that takes a
/// prefix of `tierable_segments()` and reports its end through
/// `update_highest_offset_in_remote_storage`, `delete_local_through` with targets below
/// and above the uploaded offset, local retention (`delete_old_segments`), the remote
/// tier's retention (`update_log_start_offset_from_remote_tier`, which moves the log start
/// offset), and reopens, after which the uploader restores its uploaded offset as Kafka's
/// `RemoteLogManager` does from its metadata.
pub fn run_tiered(dir: &Path, seed: u64, steps: usize) -> Oracle {
    let mut rng = StdRng::seed_from_u64(seed);
    let config = LogConfig {
        segment_bytes: rng.gen_range(1200..=4000),
        max_index_size: [96, 240, 480][rng.gen_range(0..3)],
        index_interval_bytes: rng.gen_range(0..=600),
        preallocate: rng.gen_bool(0.5),
        retention_bytes: -1,
        retention_ms: -1,
        file_delete_delay_ms: 0,
        remote_storage_enable: true,
        local_retention_bytes: [-1, 3000, 6000][rng.gen_range(0..3)],
        local_retention_ms: [-1, 300, 2000][rng.gen_range(0..3)],
        ..LogConfig::default()
    };
    let rec = Arc::new(Recorder::new(dir, []));
    let time = MockTime::new(1_000_000);
    let clock: Clock = Arc::new(time.clone());
    let mut oracle = Oracle {
        config: Some(config.clone()),
        tiered: true,
        ..Oracle::default()
    };
    let mut log = open(dir, &config, clock.clone(), rec.clone()).expect("open an empty log");
    let mut prod = Producers::default();
    // The uploader's highest uploaded offset (its remote metadata: it survives a reopen).
    let mut uploaded = -1i64;
    for _ in 0..steps {
        time.sleep(rng.gen_range(1..80));
        let now = clock.milliseconds();
        let start = rec.len();
        let leo = log.log_end_offset();
        let what = match rng.gen_range(0..100) {
            0..=44 => "append",
            45..=54 => "flush",
            55..=62 => "roll",
            63..=74 => "upload",
            75..=84 => "delete_local",
            85..=90 => "local_retention",
            91..=94 => "remote_retention",
            _ => "reopen",
        };
        let res: Result<(), String> = match what {
            "append" => {
                let pid = if rng.gen_bool(0.5) {
                    -1
                } else {
                    rng.gen_range(1..4)
                };
                let seq = *prod.seq.get(&pid).unwrap_or(&0);
                let bytes = data_batch(&mut rng, leo, pid, seq, false, now);
                log.append(&bytes).map_err(|e| e.to_string()).map(|info| {
                    let (first, last) = (info.first_offset, info.last_offset);
                    if pid >= 0 {
                        *prod.seq.entry(pid).or_insert(0) += (last - first + 1) as i32;
                    }
                    oracle.batches.push(Batch {
                        base: first,
                        last,
                        bytes,
                        txn_pid: None,
                        marker: None,
                        origin: None,
                        start,
                        end: rec.len(),
                    });
                })
            }
            "flush" => log.flush().map_err(|e| e.to_string()).map(|()| {
                oracle.flushes.push(Span {
                    start,
                    end: rec.len(),
                })
            }),
            "roll" => log.roll(None).map(|_| ()).map_err(|e| e.to_string()),
            "upload" => log
                .tierable_segments()
                .map_err(|e| e.to_string())
                .map(|ups| {
                    // A prefix of the sealed segments is copied to the remote tier; its end
                    // is what the uploader reports.
                    if !ups.is_empty() {
                        let k = rng.gen_range(1..=ups.len());
                        uploaded = uploaded.max(ups[k - 1].end_offset);
                        oracle.uploads.push((start, uploaded));
                        log.update_highest_offset_in_remote_storage(uploaded);
                    }
                }),
            "delete_local" => {
                // Targets below, at and above the uploaded offset: only the uploaded
                // segments may go.
                let target = uploaded + rng.gen_range(-200..=400);
                oracle.uploads.push((start, uploaded));
                log.delete_local_through(target, uploaded)
                    .map_err(|e| e.to_string())
                    .map(|n| {
                        oracle.local_deletions += 1;
                        oracle.local_segments_deleted += n as u64;
                    })
            }
            "local_retention" => log
                .delete_old_segments()
                .map_err(|e| e.to_string())
                .map(|n| {
                    oracle.local_deletions += 1;
                    oracle.local_segments_deleted += n as u64;
                }),
            "remote_retention" => {
                // The remote tier deleted its oldest uploaded offsets: the log start
                // rises, at most to just past what was uploaded.
                let ls = log.log_start_offset();
                let top = (uploaded + 1).min(log.high_watermark());
                if top > ls {
                    let target = rng.gen_range(ls + 1..=top);
                    oracle.log_starts.push((start, target));
                    log.update_log_start_offset_from_remote_tier(target)
                        .map_err(|e| e.to_string())
                        .map(|ls| oracle.log_starts_done.push((rec.len(), ls)))
                } else {
                    Ok(())
                }
            }
            "reopen" => {
                let Some((reopened, closed)) =
                    reopen(log, &mut rng, &rec, &mut oracle, start, || {
                        open(dir, &config, clock.clone(), rec.clone())
                    })
                else {
                    return oracle;
                };
                log = reopened;
                // The uploader restores its uploaded offset from the remote metadata.
                if uploaded >= 0 {
                    log.update_highest_offset_in_remote_storage(uploaded);
                }
                closed
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            oracle.failed_calls.push(format!("{what}: {e}"));
        }
    }
    finish(log, &rec, oracle)
}

/// The distance between the pieces of [`run_split`]'s legacy segment: more than a
/// relative offset (`i32`) can hold.
const SPLIT_GAP: i64 = 3_000_000_000;

/// Runs split workload `seed` in `dir` (which must be empty): a legacy (magic 1) segment
/// whose offsets overflow a relative offset, as an old broker left it, durable before
/// the log is opened; the open's recovery splits it into `.cleaned` pieces renamed
/// `.swap` and then into place (Kafka's `splitOverflowedSegment`), all recorded; then a
/// few appends, a flush and a clean close.
pub fn run_split(dir: &Path, seed: u64, steps: usize) -> Oracle {
    use segment::record::LegacyMessage;
    let mut rng = StdRng::seed_from_u64(seed);
    let config = LogConfig {
        preallocate: false,
        ..config(&mut rng)
    };
    let rec = Arc::new(Recorder::new(dir, []));
    let mut oracle = Oracle {
        config: Some(config.clone()),
        ..Oracle::default()
    };
    let mut bytes = Vec::new();
    for piece in 0..rng.gen_range(2..=4i64) {
        for j in 0..rng.gen_range(1..=3i64) {
            let o = piece * SPLIT_GAP + j;
            let len = rng.gen_range(1..=200);
            let v: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let m = LegacyMessage::v1(o, 1_000_000 + o % 1000, &v)
                .to_vec()
                .expect("valid message");
            bytes.extend_from_slice(&m);
            oracle.batches.push(Batch {
                base: o,
                last: o,
                bytes: m,
                txn_pid: None,
                marker: None,
                origin: None,
                start: 0,
                end: 0,
            });
        }
    }
    let fs: &dyn segment::fs::FileSystem = &*rec;
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| fs.write_file(&dir.join("00000000000000000000.log"), &bytes))
        .and_then(|()| fs.sync_dir(dir));
    if let Err(e) = written {
        oracle.failed_calls.push(format!("legacy segment: {e}"));
    }
    // Durable before the open: acknowledged.
    oracle.flushes.push(Span {
        start: 0,
        end: rec.len(),
    });
    let time = MockTime::new(1_000_000);
    let clock: Clock = Arc::new(time.clone());
    let log = match open(dir, &config, clock.clone(), rec.clone()) {
        Ok(l) => l,
        Err(e) => {
            oracle.failed_calls.push(format!("open: {e}"));
            oracle.ops = rec.ops();
            return oracle;
        }
    };
    for _ in 0..steps.min(8) {
        time.sleep(rng.gen_range(1..50));
        let start = rec.len();
        let leo = log.log_end_offset();
        if rng.gen_bool(0.3) {
            match log.flush() {
                Ok(()) => oracle.flushes.push(Span {
                    start,
                    end: rec.len(),
                }),
                Err(e) => oracle.failed_calls.push(format!("flush: {e}")),
            }
            continue;
        }
        let b = data_batch(&mut rng, leo, -1, 0, false, clock.milliseconds());
        match log.append(&b) {
            Ok(info) => oracle.batches.push(Batch {
                base: info.first_offset,
                last: info.last_offset,
                bytes: b,
                txn_pid: None,
                marker: None,
                origin: None,
                start,
                end: rec.len(),
            }),
            Err(e) => oracle.failed_calls.push(format!("append: {e}")),
        }
    }
    finish(log, &rec, oracle)
}
