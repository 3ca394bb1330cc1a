//! K1-crash: the K1 workload runs while a transaction is held open, and the broker is
//! killed with SIGKILL at random points. The data directory is copied twice: our
//! `Log::open` recovers one copy (from the broker's recovery point), the broker restarts on
//! the other and recovers it. Then, per segment: the valid `.log` bytes, the offset and
//! time index entries and the `.txnindex` entries must be equal, and so must the log end
//! offsets. Any other difference is listed with its justification, or fails the scenario.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::Log;

use super::broker::Broker;
use super::k1::{config_for, TOPICS};
use super::ours;
use super::Ctx;

/// Broker settings that move the recovery point often (so that an open transaction starts
/// before it) and checkpoint it quickly.
const CRASH_PROPS: &[&str] = &[
    "log.flush.interval.messages=200",
    "log.flush.offset.checkpoint.interval.ms=200",
    "log.flush.scheduler.interval.ms=100",
    // Small preallocated indexes: the killed directories are committed as fixtures.
    "log.index.size.max.bytes=65536",
];

/// `segment.index.bytes` of the crash broker (`log.index.size.max.bytes`).
const MAX_INDEX_SIZE: usize = 65536;

/// One segment's files, decoded.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
struct Seg {
    log: Vec<u8>,
    index: Vec<(i32, i32)>,
    time: Vec<(i64, i32)>,
    txn: Vec<[i64; 4]>,
}

fn read_segments(dir: &Path) -> Result<BTreeMap<i64, Seg>, String> {
    let mut out: BTreeMap<i64, Seg> = BTreeMap::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))? {
        let p = e.map_err(|e| e.to_string())?.path();
        let (Some(stem), Some(ext)) = (
            p.file_stem().and_then(|s| s.to_str()),
            p.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let Ok(base) = stem.parse::<i64>() else {
            continue;
        };
        if !matches!(ext, "log" | "index" | "timeindex" | "txnindex") {
            continue;
        }
        let bytes = std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?;
        let s = out.entry(base).or_default();
        let be32 = |b: &[u8]| i32::from_be_bytes(b.try_into().unwrap());
        let be64 = |b: &[u8]| i64::from_be_bytes(b.try_into().unwrap());
        match ext {
            "log" => s.log = bytes,
            "index" => {
                s.index = bytes
                    .chunks_exact(8)
                    .map(|c| (be32(&c[..4]), be32(&c[4..])))
                    .collect()
            }
            "timeindex" => {
                s.time = bytes
                    .chunks_exact(12)
                    .map(|c| (be64(&c[..8]), be32(&c[8..])))
                    .collect()
            }
            _ => {
                s.txn = bytes
                    .chunks_exact(34)
                    .map(|c| {
                        [
                            be64(&c[2..10]),
                            be64(&c[10..18]),
                            be64(&c[18..26]),
                            be64(&c[26..34]),
                        ]
                    })
                    .collect()
            }
        }
    }
    Ok(out)
}

/// Reads `topic partition offset` lines of a broker checkpoint file.
fn read_checkpoint(path: &Path) -> BTreeMap<String, i64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .skip(2)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            match w[..] {
                [t, p, o] => Some((format!("{t}-{p}"), o.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

/// Log end offsets the broker logged when it loaded each partition.
fn loaded_leo(server_log: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for l in server_log.lines() {
        if !l.contains("Completed load of Log(") {
            continue;
        }
        let field = |k: &str| {
            l.split(k)
                .nth(1)
                .and_then(|r| r.split([',', ')']).next())
                .map(str::to_string)
        };
        if let (Some(t), Some(p), Some(leo)) = (
            field("topic="),
            field("partition="),
            field("logEndOffset=").and_then(|s| s.parse::<i64>().ok()),
        ) {
            out.insert(format!("{t}-{p}"), leo);
        }
    }
    out
}

/// Counts for the scenario line.
#[derive(Default)]
struct Totals {
    kills: usize,
    open_before_rp: usize,
    partitions: usize,
    segments: usize,
    bytes: usize,
    index_entries: usize,
    txn_entries: usize,
    diffs: Vec<String>,
    justified: Vec<String>,
}

/// The K1-crash scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let mut rng = StdRng::seed_from_u64(0xc4a5);
    let mut t = Totals::default();
    let mut fixture_written = false;
    for kill in 0..3 {
        let delay = Duration::from_millis(rng.gen_range(0..2500));
        one_kill(ctx, kill, delay, &mut t, &mut fixture_written)?;
    }
    if t.open_before_rp == 0 {
        t.diffs.push(
            "no kill left a transaction open whose first offset lies before the recovery point"
                .into(),
        );
    }
    for j in &t.justified {
        eprintln!("kafka k1-crash: justified: {j}");
    }
    let line = format!(
        "{} kills ({} with an open transaction before the recovery point), {} partitions, {} segments, {} log bytes, {} index entries, {} txnindex entries compared, {} differences, {} justified",
        t.kills,
        t.open_before_rp,
        t.partitions,
        t.segments,
        t.bytes,
        t.index_entries,
        t.txn_entries,
        t.diffs.len(),
        t.justified.len()
    );
    if t.diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", t.diffs.join("\n  ")))
    }
}

fn one_kill(
    ctx: &Ctx,
    kill: usize,
    delay: Duration,
    t: &mut Totals,
    fixture_written: &mut bool,
) -> Result<(), String> {
    let home = ctx.scratch.join(format!("crash-{kill}"));
    let mut broker = Broker::create(&ctx.jvm, &home, CRASH_PROPS)?;
    broker.start()?;
    let started = Instant::now();
    let mut workload = ctx.jvm.spawn(
        "oracle.Oracle",
        &[
            "k1-produce".into(),
            broker.bootstrap(),
            (20 + kill).to_string(),
            ctx.scale.to_string(),
        ],
    )?;
    // Hold a transaction open on `txn` from as early as possible.
    while !broker.data().join("txn-0").is_dir() {
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the workload created no topic in 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut open = ctx.jvm.spawn(
        "oracle.Oracle",
        &[
            "txn-open".into(),
            broker.bootstrap(),
            "txn".into(),
            "40".into(),
        ],
    )?;
    let out = open
        .child_mut()
        .and_then(|c| c.stdout.take())
        .ok_or("txn-open has no stdout")?;
    let mut line = String::new();
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if line.trim() != "OPEN" {
        return Err(format!("txn-open did not open a transaction: {line:?}"));
    }
    // Kill once the recovery point of `txn-0` has moved past the open transaction's start
    // (it began before the workload wrote to `txn`), plus a random delay.
    let waited = Instant::now();
    while read_checkpoint(&broker.data().join("recovery-point-offset-checkpoint"))
        .get("txn-0")
        .is_none_or(|&rp| rp == 0)
        && waited.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(delay);
    broker.kill9();
    workload.kill9();
    open.kill9();
    t.kills += 1;

    let pristine = home.join("killed");
    ours::copy_dir(&broker.data(), &pristine)?;
    let mine = home.join("ours");
    ours::copy_dir(&pristine, &mine)?;
    let theirs = home.join("broker");
    ours::copy_dir(&pristine, &theirs)?;
    let rp = read_checkpoint(&pristine.join("recovery-point-offset-checkpoint"));

    // Ours: each partition from the broker's recovery point.
    let mut our_leo = BTreeMap::new();
    let mut open_first: Option<(i64, i64)> = None;
    for (topic, _, _) in TOPICS {
        let name = format!("{topic}-0");
        let dir = mine.join(&name);
        if !dir.is_dir() {
            continue;
        }
        let point = rp.get(&name).copied().unwrap_or(0);
        std::fs::write(
            dir.join(segment::log::RECOVERY_POINT_FILE),
            format!("0\n{point}\n"),
        )
        .map_err(|e| e.to_string())?;
        let config = segment::LogConfig {
            max_index_size: MAX_INDEX_SIZE,
            ..config_for(topic)
        };
        let (log, batches) = ours::read_log(&dir, config)?;
        our_leo.insert(name.clone(), log.log_end_offset());
        if *topic == "txn" {
            // The open transaction: transactional batches of a producer with no marker after.
            let mut first: BTreeMap<i64, i64> = BTreeMap::new();
            for b in &batches {
                if b.control {
                    first.remove(&b.producer_id);
                } else if b.transactional {
                    first.entry(b.producer_id).or_insert(b.records[0].offset);
                }
            }
            if let Some(&f) = first.values().min() {
                open_first = Some((f, point));
            }
        }
        log_close(log)?;
    }
    if let Some((first, point)) = open_first {
        if first < point {
            t.open_before_rp += 1;
            if ctx.write_fixtures && !*fixture_written {
                super::write_fixtures(&pristine, "crash", None)?;
                std::fs::write(
                    ctx.scratch.join("crash-fixture.txt"),
                    format!("open transaction from offset {first}, recovery point {point}\n"),
                )
                .map_err(|e| e.to_string())?;
                *fixture_written = true;
            }
        }
        eprintln!(
            "kafka k1-crash: kill {kill} after {:.1} s: open transaction from offset {first}, txn-0 recovery point {point}",
            started.elapsed().as_secs_f64()
        );
    }

    // The broker recovers the other copy.
    broker.set_data(&theirs)?;
    let before = broker.server_log().len();
    broker.start()?;
    broker.stop()?;
    let restart = broker.server_log()[before..].to_string();
    let broker_leo = loaded_leo(&restart);

    for (topic, _, _) in TOPICS {
        let name = format!("{topic}-0");
        let (Some(&leo), Some(a_dir), Some(b_dir)) = (
            our_leo.get(&name),
            Some(mine.join(&name)),
            Some(theirs.join(&name)),
        ) else {
            continue;
        };
        t.partitions += 1;
        let k = format!("kill {kill} {name}");
        match broker_leo.get(&name) {
            Some(&b) if b == leo => {}
            other => t.diffs.push(format!(
                "{k}: log end offset: ours {leo}, broker loaded {other:?}"
            )),
        }
        let a = read_segments(&a_dir)?;
        let b = read_segments(&b_dir)?;
        for (base, sa) in &a {
            t.segments += 1;
            let Some(sb) = b.get(base) else {
                t.diffs
                    .push(format!("{k}: segment {base}: only ours has it"));
                continue;
            };
            t.bytes += sa.log.len();
            t.index_entries += sa.index.len() + sa.time.len();
            t.txn_entries += sa.txn.len();
            if sa.log != sb.log {
                if sb.log.starts_with(&sa.log) {
                    t.justified.push(format!(
                        "{k}: segment {base}: the broker's .log goes on for {} bytes after ours (appended after its restart)",
                        sb.log.len() - sa.log.len()
                    ));
                } else {
                    let first = sa.log.iter().zip(&sb.log).position(|(x, y)| x != y);
                    t.diffs.push(format!(
                        "{k}: segment {base}: .log differs (ours {} bytes, broker {}, first difference at {first:?})",
                        sa.log.len(),
                        sb.log.len()
                    ));
                }
            }
            if sa.index != sb.index {
                t.diffs.push(format!(
                    "{k}: segment {base}: .index entries differ (ours {}, broker {}; first difference at {:?})",
                    sa.index.len(),
                    sb.index.len(),
                    sa.index.iter().zip(&sb.index).position(|(x, y)| x != y)
                ));
            }
            if sa.time != sb.time {
                t.diffs.push(format!(
                    "{k}: segment {base}: .timeindex entries differ (ours {:?}, broker {:?})",
                    sa.time.last(),
                    sb.time.last()
                ));
            }
            if sa.txn != sb.txn {
                t.diffs.push(format!(
                    "{k}: segment {base}: .txnindex entries differ (ours {:?}, broker {:?})",
                    sa.txn, sb.txn
                ));
            }
        }
        for base in b.keys().filter(|x| !a.contains_key(x)) {
            t.diffs
                .push(format!("{k}: segment {base}: only the broker has it"));
        }
    }
    Ok(())
}

fn log_close(log: Log) -> Result<(), String> {
    log.close().map_err(|e| e.to_string())
}
