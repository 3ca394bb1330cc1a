//! One history: a fresh log, phases of concurrent threads (one or two transactional
//! producers writing their own markers as the coordinator would, idempotent-and-plain
//! producers, two readers, an administrator, and an unrecorded thread cloning the
//! producer state), each operation stamped on a shared logical clock at
//! its invocation and its response; between phases a `close` and a reopen, a barrier
//! that no other operation overlaps.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::{
    AppendOrigin, FetchIsolation, KafkaBatchFormat, Log, LogConfig, MockTime, SegmentError,
};

use crate::model::{Kind, Op, Ret, Seen};
use crate::wgl::Entry;

/// The mock clock's time; a batch's timestamp is `NOW - id`.
const NOW: i64 = 1_700_000_000_000;

/// The shape of one history.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The high watermark is the caller's (`LogOptions::manual_high_watermark`).
    pub manual: bool,
    /// Phases (a close and reopen between two).
    pub phases: usize,
    /// Operations per thread and phase.
    pub ops: usize,
    /// The history's seed.
    pub seed: u64,
    /// Two transactional producers (else one, and a second idempotent one: the last
    /// stable offset is then more often the high watermark, where a transaction that
    /// begins is the first to hold it).
    pub two_txn: bool,
    /// The administrator calls `truncate_to`.
    pub truncate: bool,
    /// The second producer thread appends through the follower path (`append`, plain
    /// batches at the log end it reads); only without `truncate`, so that the end it
    /// read is never above the log end.
    pub follower: bool,
}

/// What a history recorded.
pub type History = Vec<Entry<Op, Ret>>;

struct Clock(AtomicU64);

impl Clock {
    fn tick(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// Ids of batches: unique within a history.
struct Ids(AtomicU64);

impl Ids {
    fn next(&self) -> i64 {
        self.0.fetch_add(1, Ordering::Relaxed) as i64 + 1
    }
}

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: 1024,
        index_interval_bytes: 128,
        retention_ms: -1,
        retention_bytes: -1,
        ..LogConfig::default()
    }
}

fn open(dir: &Path, manual: Option<i64>) -> Result<Log, SegmentError> {
    let clock: segment::Clock = Arc::new(MockTime::new(NOW));
    let mut o = Log::options().clock(clock);
    if let Some(hw) = manual {
        o = o.manual_high_watermark(hw);
    }
    o.open(dir, config())
}

fn error(e: &SegmentError) -> Ret {
    match e {
        SegmentError::NonMonotonicOffset { .. } => Ret::Rejected("NonMonotonicOffset".into()),
        SegmentError::OffsetOutOfRange { .. } => Ret::OutOfRange,
        SegmentError::Rejected { .. } => Ret::Rejected(e.kafka_error().name().to_string()),
        other => Ret::Error(other.to_string()),
    }
}

fn seen(records: &[u8]) -> Result<Vec<Seen>, String> {
    let mut out = Vec::new();
    for b in segment::format::scan::<KafkaBatchFormat>(records, 0) {
        let Ok(b) = b else { break };
        let i = b.info;
        out.push(Seen {
            offset: i.base_offset,
            last: i.last_offset,
            id: NOW - i.max_timestamp,
            pid: i.producer_id,
            control: i.is_control,
            txn: i.is_transactional,
        });
    }
    Ok(out)
}

fn aborted(list: Option<Vec<index_txn::AbortedTxn>>) -> Option<Vec<(i64, i64)>> {
    list.map(|l| l.iter().map(|a| (a.producer_id, a.first_offset)).collect())
}

/// Runs `op` on `log` and returns its response.
fn execute(log: &Log, op: &Op) -> Ret {
    match op {
        Op::Append { .. } | Op::Follow { .. } => unreachable_append(),
        Op::Read {
            offset,
            max_bytes,
            iso,
            region,
        } => {
            if *region {
                match log.read_region(*offset, *max_bytes, *iso, true) {
                    Ok(r) => match r.region.to_vec() {
                        Ok(bytes) => match seen(&bytes) {
                            Ok(batches) => Ret::Read {
                                batches,
                                aborted: aborted(r.aborted_transactions),
                            },
                            Err(e) => Ret::Error(e),
                        },
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ret::RegionGone,
                        Err(e) => Ret::Error(e.to_string()),
                    },
                    Err(e) => error(&e),
                }
            } else {
                match log.read_with(*offset, *max_bytes, *iso, true) {
                    Ok(r) => match seen(&r.records) {
                        Ok(batches) => Ret::Read {
                            batches,
                            aborted: aborted(r.aborted_transactions),
                        },
                        Err(e) => Ret::Error(e),
                    },
                    Err(e) => error(&e),
                }
            }
        }
        Op::UpdateHw(h) => log
            .update_high_watermark(*h)
            .map_or_else(|e| error(&e), Ret::Value),
        Op::HighWatermark => Ret::Value(log.high_watermark()),
        Op::LastStable => Ret::Value(log.last_stable_offset()),
        Op::ProducerState => {
            let _ = log.producer_state();
            Ret::Unit
        }
        Op::TruncateTo(o) => log.truncate_to(*o).map_or_else(|e| error(&e), Ret::Bool),
        Op::DeleteRecords(o) => log
            .delete_records(*o)
            .map_or_else(|e| error(&e), Ret::Value),
        Op::Retention => log
            .delete_old_segments()
            .map_or_else(|e| error(&e), |_| Ret::Unit),
        Op::Roll => log.roll(None).map_or_else(|e| error(&e), |_| Ret::Unit),
        Op::Flush => log.flush().map_or_else(|e| error(&e), |()| Ret::Unit),
        Op::Reopen { .. } => Ret::Error("a reopen is run by the history, not a thread".into()),
    }
}

fn unreachable_append() -> Ret {
    Ret::Error("appends are run by their producer".into())
}

fn append(log: &Log, batch: &[u8], origin: AppendOrigin) -> Ret {
    match log.append_as_leader(batch, 0, origin) {
        Ok(info) => Ret::Appended {
            first: info.first_offset,
            dup: info.duplicate,
        },
        Err(e) => error(&e),
    }
}

/// A recording thread: its entries.
struct Recorder<'a> {
    clock: &'a Clock,
    thread: usize,
    out: Vec<Entry<Op, Ret>>,
}

impl Recorder<'_> {
    fn run(&mut self, op: Op, f: impl FnOnce(&Op) -> Ret) -> Ret {
        let call = self.clock.tick();
        let out = f(&op);
        let ret = self.clock.tick();
        self.out.push(Entry {
            call,
            ret,
            thread: self.thread,
            op,
            out: out.clone(),
        });
        out
    }
}

/// A producer's sequence state.
#[derive(Clone, Copy)]
struct Producer {
    pid: i64,
    epoch: i16,
    seq: i32,
}

impl Producer {
    fn batch(&self, id: i64, txn: bool) -> Vec<u8> {
        BatchBuilder::new(0)
            .producer(self.pid, self.epoch, self.seq)
            .transactional(txn)
            .record(NOW - id, None, Some(b"v"))
            .build()
            .unwrap_or_default()
    }
}

fn marker(p: &Producer, id: i64, abort: bool) -> Vec<u8> {
    let kind = if abort {
        ControlRecordType::Abort
    } else {
        ControlRecordType::Commit
    };
    control_batch(0, p.pid, p.epoch, kind, 0, NOW - id).unwrap_or_default()
}

/// A transactional producer that writes its own markers (as its coordinator would).
fn txn_producer(
    log: &Log,
    r: &mut Recorder<'_>,
    ids: &Ids,
    p: &mut Producer,
    rng: &mut StdRng,
    ops: usize,
) {
    let mut in_txn = 0;
    for _ in 0..ops {
        let id = ids.next();
        if in_txn > 0 && (in_txn >= 3 || rng.gen_bool(0.4)) {
            let abort = rng.gen_bool(0.5);
            let kind = if abort { Kind::Abort } else { Kind::Commit };
            let b = marker(p, id, abort);
            r.run(
                Op::Append {
                    pid: p.pid,
                    kind,
                    id,
                },
                |_| append(log, &b, AppendOrigin::Coordinator),
            );
            in_txn = 0;
            continue;
        }
        let b = p.batch(id, true);
        let got = r.run(
            Op::Append {
                pid: p.pid,
                kind: Kind::Txn,
                id,
            },
            |_| append(log, &b, AppendOrigin::Client),
        );
        match got {
            Ret::Appended { .. } => {
                p.seq += 1;
                in_txn += 1;
            }
            _ => {
                // Refused (a truncation cut our last batches): the coordinator aborts what
                // the log still holds of the transaction, and the producer bumps its epoch.
                let id = ids.next();
                let b = marker(p, id, true);
                r.run(
                    Op::Append {
                        pid: p.pid,
                        kind: Kind::Abort,
                        id,
                    },
                    |_| append(log, &b, AppendOrigin::Coordinator),
                );
                p.epoch += 1;
                p.seq = 0;
                in_txn = 0;
            }
        }
    }
}

/// An idempotent producer interleaved with plain batches.
fn idempotent_producer(
    log: &Log,
    r: &mut Recorder<'_>,
    ids: &Ids,
    p: &mut Producer,
    rng: &mut StdRng,
    ops: usize,
) {
    for _ in 0..ops {
        let id = ids.next();
        if rng.gen_bool(0.3) {
            let b = BatchBuilder::new(0)
                .record(NOW - id, None, Some(b"p"))
                .build()
                .unwrap_or_default();
            r.run(
                Op::Append {
                    pid: -1,
                    kind: Kind::Plain,
                    id,
                },
                |_| append(log, &b, AppendOrigin::Client),
            );
            continue;
        }
        let b = p.batch(id, false);
        match r.run(
            Op::Append {
                pid: p.pid,
                kind: Kind::Idempotent,
                id,
            },
            |_| append(log, &b, AppendOrigin::Client),
        ) {
            Ret::Appended { .. } => p.seq += 1,
            _ => {
                p.epoch += 1;
                p.seq = 0;
            }
        }
    }
}

/// A follower appending plain batches at the log end it reads (racing the leaders).
fn follower(log: &Log, r: &mut Recorder<'_>, ids: &Ids, ops: usize) {
    for _ in 0..ops {
        let id = ids.next();
        let offset = log.log_end_offset();
        let b = BatchBuilder::new(offset)
            .record(NOW - id, None, Some(b"f"))
            .build()
            .unwrap_or_default();
        r.run(Op::Follow { offset, id }, |_| match log.append(&b) {
            Ok(info) => Ret::Appended {
                first: info.first_offset,
                dup: false,
            },
            Err(e) => error(&e),
        });
    }
}

fn reader(log: &Log, r: &mut Recorder<'_>, rng: &mut StdRng, ops: usize) {
    const ISOS: [FetchIsolation; 3] = [
        FetchIsolation::LogEnd,
        FetchIsolation::HighWatermark,
        FetchIsolation::TxnCommitted,
    ];
    for _ in 0..ops {
        let op = match rng.gen_range(0..10) {
            0 => Op::ProducerState,
            1 => Op::HighWatermark,
            2 => Op::LastStable,
            _ => {
                let leo = log.log_end_offset();
                // Mostly the tail, where a batch being appended is.
                let offset = match rng.gen_range(0..10) {
                    0 => log.log_start_offset() + rng.gen_range(-1..2),
                    1..=4 => leo - 1,
                    _ => leo - rng.gen_range(-1..6),
                };
                Op::Read {
                    offset: offset.max(0),
                    max_bytes: [1, 150, 400, 1 << 20][rng.gen_range(0..4)],
                    iso: ISOS[rng.gen_range(0..3)],
                    region: rng.gen_bool(0.3),
                }
            }
        };
        r.run(op, |op| execute(log, op));
    }
}

fn admin(log: &Log, r: &mut Recorder<'_>, rng: &mut StdRng, ops: usize, shape: Shape) {
    let manual = shape.manual;
    for _ in 0..ops {
        let leo = log.log_end_offset();
        let op = match rng.gen_range(0..12) {
            0..=3 if manual => Op::UpdateHw(leo - rng.gen_range(-1..3)),
            0..=3 => Op::HighWatermark,
            4 | 5 if shape.truncate && !shape.follower => {
                Op::TruncateTo((leo - rng.gen_range(1..5)).max(0))
            }
            4..=6 => Op::DeleteRecords((log.high_watermark() - rng.gen_range(0..4)).max(0)),
            7 => Op::Retention,
            8 => Op::Roll,
            _ => Op::Flush,
        };
        let truncated = matches!(op, Op::TruncateTo(_));
        r.run(op, |op| execute(log, op));
        if truncated && rng.gen_bool(0.5) {
            r.run(Op::HighWatermark, |op| execute(log, op));
        }
    }
}

/// The error of a history whose log failed to close: its directory is kept (not removed
/// with the history) and named, so that its files can be read with `dump-log`.
fn close_failed(dir: tempfile::TempDir, seed: u64, e: &dyn std::fmt::Display) -> String {
    let kept = dir.keep();
    format!(
        "history seed {seed}: close: {e} (its log kept in {})",
        kept.display()
    )
}

/// Records one history in a fresh directory under `root`. Errors of the harness itself
/// (a failed open or close) are returned as text.
pub fn record(shape: Shape, root: &Path) -> Result<History, String> {
    let dir = tempfile::tempdir_in(root).map_err(|e| e.to_string())?;
    let clock = Clock(AtomicU64::new(0));
    let ids = Ids(AtomicU64::new(0));
    let mut rng = StdRng::seed_from_u64(shape.seed);
    let mut log = open(dir.path(), shape.manual.then_some(0)).map_err(|e| e.to_string())?;
    let mut history = Vec::new();
    let mut producers = [
        Producer {
            pid: 10,
            epoch: 0,
            seq: 0,
        },
        Producer {
            pid: 11,
            epoch: 0,
            seq: 0,
        },
        Producer {
            pid: 1,
            epoch: 0,
            seq: 0,
        },
    ];
    for phase in 0..shape.phases {
        let seeds: Vec<u64> = (0..6).map(|_| rng.gen()).collect();
        let shared = Arc::new(log);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for (t, seed) in seeds.iter().enumerate() {
                let log = &*shared;
                let clock = &clock;
                let ids = &ids;
                let mut p = producers[t.min(2)];
                let seed = *seed;
                handles.push(s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(seed);
                    let mut r = Recorder {
                        clock,
                        thread: t,
                        out: Vec::new(),
                    };
                    match t {
                        0 => txn_producer(log, &mut r, ids, &mut p, &mut rng, shape.ops),
                        1 if shape.two_txn => {
                            txn_producer(log, &mut r, ids, &mut p, &mut rng, shape.ops);
                        }
                        2 if shape.follower => follower(log, &mut r, ids, shape.ops),
                        1 | 2 => idempotent_producer(log, &mut r, ids, &mut p, &mut rng, shape.ops),
                        3 | 4 => reader(log, &mut r, &mut rng, 3 * shape.ops),
                        _ => admin(log, &mut r, &mut rng, shape.ops, shape),
                    }
                    (r.out, p)
                }));
            }
            // Not recorded (it changes nothing): clones of the producer state under its
            // lock, which hold up an append's producer-state update and so widen every
            // window between a publish and that update.
            let noise = s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = shared.producer_state();
                    std::thread::yield_now();
                }
            });
            for (t, h) in handles.into_iter().enumerate() {
                if let Ok((out, p)) = h.join() {
                    history.extend(out);
                    if t < 3 {
                        producers[t] = p;
                    }
                }
            }
            stop.store(true, Ordering::Relaxed);
            let _ = noise.join();
        });
        let Ok(owned) = Arc::try_unwrap(shared) else {
            return Err("the log is still shared after the phase".into());
        };
        if phase + 1 == shape.phases {
            if let Err(e) = owned.close() {
                return Err(close_failed(dir, shape.seed, &e));
            }
            break;
        }
        // The barrier: close, reopen with a high watermark near the end.
        let call = clock.tick();
        let end = owned.log_end_offset();
        let hw = end - rng.gen_range(0..3);
        if let Err(e) = owned.close() {
            return Err(close_failed(dir, shape.seed, &e));
        }
        log = open(dir.path(), shape.manual.then_some(hw))
            .map_err(|e| format!("history seed {}: reopen: {e}", shape.seed))?;
        let out = Ret::Reopened {
            start: log.log_start_offset(),
            end: log.log_end_offset(),
        };
        let ret = clock.tick();
        history.push(Entry {
            call,
            ret,
            thread: usize::MAX,
            op: Op::Reopen { hw },
            out,
        });
    }
    Ok(history)
}
