//! K1-recovery-time: how long the broker's own recovery of large unflushed partitions takes,
//! against `dump-log doctor`'s prediction and our `Log::open` (issue 39).
//!
//! A broker whose recovery point never reaches its checkpoint file (the recovery-point
//! checkpoint and the first run of its task an hour away) writes two partitions of
//! `--recovery-mib` MiB each (one uncompressed, one lz4; 1 KiB incompressible values in
//! 1 MiB batches, acks=1, segments of a quarter of that size), then is killed with SIGKILL
//! once every send is acknowledged. Its rolls flushed the older segments, but the
//! checkpoint on disk still says 0 (or does not exist), so every segment is Kafka's to
//! recover. Then, per partition:
//!
//! * `dump-log doctor --json --measure` on the killed directory, before any recovery (the
//!   release binary, calibrated on this machine as by default): its predicted seconds, and
//!   the seconds our `Log::open` of a temporary copy took (`--measure` opens it from the
//!   broker's recovery point and log start offset, as read from its checkpoints); and
//!   `dump-log doctor --deep --json` for the data-loss verdict and the log end after the
//!   open;
//! * the broker's recovery time: it restarts on a copy, and its `Completed load of
//!   Log(...) ... in N ms` line (Kafka 4.4's `LogManager.loadLogs`, which times
//!   `LogManager.loadLog`: the `UnifiedLog` creation, whose `LogLoader` recovers every
//!   segment from the recovery point and rebuilds the producer state) is read, with its
//!   `Recovering unflushed segment B` lines, the segments it recovered;
//! * our `Log::open` of another copy from the broker's recovery point and log start
//!   offset (as `k1-crash` does), in process (xtask's unoptimised build: not timed), whose
//!   recovered files are compared with the broker's.
//!
//! They are printed side by side. The scenario fails when the two recoveries differ
//! (`k1-crash`'s comparison: log start and end offsets, every file), when the doctor's
//! recovered segments are not the broker's, when `--deep`'s predicted log end is not the
//! broker's, and when the doctor says "no acknowledged data lost" (`DataLoss::None`) while
//! a recovery left the log end below the producer's last acknowledged offset.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use std::path::{Path, PathBuf};
use std::process::Command;

use segment::dump::doctor::DataLoss;
use segment::{Log, LogConfig};
use serde_json::Value;

use super::broker::Broker;
use super::crash::{compare_partition, loaded_offsets, read_checkpoint, read_part, Totals};
use super::ours;
use super::Ctx;

/// The workload partitions: topic and producer codec.
const TOPICS: &[(&str, &str)] = &[("recovery-none", "none"), ("recovery-lz4", "lz4")];

/// Broker settings that keep the recovery point of the checkpoint file at 0: the
/// recovery-point checkpoint task (and every other periodic log task) first runs an hour
/// after start, and nothing flushes by message count or time. Rolls still flush the
/// segments they close (Kafka's roll does), but only the checkpoint file survives a kill.
const PROPS: &[&str] = &[
    "log.flush.offset.checkpoint.interval.ms=3600000",
    "log.flush.start.offset.checkpoint.interval.ms=3600000",
    "log.initial.task.delay.ms=3600000",
];

/// The partition size when `--recovery-mib` is not given (issue 39's size: the scenario
/// takes about 45 s with it on the 2-core development machine).
pub const DEFAULT_MIB: u64 = 256;

/// The partition size of a sabotage run when `--recovery-mib` is not given: the damage does
/// not depend on the size, and `cargo xtask ci` runs every sabotage.
pub const SABOTAGE_MIB: u64 = 16;

/// One partition's three figures.
struct Row {
    name: String,
    mib_to_recover: f64,
    doctor_s: f64,
    broker_s: f64,
    ours_s: f64,
    /// The doctor's data-loss verdicts (`data_loss`), default and `--deep`.
    verdicts: (String, String),
}

/// The scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let mib = ctx.recovery_mib.unwrap_or(if ctx.sabotage.is_some() {
        SABOTAGE_MIB
    } else {
        DEFAULT_MIB
    });
    let segment_bytes = (mib / 4).max(1) << 20;
    let home = ctx.scratch.join("recovery-time");
    let bin = build_dump_log()?;
    let mut broker = Broker::create(&ctx.jvm, &home, PROPS)?;
    broker.start()?;

    // Write, and learn what was acknowledged.
    let t = Instant::now();
    let mut args = vec![
        "bulk-produce".to_string(),
        broker.bootstrap(),
        segment_bytes.to_string(),
        mib.to_string(),
    ];
    args.extend(TOPICS.iter().map(|(t, c)| format!("{t}:{c}")));
    let produced = ctx
        .jvm
        .run("oracle.Oracle", &args, Duration::from_secs(600));
    let produced = match produced {
        Ok(out) => out,
        Err(e) => {
            broker.kill9();
            return Err(e);
        }
    };
    let produce_s = t.elapsed().as_secs_f64();
    let mut acked: BTreeMap<String, i64> = BTreeMap::new();
    for l in produced.lines() {
        if let ["ACKED", topic, last, _records] = l.split_whitespace().collect::<Vec<_>>()[..] {
            let last: i64 = last.parse().map_err(|_| format!("bad line {l:?}"))?;
            acked.insert(format!("{topic}-0"), last);
        }
    }
    broker.kill9();
    for (topic, _) in TOPICS {
        if !acked.contains_key(&format!("{topic}-0")) {
            return Err(format!(
                "the producer acknowledged nothing for {topic}:\n{produced}"
            ));
        }
    }
    let killed = broker.data();
    let rp = read_checkpoint(&killed.join("recovery-point-offset-checkpoint"));
    let ls = read_checkpoint(&killed.join("log-start-offset-checkpoint"));

    // The doctor, on the killed directory before any recovery (it only reads; --measure
    // opens temporary copies, made under `home`).
    let report = doctor(&bin, &killed, &home, &["--measure"])?;
    let deep = doctor(&bin, &killed, &home, &["--deep", "--no-calibrate"])?;
    let mb_per_s = report["throughput"]["mb_per_s"]
        .as_f64()
        .unwrap_or(f64::NAN);

    // Two copies: ours, the broker's.
    let mine = home.join("ours");
    let theirs = home.join("broker");
    ours::copy_dir(&killed, &mine)?;
    ours::copy_dir(&killed, &theirs)?;

    // Ours: each partition from the broker's recovery point and log start offset.
    let mut our: BTreeMap<String, (i64, i64, u64)> = BTreeMap::new();
    for (topic, _) in TOPICS {
        let name = format!("{topic}-0");
        let dir = mine.join(&name);
        let point = rp.get(&name).copied().unwrap_or(0);
        for (file, value) in [
            (segment::log::RECOVERY_POINT_FILE, point),
            (
                segment::log::LOG_START_OFFSET_FILE,
                ls.get(&name).copied().unwrap_or(0),
            ),
        ] {
            std::fs::write(dir.join(file), format!("0\n{value}\n")).map_err(|e| e.to_string())?;
        }
        let config = LogConfig {
            segment_bytes,
            index_interval_bytes: 4096,
            retention_ms: -1,
            ..LogConfig::default()
        };
        let log = Log::open(&dir, config).map_err(|e| format!("Log::open {dir:?}: {e}"))?;
        let recovered = log.stats().scanned_segments();
        if ctx.sabotaged("k1-recovery-time-drop-unflushed") {
            // Our side throws away what lies past the checkpointed recovery point instead
            // of recovering it.
            log.truncate_to(point).map_err(|e| e.to_string())?;
        }
        our.insert(
            name,
            (log.log_start_offset(), log.log_end_offset(), recovered),
        );
        log.close().map_err(|e| e.to_string())?;
    }

    // The broker recovers the other copy.
    broker.set_data(&theirs)?;
    let before = broker.server_log().len();
    broker.start()?;
    broker.stop()?;
    let restart = broker.server_log()[before..].to_string();
    let loaded = loaded_offsets(&restart);
    let times = load_times(&restart);
    let recovered_by_broker = recovered_segments(&restart);

    let mut t = Totals::default();
    let mut rows = Vec::new();
    for (topic, _) in TOPICS {
        let name = format!("{topic}-0");
        let k = format!("recovery-time {name}");
        let (Some(p), Some(d)) = (partition(&report, &name), partition(&deep, &name)) else {
            t.diffs
                .push(format!("{k}: the doctor did not report the partition"));
            continue;
        };
        let measured = &report["measured"][&name];
        let (Some(ours_s), Some(measured_leo)) = (
            measured["seconds"].as_f64(),
            measured["log_end_offset"].as_i64(),
        ) else {
            t.diffs.push(format!(
                "{k}: doctor --measure did not open the partition: {measured}"
            ));
            continue;
        };
        let predicted: Vec<i64> = p["recovered_segments"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let loss = |r: &Value| match r["data_loss"].as_str() {
            Some("none") => DataLoss::None,
            Some("unknown") => DataLoss::Unknown,
            _ => DataLoss::Lost,
        };
        let (Some(&(our_ls, our_leo, our_recovered)), Some(&(b_ls, b_leo)), Some(&ms)) =
            (our.get(&name), loaded.get(&name), times.get(&name))
        else {
            t.diffs.push(format!(
                "{k}: no load of the partition in the broker's log (offsets {:?}, time {:?})",
                loaded.get(&name),
                times.get(&name)
            ));
            continue;
        };
        let b_recovered = recovered_by_broker.get(&name).cloned().unwrap_or_default();
        // Every segment must be the broker's to recover, or the time is not a recovery's.
        if b_recovered.is_empty() {
            t.diffs.push(format!(
                "{k}: the broker recovered no segment (recovery point {:?})",
                rp.get(&name)
            ));
        }
        if predicted != b_recovered {
            t.diffs.push(format!(
                "{k}: segments recovered: doctor predicts {predicted:?}, the broker recovered {b_recovered:?}"
            ));
        }
        if our_recovered != b_recovered.len() as u64 {
            t.diffs.push(format!(
                "{k}: segments recovered: ours {our_recovered}, the broker {}",
                b_recovered.len()
            ));
        }
        if d["recovered_log_end_offset"].as_i64() != Some(b_leo) {
            t.diffs.push(format!(
                "{k}: log end after recovery: doctor --deep predicts {}, broker loaded {b_leo}",
                d["recovered_log_end_offset"]
            ));
        }
        if measured_leo != b_leo {
            t.diffs.push(format!(
                "{k}: log end after recovery: doctor --measure's Log::open {measured_leo}, broker loaded {b_leo}"
            ));
        }
        // The doctor's rule: never "no acknowledged data lost" when a recovery lost some.
        let acked_end = acked[&name] + 1;
        for (side, leo) in [
            ("the broker's", b_leo),
            ("our", our_leo),
            ("doctor --measure's", measured_leo),
        ] {
            if leo >= acked_end {
                continue;
            }
            for (mode, r) in [("", p), (" --deep", d)] {
                if loss(r) == DataLoss::None {
                    t.diffs.push(format!(
                        "{k}: doctor{mode} said \"{}\", but {side} recovery cut acknowledged data: log end {leo}, last acknowledged offset {}",
                        DataLoss::None.as_str(),
                        acked_end - 1
                    ));
                }
            }
        }
        // Both recoveries, side by side: offsets and every file (k1-crash's comparison).
        let a = read_part(&mine.join(&name))?;
        let b = read_part(&theirs.join(&name))?;
        compare_partition(&k, &a, &b, (our_ls, our_leo), (b_ls, b_leo), None, &mut t);
        let row = Row {
            name: name.clone(),
            mib_to_recover: p["rescan_bytes"].as_f64().unwrap_or(f64::NAN) / f64::from(1 << 20),
            doctor_s: p["predicted_seconds"].as_f64().unwrap_or(f64::NAN),
            broker_s: ms as f64 / 1000.0,
            ours_s,
            verdicts: (
                p["data_loss"].as_str().unwrap_or("?").to_string(),
                d["data_loss"].as_str().unwrap_or("?").to_string(),
            ),
        };
        eprintln!(
            "kafka k1-recovery-time: recovery of {} ({:.1} MiB to recover): doctor predicts {:.2} s, broker {:.2} s, Log::open {:.2} s",
            row.name, row.mib_to_recover, row.doctor_s, row.broker_s, row.ours_s
        );
        rows.push(row);
    }
    // k1-crash's justifications allow for what its transaction coordinator appends after
    // the restart; nothing is appended here (no transaction, no idempotent producer), so
    // only the epoch the broker leads in after its restart is justified.
    let (epochs, appended): (Vec<String>, Vec<String>) = t
        .justified
        .drain(..)
        .partition(|j| j.contains("leader-epoch-checkpoint"));
    t.justified = epochs;
    t.diffs.extend(
        appended
            .into_iter()
            .map(|j| format!("{j}: but nothing is appended after the restart here")),
    );
    for j in &t.justified {
        eprintln!("kafka k1-recovery-time: justified: {j}");
    }
    let figures: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "recovery of {} ({:.1} MiB to recover): doctor predicts {:.2} s, broker {:.2} s, Log::open {:.2} s (doctor's data loss: {}, --deep: {})",
                r.name, r.mib_to_recover, r.doctor_s, r.broker_s, r.ours_s, r.verdicts.0, r.verdicts.1
            )
        })
        .collect();
    let line = format!(
        "{mib} MiB per partition written in {produce_s:.1} s, killed unflushed (doctor calibrated at {:.0} MB/s); {}; {} segments, {} log bytes compared, {} differences, {} justified",
        mb_per_s,
        figures.join("; "),
        t.segments,
        t.bytes,
        t.diffs.len(),
        t.justified.len()
    );
    if t.diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", t.diffs.join("\n  ")))
    }
}

/// Builds the release `dump-log` (our side is timed optimised, as an operator runs it).
fn build_dump_log() -> Result<PathBuf, String> {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(super::root()).args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "segment",
        "--bin",
        "dump-log",
    ]);
    let status = c.status().map_err(|e| format!("{c:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{c:?} failed with {status}"));
    }
    Ok(super::target_dir().join("release/dump-log"))
}

/// `dump-log doctor --json ARGS DIR` (temporary copies under `home/tmp`): the report.
/// Exit codes 0 to 2 are verdicts, not failures.
fn doctor(bin: &Path, dir: &Path, home: &Path, args: &[&str]) -> Result<Value, String> {
    let tmp = home.join("tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{tmp:?}: {e}"))?;
    let out = Command::new(bin)
        .arg("doctor")
        .arg("--json")
        .arg("--no-progress")
        .args(args)
        .arg(dir)
        .env("TMPDIR", &tmp)
        .output()
        .map_err(|e| format!("{bin:?}: {e}"))?;
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "dump-log doctor {args:?}: {e} ({}; stderr {})",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if v["type"] != "doctor" {
        return Err(format!("dump-log doctor {args:?}: {v}"));
    }
    Ok(v)
}

/// The report of partition `name` in a doctor report.
fn partition<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    report["partitions"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
}

/// The field `key=` of a `Log(...)` description (up to the next `,` or `)`).
fn field<'a>(l: &'a str, key: &str) -> Option<&'a str> {
    l.split(key).nth(1).and_then(|r| r.split([',', ')']).next())
}

/// Milliseconds the broker logged for each partition's load (`Completed load of Log(...)
/// with N segments, ... in N ms (...)`), by `topic-partition`.
fn load_times(server_log: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for l in server_log.lines() {
        let Some(rest) = l.split("Completed load of Log(").nth(1) else {
            continue;
        };
        let ms = rest
            .rsplit_once("ms (")
            .and_then(|(head, _)| head.rsplit(' ').next())
            .and_then(|n| n.parse::<u64>().ok());
        if let (Some(t), Some(p), Some(ms)) = (field(l, "topic="), field(l, "partition="), ms) {
            out.insert(format!("{t}-{p}"), ms);
        }
    }
    out
}

/// The base offsets of the segments the broker recovered, by `topic-partition`: its
/// `Recovering unflushed segment B. R recovered for TP.` lines (Kafka 4.4's `LogLoader`;
/// R is the flushed-to-unflushed ratio in integer division, 0 in practice).
fn recovered_segments(server_log: &str) -> BTreeMap<String, Vec<i64>> {
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for l in server_log.lines() {
        let Some(rest) = l.split("Recovering unflushed segment ").nth(1) else {
            continue;
        };
        let base = rest.split('.').next().and_then(|b| b.parse::<i64>().ok());
        let tp = rest
            .split(" recovered for ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(|r| r.trim_end_matches('.').to_string());
        if let (Some(base), Some(tp)) = (base, tp) {
            out.entry(tp).or_default().push(base);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_lines_are_parsed() {
        let log = "[2026-12-05 16:00:00,000] INFO [LogLoader partition=recovery-none-0, dir=/d] Recovering unflushed segment 0. 0 recovered for recovery-none-0. (org.apache.kafka.storage.internals.log.LogLoader)\n\
                   [2026-12-05 16:00:00,000] INFO [LogLoader partition=recovery-none-0, dir=/d] Recovering unflushed segment 65000. 0 recovered for recovery-none-0. (org.apache.kafka.storage.internals.log.LogLoader)\n\
                   [2026-12-05 16:00:01,000] INFO Completed load of Log(dir=/d/recovery-none-0, topicId=x, topic=recovery-none, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=70000) with 2 segments, local-log-start-offset 0 and log-end-offset 70000 in 1234ms (1/2 completed in /d) (org.apache.kafka.storage.internals.log.LogManager)\n";
        assert_eq!(load_times(log).get("recovery-none-0"), Some(&1234));
        assert_eq!(
            recovered_segments(log).get("recovery-none-0"),
            Some(&vec![0, 65000])
        );
    }
}
