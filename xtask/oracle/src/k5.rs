//! K5 (`k5-cluster`): the scale-out path. A three-node KRaft cluster of Kafka 4.4.0
//! ([`super::cluster`]: node 2 controller and broker, nodes 1 and 3 brokers) takes over a
//! partition our library wrote, replicates it and survives the loss of its leader:
//!
//! 1. the topic is created with one replica, on broker 1 (epoch `E0`, read from broker 1's
//!    own leader-epoch checkpoint); broker 1 shuts down cleanly, the controller keeps it as
//!    the partition's last replica (the state Kafka 4.4 reports, ISR and ELR, is printed);
//! 2. our `Log` writes the partition (plain, idempotent and transactional producers,
//!    committed and aborted overlapping transactions, all five codecs, a few segments,
//!    and a last transaction left open, so the last stable offset is below the log end),
//!    every batch through `Log::append_as_leader` at epoch `E0`; its files replace
//!    broker 1's (partition.metadata kept), the checkpoints set to our log end;
//! 3. broker 1 starts and leads again, at an epoch `E1 > E0` from our log end offset (read
//!    from its log), without recovering anything of ours; the partition is reassigned to
//!    `[1, 2, 3]`: brokers 2 and 3 join as empty followers, fetch everything and enter the
//!    ISR (waited for: reassignment done, ISR of three, equal replica sizes from
//!    DescribeLogDirs, high watermark = our log end);
//! 4. broker 1 is killed with `kill -9`; a follower takes over (waited for: a new leader,
//!    broker 1 fenced out of the ISR, high watermark = our log end), at an epoch `E2 > E1`
//!    from our log end;
//! 5. consumers read_uncommitted and read_committed read every record from the new leader:
//!    exactly what we wrote (offset, timestamp, key, value, headers), committed only for
//!    read_committed;
//! 6. the survivors stop cleanly, and our `Log` reads both survivors' partition directories
//!    (copies): every batch byte-identical to ours, every record and the read_committed
//!    view equal to what we wrote, the new leader's epoch checkpoint `[(E0, 0), (E2, LEO)]`.
//!
//! What Kafka does at each step: docs/kafka-behaviour.md#replication-failover.
//!
//! 7. the producer-state snapshot we wrote at our log end and the ones both survivors
//!    wrote there on their clean shutdown (built by Kafka from the batches it replicated)
//!    are read by Kafka's `ProducerStateManager.readSnapshot`: every producer's id, epoch,
//!    coordinator epoch, last timestamp, open transaction and last batch (sequences,
//!    offsets) equal; and our `read_committed` fetch (`Log::read_with` at
//!    `FetchIsolation::TxnCommitted`, aborted transactions applied as a consumer does) on
//!    each survivor's files returns exactly what Kafka's `read_committed` consumer got.
//!
//! A reassignment or failover that does not complete fails with the cause the helper saw
//! (no leader, a target broker not registered, no progress for 45 s: it gives up early)
//! and the brokers' warnings and errors about the partition, the reassignment and replica
//! fetching.
//!
//! `--sabotage k5-cluster-drop-record` drops one committed record from our expected list;
//! the scenario must then fail naming it. `--sabotage k5-cluster-snapshot-seq` writes one
//! producer's last sequence one too high in our snapshot (before broker 1 loads it);
//! `--sabotage k5-cluster-fetch-aborted` makes our read_committed fetch ignore the aborted
//! transactions it returns. `--sabotage k5-cluster-reassign-offline` leaves broker 1 (the
//! only replica, holding our files) stopped: the reassignment must fail within a minute,
//! naming the partition's missing leader, not after its 180 s timeout.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use segment::producer::snapshot::{decode_snapshot, encode_snapshot};
use segment::record::{BatchBuilder, CompressionType, ControlRecordType, RecordBatch};
use segment::{AppendOrigin, FetchIsolation, Log, LogConfig};

use super::cluster::{Cluster, CONTROLLER};
use super::k1::{self, PartitionAnswers};
use super::k2;
use super::ours;
use super::Ctx;

const TOPIC: &str = "ours-k5";
const SEGMENT_BYTES: u64 = 64 * 1024;
const INDEX_INTERVAL: u64 = 1024;

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: SEGMENT_BYTES,
        index_interval_bytes: INDEX_INTERVAL,
        retention_ms: -1,
        // The topic's configuration (Workload.topicConfig): no timestamp bounds.
        message_timestamp_before_max_ms: i64::MAX,
        message_timestamp_after_max_ms: i64::MAX,
        ..LogConfig::default()
    }
}

const CODECS: [CompressionType; 5] = CompressionType::ALL;

/// What we wrote: the expectation every read is checked against.
#[derive(Default, Debug)]
struct Model {
    /// (offset, timestamp, content hash) of every data record, in order.
    records: Vec<(i64, i64, u32)>,
    /// Offsets of the data records of aborted transactions.
    aborted: BTreeSet<i64>,
    /// Each producer's open transaction.
    open: BTreeMap<i64, Vec<i64>>,
    /// The first offset of the transaction left open at the log end (the last stable
    /// offset): nothing from it on is read_committed.
    lso: Option<i64>,
    batches: usize,
    markers: usize,
    codecs: BTreeSet<u8>,
    leo: i64,
}

impl Model {
    fn committed(&self) -> Vec<i64> {
        self.records
            .iter()
            .map(|r| r.0)
            .filter(|o| !self.aborted.contains(o) && self.lso.is_none_or(|l| *o < l))
            .collect()
    }
}

/// Our leader append: every batch of the scenario enters the log here, through
/// [`Log::append_as_leader`] as broker 1's leader at `epoch` (data batches from a client,
/// markers from the coordinator), which assigns the offsets; returns the offset the batch
/// was appended at.
fn leader_append(log: &Log, batch: &[u8], epoch: i32, origin: AppendOrigin) -> Result<i64, String> {
    let count = RecordBatch::new(batch)
        .map(|b| b.last_offset_delta() as i64 + 1)
        .map_err(|e| e.to_string())?;
    let leo = log.log_end_offset();
    let info = log
        .append_as_leader(batch, epoch, origin)
        .map_err(|e| format!("append_as_leader at {leo}: {e}"))?;
    if info.duplicate || info.first_offset != leo || info.last_offset != leo + count - 1 {
        return Err(format!(
            "append_as_leader at log end {leo} of {count} records answered {info:?}"
        ));
    }
    Ok(info.first_offset)
}

/// Writes our partition into `dir` at leader epoch `epoch`; returns what was written.
fn write_partition(dir: &Path, epoch: i32, rounds: usize) -> Result<Model, String> {
    let log = Log::open(dir, config()).map_err(|e| e.to_string())?;
    let mut m = Model::default();
    let mut n = 0u64;
    let mut ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        - 3_600_000;
    let start_ts = ts;
    let (pa, pb, pi) = (5000i64, 5001i64, 5002i64);
    let mut seq: BTreeMap<i64, i32> = BTreeMap::new();
    let mut batch = |log: &Log,
                     m: &mut Model,
                     codec: CompressionType,
                     producer: Option<i64>,
                     transactional: bool,
                     count: usize|
     -> Result<(), String> {
        // A producer's batch: offsets from 0, no epoch (the leader assigns both).
        let mut b = BatchBuilder::new(0).compression(codec);
        if let Some(pid) = producer {
            let s = seq.entry(pid).or_insert(0);
            b = b.producer(pid, 0, *s);
            *s += count as i32;
        }
        b = b.transactional(transactional);
        let mut written = Vec::with_capacity(count);
        for _ in 0..count {
            n += 1;
            ts += 3;
            let t = ts + (n as i64 * 7919 % 2000) - 1000;
            let key = (!n.is_multiple_of(5)).then(|| format!("key-{}", n % 61));
            let value = (!n.is_multiple_of(17)).then(|| {
                let mut v = format!("k5 record {n} ").repeat(1 + (n % 11) as usize);
                v.push_str(&"y".repeat((n % 89) as usize));
                v
            });
            let h = format!("h{n}");
            let headers: Vec<(&[u8], Option<&[u8]>)> = match n % 4 {
                0 => vec![(b"trace".as_slice(), Some(h.as_bytes()))],
                1 => vec![(b"a".as_slice(), None)],
                _ => vec![],
            };
            let (k, v) = (
                key.as_deref().map(str::as_bytes),
                value.as_deref().map(str::as_bytes),
            );
            written.push((t, ours::content_hash(k, v, &headers)));
            b = b.record_with_headers(t, k, v, &headers);
        }
        let bytes = b.build().map_err(|e| e.to_string())?;
        let base = leader_append(log, &bytes, epoch, AppendOrigin::Client)?;
        for (i, (t, hash)) in written.into_iter().enumerate() {
            let offset = base + i as i64;
            m.records.push((offset, t, hash));
            if transactional {
                m.open
                    .entry(producer.unwrap_or(-1))
                    .or_default()
                    .push(offset);
            }
        }
        m.batches += 1;
        m.codecs.insert(codec as u8);
        Ok(())
    };
    for round in 0..rounds {
        let codec = CODECS[round % 5];
        batch(&log, &mut m, codec, None, false, 10 + round % 30)?;
        batch(&log, &mut m, CODECS[(round + 1) % 5], Some(pi), false, 12)?;
        // Two overlapping transactions: A commits, B aborts every third round.
        batch(&log, &mut m, CODECS[(round + 2) % 5], Some(pa), true, 15)?;
        batch(&log, &mut m, CODECS[(round + 3) % 5], Some(pb), true, 15)?;
        batch(&log, &mut m, CODECS[(round + 4) % 5], Some(pa), true, 15)?;
        for (pid, kind) in [
            (pa, ControlRecordType::Commit),
            (
                pb,
                if round % 3 == 0 {
                    ControlRecordType::Abort
                } else {
                    ControlRecordType::Commit
                },
            ),
        ] {
            let marker = BatchBuilder::new(0)
                .producer(pid, 0, -1)
                .build_end_txn_marker(kind, 0, start_ts + 250 * round as i64)
                .map_err(|e| e.to_string())?;
            leader_append(&log, &marker, epoch, AppendOrigin::Coordinator)?;
            let offsets = m.open.remove(&pid).unwrap_or_default();
            if kind == ControlRecordType::Abort {
                m.aborted.extend(offsets);
            }
            m.batches += 1;
            m.markers += 1;
        }
    }
    // A transaction left open at the log end: the takeover must keep it open (the
    // producer snapshot's currentTxnFirstOffset, the last stable offset below the log end).
    batch(&log, &mut m, CompressionType::Lz4, Some(pb), true, 7)?;
    m.lso = m.open.get(&pb).and_then(|o| o.first().copied());
    m.leo = log.log_end_offset();
    log.close().map_err(|e| e.to_string())?;
    Ok(m)
}

/// Every batch of a partition directory as its bytes, read through our `Log` (on a copy:
/// the directory itself stays as it is); also the log end offset.
fn raw_batches(dir: &Path) -> Result<(Vec<Vec<u8>>, i64), String> {
    let log = Log::open(dir, config()).map_err(|e| format!("Log::open {dir:?}: {e}"))?;
    let mut out = Vec::new();
    let mut offset = log.log_start_offset();
    let leo = log.log_end_offset();
    while offset < leo {
        let info = log
            .read(offset, 1 << 20)
            .map_err(|e| format!("read {dir:?} at {offset}: {e}"))?;
        let before = offset;
        let mut pos = 0usize;
        while pos < info.records.len() {
            let Ok(b) = RecordBatch::at(&info.records[pos..], pos as u64) else {
                break;
            };
            pos += b.size_in_bytes();
            if b.last_offset() < offset {
                continue;
            }
            offset = b.next_offset();
            out.push(b.as_bytes().to_vec());
        }
        if offset == before {
            return Err(format!("read {dir:?} at {offset}: no whole batch"));
        }
    }
    log.close().map_err(|e| e.to_string())?;
    Ok((out, leo))
}

/// A fresh copy of `dir` under `home` to open a `Log` on.
fn copy_of(dir: &Path, home: &Path, tag: &str) -> Result<PathBuf, String> {
    let to = home
        .join(format!("read-{tag}"))
        .join(dir.file_name().ok_or("no name")?);
    if to.exists() {
        std::fs::remove_dir_all(&to).map_err(|e| e.to_string())?;
    }
    ours::copy_dir(dir, &to)?;
    Ok(to)
}

/// The `(leader epoch, start offset)` of every `Leader <partition> ... starts at leader
/// epoch` line (a become-leader; not a become-follower's) a broker logged for our partition
/// after byte `from` of its server.log.
fn leader_starts(log: &str, from: usize) -> Vec<(i32, i64)> {
    let mut out = Vec::new();
    for l in log.get(from..).unwrap_or("").lines() {
        if !l.contains(&format!("] Leader {TOPIC}-0 ")) {
            continue;
        }
        let Some(rest) = l.split("starts at leader epoch ").nth(1) else {
            continue;
        };
        let mut w = rest.split_whitespace();
        let epoch = w.next().and_then(|e| e.trim_end_matches(',').parse().ok());
        let offset = rest
            .split("from offset ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|o| o.trim_end_matches(',').parse().ok());
        if let (Some(e), Some(o)) = (epoch, offset) {
            out.push((e, o));
        }
    }
    out
}

fn state_line(out: &str) -> String {
    out.lines()
        .rev()
        .find(|l| l.starts_with("state "))
        .unwrap_or("state unknown")
        .trim_start_matches("state ")
        .to_string()
}

fn field<'a>(state: &'a str, key: &str) -> Option<&'a str> {
    state
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn leader_epochs(dir: &Path) -> Result<Vec<(i32, i64)>, String> {
    let p = dir.join("leader-epoch-checkpoint");
    let bytes = std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?;
    segment::producer::snapshot::decode_leader_epoch_checkpoint(&bytes)
        .map_err(|e| format!("{p:?}: {e}"))
}

/// The first difference between two record lists, for a finding.
pub(crate) fn first_diff<T: std::fmt::Debug + PartialEq>(got: &[T], want: &[T]) -> String {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        Some(i) => format!(
            "first difference at #{i}: read {:?}, wrote {:?}",
            got[i], want[i]
        ),
        None if got.len() > want.len() => format!("first extra: {:?}", got[want.len()]),
        None => format!("first missing: {:?}", want.get(got.len())),
    }
}

/// What a `read_committed` consumer gets from our `Log`: [`consume`] at
/// [`FetchIsolation::TxnCommitted`] from the log start to the last stable offset, the
/// data records' offsets. With `ignore_aborted` (the sabotage `k5-cluster-fetch-aborted`)
/// the aborted transactions of each fetch are dropped.
fn fetch_committed(log: &Log, ignore_aborted: bool) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    consume(
        log,
        FetchIsolation::TxnCommitted,
        log.last_stable_offset(),
        &mut |aborted| {
            if ignore_aborted {
                aborted.clear();
            }
        },
        &mut |r| out.push(r.offset),
    )?;
    Ok(out)
}

/// Puts our partition's files in a broker's partition directory `to`: its segment
/// files (`.log`, `.index`, `.timeindex`, `.txnindex`, `.snapshot`) are removed, then
/// ours from `from` and our `leader-epoch-checkpoint` copied in (the broker's
/// `partition.metadata` stays). Returns the segments copied.
pub(crate) fn install_partition(from: &Path, to: &Path) -> Result<usize, String> {
    let segment_file =
        |ext: &str| matches!(ext, "log" | "index" | "timeindex" | "txnindex" | "snapshot");
    for e in std::fs::read_dir(to).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if segment_file(p.extension().and_then(|x| x.to_str()).unwrap_or("")) {
            std::fs::remove_file(&p).map_err(|e| e.to_string())?;
        }
    }
    let mut segments = 0;
    for e in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
        let fname = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if segment_file(ext) || fname == "leader-epoch-checkpoint" {
            segments += usize::from(ext == "log");
            std::fs::copy(&p, to.join(fname)).map_err(|e| e.to_string())?;
        }
    }
    Ok(segments)
}

/// A consumer of our `Log`: `Log::read_with` at `isolation` from the log start up to
/// `end`, fetch after fetch (1 MiB each, min-one-message), every batch validated, each
/// fetch's data records below `end` given to `visit` in order, minus those of the aborted
/// transactions it returned (Kafka's consumer rule: a transactional batch of a producer
/// whose aborted transaction began at or before its last offset is dropped until that
/// producer's ABORT marker; control batches are never returned). `aborted` sees (and may
/// change) each fetch's aborted-transaction list first.
///
/// # Errors
/// A read error, a read_committed fetch without an aborted-transaction list, a corrupt
/// batch, or a fetch that returned no whole batch at or above its offset.
pub(crate) fn consume(
    log: &Log,
    isolation: FetchIsolation,
    end: i64,
    aborted: &mut dyn FnMut(&mut Vec<index_txn::AbortedTxn>),
    visit: &mut dyn FnMut(&segment::record::Record<'_>),
) -> Result<(), String> {
    let what = format!("read_with {isolation:?}");
    consume_fetches(
        log.log_start_offset(),
        end,
        isolation == FetchIsolation::TxnCommitted,
        &what,
        &mut |offset| {
            let f = log
                .read_with(offset, 1 << 20, isolation, true)
                .map_err(|e| format!("{what} at {offset}: {e}"))?;
            Ok((f.records, f.aborted_transactions))
        },
        aborted,
        visit,
    )
}

/// The bytes of one fetch and, for `read_committed`, its aborted-transaction list.
pub(crate) type Fetched = (Vec<u8>, Option<Vec<index_txn::AbortedTxn>>);

/// The consumer of [`consume`] over any fetch: `fetch(offset)` answers each fetch from
/// `start` up to `end` (a `Log`'s reads, or a remote tier's and then a `Log`'s); with
/// `committed` every fetch must carry an aborted-transaction list, applied as a
/// `read_committed` consumer does. `what` names the fetch in errors.
///
/// # Errors
/// As [`consume`].
pub(crate) fn consume_fetches(
    start: i64,
    end: i64,
    committed: bool,
    what: &str,
    fetch: &mut dyn FnMut(i64) -> Result<Fetched, String>,
    aborted: &mut dyn FnMut(&mut Vec<index_txn::AbortedTxn>),
    visit: &mut dyn FnMut(&segment::record::Record<'_>),
) -> Result<(), String> {
    let mut offset = start;
    while offset < end {
        let (records, list) = fetch(offset)?;
        if committed && list.is_none() {
            return Err(format!("{what} at {offset}: no aborted-transaction list"));
        }
        let mut list = list.unwrap_or_default();
        aborted(&mut list);
        list.sort_by_key(|a| a.first_offset);
        let mut next = 0usize;
        let mut open: BTreeSet<i64> = BTreeSet::new();
        let before = offset;
        let mut pos = 0usize;
        while pos < records.len() {
            let Ok(b) = RecordBatch::at(&records[pos..], pos as u64) else {
                break; // cut by the size limit: fetch again from its offset
            };
            b.ensure_valid()
                .map_err(|e| format!("batch at {}: {e}", b.base_offset()))?;
            pos += b.size_in_bytes();
            if b.last_offset() < offset {
                continue;
            }
            while next < list.len() && list[next].first_offset <= b.last_offset() {
                open.insert(list[next].producer_id);
                next += 1;
            }
            offset = b.next_offset();
            if b.is_control_batch() {
                for r in b.records().map_err(|e| e.to_string())? {
                    let r = r.map_err(|e| e.to_string())?;
                    if ControlRecordType::parse_key(r.key(), 0).ok()
                        == Some(ControlRecordType::Abort)
                    {
                        open.remove(&b.producer_id());
                    }
                }
                continue;
            }
            if b.is_transactional() && open.contains(&b.producer_id()) {
                continue;
            }
            for r in b.records().map_err(|e| e.to_string())? {
                let r = r.map_err(|e| e.to_string())?;
                if r.offset >= before && r.offset < end {
                    visit(&r);
                }
            }
        }
        if offset == before {
            return Err(format!(
                "{what} at {offset}: {} bytes, no whole batch at or above it",
                records.len()
            ));
        }
    }
    Ok(())
}

/// Each snapshot file as Kafka's `ProducerStateManager.readSnapshot` reads it: its
/// `producer ..` lines (by producer id), per file, in the order given.
fn kafka_snapshots(ctx: &Ctx, files: &[PathBuf]) -> Result<Vec<Vec<String>>, String> {
    let mut args = vec!["cluster-snapshots".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let out = oracle(ctx, &args, 120)?;
    let mut per_file: Vec<Vec<String>> = Vec::new();
    for l in out.lines() {
        if l.starts_with("file ") {
            per_file.push(Vec::new());
        } else if let (Some(p), Some(cur)) = (l.strip_prefix("producer "), per_file.last_mut()) {
            cur.push(p.to_string());
        }
    }
    if per_file.len() != files.len() {
        return Err(format!(
            "cluster-snapshots read {} of {} files: {out}",
            per_file.len(),
            files.len()
        ));
    }
    Ok(per_file)
}

/// The sabotage `k5-cluster-snapshot-seq`: our snapshot at `leo` rewritten (valid CRC)
/// with one producer's last sequence one too high.
fn damage_snapshot(dir: &Path, leo: i64) -> Result<(), String> {
    let p = dir.join(format!("{leo:020}.snapshot"));
    let bytes = std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?;
    let mut entries = decode_snapshot(&bytes).map_err(|e| format!("{p:?}: {e:?}"))?;
    let e = entries
        .iter_mut()
        .find(|e| e.last_sequence >= 0)
        .ok_or("sabotage: no producer with a sequence in our snapshot")?;
    e.last_sequence += 1;
    eprintln!(
        "kafka k5-cluster: sabotage: producer {} written with last sequence {} in our snapshot",
        e.producer_id, e.last_sequence
    );
    std::fs::write(&p, encode_snapshot(&entries)).map_err(|e| format!("{p:?}: {e}"))
}

/// The lines of every node's server.log that may name why the cluster did not do what was
/// asked: warnings and errors about our partition, the reassignment or replica fetching
/// (the last `n` of each node).
fn broker_clues(cluster: &mut Cluster, n: usize) -> String {
    let mut out = String::new();
    for id in [1, CONTROLLER, 3] {
        let log = cluster.node(id).server_log();
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
            .filter(|l| {
                l.contains(TOPIC)
                    || l.contains("eassign")
                    || l.contains("Fetcher")
                    || l.contains("Exception")
            })
            .collect();
        for l in &lines[lines.len().saturating_sub(n)..] {
            let l: String = l.chars().take(400).collect();
            out.push_str(&format!("\n  broker {id} log: {l}"));
        }
    }
    if out.is_empty() {
        out.push_str("\n  (no broker logged a warning or error about it)");
    }
    out
}

/// The K5 scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let home = ctx.scratch.join("k5-cluster");
    let t = Instant::now();
    let mut cluster = Cluster::create(&ctx.jvm, &home)?;
    let r = scenario(ctx, &home, &mut cluster, t);
    // Every node is stopped whatever happened (the guards would kill them on drop anyway).
    let stopped = cluster.stop_all();
    let line = r?;
    stopped?;
    Ok(line)
}

fn oracle(ctx: &Ctx, args: &[String], secs: u64) -> Result<String, String> {
    ctx.jvm
        .run("oracle.Oracle", args, Duration::from_secs(secs))
}

fn scenario(ctx: &Ctx, home: &Path, cluster: &mut Cluster, t0: Instant) -> Result<String, String> {
    let mut diffs: Vec<String> = Vec::new();
    cluster.start(&[1, 2, 3])?;
    let up = t0.elapsed().as_secs_f64();
    let all = cluster.bootstrap(&[1, 2, 3]);
    let s = |x: &str| x.to_string();
    oracle(
        ctx,
        &[
            s("cluster-create"),
            all.clone(),
            s(TOPIC),
            SEGMENT_BYTES.to_string(),
            INDEX_INTERVAL.to_string(),
            s("1"),
        ],
        120,
    )?;
    // Broker 1 leads at the topic's first epoch; it shuts down as the partition's last
    // replica.
    let name = format!("{TOPIC}-0");
    let b1_dir = cluster.node(1).data().join(&name);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !b1_dir.join("partition.metadata").is_file() {
        if Instant::now() > deadline {
            return Err(format!("broker 1 created no {b1_dir:?}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    cluster.node(1).stop()?;
    let others = cluster.bootstrap(&[CONTROLLER, 3]);
    let offline = state_line(&oracle(
        ctx,
        &[
            s("cluster-state"),
            others.clone(),
            s(TOPIC),
            s("-1"),
            s("30"),
        ],
        60,
    )?);
    // Broker 1 must stay the partition's only eligible replica, in the ISR or (Kafka 4.4
    // with eligible leader replicas) the ELR, for it to be elected again with our files.
    let eligible = |k: &str| field(&offline, k) == Some("[1]");
    if !(eligible("isr") || eligible("elr")) {
        diffs.push(format!(
            "after broker 1's clean shutdown the controller keeps neither ISR nor ELR [1]: {offline}"
        ));
    }
    let epochs0 = leader_epochs(&b1_dir)?;
    let e0 = epochs0.last().map_or(0, |e| e.0);
    if epochs0 != [(e0, 0)] {
        diffs.push(format!(
            "broker 1's leader-epoch checkpoint of the new topic is {epochs0:?}, not one epoch from 0"
        ));
    }

    // Our partition, at the epoch broker 1 led it.
    let ours_dir = home.join("ours").join(&name);
    let rounds = 20 * ctx.scale as usize;
    let mut model = write_partition(&ours_dir, e0, rounds)?;
    if ctx.sabotaged("k5-cluster-snapshot-seq") {
        damage_snapshot(&ours_dir, model.leo)?;
    }
    let our_segments = install_partition(&ours_dir, &b1_dir)?;
    let data1 = cluster.node(1).data();
    let leo: BTreeMap<(String, u32), i64> = [((TOPIC.to_string(), 0), model.leo)].into();
    k2::set_checkpoint(&data1.join("recovery-point-offset-checkpoint"), &leo)?;
    k2::set_checkpoint(&data1.join("replication-offset-checkpoint"), &leo)?;
    k2::set_checkpoint(
        &data1.join("log-start-offset-checkpoint"),
        &[((TOPIC.to_string(), 0), 0)].into(),
    )?;
    let (our_batches, our_leo) = raw_batches(&copy_of(&ours_dir, home, "ours")?)?;
    if our_leo != model.leo {
        return Err(format!(
            "our Log reopened at log end {our_leo}, it closed at {}",
            model.leo
        ));
    }
    let written = model.records.len();
    let committed_written = model.committed().len();
    if ctx.sabotaged("k5-cluster-drop-record") {
        let committed: BTreeSet<i64> = model.committed().into_iter().collect();
        let i = model.records.len() / 2;
        let i = (i..model.records.len())
            .find(|&i| committed.contains(&model.records[i].0))
            .ok_or("sabotage: no committed record")?;
        let r = model.records.remove(i);
        eprintln!(
            "kafka k5-cluster: sabotage: record at offset {} dropped from our expected list",
            r.0
        );
    }

    // Broker 1 leads again on our files; brokers 2 and 3 join as followers.
    let log1_from = cluster.node(1).server_log().len();
    if !ctx.sabotaged("k5-cluster-reassign-offline") {
        cluster.start(&[1])?;
    }
    let reassigned = oracle(
        ctx,
        &[
            s("cluster-reassign"),
            all.clone(),
            s(TOPIC),
            s("1,2,3"),
            model.leo.to_string(),
            s("180"),
        ],
        240,
    );
    let reassigned = match reassigned {
        Ok(out) => state_line(&out),
        Err(e) => {
            return Err(format!(
                "k5: reassignment failed: {e}{}",
                broker_clues(cluster, 8)
            ))
        }
    };
    let log1 = cluster.node(1).server_log();
    let starts1 = leader_starts(&log1, log1_from);
    let e1 = match starts1.last() {
        Some(&(e, o)) => {
            if e <= e0 || o != model.leo {
                diffs.push(format!(
                    "broker 1 led again at epoch {e} from offset {o}; expected an epoch above {e0} from our log end {}",
                    model.leo
                ));
            }
            e
        }
        None => {
            diffs.push("broker 1 logged no \"starts at leader epoch\" for our partition".into());
            -1
        }
    };
    // Broker 1 loads our producer-state snapshot at the log end, and rejects none.
    let snapshot = format!("{:020}.snapshot", model.leo);
    let restart = log1.get(log1_from..).unwrap_or("");
    if !restart.lines().any(|l| {
        l.contains(&format!("partition={name}]"))
            && l.contains("Loading producer state from snapshot file")
            && l.contains(&snapshot)
    }) {
        diffs.push(format!(
            "broker 1 did not log loading our snapshot {snapshot}"
        ));
    }
    for l in restart.lines() {
        if l.contains(&name) && l.contains("Failed to load producer snapshot") {
            diffs.push(format!("broker 1 log: {l}"));
        }
        if k2::RECOVERY_MARKERS.iter().any(|m| l.contains(m)) && l.contains(&name) {
            diffs.push(format!(
                "broker 1 log: {}",
                l.chars().take(300).collect::<String>()
            ));
        }
    }

    // kill -9 of the leader; a follower takes over.
    let t_kill = Instant::now();
    cluster.node(1).kill9();
    let taken = oracle(
        ctx,
        &[
            s("cluster-await-leader"),
            others.clone(),
            s(TOPIC),
            s("1"),
            model.leo.to_string(),
            s("120"),
        ],
        180,
    );
    let taken = match taken {
        Ok(out) => state_line(&out),
        Err(e) => {
            return Err(format!(
                "k5: no follower took over: {e}{}",
                broker_clues(cluster, 8)
            ))
        }
    };
    let failover = t_kill.elapsed().as_secs_f64();
    let new_leader: u32 = field(&taken, "leader")
        .and_then(|l| l.parse().ok())
        .ok_or_else(|| format!("no leader in {taken}"))?;
    let follower = if new_leader == CONTROLLER {
        3
    } else {
        CONTROLLER
    };

    // Consumers on the new leader.
    let answers_path = home.join("answers.json");
    oracle(
        ctx,
        &[
            s("answers"),
            others.clone(),
            answers_path.display().to_string(),
            s("5"),
            s(TOPIC),
        ],
        300,
    )?;
    let answers: Vec<PartitionAnswers> = k1::load_answers(&answers_path)?;
    let a = answers
        .iter()
        .find(|a| a.topic == TOPIC && a.partition == 0)
        .ok_or("the consumers answered nothing for our partition")?;
    if a.records != model.records {
        diffs.push(format!(
            "read_uncommitted from the new leader: {} records, the records we wrote: {}; {}",
            a.records.len(),
            model.records.len(),
            first_diff(&a.records, &model.records)
        ));
    }
    let committed = model.committed();
    if a.committed != committed {
        diffs.push(format!(
            "read_committed from the new leader: {} records, the committed records we wrote: {}; {}",
            a.committed.len(),
            committed.len(),
            first_diff(&a.committed, &committed)
        ));
    }
    if a.earliest != 0 || a.latest != model.leo {
        diffs.push(format!(
            "the new leader lists offsets {}..{}, we wrote 0..{}",
            a.earliest, a.latest, model.leo
        ));
    }

    // The survivors' files, through our Log.
    cluster.stop_all()?;
    let starts2 = leader_starts(&cluster.node(new_leader).server_log(), 0);
    let e2 = starts2.last().map_or(-1, |s| s.0);
    match starts2.last() {
        Some(&(e, o)) if e > e1 && o == model.leo => {}
        other => diffs.push(format!(
            "broker {new_leader} took over at {other:?} (epoch, offset); expected an epoch above {e1} from our log end {}",
            model.leo
        )),
    }
    // Producer state: our snapshot at the log end and the one each survivor wrote there on
    // its clean shutdown (built by Kafka from the batches it replicated), all three read by
    // Kafka's ProducerStateManager.readSnapshot.
    let snap = format!("{:020}.snapshot", model.leo);
    let snap_files = [
        ours_dir.join(&snap),
        cluster.node(new_leader).data().join(&name).join(&snap),
        cluster.node(follower).data().join(&name).join(&snap),
    ];
    let snaps = kafka_snapshots(ctx, &snap_files)?;
    let ours_snap = &snaps[0];
    let open_txn = model
        .lso
        .map(|l| format!("currentTxnFirstOffset=OptionalLong[{l}]"));
    if let Some(want) = &open_txn {
        if !ours_snap.iter().any(|p| p.contains(want.as_str())) {
            diffs.push(format!(
                "our producer snapshot {snap} read by Kafka has no open transaction at {}: {ours_snap:?}",
                model.lso.unwrap_or(-1)
            ));
        }
    }
    if ours_snap.len() != 3 {
        diffs.push(format!(
            "our producer snapshot {snap}: {} producers read by Kafka, we wrote 3 idempotent or transactional producers",
            ours_snap.len()
        ));
    }
    for (id, theirs) in [(new_leader, &snaps[1]), (follower, &snaps[2])] {
        let n = theirs.len().max(ours_snap.len());
        if let Some(i) = (0..n).find(|&i| theirs.get(i) != ours_snap.get(i)) {
            diffs.push(format!(
                "producer snapshot at {}: broker {id}'s, read by Kafka, differs from ours at producer #{i}:\n    kafka: {}\n    ours:  {}",
                model.leo,
                theirs.get(i).map_or("<none>", String::as_str),
                ours_snap.get(i).map_or("<none>", String::as_str)
            ));
        }
    }
    let fetch_aborted = ctx.sabotaged("k5-cluster-fetch-aborted");
    let mut fetched_committed = Vec::new();
    let mut compared = 0;
    let mut answers_compared = 0;
    let mut replica_segments = Vec::new();
    for id in [new_leader, follower] {
        let dir = cluster.node(id).data().join(&name);
        let copy = copy_of(&dir, home, &format!("node-{id}"))?;
        replica_segments.push(ours::log_files(&copy)?.len());
        let (batches, leo) = raw_batches(&copy)?;
        let who = format!("broker {id}'s replica");
        if leo != model.leo {
            diffs.push(format!("{who}: log end {leo}, ours {}", model.leo));
        }
        if batches.len() != our_batches.len() {
            diffs.push(format!(
                "{who}: {} batches, we wrote {}",
                batches.len(),
                our_batches.len()
            ));
        }
        for (i, (x, y)) in batches.iter().zip(&our_batches).enumerate() {
            compared += 1;
            if x != y {
                let base = RecordBatch::new(y).map(|b| b.base_offset()).unwrap_or(-1);
                diffs.push(format!(
                    "{who}: batch #{i} (offset {base}) differs from ours ({} bytes, ours {}, first byte {:?})",
                    x.len(),
                    y.len(),
                    x.iter().zip(y).position(|(p, q)| p != q)
                ));
            }
        }
        let (log, parsed) =
            ours::read_log(&copy_of(&dir, home, &format!("node-{id}-recs"))?, config())?;
        let recs: Vec<(i64, i64, u32)> = parsed
            .iter()
            .filter(|b| !b.control)
            .flat_map(|b| b.records.iter().map(|r| (r.offset, r.timestamp, r.hash)))
            .collect();
        if recs != model.records {
            diffs.push(format!(
                "{who} read by our Log: {} records, the records we wrote: {}; {}",
                recs.len(),
                model.records.len(),
                first_diff(&recs, &model.records)
            ));
        }
        // Our read_committed fetch on Kafka's files against Kafka's read_committed consumer.
        let fetched = fetch_committed(&log, fetch_aborted)?;
        if fetched != a.committed {
            diffs.push(format!(
                "{who}: our read_committed fetch (Log::read_with TxnCommitted): {} records, Kafka's read_committed consumer: {}; {}",
                fetched.len(),
                a.committed.len(),
                first_diff(&fetched, &a.committed)
            ));
        }
        fetched_committed.push(fetched.len());
        let rc = ours::read_committed(&log, &parsed)?;
        if rc != committed {
            diffs.push(format!(
                "{who} read_committed by our Log: {} records, the committed records we wrote: {}; {}",
                rc.len(),
                committed.len(),
                first_diff(&rc, &committed)
            ));
        }
        if id == new_leader {
            // Everything the consumers and admin got from the new leader (earliest and latest
            // offsets, max timestamp, every record, read_committed, offsetsForTimes) against
            // our Log's answers on its files (indexes of Kafka's follower).
            let mut t = k1::Tally::default();
            k1::compare(&who, &log, &parsed, a, &mut t)?;
            answers_compared = t.answers;
            diffs.extend(t.diffs);
        }
        log.close().map_err(|e| e.to_string())?;
        let epochs = leader_epochs(&dir)?;
        let want: Vec<(i32, i64)> = if id == new_leader {
            vec![(e0, 0), (e2, model.leo)]
        } else {
            vec![(e0, 0)]
        };
        if epochs != want {
            diffs.push(format!(
                "{who}: leader-epoch-checkpoint {epochs:?}, expected {want:?}"
            ));
        }
    }

    let line = format!(
        "3 nodes up in {up:.1} s; wrote {written} records ({committed_written} committed, {} batches, {} markers, codecs {:?}, {our_segments} segments) at epoch {e0}; broker 1 offline: {offline}; reassigned: {reassigned}; broker 1 led at epoch {e1}, kill -9, broker {new_leader} led at epoch {e2} after {failover:.1} s; read from it: read_uncommitted {}, read_committed {}; our Log on brokers {new_leader} and {follower} ({:?} segments): {compared} batches compared, {answers_compared} of the new leader's answers compared with our Log's, read_committed fetches {:?} records; producer snapshots at {} read by Kafka: {} producers each (a transaction open from {:?}), ours against both survivors'; {} differences",
        model.batches,
        model.markers,
        model.codecs,
        a.records.len(),
        a.committed.len(),
        replica_segments,
        fetched_committed,
        model.leo,
        ours_snap.len(),
        model.lso,
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", diffs.join("\n  ")))
    }
}
