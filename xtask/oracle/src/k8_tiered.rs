//! K8 (`k8-tiered`): a real Kafka 4.4.0 broker tiers a partition to Kafka's
//! `LocalTieredStorage`, and our tier seam agrees with what it uploaded and deleted
//! (`docs/kafka-behaviour.md#tierable-segments`, `docs/kafka-behaviour.md#delete-local-through`).
//!
//! 1. A single-node KRaft broker runs with `remote.log.storage.system.enable=true`,
//!    `LocalTieredStorage` (from `kafka-storage-4.4.0-test-fixtures.jar`, its directory in
//!    the scenario's scratch), the default topic-based metadata manager (one partition of
//!    `__remote_log_metadata`) and a 500 ms `remote.log.manager.task.interval.ms`. The
//!    topic has `remote.storage.enable=true`, 16 KiB segments, `local.retention.bytes` 1
//!    and `local.retention.ms` one day, `remote.copy.lag.ms` / `remote.copy.lag.bytes` 0
//!    (Kafka 4.4's upload delays off: our `tierable_segments` applies none), and is created
//!    with `remote.log.copy.disable=true` (KIP-950): the broker uploads nothing yet. The
//!    helper's `tier-produce` writes idempotent producers' batches and overlapping
//!    transactions (a third aborted) in all five codecs, in two halves with a clean restart
//!    between (the second half at a new leader epoch, so that uploaded segments carry two
//!    epochs).
//! 2. **The copy before the first upload, deterministically**: the broker stops cleanly
//!    (copy still disabled) and its partition directory is copied, with Kafka's clean
//!    shutdown carried over to our files (`.kafka_cleanshutdown`, the recovery point and
//!    log start offset of Kafka's checkpoints), so that our `Log` opens it as Kafka's loader
//!    does, without recovering. The broker restarts and the topic's
//!    `remote.log.copy.disable` is set to false: the broker uploads, then deletes locally
//!    (waited for: the remote and local `.log` files unchanged for 5 s).
//! 3. **Uploads**: our `Log::tierable_segments` over the copy must name the segments the
//!    broker uploaded (its `RemoteLogSegmentMetadata` records in `__remote_log_metadata`,
//!    read by Kafka's `DumpLogSegments --remote-log-metadata-decoder`), in that order; each
//!    one's metadata fields (start and end offsets, max timestamp, size, leader epochs,
//!    broker id, whether the transaction index is empty) as our
//!    `RemoteLogSegmentMetadata::from_upload` builds them; and every file `LocalTieredStorage`
//!    holds for it (`.log`, `.index`, `.timeindex`, `.txnindex`, `.snapshot`,
//!    `.leader_epoch_checkpoint`) byte-identical to what our `SegmentUpload` hands out.
//! 4. **Local deletion**: our `Log::delete_local_through` on the copy, through the broker's
//!    highest uploaded offset, must leave the segment files the broker's directory has;
//!    so must our own local retention pass (`Log::delete_old_segments` with
//!    `local.retention.bytes` 1, told the same highest uploaded offset) on a second copy,
//!    which must also leave the log start offset and move the local log start as the
//!    broker's ListOffsets −2 and −4 say (`docs/kafka-behaviour.md#local-retention`).
//! 5. **Reads from the remote tier**: while the broker still runs, the helper's consumers
//!    (`answers`) read the partition from offset 0 at read_uncommitted and read_committed
//!    (through the broker's remote fetch below its local log start), and `tier-offsets`
//!    asks ListOffsets −2, −1, −4, −5 and −6. Ours: the same consumer over our fetches, each
//!    below our local log start answered by `read_remote` over `RemoteSegment`s of
//!    `LocalTieredStorage`'s files (the aborted transactions from their transaction indexes,
//!    completed from the local ones when the remote search asks), the rest by our `Log`:
//!    every record (offset, timestamp, content hash) and every committed offset must be the
//!    consumers'; and our `Log::fetch_offset_by_timestamp` on the copy must answer the
//!    broker's five offsets (`docs/kafka-behaviour.md#remote-read`,
//!    `docs/kafka-behaviour.md#list-offsets-tiered`).
//!
//! Sabotages: `k8-tiered-one-more` claims one more segment tierable (the active one);
//! `k8-tiered-no-snapshot` drops the producer snapshot of our uploads;
//! `k8-tiered-fetch-aborted` drops the aborted-transaction lists of our remote fetches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::sync::Arc;

use segment::tier::{
    read_remote_kafka, RemoteIndexes, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteSegment,
    TopicIdPartition, Uuid as SegUuid,
};
use segment::{FetchIsolation, ListedOffset, Log, LogConfig};

use super::broker::Broker;
use super::k1::{self, PartitionAnswers};
use super::k5::{self, Fetched};
use super::{ours, Ctx};

const TOPIC: &str = "k8-tiered";
const SEGMENT_BYTES: u64 = 16 * 1024;
const INDEX_INTERVAL: u64 = 1024;
const LOCAL_RETENTION_MS: i64 = 86_400_000;
/// The broker's node id (`Node::SINGLE`).
const BROKER_ID: i32 = 1;

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: SEGMENT_BYTES,
        index_interval_bytes: INDEX_INTERVAL,
        retention_ms: -1,
        retention_bytes: -1,
        local_retention_ms: LOCAL_RETENTION_MS,
        local_retention_bytes: 1,
        remote_storage_enable: true,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

fn s(x: &str) -> String {
    x.to_string()
}

fn oracle(ctx: &Ctx, args: &[String], secs: u64) -> Result<String, String> {
    ctx.jvm
        .run("oracle.Oracle", args, Duration::from_secs(secs))
}

/// One uploaded segment as a set of files: suffix (`.log`, `.index`, ...) → bytes.
type Files = BTreeMap<&'static str, Vec<u8>>;

/// The suffixes `LocalTieredStorage` gives a segment's files (its
/// `RemoteLogSegmentFileType`s).
const SUFFIXES: [&str; 6] = [
    ".log",
    ".index",
    ".timeindex",
    ".txnindex",
    ".snapshot",
    ".leader_epoch_checkpoint",
];

/// What our side says is uploaded for one segment.
struct OurUpload {
    base: i64,
    end: i64,
    metadata: RemoteLogSegmentMetadata,
    files: Files,
}

/// One `RemoteLogSegmentMetadata{...}` record of `__remote_log_metadata` as Kafka's
/// `DumpLogSegments --remote-log-metadata-decoder` prints it.
#[derive(Debug)]
struct TheirMetadata {
    /// The remote segment id's uuid (base64, the `LocalTieredStorage` file names').
    uuid: String,
    fields: BTreeMap<String, String>,
}

fn read_all(f: &std::fs::File) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    std::io::Read::read_to_end(&mut &*f, &mut v).map_err(|e| e.to_string())?;
    Ok(v)
}

/// Our uploads: `tierable_segments` of the copy (with the sabotages' damage).
fn our_uploads(ctx: &Ctx, log: &Log, dir: &Path) -> Result<Vec<OurUpload>, String> {
    let tp = TopicIdPartition {
        topic_id: SegUuid::from_bytes([0; 16]),
        topic: s(TOPIC),
        partition: 0,
    };
    let id = RemoteLogSegmentId {
        topic_id_partition: tp,
        id: SegUuid::from_bytes([0; 16]),
    };
    let mut out = Vec::new();
    for u in log.tierable_segments().map_err(|e| e.to_string())? {
        let mut files = Files::new();
        files.insert(".log", u.log.to_vec().map_err(|e| e.to_string())?);
        files.insert(".index", read_all(&u.offset_index)?);
        files.insert(".timeindex", read_all(&u.time_index)?);
        if let Some(t) = &u.txn_index {
            files.insert(".txnindex", read_all(t)?);
        }
        if let Some(p) = &u.producer_snapshot {
            if !ctx.sabotaged("k8-tiered-no-snapshot") {
                files.insert(".snapshot", read_all(p)?);
            }
        }
        files.insert(
            ".leader_epoch_checkpoint",
            u.leader_epoch_checkpoint.clone(),
        );
        let metadata = RemoteLogSegmentMetadata::from_upload(id.clone(), &u, BROKER_ID, 0)
            .map_err(|e| format!("from_upload of segment {}: {e}", u.base_offset))?;
        out.push(OurUpload {
            base: u.base_offset,
            end: u.end_offset,
            metadata,
            files,
        });
    }
    if ctx.sabotaged("k8-tiered-one-more") {
        // The active segment claimed tierable too, with its files as they are.
        let base: i64 = segment_files(dir)?
            .iter()
            .filter_map(|n| n.strip_suffix(".log")?.parse().ok())
            .max()
            .ok_or("sabotage: no segment")?;
        let leo = log.log_end_offset();
        let mut files = Files::new();
        for suffix in [".log", ".index", ".timeindex"] {
            let p = dir.join(format!("{base:020}{suffix}"));
            files.insert(
                suffix,
                std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?,
            );
        }
        let last = out.last().ok_or("sabotage: no tierable segment to copy")?;
        let metadata = last.metadata.clone();
        eprintln!("kafka k8-tiered: sabotage: the active segment {base} claimed tierable");
        out.push(OurUpload {
            base,
            end: leo - 1,
            metadata,
            files,
        });
    }
    Ok(out)
}

/// The `RemoteLogSegmentMetadata{...}` records (not the updates) of `__remote_log_metadata`,
/// in log order, read by Kafka's `DumpLogSegments --remote-log-metadata-decoder`.
fn their_metadata(ctx: &Ctx, data: &Path) -> Result<Vec<TheirMetadata>, String> {
    let dir = data.join("__remote_log_metadata-0");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{dir:?}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for l in logs {
        let text = ctx.jvm.run(
            "org.apache.kafka.tools.DumpLogSegments",
            &[
                s("--remote-log-metadata-decoder"),
                s("--print-data-log"),
                s("--files"),
                l.display().to_string(),
            ],
            Duration::from_secs(120),
        )?;
        for line in text.lines() {
            let Some(i) = line.find("RemoteLogSegmentMetadata{") else {
                continue;
            };
            out.push(parse_metadata(
                &line[i + "RemoteLogSegmentMetadata{".len()..],
            )?);
        }
    }
    Ok(out)
}

/// The fields of one `RemoteLogSegmentMetadata{...}` body: `key=value` at brace depth 0.
fn parse_metadata(body: &str) -> Result<TheirMetadata, String> {
    let mut fields = BTreeMap::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut parts = Vec::new();
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    for p in parts {
        if let Some((k, v)) = p.trim().split_once('=') {
            fields.insert(k.to_string(), v.to_string());
        }
    }
    let id = fields
        .get("remoteLogSegmentId")
        .ok_or_else(|| format!("no remoteLogSegmentId in {body}"))?;
    let uuid = id
        .rsplit("id=")
        .next()
        .map(|u| u.trim_end_matches('}').to_string())
        .ok_or_else(|| format!("no id in {id}"))?;
    Ok(TheirMetadata { uuid, fields })
}

/// Kafka's `{epoch=offset, ...}` map.
fn parse_epochs(v: &str) -> BTreeMap<i32, i64> {
    v.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|e| {
            let (a, b) = e.trim().split_once('=')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// `LocalTieredStorage`'s files of our partition: uuid → (start offset, suffix → bytes).
fn remote_files(remote: &Path) -> Result<BTreeMap<String, (i64, Files)>, String> {
    let root = remote.join("kafka-tiered-storage");
    let mut out: BTreeMap<String, (i64, Files)> = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(&root) else {
        return Ok(out);
    };
    for d in rd.flatten() {
        let name = d.file_name().to_string_lossy().to_string();
        if !name.starts_with(&format!("{TOPIC}-0-")) {
            continue;
        }
        for f in std::fs::read_dir(d.path())
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let fname = f.file_name().to_string_lossy().to_string();
            let Some(suffix) = SUFFIXES.iter().find(|x| fname.ends_with(*x)) else {
                continue;
            };
            let stem = &fname[..fname.len() - suffix.len()];
            let Some((start, uuid)) = stem.split_once('-') else {
                continue;
            };
            let start: i64 = start.parse().map_err(|_| format!("remote file {fname}"))?;
            let bytes = std::fs::read(f.path()).map_err(|e| e.to_string())?;
            let e = out
                .entry(uuid.to_string())
                .or_insert_with(|| (start, Files::new()));
            e.1.insert(suffix, bytes);
        }
    }
    Ok(out)
}

/// The names of the segment files (`.log`, indexes, producer snapshots) of a partition
/// directory, sorted: what local deletion removes.
fn segment_files(dir: &Path) -> Result<BTreeSet<String>, String> {
    Ok(std::fs::read_dir(dir)
        .map_err(|e| format!("{dir:?}: {e}"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            [".log", ".index", ".timeindex", ".txnindex", ".snapshot"]
                .iter()
                .any(|x| n.ends_with(x))
        })
        .collect())
}

fn count_logs(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .count()
    })
}

fn remote_log_count(remote: &Path) -> usize {
    let root = remote.join("kafka-tiered-storage");
    std::fs::read_dir(&root).map_or(0, |rd| {
        rd.flatten()
            .filter(|d| d.file_name().to_string_lossy().starts_with(TOPIC))
            .map(|d| count_logs(&d.path()))
            .sum()
    })
}

/// The partition's entry of a Kafka checkpoint file of the log directory.
fn checkpoint_entry(path: &Path) -> Result<i64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path:?}: {e}"))?;
    text.lines()
        .skip(2)
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w[..] {
                [t, "0", o] if t == TOPIC => o.parse().ok(),
                _ => None,
            }
        })
        .ok_or_else(|| format!("{path:?} has no entry for {TOPIC}-0"))
}

pub fn run(ctx: &Ctx) -> Result<String, String> {
    let t0 = Instant::now();
    let home = ctx.scratch.join("k8-tiered");
    let _ = std::fs::remove_dir_all(&home);
    let remote = home.join("remote");
    std::fs::create_dir_all(&remote).map_err(|e| e.to_string())?;
    let rsm_dir = format!("rsm.config.dir={}", remote.display());
    let extra = [
        "remote.log.storage.system.enable=true",
        "remote.log.storage.manager.class.name=org.apache.kafka.server.log.remote.storage.LocalTieredStorage",
        rsm_dir.as_str(),
        "remote.log.metadata.manager.listener.name=PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor=1",
        "rlmm.config.remote.log.metadata.topic.num.partitions=1",
        "remote.log.manager.task.interval.ms=500",
        "log.retention.check.interval.ms=500",
        // The log manager's first retention pass 500 ms after start-up, not 30 s.
        "log.initial.task.delay.ms=500",
    ];
    let mut broker = Broker::create(&ctx.jvm, &home.join("broker"), &extra)?;
    let result = scenario(ctx, &home, &remote, &mut broker, t0);
    let stopped = broker.stop();
    let line = result?;
    stopped?;
    Ok(format!("{line}; {:.1} s", t0.elapsed().as_secs_f64()))
}

fn scenario(
    ctx: &Ctx,
    home: &Path,
    remote: &Path,
    broker: &mut Broker,
    _t0: Instant,
) -> Result<String, String> {
    let mut diffs: Vec<String> = Vec::new();
    broker.start()?;
    let bootstrap = broker.bootstrap();
    let mut create = vec![s("tier-create"), bootstrap.clone(), s(TOPIC)];
    for kv in [
        format!("internal.segment.bytes={SEGMENT_BYTES}"),
        format!("index.interval.bytes={INDEX_INTERVAL}"),
        s("remote.storage.enable=true"),
        s("remote.log.copy.disable=true"),
        // Kafka 4.4 refuses a copy-disabled topic whose local retention differs from its
        // full retention: both unlimited until the copy is enabled.
        s("local.retention.bytes=-1"),
        s("local.retention.ms=-1"),
        s("retention.ms=-1"),
        s("retention.bytes=-1"),
        s("file.delete.delay.ms=0"),
        s("remote.copy.lag.ms=0"),
        s("remote.copy.lag.bytes=0"),
    ] {
        create.push(kv);
    }
    oracle(ctx, &create, 120)?;
    // Two halves with a clean restart between: the second half is led at a new epoch, so
    // that uploaded segments carry two epochs and the checkpoint prefixes grow.
    let rounds = ctx.scale.max(1);
    let mut produced = 0u64;
    for half in 0..2u64 {
        if half == 1 {
            broker.stop()?;
            broker.start()?;
        }
        let out = oracle(
            ctx,
            &[
                s("tier-produce"),
                broker.bootstrap(),
                s(TOPIC),
                (ctx.seed + half).to_string(),
                rounds.to_string(),
            ],
            600,
        )?;
        produced += out
            .trim()
            .strip_prefix("produced ")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("tier-produce printed {out:?}"))?;
    }

    // The copy before the first upload: the broker stops cleanly, copy still disabled.
    broker.stop()?;
    let name = format!("{TOPIC}-0");
    let data = broker.data();
    let theirs_dir = data.join(&name);
    if remote_log_count(remote) != 0 {
        return Err("the broker uploaded before remote.log.copy.disable was lifted".into());
    }
    let copy = home.join("copy").join(&name);
    ours::copy_dir(&theirs_dir, &copy)?;
    let rp = checkpoint_entry(&data.join("recovery-point-offset-checkpoint"))?;
    let ls = checkpoint_entry(&data.join("log-start-offset-checkpoint")).unwrap_or(0);
    if !data.join(".kafka_cleanshutdown").exists() {
        diffs.push("the broker left no .kafka_cleanshutdown marker".into());
    }
    for (file, text) in [
        (".kafka_cleanshutdown", String::new()),
        (segment::log::RECOVERY_POINT_FILE, format!("0\n{rp}\n")),
        (segment::log::LOG_START_OFFSET_FILE, format!("0\n{ls}\n")),
    ] {
        std::fs::write(copy.join(file), text).map_err(|e| e.to_string())?;
    }
    let copy_segments = count_logs(&copy);
    // A second copy for our own local retention pass.
    let copy_retention = home.join("copy-retention").join(&name);
    ours::copy_dir(&copy, &copy_retention)?;

    // The broker uploads and deletes locally.
    broker.start()?;
    let bootstrap = broker.bootstrap();
    oracle(
        ctx,
        &[
            s("tier-alter"),
            bootstrap.clone(),
            s(TOPIC),
            s("remote.log.copy.disable=false"),
            s("local.retention.bytes=1"),
            format!("local.retention.ms={LOCAL_RETENTION_MS}"),
        ],
        120,
    )?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = (usize::MAX, usize::MAX);
    let mut since = Instant::now();
    loop {
        let now = (remote_log_count(remote), count_logs(&theirs_dir));
        if now != last {
            last = now;
            since = Instant::now();
        } else if now.0 > 0 && since.elapsed() > Duration::from_secs(5) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the broker's uploads and local deletions did not settle in 120 s: {} remote, {} local segments",
                now.0, now.1
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let broker_local = segment_files(&theirs_dir)?;
    // What the broker answers now: ListOffsets, and consumers from offset 0 (below its
    // local log start: served from the remote tier) at both isolation levels.
    let their_offsets: BTreeMap<String, i64> =
        oracle(ctx, &[s("tier-offsets"), bootstrap.clone(), s(TOPIC)], 120)?
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(' ')?;
                Some((k.to_string(), v.trim().parse().ok()?))
            })
            .collect();
    let answers_path = home.join("answers.json");
    oracle(
        ctx,
        &[
            s("answers"),
            bootstrap.clone(),
            answers_path.display().to_string(),
            s("5"),
            s(TOPIC),
        ],
        600,
    )?;
    let answers: Vec<PartitionAnswers> = k1::load_answers(&answers_path)?;
    let answer = answers
        .into_iter()
        .find(|a| a.topic == TOPIC && a.partition == 0)
        .ok_or("the consumers answered nothing for our partition")?;
    broker.stop()?;

    // What the broker uploaded: the metadata records, and LocalTieredStorage's files.
    let metas = their_metadata(ctx, &data)?;
    let rfiles = remote_files(remote)?;

    // Ours over the copy.
    let log = Log::open(&copy, config()).map_err(|e| format!("Log::open {copy:?}: {e}"))?;
    let ours_up = our_uploads(ctx, &log, &copy)?;
    let ours_names: Vec<(i64, i64)> = ours_up.iter().map(|u| (u.base, u.end)).collect();
    let field = |m: &TheirMetadata, k: &str| m.fields.get(k).cloned().unwrap_or_default();
    let their_names: Vec<(i64, i64)> = metas
        .iter()
        .map(|m| {
            (
                field(m, "startOffset").parse().unwrap_or(-1),
                field(m, "endOffset").parse().unwrap_or(-1),
            )
        })
        .collect();
    if ours_names != their_names {
        diffs.push(format!(
            "tierable segments: ours {} {ours_names:?}, the broker uploaded {} {their_names:?}",
            ours_names.len(),
            their_names.len()
        ));
    }
    let (mut files_compared, mut bytes_compared) = (0usize, 0u64);
    for (o, m) in ours_up.iter().zip(&metas) {
        let om = &o.metadata;
        let mut checks: Vec<(&str, String, String)> = vec![
            (
                "startOffset",
                om.start_offset().to_string(),
                field(m, "startOffset"),
            ),
            (
                "endOffset",
                om.end_offset().to_string(),
                field(m, "endOffset"),
            ),
            ("brokerId", om.broker_id().to_string(), field(m, "brokerId")),
            (
                "maxTimestampMs",
                om.max_timestamp_ms().to_string(),
                field(m, "maxTimestampMs"),
            ),
            (
                "segmentSizeInBytes",
                om.segment_size_in_bytes().to_string(),
                field(m, "segmentSizeInBytes"),
            ),
            (
                "segmentLeaderEpochs",
                format!("{:?}", om.segment_leader_epochs()),
                format!("{:?}", parse_epochs(&field(m, "segmentLeaderEpochs"))),
            ),
            ("state", s("COPY_SEGMENT_STARTED"), field(m, "state")),
            (
                "customMetadata",
                s("Optional.empty"),
                field(m, "customMetadata"),
            ),
        ];
        if m.fields.contains_key("txnIdxEmpty") {
            checks.push((
                "txnIdxEmpty",
                om.is_txn_idx_empty().to_string(),
                field(m, "txnIdxEmpty"),
            ));
        }
        for (k, ours_v, theirs_v) in checks {
            if ours_v != theirs_v {
                diffs.push(format!(
                    "segment {}: RemoteLogSegmentMetadata.{k}: ours {ours_v}, the broker's {theirs_v}",
                    o.base
                ));
            }
        }
        let Some((start, files)) = rfiles.get(&m.uuid) else {
            diffs.push(format!(
                "segment {}: LocalTieredStorage holds no files of remote segment {}",
                o.base, m.uuid
            ));
            continue;
        };
        if *start != o.base {
            diffs.push(format!(
                "segment {}: LocalTieredStorage names remote segment {} at {start}",
                o.base, m.uuid
            ));
        }
        for suffix in SUFFIXES {
            match (o.files.get(suffix), files.get(suffix)) {
                (None, None) => {}
                (Some(a), Some(b)) if a == b => {
                    files_compared += 1;
                    bytes_compared += a.len() as u64;
                }
                (Some(a), Some(b)) => diffs.push(format!(
                    "segment {}: uploaded {suffix} differs: ours {} bytes, the broker's {} (first difference at byte {:?})",
                    o.base,
                    a.len(),
                    b.len(),
                    a.iter().zip(b).position(|(x, y)| x != y)
                )),
                (Some(a), None) => diffs.push(format!(
                    "segment {}: we upload a {suffix} ({} bytes), the broker uploaded none",
                    o.base,
                    a.len()
                )),
                (None, Some(b)) => diffs.push(format!(
                    "segment {}: the broker uploaded a {suffix} ({} bytes), we have none",
                    o.base,
                    b.len()
                )),
            }
        }
    }

    // Local deletion: through the highest offset the broker uploaded.
    let highest = their_names.iter().map(|n| n.1).max().unwrap_or(-1);
    let deleted = log
        .delete_local_through(highest, highest)
        .map_err(|e| format!("delete_local_through({highest}): {e}"))?;
    let ours_local = segment_files(&copy)?;
    if ours_local != broker_local {
        let only_ours: Vec<&String> = ours_local.difference(&broker_local).collect();
        let only_theirs: Vec<&String> = broker_local.difference(&ours_local).collect();
        diffs.push(format!(
            "local files after deletion through {highest}: only ours {only_ours:?}, only the broker's {only_theirs:?}"
        ));
    }

    // Local retention: our own pass (local.retention.bytes 1) on the second copy, told the
    // broker's highest uploaded offset, must delete what the broker's retention deleted,
    // and move the local log start, never the log start.
    let retained = Log::open(&copy_retention, config())
        .map_err(|e| format!("Log::open {copy_retention:?}: {e}"))?;
    retained.update_highest_offset_in_remote_storage(highest);
    let retention_deleted = retained
        .delete_old_segments()
        .map_err(|e| format!("delete_old_segments: {e}"))?;
    let ours_retained = segment_files(&copy_retention)?;
    if ours_retained != broker_local {
        let only_ours: Vec<&String> = ours_retained.difference(&broker_local).collect();
        let only_theirs: Vec<&String> = broker_local.difference(&ours_retained).collect();
        diffs.push(format!(
            "local files after local retention (highest uploaded {highest}): only ours {only_ours:?}, only the broker's {only_theirs:?}"
        ));
    }
    for (what, ours_v, theirs_v) in [
        (
            "log start offset",
            retained.log_start_offset(),
            their_offsets.get("earliest"),
        ),
        (
            "local log start offset",
            retained.local_log_start_offset(),
            their_offsets.get("earliest-local"),
        ),
    ] {
        if Some(&ours_v) != theirs_v {
            diffs.push(format!(
                "after our local retention pass: {what} {ours_v}, the broker's {theirs_v:?}"
            ));
        }
    }
    retained.close().map_err(|e| e.to_string())?;

    // ListOffsets: ours on the copy after the local deletion.
    for (name, ts) in [
        ("earliest", ListedOffset::EARLIEST_TIMESTAMP),
        ("latest", ListedOffset::LATEST_TIMESTAMP),
        ("earliest-local", ListedOffset::EARLIEST_LOCAL_TIMESTAMP),
        ("latest-tiered", ListedOffset::LATEST_TIERED_TIMESTAMP),
        (
            "earliest-pending-upload",
            ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP,
        ),
    ] {
        let ours_v = log
            .fetch_offset_by_timestamp(ts)
            .map_err(|e| format!("fetch_offset_by_timestamp({ts}): {e}"))?
            .map_or(-1, |l| l.offset);
        match their_offsets.get(name) {
            Some(&v) if v == ours_v => {}
            other => diffs.push(format!(
                "ListOffsets {ts} ({name}): ours {ours_v}, the broker's {other:?}"
            )),
        }
    }

    // Fetches from offset 0: below our local log start from the remote segments
    // (LocalTieredStorage's files through our RemoteSegment), above it from our Log.
    let mut remote_segs = Vec::new();
    for m in &metas {
        let Some((start, files)) = rfiles.get(&m.uuid) else {
            continue;
        };
        let end: i64 = field(m, "endOffset").parse().unwrap_or(-1);
        let get = |x: &str| files.get(x).cloned().unwrap_or_default();
        let indexes = RemoteIndexes::from_bytes(
            *start,
            get(".index"),
            get(".timeindex"),
            files.get(".txnindex").map(|t| Arc::from(t.clone())),
        )
        .map_err(|e| format!("remote indexes of segment {start}: {e}"))?;
        remote_segs.push(
            RemoteSegment::new(*start, end, get(".log"), Arc::new(indexes))
                .map_err(|e| format!("remote segment {start}: {e}"))?,
        );
    }
    let local_start = log.local_log_start_offset();
    let leo = log.log_end_offset();
    let drop_aborted = ctx.sabotaged("k8-tiered-fetch-aborted");
    let mut fetches = (0usize, 0usize);
    let mut consume = |committed: bool,
                       visit: &mut dyn FnMut(&segment::record::Record<'_>)|
     -> Result<(), String> {
        let isolation = if committed {
            FetchIsolation::TxnCommitted
        } else {
            FetchIsolation::HighWatermark
        };
        let mut fetch = |offset: i64| -> Result<Fetched, String> {
            if offset >= local_start {
                fetches.1 += 1;
                let f = log
                    .read_with(offset, 1 << 20, isolation, true)
                    .map_err(|e| format!("read_with {isolation:?} at {offset}: {e}"))?;
                return Ok((f.records, f.aborted_transactions));
            }
            fetches.0 += 1;
            let i = remote_segs
                .iter()
                .position(|r| r.base_offset() <= offset && offset <= r.end_offset())
                .ok_or_else(|| format!("no remote segment holds offset {offset}"))?;
            let f = read_remote_kafka(&remote_segs[i..], offset, 1 << 20, true, committed)
                .map_err(|e| format!("read_remote at {offset}: {e}"))?;
            let mut aborted = f.aborted_transactions;
            if let (Some((from, upper)), Some(list)) = (f.local_aborted_search, aborted.as_mut()) {
                list.extend(
                    log.collect_aborted_txns(from, upper)
                        .map_err(|e| format!("collect_aborted_txns({from}, {upper}): {e}"))?,
                );
            }
            if drop_aborted {
                if let Some(list) = aborted.as_mut() {
                    list.clear();
                }
            }
            Ok((f.records, aborted))
        };
        k5::consume_fetches(
            0,
            leo,
            committed,
            "our fetch",
            &mut fetch,
            &mut |_| {},
            visit,
        )
    };
    let mut ru: Vec<(i64, i64, u32)> = Vec::new();
    consume(false, &mut |r| {
        ru.push((r.offset, r.timestamp, ours::record_hash(r)))
    })?;
    let mut rc: Vec<i64> = Vec::new();
    consume(true, &mut |r| rc.push(r.offset))?;
    if ru != answer.records {
        diffs.push(format!(
            "read_uncommitted from offset 0: ours {} records (remote tier, then our Log), the broker's consumer {}; {}",
            ru.len(),
            answer.records.len(),
            k5::first_diff(&ru, &answer.records)
        ));
    }
    if rc != answer.committed {
        diffs.push(format!(
            "read_committed from offset 0: ours {} records (remote tier, then our Log), the broker's consumer {}; {}",
            rc.len(),
            answer.committed.len(),
            k5::first_diff(&rc, &answer.committed)
        ));
    }
    log.close().map_err(|e| e.to_string())?;

    let epochs: BTreeSet<i32> = ours_up
        .iter()
        .flat_map(|u| u.metadata.segment_leader_epochs().keys().copied())
        .collect();
    let line = format!(
        "produced {produced} records in {copy_segments} segments (leader epochs {epochs:?} uploaded); the broker uploaded {} segments ({} remote files), ours named {}; {files_compared} files ({bytes_compared} bytes) byte-identical; local deletion: ours {deleted} segments (delete_local_through), {retention_deleted} (local retention), {} segment files left on all sides; ListOffsets {their_offsets:?}; consumers read {} records, {} committed: ours the same in {} remote and {} local fetches; {} differences",
        metas.len(),
        rfiles.values().map(|f| f.1.len()).sum::<usize>(),
        ours_up.len(),
        broker_local.len(),
        answer.records.len(),
        answer.committed.len(),
        fetches.0,
        fetches.1,
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", diffs.join("\n  ")))
    }
}
