//! `cargo xtask vs-kafka --only clean`: our log cleaner (`Log::clean`) against Kafka
//! 4.4.0's `Cleaner.doClean` (issue 40), each in its own long-lived process, on copies of
//! the same compacted partition directories.
//!
//! Inputs, written once by our `Log` into the scratch directory (tmpfs) and closed
//! cleanly (`vs-kafka-ours gen-clean`): `updates`, a dirty segment of 5 million records
//! per GiB, 30 % of them updates of an earlier key (about 3.5 million distinct keys
//! survive); `small`, a dirty segment of 100-byte records whose keys are drawn uniformly
//! from 1 million keys per GiB. Each has one batch in its active segment, so that the
//! whole first segment is the dirty section and one clean covers it.
//!
//! Each run copies the input for each side (untimed: a clean rewrites its directory) and
//! asks each server for one clean of its copy with the same dedupe buffer
//! (`log.cleaner.dedupe.buffer.size`, Kafka's default 128 MiB: 5,592,405 slots, at most
//! 5,033,164 keys at load factor 0.9, so every key of either input fits). The time is the
//! clean itself, measured in-process on each side (Kafka: `doClean`, with the log opened
//! before; ours: `Log::clean`). As in the other rows, a first run (Kafka's JIT warm-up),
//! `warmups` untimed runs, then `rounds` timed runs, the order of the two sides
//! alternating. **Memory**: the peak resident set of each server process over the
//! input's runs (`VmHWM` of `/proc/PID/status`, reset through `clear_refs` before the
//! input), and the offset map's bytes (Kafka: the capacity of `SkimpyOffsetMap`'s buffer;
//! ours: what `OffsetMap`'s table holds at the end of the clean, and at most during it).
//!
//! **Answers**: after every run, both sides' clean statistics (end offset, records and
//! bytes read and written) must be equal, and every segment file of the two cleaned
//! directories equal byte for byte (the active segment's `.index`/`.timeindex` left out,
//! as `k7-cleaner` does: a clean never touches them). `--sabotage clean-flip-byte` flips
//! one byte of our cleaned segment, and the run fails.
//!
//! **The physical limit**, in the same run: `vs-kafka-ours ceil-clean` reads the input's
//! `.log` files once, checks each batch's CRC-32C and writes as many bytes as the clean
//! wrote to a new file on the same file system (then `fsync`); printed with the ratio of
//! our clean to it.

use std::path::Path;
use std::time::Instant;

use super::broker::Jvm;
use super::vs::{quantile, Server};

/// Sizes and repetitions of the clean rows.
pub struct CleanOpts {
    /// Bytes of each input's dirty segment.
    pub bytes: u64,
    pub rounds: usize,
    pub warmups: usize,
    pub seed: u64,
    /// The dedupe buffer of both sides, bytes.
    pub map_bytes: i64,
    /// The sabotage `clean-flip-byte`.
    pub flip_byte: bool,
}

/// Kafka's default `log.cleaner.dedupe.buffer.size` (one cleaner thread).
pub const DEDUPE_BUFFER_BYTES: i64 = 128 << 20;

/// The clean's time: an hour after the inputs' last timestamp (no tombstones, so only
/// `min.compaction.lag.ms`, 0, reads it).
fn clean_time(records: i64) -> i64 {
    vs_kafka_ours::T0 + records + 3_600_000
}

/// One side's answer to `clean`.
#[derive(Clone, Debug, Default, PartialEq)]
struct CleanReply {
    secs: f64,
    /// End offset, messages read, bytes read, messages written, bytes written.
    stats: [i64; 5],
    map_bytes: u64,
    map_peak_bytes: u64,
}

fn parse_reply(w: &[String], who: &str) -> Result<CleanReply, String> {
    let n: Vec<i64> = w.iter().filter_map(|s| s.parse().ok()).collect();
    if n.len() != 8 || w.len() != 8 {
        return Err(format!("{who}: a `clean` reply of {w:?}"));
    }
    Ok(CleanReply {
        secs: n[0] as f64 / 1e9,
        stats: [n[1], n[2], n[3], n[4], n[5]],
        map_bytes: n[6] as u64,
        map_peak_bytes: n[7] as u64,
    })
}

/// Copies the regular files of `from` into a fresh `to`.
pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| format!("{to:?}: {e}"))?;
    }
    std::fs::create_dir_all(to).map_err(|e| format!("{to:?}: {e}"))?;
    for f in std::fs::read_dir(from).map_err(|e| format!("{from:?}: {e}"))? {
        let f = f.map_err(|e| e.to_string())?;
        if f.file_type().map_err(|e| e.to_string())?.is_file() {
            std::fs::copy(f.path(), to.join(f.file_name()))
                .map_err(|e| format!("{:?}: {e}", f.path()))?;
        }
    }
    Ok(())
}

/// The segment files of a directory (`.log`, `.index`, `.timeindex`, `.txnindex`),
/// sorted.
fn segment_files(dir: &Path) -> Result<std::collections::BTreeSet<String>, String> {
    let mut out = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))? {
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

/// Compares the cleaned directories file by file, byte for byte (the active segment's
/// `.index` and `.timeindex` left out; a missing `.txnindex` is an empty one). Returns
/// the files and bytes compared, and pushes a finding for each difference.
pub(crate) fn compare_dirs(
    what: &str,
    kafka: &Path,
    ours: &Path,
    findings: &mut Vec<String>,
) -> Result<(usize, u64), String> {
    let (k, o) = (segment_files(kafka)?, segment_files(ours)?);
    let active = k
        .iter()
        .filter(|n| n.ends_with(".log"))
        .max()
        .map(|n| n.trim_end_matches(".log").to_string());
    let (mut files, mut bytes) = (0usize, 0u64);
    for n in k.union(&o) {
        if active
            .as_deref()
            .is_some_and(|a| *n == format!("{a}.index") || *n == format!("{a}.timeindex"))
        {
            continue;
        }
        let (kp, op) = (kafka.join(n), ours.join(n));
        match (kp.exists(), op.exists()) {
            (true, true) => {
                files += 1;
                bytes += std::fs::metadata(&kp).map_or(0, |m| m.len());
                if let Some(f) = super::vs::compare_files(what, "ours", &kp, &op)? {
                    findings.push(f);
                }
            }
            (k_has, _) if n.ends_with(".txnindex") => {
                let p = if k_has { &kp } else { &op };
                if std::fs::metadata(p).map_or(0, |m| m.len()) != 0 {
                    findings.push(format!(
                        "MISMATCH {what}: {n} is in one cleaned directory only, not empty"
                    ));
                }
            }
            (k_has, o_has) => findings.push(format!(
                "MISMATCH {what}: file {n}: Kafka's {}, ours {}",
                if k_has { "present" } else { "missing" },
                if o_has { "present" } else { "missing" }
            )),
        }
    }
    Ok((files, bytes))
}

/// Resets the peak resident set of process `pid` (`clear_refs`, Linux 4.0+); false when
/// it cannot.
fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The peak resident set of process `pid`, MiB (`VmHWM`).
fn peak_rss_mib(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Runs the clean rows; returns the rows and pushes findings.
pub fn run(
    jvm: &Jvm,
    ours_bin: &Path,
    dir: &Path,
    prefix: &[String],
    o: &CleanOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let (mut ours, ours_pid) = Server::spawn_ours(ours_bin, prefix)?;
    let (mut kafka, kafka_pid) = Server::spawn_kafka(jvm, "oracle.CleanBench", prefix)?;
    let mut rows = Vec::new();
    let mut result = Ok(());
    for kind in ["updates", "small"] {
        match measure_input(
            kind,
            &mut ours,
            &mut kafka,
            (ours_pid, kafka_pid),
            dir,
            o,
            findings,
        ) {
            Ok(row) => {
                println!("{row}");
                rows.push(row);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    ours.quit();
    kafka.quit();
    result.map(|()| rows)
}

/// One input: generated, then cleaned by both sides run after run; returns its row.
fn measure_input(
    kind: &str,
    ours: &mut Server,
    kafka: &mut Server,
    (ours_pid, kafka_pid): (u32, u32),
    dir: &Path,
    o: &CleanOpts,
    findings: &mut Vec<String>,
) -> Result<String, String> {
    let t = Instant::now();
    let input = dir.join(format!("clean-input/{kind}-0"));
    let w = ours.call(&format!(
        "gen-clean {} {} {kind} {}",
        o.seed,
        input.display(),
        o.bytes
    ))?;
    let num = |i: usize| -> Result<i64, String> {
        w.get(i)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("gen-clean: a reply of {w:?}"))
    };
    let (records, keys, leo, dirty) = (num(0)?, num(1)?, num(2)?, num(3)?);
    let now = clean_time(records);
    let what = match kind {
        "updates" => format!(
            "{} MiB dirty, {records} records of 213 bytes, {keys} distinct keys (30% updates)",
            dirty >> 20
        ),
        _ => format!(
            "{} MiB dirty, {records} records of 100 bytes, {keys} distinct keys (uniform)",
            dirty >> 20
        ),
    };
    eprintln!(
        "vs-kafka clean {kind}: input written in {:.1} s: {what}",
        t.elapsed().as_secs_f64()
    );
    let rss_reset = reset_peak_rss(ours_pid) & reset_peak_rss(kafka_pid);
    let work = |side: &str| dir.join(format!("clean-{side}/{kind}-0"));
    let out = dir.join("clean-ceiling.out");
    let runs = 1 + o.warmups + o.rounds;
    let (mut ot, mut kt, mut ct, mut ratios, mut ceil_ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut first, mut last_o, mut last_k) = ((0.0, 0.0), None, None);
    let mut compared = (0usize, 0u64);
    for run in 0..runs {
        let kafka_first = run > o.warmups && run % 2 == 1;
        let mut replies: [Option<CleanReply>; 2] = [None, None];
        for k in [kafka_first, !kafka_first] {
            let (side, server) = if k {
                ("kafka", &mut *kafka)
            } else {
                ("ours", &mut *ours)
            };
            let wd = work(side);
            copy_dir(&input, &wd)?;
            let sab = if k {
                ""
            } else if o.flip_byte {
                " 1"
            } else {
                " 0"
            };
            let w = server.call(&format!(
                "clean {} {leo} {now} {}{sab}",
                wd.display(),
                o.map_bytes
            ))?;
            replies[usize::from(k)] = Some(parse_reply(&w, server.name)?);
        }
        let [Some(or), Some(kr)] = replies else {
            return Err("a side did not answer".into());
        };
        let label = format!("clean {kind} (run {run})");
        if or.stats != kr.stats {
            findings.push(format!(
                "MISMATCH {label}: ours end offset, records and bytes read, records and bytes written {:?}, Kafka's {:?}",
                or.stats, kr.stats
            ));
        }
        compared = compare_dirs(&label, &work("kafka"), &work("ours"), findings)?;
        let w = ours.call(&format!(
            "ceil-clean {} {} {}",
            input.display(),
            out.display(),
            kr.stats[4]
        ))?;
        let ceil: f64 = w
            .first()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or("ceiling: no time")?
            / 1e9;
        let _ = std::fs::remove_file(&out);
        for side in ["ours", "kafka"] {
            let _ = std::fs::remove_dir_all(dir.join(format!("clean-{side}")));
        }
        eprintln!(
            "vs-kafka clean {kind}: run {run}{}: ours {:.3} s, Kafka {:.3} s, ceiling {ceil:.3} s",
            run_label(run, o.warmups),
            or.secs,
            kr.secs
        );
        if run == 0 {
            first = (or.secs, kr.secs);
        } else if run > o.warmups {
            ratios.push(or.secs / kr.secs);
            ceil_ratios.push(or.secs / ceil);
            ot.push(or.secs);
            kt.push(kr.secs);
            ct.push(ceil);
        }
        last_o = Some(or);
        last_k = Some(kr);
    }
    let (Some(lo), Some(lk)) = (last_o, last_k) else {
        return Err("no run".into());
    };
    let rss = |pid| {
        if rss_reset {
            peak_rss_mib(pid).map_or("?".to_string(), |m| format!("{m:.0}"))
        } else {
            "?".to_string()
        }
    };
    let (orss, krss) = (rss(ours_pid), rss(kafka_pid));
    let med = |v: &[f64]| quantile(v, 0.5);
    eprintln!(
        "vs-kafka clean {kind}: per-round ours/kafka {:?}; first run ours {:.3} s, Kafka {:.3} s (JIT warm-up); \
         ceiling {:.3} s; cleaned {} -> {} bytes, {} -> {} records; {} files ({} bytes) equal on both sides; \
         our map's peak {} bytes",
        ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>(),
        first.0,
        first.1,
        med(&ct),
        lk.stats[2],
        lk.stats[4],
        lk.stats[1],
        lk.stats[3],
        compared.0,
        compared.1,
        lo.map_peak_bytes
    );
    Ok(format!(
        "clean {what} ours/kafka = {:.3} (ours {:.3} s, kafka {:.3} s), ours/ceiling = {:.2} (ceiling {:.3} s), \
         RSS ours {orss} MiB / kafka {krss} MiB, map bytes ours {} (peak {}) / kafka {}",
        med(&ratios),
        med(&ot),
        med(&kt),
        med(&ceil_ratios),
        med(&ct),
        lo.map_bytes,
        lo.map_peak_bytes,
        lk.map_bytes
    ))
}

/// How a run of a bench that starts with a first run and `warmups` warm-up runs is named
/// in its progress line: " (first)", " (warm-up)" or nothing for a timed run.
pub(crate) fn run_label(run: usize, warmups: usize) -> &'static str {
    if run == 0 {
        " (first)"
    } else if run <= warmups {
        " (warm-up)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_parses_and_a_bad_one_is_an_error() {
        let w: Vec<String> = "2000000000 10 20 30 40 50 60 70"
            .split(' ')
            .map(String::from)
            .collect();
        let r = parse_reply(&w, "t").unwrap();
        assert_eq!(r.secs, 2.0);
        assert_eq!(r.stats, [10, 20, 30, 40, 50]);
        assert_eq!((r.map_bytes, r.map_peak_bytes), (60, 70));
        assert!(parse_reply(&w[..7], "t").is_err());
    }

    #[test]
    fn a_differing_or_missing_file_is_a_finding() {
        let d = tempfile::tempdir().unwrap();
        let (k, o) = (d.path().join("k"), d.path().join("o"));
        for x in [&k, &o] {
            std::fs::create_dir_all(x).unwrap();
            std::fs::write(x.join("00000000000000000000.log"), b"abc").unwrap();
            std::fs::write(x.join("00000000000000000009.log"), b"z").unwrap();
            std::fs::write(x.join("00000000000000000009.index"), x.to_str().unwrap()).unwrap();
        }
        let mut f = Vec::new();
        assert_eq!(compare_dirs("t", &k, &o, &mut f).unwrap(), (2, 4));
        assert!(f.is_empty(), "{f:?}");
        std::fs::write(o.join("00000000000000000000.log"), b"abd").unwrap();
        std::fs::write(k.join("00000000000000000000.index"), b"").unwrap();
        compare_dirs("t", &k, &o, &mut f).unwrap();
        assert_eq!(f.len(), 2, "{f:?}");
    }
}
