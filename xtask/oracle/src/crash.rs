//! K1-crash: the K1 workload runs while a transaction is held open, and the broker is
//! killed with SIGKILL at random points. Each killed data directory gives two recovered
//! states: as killed, and with the last segment of each workload partition cut inside one
//! of its last batches (a torn tail; kill delays and cut points come from the run's
//! seed). For each state the directory is copied twice: our `Log::open` recovers one copy
//! (from the broker's recovery point and log start offset), the broker restarts on the
//! other and recovers it. Then, for each of the three workload partitions (all must be
//! there): the log start and end offsets, which segment files exist, per segment the
//! `.log` bytes, the offset and time index entries and the `.txnindex` bytes, which
//! producer-state snapshots exist and each one's entries and bytes, and the
//! leader-epoch checkpoint must be equal; a torn state must end at the torn batch. Any
//! other difference is listed with its justification, or fails the scenario.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use segment::producer::snapshot::{
    decode_leader_epoch_checkpoint, decode_snapshot, LEADER_EPOCH_CHECKPOINT_FILE,
};
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
    /// The extensions of the files present (`log`, `index`, `timeindex`, `txnindex`).
    files: BTreeSet<&'static str>,
    log: Vec<u8>,
    index: Vec<(i32, i32)>,
    time: Vec<(i64, i32)>,
    /// The `.txnindex` bytes, whole (each entry: version, producer id, first offset, last
    /// offset, last stable offset).
    txn: Vec<u8>,
}

/// One partition directory: its segments, producer-state snapshots by offset and its
/// leader-epoch checkpoint (`None`: no file).
#[derive(Default, Debug, Clone)]
pub(crate) struct Part {
    segs: BTreeMap<i64, Seg>,
    snapshots: BTreeMap<i64, Vec<u8>>,
    epochs: Option<Vec<u8>>,
}

impl Part {
    /// The next offset after the last batch of the last segment (v2 batches; the last
    /// segment's base offset if it holds none).
    fn end_offset(&self) -> Option<i64> {
        let (&base, seg) = self.segs.iter().next_back()?;
        Some(
            batch_frames(&seg.log)
                .last()
                .and_then(|&(pos, _)| {
                    let b = &seg.log[pos..];
                    (b.len() >= 27 && b[16] >= 2)
                        .then(|| be64(&b[..8]) + i64::from(be32(&b[23..27])) + 1)
                })
                .unwrap_or(base),
        )
    }
}

fn be32(b: &[u8]) -> i32 {
    i32::from_be_bytes(b.try_into().unwrap())
}

fn be64(b: &[u8]) -> i64 {
    i64::from_be_bytes(b.try_into().unwrap())
}

/// `(position, size)` of each complete batch frame (offset, length, body) of a `.log`.
fn batch_frames(log: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 12 <= log.len() {
        let len = be32(&log[pos + 8..pos + 12]);
        let Ok(len) = usize::try_from(len) else { break };
        let size = 12 + len;
        if pos + size > log.len() {
            break;
        }
        out.push((pos, size));
        pos += size;
    }
    out
}

/// The `.txnindex` entries: (version, [producer id, first offset, last offset, LSO]).
fn txn_entries(bytes: &[u8]) -> Vec<(i16, [i64; 4])> {
    bytes
        .chunks_exact(34)
        .map(|c| {
            (
                i16::from_be_bytes([c[0], c[1]]),
                [
                    be64(&c[2..10]),
                    be64(&c[10..18]),
                    be64(&c[18..26]),
                    be64(&c[26..34]),
                ],
            )
        })
        .collect()
}

pub(crate) fn read_part(dir: &Path) -> Result<Part, String> {
    let mut out = Part::default();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.file_name()
            .is_some_and(|n| n == LEADER_EPOCH_CHECKPOINT_FILE)
        {
            out.epochs = Some(std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?);
            continue;
        }
        let (Some(stem), Some(ext)) = (
            p.file_stem().and_then(|s| s.to_str()),
            p.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let Ok(base) = stem.parse::<i64>() else {
            continue;
        };
        let ext: &'static str = match ext {
            "log" => "log",
            "index" => "index",
            "timeindex" => "timeindex",
            "txnindex" => "txnindex",
            "snapshot" => "snapshot",
            _ => continue,
        };
        let bytes = std::fs::read(&p).map_err(|e| format!("{p:?}: {e}"))?;
        if ext == "snapshot" {
            out.snapshots.insert(base, bytes);
            continue;
        }
        let s = out.segs.entry(base).or_default();
        s.files.insert(ext);
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
            _ => s.txn = bytes,
        }
    }
    Ok(out)
}

/// Reads `topic partition offset` lines of a broker checkpoint file.
pub(crate) fn read_checkpoint(path: &Path) -> BTreeMap<String, i64> {
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

/// Log start and end offsets the broker logged when it loaded each partition.
pub(crate) fn loaded_offsets(server_log: &str) -> BTreeMap<String, (i64, i64)> {
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
        let num = |k: &str| field(k).and_then(|s| s.parse::<i64>().ok());
        if let (Some(t), Some(p), Some(lso), Some(leo)) = (
            field("topic="),
            field("partition="),
            num("logStartOffset="),
            num("logEndOffset="),
        ) {
            out.insert(format!("{t}-{p}"), (lso, leo));
        }
    }
    out
}

/// Counts for the scenario line.
#[derive(Default)]
pub(crate) struct Totals {
    pub(crate) kills: usize,
    pub(crate) open_before_rp: usize,
    /// Recovered states compared (each kill, and each kill's torn copy).
    pub(crate) states: usize,
    pub(crate) torn_states: usize,
    pub(crate) torn_partitions: usize,
    pub(crate) partitions: usize,
    pub(crate) segments: usize,
    pub(crate) bytes: usize,
    pub(crate) index_entries: usize,
    pub(crate) txn_entries: usize,
    pub(crate) snapshots: usize,
    pub(crate) snapshot_entries: usize,
    pub(crate) epoch_entries: usize,
    pub(crate) diffs: Vec<String>,
    pub(crate) justified: Vec<String>,
}

/// A `.log` cut inside one of its last batches (the same cut in both copies).
#[derive(Clone, Debug)]
pub(crate) struct Tear {
    /// Base offset of the segment (the partition's last).
    segment: i64,
    /// Position and base offset of the batch the cut is in.
    batch_pos: usize,
    batch_base: i64,
    /// The new length of the `.log`.
    cut: usize,
    /// The bytes of the torn batch that remain (`batch_pos..cut`).
    partial: Vec<u8>,
}

/// The K1-crash scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let mut rng = StdRng::seed_from_u64(ctx.seed);
    let mut t = Totals::default();
    let mut fixture_written = false;
    // Under `--sabotage` one kill: it gives the cut states the sabotage damages.
    let kills = if ctx.sabotage.is_some() { 1 } else { 3 };
    for kill in 0..kills {
        let delay = Duration::from_millis(rng.gen_range(0..2500));
        one_kill(ctx, kill, delay, &mut rng, &mut t, &mut fixture_written)?;
    }
    if t.open_before_rp == 0 && ctx.sabotage.is_none() {
        t.diffs.push(
            "no kill left a transaction open whose first offset lies before the recovery point"
                .into(),
        );
    }
    if t.torn_partitions == 0 {
        t.diffs.push(
            "no state with a cut tail: no partition had a batch to cut in its last segment".into(),
        );
    }
    for j in &t.justified {
        eprintln!("kafka k1-crash: justified: {j}");
    }
    let line = format!(
        "seed {}: {} kills ({} with an open transaction before the recovery point), {} recovered states ({} with cut tails, {} partitions cut), {} partitions, {} segments, {} log bytes, {} index entries, {} txnindex entries, {} snapshots ({} producer entries), {} leader epochs compared, {} differences, {} justified",
        ctx.seed,
        t.kills,
        t.open_before_rp,
        t.states,
        t.torn_states,
        t.torn_partitions,
        t.partitions,
        t.segments,
        t.bytes,
        t.index_entries,
        t.txn_entries,
        t.snapshots,
        t.snapshot_entries,
        t.epoch_entries,
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
    rng: &mut StdRng,
    t: &mut Totals,
    fixture_written: &mut bool,
) -> Result<(), String> {
    let home = ctx.scratch.join(format!("crash-{kill}"));
    // The workload's topics set retention.ms=-1 (Workload.topicConfig), so every kill keeps
    // every segment, and `codecs` (all five codecs) has batches to tear.
    let props = CRASH_PROPS.to_vec();
    let mut broker = Broker::create(&ctx.jvm, &home, &props)?;
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
    let label = format!("kill {kill}");
    let open_first = recover_and_compare(ctx, &mut broker, &home, &pristine, &label, None, t)?;
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
    // The same killed state with each partition's last segment torn inside one of its
    // last batches.
    recover_and_compare(
        ctx,
        &mut broker,
        &home,
        &pristine,
        &format!("kill {kill} cut"),
        Some(rng),
        t,
    )?;
    Ok(())
}

/// Chooses a cut inside one of the last three batches of the last segment of `dir` (none
/// if that segment holds no complete batch).
fn choose_tear(dir: &Path, rng: &mut StdRng) -> Result<Option<Tear>, String> {
    // Drawn before looking at the files: the same seed draws the same numbers.
    let (which, in_header, within) = (
        rng.gen_range(0..3usize),
        rng.gen_range(0..3) == 0,
        rng.gen::<f64>(),
    );
    let logs = ours::log_files(dir)?;
    let Some(last) = logs.last() else {
        return Ok(None);
    };
    let segment: i64 = last
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{last:?}: not a segment name"))?;
    let bytes = std::fs::read(last).map_err(|e| format!("{last:?}: {e}"))?;
    let frames = batch_frames(&bytes);
    if frames.is_empty() {
        return Ok(None);
    }
    let (pos, size) = frames[frames.len() - 1 - which.min(frames.len() - 1)];
    // Strictly inside the batch: at least one byte of it kept, at least one cut off; one
    // time in three inside its 61-byte v2 header (length, CRC or count cut).
    let span = if in_header { size.min(61) } else { size };
    let cut = pos + 1 + ((within * (span - 1) as f64) as usize).min(size - 2);
    Ok(Some(Tear {
        segment,
        batch_pos: pos,
        batch_base: be64(&bytes[pos..pos + 8]),
        cut,
        partial: bytes[pos..cut].to_vec(),
    }))
}

fn segment_log(dir: &Path, base: i64) -> std::path::PathBuf {
    dir.join(format!(
        "{}.log",
        segment::names::filename_prefix_from_offset(base)
    ))
}

/// One recovered state: two copies of `pristine` (each torn the same way when `tear_rng`
/// is given), one recovered by our `Log::open`, one by the broker; then every file of each
/// workload partition compared. Returns the open transaction of `txn-0` seen by ours
/// (first offset, recovery point), if any.
fn recover_and_compare(
    ctx: &Ctx,
    broker: &mut Broker,
    home: &Path,
    pristine: &Path,
    label: &str,
    tear_rng: Option<&mut StdRng>,
    t: &mut Totals,
) -> Result<Option<(i64, i64)>, String> {
    let tag = label.replace(' ', "-");
    let mine = home.join(format!("ours-{tag}"));
    ours::copy_dir(pristine, &mine)?;
    let theirs = home.join(format!("broker-{tag}"));
    ours::copy_dir(pristine, &theirs)?;
    let rp = read_checkpoint(&pristine.join("recovery-point-offset-checkpoint"));
    let ls = read_checkpoint(&pristine.join("log-start-offset-checkpoint"));
    t.states += 1;

    // Tears, identical in both copies.
    let mut tears: BTreeMap<String, Tear> = BTreeMap::new();
    if let Some(rng) = tear_rng {
        for (topic, _, _) in TOPICS {
            let name = format!("{topic}-0");
            if !pristine.join(&name).is_dir() {
                continue;
            }
            let Some(tear) = choose_tear(&pristine.join(&name), rng)? else {
                continue;
            };
            for side in [&mine, &theirs] {
                let p = segment_log(&side.join(&name), tear.segment);
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&p)
                    .map_err(|e| format!("{p:?}: {e}"))?;
                f.set_len(tear.cut as u64)
                    .map_err(|e| format!("{p:?}: {e}"))?;
            }
            eprintln!(
                "kafka k1-crash: {label}: {name}: segment {} cut at byte {}, inside the batch at {} (offset {})",
                tear.segment, tear.cut, tear.batch_pos, tear.batch_base
            );
            tears.insert(name, tear);
        }
        t.torn_states += 1;
        t.torn_partitions += tears.len();
    }

    // Ours: each partition from the broker's recovery point and log start offset.
    let mut our_offsets: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut open_first: Option<(i64, i64)> = None;
    for (topic, _, _) in TOPICS {
        let name = format!("{topic}-0");
        let dir = mine.join(&name);
        if !dir.is_dir() {
            continue;
        }
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
        let config = segment::LogConfig {
            max_index_size: MAX_INDEX_SIZE,
            ..config_for(topic)
        };
        let (log, batches) = ours::read_log(&dir, config)?;
        our_offsets.insert(name.clone(), (log.log_start_offset(), log.log_end_offset()));
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
    if ctx.sabotaged("k1-crash-torn") {
        // Our side keeps one torn batch: its remaining bytes go back after our recovered
        // `.log`.
        if let Some((name, tear)) = tears.iter().next() {
            let p = segment_log(&mine.join(name), tear.segment);
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&p)
                .map_err(|e| format!("{p:?}: {e}"))?;
            f.write_all(&tear.partial)
                .map_err(|e| format!("{p:?}: {e}"))?;
        }
    }

    // The broker recovers the other copy.
    broker.set_data(&theirs)?;
    let before = broker.server_log().len();
    broker.start()?;
    broker.stop()?;
    let restart = broker.server_log()[before..].to_string();
    let loaded = loaded_offsets(&restart);
    let broker_ls = read_checkpoint(&theirs.join("log-start-offset-checkpoint"));

    let mut compared = 0;
    for (topic, _, _) in TOPICS {
        let name = format!("{topic}-0");
        let k = format!("{label} {name}");
        let (a_dir, b_dir) = (mine.join(&name), theirs.join(&name));
        if !a_dir.is_dir() || !b_dir.is_dir() {
            t.diffs.push(format!(
                "{k}: no partition directory (ours: {}, broker: {})",
                a_dir.is_dir(),
                b_dir.is_dir()
            ));
            continue;
        }
        let (Some(&(our_ls, our_leo)), Some(&(b_ls, b_leo))) =
            (our_offsets.get(&name), loaded.get(&name))
        else {
            t.diffs.push(format!(
                "{k}: log offsets missing (ours {:?}, broker loaded {:?})",
                our_offsets.get(&name),
                loaded.get(&name)
            ));
            continue;
        };
        compared += 1;
        t.partitions += 1;
        let a = read_part(&a_dir)?;
        let b = read_part(&b_dir)?;
        let tear = tears.get(&name);
        compare_partition(&k, &a, &b, (our_ls, our_leo), (b_ls, b_leo), tear, t);
        // The broker's log start offset after it stopped: its checkpoint, which lists a
        // partition only when the log start lies above the first segment's base offset.
        let b_ls_after = broker_ls
            .get(&name)
            .copied()
            .or_else(|| b.segs.keys().next().copied());
        if b_ls_after != Some(our_ls) {
            t.diffs.push(format!(
                "{k}: log start offset: ours {our_ls}, the broker's after its stop {b_ls_after:?} (log-start-offset-checkpoint or first segment)"
            ));
        }
    }
    if compared != TOPICS.len() {
        t.diffs.push(format!(
            "{label}: {compared} of {} workload partitions compared",
            TOPICS.len()
        ));
    }
    eprintln!(
        "kafka k1-crash: {label}: {compared} of {} partitions compared",
        TOPICS.len()
    );
    Ok(open_first)
}

/// Every file of one partition, ours (`a`) against the broker's (`b`).
pub(crate) fn compare_partition(
    k: &str,
    a: &Part,
    b: &Part,
    (our_ls, our_leo): (i64, i64),
    (b_ls, b_leo): (i64, i64),
    tear: Option<&Tear>,
    t: &mut Totals,
) {
    let cut_note = tear.map_or(String::new(), |x| {
        format!(
            " (tail cut: segment {} at byte {}, inside the batch at {} of offset {})",
            x.segment, x.cut, x.batch_pos, x.batch_base
        )
    });
    if b_leo != our_leo {
        t.diffs.push(format!(
            "{k}: log end offset: ours {our_leo}, broker loaded {b_leo}{cut_note}"
        ));
    }
    if b_ls != our_ls {
        t.diffs.push(format!(
            "{k}: log start offset: ours {our_ls}, broker loaded {b_ls}"
        ));
    }
    if let Some(x) = tear {
        // Both recoveries must drop the torn batch and everything after it.
        if our_leo != x.batch_base {
            t.diffs.push(format!(
                "{k}: ours did not truncate to the torn batch: log end offset {our_leo}{cut_note}"
            ));
        }
        if b_leo != x.batch_base {
            t.diffs.push(format!(
                "{k}: the broker did not truncate to the cut batch: log end offset {b_leo}{cut_note}"
            ));
        }
    }
    // The broker's .log may go on after its restart (markers the transaction coordinator
    // wrote); where it ends then.
    let b_end = b.end_offset().unwrap_or(b_leo);
    let mut broker_went_on = false;
    for base in a.segs.keys().chain(b.segs.keys()).collect::<BTreeSet<_>>() {
        let (Some(sa), Some(sb)) = (a.segs.get(base), b.segs.get(base)) else {
            t.diffs.push(format!(
                "{k}: segment {base}: only {} has it{cut_note}",
                if a.segs.contains_key(base) {
                    "ours"
                } else {
                    "the broker"
                }
            ));
            continue;
        };
        t.segments += 1;
        t.bytes += sa.log.len();
        t.index_entries += sa.index.len() + sa.time.len();
        t.txn_entries += sa.txn.len() / 34;
        if sa.files != sb.files {
            t.diffs.push(format!(
                "{k}: segment {base}: files present differ: ours {:?}, broker {:?}",
                sa.files, sb.files
            ));
        }
        if sa.log != sb.log {
            if sb.log.starts_with(&sa.log) {
                broker_went_on = true;
                t.justified.push(format!(
                    "{k}: segment {base}: the broker's .log goes on for {} bytes after ours (appended after its restart)",
                    sb.log.len() - sa.log.len()
                ));
            } else {
                let first = sa.log.iter().zip(&sb.log).position(|(x, y)| x != y);
                let kept = tear
                    .filter(|x| x.segment == *base && sa.log.len() > x.batch_pos)
                    .map_or(String::new(), |x| {
                        format!(
                            "; ours keeps {} bytes of the torn batch",
                            sa.log.len() - x.batch_pos
                        )
                    });
                t.diffs.push(format!(
                    "{k}: segment {base}: .log differs (ours {} bytes, broker {}, first difference at {first:?}{kept}){cut_note}",
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
                "{k}: segment {base}: .txnindex bytes differ (ours {} bytes {:?}, broker {} bytes {:?})",
                sa.txn.len(),
                txn_entries(&sa.txn),
                sb.txn.len(),
                txn_entries(&sb.txn)
            ));
        }
    }

    // Producer-state snapshots: which offsets, then content, then bytes.
    for off in a
        .snapshots
        .keys()
        .chain(b.snapshots.keys())
        .collect::<BTreeSet<_>>()
    {
        let (sa, sb) = (a.snapshots.get(off), b.snapshots.get(off));
        let (Some(sa), Some(sb)) = (sa, sb) else {
            if sa.is_none() && broker_went_on && *off > our_leo && *off == b_end {
                t.justified.push(format!(
                    "{k}: snapshot {off}: only the broker's, taken when it closed at its log end, after what it appended after its restart"
                ));
            } else {
                t.diffs.push(format!(
                    "{k}: snapshot {off}: only {} has it (ours at {:?}, the broker's at {:?}){cut_note}",
                    if sa.is_some() { "ours" } else { "the broker" },
                    a.snapshots.keys().collect::<Vec<_>>(),
                    b.snapshots.keys().collect::<Vec<_>>()
                ));
            }
            continue;
        };
        t.snapshots += 1;
        match (decode_snapshot(sa), decode_snapshot(sb)) {
            (Ok(ea), Ok(eb)) => {
                t.snapshot_entries += ea.len();
                if ea != eb {
                    let first = ea.iter().zip(&eb).position(|(x, y)| x != y);
                    let same_set = {
                        let (mut x, mut y) = (ea.clone(), eb.clone());
                        x.sort_by_key(|e| e.producer_id);
                        y.sort_by_key(|e| e.producer_id);
                        x == y
                    };
                    t.diffs.push(format!(
                        "{k}: snapshot {off}: producer entries differ{}: ours {} entries, broker {}; first difference at {first:?}: ours {:?}, broker {:?}{cut_note}",
                        if same_set { " (only in order)" } else { "" },
                        ea.len(),
                        eb.len(),
                        first.map(|i| ea[i]),
                        first.map(|i| eb[i]),
                    ));
                } else if sa != sb {
                    t.diffs.push(format!(
                        "{k}: snapshot {off}: same entries, different bytes ({} and {})",
                        sa.len(),
                        sb.len()
                    ));
                }
            }
            (ra, rb) => t.diffs.push(format!(
                "{k}: snapshot {off}: cannot decode: ours {:?}, broker {:?}",
                ra.err(),
                rb.err()
            )),
        }
    }

    // The leader-epoch checkpoint.
    let epochs = |f: &Option<Vec<u8>>| f.as_deref().map(decode_leader_epoch_checkpoint).transpose();
    match (epochs(&a.epochs), epochs(&b.epochs)) {
        (Ok(Some(ea)), Ok(Some(eb))) => {
            t.epoch_entries += ea.len();
            if ea != eb {
                let last = ea.last().map_or(-1, |e| e.0);
                let extra_ok = eb.starts_with(&ea)
                    && eb[ea.len()..]
                        .iter()
                        .all(|&(epoch, start)| epoch > last && start >= our_leo);
                if extra_ok {
                    t.justified.push(format!(
                        "{k}: leader-epoch-checkpoint: the broker's goes on with {:?}: the epochs it became leader in after its restart, from its log end",
                        &eb[ea.len()..]
                    ));
                } else {
                    t.diffs.push(format!(
                        "{k}: leader-epoch-checkpoint differs: ours {ea:?}, broker {eb:?}"
                    ));
                }
            }
        }
        (ra, rb) => {
            t.diffs.push(format!(
                "{k}: leader-epoch-checkpoint: ours {ra:?}, broker {rb:?} (missing or malformed)"
            ));
        }
    }
}

fn log_close(log: Log) -> Result<(), String> {
    log.close().map_err(|e| e.to_string())
}
