//! K2: we write, Kafka reads. Our `Log` writes partitions (several segments, all codecs
//! through `BatchBuilder`, overlapping transactions with their markers, an idempotent
//! producer, LogAppendTime batches, producer timestamps of the last hour). They replace the
//! segment files of topics created on a broker, whose checkpoints (recovery point, log start
//! offset, high watermark) are set to ours while it is stopped. Then, each check on an
//! independent source:
//!
//! * Kafka's `DumpLogSegments` (`--verify-index-only`, `--index-sanity-check`,
//!   `--deep-iteration`) reads the exact bytes the broker is given, and every finding it
//!   prints on either stream counts (it prints them on stderr and exits 0);
//! * the broker starts on them (no recovery, our snapshot at the log end loaded by name,
//!   none rejected); a real consumer's records (read_uncommitted) are compared with what the
//!   generator appended (offsets, timestamps, keys, values, headers), its read_committed
//!   offsets with the generator's own abort schedule, and everything with our `Log`'s
//!   answers; the broker appends after our last offset;
//! * a second start of the broker on the same bytes without our indexes, `.txnindex`,
//!   snapshots, epoch checkpoint and clean-shutdown marker, recovery point 0, makes Kafka
//!   rebuild all of them from our `.log`: they must equal ours byte for byte, its
//!   producer state must equal the generator's producers, and its offsetsForTimes and
//!   read_committed answers on its own indexes must equal those on ours.
//!
//! `--sabotage k2-index-position | k2-txnindex-drop | k2-trailing-garbage` damages the files
//! handed to the broker; each must fail this scenario.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use segment::record::{BatchBuilder, CompressionType, ControlRecordType};
use segment::{Log, LogConfig};

use super::broker::Broker;
use super::k1::{self, PartitionAnswers, Tally};
use super::ours;
use super::Ctx;

/// Our topics: (name, timestamp type).
const TOPICS: &[(&str, &str)] = &[("ours-mixed", "CreateTime"), ("ours-lat", "LogAppendTime")];

const SEGMENT_BYTES: u64 = 64 * 1024;
const INDEX_INTERVAL: u64 = 1024;

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: SEGMENT_BYTES,
        index_interval_bytes: INDEX_INTERVAL,
        retention_ms: -1,
        ..LogConfig::default()
    }
}

const CODECS: [CompressionType; 5] = CompressionType::ALL;

/// What the generator appended: the model the broker's answers are checked against, so that
/// a check never rests on our reader reading our own files.
#[derive(Default, Debug)]
pub(super) struct Model {
    /// (offset, timestamp a consumer sees, content hash) of every data record, in order.
    pub records: Vec<(i64, i64, u32)>,
    /// Offsets of the data records of aborted transactions.
    pub aborted: BTreeSet<i64>,
    /// Producer state at the log end: producer id -> (epoch, last sequence, last offset,
    /// offset delta of its last batch).
    pub producers: BTreeMap<i64, (i16, i32, i64, i32)>,
    /// Offsets of each producer's open transaction (moved to `aborted` by an ABORT marker).
    open: BTreeMap<i64, Vec<i64>>,
    pub batches: usize,
    pub markers: usize,
    /// The log end offset after the last batch.
    pub leo: i64,
}

impl Model {
    /// The offsets a read_committed consumer must return.
    pub fn committed(&self) -> Vec<i64> {
        self.records
            .iter()
            .map(|r| r.0)
            .filter(|o| !self.aborted.contains(o))
            .collect()
    }
}

/// One batch to write: codec, producer (id, sequence) if any, transactional.
struct Spec {
    codec: CompressionType,
    producer: Option<(i64, i32)>,
    transactional: bool,
    count: usize,
}

/// Writes batches into a `Log`, recording each in the [`Model`].
struct Gen {
    n: u64,
    ts: i64,
    lat: bool,
    model: Model,
}

impl Gen {
    /// Appends one data batch of `spec.count` records: keys (some null), headers (some with
    /// null values), values (some null), CreateTime timestamps rising with jitter, or the
    /// batch's LogAppendTime on the LogAppendTime topic.
    fn batch(&mut self, log: &Log, spec: Spec) -> Result<(), String> {
        let base = log.log_end_offset();
        let mut b = BatchBuilder::new(base)
            .partition_leader_epoch(0)
            .compression(spec.codec);
        let append_time = self.ts + 50;
        if self.lat {
            b = b.log_append_time(append_time);
        }
        if let Some((pid, seq)) = spec.producer {
            b = b.producer(pid, 0, seq);
        }
        if spec.transactional {
            b = b.transactional(true);
        }
        for i in 0..spec.count {
            self.n += 1;
            let n = self.n;
            self.ts += 3;
            let ts = self.ts + (n as i64 * 7919 % 2000) - 1000;
            let key = (!n.is_multiple_of(5)).then(|| format!("key-{}", n % 61));
            let value = (!n.is_multiple_of(17)).then(|| {
                let mut v = format!("record {n} ").repeat(1 + (n % 13) as usize);
                v.push_str(&"x".repeat((n % 97) as usize));
                v
            });
            let h1 = format!("h{n}");
            let headers: Vec<(&[u8], Option<&[u8]>)> = match n % 4 {
                0 => vec![(b"trace".as_slice(), Some(h1.as_bytes()))],
                1 => vec![
                    (b"a".as_slice(), None),
                    (b"b".as_slice(), Some(b"2".as_slice())),
                ],
                _ => vec![],
            };
            let (k, v) = (
                key.as_deref().map(str::as_bytes),
                value.as_deref().map(str::as_bytes),
            );
            let offset = base + i as i64;
            let seen_ts = if self.lat { append_time } else { ts };
            self.model
                .records
                .push((offset, seen_ts, ours::content_hash(k, v, &headers)));
            if spec.transactional {
                let pid = spec.producer.map_or(-1, |p| p.0);
                self.model.open.entry(pid).or_default().push(offset);
            }
            b = b.record_with_headers(ts, k, v, &headers);
        }
        let bytes = b.build().map_err(|e| e.to_string())?;
        log.append(&bytes).map_err(|e| format!("append: {e}"))?;
        self.model.batches += 1;
        self.model.leo = log.log_end_offset();
        if let Some((pid, seq)) = spec.producer {
            let last = base + spec.count as i64 - 1;
            self.model.producers.insert(
                pid,
                (0, seq + spec.count as i32 - 1, last, spec.count as i32 - 1),
            );
        }
        Ok(())
    }

    /// Appends a transaction marker of `pid` and records what it ends.
    fn marker(&mut self, log: &Log, pid: i64, kind: ControlRecordType) -> Result<(), String> {
        self.ts += 1;
        let marker = BatchBuilder::new(log.log_end_offset())
            .partition_leader_epoch(0)
            .producer(pid, 0, -1)
            .build_end_txn_marker(kind, 0, self.ts)
            .map_err(|e| e.to_string())?;
        log.append(&marker)
            .map_err(|e| format!("append marker: {e}"))?;
        self.model.leo = log.log_end_offset();
        let offsets = self.model.open.remove(&pid).unwrap_or_default();
        if kind == ControlRecordType::Abort {
            self.model.aborted.extend(offsets);
        }
        self.model.batches += 1;
        self.model.markers += 1;
        Ok(())
    }
}

/// Now, in ms since the epoch. The producers' timestamps start an hour before it, so that
/// Kafka's `producer.id.expiration.ms` (1 day) keeps every producer of our snapshots.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Writes the partition of `topic` with our `Log` into `dir`; returns what was written.
fn write_partition(dir: &Path, lat: bool) -> Result<Model, String> {
    let log = Log::open(dir, config()).map_err(|e| e.to_string())?;
    let mut g = Gen {
        n: 0,
        ts: now_ms() - 3_600_000,
        lat,
        model: Model::default(),
    };
    let (pa, pb, pi) = (4000i64, 4001i64, 4002i64);
    let (mut sa, mut sb, mut si) = (0i32, 0i32, 0i32);
    for round in 0..90 {
        let codec = CODECS[round % 5];
        let plain = |count| Spec {
            codec,
            producer: None,
            transactional: false,
            count,
        };
        g.batch(&log, plain(10 + round % 30))?;
        if lat {
            continue;
        }
        // Idempotent producer.
        g.batch(
            &log,
            Spec {
                codec,
                producer: Some((pi, si)),
                transactional: false,
                count: 12,
            },
        )?;
        si += 12;
        // Two overlapping transactions: A commits, B aborts every third round.
        let txn = |i: usize, pid, seq| Spec {
            codec: CODECS[(round + i) % 5],
            producer: Some((pid, seq)),
            transactional: true,
            count: 15,
        };
        g.batch(&log, txn(1, pa, sa))?;
        sa += 15;
        g.batch(&log, txn(2, pb, sb))?;
        sb += 15;
        g.batch(&log, txn(3, pa, sa))?;
        sa += 15;
        g.marker(&log, pa, ControlRecordType::Commit)?;
        let kind = if round % 3 == 0 {
            ControlRecordType::Abort
        } else {
            ControlRecordType::Commit
        };
        g.marker(&log, pb, kind)?;
    }
    // Log::append writes the .txnindex entries of the ABORT markers and the producer-state
    // snapshots; close writes the last snapshot and the clean-shutdown marker.
    log.close().map_err(|e| e.to_string())?;
    Ok(g.model)
}

/// Rewrites one of the broker's offset checkpoint files (`0`, count, `topic partition
/// offset` lines), setting the given partitions.
pub(super) fn set_checkpoint(
    path: &Path,
    values: &BTreeMap<(String, u32), i64>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|_| "0\n0\n".into());
    let mut entries: BTreeMap<(String, u32), i64> = BTreeMap::new();
    for l in text.lines().skip(2) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if let [t, p, o] = w[..] {
            if let (Ok(p), Ok(o)) = (p.parse(), o.parse()) {
                entries.insert((t.to_string(), p), o);
            }
        }
    }
    entries.extend(values.iter().map(|(k, v)| (k.clone(), *v)));
    let mut out = format!("0\n{}\n", entries.len());
    for ((t, p), o) in &entries {
        out.push_str(&format!("{t} {p} {o}\n"));
    }
    std::fs::write(path, out).map_err(|e| format!("{path:?}: {e}"))
}

/// Lines of the broker's log that mean it recovered or rebuilt something.
pub(super) const RECOVERY_MARKERS: &[&str] = &[
    "Recovering unflushed segment",
    "Recovering segment",
    "recovering segment",
    "Found a corrupted index",
    "Found invalid",
    "rebuilding index",
    "Rebuilding index",
    "Corrupt index",
    "CorruptIndexException",
    "Deleting index",
    "truncating to",
    "Truncating to",
    "unclean shutdown",
    "Unclean shutdown",
    "did not shut down cleanly",
];

/// Runs Kafka's DumpLogSegments on `files` with `flags`; returns what it printed on both
/// streams, and a finding of its own when it exits non-zero.
fn dump_log_segments(ctx: &Ctx, files: &[PathBuf], flags: &[&str]) -> (String, Option<String>) {
    let mut args = vec![
        "--files".to_string(),
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(","),
    ];
    args.extend(flags.iter().map(|s| s.to_string()));
    match ctx.jvm.run_full(
        "org.apache.kafka.tools.DumpLogSegments",
        &args,
        Duration::from_secs(300),
    ) {
        Ok(o) => (format!("{}\n{}", o.stdout, o.stderr), None),
        Err(e) => (
            e.clone(),
            Some(format!("exited with a failure: {}", first_lines(&e, 6))),
        ),
    }
}

fn first_lines(s: &str, n: usize) -> String {
    s.lines()
        .take(n)
        .collect::<Vec<_>>()
        .join(" | ")
        .chars()
        .take(600)
        .collect()
}

/// Every finding Kafka 4.4's DumpLogSegments prints (on stdout or stderr; it exits 0 after
/// most of them), and the broker-side words for a damaged file.
const DUMP_FINDINGS: &[&str] = &[
    "Mismatches in :",
    "Found timestamp mismatch in :",
    "Found out of order timestamp",
    "The following indexed offsets are not found in :",
    "Non-consecutive offsets in",
    "invalid bytes at the end of",
    "failed sanity check",
    "isvalid: false",
    "Exception",
    "Corrupt",
    "corrupt",
];

/// Lines of a DumpLogSegments output that are findings.
///
/// One of the tool's findings is an artefact, and only that one is dropped: its deep
/// iteration starts each file's "last offset" at −1, so a segment whose base offset `B` is
/// not 0 always reports `Non-consecutive offsets in …/B.log` with the pair `-1 is followed
/// by B`. Every other pair under that heading is a finding, and so is the heading of a file
/// that has any other pair.
pub(super) fn dump_problems(out: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut lines = out.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(file) = l.strip_prefix("Non-consecutive offsets in ") {
            let base = Path::new(file.trim())
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse::<i64>().ok());
            while let Some(pair) = lines.peek().and_then(|p| p.strip_prefix("  ")) {
                let artefact =
                    base.is_some_and(|b| pair.trim() == format!("-1 is followed by {b}"));
                if !artefact {
                    problems.push(format!("{l}: {}", pair.trim()));
                }
                lines.next();
            }
            continue;
        }
        if DUMP_FINDINGS.iter().any(|b| l.contains(b)) {
            problems.push(l.chars().take(300).collect());
        }
    }
    problems
}

/// The files of our partitions in a log directory that Kafka's tool reads.
fn segment_files(data: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for (t, _) in TOPICS {
        let d = data.join(format!("{t}-0"));
        for e in std::fs::read_dir(&d).map_err(|e| format!("{d:?}: {e}"))? {
            let p = e.map_err(|e| e.to_string())?.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if matches!(ext, "log" | "index" | "timeindex" | "txnindex") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The files of one extension in a partition directory, by base offset.
fn by_base(dir: &Path, ext: &str) -> Result<BTreeMap<i64, PathBuf>, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().and_then(|x| x.to_str()) != Some(ext) {
            continue;
        }
        if let Some(base) = p
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse::<i64>().ok())
        {
            out.insert(base, p);
        }
    }
    Ok(out)
}

/// Damages the files handed to the broker as the sabotage of this run says (our side made
/// wrong on purpose: the scenario must then fail).
fn sabotage(ctx: &Ctx, data: &Path) -> Result<(), String> {
    let dir = data.join(format!("{}-0", TOPICS[0].0));
    if ctx.sabotaged("k2-index-position") {
        // The second entry of the first .index that has two: its physical position moved
        // onto the batch before it.
        for p in by_base(&dir, "index")?.values() {
            let mut b = std::fs::read(p).map_err(|e| e.to_string())?;
            if b.len() >= 16 {
                let first = <[u8; 4]>::try_from(&b[4..8]).unwrap();
                b[12..16].copy_from_slice(&first);
                std::fs::write(p, b).map_err(|e| e.to_string())?;
                eprintln!("kafka k2: sabotage: {p:?} entry 1 points at entry 0's position");
                return Ok(());
            }
        }
        return Err("sabotage k2-index-position: no .index with two entries".into());
    }
    if ctx.sabotaged("k2-txnindex-drop") {
        for p in by_base(&dir, "txnindex")?.values() {
            let b = std::fs::read(p).map_err(|e| e.to_string())?;
            if b.len() >= 34 {
                std::fs::write(p, &b[34..]).map_err(|e| e.to_string())?;
                eprintln!("kafka k2: sabotage: {p:?} lost its first aborted transaction");
                return Ok(());
            }
        }
        return Err("sabotage k2-txnindex-drop: no .txnindex with an entry".into());
    }
    if ctx.sabotaged("k2-trailing-garbage") {
        let logs = by_base(&dir, "log")?;
        let (_, p) = logs.iter().next_back().ok_or("no .log")?;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(p)
            .map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut f, &[0x5a; 37]).map_err(|e| e.to_string())?;
        eprintln!("kafka k2: sabotage: 37 garbage bytes after the last batch of {p:?}");
    }
    Ok(())
}

/// The K2 scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let home = ctx.scratch.join("k2");
    let mut broker = Broker::create(&ctx.jvm, &home, &[])?;
    broker.start()?;
    // Create the topics (the Workload's admin client with our topic configs).
    let mut args = vec!["create-topics".to_string(), broker.bootstrap()];
    for (t, ts) in TOPICS {
        args.push(format!("{t}:{SEGMENT_BYTES}:{INDEX_INTERVAL}:{ts}"));
    }
    ctx.jvm
        .run("oracle.Oracle", &args, Duration::from_secs(120))?;
    broker.stop()?;

    // Our partitions, written beside the broker's home, then moved in.
    let mut tally = Tally::default();
    let mut checkpoints: BTreeMap<(String, u32), i64> = BTreeMap::new();
    let mut models: BTreeMap<String, Model> = BTreeMap::new();
    let ours_root = home.join("ours");
    let mut our_batches = 0;
    for (t, ts) in TOPICS {
        let name = format!("{t}-0");
        let dir = ours_root.join(&name);
        let model = write_partition(&dir, *ts == "LogAppendTime")?;
        our_batches += model.batches;
        let target = broker.data().join(&name);
        if !target.join("partition.metadata").is_file() {
            return Err(format!("the broker created no {target:?}"));
        }
        for e in std::fs::read_dir(&target).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if matches!(ext, "log" | "index" | "timeindex" | "txnindex" | "snapshot") {
                std::fs::remove_file(&p).map_err(|e| e.to_string())?;
            }
        }
        for e in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if matches!(ext, "log" | "index" | "timeindex" | "txnindex" | "snapshot") {
                std::fs::copy(&p, target.join(p.file_name().unwrap()))
                    .map_err(|e| e.to_string())?;
            }
        }
        // Our leader-epoch checkpoint (our batches carry leader epoch 0 from offset 0).
        let epochs = dir.join("leader-epoch-checkpoint");
        if !epochs.is_file() {
            return Err(format!("our Log wrote no {epochs:?}"));
        }
        std::fs::copy(&epochs, target.join("leader-epoch-checkpoint"))
            .map_err(|e| e.to_string())?;
        models.insert(name, model);
    }
    // The log end offsets, from our files as written (read without opening a Log on them:
    // the bytes handed over are the bytes our Log closed).
    for (t, _) in TOPICS {
        let dir = ours_root.join(format!("{t}-0"));
        let (log, _) = ours::read_log(&copy_for_reading(&dir, &home)?, config())?;
        checkpoints.insert((t.to_string(), 0), log.log_end_offset());
        log.close().map_err(|e| e.to_string())?;
    }
    let data = broker.data();
    set_checkpoint(&data.join("recovery-point-offset-checkpoint"), &checkpoints)?;
    set_checkpoint(&data.join("replication-offset-checkpoint"), &checkpoints)?;
    let zeros = checkpoints.keys().map(|k| (k.clone(), 0)).collect();
    set_checkpoint(&data.join("log-start-offset-checkpoint"), &zeros)?;
    let clean_marker = data.join(".kafka_cleanshutdown").exists();
    sabotage(ctx, &data)?;
    // The exact bytes the broker is given, kept for Kafka's own rebuild below.
    let handed = home.join("handed");
    ours::copy_dir(&data, &handed)?;

    // Kafka's DumpLogSegments on the exact files the broker is given, before it starts.
    let files = segment_files(&data)?;
    let mut dump_lines = 0;
    for flags in [
        &["--verify-index-only"][..],
        &["--index-sanity-check"][..],
        &["--deep-iteration"][..],
    ] {
        let (out, failure) = dump_log_segments(ctx, &files, flags);
        dump_lines += out.lines().count();
        tally.answers += files.len();
        for p in dump_problems(&out).into_iter().chain(failure) {
            tally
                .diffs
                .push(format!("DumpLogSegments {}: {p}", flags.join(" ")));
        }
    }

    // The broker starts on our files.
    let log_before = broker.server_log().len();
    broker.start()?;
    let answers = k1::record_answers_for(
        &ctx.jvm,
        &broker,
        &home.join("answers.json"),
        TOPICS.iter().map(|t| t.0),
    );
    let appended = answers.as_ref().ok().map(|_| {
        ctx.jvm.run(
            "oracle.Oracle",
            &[
                "append".into(),
                broker.bootstrap(),
                TOPICS[0].0.into(),
                "5".into(),
            ],
            Duration::from_secs(120),
        )
    });
    let stopped = broker.stop();
    let answers = answers?;
    let appended = appended.expect("answers ok")?;
    stopped?;
    let startup: String = broker.server_log()[log_before..].to_string();
    for l in startup.lines() {
        if RECOVERY_MARKERS.iter().any(|m| l.contains(m)) && l.contains("ours-") {
            tally.diffs.push(format!(
                "broker log: {}",
                l.chars().take(300).collect::<String>()
            ));
        }
    }
    // Our producer-state snapshot at the log end is the one the broker loads, and none is
    // rejected.
    for (t, _) in TOPICS {
        let leo = checkpoints[&(t.to_string(), 0)];
        let name = format!("{t}-0");
        let file = format!("{leo:020}.snapshot");
        let loaded = startup.lines().any(|l| {
            l.contains(&format!("partition={name}]"))
                && l.contains("Loading producer state from snapshot file")
                && l.contains(&file)
        });
        tally.answers += 1;
        if !loaded {
            tally.diffs.push(format!(
                "{name}: the broker did not log loading our snapshot {file}"
            ));
        }
        for l in startup.lines() {
            if l.contains(&name) && l.contains("Failed to load producer snapshot") {
                tally.diffs.push(format!("{name}: broker log: {l}"));
            }
        }
    }
    let leo = checkpoints[&(TOPICS[0].0.to_string(), 0)];
    let offsets: Vec<i64> = appended
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    let expected: Vec<i64> = (leo..leo + 5).collect();
    tally.answers += 1;
    if offsets != expected {
        tally.diffs.push(format!(
            "the broker appended at {offsets:?}, expected {expected:?} (after our last offset)"
        ));
    }

    // What the broker answered against what the generator appended, and against what our
    // Log answers on our files.
    let mut answered = BTreeSet::new();
    for a in &answers {
        let name = format!("{}-{}", a.topic, a.partition);
        let model = models
            .get(&name)
            .ok_or_else(|| format!("the broker answered for {name}, which we did not write"))?;
        answered.insert(name.clone());
        compare_model(&name, model, a, &mut tally);
        let dir = ours_root.join(&name);
        tally.partitions += 1;
        tally.segments += ours::log_files(&dir)?.len();
        let (log, batches) = ours::read_log(&copy_for_reading(&dir, &home)?, config())?;
        tally.batches += batches.len();
        tally.records += batches.iter().map(|b| b.records.len()).sum::<usize>();
        k1::compare(&name, &log, &batches, a, &mut tally)?;
    }
    for name in models.keys().filter(|n| !answered.contains(*n)) {
        tally
            .diffs
            .push(format!("{name}: the broker gave no answers for it"));
    }

    // Kafka's own rebuild: the handed files without our indexes, .txnindex, snapshots and
    // epoch checkpoint, no clean-shutdown marker, recovery point 0. The broker recovers
    // every segment from our .log alone; what it writes must be what we wrote.
    let rebuilt = home.join("rebuilt");
    ours::copy_dir(&handed, &rebuilt)?;
    let _ = std::fs::remove_file(rebuilt.join(".kafka_cleanshutdown"));
    set_checkpoint(
        &rebuilt.join("recovery-point-offset-checkpoint"),
        &checkpoints.keys().map(|k| (k.clone(), 0)).collect(),
    )?;
    for (t, _) in TOPICS {
        let d = rebuilt.join(format!("{t}-0"));
        for e in std::fs::read_dir(&d).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if matches!(ext, "index" | "timeindex" | "txnindex" | "snapshot")
                || name == "leader-epoch-checkpoint"
            {
                std::fs::remove_file(&p).map_err(|e| e.to_string())?;
            }
        }
    }
    broker.set_data(&rebuilt)?;
    let before = broker.server_log().len();
    broker.start()?;
    let answers2 = k1::record_answers_for(
        &ctx.jvm,
        &broker,
        &home.join("answers-rebuilt.json"),
        TOPICS.iter().map(|t| t.0),
    );
    let stopped = broker.stop();
    let answers2 = answers2?;
    stopped?;
    let restart = broker.server_log()[before..].to_string();
    let recovered = restart
        .lines()
        .filter(|l| l.contains("ours-") && l.contains("Recovering unflushed segment"))
        .count();
    if recovered == 0 {
        tally.diffs.push(
            "the rebuild broker logged no recovery of our segments (it must rebuild them)".into(),
        );
    }
    // Offsets for times on Kafka's own time index against the answers on ours.
    for a2 in &answers2 {
        let name = format!("{}-{}", a2.topic, a2.partition);
        let Some(a1) = answers
            .iter()
            .find(|a| a.topic == a2.topic && a.partition == a2.partition)
        else {
            continue;
        };
        tally.answers += a2.times.len() + 1;
        if a1.times != a2.times {
            let first = a1
                .times
                .iter()
                .zip(&a2.times)
                .find(|(x, y)| x != y)
                .map(|(x, y)| format!("on our indexes {x:?}, on Kafka's rebuild {y:?}"));
            tally.diffs.push(format!(
                "{name}: offsetsForTimes differ between our .timeindex and Kafka's rebuild of it: {first:?}"
            ));
        }
        if a1.committed != a2.committed {
            tally.diffs.push(format!(
                "{name}: read_committed differs between our .txnindex ({} records) and Kafka's rebuild of it ({} records)",
                a1.committed.len(),
                a2.committed.len()
            ));
        }
    }
    let mut files_compared = 0;
    for (t, _) in TOPICS {
        let name = format!("{t}-0");
        files_compared += compare_rebuild(
            &name,
            &handed.join(&name),
            &rebuilt.join(&name),
            &models[&name],
            &mut tally,
        )?;
    }

    if !clean_marker {
        tally
            .notes
            .push("the broker left no .kafka_cleanshutdown marker".into());
    }
    let line = format!(
        "{} ({our_batches} batches written by our Log, {} files through DumpLogSegments x3, {dump_lines} lines read; broker appended at {:?}; {files_compared} files compared with Kafka's rebuild from our .log, {recovered} segments recovered by it)",
        tally.line(),
        files.len(),
        offsets.first()
    );
    for n in &tally.notes {
        eprintln!("kafka k2: note: {n}");
    }
    if tally.diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", tally.diffs.join("\n  ")))
    }
}

/// A copy of our partition directory to open a `Log` on, so that the files compared and
/// handed over stay exactly as our `Log` closed them.
fn copy_for_reading(dir: &Path, home: &Path) -> Result<PathBuf, String> {
    let name = dir.file_name().ok_or("no name")?;
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let to = home.join(format!("read-{n}")).join(name);
    ours::copy_dir(dir, &to)?;
    Ok(to)
}

static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The broker's answers against the generator's model: every record (offset, timestamp,
/// content), and read_committed against the generator's own abort schedule.
fn compare_model(name: &str, m: &Model, a: &PartitionAnswers, tally: &mut Tally) {
    tally.answers += m.records.len() + 1;
    if a.records != m.records {
        let first = a
            .records
            .iter()
            .zip(&m.records)
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!("broker {x:?}, appended {y:?}"))
            .unwrap_or_default();
        tally.diffs.push(format!(
            "{name}: the broker served {} records, the generator appended {}; first difference: {first}",
            a.records.len(),
            m.records.len()
        ));
    }
    let committed = m.committed();
    if a.committed != committed {
        let first = a
            .committed
            .iter()
            .zip(&committed)
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!(" (first difference: broker {x}, expected {y})"))
            .unwrap_or_default();
        tally.diffs.push(format!(
            "{name}: read_committed: the broker returned {} records, the generator's abort schedule leaves {}{first}",
            a.committed.len(),
            committed.len()
        ));
    }
}

/// Kafka's rebuild of one partition from our `.log` against the files we handed over: the
/// `.log` bytes, the `.index`, `.timeindex` and `.txnindex` bytes of every segment, the
/// producer snapshot at the log end (bytes, and decoded against the generator's model), and
/// the leader-epoch checkpoint. Returns the files compared.
fn compare_rebuild(
    name: &str,
    ours_dir: &Path,
    kafka_dir: &Path,
    m: &Model,
    tally: &mut Tally,
) -> Result<usize, String> {
    let mut compared = 0;
    let mut d = Vec::new();
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let a = by_base(ours_dir, ext)?;
        let b = by_base(kafka_dir, ext)?;
        for base in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
            compared += 1;
            let ours = a
                .get(base)
                .map(std::fs::read)
                .transpose()
                .map_err(|e| e.to_string())?;
            let kafka = b
                .get(base)
                .map(std::fs::read)
                .transpose()
                .map_err(|e| e.to_string())?;
            // An empty .txnindex is the same as none (Kafka deletes empty ones on close).
            let (ours, kafka) = if ext == "txnindex" {
                (
                    ours.filter(|x| !x.is_empty()),
                    kafka.filter(|x| !x.is_empty()),
                )
            } else {
                (ours, kafka)
            };
            match (ours, kafka) {
                (Some(x), Some(y)) if x == y => {}
                (None, None) => {}
                (Some(x), Some(y)) => {
                    let what = if ext == "log" && x.starts_with(&y) {
                        format!(
                            "our .log has {} trailing bytes that Kafka's recovery truncated",
                            x.len() - y.len()
                        )
                    } else {
                        format!(
                            "{ext} bytes differ (ours {} bytes, Kafka's {}, first difference at byte {:?})",
                            x.len(),
                            y.len(),
                            x.iter().zip(&y).position(|(p, q)| p != q)
                        )
                    };
                    d.push(format!("segment {base}: .{what}"));
                }
                (x, y) => d.push(format!(
                    "segment {base}: .{ext}: ours {}, Kafka's rebuild {}",
                    if x.is_some() { "present" } else { "absent" },
                    if y.is_some() { "present" } else { "absent" }
                )),
            }
        }
    }
    // The snapshot at the log end.
    let a = by_base(ours_dir, "snapshot")?;
    let b = by_base(kafka_dir, "snapshot")?;
    match (a.iter().next_back(), b.iter().next_back()) {
        (Some((oa, pa)), Some((ob, pb))) => {
            compared += 1;
            let (x, y) = (
                std::fs::read(pa).map_err(|e| e.to_string())?,
                std::fs::read(pb).map_err(|e| e.to_string())?,
            );
            if oa != ob || x != y {
                d.push(format!(
                    "the last snapshot differs: ours {pa:?} ({} bytes), Kafka's {pb:?} ({} bytes)",
                    x.len(),
                    y.len()
                ));
            }
            match segment::producer::snapshot::decode_snapshot(&y) {
                Ok(entries) => {
                    let got: BTreeMap<i64, (i16, i32, i64, i32)> = entries
                        .iter()
                        .map(|e| {
                            (
                                e.producer_id,
                                (
                                    e.producer_epoch,
                                    e.last_sequence,
                                    e.last_offset,
                                    e.offset_delta,
                                ),
                            )
                        })
                        .collect();
                    if got != m.producers {
                        d.push(format!(
                            "Kafka's producer state rebuilt from our .log {got:?}, the generator's {:?}",
                            m.producers
                        ));
                    }
                    if let Some(e) = entries.iter().find(|e| e.current_txn_first_offset != -1) {
                        d.push(format!(
                            "a transaction left open in Kafka's rebuilt state: {e:?}"
                        ));
                    }
                }
                Err(e) => d.push(format!("Kafka's snapshot {pb:?}: {e}")),
            }
            tally.answers += 1;
        }
        (x, y) => d.push(format!(
            "last snapshot: ours {:?}, Kafka's rebuild {:?}",
            x.map(|p| p.1),
            y.map(|p| p.1)
        )),
    }
    // The leader-epoch checkpoint: the epochs Kafka's recovery assigned from our batches.
    // The rebuild broker then becomes leader with an epoch of its own, starting at the log
    // end, where there is no batch of ours: that last entry is its, not a rebuild's.
    let read = |p: PathBuf| -> Result<Vec<(i32, i64)>, String> {
        let bytes = std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?;
        segment::producer::snapshot::decode_leader_epoch_checkpoint(&bytes)
            .map_err(|e| format!("{p:?}: {e}"))
    };
    let leo = m.leo;
    let x = read(ours_dir.join("leader-epoch-checkpoint"))?;
    let mut y = read(kafka_dir.join("leader-epoch-checkpoint"))?;
    if y.last().is_some_and(|&(_, start)| start >= leo) {
        y.pop();
    }
    compared += 1;
    if x != y {
        d.push(format!(
            "leader-epoch-checkpoint: ours {x:?}, Kafka's rebuild from our batches {y:?}"
        ));
    }
    tally.answers += compared;
    tally.diffs.extend(
        d.into_iter()
            .map(|x| format!("{name}: Kafka's rebuild: {x}")),
    );
    Ok(compared)
}
