//! `cargo xtask vs-kafka --only opens`: a whole partition directory opened by our
//! `Log::open` and by Kafka 4.4.0's `UnifiedLog.create` (its `LogLoader`), each in its own
//! long-lived process (`vs-kafka-ours log-open`, `oracle.OpensBench`), issue 41 goal 4.
//!
//! **Input**, written once by our `Log` and closed cleanly (`vs-kafka-ours gen-opens`):
//! one partition directory (`opens-0`) of `segments` segments (5,000; `--quick` 500) of 4
//! batches of 16 records each (a 8-byte key, a 120-byte value; 9,012 bytes a segment),
//! rolled by `Log::roll`, so each segment but the first has a producer snapshot at its
//! base (and one is at the log end), as Kafka's roll and close leave them.
//!
//! **Warm rows** (the scratch directory, tmpfs): each run copies the input for each side
//! (untimed: an open writes — ours removes the clean-shutdown marker, Kafka resizes the
//! active segment's indexes) and asks each for one open of its copy, timed in-process:
//! - **clean**: ours finds the marker `.kafka_cleanshutdown` and the `recovery-point`
//!   checkpoint at the log end; Kafka is given `lastShutdownClean = true` and the same
//!   recovery point (the log end), as its `LogManager` passes them after a clean shutdown;
//! - **unclean**: ours has the marker removed first (untimed), so it recovers from the
//!   checkpointed recovery point (the log end: the last segment is recovered, as after a
//!   crash right after a flush); Kafka is given `lastShutdownClean = false` and the same
//!   recovery point, as `cargo xtask kafka`'s k1-crash opens from the broker's recovery
//!   point.
//!
//! A first run (Kafka's JIT warm-up), `warmups` untimed runs, then `rounds` timed runs,
//! the order of the two sides alternating; a row's ratio is the median of ours/Kafka
//! within each run, with quartiles.
//!
//! **Answers**, every run: log start offset, log end offset and segment count equal, and
//! every segment file of the two opened directories equal byte for byte while both logs
//! are open (the active segment's `.index`/`.timeindex` left out: Kafka's open resizes them
//! to `segment.index.bytes`, ours defers that to the first append,
//! `docs/kafka-behaviour.md#log-loading`). `--sabotage open-drop-segment` deletes the first
//! segment's `.log` of our copy before our open, and the run fails.
//!
//! **Ceilings** (`docs/performance.md#vs-kafka-opens-ceilings`), ours (`ceil-open`,
//! `vs-kafka-ours`'s `opens::ceiling`), run first in every run of every row, on the same
//! bytes: **list + open** (the directory listed, every `.log` opened and `fstat`ed, the
//! descriptors held until the timer stops: what any loader must do, and all Kafka's clean
//! open does with the disk), bound first, and **list + open + check reads** (the same,
//! plus the pages our load-time check reads, as plain `pread`s; cold: with the loader's
//! read-ahead advice). Warm: on a fresh copy of the input, made as each side's is; cold:
//! on the same partitions, each ceiling after its own `drop_caches`. Their answers are
//! checked on every run: the `.log`s opened must be the segments the sides report, their
//! sizes must sum to the directory's `.log` bytes (measured untimed), and each first
//! batch header's base offset must be its file name's. Each row gets `ours/ceiling`
//! against both. `--sabotage ceiling-open-skip` makes the ceilings leave out the
//! last `.log` (by base offset), and the run fails.
//!
//! **Descriptors and mappings**: each process counts `/proc/self/fd` entries and
//! `/proc/self/maps` lines just before and just after its open; the rows print the
//! difference (what the open holds) and `vm.max_map_count`.
//!
//! **Cold** (`cold_segments`, 50,000; `--quick` 5,000): the same layout written on tmpfs
//! and copied once to the disk's file system (`/var/tmp`), split into partitions of at
//! most [`COLD_PARTITION_SEGMENTS`] segments (both sides hold a descriptor per segment, and
//! the hard `RLIMIT_NOFILE` here may be below the total). Before each side's turn:
//! `sync` and `echo 3 > /proc/sys/vm/drop_caches` (as root; without it the row is
//! marked warm); then each partition is opened (timed), counted and closed before the next.
//! Both sides open the same directories (clean opens: neither changes a segment file but
//! Kafka's active indexes, which its close trims back; ours removes its marker and its
//! close writes it back).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::broker::Jvm;
use super::vs::{quantile, settle, Server};

/// Sizes and repetitions of the opens rows.
#[derive(Clone, Copy)]
pub struct OpensOpts {
    /// Segments of the warm rows' partition.
    pub segments: usize,
    /// Segments of the cold row, 0 for none.
    pub cold_segments: usize,
    pub rounds: usize,
    pub warmups: usize,
    /// Cold rounds (each side opens every cold partition once a round).
    pub cold_rounds: usize,
    pub seed: u64,
    /// The sabotage `open-drop-segment`.
    pub drop_segment: bool,
    /// The sabotage `ceiling-open-skip`: the ceilings leave out the last `.log` (by base offset).
    pub ceiling_skip: bool,
}

/// The two ceilings of every opens row, bound in this order (name, `ceil-open` mode):
/// `docs/performance.md#vs-kafka-opens-ceilings`.
const CEILINGS: [(&str, &str); 2] = [
    ("list + open", "open"),
    ("list + open + check reads", "reads"),
];

/// A ceiling's answer to `ceil-open`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CeilingReply {
    secs: f64,
    /// `.log` files opened.
    logs: i64,
    /// The sum of their sizes.
    bytes: i64,
    /// `.log`s whose first header's base offset matched the name (`reads` only).
    matched: i64,
}

/// Asks our server for one run of the ceiling `mode` (`open`, `reads`) on `dir`.
fn ceiling(
    server: &mut Server,
    dir: &Path,
    mode: &str,
    advise: bool,
    skip: bool,
) -> Result<CeilingReply, String> {
    let w = server.call(&format!(
        "ceil-open {} {mode} {} {}",
        dir.display(),
        u8::from(advise),
        u8::from(skip)
    ))?;
    let n: Vec<i64> = w.iter().filter_map(|s| s.parse().ok()).collect();
    if n.len() != 4 || w.len() != 4 {
        return Err(format!("{}: a `ceil-open` reply of {w:?}", server.name));
    }
    Ok(CeilingReply {
        secs: n[0] as f64 / 1e9,
        logs: n[1],
        bytes: n[2],
        matched: n[3],
    })
}

/// The answer check of one ceiling run (`reads`: the ceiling with the check's reads):
/// the `.log`s opened must be the `segments` both sides report, their sizes must sum to
/// the directory's `.log` bytes (`bytes`, measured untimed), and with `reads` every
/// first header's base offset must equal its file name's.
fn check_ceiling(
    label: &str,
    c: &CeilingReply,
    reads: bool,
    segments: i64,
    bytes: u64,
) -> Option<String> {
    let matched_ok = !reads || c.matched == segments;
    (c.logs != segments || c.bytes != bytes as i64 || !matched_ok).then(|| {
        format!(
            "MISMATCH {label}: {} .log files of {} bytes opened{}, the sides' segments {segments}, \
             the directory's .log bytes {bytes}",
            c.logs,
            c.bytes,
            if reads {
                format!(", {} first headers at their name's offset", c.matched)
            } else {
                String::new()
            }
        )
    })
}

/// The bytes of the `.log` files in `dir` (untimed, for the ceilings' answer check).
fn log_bytes(dir: &Path) -> Result<u64, String> {
    let mut n = 0;
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if p.extension().is_some_and(|x| x == "log") {
            n += std::fs::metadata(&p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .len();
        }
    }
    Ok(n)
}

/// `, ours/ceiling = C [Q1, Q3] (ceiling: NAME; first runs F)` for each ceiling: the
/// ratio within each timed round, and the first runs'.
fn ceiling_ratios(ratios: &[Vec<f64>; 2], first: &[f64; 2]) -> String {
    let mut l = String::new();
    for (j, (name, _)) in CEILINGS.iter().enumerate() {
        l.push_str(&format!(
            ", ours/ceiling = {:.2} [{:.2}, {:.2}] (ceiling: {name}; first runs {:.2})",
            quantile(&ratios[j], 0.5),
            quantile(&ratios[j], 0.25),
            quantile(&ratios[j], 0.75),
            first[j]
        ));
    }
    l
}

/// At most this many segments in one cold partition: below the hard descriptor limit
/// of a default container (20,000 here) with room for the JVM's own.
pub const COLD_PARTITION_SEGMENTS: usize = 12_500;

/// One side's answer to an open.
#[derive(Clone, Debug, Default, PartialEq)]
struct OpenReply {
    secs: f64,
    /// Log start offset, log end offset, segments.
    answer: [i64; 3],
    fds: (i64, i64),
    maps: (i64, i64),
}

fn parse_reply(w: &[String], who: &str) -> Result<OpenReply, String> {
    let n: Vec<i64> = w.iter().filter_map(|s| s.parse().ok()).collect();
    if n.len() != 8 || w.len() != 8 {
        return Err(format!("{who}: an `open` reply of {w:?}"));
    }
    Ok(OpenReply {
        secs: n[0] as f64 / 1e9,
        answer: [n[1], n[2], n[3]],
        fds: (n[4], n[5]),
        maps: (n[6], n[7]),
    })
}

/// Asks `server` to open `dir` as `id`; `kafka` selects the protocol's form.
fn open(
    server: &mut Server,
    kafka: bool,
    id: &str,
    dir: &Path,
    clean: bool,
    leo: i64,
    sabotage: bool,
) -> Result<OpenReply, String> {
    let c = u8::from(clean);
    let cmd = if kafka {
        format!("open {id} {} {c} {leo}", dir.display())
    } else {
        format!("log-open {id} {} {c} {}", dir.display(), u8::from(sabotage))
    };
    parse_reply(&server.call(&cmd)?, server.name)
}

fn close(server: &mut Server, kafka: bool, id: &str) -> Result<(), String> {
    server
        .call(&format!(
            "{} {id}",
            if kafka { "close" } else { "log-close" }
        ))
        .map(|_| ())
}

/// `vm.max_map_count`, or `?`.
fn max_map_count() -> String {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .map_or("?".into(), |s| s.trim().to_string())
}

/// The hard descriptor limit of this process (inherited by both servers), or `?`.
fn nofile_limit() -> String {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(4).map(String::from))
        })
        .unwrap_or_else(|| "?".into())
}

/// Runs the opens rows; returns the rows and pushes findings.
pub fn run(
    jvm: &Jvm,
    ours_bin: &Path,
    dir: &Path,
    prefix: &[String],
    o: &OpensOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let (mut ours, _) = Server::spawn_ours(ours_bin, prefix)?;
    let (mut kafka, _) = Server::spawn_kafka(jvm, "oracle.OpensBench", prefix)?;
    let result = (|| {
        let mut rows = Vec::new();
        if o.segments > 0 {
            rows = measure_warm(&mut ours, &mut kafka, dir, o, findings)?;
        }
        if o.cold_segments > 0 {
            rows.extend(measure_cold(&mut ours, &mut kafka, dir, o, findings)?);
        }
        Ok(rows)
    })();
    ours.quit();
    kafka.quit();
    result
}

/// The warm rows: clean and unclean opens of copies of one partition on tmpfs.
fn measure_warm(
    ours: &mut Server,
    kafka: &mut Server,
    dir: &Path,
    o: &OpensOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let t = Instant::now();
    let input = dir.join("opens-input/opens-0");
    let w = ours.call(&format!(
        "gen-opens {} {} {}",
        o.seed,
        input.display(),
        o.segments
    ))?;
    let leo: i64 = w
        .first()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("gen-opens: a reply of {w:?}"))?;
    eprintln!(
        "vs-kafka opens: {} segments (log end {leo}, {} bytes) written in {:.1} s",
        o.segments,
        w.get(1).map_or("?", String::as_str),
        t.elapsed().as_secs_f64()
    );
    let work = |side: &str| dir.join(format!("opens-{side}/opens-0"));
    let input_bytes = log_bytes(&input)?;
    let runs = 1 + o.warmups + o.rounds;
    let mut rows = Vec::new();
    for clean in [true, false] {
        let mode = if clean { "clean" } else { "unclean" };
        let (mut ot, mut kt, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut first = (0.0, 0.0);
        let mut last: Option<(OpenReply, OpenReply)> = None;
        let mut compared = (0usize, 0u64);
        // The ceilings: each run's times, ours/ceiling within each timed run, the first
        // run's ratio.
        let (mut ct, mut cratios) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        let mut cfirst = [(0.0, 0.0); 2];
        for run in 0..runs {
            let kafka_first = run > o.warmups && run % 2 == 1;
            // The ceilings first, on a copy made as the sides' are.
            let cd = work("ceiling");
            super::vs_clean::copy_dir(&input, &cd)?;
            let mut cr = [CeilingReply::default(); 2];
            for (j, (_, mode)) in CEILINGS.iter().enumerate() {
                cr[j] = ceiling(ours, &cd, mode, false, o.ceiling_skip)?;
            }
            let _ = std::fs::remove_dir_all(dir.join("opens-ceiling"));
            let mut replies: [Option<OpenReply>; 2] = [None, None];
            for k in [kafka_first, !kafka_first] {
                let (side, server) = if k {
                    ("kafka", &mut *kafka)
                } else {
                    ("ours", &mut *ours)
                };
                let wd = work(side);
                super::vs_clean::copy_dir(&input, &wd)?;
                replies[usize::from(k)] =
                    Some(open(server, k, "w", &wd, clean, leo, o.drop_segment)?);
            }
            let [Some(or), Some(kr)] = replies else {
                return Err("a side did not answer".into());
            };
            let label = format!("open {mode} (run {run})");
            if or.answer != kr.answer {
                findings.push(format!(
                    "MISMATCH {label}: ours log start, log end, segments {:?}, Kafka's {:?}",
                    or.answer, kr.answer
                ));
            }
            for (j, (name, _)) in CEILINGS.iter().enumerate() {
                findings.extend(check_ceiling(
                    &format!("ceiling {name} before {label}"),
                    &cr[j],
                    j == 1,
                    kr.answer[2],
                    input_bytes,
                ));
            }
            compared =
                super::vs_clean::compare_dirs(&label, &work("kafka"), &work("ours"), findings)?;
            close(ours, false, "w")?;
            close(kafka, true, "w")?;
            for side in ["ours", "kafka"] {
                let _ = std::fs::remove_dir_all(dir.join(format!("opens-{side}")));
            }
            eprintln!(
                "vs-kafka opens {mode}: run {run}{}: ours {:.3} s, Kafka {:.3} s, ceilings {:.3} s, {:.3} s",
                super::vs_clean::run_label(run, o.warmups),
                or.secs,
                kr.secs,
                cr[0].secs,
                cr[1].secs
            );
            if run == 0 {
                first = (or.secs, kr.secs);
                for j in 0..2 {
                    cfirst[j] = (cr[j].secs, or.secs / cr[j].secs);
                }
            } else if run > o.warmups {
                ratios.push(or.secs / kr.secs);
                ot.push(or.secs);
                kt.push(kr.secs);
                for j in 0..2 {
                    ct[j].push(cr[j].secs);
                    cratios[j].push(or.secs / cr[j].secs);
                }
            }
            last = Some((or, kr));
        }
        let Some((lo, lk)) = last else {
            return Err("no run".into());
        };
        eprintln!(
            "vs-kafka opens {mode}: per-round ours/kafka {:?}; {} files ({} bytes) equal on both sides",
            ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>(),
            compared.0,
            compared.1
        );
        let med = |v: &[f64]| quantile(v, 0.5);
        for (j, (name, _)) in CEILINGS.iter().enumerate() {
            rows.push(format!(
                "ceiling {name} of {} segments ({mode} rounds, tmpfs) = {:.1} ms (first run {:.1} ms)",
                o.segments,
                med(&ct[j]) * 1e3,
                cfirst[j].0 * 1e3
            ));
        }
        rows.push(format!(
            "open {} segments {mode} (tmpfs) ours/kafka = {:.3} [{:.3}, {:.3}] (ours {:.1} ms, kafka {:.1} ms; \
             first run ours {:.1} ms, kafka {:.1} ms){}",
            o.segments,
            med(&ratios),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            med(&ot) * 1e3,
            med(&kt) * 1e3,
            first.0 * 1e3,
            first.1 * 1e3,
            ceiling_ratios(&cratios, &[cfirst[0].1, cfirst[1].1])
        ));
        rows.push(format!(
            "held after an open {mode} of {} segments: fds ours +{} ({} -> {}) / kafka +{} ({} -> {}), \
             mappings ours +{} ({} -> {}) / kafka +{} ({} -> {}); vm.max_map_count {}",
            o.segments,
            lo.fds.1 - lo.fds.0,
            lo.fds.0,
            lo.fds.1,
            lk.fds.1 - lk.fds.0,
            lk.fds.0,
            lk.fds.1,
            lo.maps.1 - lo.maps.0,
            lo.maps.0,
            lo.maps.1,
            lk.maps.1 - lk.maps.0,
            lk.maps.0,
            lk.maps.1,
            max_map_count()
        ));
    }
    Ok(rows)
}

/// `sync` then `echo 3 > /proc/sys/vm/drop_caches`; false when the caches cannot be
/// dropped (not root).
fn drop_caches() -> bool {
    settle();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// The cold row: clean opens of the cold partitions on the disk's file system, page cache
/// dropped before each side's turn.
fn measure_cold(
    ours: &mut Server,
    kafka: &mut Server,
    dir: &Path,
    o: &OpensOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let parts = o.cold_segments.div_ceil(COLD_PARTITION_SEGMENTS).max(1);
    let per = o.cold_segments / parts;
    let t = Instant::now();
    let disk = tempfile::Builder::new()
        .prefix("vs-kafka-cold-")
        .tempdir_in("/var/tmp")
        .map_err(|e| format!("/var/tmp: {e}"))?;
    let mut inputs: Vec<(PathBuf, i64, u64)> = Vec::new();
    for p in 0..parts {
        let tmp = dir.join(format!("cold-input/opens-{p}"));
        let w = ours.call(&format!(
            "gen-opens {} {} {per}",
            o.seed + p as u64,
            tmp.display()
        ))?;
        let leo: i64 = w
            .first()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("gen-opens: a reply of {w:?}"))?;
        let on_disk = disk.path().join(format!("opens-{p}"));
        super::vs_clean::copy_dir(&tmp, &on_disk)?;
        let _ = std::fs::remove_dir_all(&tmp);
        let bytes = log_bytes(&on_disk)?;
        inputs.push((on_disk, leo, bytes));
    }
    settle();
    eprintln!(
        "vs-kafka opens cold: {parts} partitions of {per} segments written to {} in {:.1} s ({})",
        disk.path().display(),
        t.elapsed().as_secs_f64(),
        super::vs::fs_type(disk.path())
    );
    let (mut ot, mut kt, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut dropped = true;
    // What one partition's open holds, per side (fds, mappings), from the first run.
    let mut held = [(0i64, 0i64); 2];
    let (mut ct, mut cratios) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for run in 0..o.cold_rounds {
        let kafka_first = run % 2 == 1;
        // The ceilings first, each after its own drop, every partition in turn; the one
        // with the check's reads gives the loader's cold read-ahead advice.
        let mut csecs = [0.0f64; 2];
        let mut creplies: [Vec<CeilingReply>; 2] = [Vec::new(), Vec::new()];
        for (j, (_, mode)) in CEILINGS.iter().enumerate() {
            dropped &= drop_caches();
            for (p, _, _) in &inputs {
                let c = ceiling(ours, p, mode, j == 1, o.ceiling_skip)?;
                csecs[j] += c.secs;
                creplies[j].push(c);
            }
        }
        let mut secs = [0.0f64; 2];
        let mut answers: [Vec<[i64; 3]>; 2] = [Vec::new(), Vec::new()];
        for k in [kafka_first, !kafka_first] {
            dropped &= drop_caches();
            let server = if k { &mut *kafka } else { &mut *ours };
            for (p, leo, _) in &inputs {
                let r = open(server, k, "c", p, true, *leo, o.drop_segment)?;
                secs[usize::from(k)] += r.secs;
                if run == 0 {
                    held[usize::from(k)] = (r.fds.1 - r.fds.0, r.maps.1 - r.maps.0);
                }
                answers[usize::from(k)].push(r.answer);
                close(server, k, "c")?;
            }
        }
        if answers[0] != answers[1] {
            findings.push(format!(
                "MISMATCH open cold (run {run}): ours log start, log end, segments {:?}, Kafka's {:?}",
                answers[0], answers[1]
            ));
        }
        for (j, (name, _)) in CEILINGS.iter().enumerate() {
            for (i, ((_, _, bytes), c)) in inputs.iter().zip(&creplies[j]).enumerate() {
                let segments = answers[1].get(i).map_or(-1, |a| a[2]);
                findings.extend(check_ceiling(
                    &format!("ceiling {name} cold, partition {i} (run {run})"),
                    c,
                    j == 1,
                    segments,
                    *bytes,
                ));
            }
        }
        eprintln!(
            "vs-kafka opens cold: run {run}{}: ours {:.2} s, Kafka {:.2} s, ceilings {:.2} s, {:.2} s",
            if kafka_first {
                " (Kafka first)"
            } else {
                " (ours first)"
            },
            secs[0],
            secs[1],
            csecs[0],
            csecs[1]
        );
        ratios.push(secs[0] / secs[1]);
        ot.push(secs[0]);
        kt.push(secs[1]);
        for j in 0..2 {
            ct[j].push(csecs[j]);
            cratios[j].push(secs[0] / csecs[j]);
        }
    }
    let fs = super::vs::fs_type(&inputs[0].0);
    drop(disk);
    let mut rows: Vec<String> = CEILINGS
        .iter()
        .enumerate()
        .map(|(j, (name, _))| {
            format!(
                "ceiling {name} of {} segments cold ({parts} partitions of {per}{}) = {:.2} s (median of {} rounds)",
                o.cold_segments,
                if j == 1 { ", read-ahead advised" } else { "" },
                quantile(&ct[j], 0.5),
                o.cold_rounds
            )
        })
        .collect();
    // The first round is a timed one here: no first-run ratio apart.
    let first = [
        cratios[0].first().copied().unwrap_or(f64::NAN),
        cratios[1].first().copied().unwrap_or(f64::NAN),
    ];
    rows.extend([
        format!(
            "open {} segments cold ({parts} partitions of {per}, {fs} under /var/tmp, {}) ours/kafka = {:.3} \
             (ours {:.2} s, kafka {:.2} s; median of {} rounds, each side once a round, alternating first){}; \
             Kafka's published figure: 21-23 s for 46,000 segments (KAFKA-3163)",
            o.cold_segments,
            if dropped {
                "page cache dropped before each side"
            } else {
                "page cache NOT dropped: not root"
            },
            quantile(&ratios, 0.5),
            quantile(&ot, 0.5),
            quantile(&kt, 0.5),
            o.cold_rounds,
            ceiling_ratios(&cratios, &first),
        ),
        format!(
            "held after a cold open of one partition of {per} segments: fds ours +{} / kafka +{}, \
             mappings ours +{} / kafka +{}; RLIMIT_NOFILE (hard) {}",
            held[0].0,
            held[1].0,
            held[0].1,
            held[1].1,
            nofile_limit()
        ),
    ]);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_parses_and_a_bad_one_is_an_error() {
        let w: Vec<String> = "2000000000 0 320000 5000 6 5007 31 32"
            .split(' ')
            .map(String::from)
            .collect();
        let r = parse_reply(&w, "t").unwrap();
        assert_eq!(r.secs, 2.0);
        assert_eq!(r.answer, [0, 320000, 5000]);
        assert_eq!((r.fds, r.maps), ((6, 5007), (31, 32)));
        assert!(parse_reply(&w[..7], "t").is_err());
    }

    #[test]
    fn a_ceiling_answer_is_checked_against_the_sides_and_the_directory() {
        let good = CeilingReply {
            secs: 0.1,
            logs: 500,
            bytes: 4_506_000,
            matched: 500,
        };
        for reads in [false, true] {
            assert_eq!(check_ceiling("c", &good, reads, 500, 4_506_000), None);
            // One segment short (the sabotage), or bytes that are not the directory's.
            let short = CeilingReply {
                logs: 499,
                bytes: 4_506_000 - 9_012,
                ..good
            };
            assert!(check_ceiling("c", &short, reads, 500, 4_506_000).is_some());
            let bytes = CeilingReply {
                bytes: 4_506_001,
                ..good
            };
            assert!(check_ceiling("c", &bytes, reads, 500, 4_506_000).is_some());
        }
        // A first header at the wrong offset fails the ceiling with the reads only.
        let header = CeilingReply {
            matched: 499,
            ..good
        };
        assert!(check_ceiling("c", &header, true, 500, 4_506_000).is_some());
        assert_eq!(check_ceiling("c", &header, false, 500, 4_506_000), None);
    }

    #[test]
    fn the_ceilings_ratios_print_one_per_ceiling() {
        let l = ceiling_ratios(&[vec![2.0, 3.0, 4.0], vec![1.0, 1.5, 2.0]], &[5.0, 2.5]);
        assert_eq!(
            l,
            ", ours/ceiling = 3.00 [2.50, 3.50] (ceiling: list + open; first runs 5.00), \
             ours/ceiling = 1.50 [1.25, 1.75] (ceiling: list + open + check reads; first runs 2.50)"
        );
    }
}
