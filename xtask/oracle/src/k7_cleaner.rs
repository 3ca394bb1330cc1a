//! K7 (`k7-cleaner`): the log cleaner's plan, ours (`segment::clean`) against Kafka 4.4's
//! (`docs/kafka-behaviour.md#log-cleaner`). Seeded random compacted logs are written by
//! Kafka's own `UnifiedLog` (the helper's `CleanerOracle`, in-process, a manual clock):
//! batches of keyed records with timestamps in and out of order (a third of the logs
//! compressed, in every codec; in half the logs also transactions, committed, aborted or
//! left open), rolls by
//! `segment.bytes`, by a small `segment.index.bytes` and by hand, a high watermark below
//! the log end and a log start offset moved by `DeleteRecords`. Kafka then answers
//! `cleanableOffsets` (with a checkpoint that is missing, below the log start, inside the
//! log or past its end), `maxCompactionDelay`, `LogToClean`, `Cleaner.buildOffsetMap`
//! into a `SkimpyOffsetMap` of a small size (so that many cleans stop part way), and
//! `groupSegmentsBySize` up to the map's end offset, as `Cleaner.doClean` calls them.
//!
//! Our side opens the directory Kafka closed (a clean-shutdown marker, the recovery point
//! and the log start offset written for it, so that it reads Kafka's indexes as they
//! are), with the high watermark Kafka had, takes the last stable offset of Kafka's live
//! log (a reopened log has forgotten the transactions completed above the high
//! watermark, which hold a live log's down), and answers the same from
//! `LogSummary::of`: the bounds, every answer and the ratio's bits are compared, and the
//! map is built by `build_offset_map` from the same segments.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::clean::{
    build_offset_map, cleanable_offsets, group_segments_by_size, max_compaction_delay,
    read_cleaner_checkpoint, write_cleaner_checkpoint, CleanError, CleanSabotage, CleanerConfig,
    CompactionConfig, LogSummary, LogToClean, OffsetMap, OffsetMapCapacity, TopicPartition,
};
use segment::fs::RealFs;

use segment::{Log, LogConfig};

use super::Ctx;

/// One generated case.
struct Case {
    id: String,
    now: i64,
    segment_bytes: u32,
    index_bytes: u32,
    index_interval: u32,
    compaction: CompactionConfig,
    /// Lines of ops, in the helper's input language.
    ops: Vec<String>,
    hw: i64,
    checkpoint: Option<i64>,
    map_bytes: u32,
    load_factor: f64,
    /// The producers' codec (`None`: uncompressed). A compressed case indexes every batch
    /// and never rolls by size, so that recompressed sizes change no file layout.
    codec: Option<&'static str>,
    /// Whether the log holds legacy (magic 0/1) message sets, appended as a follower
    /// copies an old leader's (`legacy` ops).
    legacy: bool,
}

/// The fetch size of a case's reads: 1000 bytes, or 1 MiB (a segment per fetch) when
/// compressed, so that recompressed sizes do not change what a fetch holds.
fn fetch_bytes(c: &Case) -> u64 {
    if c.codec.is_some() {
        1 << 20
    } else {
        1000
    }
}

/// A read line without its batches' CRCs and sizes (`BASE-LAST` each): a recompressed
/// batch has its own bytes on each side.
fn without_crc_and_size(line: &str) -> String {
    let Some((head, rest)) = line.split_once(" aborted ") else {
        return line.to_string();
    };
    let Some((prefix, batches)) = head.rsplit_once(' ') else {
        return line.to_string();
    };
    let batches: Vec<String> = batches
        .split(',')
        .map(|b| b.splitn(3, '-').take(2).collect::<Vec<_>>().join("-"))
        .collect();
    format!("{prefix} {} aborted {rest}", batches.join(","))
}

fn gen_case(rng: &mut StdRng, i: usize) -> Case {
    let now = 1_700_000_000_000 + rng.gen_range(0..1_000_000_000i64);
    let keys = rng.gen_range(2..40);
    let mut ops = Vec::new();
    let mut leo = 0i64;
    let mut ts = now - rng.gen_range(0..3_600_000i64);
    // Transactions in half the logs: producers 100..103, each open one ended by a
    // COMMIT or ABORT marker (one may stay open: the last stable offset stops there).
    let txns = i % 2 == 1;
    // Legacy message sets in a third of the logs (with and without transactions): most
    // of their non-transactional batches are magic 0 or 1, some keyless records among
    // them.
    let legacy = i % 3 == 2;
    let mut open: Vec<i64> = Vec::new();
    for _ in 0..rng.gen_range(3..60) {
        if rng.gen_bool(0.08) {
            ops.push("roll".to_string());
        }
        if txns && rng.gen_bool(0.35) {
            let pid = 100 + rng.gen_range(0..4i64);
            if open.contains(&pid) && rng.gen_bool(0.5) {
                let kind = if rng.gen_bool(0.5) { "ABORT" } else { "COMMIT" };
                ops.push(format!("marker {pid} {kind} {}", ts.min(now)));
                open.retain(|&p| p != pid);
                leo += 1;
            } else {
                let n = rng.gen_range(1..4);
                let mut line = format!("txn {pid} {}", ts.min(now));
                for _ in 0..n {
                    let _ = write!(line, " k{}", rng.gen_range(0..keys));
                }
                ops.push(line);
                if !open.contains(&pid) {
                    open.push(pid);
                }
                leo += n;
            }
            continue;
        }
        let n = rng.gen_range(1..5);
        let mut line = String::new();
        // Mostly increasing, sometimes back in time.
        ts += rng.gen_range(-20_000..60_000i64);
        let old = legacy && rng.gen_bool(0.7);
        if old {
            let magic = rng.gen_range(0..2u8);
            let lat = u8::from(magic == 1 && rng.gen_bool(0.3));
            let _ = write!(line, "legacy {magic} {lat} {}", ts.min(now));
        } else {
            let _ = write!(line, "batch {}", ts.min(now));
        }
        for _ in 0..n {
            // `-kN`: a tombstone of kN; `_`: a keyless record (legacy only).
            let tomb = if rng.gen_bool(0.15) { "-" } else { "" };
            if old && rng.gen_bool(0.1) {
                line.push_str(" _");
                continue;
            }
            let _ = write!(line, " {tomb}k{}", rng.gen_range(0..keys));
        }
        ops.push(line);
        leo += n;
    }
    // Close all but maybe one open transaction.
    let keep_open = usize::from(rng.gen_bool(0.3));
    while open.len() > keep_open {
        let pid = open.remove(0);
        let kind = if rng.gen_bool(0.5) { "ABORT" } else { "COMMIT" };
        ops.push(format!("marker {pid} {kind} {}", ts.min(now)));
        leo += 1;
    }
    let hw = leo - rng.gen_range(0..=leo.min(5));
    ops.push(format!("hw {hw}"));
    let log_start = if rng.gen_bool(0.25) {
        rng.gen_range(0..=hw)
    } else {
        0
    };
    if log_start > 0 {
        ops.push(format!("logstart {log_start}"));
    }
    let checkpoint = match i % 5 {
        0 => None,
        1 if log_start > 0 => Some(log_start - 1),
        1 => Some(-1),
        2 => Some(leo + rng.gen_range(1..10)),
        _ => Some(rng.gen_range(log_start..=leo)),
    };
    let lag = |rng: &mut StdRng| rng.gen_range(1..3_600_000i64);
    let min_lag = if rng.gen_bool(0.4) { lag(rng) } else { 0 };
    let max_lag = if rng.gen_bool(0.4) {
        lag(rng).max(min_lag)
    } else {
        i64::MAX
    };
    let (map_bytes, load_factor) = match rng.gen_range(0..6) {
        0 => (24, 0.9),
        1 => (48, 0.5),
        2 => (
            24 * rng.gen_range(2..12),
            [0.5, 0.75, 0.9, 1.0][rng.gen_range(0..4)],
        ),
        3 => (rng.gen_range(48..2000), 0.9),
        _ => (24 * 1024, 0.9),
    };
    let segment_bytes = [300, 700, 2000, 1 << 20][rng.gen_range(0..4)];
    let index_bytes = [64, 120, 10 << 20][rng.gen_range(0..3)];
    let index_interval = [0, 150, 4096][rng.gen_range(0..3)];
    // A third of the logs compressed, in every codec alike.
    let codec =
        (rng.gen_range(0..3) == 0).then(|| ["gzip", "snappy", "lz4", "zstd"][rng.gen_range(0..4)]);
    // Legacy message sets have no zstd.
    let codec = codec.map(|c| if legacy && c == "zstd" { "gzip" } else { c });
    if let Some(codec) = codec {
        ops.insert(0, format!("codec {codec}"));
    }
    Case {
        id: format!("c{i}"),
        now,
        segment_bytes: if codec.is_some() {
            1 << 20
        } else {
            segment_bytes
        },
        index_bytes,
        index_interval: if codec.is_some() { 0 } else { index_interval },
        compaction: CompactionConfig {
            min_cleanable_dirty_ratio: rng.gen_range(0.0..1.0),
            min_compaction_lag_ms: min_lag,
            max_compaction_lag_ms: max_lag,
            delete_retention_ms: [0, 1_000, 86_400_000][rng.gen_range(0..3)],
        },
        ops,
        hw,
        checkpoint,
        map_bytes,
        load_factor,
        codec,
        legacy,
    }
}

fn case_text(c: &Case, dir: &Path) -> String {
    let mut s = format!("case {} {} {}\n", c.id, dir.display(), c.now);
    for (k, v) in [
        ("cleanup.policy", "compact".to_string()),
        ("internal.segment.bytes", c.segment_bytes.to_string()),
        ("segment.index.bytes", c.index_bytes.to_string()),
        ("index.interval.bytes", c.index_interval.to_string()),
        ("retention.ms", "-1".to_string()),
        (
            "min.cleanable.dirty.ratio",
            c.compaction.min_cleanable_dirty_ratio.to_string(),
        ),
        (
            "min.compaction.lag.ms",
            c.compaction.min_compaction_lag_ms.to_string(),
        ),
        (
            "max.compaction.lag.ms",
            c.compaction.max_compaction_lag_ms.to_string(),
        ),
        (
            "delete.retention.ms",
            c.compaction.delete_retention_ms.to_string(),
        ),
    ] {
        let _ = writeln!(s, "config {k} {v}");
    }
    for op in &c.ops {
        let _ = writeln!(s, "{op}");
    }
    let cp = c.checkpoint.map_or("none".to_string(), |o| o.to_string());
    let _ = writeln!(s, "checkpoint {cp}");
    let _ = writeln!(s, "map {} {}", c.map_bytes, c.load_factor);
    s.push_str("end\n");
    s
}

/// What a run of the cases saw, for the result line.
#[derive(Default, Debug)]
struct Coverage {
    resets: usize,
    mid_segment_dirty: usize,
    min_lag_bound: usize,
    overdue: usize,
    cleanable: usize,
    partial_maps: usize,
    map_errors: usize,
    multi_groups: usize,
    split_groups: usize,
    aborted_txns: usize,
    lso_bound: usize,
}

/// Our answers, as the helper's lines (without the id).
fn ours(
    c: &Case,
    dir: &Path,
    ctx: &Ctx,
    cov: &mut Coverage,
    kafka_lso: i64,
) -> Result<Vec<String>, String> {
    let config = LogConfig {
        segment_bytes: u64::from(c.segment_bytes),
        max_index_size: c.index_bytes as usize,
        index_interval_bytes: u64::from(c.index_interval),
        retention_ms: -1,
        compact: true,
        ..LogConfig::default()
    };
    // The case's clock, as Kafka's: a system clock would expire the producers at the
    // open, and our close would write a snapshot without them for the clean step.
    let log = Log::options()
        .manual_high_watermark(c.hw)
        .clock(std::sync::Arc::new(segment::time::MockTime::new(c.now)))
        .open(dir, config.clone())
        .map_err(|e| format!("our open: {e}"))?;
    let mut summary = LogSummary::of(&log).map_err(|e| format!("our summary: {e}"))?;
    let mut out = Vec::new();
    out.push(format!(
        "bounds {} {} {}",
        summary.log_start_offset,
        summary.log_end_offset,
        log.high_watermark(),
    ));
    // The last stable offset is an input: Kafka's live log's. A reopened log (ours, or
    // Kafka's after a restart) has forgotten the transactions completed above the high
    // watermark, which hold a live log's last stable offset down.
    summary.last_stable_offset = kafka_lso;
    let o = cleanable_offsets(&summary, c.checkpoint, c.now, &c.compaction);
    out.push(format!(
        "offsets {} {} {}",
        o.first_dirty_offset, o.first_uncleanable_dirty_offset, o.force_update_checkpoint
    ));
    let delay = max_compaction_delay(&summary, o.first_dirty_offset, c.now, &c.compaction);
    out.push(format!("delay {delay}"));
    let mut ltc = LogToClean::new(
        &summary,
        o.first_dirty_offset,
        o.first_uncleanable_dirty_offset,
        delay > 0,
    );
    if ctx.sabotaged("k7-cleaner-straddle") {
        // Damage: the segment holding the first dirty offset is not counted as clean.
        ltc.clean_bytes = summary
            .segments
            .iter()
            .zip(summary.segments.iter().skip(1))
            .filter(|(_, next)| next.base_offset <= o.first_dirty_offset)
            .map(|(s, _)| s.size)
            .sum();
        ltc.total_bytes = ltc.clean_bytes + ltc.cleanable_bytes;
        ltc.cleanable_ratio = if ltc.total_bytes == 0 {
            f64::NAN
        } else {
            ltc.cleanable_bytes as f64 / ltc.total_bytes as f64
        };
    }
    out.push(format!(
        "ltc {} {} {} {} {:x} {}",
        ltc.first_uncleanable_offset,
        ltc.clean_bytes,
        ltc.cleanable_bytes,
        ltc.total_bytes,
        ltc.cleanable_ratio.to_bits(),
        ltc.need_compaction_now
    ));
    // Coverage.
    cov.resets += usize::from(o.force_update_checkpoint);
    cov.aborted_txns += usize::from(c.ops.iter().any(|op| op.contains(" ABORT ")));
    cov.lso_bound += usize::from(
        summary.last_stable_offset < summary.active_base_offset()
            && o.first_uncleanable_dirty_offset == summary.last_stable_offset,
    );
    cov.overdue += usize::from(delay > 0);
    cov.cleanable += usize::from(ltc.is_cleanable(c.compaction.min_cleanable_dirty_ratio));
    if !summary
        .segments
        .iter()
        .any(|s| s.base_offset == o.first_dirty_offset)
        && o.first_dirty_offset < summary.log_end_offset
    {
        cov.mid_segment_dirty += 1;
    }
    if c.compaction.min_compaction_lag_ms > 0
        && o.first_uncleanable_dirty_offset
            < summary
                .last_stable_offset
                .min(summary.active_base_offset())
                .max(o.first_dirty_offset)
    {
        cov.min_lag_bound += 1;
    }
    if ltc.cleanable_bytes == 0 {
        out.push("map skipped".into());
        log.close().map_err(|e| e.to_string())?;
        return Ok(out);
    }
    let mut memory = c.map_bytes;
    if ctx.sabotaged("k7-cleaner-map-slots") {
        // Damage: a slot charged its MD5 only (16 bytes), not the offset too.
        memory = memory / 16 * 24;
    }
    let capacity = match OffsetMapCapacity::new(memory, c.load_factor) {
        Ok(cap) => cap,
        Err(CleanError::OffsetMapTooSmall { slots, .. }) => {
            // The documented deviation: Kafka 4.4 runs with a map that takes no key.
            cov.map_errors += 1;
            out.push(format!("map too-small {slots}"));
            log.close().map_err(|e| e.to_string())?;
            return Ok(out);
        }
        Err(e) => return Err(format!("our map: {e}")),
    };
    let mut map = OffsetMap::new(capacity);
    let built = build_offset_map(
        &log,
        &mut map,
        o.first_dirty_offset,
        ltc.first_uncleanable_offset,
        config.max_message_bytes,
    )
    .map_err(|e| format!("our offset map build: {e}"))?;
    let (end_offset, full) = (built.end_offset, built.full);
    cov.partial_maps += usize::from(full);
    out.push(format!(
        "map {} {} {} {end_offset}",
        map.slots(),
        map.capacity().max_entries(),
        map.size()
    ));
    let grouped = summary.segments_in(0, end_offset).unwrap_or(&[]);
    let groups = group_segments_by_size(
        grouped,
        u64::from(c.segment_bytes),
        u64::from(c.index_bytes),
        ltc.first_uncleanable_offset,
    );
    cov.multi_groups += usize::from(groups.iter().any(|g| g.len() > 1));
    cov.split_groups += usize::from(groups.len() > 1);
    let text: Vec<String> = groups
        .iter()
        .map(|g| {
            grouped[g.clone()]
                .iter()
                .map(|s| s.base_offset.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    out.push(format!(
        "groups {}",
        if text.is_empty() {
            "-".to_string()
        } else {
            text.join(";")
        }
    ));
    log.close().map_err(|e| e.to_string())?;
    Ok(out)
}

/// How one of our read lines compares with Kafka's.
enum ReadDiff {
    Equal,
    /// A read_committed consumer drops the same batches with either aborted list.
    SameDrops,
    /// Kafka's list leaves out an aborted transaction of the fetched batches; ours drops
    /// exactly those Kafka's `.log` shows aborted.
    KafkaExposesAborted,
    Differs,
}

/// Our two rounds: each one's `clean` line and checkpoint entry; our errors; our reads.
type OurRounds = (Vec<(String, Option<i64>)>, Vec<String>, Reads);

/// One fetched batch as a read_committed consumer sees it: base offset, producer id,
/// whether it is transactional data, and whether it is an ABORT marker.
#[derive(Clone, Copy)]
struct FetchedBatch {
    base: i64,
    producer_id: i64,
    transactional_data: bool,
    abort_marker: bool,
}

/// Our read lines, and for each read_committed line the batches it returned (keyed by the
/// line up to its aborted list, which Kafka's equal line shares).
struct Reads {
    lines: Vec<String>,
    batches: std::collections::HashMap<String, Vec<FetchedBatch>>,
}

/// The batches a read_committed consumer drops from a fetch, given the fetch's aborted
/// transactions (`PID:FIRST,...`, `-` or `none`): Kafka's consumer (`CompletedFetch`)
/// adds a producer to its aborted set once a batch reaches the transaction's first
/// offset, drops that producer's transactional data batches while it is in the set, and
/// removes it at its ABORT marker (`docs/kafka-behaviour.md#fetch-aborted-transactions`).
fn consumer_drops(aborted: &str, batches: &[FetchedBatch]) -> Option<Vec<i64>> {
    let mut pending: Vec<(i64, i64)> = Vec::new();
    if aborted != "-" && aborted != "none" {
        for t in aborted.split(',') {
            let (pid, first) = t.split_once(':')?;
            pending.push((first.parse().ok()?, pid.parse().ok()?));
        }
    }
    pending.sort_unstable();
    let mut pending = pending.into_iter().peekable();
    let mut set = std::collections::HashSet::new();
    let mut dropped = Vec::new();
    for b in batches {
        if b.producer_id < 0 {
            continue;
        }
        // Kafka consumes the aborted transactions up to the batch's last offset; the
        // fetch's batches are whole, so its base suffices for the order of the test.
        while let Some(&(first, pid)) = pending.peek() {
            if first > b.base {
                break;
            }
            set.insert(pid);
            pending.next();
        }
        if b.abort_marker {
            set.remove(&b.producer_id);
        } else if b.transactional_data && set.contains(&b.producer_id) {
            dropped.push(b.base);
        }
    }
    Some(dropped)
}

/// Every record of the cleaned log at every isolation level, in the helper's `read` line
/// format: from the log start, fetches of 1000 bytes (at least one batch) until one
/// returns nothing.
fn reads(log: &Log, drop_aborted: bool, fetch_bytes: u64) -> Result<Reads, String> {
    use segment::{BatchFormat as _, FetchIsolation, KafkaBatchFormat};
    let mut out = vec![format!("read lso {}", log.last_stable_offset())];
    let mut fetched = std::collections::HashMap::new();
    for (name, iso) in [
        ("LOG_END", FetchIsolation::LogEnd),
        ("HIGH_WATERMARK", FetchIsolation::HighWatermark),
        ("TXN_COMMITTED", FetchIsolation::TxnCommitted),
    ] {
        let mut offset = log.log_start_offset();
        for _ in 0..100_000 {
            let d = log
                .read_with(offset, fetch_bytes, iso, true)
                .map_err(|e| format!("our read {name} at {offset}: {e}"))?;
            let mut batches = Vec::new();
            let mut seen = Vec::new();
            let mut next = -1;
            for b in segment::record::batches_from(&d.records, 0) {
                let b = b.map_err(|e| e.to_string())?;
                let marker = KafkaBatchFormat::end_txn_marker(b.as_bytes(), b.position())
                    .map_err(|e| e.to_string())?;
                seen.push(FetchedBatch {
                    base: b.base_offset(),
                    producer_id: b.producer_id(),
                    transactional_data: b.is_transactional() && !b.is_control(),
                    abort_marker: marker.is_some_and(|m| {
                        m.control_type == segment::record::ControlRecordType::Abort
                    }),
                });
                // Kafka's `baseOffset()` of a compressed legacy wrapper is its first inner
                // record's offset (our `base_offset` is the wrapper's).
                let base = match b.as_legacy() {
                    Some(l) => l.deep_base_offset().map_err(|e| e.to_string())?,
                    None => b.base_offset(),
                };
                batches.push(format!(
                    "{}-{}-{:x}-{}",
                    base,
                    b.last_offset(),
                    b.checksum(),
                    b.size_in_bytes()
                ));
                next = b.next_offset();
            }
            let mut d = d;
            if drop_aborted {
                if let Some(a) = d.aborted_transactions.as_mut().filter(|a| !a.is_empty()) {
                    a.remove(0);
                }
            }
            let aborted = match &d.aborted_transactions {
                None => "none".to_string(),
                Some(a) if a.is_empty() => "-".to_string(),
                Some(a) => a
                    .iter()
                    .map(|t| format!("{}:{}", t.producer_id, t.first_offset))
                    .collect::<Vec<_>>()
                    .join(","),
            };
            let empty = batches.is_empty();
            let line = format!(
                "read {name} {offset} {}",
                if empty {
                    "-".to_string()
                } else {
                    batches.join(",")
                }
            );
            out.push(format!("{line} aborted {aborted}"));
            fetched.insert(line, seen);
            if empty {
                break;
            }
            offset = next;
        }
    }
    Ok(Reads {
        lines: out,
        batches: fetched,
    })
}

/// What the clean step compared.
#[derive(Default, Debug)]
struct CleanTally {
    cleans: usize,
    files: usize,
    bytes: u64,
    stats: usize,
    checkpoints: usize,
    aborted: usize,
    failed: usize,
    reads: usize,
    lso_differs: usize,
    aborted_lists_equivalent: usize,
    /// Batches recompressed by each side, equal decoded (compressed cases).
    recompressed: u64,
    /// Cleaned compressed logs.
    compressed_cleans: usize,
    aborted_list_example: String,
    /// read_committed fetches where Kafka's aborted list leaves out a transaction whose
    /// data the fetch returned and ours lists it (see `truth_drops`).
    kafka_exposes_aborted: usize,
    kafka_exposes_example: String,
    tombstones: usize,
    horizons: usize,
    /// Cleaned logs with legacy message sets.
    legacy_cleans: usize,
    /// Of them, compressed.
    legacy_compressed_cleans: usize,
    /// Legacy batches in the cleaned logs' files, Kafka's side (above the clean's end).
    legacy_left: usize,
    /// Legacy batches the cleans rewrote as v2 or dropped (Kafka's side: those before
    /// less those left).
    legacy_gone: usize,
}

/// The clean step, our side: the case's checkpoint written to the parent directory's
/// `cleaner-offset-checkpoint`, our log opened from the copy of Kafka's closed directory
/// (the plan step closed it since), the plan taken again and, when Kafka's rule would
/// clean, `Log::clean`; the answer in the helper's `clean` line format, and our
/// checkpoint's entry after it.
fn our_clean(c: &Case, dir: &Path, hw: i64, ctx: &Ctx) -> Result<OurRounds, String> {
    let parent = dir.parent().ok_or("no parent")?;
    let (topic, partition) = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit_once('-'))
        .ok_or("partition dir name")?;
    let tp = TopicPartition::new(topic, partition.parse().map_err(|_| "partition number")?);
    let config = LogConfig {
        segment_bytes: u64::from(c.segment_bytes),
        max_index_size: c.index_bytes as usize,
        index_interval_bytes: u64::from(c.index_interval),
        retention_ms: -1,
        compact: true,
        ..LogConfig::default()
    };
    // Kafka's clock is the case's: a system clock would expire every producer at the
    // open (their timestamps are the case's), and with them the batches a clean keeps
    // for them.
    let log = Log::options()
        .manual_high_watermark(hw)
        .clock(std::sync::Arc::new(segment::time::MockTime::new(c.now)))
        .open(dir, config)
        .map_err(|e| format!("our reopen for the clean: {e}"))?;
    let mut rounds = Vec::new();
    let mut failures = Vec::new();
    for round in 0..2 {
        // Round 1 from the case's checkpoint at the case's time; round 2 from none (the
        // whole log dirty again) once the delete horizons of round 1 have passed.
        let (checkpoint, now) = if round == 0 {
            (c.checkpoint, c.now)
        } else {
            (None, c.now + c.compaction.delete_retention_ms + 1)
        };
        let mut cps = read_cleaner_checkpoint(&RealFs, parent).map_err(|e| e.to_string())?;
        match checkpoint {
            Some(o) => cps.insert(tp.clone(), o),
            None => cps.remove(&tp),
        };
        write_cleaner_checkpoint(&RealFs, parent, &cps).map_err(|e| e.to_string())?;
        let summary = LogSummary::of(&log).map_err(|e| e.to_string())?;
        let (_, ltc) = LogToClean::plan(&summary, checkpoint, now, &c.compaction);
        let slots = c.map_bytes / 24;
        let line = if ltc.cleanable_bytes > 0 && f64::from(slots) * c.load_factor >= 1.0 {
            let cleaner = CleanerConfig {
                dedupe_buffer_size: i64::from(c.map_bytes),
                dedupe_buffer_load_factor: c.load_factor,
                io_buffer_size: 128 * 1024,
                ..CleanerConfig::default()
            };
            let sabotage = CleanSabotage {
                keep_aborted: ctx.sabotaged("k7-cleaner-keep-aborted"),
                drop_tombstone_early: ctx.sabotaged("k7-cleaner-early-tombstone"),
                recompressed_value: ctx.sabotaged("k7-cleaner-recompressed-value"),
                legacy_copied: ctx.sabotaged("k7-cleaner-legacy-copied"),
                legacy_base_offset: ctx.sabotaged("k7-cleaner-legacy-base-offset"),
            };
            match log.clean_sabotaged(&cleaner, &c.compaction, now, sabotage) {
                // Kafka's clean fails too (its line says `failed`): e.g. the cleaned
                // segment's time index is full with a small segment.index.bytes.
                Err(e) => {
                    failures.push(format!("round {}: {e}", round + 1));
                    "clean failed".to_string()
                }
                Ok(st) => format!(
                    "clean {} {} {} {} {} {}",
                    st.end_offset,
                    st.messages_read,
                    st.bytes_read,
                    st.messages_written,
                    st.bytes_written,
                    st.invalid_messages_read
                ),
            }
        } else {
            "clean skipped".to_string()
        };
        let cp = read_cleaner_checkpoint(&RealFs, parent)
            .map_err(|e| e.to_string())?
            .get(&tp)
            .copied();
        rounds.push((line, cp));
    }
    let reads = reads(
        &log,
        ctx.sabotaged("k7-cleaner-fetch-aborted"),
        fetch_bytes(c),
    )?;
    log.close().map_err(|e| e.to_string())?;
    Ok((rounds, failures, reads))
}

/// Whether a batch of the directory's `.log` files carries a delete horizon (bit 6).
fn has_delete_horizon(dir: &Path) -> bool {
    let Ok(names) = segment_files(dir) else {
        return false;
    };
    names.iter().filter(|n| n.ends_with(".log")).any(|n| {
        let bytes = std::fs::read(dir.join(n)).unwrap_or_default();
        segment::record::batches_from(&bytes, 0)
            .map_while(Result::ok)
            .any(|b| b.as_v2().is_some_and(|v| v.delete_horizon_ms().is_some()))
    })
}

/// The base offsets of the aborted transactional data batches in the directory's `.log`
/// files (Kafka's, byte for byte ours): each producer's transactional data batches up to
/// its next control batch, when that marker is an ABORT. Data of a transaction with no
/// marker (open, or its COMMIT marker cleaned away) is not aborted.
fn aborted_data_batches(dir: &Path) -> std::collections::HashSet<i64> {
    use segment::record::ControlRecordType;
    let mut aborted = std::collections::HashSet::new();
    let mut open: std::collections::HashMap<i64, Vec<i64>> = std::collections::HashMap::new();
    let Ok(names) = segment_files(dir) else {
        return aborted;
    };
    // Segment file names sort by base offset (20 digits).
    for n in names.iter().filter(|n| n.ends_with(".log")) {
        let bytes = std::fs::read(dir.join(n)).unwrap_or_default();
        for b in segment::record::batches_from(&bytes, 0).map_while(Result::ok) {
            let Some(v) = b.as_v2() else { continue };
            if !v.is_transactional() {
                continue;
            }
            if !v.is_control_batch() {
                open.entry(v.producer_id())
                    .or_default()
                    .push(v.base_offset());
                continue;
            }
            let pending = open.remove(&v.producer_id()).unwrap_or_default();
            let abort = v.records().ok().and_then(|mut rs| rs.next()).and_then(|r| {
                let r = r.ok()?;
                ControlRecordType::parse_key(r.key(), 0).ok()
            }) == Some(ControlRecordType::Abort);
            if abort {
                aborted.extend(pending);
            }
        }
    }
    aborted
}

/// The legacy (magic 0/1) batches of the directory's `.log` files.
fn legacy_batches(dir: &Path) -> usize {
    let Ok(names) = segment_files(dir) else {
        return 0;
    };
    names
        .iter()
        .filter(|n| n.ends_with(".log"))
        .map(|n| {
            let bytes = std::fs::read(dir.join(n)).unwrap_or_default();
            segment::record::batches_from(&bytes, 0)
                .map_while(Result::ok)
                .filter(|b| b.as_legacy().is_some())
                .count()
        })
        .sum()
}

/// The segment files (`.log`, `.index`, `.timeindex`, `.txnindex`) of a directory.
fn segment_files(dir: &Path) -> Result<std::collections::BTreeSet<String>, String> {
    let mut out = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let n = e.map_err(|e| e.to_string())?.file_name();
        let n = n.to_string_lossy().into_owned();
        if [".log", ".index", ".timeindex", ".txnindex"]
            .iter()
            .any(|x| n.ends_with(x))
        {
            out.insert(n);
        }
    }
    Ok(out)
}

/// Compares every segment file of Kafka's cleaned directory with ours, byte for byte (a
/// missing `.txnindex` counts as an empty one: both sides create them lazily). The
/// active segment's `.index` and `.timeindex` are left out: a clean never touches them,
/// and Kafka's reopened log leaves them preallocated at its close.
///
/// In a compressed case (`compressed`), a `.log` that differs is compared batch by batch:
/// each pair equal whole, or both compressed with every header field but the length and
/// the CRC equal and every record decoded equal (each side's CRC valid for its own bytes):
/// Kafka recompresses with its Java compressors, we with ours
/// (`docs/kafka-behaviour.md#leader-recompression`). A `.index` that differs is compared
/// by its entries' offsets and the ordinal of the batch each position points at.
fn compare_files(
    kafka: &Path,
    ours: &Path,
    tally: &mut CleanTally,
    compressed: bool,
) -> Result<Vec<String>, String> {
    let mut diffs = Vec::new();
    let names: std::collections::BTreeSet<String> = segment_files(kafka)?
        .union(&segment_files(ours)?)
        .cloned()
        .collect();
    let active = names
        .iter()
        .filter(|n| n.ends_with(".log"))
        .max()
        .map(|n| n.trim_end_matches(".log").to_string());
    for n in names {
        if active
            .as_deref()
            .is_some_and(|a| n == format!("{a}.index") || n == format!("{a}.timeindex"))
        {
            continue;
        }
        let read = |d: &Path| std::fs::read(d.join(&n)).ok();
        let (k, o) = (read(kafka), read(ours));
        let (k, o) = match (k, o) {
            (Some(k), Some(o)) => (k, o),
            (k, o) if n.ends_with(".txnindex") => (k.unwrap_or_default(), o.unwrap_or_default()),
            (k, o) => {
                diffs.push(format!(
                    "file {n}: Kafka's {}, ours {}",
                    if k.is_some() { "present" } else { "missing" },
                    if o.is_some() { "present" } else { "missing" }
                ));
                continue;
            }
        };
        tally.files += 1;
        tally.bytes += k.len() as u64;
        if k != o && compressed && n.ends_with(".log") {
            match same_batches(&k, &o) {
                Ok(recompressed) => {
                    tally.recompressed += recompressed;
                    continue;
                }
                Err(e) => {
                    diffs.push(format!("file {n} differs: {e}"));
                    continue;
                }
            }
        }
        if k != o && compressed && n.ends_with(".index") {
            let logs = n.replace(".index", ".log");
            let kl = std::fs::read(kafka.join(&logs)).unwrap_or_default();
            let ol = std::fs::read(ours.join(&logs)).unwrap_or_default();
            match (index_by_ordinal(&k, &kl), index_by_ordinal(&o, &ol)) {
                (Ok(a), Ok(b)) if a == b => continue,
                (a, b) => {
                    diffs.push(format!(
                        "file {n} differs by batch ordinal: Kafka's {a:?}, ours {b:?}"
                    ));
                    continue;
                }
            }
        }
        if k != o {
            let at = k
                .iter()
                .zip(&o)
                .position(|(a, b)| a != b)
                .unwrap_or(k.len().min(o.len()));
            diffs.push(format!(
                "file {n} differs: {} bytes Kafka's, {} ours, first difference at byte {at}",
                k.len(),
                o.len()
            ));
        }
    }
    Ok(diffs)
}

/// `kafka` and `ours` hold the same batches, each equal whole or recompressed (see
/// [`compare_files`]); the number of recompressed pairs, or the first difference.
fn same_batches(kafka: &[u8], ours: &[u8]) -> Result<u64, String> {
    use segment::record::batches_from;
    let k: Vec<_> = batches_from(kafka, 0)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("Kafka's: {e}"))?;
    let o: Vec<_> = batches_from(ours, 0)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("ours: {e}"))?;
    if k.len() != o.len() {
        return Err(format!("{} batches Kafka's, {} ours", k.len(), o.len()));
    }
    let mut recompressed = 0;
    for (kb, ob) in k.iter().zip(&o) {
        if kb.as_bytes() == ob.as_bytes() {
            continue;
        }
        let at = kb.base_offset();
        let (Some(kv), Some(ov)) = (kb.as_v2(), ob.as_v2()) else {
            return Err(format!("the batch at offset {at} differs (not v2)"));
        };
        let header = |b: &segment::record::RecordBatch<'_>| {
            (
                b.base_offset(),
                b.last_offset(),
                b.partition_leader_epoch(),
                b.attributes(),
                b.base_timestamp(),
                b.max_timestamp(),
                b.producer_id(),
                b.producer_epoch(),
                b.base_sequence(),
                b.records_count(),
            )
        };
        if kv.compression().ok() == Some(segment::record::CompressionType::None)
            || header(kv) != header(ov)
            || !kb.is_valid()
            || !ob.is_valid()
        {
            return Err(format!(
                "the batch at offset {at} differs in more than its compressed bytes"
            ));
        }
        let records = |b: &segment::record::FileBatch<'_>| -> Result<Vec<_>, String> {
            b.records()
                .map_err(|e| e.to_string())?
                .map(|r| r.map(|r| r.into_owned()).map_err(|e| e.to_string()))
                .collect()
        };
        if records(kb)? != records(ob)? {
            return Err(format!("the batch at offset {at} holds other records"));
        }
        recompressed += 1;
    }
    Ok(recompressed)
}

/// An offset index's entries as (relative offset, ordinal of the batch its position
/// points at in `log`).
fn index_by_ordinal(index: &[u8], log: &[u8]) -> Result<Vec<(i32, usize)>, String> {
    let positions: Vec<u64> = segment::record::batches_from(log, 0)
        .map(|b| b.map(|b| b.position()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    index
        .chunks_exact(8)
        .map(|e| {
            let rel = i32::from_be_bytes([e[0], e[1], e[2], e[3]]);
            let pos = u64::from(u32::from_be_bytes([e[4], e[5], e[6], e[7]]));
            positions
                .iter()
                .position(|&p| p == pos)
                .map(|ord| (rel, ord))
                .ok_or_else(|| format!("position {pos} starts no batch"))
        })
        .collect()
}

pub fn run(ctx: &Ctx) -> Result<String, String> {
    let dir = ctx.scratch.join("k7");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let seed = ctx.seed;
    let replay =
        format!("seed {seed}, replay with `cargo xtask kafka --only k7-cleaner --seed {seed}`");
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b37);
    let n = 40 * ctx.scale as usize;
    let cases: Vec<Case> = (0..n).map(|i| gen_case(&mut rng, i)).collect();
    let dirs: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("clean{i}-0"))).collect();
    // Our side reads the copies the helper made of Kafka's closed directories (Kafka's
    // own are cleaned by Kafka afterwards).
    let our_dirs: Vec<PathBuf> = (0..n)
        .map(|i| dir.join("ours").join(format!("clean{i}-0")))
        .collect();
    let _ = std::fs::remove_file(dir.join("ours").join("cleaner-offset-checkpoint"));

    let mut input = String::new();
    for (c, d) in cases.iter().zip(&dirs) {
        input.push_str(&case_text(c, d));
    }
    let cases_file = dir.join("cases.txt");
    let answers_file = dir.join("answers.txt");
    std::fs::write(&cases_file, input).map_err(|e| e.to_string())?;
    ctx.jvm.run(
        "oracle.CleanerOracle",
        &[
            cases_file.display().to_string(),
            answers_file.display().to_string(),
        ],
        Duration::from_secs(300),
    )?;
    let text = std::fs::read_to_string(&answers_file).map_err(|e| e.to_string())?;
    let mut kafka: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for line in text.lines() {
        if let Some((id, rest)) = line.split_once(' ') {
            kafka.entry(id).or_default().push(rest);
        }
    }
    let mut cov = Coverage::default();
    let mut diffs = Vec::new();
    let mut compared = 0usize;
    let mut tally = CleanTally::default();
    for ((c, kd), d) in cases.iter().zip(&dirs).zip(&our_dirs) {
        let Some(k) = kafka.get(c.id.as_str()) else {
            diffs.push(format!("{}: no answers from Kafka", c.id));
            continue;
        };
        if k.last() != Some(&"closed") {
            diffs.push(format!(
                "{}: Kafka's case did not finish: {:?}",
                c.id,
                k.last()
            ));
            continue;
        }
        let kafka_clean: Vec<&str> = k
            .iter()
            .copied()
            .filter(|l| l.starts_with("clean"))
            .collect();
        let kafka_reads: Vec<&str> = k
            .iter()
            .copied()
            .filter(|l| l.starts_with("read "))
            .collect();
        let k: Vec<&str> = k[..k.len() - 1]
            .iter()
            .copied()
            .filter(|l| !l.starts_with("clean") && !l.starts_with("read "))
            .collect();
        let k = &k[..];

        // Kafka's bounds: what our open needs to read its directory as Kafka left it.
        let bounds: Vec<i64> = k
            .first()
            .and_then(|l| l.strip_prefix("bounds "))
            .map(|l| l.split(' ').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        let [log_start, leo, kafka_hw, kafka_lso] = bounds[..] else {
            diffs.push(format!("{}: no bounds from Kafka: {k:?}", c.id));
            continue;
        };
        for (name, text) in [
            (".kafka_cleanshutdown", String::new()),
            ("recovery-point", format!("0\n{leo}\n")),
            ("log-start-offset", format!("0\n{log_start}\n")),
        ] {
            std::fs::write(d.join(name), text).map_err(|e| e.to_string())?;
        }
        let ours = match ours(c, d, ctx, &mut cov, kafka_lso) {
            Ok(o) => o,
            Err(e) => {
                diffs.push(format!("{}: {e}", c.id));
                continue;
            }
        };
        // Where ours refuses a map that takes no key (a documented deviation), Kafka's
        // runs with 0 keys a clean: its map line must say so, and its groups are dropped.
        let mut kafka_lines: Vec<String> = Vec::new();
        for l in k.iter() {
            let f: Vec<&str> = l.split(' ').collect();
            if f.first() == Some(&"bounds") {
                // The last stable offset was given to our side.
                kafka_lines.push(f.get(..4).unwrap_or_default().join(" "));
                continue;
            }
            if ours.last().is_some_and(|o| o.starts_with("map too-small")) {
                if f.first() == Some(&"groups") {
                    continue;
                }
                if f.first() == Some(&"map") && f.get(2) == Some(&"0") {
                    kafka_lines.push(format!("map too-small {}", f.get(1).unwrap_or(&"?")));
                    continue;
                }
            }
            kafka_lines.push(l.to_string());
        }
        compared += ours.len().min(kafka_lines.len());
        if let Some(at) = ours
            .iter()
            .zip(&kafka_lines)
            .position(|(a, b)| a != b)
            .or((ours.len() != kafka_lines.len()).then(|| ours.len().min(kafka_lines.len())))
        {
            diffs.push(format!(
                "{}: ours `{}`, Kafka's `{}` (case: checkpoint {:?}, now {}, {:?}, dedupe buffer {} bytes x {})",
                c.id,
                ours.get(at).map_or("(none)", String::as_str),
                kafka_lines.get(at).map_or("(none)", String::as_str),
                c.checkpoint,
                c.now,
                c.compaction,
                c.map_bytes,
                c.load_factor
            ));
        }
        // The clean step: two rounds, each compared by its stats line and checkpoint,
        // then every segment file.
        // Before our clean: the directory as Kafka closed it, before Kafka's clean.
        let legacy_before = if c.legacy { legacy_batches(d) } else { 0 };
        let (ours_rounds, our_errors, our_reads) = match our_clean(c, d, kafka_hw, ctx) {
            Ok(x) => x,
            Err(e) => {
                diffs.push(format!("{}: {e}", c.id));
                continue;
            }
        };
        if kafka_clean.len() != ours_rounds.len() {
            diffs.push(format!("{}: Kafka's clean lines: {kafka_clean:?}", c.id));
            continue;
        }
        let mut cleaned = false;
        for (round, ((ours_clean, our_cp), kafka_clean)) in
            ours_rounds.iter().zip(&kafka_clean).enumerate()
        {
            let kafka_clean = kafka_clean.replacen("clean2 ", "clean ", 1);
            tally.stats += 1;
            // A recompressed batch has its own size on each side: the bytes written, and
            // in round 2 the bytes read of round 1's output, are not compared in a
            // compressed case (the counts of records are).
            let stats_of = |l: &str| -> String {
                if c.codec.is_none() {
                    return l.to_string();
                }
                l.split(' ')
                    .enumerate()
                    .map(|(i, f)| if i == 3 || i == 5 { "*" } else { f })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            if stats_of(ours_clean) != stats_of(&kafka_clean) {
                diffs.push(format!(
                    "{}: clean: ours `{ours_clean}`, Kafka's `{kafka_clean}` (round {}) {our_errors:?}",
                    c.id,
                    round + 1
                ));
            }
            if kafka_clean == "clean skipped" || kafka_clean == "clean failed" {
                tally.failed += usize::from(kafka_clean == "clean failed");
                continue;
            }
            cleaned = true;
            tally.cleans += 1;
            let kafka_end: Option<i64> = kafka_clean.split(' ').nth(1).and_then(|x| x.parse().ok());
            tally.checkpoints += 1;
            if *our_cp != kafka_end {
                diffs.push(format!(
                    "{}: cleaner-offset-checkpoint: ours {our_cp:?}, Kafka's end offset {kafka_end:?} (round {})",
                    c.id,
                    round + 1
                ));
            }
        }
        // Every record at every isolation level, cleaned or not. A read_committed fetch
        // is compared only where both logs have the same last stable offset: our log was
        // reopened twice, Kafka's once, and a reopened log forgets the transactions
        // completed above the high watermark that hold a live log's down (see the plan).
        let Reads {
            lines: our_reads,
            batches: our_batches,
        } = our_reads;
        // A compressed case's batches are compared by their offsets here (their bytes are
        // compared, decoded, with the files).
        let (our_reads, kafka_reads, our_batches) = if c.codec.is_some() {
            (
                our_reads.iter().map(|l| without_crc_and_size(l)).collect(),
                kafka_reads
                    .iter()
                    .map(|l| without_crc_and_size(l))
                    .collect::<Vec<String>>(),
                our_batches
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            without_crc_and_size(&format!("{k} aborted -"))
                                .replace(" aborted -", ""),
                            v,
                        )
                    })
                    .collect(),
            )
        } else {
            (
                our_reads,
                kafka_reads.iter().map(|l| (*l).to_string()).collect(),
                our_batches,
            )
        };
        let kafka_reads: Vec<&str> = kafka_reads.iter().map(String::as_str).collect();
        let lso_differs = our_reads.first().map(String::as_str) != kafka_reads.first().copied();
        tally.lso_differs += usize::from(lso_differs);
        let keep = |l: &&str| {
            !(lso_differs && (l.starts_with("read TXN_COMMITTED") || l.starts_with("read lso")))
        };
        let our_reads: Vec<&str> = our_reads.iter().map(String::as_str).filter(keep).collect();
        let kafka_reads: Vec<&str> = kafka_reads.into_iter().filter(keep).collect();
        tally.reads += our_reads.len().min(kafka_reads.len());
        // A read_committed fetch whose aborted list differs from Kafka's on the same
        // batches is equal when a read_committed consumer drops the same batches with
        // either list. Our reopened log can rebuild a segment whose index Kafka's close
        // left zero-padded (our load check distrusts it, Kafka's sanity check does not);
        // the rebuilt `.txnindex`, like Kafka's own `recoverSegment`'s, has no entry for a
        // transaction begun below the log start, whose data no fetch returns
        // (`docs/kafka-behaviour.md#recovered-txn-index`). Any other difference fails.
        // For a read_committed line: the fetched batches, and what a consumer drops from
        // them given our aborted list and Kafka's (`None` for any other line, or one that
        // does not parse).
        let drops = |a: &str, b: &str| {
            if !a.starts_with("read TXN_COMMITTED") {
                return None;
            }
            let (la, xa) = a.split_once(" aborted ")?;
            let (lb, xb) = b.split_once(" aborted ")?;
            let batches = our_batches.get(la).filter(|_| la == lb)?;
            Some((
                batches,
                consumer_drops(xa, batches)?,
                consumer_drops(xb, batches)?,
            ))
        };
        // Kafka's fetch can also omit a transaction that begins at the fetched batches:
        // its `fetchUpperBoundOffset` binary-searches the reopened active segment's
        // zero-padded `.index` and can answer an upper bound at or below the fetch offset,
        // so its consumer would deliver aborted data
        // (`docs/kafka-behaviour.md#zero-padded-upper-bound`). Such a line is accepted
        // when our consumer drops exactly the fetched batches that Kafka's `.log` files
        // show aborted (ABORT marker of the producer's next control batch), and Kafka's
        // drops fewer.
        let aborted_truth = std::cell::OnceCell::new();
        let classify = |a: &str, b: &str| -> ReadDiff {
            if a == b {
                return ReadDiff::Equal;
            }
            let Some((batches, ours, kafka)) = drops(a, b) else {
                return ReadDiff::Differs;
            };
            if ours == kafka {
                return ReadDiff::SameDrops;
            }
            let truth = aborted_truth.get_or_init(|| aborted_data_batches(kd));
            let want: Vec<i64> = batches
                .iter()
                .filter(|x| x.transactional_data && truth.contains(&x.base))
                .map(|x| x.base)
                .collect();
            if ours == want && kafka.len() < want.len() && kafka.iter().all(|x| want.contains(x)) {
                ReadDiff::KafkaExposesAborted
            } else {
                ReadDiff::Differs
            }
        };
        let mut first_diff = None;
        for (i, (a, b)) in our_reads.iter().zip(&kafka_reads).enumerate() {
            match classify(a, b) {
                ReadDiff::Equal => {}
                ReadDiff::SameDrops => {
                    tally.aborted_lists_equivalent += 1;
                    if tally.aborted_list_example.is_empty() {
                        tally.aborted_list_example = format!("{}: ours `{a}`, Kafka's `{b}`", c.id);
                    }
                }
                ReadDiff::KafkaExposesAborted => {
                    tally.kafka_exposes_aborted += 1;
                    if tally.kafka_exposes_example.is_empty() {
                        tally.kafka_exposes_example =
                            format!("{}: ours `{a}`, Kafka's `{b}`", c.id);
                    }
                }
                ReadDiff::Differs => {
                    first_diff.get_or_insert(i);
                }
            }
        }
        if let Some(at) = first_diff
            .or((our_reads.len() != kafka_reads.len())
                .then(|| our_reads.len().min(kafka_reads.len())))
        {
            diffs.push(format!(
                "{}: read: ours `{}`, Kafka's `{}`",
                c.id,
                our_reads.get(at).copied().unwrap_or("(none)"),
                kafka_reads.get(at).copied().unwrap_or("(none)")
            ));
        }
        if !cleaned {
            continue;
        }
        tally.aborted += usize::from(c.ops.iter().any(|op| op.contains(" ABORT ")));
        tally.compressed_cleans += usize::from(c.codec.is_some());
        tally.tombstones += usize::from(c.ops.iter().any(|op| op.contains(" -k")));
        tally.horizons += usize::from(has_delete_horizon(kd));
        if c.legacy {
            tally.legacy_cleans += 1;
            tally.legacy_compressed_cleans += usize::from(c.codec.is_some());
            let left = legacy_batches(kd);
            tally.legacy_left += left;
            tally.legacy_gone += legacy_before.saturating_sub(left);
        }
        match compare_files(kd, d, &mut tally, c.codec.is_some()) {
            Ok(f) => diffs.extend(f.into_iter().map(|f| format!("{}: {f}", c.id))),
            Err(e) => diffs.push(format!("{}: {e}", c.id)),
        }
    }

    for (what, n) in [
        ("checkpoint reset", cov.resets),
        ("first dirty offset inside a segment", cov.mid_segment_dirty),
        ("min.compaction.lag.ms bound", cov.min_lag_bound),
        ("partial clean (full map)", cov.partial_maps),
        ("map that takes no key", cov.map_errors),
        ("group of several segments", cov.multi_groups),
        ("aborted transaction", cov.aborted_txns),
        ("last stable offset bound", cov.lso_bound),
    ] {
        if n == 0 {
            diffs.push(format!("the generated logs have no {what}: {cov:?}"));
        }
    }
    if tally.cleans == 0 {
        diffs.push(format!("no case was cleaned: {tally:?}"));
    }
    if tally.legacy_cleans == 0 || tally.legacy_compressed_cleans == 0 || tally.legacy_gone == 0 {
        diffs.push(format!(
            "no legacy log, or no compressed legacy log, was cleaned: {tally:?}"
        ));
    }
    if tally.compressed_cleans == 0 || tally.recompressed == 0 {
        diffs.push(format!(
            "no compressed log was cleaned with a recompressed batch: {tally:?}"
        ));
    }
    let clean_line = format!(
        "{} cleans compared with Kafka's Cleaner.doClean ({} segment files, {} bytes, byte for byte; {} stats lines; {} checkpoints; {} fetches at every isolation level ({} logs' read_committed fetches left out: another last stable offset; {} read_committed aborted lists differ with the same batches dropped by a consumer{}; {} where Kafka's list leaves out an aborted transaction of the fetched batches and ours drops exactly those its .log shows aborted{}); {} cleaned logs with an aborted transaction, {} with tombstones, {} with a delete horizon left, {} compressed ({} batches recompressed by each side, equal decoded); {} with legacy magic 0/1 message sets ({} compressed; {} legacy batches rewritten as v2 or dropped by Kafka's cleans, {} left above their ends); {} rounds failed on both sides (a cleaned time index full, or a legacy batch at the high watermark with nothing kept))",
        tally.cleans,
        tally.files,
        tally.bytes,
        tally.stats,
        tally.checkpoints,
        tally.reads,
        tally.lso_differs,
        tally.aborted_lists_equivalent,
        if tally.aborted_list_example.is_empty() {
            String::new()
        } else {
            format!(", e.g. {}", tally.aborted_list_example)
        },
        tally.kafka_exposes_aborted,
        if tally.kafka_exposes_example.is_empty() {
            String::new()
        } else {
            format!(", e.g. {}", tally.kafka_exposes_example)
        },
        tally.aborted,
        tally.tombstones,
        tally.horizons,
        tally.compressed_cleans,
        tally.recompressed,
        tally.legacy_cleans,
        tally.legacy_compressed_cleans,
        tally.legacy_gone,
        tally.legacy_left,
        tally.failed,
    );
    let line = format!(
        "seed {seed}: {} logs ({} with aborted transactions, {} with legacy message sets), {compared} answers compared ({} held back by the last stable offset, {} checkpoint resets, {} first dirty offsets inside a segment, {} held back by min.compaction.lag.ms, {} overdue by max.compaction.lag.ms, {} cleanable, {} partial cleans, {} maps that take no key (Kafka 4.4 runs them, ours refuses them: documented), {} with a group of several segments, {} with several groups), {} mismatches",
        cases.len(),
        cov.aborted_txns,
        cases.iter().filter(|c| c.legacy).count(),
        cov.lso_bound,
        cov.resets,
        cov.mid_segment_dirty,
        cov.min_lag_bound,
        cov.overdue,
        cov.cleanable,
        cov.partial_maps,
        cov.map_errors,
        cov.multi_groups,
        cov.split_groups,
        diffs.len()
    );
    let line = format!("{line}; {clean_line}");
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line} ({replay}):\n  {}", diffs.join("\n  ")))
    }
}
