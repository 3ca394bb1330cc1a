//! K8 (`k8-local-retention`): retention with remote storage enabled, differential against
//! Kafka 4.4's own `UnifiedLog` (`docs/kafka-behaviour.md#local-retention`,
//! `docs/kafka-behaviour.md#remote-retention`).
//!
//! Each case opens our `Log` (`remote_storage_enable`, a mock clock,
//! `manual_high_watermark(0)`) and Kafka's `UnifiedLog` in-process (the helper's
//! `TierOracle`: `remoteStorageSystemEnable` and the topic's `remote.storage.enable`, the
//! k4-leader mock clock and scheduler) with the same random topic config: small segments,
//! `retention.ms` / `retention.bytes` unlimited or bounded, `local.retention.ms` /
//! `local.retention.bytes` −2, −1 (when the full one is unlimited) or at most the full one,
//! `file.delete.delay.ms` 0. No `RemoteLogManager` runs: what it tells the log is an
//! operation of the case, as Kafka's `UnifiedLogTest` does it: the highest offset in
//! remote storage (`updateHighestOffsetInRemoteStorage`, a sealed segment's end offset,
//! sometimes none or a segment behind) and the log start offset after a remote deletion
//! (`updateLogStartOffsetFromRemoteTier`). The operations, chosen from our log's state as
//! the case runs: leader appends (batches of records stamped up to 30 s before the clock),
//! high-watermark moves, clock advances, rolls, `delete-records` (Kafka's
//! `maybeIncrementLogStartOffset`), and `deleteOldSegments`.
//!
//! A quarter of the cases run without remote storage (no uploads or remote log start
//! updates): Kafka's plain retention, in its order (log start, size, time). There our
//! `delete-records` never targets the log end: ours then deletes the last segment too
//! (a deliberate difference, `docs/kafka-behaviour.md#local-retention`), and Kafka's
//! `localLogStartOffset`, which nothing moves without remote storage, is not compared.
//!
//! Compared after every operation: the answer (segments deleted, or the error's Kafka
//! name), the segments' base offsets, the `.log` files in the directory, the log start
//! offset, the local log start offset, the log end offset, the high watermark and the
//! highest offset in remote storage; the first field that differs is reported.
//!
//! The helper also prints Kafka's `RemoteLogSegmentState.isValidTransition` for every
//! source (none or a state) and target, compared with ours with the state ids
//! (`docs/kafka-behaviour.md#remote-segment-metadata`).
//!
//! Sabotages: `k8-local-retention-past-uploaded`: before each of its retention passes our
//! log is told one more sealed segment is uploaded than Kafka is, so that it deletes one
//! segment past the uploaded offset; `k8-local-retention-transition`: ours lets
//! `COPY_SEGMENT_FINISHED` go back to `COPY_SEGMENT_STARTED`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::record::BatchBuilder;
use segment::tier::RemoteLogSegmentState;
use segment::{AppendOrigin, Log, LogConfig, MockTime, Time};

use super::Ctx;

/// Base of the mock clocks (2025-06-15), as the other scenarios.
const BASE_TS: i64 = 1_750_000_000_000;

#[derive(Clone, Debug)]
struct Topic {
    /// `remote.storage.enable`; a few cases run without it, where Kafka's plain retention
    /// (`retention.*`, the log start offset) applies.
    remote: bool,
    segment_bytes: u32,
    retention_ms: i64,
    retention_bytes: i64,
    local_retention_ms: i64,
    local_retention_bytes: i64,
}

impl Topic {
    fn props(&self) -> Vec<(&'static str, String)> {
        vec![
            ("internal.segment.bytes", self.segment_bytes.to_string()),
            ("remote.storage.enable", self.remote.to_string()),
            ("cleanup.policy", "delete".into()),
            ("retention.ms", self.retention_ms.to_string()),
            ("retention.bytes", self.retention_bytes.to_string()),
            ("local.retention.ms", self.local_retention_ms.to_string()),
            (
                "local.retention.bytes",
                self.local_retention_bytes.to_string(),
            ),
            ("file.delete.delay.ms", "0".into()),
            ("message.timestamp.before.max.ms", i64::MAX.to_string()),
            ("message.timestamp.after.max.ms", i64::MAX.to_string()),
        ]
    }

    fn config(&self) -> LogConfig {
        LogConfig {
            segment_bytes: u64::from(self.segment_bytes),
            retention_ms: self.retention_ms,
            retention_bytes: self.retention_bytes,
            local_retention_ms: self.local_retention_ms,
            local_retention_bytes: self.local_retention_bytes,
            file_delete_delay_ms: 0,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: i64::MAX,
            remote_storage_enable: self.remote,
            ..LogConfig::default()
        }
    }
}

/// A local retention value: −2 (use the full one), −1 only when the full one is unlimited
/// (Kafka's `validateRemoteStorageRetention*` refuses it otherwise), else at most the full.
fn local_value(rng: &mut StdRng, full: i64, lo: i64, hi: i64) -> i64 {
    match rng.gen_range(0..4) {
        0 => -2,
        1 if full < 0 => -1,
        _ if full >= 0 => rng.gen_range(lo.min(full)..=full),
        _ => rng.gen_range(lo..=hi),
    }
}

fn gen_topic(rng: &mut StdRng) -> Topic {
    let retention_ms = if rng.gen_bool(0.3) {
        -1
    } else {
        rng.gen_range(20_000..120_000)
    };
    let retention_bytes = if rng.gen_bool(0.4) {
        -1
    } else {
        rng.gen_range(1_500..6_000)
    };
    Topic {
        remote: !rng.gen_bool(0.25),
        segment_bytes: rng.gen_range(250..700),
        retention_ms,
        retention_bytes,
        local_retention_ms: local_value(rng, retention_ms, 5_000, 60_000),
        local_retention_bytes: local_value(rng, retention_bytes, 300, 3_000),
    }
}

#[derive(Default, Debug)]
struct Coverage {
    retains: usize,
    retains_deleting: usize,
    deleted: usize,
    retention_rolls: usize,
    held_back: usize,
    uploads: usize,
    remote_starts: usize,
    delete_records: usize,
    errors: usize,
}

/// The state line both sides print after each operation (the `TierOracle` format).
fn state(log: &Log, dir: &Path) -> Result<String, String> {
    let segs: Vec<String> = log
        .segments()
        .base_offsets()
        .iter()
        .map(|b| b.to_string())
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{dir:?}: {e}"))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    files.sort();
    Ok(format!(
        "segs {} ls {} lls {} leo {} hw {} remote {} files {}",
        segs.join(","),
        log.log_start_offset(),
        log.local_log_start_offset(),
        log.log_end_offset(),
        log.high_watermark(),
        log.highest_offset_in_remote_storage(),
        if files.is_empty() {
            "-".into()
        } else {
            files.join(",")
        }
    ))
}

/// The end offsets (next base − 1) of the sealed segments.
fn sealed_ends(log: &Log) -> Vec<i64> {
    let b = log.segments().base_offsets();
    b.windows(2).map(|w| w[1] - 1).collect()
}

fn err_name(e: &segment::SegmentError) -> String {
    format!("error {}", e.kafka_error().name())
}

/// Runs case `id` on our side, choosing each operation from our log's state, and returns
/// the case's text for the helper and our answer lines.
fn run_case(
    rng: &mut StdRng,
    id: &str,
    dir: &Path,
    kafka_dir: &Path,
    sabotage: bool,
    cov: &mut Coverage,
) -> Result<(String, Vec<String>, bool), String> {
    let topic = gen_topic(rng);
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir:?}: {e}"))?;
    let clock = MockTime::new(BASE_TS);
    let log = Log::options()
        .clock(Arc::new(clock.clone()))
        .manual_high_watermark(0)
        .open(dir, topic.config())
        .map_err(|e| format!("{id}: open: {e}"))?;
    let mut text = format!("case {id} {} {BASE_TS}\n", kafka_dir.display());
    for (k, v) in topic.props() {
        let _ = writeln!(text, "config {k} {v}");
    }
    let mut lines = vec![format!("open | {}", state(&log, dir)?)];
    let n_ops = rng.gen_range(30..70);
    for _ in 0..n_ops {
        let roll: u32 = rng.gen_range(0..100);
        let leo = log.log_end_offset();
        let hw = log.high_watermark();
        let (op, answer) = if roll < 30 {
            let now = clock.milliseconds();
            let mut bb = BatchBuilder::new(0);
            for _ in 0..rng.gen_range(1..5) {
                let ts = now - rng.gen_range(0..30_000);
                let v: Vec<u8> = (0..rng.gen_range(10..60)).map(|_| rng.gen()).collect();
                bb = bb.record(ts, None, Some(&v));
            }
            let bytes = bb.build().map_err(|e| e.to_string())?;
            let mut hex = String::with_capacity(bytes.len() * 2);
            for b in &bytes {
                let _ = write!(hex, "{b:02x}");
            }
            let a = match log.append_as_leader(&bytes, 0, AppendOrigin::Client) {
                Ok(_) => "ok".to_string(),
                Err(e) => err_name(&e),
            };
            (format!("append {hex}"), a)
        } else if roll < 50 {
            // Mostly the log end; sometimes between the high watermark and it.
            let to = if rng.gen_bool(0.8) || leo == hw {
                leo
            } else {
                rng.gen_range(hw..=leo)
            };
            let a = match log.update_high_watermark(to) {
                Ok(_) => "ok".to_string(),
                Err(e) => err_name(&e),
            };
            (format!("hw {to}"), a)
        } else if roll < 62 && topic.remote {
            let ends = sealed_ends(&log);
            let cur = log.highest_offset_in_remote_storage();
            let up: Vec<i64> = ends.into_iter().filter(|&e| e > cur).collect();
            if up.is_empty() {
                continue;
            }
            // Often the next segment only, sometimes several at once.
            let to = if rng.gen_bool(0.6) {
                up[0]
            } else {
                up[rng.gen_range(0..up.len())]
            };
            cov.uploads += 1;
            log.update_highest_offset_in_remote_storage(to);
            (format!("uploaded {to}"), "ok".to_string())
        } else if roll < 78 {
            let before = log.segments().base_offsets();
            if sabotage {
                let cur = log.highest_offset_in_remote_storage();
                if let Some(e) = sealed_ends(&log).into_iter().find(|&e| e > cur) {
                    log.update_highest_offset_in_remote_storage(e);
                }
            }
            cov.retains += 1;
            let a = match log.delete_old_segments() {
                Ok(n) => {
                    cov.deleted += n;
                    cov.retains_deleting += usize::from(n > 0);
                    let after = log.segments().base_offsets();
                    if after.last() != before.last() {
                        cov.retention_rolls += 1;
                    }
                    // A pass that left sealed segments not yet uploaded.
                    let cur = log.highest_offset_in_remote_storage();
                    if sealed_ends(&log).iter().any(|&e| e > cur) {
                        cov.held_back += 1;
                    }
                    format!("deleted {n}")
                }
                Err(e) => err_name(&e),
            };
            ("retain".to_string(), a)
        } else if roll < 90 {
            let ms = rng.gen_range(1_000..90_000);
            clock.sleep(ms);
            (format!("sleep {ms}"), "ok".to_string())
        } else if roll < 94 {
            let a = match log.roll(None) {
                Ok(_) => "ok".to_string(),
                Err(e) => err_name(&e),
            };
            ("roll".to_string(), a)
        } else if roll < 98 && topic.remote {
            // The remote tier deleted its oldest segments: a base offset at or below the
            // highest uploaded offset + 1, sometimes above the high watermark (refused).
            let cur = log.highest_offset_in_remote_storage();
            let ls = log.log_start_offset();
            let to = if rng.gen_bool(0.1) {
                hw + 1
            } else {
                let mut c: Vec<i64> = log
                    .segments()
                    .base_offsets()
                    .into_iter()
                    .chain(std::iter::once(cur + 1))
                    .filter(|&b| b >= ls && b <= cur + 1)
                    .collect();
                c.sort_unstable();
                if c.is_empty() {
                    continue;
                }
                c[rng.gen_range(0..c.len())]
            };
            cov.remote_starts += 1;
            let a = match log.update_log_start_offset_from_remote_tier(to) {
                Ok(_) => "ok".to_string(),
                Err(e) => err_name(&e),
            };
            (format!("remote-start {to}"), a)
        } else {
            let ls = log.log_start_offset();
            // Without remote storage, not at the log end: ours then deletes the last
            // segment too (issue 11's design, `log_start_beyond_end` tests), Kafka 4.4
            // keeps it (`docs/kafka-behaviour.md#local-retention`).
            let top = if topic.remote { hw } else { hw.min(leo - 1) };
            if top < ls {
                continue;
            }
            let to = rng.gen_range(ls..=top);
            cov.delete_records += 1;
            let a = match log.increment_log_start_offset(to) {
                Ok(_) => "ok".to_string(),
                Err(e) => err_name(&e),
            };
            (format!("delete-records {to}"), a)
        };
        if answer.starts_with("error") {
            cov.errors += 1;
        }
        let _ = writeln!(text, "op {op}");
        lines.push(format!("{answer} | {}", state(&log, dir)?));
    }
    text.push_str("end\n");
    log.close().map_err(|e| format!("{id}: close: {e}"))?;
    Ok((text, lines, topic.remote))
}

/// Our side of one case: its state lines and whether it had remote storage, or why it
/// failed.
type OurRun = Result<(Vec<String>, bool), String>;

/// A state line without its `lls` field.
fn without_lls(line: &str) -> String {
    let mut out = Vec::new();
    let mut skip = false;
    for w in line.split(' ') {
        if skip {
            skip = false;
        } else if w == "lls" {
            skip = true;
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// The first field of two state lines that differs, named.
fn first_difference(ours: &str, kafka: &str) -> String {
    let split = |l: &str| -> (String, Vec<(String, String)>) {
        let (answer, st) = l.split_once(" | ").unwrap_or((l, ""));
        let w: Vec<&str> = st.split(' ').collect();
        let fields = w
            .chunks(2)
            .map(|c| {
                (
                    c[0].to_string(),
                    c.get(1).copied().unwrap_or("").to_string(),
                )
            })
            .collect();
        (answer.to_string(), fields)
    };
    let (oa, of) = split(ours);
    let (ka, kf) = split(kafka);
    let name = |f: &str| match f {
        "segs" => "segments",
        "files" => "files",
        "ls" => "log start offset",
        "lls" => "local log start offset",
        "leo" => "log end offset",
        "hw" => "high watermark",
        "remote" => "highest offset in remote storage",
        _ => "field",
    };
    // The deletion's outcome first: the segments, the files and the two starts.
    for key in ["segs", "files", "lls", "ls", "leo", "hw", "remote"] {
        let get = |v: &[(String, String)]| {
            v.iter()
                .find(|(k, _)| k == key)
                .map(|(_, x)| x.clone())
                .unwrap_or_default()
        };
        let (a, b) = (get(&of), get(&kf));
        if a != b {
            return format!("{}: ours {a}, Kafka's {b}", name(key));
        }
    }
    format!("answer: ours `{oa}`, Kafka's `{ka}`")
}

/// Whether the transition sabotage is on.
fn sabotage_transition(ctx: &Ctx) -> bool {
    ctx.sabotaged("k8-local-retention-transition")
}

/// Compares Kafka's `transitions` line with [`RemoteLogSegmentState::is_valid_transition`]
/// (sabotaged: ours also lets `CopySegmentFinished` go back to `CopySegmentStarted`);
/// returns the number compared.
fn check_transitions(text: &str, sabotage: bool, diffs: &mut Vec<String>) -> usize {
    let Some(line) = text.lines().find_map(|l| l.strip_prefix("transitions ")) else {
        diffs.push("Kafka printed no transitions line".into());
        return 0;
    };
    let mut n = 0;
    for item in line.split(' ') {
        let parsed = item.split_once('>').and_then(|(src, rest)| {
            let (target, valid) = rest.split_once('=')?;
            let src = match src {
                "-" => None,
                s => Some(RemoteLogSegmentState::for_id(s.parse().ok()?)?),
            };
            let target = RemoteLogSegmentState::for_id(target.parse().ok()?)?;
            Some((src, target, valid == "true"))
        });
        let Some((src, target, kafka)) = parsed else {
            diffs.push(format!("transitions: cannot read Kafka's `{item}`"));
            continue;
        };
        let mut ours = RemoteLogSegmentState::is_valid_transition(src, target);
        if sabotage
            && src == Some(RemoteLogSegmentState::CopySegmentFinished)
            && target == RemoteLogSegmentState::CopySegmentStarted
        {
            ours = true;
        }
        n += 1;
        if ours != kafka {
            diffs.push(format!(
                "transition {} -> {target}: ours {ours}, Kafka's {kafka}",
                src.map_or("none".to_string(), |s| s.to_string())
            ));
        }
    }
    if n != 20 {
        diffs.push(format!("transitions: {n} compared, not 20"));
    }
    n
}

pub fn run(ctx: &Ctx) -> Result<String, String> {
    let dir = ctx.scratch.join("k8");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let seed = ctx.seed;
    let replay = format!(
        "seed {seed}, replay with `cargo xtask kafka --only k8-local-retention --seed {seed}`"
    );
    let sabotage = ctx.sabotaged("k8-local-retention-past-uploaded");
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b38);
    let mut cov = Coverage::default();
    let n_cases = 12 * ctx.scale as usize;
    let mut input = String::new();
    let mut ours: Vec<(String, OurRun)> = Vec::new();
    let mut plain_cases = 0usize;
    let mut ops = 0usize;
    for i in 0..n_cases {
        let id = format!("c{i}");
        let (od, kd): (PathBuf, PathBuf) = (
            dir.join(format!("{id}-ours/t-0")),
            dir.join(format!("{id}-kafka/t-0")),
        );
        std::fs::create_dir_all(&kd).map_err(|e| format!("{kd:?}: {e}"))?;
        match run_case(&mut rng, &id, &od, &kd, sabotage, &mut cov) {
            Ok((text, lines, remote)) => {
                plain_cases += usize::from(!remote);
                ops += lines.len() - 1;
                input.push_str(&text);
                ours.push((id, Ok((lines, remote))));
            }
            Err(e) => ours.push((id, Err(e))),
        }
    }
    let cases_file = dir.join("cases.txt");
    let answers_file = dir.join("answers.txt");
    std::fs::write(&cases_file, input).map_err(|e| e.to_string())?;
    ctx.jvm.run(
        "oracle.Oracle",
        &[
            "k8-local-retention".into(),
            cases_file.display().to_string(),
            answers_file.display().to_string(),
        ],
        Duration::from_secs(600),
    )?;
    let text = std::fs::read_to_string(&answers_file).map_err(|e| e.to_string())?;
    let mut kafka: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in text.lines() {
        if let Some((id, rest)) = line.split_once(' ') {
            kafka.entry(id).or_default().push(rest);
        }
    }
    let mut diffs = Vec::new();
    let mut compared = 0usize;
    // Kafka's `RemoteLogSegmentState.isValidTransition` and ids against ours.
    let transitions = check_transitions(&text, sabotage_transition(ctx), &mut diffs);
    for (id, o) in &ours {
        let (o, remote) = match o {
            Ok((o, remote)) => (o, *remote),
            Err(e) => {
                diffs.push(format!("{id}: our run failed: {e}"));
                continue;
            }
        };
        let Some(k) = kafka.get(id.as_str()) else {
            diffs.push(format!("{id}: no answers from Kafka"));
            continue;
        };
        if k.last() != Some(&"closed") {
            diffs.push(format!("{id}: Kafka did not finish: {:?}", k.last()));
            continue;
        }
        // Kafka's lines: `open | STATE`, `K ANSWER | STATE`, ..., `closed`.
        let k_lines: Vec<String> = k[..k.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    l.split_once(' ').map_or(l.to_string(), |x| x.1.to_string())
                }
            })
            .collect();
        // Without remote storage Kafka's `localLogStartOffset` is a field nothing moves
        // (only `remoteLogEnabled` paths read it), ours answers the log start: not
        // compared there.
        let (o, k_lines): (Vec<String>, Vec<String>) = if remote {
            (o.clone(), k_lines)
        } else {
            (
                o.iter().map(|l| without_lls(l)).collect(),
                k_lines.iter().map(|l| without_lls(l)).collect(),
            )
        };
        match o.iter().zip(&k_lines).position(|(a, b)| a != b) {
            Some(at) => diffs.push(format!(
                "{id}: after {}: {}",
                if at == 0 {
                    "the open".to_string()
                } else {
                    format!("op {}", at - 1)
                },
                first_difference(&o[at], &k_lines[at])
            )),
            None if o.len() != k_lines.len() => diffs.push(format!(
                "{id}: ours {} states, Kafka's {}",
                o.len(),
                k_lines.len()
            )),
            None => compared += o.len(),
        }
    }
    let mut missing = Vec::new();
    if cov.retains_deleting == 0 {
        missing.push("retention pass that deleted");
    }
    if cov.retention_rolls == 0 {
        missing.push("roll by retention");
    }
    if cov.remote_starts == 0 {
        missing.push("remote log start update");
    }
    if !missing.is_empty() && !sabotage {
        diffs.push(format!("the cases have no {}: {cov:?}", missing.join(", ")));
    }
    let line = format!(
        "seed {seed}: {transitions} state transitions, {n_cases} cases ({plain_cases} without remote storage), {ops} ops ({} retention passes, {} deleting {} segments, {} rolls by retention, {} passes leaving sealed segments above the uploaded offset, {} uploads reported, {} remote log start updates, {} delete-records, {} errors), {compared} states compared, {} mismatches",
        cov.retains,
        cov.retains_deleting,
        cov.deleted,
        cov.retention_rolls,
        cov.held_back,
        cov.uploads,
        cov.remote_starts,
        cov.delete_records,
        cov.errors,
        diffs.len()
    );
    if diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line} ({replay}):\n  {}", diffs.join("\n  ")))
    }
}
