//! K2: we write, Kafka reads. Our `Log` writes partitions (several segments, all codecs
//! through `BatchBuilder`, overlapping transactions with their markers, an idempotent
//! producer, LogAppendTime batches). They replace the segment files of topics created on a
//! broker, whose checkpoints (recovery point, log start offset, high watermark) are set to
//! ours while it is stopped. The broker then starts, and must not recover or rebuild
//! anything (it reloads its producer state from our `.snapshot` files); a real consumer reads everything back (read_uncommitted and read_committed),
//! `offsetsForTimes` must equal ours, the broker must append after our last offset, and
//! Kafka's DumpLogSegments must find nothing wrong in our files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use segment::record::{BatchBuilder, CompressionType, ControlRecordType};
use segment::time::system_clock;
use segment::{Log, LogConfig};

use super::broker::Broker;
use super::k1::{self, Tally};
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

const CODECS: [CompressionType; 5] = [
    CompressionType::None,
    CompressionType::Gzip,
    CompressionType::Snappy,
    CompressionType::Lz4,
    CompressionType::Zstd,
];

struct Gen {
    n: u64,
    ts: i64,
}

impl Gen {
    /// Adds `count` records to `b`: keys (some null), headers (some with null values),
    /// values (some null), CreateTime timestamps rising with jitter.
    fn records(&mut self, mut b: BatchBuilder, count: usize) -> BatchBuilder {
        for _ in 0..count {
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
            b = b.record_with_headers(
                ts,
                key.as_deref().map(str::as_bytes),
                value.as_deref().map(str::as_bytes),
                &headers,
            );
        }
        b
    }
}

fn append(log: &Log, b: BatchBuilder) -> Result<(), String> {
    let bytes = b.build().map_err(|e| e.to_string())?;
    log.append(&bytes).map_err(|e| format!("append: {e}"))?;
    Ok(())
}

/// Writes the partition of `topic` with our `Log` into `dir`; returns the batches written.
fn write_partition(dir: &Path, lat: bool) -> Result<usize, String> {
    let log: Log = Log::open(dir, config(), system_clock()).map_err(|e| e.to_string())?;
    let mut g = Gen {
        n: 0,
        ts: 1_760_000_000_000,
    };
    let mut batches = 0;
    let (pa, pb, pi) = (4000i64, 4001i64, 4002i64);
    let (mut sa, mut sb, mut si) = (0i32, 0i32, 0i32);
    for round in 0..90 {
        let codec = CODECS[round % 5];
        let new = |log: &Log| BatchBuilder::new(log.log_end_offset()).partition_leader_epoch(0);
        // A plain batch.
        let mut b = new(&log).compression(codec);
        if lat {
            b = b.log_append_time(g.ts + 50);
        }
        append(&log, g.records(b, 10 + round % 30))?;
        batches += 1;
        if lat {
            continue;
        }
        // Idempotent producer.
        let b = new(&log).compression(codec).producer(pi, 0, si);
        let b = g.records(b, 12);
        si += 12;
        append(&log, b)?;
        // Two overlapping transactions: A commits, B aborts every third round.
        let b = new(&log)
            .compression(CODECS[(round + 1) % 5])
            .producer(pa, 0, sa)
            .transactional(true);
        append(&log, g.records(b, 15))?;
        sa += 15;
        let b = new(&log)
            .compression(CODECS[(round + 2) % 5])
            .producer(pb, 0, sb)
            .transactional(true);
        append(&log, g.records(b, 15))?;
        sb += 15;
        let b = new(&log)
            .compression(CODECS[(round + 3) % 5])
            .producer(pa, 0, sa)
            .transactional(true);
        append(&log, g.records(b, 15))?;
        sa += 15;
        g.ts += 1;
        let marker =
            new(&log)
                .producer(pa, 0, -1)
                .build_end_txn_marker(ControlRecordType::Commit, 0, g.ts);
        log.append(&marker.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let kind = if round % 3 == 0 {
            ControlRecordType::Abort
        } else {
            ControlRecordType::Commit
        };
        g.ts += 1;
        let marker = new(&log)
            .producer(pb, 0, -1)
            .build_end_txn_marker(kind, 0, g.ts);
        log.append(&marker.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        batches += 6;
    }
    // Log::append writes the .txnindex entries of the ABORT markers and the producer-state
    // snapshots; close writes the last snapshot and the clean-shutdown marker.
    log.close().map_err(|e| e.to_string())?;
    Ok(batches)
}

/// Rewrites one of the broker's offset checkpoint files (`0`, count, `topic partition
/// offset` lines), setting the given partitions.
fn set_checkpoint(path: &Path, values: &BTreeMap<(String, u32), i64>) -> Result<(), String> {
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
const RECOVERY_MARKERS: &[&str] = &[
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

/// Runs Kafka's DumpLogSegments on `files` with `flag`; returns its output.
fn dump_log_segments(ctx: &Ctx, files: &[PathBuf], flags: &[&str]) -> Result<String, String> {
    let mut args = vec![
        "--files".to_string(),
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(","),
    ];
    args.extend(flags.iter().map(|s| s.to_string()));
    ctx.jvm.run(
        "org.apache.kafka.tools.DumpLogSegments",
        &args,
        Duration::from_secs(300),
    )
}

/// Problems in a DumpLogSegments output.
fn dump_problems(out: &str) -> Vec<String> {
    const BAD: &[&str] = &[
        "Mismatches in",
        "mismatch",
        "Non-consecutive offsets",
        "not found in",
        "out of order",
        "failed sanity check",
        "isvalid: false",
        "Exception",
        "corrupt",
        "Found timestamp",
        "Found invalid",
        "has trailing bytes",
        "Index file is not found",
    ];
    out.lines()
        .filter(|l| BAD.iter().any(|b| l.contains(b)))
        .map(|l| l.chars().take(300).collect())
        .collect()
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
    let ours_root = home.join("ours");
    let mut our_batches = 0;
    for (t, ts) in TOPICS {
        let name = format!("{t}-0");
        let dir = ours_root.join(&name);
        our_batches += write_partition(&dir, *ts == "LogAppendTime")?;
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
        if epochs.is_file() {
            std::fs::copy(&epochs, target.join("leader-epoch-checkpoint"))
                .map_err(|e| e.to_string())?;
        } else {
            std::fs::write(target.join("leader-epoch-checkpoint"), "0\n1\n0 0\n")
                .map_err(|e| e.to_string())?;
        }
        let log: Log = Log::open(&dir, config(), system_clock()).map_err(|e| e.to_string())?;
        checkpoints.insert((t.to_string(), 0), log.log_end_offset());
        log.close().map_err(|e| e.to_string())?;
    }
    let data = broker.data();
    set_checkpoint(&data.join("recovery-point-offset-checkpoint"), &checkpoints)?;
    set_checkpoint(&data.join("replication-offset-checkpoint"), &checkpoints)?;
    let zeros = checkpoints.keys().map(|k| (k.clone(), 0)).collect();
    set_checkpoint(&data.join("log-start-offset-checkpoint"), &zeros)?;
    let clean_marker = data.join(".kafka_cleanshutdown").exists();

    // Kafka's DumpLogSegments on our files (before the broker touches them).
    let mut files = Vec::new();
    for (t, _) in TOPICS {
        let d = ours_root.join(format!("{t}-0"));
        for e in std::fs::read_dir(&d).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if matches!(ext, "log" | "index" | "timeindex" | "txnindex") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut dump_lines = 0;
    for flags in [
        &["--verify-index-only"][..],
        &["--index-sanity-check"][..],
        &["--deep-iteration"][..],
    ] {
        let out = dump_log_segments(ctx, &files, flags)?;
        dump_lines += out.lines().count();
        tally.answers += files.len();
        for p in dump_problems(&out) {
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
    if !startup.contains("Skipping recovery of") {
        tally
            .diffs
            .push("the broker did not log that it skipped recovery (clean shutdown)".into());
    }
    // Our producer-state snapshots are what the broker loads: no rebuild from the log.
    for (t, _) in TOPICS {
        let loaded = startup.lines().any(|l| {
            l.contains(&format!("partition={t}-0,"))
                && l.contains("Reloading from producer snapshot")
                && !l.contains("rebuilding producer state from offset 0")
        });
        tally.answers += 1;
        if !loaded {
            tally.diffs.push(format!(
                "{t}-0: the broker did not reload its producer state from our snapshot"
            ));
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

    // What the broker answered against what our Log answers on our files.
    for a in &answers {
        let name = format!("{}-{}", a.topic, a.partition);
        let dir = ours_root.join(&name);
        tally.partitions += 1;
        tally.segments += ours::log_files(&dir)?.len();
        let (log, batches) = ours::read_log(&dir, config())?;
        tally.batches += batches.len();
        tally.records += batches.iter().map(|b| b.records.len()).sum::<usize>();
        k1::compare(&name, &log, &batches, a, &mut tally)?;
    }
    if !clean_marker {
        tally
            .notes
            .push("the broker left no .kafka_cleanshutdown marker".into());
    }
    let line = format!(
        "{} ({our_batches} batches written by our Log, {} files through DumpLogSegments x3, {dump_lines} lines read; broker appended at {:?})",
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
