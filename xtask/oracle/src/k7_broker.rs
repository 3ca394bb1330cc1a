//! `k7-broker-compaction`: compaction round trips with a real Kafka 4.4.0 broker.
//!
//! 1. **A real broker compacts, we read.** One single-node broker with an eager cleaner
//!    (`log.cleaner.backoff.ms=200`) holds topic `k7b-kafka` (`cleanup.policy=compact`,
//!    8 KiB segments, `min.cleanable.dirty.ratio=0.01`, `delete.retention.ms` 1.5 s). The
//!    helper's `compact-produce` writes keyed updates and tombstones (an idempotent lz4
//!    producer) and transactions (a transactional producer, every other second transaction
//!    aborted; each phase ends on an aborted transaction whose records are the newest of
//!    their keys, which the cleaner must drop all the same), in three phases: each after the broker's cleaner has reached the active
//!    segment (its `cleaner-offset-checkpoint` at or past the active segment's base) and
//!    `delete.retention.ms` has passed, so that its cleans can drop the tombstones the
//!    earlier ones gave a delete horizon; the later phases write fewer keys, so that some
//!    keys end on a first-phase record, and the last is short (its first append rolls the
//!    previous phase's last segment: `segment.ms` 1 s). Once the cleaner has caught up
//!    again, read_uncommitted and read_committed
//!    consumers read the partition (offset, timestamp, key, value of every record), the
//!    broker stops cleanly, and our `Log` opens a copy of the cleaned directory: its reads
//!    at both isolation levels (`Log::read_with` at `HighWatermark`, and at `TxnCommitted`
//!    with each fetch's aborted transactions applied as a consumer does) must equal the
//!    consumers' record for record. The consumers' read_committed view must also end each
//!    key on the latest committed value the producer had acknowledged (or, for a tombstone,
//!    on it or nothing).
//! 2. **We compact, the broker serves.** Our `Log` writes `k7b-ours` through
//!    `Log::append_as_leader` (an idempotent producer's keyed updates and tombstones, two
//!    overlapping transactional producers, commits and aborts, all codecs; each phase ends
//!    on an aborted transaction over keys nothing writes after it), rolls, cleans it
//!    with `Log::clean`, writes a second phase, rolls and cleans again once the first
//!    clean's delete horizons have passed (`now + delete.retention.ms + 1`). Our files
//!    replace the broker's for that topic (checkpoints set to our log end, the topic's
//!    `min.cleanable.dirty.ratio` 1.0 so the broker never cleans it again); the broker
//!    restarts and the consumers read it: both isolation levels must return exactly the
//!    model's latest committed record per key (second-phase tombstones kept, their horizon
//!    still ahead; first-phase tombstones gone; no aborted record), and our `Log` on the
//!    same files must answer what the consumers got, and so must it on the broker's copy
//!    once the broker has stopped (which must have recovered nothing of ours).
//!
//! What Kafka's cleaner does: docs/kafka-behaviour.md#cleaner-copy.
//!
//! `--sabotage k7-broker-compaction-drop-key` drops one key's records from our reads of the
//! broker's cleaned partition; `--sabotage k7-broker-compaction-keep-aborted` makes our
//! clean keep aborted transactional data (`CleanSabotage::keep_aborted`), which the broker
//! then serves to read_uncommitted consumers. Either must fail the scenario.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use segment::clean::{CleanSabotage, CleanerConfig, CompactionConfig};
use segment::record::{BatchBuilder, CompressionType, ControlRecordType};
use segment::{AppendOrigin, FetchIsolation, Log, LogConfig};
use serde::Deserialize;

use super::broker::Broker;
use super::{k2, k5, ours, Ctx};

const KAFKA_TOPIC: &str = "k7b-kafka";
const OUR_TOPIC: &str = "k7b-ours";
const SEGMENT_BYTES: u64 = 8 * 1024;
const DELETE_RETENTION_MS: i64 = 1500;
/// Keys of the first phase; the second phase writes only the first `KEYS_LATER` of them,
/// so that the others end on a first-phase record (a tombstone among them is dropped once
/// its delete horizon has passed).
const KEYS: u64 = 50;
const KEYS_LATER: u64 = 30;

/// One record as a consumer returns it: offset, timestamp, key and value (hex; `None` for
/// null).
type Rec = (i64, i64, Option<String>, Option<String>);

/// What the helper's `compact-read` consumers returned.
#[derive(Deserialize, Debug)]
struct Read {
    earliest: i64,
    latest: i64,
    uncommitted: Vec<Rec>,
    committed: Vec<Rec>,
}

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: SEGMENT_BYTES,
        compact: true,
        retention_ms: -1,
        message_timestamp_before_max_ms: i64::MAX,
        message_timestamp_after_max_ms: i64::MAX,
        ..LogConfig::default()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

fn oracle(ctx: &Ctx, args: &[String], secs: u64) -> Result<String, String> {
    ctx.jvm
        .run("oracle.Oracle", args, Duration::from_secs(secs))
}

/// The partition's entry of the log directory's `cleaner-offset-checkpoint`, if any.
fn cleaner_checkpoint(data: &Path, topic: &str) -> Option<i64> {
    let text = std::fs::read_to_string(data.join("cleaner-offset-checkpoint")).ok()?;
    text.lines().skip(2).find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w[..] {
            [t, "0", o] if t == topic => o.parse().ok(),
            _ => None,
        }
    })
}

/// The base offset of the partition's active (last) segment.
fn active_base(dir: &Path) -> Result<i64, String> {
    let mut max = -1;
    for e in std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().and_then(|x| x.to_str()) == Some("log") {
            if let Some(b) = p
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse::<i64>().ok())
            {
                max = max.max(b);
            }
        }
    }
    Ok(max)
}

/// Waits until the broker's cleaner has cleaned `topic`-0 up to its active segment (the
/// checkpoint at or past the active segment's base); returns (checkpoint, active base, s).
fn await_cleaned(data: &Path, topic: &str, timeout: Duration) -> Result<(i64, i64, f64), String> {
    let t = Instant::now();
    let dir = data.join(format!("{topic}-0"));
    loop {
        let base = active_base(&dir)?;
        let cp = cleaner_checkpoint(data, topic);
        if let Some(cp) = cp {
            if base > 0 && cp >= base {
                return Ok((cp, base, t.elapsed().as_secs_f64()));
            }
        }
        if t.elapsed() > timeout {
            return Err(format!(
                "the broker's cleaner did not reach the active segment of {topic}-0 (base {base}) in {timeout:?}: checkpoint {cp:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One record the helper's producer had acknowledged: (key, value, status).
type Acked = (String, Option<String>, String);

fn parse_acked(out: &str, into: &mut BTreeMap<i64, Acked>) -> Result<(), String> {
    for l in out.lines().filter(|l| l.starts_with("rec ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let [_, o, k, v, st] = w[..] else {
            return Err(format!("compact-produce: bad line {l}"));
        };
        let o: i64 = o.parse().map_err(|_| format!("bad offset in {l}"))?;
        let v = (v != "~").then(|| v.to_string());
        into.insert(o, (k.to_string(), v, st.to_string()));
    }
    Ok(())
}

/// Our reads of a partition: every record a read_uncommitted fetch (`HighWatermark`) and a
/// read_committed fetch (`TxnCommitted`, each fetch's aborted transactions applied as a
/// consumer applies them: a transactional batch of a producer whose aborted transaction
/// began at or before its last offset is dropped until that producer's ABORT marker;
/// control batches never returned) return from the log start, 1 MiB at a time; and the
/// aborted transactions the read_committed fetches listed, as (producer, first offset).
fn our_reads(log: &Log) -> Result<OurView, String> {
    let mut listed = BTreeSet::new();
    let mut views = Vec::new();
    for (isolation, end) in [
        (FetchIsolation::HighWatermark, log.high_watermark()),
        (FetchIsolation::TxnCommitted, log.last_stable_offset()),
    ] {
        let mut out = Vec::new();
        k5::consume(
            log,
            isolation,
            end,
            &mut |aborted| listed.extend(aborted.iter().map(|a| (a.producer_id, a.first_offset))),
            &mut |r| out.push((r.offset, r.timestamp, r.key().map(hex), r.value().map(hex))),
        )?;
        views.push(out);
    }
    let committed = views.pop().unwrap_or_default();
    let uncommitted = views.pop().unwrap_or_default();
    Ok(OurView {
        uncommitted,
        committed,
        listed,
        start: log.log_start_offset(),
        end: log.log_end_offset(),
    })
}

/// What our `Log` answers for a partition directory.
struct OurView {
    /// The records of a read_uncommitted fetch, from the log start.
    uncommitted: Vec<Rec>,
    /// The records of a read_committed fetch, from the log start.
    committed: Vec<Rec>,
    /// The aborted transactions the read_committed fetches listed: (producer, first offset).
    listed: BTreeSet<(i64, i64)>,
    /// The log start and end offsets.
    start: i64,
    end: i64,
}

/// The first difference between two record lists, for a finding.
fn first_diff(got: &[Rec], want: &[Rec]) -> String {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        Some(i) => format!(
            "first difference at #{i}: {:?}, expected {:?}",
            got[i], want[i]
        ),
        None if got.len() > want.len() => format!("first extra: {:?}", got[want.len()]),
        None => format!("first missing: {:?}", want.get(got.len())),
    }
}

fn compare(what: &str, got: &[Rec], want: &[Rec], diffs: &mut Vec<String>) {
    if got != want {
        diffs.push(format!(
            "{what}: {} records, expected {}; {}",
            got.len(),
            want.len(),
            first_diff(got, want)
        ));
    }
}

fn keys_of(recs: &[Rec]) -> usize {
    recs.iter().map(|r| &r.2).collect::<BTreeSet<_>>().len()
}

fn tombstones_of(recs: &[Rec]) -> usize {
    recs.iter().filter(|r| r.3.is_none()).count()
}

/// One record our side wrote.
struct Written {
    offset: i64,
    timestamp: i64,
    key: String,
    value: Option<String>,
    aborted: bool,
    phase: u8,
}

/// Our leader append ([`Log::append_as_leader`] at epoch 0, the epoch of the topic the
/// broker created); returns the first offset.
fn leader_append(log: &Log, batch: &[u8], origin: AppendOrigin) -> Result<i64, String> {
    let leo = log.log_end_offset();
    let info = log
        .append_as_leader(batch, 0, origin)
        .map_err(|e| format!("append_as_leader at {leo}: {e}"))?;
    if info.duplicate || info.first_offset != leo {
        return Err(format!(
            "append_as_leader at log end {leo} answered {info:?}"
        ));
    }
    Ok(info.first_offset)
}

/// Our writer's state across the two phases.
struct Writer {
    seq: BTreeMap<i64, i32>,
    n: u64,
    ts: i64,
    written: Vec<Written>,
    /// Each producer's open transaction (indexes into `written`).
    open: BTreeMap<i64, Vec<usize>>,
    aborted_txns: usize,
    batches: usize,
}

const P_IDEM: i64 = 7000;
const P_TXA: i64 = 7001;
const P_TXB: i64 = 7002;

impl Writer {
    fn batch(
        &mut self,
        log: &Log,
        phase: u8,
        producer: i64,
        count: usize,
        codec: CompressionType,
    ) -> Result<(), String> {
        let transactional = producer != P_IDEM;
        let s = self.seq.entry(producer).or_insert(0);
        let mut b = BatchBuilder::new(0)
            .compression(codec)
            .producer(producer, 0, *s)
            .transactional(transactional);
        *s += count as i32;
        let mut recs = Vec::with_capacity(count);
        for _ in 0..count {
            self.n += 1;
            self.ts += 1;
            let n = self.n;
            let keys = if phase == 0 { KEYS } else { KEYS_LATER };
            let key = format!("key-{:03}", (n * 13) % keys).into_bytes();
            let tomb = if transactional {
                n % 11 == 5
            } else {
                n % 7 == 3
            };
            let value = (!tomb).then(|| {
                format!(
                    "ours phase {phase} producer {producer} #{n} {}",
                    "z".repeat((n % 53) as usize)
                )
                .into_bytes()
            });
            b = b.record(self.ts, Some(&key), value.as_deref());
            recs.push((self.ts, hex(&key), value.as_deref().map(hex)));
        }
        let bytes = b.build().map_err(|e| e.to_string())?;
        let base = leader_append(log, &bytes, AppendOrigin::Client)?;
        for (i, (ts, key, value)) in recs.into_iter().enumerate() {
            if transactional {
                self.open
                    .entry(producer)
                    .or_default()
                    .push(self.written.len());
            }
            self.written.push(Written {
                offset: base + i as i64,
                timestamp: ts,
                key,
                value,
                aborted: false,
                phase,
            });
        }
        self.batches += 1;
        Ok(())
    }

    fn marker(&mut self, log: &Log, producer: i64, abort: bool) -> Result<(), String> {
        let kind = if abort {
            ControlRecordType::Abort
        } else {
            ControlRecordType::Commit
        };
        let m = BatchBuilder::new(0)
            .producer(producer, 0, -1)
            .build_end_txn_marker(kind, 0, self.ts)
            .map_err(|e| e.to_string())?;
        leader_append(log, &m, AppendOrigin::Coordinator)?;
        for i in self.open.remove(&producer).unwrap_or_default() {
            self.written[i].aborted = abort;
        }
        self.aborted_txns += usize::from(abort);
        self.batches += 1;
        Ok(())
    }

    fn phase(&mut self, log: &Log, phase: u8, rounds: usize) -> Result<(), String> {
        let codecs = CompressionType::ALL;
        for round in 0..rounds {
            let c = |k: usize| codecs[(round + k) % codecs.len()];
            self.batch(log, phase, P_IDEM, 20, c(0))?;
            self.batch(log, phase, P_TXA, 8, c(1))?;
            self.batch(log, phase, P_TXB, 8, c(2))?;
            self.batch(log, phase, P_IDEM, 12, c(3))?;
            self.batch(log, phase, P_TXA, 8, c(4))?;
            self.marker(log, P_TXA, round % 4 == 3)?;
            self.marker(log, P_TXB, round % 2 == 0)?;
        }
        // Last, an aborted transaction over keys nothing of this phase writes after it
        // (nor the second phase's fewer keys): its records are the newest of their keys,
        // and the clean must still drop them.
        self.last_aborted(log, phase)?;
        self.marker(log, P_TXB, true)
    }

    fn last_aborted(&mut self, log: &Log, phase: u8) -> Result<(), String> {
        let s = self.seq.entry(P_TXB).or_insert(0);
        let mut b = BatchBuilder::new(0)
            .producer(P_TXB, 0, *s)
            .transactional(true);
        *s += 8;
        let mut recs = Vec::new();
        for i in 0..8u64 {
            self.ts += 1;
            let key = format!("key-{:03}", KEYS_LATER + i).into_bytes();
            let value = format!("ours phase {phase} aborted last #{i}").into_bytes();
            b = b.record(self.ts, Some(&key), Some(&value));
            recs.push((self.ts, hex(&key), Some(hex(&value))));
        }
        let bytes = b.build().map_err(|e| e.to_string())?;
        let base = leader_append(log, &bytes, AppendOrigin::Client)?;
        for (i, (ts, key, value)) in recs.into_iter().enumerate() {
            self.open.entry(P_TXB).or_default().push(self.written.len());
            self.written.push(Written {
                offset: base + i as i64,
                timestamp: ts,
                key,
                value,
                aborted: false,
                phase,
            });
        }
        self.batches += 1;
        Ok(())
    }
}

/// Part 2's writing and cleaning: our partition in `dir`; returns the writer (the model).
fn write_and_clean(
    ctx: &Ctx,
    dir: &Path,
    rounds: usize,
) -> Result<(Writer, Vec<String>, i64), String> {
    let log = Log::open(dir, config()).map_err(|e| format!("Log::open {dir:?}: {e}"))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut w = Writer {
        seq: BTreeMap::new(),
        n: 0,
        ts: now - 600_000,
        written: Vec::new(),
        open: BTreeMap::new(),
        aborted_txns: 0,
        batches: 0,
    };
    let cleaner = CleanerConfig {
        dedupe_buffer_size: 4 << 20,
        io_buffer_size: 64 * 1024,
        ..CleanerConfig::default()
    };
    let compaction = CompactionConfig {
        min_cleanable_dirty_ratio: 0.01,
        delete_retention_ms: DELETE_RETENTION_MS,
        ..CompactionConfig::default()
    };
    let sabotage = CleanSabotage {
        keep_aborted: ctx.sabotaged("k7-broker-compaction-keep-aborted"),
        ..CleanSabotage::default()
    };
    let mut cleans = Vec::new();
    for (phase, clean_at) in [(0u8, now), (1u8, now + DELETE_RETENTION_MS + 1)] {
        w.phase(&log, phase, rounds)?;
        log.roll(None).map_err(|e| e.to_string())?;
        let st = log
            .clean_sabotaged(&cleaner, &compaction, clean_at, sabotage)
            .map_err(|e| format!("our clean {}: {e}", phase + 1))?;
        cleans.push(format!(
            "clean {}: {} segments into {}, {} records read, {} written, up to {}",
            phase + 1,
            st.segments_cleaned,
            st.segments_written,
            st.messages_read,
            st.messages_written,
            st.end_offset
        ));
    }
    let leo = log.log_end_offset();
    log.close().map_err(|e| e.to_string())?;
    Ok((w, cleans, leo))
}

/// The model's answer after both cleans: each key's latest committed record, in offset
/// order, but for tombstones of phase 0 (their delete horizon passed at the second clean).
fn model_view(w: &Writer) -> Vec<Rec> {
    let mut latest: BTreeMap<&str, &Written> = BTreeMap::new();
    for r in w.written.iter().filter(|r| !r.aborted) {
        latest.insert(&r.key, r);
    }
    let mut out: Vec<Rec> = latest
        .values()
        .filter(|r| !(r.value.is_none() && r.phase == 0))
        .map(|r| (r.offset, r.timestamp, Some(r.key.clone()), r.value.clone()))
        .collect();
    out.sort();
    out
}

fn copy_of(dir: &Path, to: &Path) -> Result<PathBuf, String> {
    let to = to.join(dir.file_name().ok_or("no name")?);
    if to.exists() {
        std::fs::remove_dir_all(&to).map_err(|e| e.to_string())?;
    }
    ours::copy_dir(dir, &to)?;
    Ok(to)
}

/// Opens `dir` with our `Log` and reads it at both isolation levels.
fn read_ours(dir: &Path) -> Result<OurView, String> {
    let log = Log::open(dir, config()).map_err(|e| format!("Log::open {dir:?}: {e}"))?;
    let view = our_reads(&log)?;
    log.close().map_err(|e| e.to_string())?;
    Ok(view)
}

/// The scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let home = ctx.scratch.join("k7-broker-compaction");
    let mut broker = Broker::create(
        &ctx.jvm,
        &home,
        &[
            "log.cleaner.enable=true",
            "log.cleaner.threads=1",
            "log.cleaner.backoff.ms=200",
            "log.cleaner.dedupe.buffer.size=16777216",
            "log.cleaner.io.buffer.size=65536",
            "log.segment.delete.delay.ms=500",
        ],
    )?;
    broker.start()?;
    let r = run_with(ctx, &home, &mut broker);
    let stopped = broker.stop();
    let line = r?;
    stopped?;
    Ok(line)
}

fn run_with(ctx: &Ctx, home: &Path, broker: &mut Broker) -> Result<String, String> {
    let mut diffs = Vec::new();
    oracle(
        ctx,
        &[
            s("compact-create"),
            broker.bootstrap(),
            format!("{KAFKA_TOPIC}:{SEGMENT_BYTES}:{DELETE_RETENTION_MS}:0.01"),
            format!("{OUR_TOPIC}:{SEGMENT_BYTES}:{DELETE_RETENTION_MS}:1.0"),
        ],
        120,
    )?;
    let data = broker.data();

    // Part 1: the broker compacts.
    let rounds = 4 * ctx.scale as usize;
    let mut acked: BTreeMap<i64, Acked> = BTreeMap::new();
    let mut waits = Vec::new();
    let mut phase_b_from = 0;
    // Phase c is short: its first append rolls phase b's last segment (`segment.ms` 1 s),
    // and the clean it causes comes after the delete horizons phase b's cleans gave.
    for (phase, keys, n) in [
        ("a", KEYS, rounds),
        ("b", KEYS_LATER, rounds),
        ("c", KEYS_LATER, 2),
    ] {
        let out = oracle(
            ctx,
            &[
                s("compact-produce"),
                broker.bootstrap(),
                s(KAFKA_TOPIC),
                s(phase),
                n.to_string(),
                keys.to_string(),
            ],
            180,
        )?;
        parse_acked(&out, &mut acked)?;
        if phase == "a" {
            phase_b_from = acked.keys().next_back().map_or(0, |o| o + 1);
        }
        let (cp, base, secs) = await_cleaned(&data, KAFKA_TOPIC, Duration::from_secs(60))?;
        waits.push(format!("{cp} (active {base}) after {secs:.1} s"));
        if phase != "c" {
            // Past the last clean's delete horizons: later cleans may drop the tombstones
            // it gave one.
            std::thread::sleep(Duration::from_millis(DELETE_RETENTION_MS as u64 + 200));
        }
    }
    let cleaner_lines = broker
        .server_log()
        .lines()
        .filter(|l| l.contains("Cleaner 0: Cleaning log") && l.contains(KAFKA_TOPIC))
        .count();
    let kafka_read_path = home.join("kafka-read.json");
    oracle(
        ctx,
        &[
            s("compact-read"),
            broker.bootstrap(),
            kafka_read_path.display().to_string(),
            s(KAFKA_TOPIC),
        ],
        180,
    )?;
    let kafka_read: Read = serde_json::from_str(
        &std::fs::read_to_string(&kafka_read_path).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("{kafka_read_path:?}: {e}"))?;

    // Part 2's partition is written and cleaned meanwhile.
    let ours_root = home.join("ours");
    let ours_dir = ours_root.join(format!("{OUR_TOPIC}-0"));
    let (model, our_cleans, our_leo) = write_and_clean(ctx, &ours_dir, 6 * ctx.scale as usize)?;
    broker.stop()?;

    // Part 1: our Log on a copy of the broker's cleaned partition.
    let kafka_copy = copy_of(
        &data.join(format!("{KAFKA_TOPIC}-0")),
        &home.join("read-kafka"),
    )?;
    let OurView {
        uncommitted: mut u1,
        committed: mut c1,
        listed: listed1,
        start: start1,
        end: end1,
    } = read_ours(&kafka_copy)?;
    if ctx.sabotaged("k7-broker-compaction-drop-key") {
        let key = c1.get(c1.len() / 2).and_then(|r| r.2.clone());
        u1.retain(|r| r.2 != key);
        c1.retain(|r| r.2 != key);
        eprintln!("kafka k7-broker-compaction: sabotage: key {key:?} dropped from our reads");
    }
    let what = "our Log on the broker's cleaned partition";
    compare(
        &format!("{what}, read_uncommitted, against Kafka's read_uncommitted consumer"),
        &u1,
        &kafka_read.uncommitted,
        &mut diffs,
    );
    compare(
        &format!("{what}, read_committed, against Kafka's read_committed consumer"),
        &c1,
        &kafka_read.committed,
        &mut diffs,
    );
    if (start1, end1) != (kafka_read.earliest, kafka_read.latest) {
        diffs.push(format!(
            "{what}: offsets {start1}..{end1}, the broker lists {}..{}",
            kafka_read.earliest, kafka_read.latest
        ));
    }
    // The latest committed value of each key, as the producer had it acknowledged, ends
    // that key in the read_committed view (a tombstone: it, or nothing).
    let mut latest: BTreeMap<&str, (i64, &Option<String>)> = BTreeMap::new();
    for (o, (k, v, st)) in &acked {
        if st != "aborted" {
            latest.insert(k, (*o, v));
        }
    }
    let mut last_seen: BTreeMap<&str, (i64, &Option<String>)> = BTreeMap::new();
    for r in &kafka_read.committed {
        if let Some(k) = &r.2 {
            last_seen.insert(k, (r.0, &r.3));
        }
    }
    for (k, (o, v)) in &latest {
        let seen = last_seen.get(k);
        let ok = match (v, seen) {
            (None, None) => true,
            (_, Some((so, sv))) => so == o && sv == v,
            (Some(_), None) => false,
        };
        if !ok {
            diffs.push(format!(
                "Kafka's read_committed consumer ends key {k} on {seen:?}; its latest committed record is at {o} ({v:?})"
            ));
        }
    }
    // Keys whose latest committed record is a first-phase tombstone: the broker's later
    // cleans (past its delete horizon) may drop it; how many it did is reported.
    let horizon_keys: Vec<&str> = latest
        .iter()
        .filter(|(_, (o, v))| v.is_none() && *o < phase_b_from)
        .map(|(k, _)| *k)
        .collect();
    let horizon_dropped = horizon_keys
        .iter()
        .filter(|k| !last_seen.contains_key(*k))
        .count();
    let aborted_records = acked.values().filter(|a| a.2 == "aborted").count();
    let kafka_tombstones = tombstones_of(&kafka_read.uncommitted);

    // Part 2: our files in the broker's log directory, the broker restarted on them.
    let target = data.join(format!("{OUR_TOPIC}-0"));
    if !target.join("partition.metadata").is_file() {
        return Err(format!("the broker created no {target:?}"));
    }
    let our_segments = k5::install_partition(&ours_dir, &target)?;
    let our_start = read_ours(&copy_of(&ours_dir, &home.join("read-ours-0"))?)?.start;
    let key = (OUR_TOPIC.to_string(), 0u32);
    let leo: BTreeMap<(String, u32), i64> = [(key.clone(), our_leo)].into();
    k2::set_checkpoint(&data.join("recovery-point-offset-checkpoint"), &leo)?;
    k2::set_checkpoint(&data.join("replication-offset-checkpoint"), &leo)?;
    k2::set_checkpoint(&data.join("cleaner-offset-checkpoint"), &leo)?;
    k2::set_checkpoint(
        &data.join("log-start-offset-checkpoint"),
        &[(key, our_start)].into(),
    )?;
    let log_from = broker.server_log().len();
    broker.start()?;
    let ours_read_path = home.join("ours-read.json");
    oracle(
        ctx,
        &[
            s("compact-read"),
            broker.bootstrap(),
            ours_read_path.display().to_string(),
            s(OUR_TOPIC),
        ],
        180,
    )?;
    let ours_read: Read =
        serde_json::from_str(&std::fs::read_to_string(&ours_read_path).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{ours_read_path:?}: {e}"))?;
    let want = model_view(&model);
    let what = "the broker on our cleaned partition";
    compare(
        &format!("{what}: Kafka's read_uncommitted consumer against the model (each key's latest committed record)"),
        &ours_read.uncommitted,
        &want,
        &mut diffs,
    );
    compare(
        &format!("{what}: Kafka's read_committed consumer against the model"),
        &ours_read.committed,
        &want,
        &mut diffs,
    );
    let OurView {
        uncommitted: u2,
        committed: c2,
        listed: listed2,
        start: start2,
        end: end2,
    } = read_ours(&copy_of(&ours_dir, &home.join("read-ours"))?)?;
    compare(
        &format!("{what}: our Log's read_uncommitted against Kafka's consumer"),
        &u2,
        &ours_read.uncommitted,
        &mut diffs,
    );
    compare(
        &format!("{what}: our Log's read_committed against Kafka's consumer"),
        &c2,
        &ours_read.committed,
        &mut diffs,
    );
    if (start2, end2) != (ours_read.earliest, ours_read.latest) {
        diffs.push(format!(
            "{what}: our offsets {start2}..{end2}, the broker lists {}..{}",
            ours_read.earliest, ours_read.latest
        ));
    }
    // The broker took our files as they are: nothing recovered or rebuilt; and once it has
    // stopped, our Log on its copy of the partition (the files it served, with what it
    // wrote beside them) still answers what its consumers got.
    broker.stop()?;
    let restart = broker
        .server_log()
        .get(log_from..)
        .unwrap_or("")
        .to_string();
    for l in restart.lines() {
        if l.contains(OUR_TOPIC) && k2::RECOVERY_MARKERS.iter().any(|m| l.contains(m)) {
            diffs.push(format!(
                "{what}: broker log: {}",
                l.chars().take(300).collect::<String>()
            ));
        }
    }
    let served = read_ours(&copy_of(&target, &home.join("read-served"))?)?;
    compare(
        &format!("{what}: our Log's read_uncommitted of the broker's files after it served them"),
        &served.uncommitted,
        &ours_read.uncommitted,
        &mut diffs,
    );
    compare(
        &format!("{what}: our Log's read_committed of the broker's files after it served them"),
        &served.committed,
        &ours_read.committed,
        &mut diffs,
    );
    let written_tombstones = model.written.iter().filter(|r| r.value.is_none()).count();
    // Coverage: keys that end on a first-phase tombstone (gone after the second clean) and
    // on a second-phase one (kept: its horizon is ahead), or the model checks nothing of
    // either.
    let mut latest2: BTreeMap<&str, &Written> = BTreeMap::new();
    for r in model.written.iter().filter(|r| !r.aborted) {
        latest2.insert(&r.key, r);
    }
    let gone = latest2
        .values()
        .filter(|r| r.value.is_none() && r.phase == 0)
        .count();
    let kept = latest2
        .values()
        .filter(|r| r.value.is_none() && r.phase == 1)
        .count();
    if gone == 0 || kept == 0 {
        diffs.push(format!(
            "coverage: {gone} keys end on a first-phase tombstone, {kept} on a second-phase one; the workload needs both"
        ));
    }
    let line = format!(
        "broker compacts: {} records acknowledged ({aborted_records} in aborted transactions), cleaner checkpoints {}, {cleaner_lines} cleans logged; read back offsets {}..{}: read_uncommitted {} records ({} keys, {kafka_tombstones} tombstones), read_committed {} ({} keys), our Log equal on both, {} aborted transactions listed by our fetches; {} keys ended on a first-phase tombstone, {horizon_dropped} of them dropped by the broker; we compact: wrote {} records ({} batches, {} aborted transactions, {written_tombstones} tombstones) in {our_segments} segments, {}; the broker serves {} records ({} keys, {} tombstones; {gone} tombstoned keys gone past their horizon, {kept} kept) at both isolation levels, our Log equal on our files and on the broker's after it served them, {} aborted transactions listed; {} differences",
        acked.len(),
        waits.join(", "),
        kafka_read.earliest,
        kafka_read.latest,
        kafka_read.uncommitted.len(),
        keys_of(&kafka_read.uncommitted),
        kafka_read.committed.len(),
        keys_of(&kafka_read.committed),
        listed1.len(),
        horizon_keys.len(),
        model.written.len(),
        model.batches,
        model.aborted_txns,
        our_cleans.join(", "),
        ours_read.committed.len(),
        keys_of(&ours_read.committed),
        tombstones_of(&ours_read.committed),
        listed2.len(),
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", diffs.join("\n  ")))
    }
}
