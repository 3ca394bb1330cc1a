//! K1: Kafka writes, we read. A broker with small segments runs the workload; what it
//! answered is compared with what our crates answer on a copy of its data, after a clean
//! shutdown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use segment::dump::DumpOptions;
use segment::LogConfig;
use serde::Deserialize;

use super::broker::{Broker, Jvm};
use super::ours::{self, Rec};
use super::Ctx;

/// Topics of the workload and their `index.interval.bytes` / segment size (as created by
/// `Workload.produce`).
pub const TOPICS: &[(&str, u64, u64)] = &[
    ("codecs", 1024, 128 * 1024),
    ("txn", 512, 64 * 1024),
    ("appendtime", 1024, 64 * 1024),
];

/// What the broker answered for one partition (written by `Answers.run`).
#[derive(Deserialize, Debug, Clone)]
pub struct PartitionAnswers {
    pub topic: String,
    pub partition: u32,
    pub earliest: i64,
    pub latest: i64,
    pub max_timestamp: (i64, i64),
    /// (offset, timestamp, content hash) of every record read_uncommitted returned.
    pub records: Vec<(i64, i64, u32)>,
    /// Offsets read_committed returned.
    pub committed: Vec<i64>,
    /// (target, offset, timestamp); offset −1 for "none".
    pub times: Vec<(i64, i64, i64)>,
}

#[derive(Deserialize, Debug)]
struct AnswersFile {
    partitions: Vec<PartitionAnswers>,
}

/// Reads a helper answers file.
pub fn load_answers(path: &Path) -> Result<Vec<PartitionAnswers>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path:?}: {e}"))?;
    let a: AnswersFile = serde_json::from_str(&text).map_err(|e| format!("{path:?}: {e}"))?;
    Ok(a.partitions)
}

/// The config our `Log` opens a partition of `topic` with.
pub fn config_for(topic: &str) -> LogConfig {
    let (interval, seg) = TOPICS
        .iter()
        .find(|(t, _, _)| *t == topic)
        .map(|(_, i, s)| (*i, *s))
        .unwrap_or((4096, 100 * 1024 * 1024));
    LogConfig {
        segment_bytes: seg,
        index_interval_bytes: interval,
        retention_ms: -1,
        ..LogConfig::default()
    }
}

/// Counts for the scenario line.
#[derive(Default, Debug)]
pub struct Tally {
    pub partitions: usize,
    pub segments: usize,
    pub batches: usize,
    pub records: usize,
    pub answers: usize,
    pub diffs: Vec<String>,
    /// Compression ids seen in the compared partitions.
    pub codecs: std::collections::BTreeSet<u8>,
    /// Transactional data batches and transaction markers seen.
    pub transactional: usize,
    pub markers: usize,
    /// Justified differences (each with its reason).
    pub notes: Vec<String>,
    /// What each workload topic's partition held, for the coverage check.
    pub per_topic: BTreeMap<String, Coverage>,
}

/// What one compared workload partition held.
#[derive(Default, Debug, Clone)]
pub struct Coverage {
    /// Data records (control records not counted).
    pub records: usize,
    pub segments: usize,
    pub markers: usize,
    pub codecs: std::collections::BTreeSet<u8>,
}

/// What the K1 workload (`Workload.produce`) writes per topic at `scale`: (topic, data
/// records, codec ids, transaction markers at least, segments at least). The record counts
/// are the workload's own (at least: a plain producer's retry can duplicate a batch).
pub fn expected_coverage(scale: u32) -> Vec<(&'static str, usize, Vec<u8>, usize, usize)> {
    let s = scale as usize;
    vec![
        ("codecs", 5 * 120 * 4 * s, vec![0, 1, 2, 3, 4], 0, 2 * s),
        // 6·scale rounds of 130 records, two roll-spanning transactions of 505, then 50.
        (
            "txn",
            130 * 6 * s + 2 * 505 + 50,
            vec![2, 3, 4],
            12 * s + 4,
            2 * s,
        ),
        ("appendtime", 150 * 3 * s, vec![0, 1], 0, s),
    ]
}

/// Checks the per-topic coverage of a K1 run against [`expected_coverage`]; the failures.
pub fn coverage_failures(tally: &Tally, scale: u32) -> Vec<String> {
    let mut out = Vec::new();
    for (topic, records, codecs, markers, segments) in expected_coverage(scale) {
        let name = format!("{topic}-0");
        let Some(c) = tally.per_topic.get(&name) else {
            out.push(format!("coverage: {name} was not compared"));
            continue;
        };
        let want: std::collections::BTreeSet<u8> = codecs.into_iter().collect();
        if c.records < records || c.codecs != want || c.markers < markers || c.segments < segments {
            out.push(format!(
                "coverage: {name} holds {} records, codecs {:?}, {} markers, {} segments; the workload writes at least {records} records, codecs {want:?}, {markers} markers, {segments} segments",
                c.records, c.codecs, c.markers, c.segments
            ));
        }
    }
    out
}

impl Tally {
    /// The coverage figures per topic, for the scenario line.
    pub fn coverage_line(&self) -> String {
        self.per_topic
            .iter()
            .map(|(t, c)| {
                format!(
                    "{t}: {} records, {} segments, {} markers, codecs {:?}",
                    c.records, c.segments, c.markers, c.codecs
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Tally {
    pub fn line(&self) -> String {
        format!(
            "{} partitions, {} segments, {} batches ({} transactional, {} markers, codecs {:?}), {} records, {} answers compared, {} differences, {} justified",
            self.partitions,
            self.segments,
            self.batches,
            self.transactional,
            self.markers,
            self.codecs,
            self.records,
            self.answers,
            self.diffs.len(),
            self.notes.len()
        )
    }
}

/// Runs the workload on a fresh broker, records its answers and stops it cleanly.
/// Returns the broker (stopped) and the answers.
pub fn produce(ctx: &Ctx, home: &Path) -> Result<(Broker, Vec<PartitionAnswers>), String> {
    let mut broker = Broker::create(&ctx.jvm, home, &[])?;
    broker.start()?;
    ctx.jvm.run(
        "oracle.Oracle",
        &[
            "k1-produce".into(),
            broker.bootstrap(),
            "8".into(),
            ctx.scale.to_string(),
        ],
        Duration::from_secs(300),
    )?;
    let answers = record_answers(&ctx.jvm, &broker, &home.join("answers.json"))?;
    broker.stop()?;
    Ok((broker, answers))
}

/// Runs `Answers` against a running broker for the K1 topics.
pub fn record_answers(
    jvm: &Jvm,
    broker: &Broker,
    out: &Path,
) -> Result<Vec<PartitionAnswers>, String> {
    record_answers_for(jvm, broker, out, TOPICS.iter().map(|t| t.0))
}

/// Runs `Answers` against a running broker for `topics`.
pub fn record_answers_for<'a>(
    jvm: &Jvm,
    broker: &Broker,
    out: &Path,
    topics: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<PartitionAnswers>, String> {
    let mut args = vec![
        "answers".to_string(),
        broker.bootstrap(),
        out.display().to_string(),
        "9".into(),
    ];
    args.extend(topics.into_iter().map(str::to_string));
    jvm.run("oracle.Oracle", &args, Duration::from_secs(300))?;
    load_answers(out)
}

/// The K1 checks on a stopped broker's log directory `data`. Every partition directory is
/// checked (the workload's and the broker's internal ones); answers are compared for the
/// partitions that have them.
pub fn check(
    data: &Path,
    answers: &[PartitionAnswers],
    scratch: &Path,
    tally: &mut Tally,
    off_by_one: bool,
) -> Result<(), String> {
    let mut compared = std::collections::BTreeSet::new();
    let by_dir: BTreeMap<String, &PartitionAnswers> = answers
        .iter()
        .map(|a| (format!("{}-{}", a.topic, a.partition), a))
        .collect();
    for dir in ours::partition_dirs(data)? {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let topic = name.rsplit_once('-').unwrap().0.to_string();
        let config = config_for(&topic);
        tally.partitions += 1;
        tally.segments += ours::log_files(&dir)?.len();

        // Rebuilt indexes, byte for byte.
        let out = scratch.join("rebuilt").join(&name);
        let (n, diffs, notes) = ours::rebuild_compare(&dir, &out, config.index_interval_bytes)?;
        tally.answers += n;
        tally
            .notes
            .extend(notes.into_iter().map(|d| format!("{name}: {d}")));
        tally
            .diffs
            .extend(diffs.into_iter().map(|d| format!("{name}: rebuild: {d}")));

        // dump-log --verify-index-only on the broker's files.
        let opts = DumpOptions {
            verify_index_only: true,
            ..DumpOptions::default()
        };
        let problems = ours::dump_problems(&dir, &opts);
        tally.answers += 1;
        tally.diffs.extend(
            problems
                .into_iter()
                .map(|p| format!("{name}: dump-log --verify-index-only: {p}")),
        );

        // Our Log on a copy (it recovers: no clean-shutdown marker of ours is there).
        let copy: PathBuf = scratch.join("ours").join(&name);
        ours::copy_dir(&dir, &copy)?;
        let (log, batches) = ours::read_log(&copy, config)?;
        tally.batches += batches.len();
        tally.records += batches.iter().map(|b| b.records.len()).sum::<usize>();
        if name == "__cluster_metadata-0" {
            continue; // no client answers for the metadata log
        }
        let Some(a) = by_dir.get(&name) else {
            if !name.starts_with("__") {
                tally.diffs.push(format!(
                    "{name}: a workload partition the broker gave no answers for"
                ));
            }
            continue;
        };
        let cov = tally.per_topic.entry(name.clone()).or_default();
        cov.segments += ours::log_files(&dir)?.len();
        for b in &batches {
            cov.records += if b.control { 0 } else { b.records.len() };
            cov.markers += usize::from(b.marker.is_some());
            if !b.control {
                cov.codecs.insert(b.compression);
            }
        }
        compare_with(&name, &log, &batches, a, tally, off_by_one)?;
        compared.insert(name);
    }
    for name in by_dir.keys().filter(|n| !compared.contains(*n)) {
        tally.diffs.push(format!(
            "{name}: the broker answered for it, but it has no partition directory to compare"
        ));
    }
    Ok(())
}

/// Compares our answers on one partition with the broker's.
pub fn compare(
    name: &str,
    log: &segment::Log,
    batches: &[ours::Batch],
    a: &PartitionAnswers,
    tally: &mut Tally,
) -> Result<(), String> {
    compare_with(name, log, batches, a, tally, false)
}

/// [`compare`], with the `k1-timestamp` sabotage: `off_by_one` makes our
/// `offset_for_timestamp` answers one offset too high.
fn compare_with(
    name: &str,
    log: &segment::Log,
    batches: &[ours::Batch],
    a: &PartitionAnswers,
    tally: &mut Tally,
    off_by_one: bool,
) -> Result<(), String> {
    let mut d = Vec::new();
    if log.log_start_offset() != a.earliest {
        d.push(format!(
            "earliest: broker {} ours {}",
            a.earliest,
            log.log_start_offset()
        ));
    }
    if log.log_end_offset() != a.latest {
        d.push(format!(
            "latest: broker {} ours {}",
            a.latest,
            log.log_end_offset()
        ));
    }
    // Every record, read_uncommitted.
    let ours_recs: Vec<&Rec> = batches
        .iter()
        .filter(|b| !b.control)
        .flat_map(|b| b.records.iter())
        .collect();
    let broker: Vec<Rec> = a
        .records
        .iter()
        .map(|&(offset, timestamp, hash)| Rec {
            offset,
            timestamp,
            hash,
        })
        .collect();
    if ours_recs.len() != broker.len() {
        d.push(format!(
            "read_uncommitted: broker returned {} records, ours {}",
            broker.len(),
            ours_recs.len()
        ));
    }
    for (o, b) in ours_recs.iter().zip(&broker) {
        if **o != *b {
            d.push(format!("first differing record: broker {b:?} ours {o:?}"));
            break;
        }
    }
    // read_committed.
    let committed = ours::read_committed(log, batches)?;
    if committed != a.committed {
        let hidden_ours = ours_recs.len() - committed.len();
        let hidden_broker = broker.len() - a.committed.len();
        let first = committed
            .iter()
            .zip(&a.committed)
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!(" (first difference: ours {x}, broker {y})"))
            .unwrap_or_default();
        d.push(format!(
            "read_committed: broker hid {hidden_broker} records, our aborted-transaction lists hide {hidden_ours}{first}"
        ));
    }
    // ListOffsets MAX_TIMESTAMP: the first record (transaction markers included) holding
    // the largest timestamp.
    let mut max = (-1i64, -1i64);
    for r in batches.iter().flat_map(|b| b.records.iter()) {
        if r.timestamp > max.0 {
            max = (r.timestamp, r.offset);
        }
    }
    if max != a.max_timestamp {
        d.push(format!(
            "max timestamp: broker {:?} ours {max:?}",
            a.max_timestamp
        ));
    }
    for b in batches {
        tally.codecs.insert(b.compression);
        tally.transactional += usize::from(b.transactional && !b.control);
        tally.markers += usize::from(b.marker.is_some());
    }
    // offsetsForTimes.
    let mut wrong = 0;
    let mut first_wrong = None;
    for &(target, offset, ts) in &a.times {
        let got = log
            .offset_for_timestamp(target)
            .map_err(|e| format!("{name}: offset_for_timestamp({target}): {e}"))?
            .map(|t| (t.offset + i64::from(off_by_one), t.timestamp))
            .unwrap_or((-1, -1));
        if got != (offset, ts) {
            wrong += 1;
            first_wrong.get_or_insert(format!(
                "target {target}: broker ({offset}, {ts}) ours {got:?}"
            ));
        }
    }
    if let Some(f) = first_wrong {
        d.push(format!(
            "offset_for_timestamp: {wrong} of {} targets differ; first: {f}",
            a.times.len()
        ));
    }
    tally.answers += 3 + broker.len() + 1 + a.times.len();
    tally
        .diffs
        .extend(d.into_iter().map(|x| format!("{name}: {x}")));
    Ok(())
}
