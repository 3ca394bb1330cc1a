//! `cargo xtask vs-kafka --only dump`: `dump-log` against Kafka 4.4.0's
//! `DumpLogSegments` (issue 39), each run as the operator runs it, a process per dump, on
//! the same files.
//!
//! Inputs, written once into the scratch directory (tmpfs): a segment of producer batches
//! written by our own writer (`vs-kafka-ours gen-dump`), dumped with `--deep-iteration
//! --print-data-log`; a `__consumer_offsets` and a `__cluster_metadata` segment written
//! with Kafka's own serdes and batch builder (`oracle.DumpBench`), dumped with
//! `--offsets-decoder` and `--cluster-metadata-decoder`; and a log directory of many small
//! partitions closed cleanly (`vs-kafka-ours gen-doctor`) for `dump-log doctor`, which
//! Kafka has no counterpart of (our rows only).
//!
//! **Time** is wall time from spawn to exit, with the start-up subtracted: each tool also
//! dumps an empty `.log` with the same options (`startup_runs` times), and the median of
//! those is taken off every run (for Kafka: JVM start, class loading, option parsing).
//! **Memory** is the child's peak resident set (`ru_maxrss` of `wait4` on that child, read
//! through GNU time, `/usr/bin/time -f %M`, which runs it; the workspace has no `unsafe`
//! outside `index-core`, so no `wait4` of our own; the JVM runs with the heap `kafka-run-class.sh` gives it, 256 MiB, and its
//! JVM options). Standard output goes to a pipe whose reader only counts bytes, the same
//! sink for both. Kafka's side runs `java` directly (no launcher, no wrapper script).
//!
//! **Answers**: a check run before the timed ones runs both tools at once and compares
//! their standard output line by line, ours with its escapes undone (as `k6-dump` does);
//! every timed run must then write the same number of bytes as its side's check run.
//! A differing line or byte count is a finding and fails the run; `--sabotage
//! dump-lost-line` drops one of our record lines from the check to show that it can fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::broker::Jvm;

/// Sizes and repetitions of the dump rows.
pub struct DumpOpts {
    /// Bytes of the producer segment (`--deep-iteration --print-data-log`).
    pub data_bytes: usize,
    /// Bytes of the `__consumer_offsets` and `__cluster_metadata` segments.
    pub internal_bytes: usize,
    /// Partitions of the doctor's log directory.
    pub partitions: usize,
    /// Timed runs of each tool per input (interleaved).
    pub rounds: usize,
    /// Empty-input runs of each tool per input (the start-up subtracted).
    pub startup_runs: usize,
    pub seed: u64,
    /// The sabotage `dump-lost-line`: one of our record lines is dropped from the check.
    pub lose_line: bool,
}

/// One measured process run.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    secs: f64,
    /// User + system CPU seconds.
    cpu: f64,
    /// Peak resident set, KiB.
    maxrss_kib: i64,
    /// Bytes written to standard output.
    bytes: u64,
}

/// GNU time, which reports its child's `ru_maxrss`.
pub const GNU_TIME: &str = "/usr/bin/time";

/// What a side's command line is: the program and arguments before the dump's.
struct Tool {
    argv: Vec<String>,
}

impl Tool {
    fn command(&self, args: &[String]) -> Command {
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..]).args(args);
        c.stdin(Stdio::null()).stderr(Stdio::piped());
        c
    }

    /// [`Tool::command`] under GNU time, which writes `MAXRSS_KIB USER_S SYS_S` to `report`.
    fn measured(&self, args: &[String], report: &Path) -> Command {
        let mut c = Command::new(GNU_TIME);
        c.args(["-f", "%M %U %S", "-o"])
            .arg(report)
            .args(&self.argv)
            .args(args);
        c.stdin(Stdio::null()).stderr(Stdio::piped());
        c
    }
}

/// Drains a pipe on a thread; returns the bytes read.
fn count_on_thread<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 18];
        let mut n = 0u64;
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k as u64,
            }
        }
    })
}

fn collect_on_thread<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = r.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    })
}

/// One timed run of `cmd` (made by [`Tool::measured`] with `report`): standard output
/// counted, standard error kept for a failure.
fn timed(mut cmd: Command, report: &Path, what: &str) -> Result<Run, String> {
    cmd.stdout(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    let out = count_on_thread(child.stdout.take().expect("piped"));
    let err = collect_on_thread(child.stderr.take().expect("piped"));
    let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = out.join().unwrap_or(0);
    let err = err.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{what} exited with {status}:\n{}",
            super::broker::tail(&err, 20)
        ));
    }
    let text = std::fs::read_to_string(report).map_err(|e| format!("{report:?}: {e}"))?;
    let w: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [rss, user, sys] = w[..] else {
        return Err(format!("{what}: GNU time reported `{}`", text.trim()));
    };
    Ok(Run {
        secs,
        cpu: user + sys,
        maxrss_kib: rss as i64,
        bytes,
    })
}

/// Undoes our escapes on one line when it has any (`k6-dump`'s rule).
fn kafka_text(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    if line.contains(&b'\\') {
        super::k6::unescape(&s)
    } else {
        s.into_owned()
    }
}

/// The check run: both tools at once, standard output compared line by line. Returns
/// (lines compared, our bytes, Kafka's bytes) and pushes a finding for the first
/// difference (with the count of differing lines).
fn check_run(
    ours: Command,
    kafka: Command,
    what: &str,
    lose_line: bool,
    findings: &mut Vec<String>,
) -> Result<(u64, u64, u64), String> {
    let spawn = |mut c: Command, who: &str| {
        c.stdout(Stdio::piped());
        c.spawn().map_err(|e| format!("cannot start {who}: {e}"))
    };
    let mut o = spawn(ours, "dump-log")?;
    let mut k = spawn(kafka, "DumpLogSegments")?;
    let oerr = collect_on_thread(o.stderr.take().expect("piped"));
    let kerr = collect_on_thread(k.stderr.take().expect("piped"));
    let mut or = BufReader::with_capacity(1 << 18, o.stdout.take().expect("piped"));
    let mut kr = BufReader::with_capacity(1 << 18, k.stdout.take().expect("piped"));
    let (mut ol, mut kl) = (Vec::new(), Vec::new());
    let (mut lines, mut differ, mut obytes, mut kbytes) = (0u64, 0u64, 0u64, 0u64);
    let mut first: Option<String> = None;
    let mut record_lines = 0u64;
    loop {
        ol.clear();
        kl.clear();
        let mut on = or.read_until(b'\n', &mut ol).map_err(|e| e.to_string())?;
        if lose_line && on > 0 && ol.starts_with(b"| offset: ") {
            record_lines += 1;
            if record_lines == 1000 {
                obytes += on as u64;
                ol.clear();
                on = or.read_until(b'\n', &mut ol).map_err(|e| e.to_string())?;
            }
        }
        let kn = kr.read_until(b'\n', &mut kl).map_err(|e| e.to_string())?;
        if on == 0 && kn == 0 {
            break;
        }
        obytes += on as u64;
        kbytes += kn as u64;
        lines += 1;
        let ours_text = kafka_text(&ol);
        if ours_text.as_bytes() != kl.as_slice() {
            differ += 1;
            if first.is_none() {
                let cut = |s: &str| s.trim_end().chars().take(300).collect::<String>();
                first = Some(format!(
                    "line {lines}:\n  kafka: {}\n  ours:  {}",
                    cut(&String::from_utf8_lossy(&kl)),
                    cut(&ours_text)
                ));
            }
        }
    }
    let os = o.wait().map_err(|e| e.to_string())?;
    let ks = k.wait().map_err(|e| e.to_string())?;
    let (oerr, kerr) = (
        oerr.join().unwrap_or_default(),
        kerr.join().unwrap_or_default(),
    );
    if !os.success() || !ks.success() {
        return Err(format!(
            "{what}: check run failed: dump-log {os}, DumpLogSegments {ks}:\n{}{}",
            super::broker::tail(&oerr, 10),
            super::broker::tail(&kerr, 10)
        ));
    }
    if let Some(f) = first {
        findings.push(format!(
            "MISMATCH dump {what}: {differ} of {lines} lines of standard output differ from Kafka's; first at {f}"
        ));
    }
    Ok((lines, obytes, kbytes))
}

fn median(v: &[f64]) -> f64 {
    super::vs::quantile(v, 0.5)
}

/// A measured comparison: our and Kafka's commands on the input, and on the empty input.
struct Pair<'a> {
    what: String,
    ours: &'a Tool,
    kafka: &'a Tool,
    args: Vec<String>,
    empty_args: Vec<String>,
    /// GNU time's report file.
    report: &'a Path,
}

fn measure_pair(p: &Pair<'_>, o: &DumpOpts, findings: &mut Vec<String>) -> Result<String, String> {
    let t = Instant::now();
    let (lines, ob, kb) = check_run(
        p.ours.command(&p.args),
        p.kafka.command(&p.args),
        &p.what,
        o.lose_line,
        findings,
    )?;
    eprintln!(
        "vs-kafka dump {}: check run: {lines} lines, ours {ob} bytes, Kafka's {kb} ({:.1} s)",
        p.what,
        t.elapsed().as_secs_f64()
    );
    let (mut oe, mut ke) = (Vec::new(), Vec::new());
    for _ in 0..o.startup_runs {
        oe.push(timed(
            p.ours.measured(&p.empty_args, p.report),
            p.report,
            "dump-log (empty)",
        )?);
        ke.push(timed(
            p.kafka.measured(&p.empty_args, p.report),
            p.report,
            "DumpLogSegments (empty)",
        )?);
    }
    let secs = |v: &[Run]| median(&v.iter().map(|r| r.secs).collect::<Vec<_>>());
    let cpu = |v: &[Run]| median(&v.iter().map(|r| r.cpu).collect::<Vec<_>>());
    let (o0, k0) = (secs(&oe), secs(&ke));
    let (mut or, mut kr) = (Vec::new(), Vec::new());
    for round in 0..o.rounds {
        for side in 0..2 {
            let kafka = (side + round) % 2 == 1;
            let (tool, name, expected) = if kafka {
                (p.kafka, "DumpLogSegments", kb)
            } else {
                (p.ours, "dump-log", ob)
            };
            let r = timed(tool.measured(&p.args, p.report), p.report, name)?;
            if r.bytes != expected {
                findings.push(format!(
                    "MISMATCH dump {}: {name} wrote {} bytes in round {round}, {expected} in the check run",
                    p.what, r.bytes
                ));
            }
            if kafka { &mut kr } else { &mut or }.push(r);
        }
    }
    let ratios: Vec<f64> = or
        .iter()
        .zip(&kr)
        .map(|(a, b)| (a.secs - o0) / (b.secs - k0))
        .collect();
    let rss = |v: &[Run]| {
        median(
            &v.iter()
                .map(|r| r.maxrss_kib as f64 / 1024.0)
                .collect::<Vec<_>>(),
        )
    };
    let (os, ks) = (secs(&or) - o0, secs(&kr) - k0);
    let (om, km) = (rss(&or), rss(&kr));
    let row = format!(
        "dump {} ours/kafka = {:.3} (ours {os:.3} s, kafka {ks:.3} s), RSS ours {om:.1} MiB / kafka {km:.1} MiB = {:.3}",
        p.what,
        median(&ratios),
        om / km
    );
    eprintln!(
        "vs-kafka dump {}: start-up subtracted: ours {o0:.3} s, Kafka {k0:.3} s; per-round ratios {:?}; CPU time (user+sys) net of the empty run's: ours {:.2} s, Kafka {:.2} s = {:.3}",
        p.what,
        ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>(),
        cpu(&or) - cpu(&oe),
        cpu(&kr) - cpu(&ke),
        (cpu(&or) - cpu(&oe)) / (cpu(&kr) - cpu(&ke))
    );
    Ok(row)
}

/// Sends `cmds` to a `vs-kafka-ours` process and returns its replies.
fn generate(ours_bin: &Path, cmds: &[String]) -> Result<Vec<String>, String> {
    let mut c = Command::new(ours_bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {ours_bin:?}: {e}"))?;
    let mut input = c.stdin.take().expect("piped");
    for cmd in cmds {
        writeln!(input, "{cmd}").map_err(|e| e.to_string())?;
    }
    writeln!(input, "quit").map_err(|e| e.to_string())?;
    drop(input);
    let mut out = String::new();
    c.stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    let _ = c.wait();
    let replies: Vec<String> = out.lines().map(str::to_string).collect();
    if replies.len() < cmds.len() || replies.iter().any(|r| !r.starts_with("ok")) {
        return Err(format!("vs-kafka-ours {cmds:?}: {out}"));
    }
    Ok(replies)
}

/// Runs the dump rows; returns the rows and pushes findings.
pub fn run(
    jvm: &Jvm,
    ours_bin: &Path,
    dump_log: &Path,
    dir: &Path,
    prefix: &[String],
    o: &DumpOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let t = Instant::now();
    let data = dir.join("dump-data-0");
    let offsets = dir.join("__consumer_offsets-0");
    let metadata = dir.join("__cluster_metadata-0");
    let doctor = dir.join("doctor-logdir");
    let doctor_one = dir.join("doctor-logdir-1");
    let empty = dir.join("dump-empty-0");
    let replies = generate(
        ours_bin,
        &[
            format!("gen-dump {} {} {}", o.seed, data.display(), o.data_bytes),
            format!(
                "gen-doctor {} {} {}",
                o.seed,
                doctor.display(),
                o.partitions
            ),
            format!("gen-doctor {} {} 1", o.seed, doctor_one.display()),
        ],
    )?;
    for (kind, d) in [("offsets", &offsets), ("metadata", &metadata)] {
        jvm.run(
            "oracle.DumpBench",
            &[
                kind.to_string(),
                d.display().to_string(),
                o.internal_bytes.to_string(),
            ],
            Duration::from_secs(600),
        )?;
    }
    std::fs::create_dir_all(&empty).map_err(|e| format!("{empty:?}: {e}"))?;
    let seg = |d: &Path| d.join(format!("{:020}.log", 0));
    std::fs::write(seg(&empty), b"").map_err(|e| format!("{empty:?}: {e}"))?;
    let mib = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len()) >> 20;
    eprintln!(
        "vs-kafka dump: inputs written in {:.1} s: producer segment {} MiB ({}), __consumer_offsets {} MiB, __cluster_metadata {} MiB, a log directory of {} partitions",
        t.elapsed().as_secs_f64(),
        mib(&seg(&data)),
        replies[0].trim_start_matches("ok "),
        mib(&seg(&offsets)),
        mib(&seg(&metadata)),
        o.partitions
    );
    let mut ours_argv: Vec<String> = prefix.to_vec();
    ours_argv.push(dump_log.display().to_string());
    let ours = Tool { argv: ours_argv };
    let mut kafka_argv: Vec<String> = prefix.to_vec();
    // kafka-dump-log.sh's JVM: kafka-run-class.sh's default heap and JVM options.
    kafka_argv.extend(
        [
            "java",
            "-Xmx256M",
            "-server",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35",
            "-XX:+ExplicitGCInvokesConcurrent",
            "-XX:MaxInlineLevel=15",
            "-Djava.awt.headless=true",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    kafka_argv.push(format!(
        "-Dlog4j2.configurationFile={}",
        jvm.client_log4j.display()
    ));
    kafka_argv.extend(["-cp".to_string(), jvm.classpath.clone()]);
    kafka_argv.push("org.apache.kafka.tools.DumpLogSegments".into());
    let kafka = Tool { argv: kafka_argv };
    let report = dir.join("time.report");
    let mut rows = Vec::new();
    let mb = |b: usize| b >> 20;
    for (what, d, opts) in [
        (
            format!(
                "--deep-iteration --print-data-log, {} MiB of producer batches",
                mb(o.data_bytes)
            ),
            &data,
            vec!["--deep-iteration", "--print-data-log"],
        ),
        (
            format!(
                "--offsets-decoder, {} MiB __consumer_offsets",
                mb(o.internal_bytes)
            ),
            &offsets,
            vec!["--offsets-decoder"],
        ),
        (
            format!(
                "--cluster-metadata-decoder, {} MiB __cluster_metadata",
                mb(o.internal_bytes)
            ),
            &metadata,
            vec!["--cluster-metadata-decoder"],
        ),
    ] {
        let args_for = |d: &Path| {
            let mut a = vec!["--files".to_string(), seg(d).display().to_string()];
            a.extend(opts.iter().map(|s| s.to_string()));
            a
        };
        let row = measure_pair(
            &Pair {
                what,
                ours: &ours,
                kafka: &kafka,
                args: args_for(d),
                empty_args: args_for(&empty),
                report: &report,
            },
            o,
            findings,
        )?;
        println!("{row}");
        rows.push(row);
    }
    rows.extend(measure_doctor(
        &ours,
        &doctor,
        &doctor_one,
        &report,
        o,
        findings,
    )?);
    Ok(rows)
}

/// `dump-log doctor` on the generated log directory (no calibration: the prediction uses
/// the default throughput), default and `--deep`: our time net of start-up (the doctor
/// on a log directory of one such partition) and peak RSS. The answer check: exit 0, and a
/// report that counts every partition and finds nothing to do.
fn measure_doctor(
    ours: &Tool,
    logdir: &Path,
    one: &Path,
    report: &Path,
    o: &DumpOpts,
    findings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let mut rows = Vec::new();
    for deep in [false, true] {
        let args = |d: &Path| {
            let mut a = vec![
                "doctor".to_string(),
                "--no-calibrate".to_string(),
                "--no-progress".to_string(),
                d.display().to_string(),
            ];
            if deep {
                a.push("--deep".into());
            }
            a
        };
        // The answer, once.
        let out = ours
            .command(&args(logdir))
            .output()
            .map_err(|e| format!("dump-log doctor: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let total = text
            .lines()
            .find(|l| l.starts_with("total "))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse::<usize>().ok());
        if !out.status.success()
            || total != Some(o.partitions)
            || !text.contains("verdict: nothing to do")
        {
            findings.push(format!(
                "MISMATCH doctor{}: exit {}, {total:?} partitions counted of {}, verdict: {}",
                if deep { " --deep" } else { "" },
                out.status,
                o.partitions,
                text.lines()
                    .find(|l| l.starts_with("verdict"))
                    .unwrap_or("<none>")
            ));
        }
        let mut e = Vec::new();
        for _ in 0..o.startup_runs {
            e.push(
                timed(
                    ours.measured(&args(one), report),
                    report,
                    "dump-log doctor (1 partition)",
                )?
                .secs,
            );
        }
        let e0 = median(&e);
        let mut runs = Vec::new();
        for _ in 0..o.rounds {
            runs.push(timed(
                ours.measured(&args(logdir), report),
                report,
                "dump-log doctor",
            )?);
        }
        let secs = median(&runs.iter().map(|r| r.secs).collect::<Vec<_>>()) - e0;
        let rss = median(
            &runs
                .iter()
                .map(|r| r.maxrss_kib as f64 / 1024.0)
                .collect::<Vec<_>>(),
        );
        let row = format!(
            "doctor{} on {} partitions: ours {secs:.3} s ({:.1} ms a partition), RSS {rss:.1} MiB (start-up {e0:.3} s subtracted; Kafka has no counterpart)",
            if deep { " --deep" } else { "" },
            o.partitions,
            secs * 1000.0 / o.partitions as f64,
        );
        println!("{row}");
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_differing_line_is_a_finding_and_escapes_are_undone() {
        let sh = |s: &str| {
            let mut c = Command::new("sh");
            c.args(["-c", s])
                .stdin(Stdio::null())
                .stderr(Stdio::piped());
            c
        };
        let mut f = Vec::new();
        let (n, ob, kb) = check_run(
            sh("printf 'a\\\\tb\\nc\\n'"),
            sh("printf 'a\\tb\\nc\\n'"),
            "t",
            false,
            &mut f,
        )
        .unwrap();
        assert_eq!((n, f.len()), (2, 0), "{f:?}");
        assert_eq!((ob, kb), (7, 6));
        check_run(
            sh("printf 'a\\nb\\n'"),
            sh("printf 'a\\nc\\n'"),
            "t",
            false,
            &mut f,
        )
        .unwrap();
        assert_eq!(f.len(), 1);
        assert!(
            f[0].contains("1 of 2 lines") && f[0].contains("line 2"),
            "{f:?}"
        );
        check_run(
            sh("printf 'a\\n'"),
            sh("printf 'a\\nb\\n'"),
            "t",
            false,
            &mut f,
        )
        .unwrap();
        assert_eq!(f.len(), 2, "a missing line is a difference");
    }

    #[test]
    fn a_timed_run_reports_its_bytes_and_memory() {
        // GNU time is needed as `vs-kafka --only dump` needs it: required in CI.
        if !Path::new(GNU_TIME).exists() && !crate::is_ci() {
            eprintln!("skipped: no {GNU_TIME} (GNU time)");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let report = d.path().join("report");
        let sh = Tool {
            argv: vec!["sh".into(), "-c".into()],
        };
        let c = sh.measured(&["head -c 100000 /dev/zero".into()], &report);
        let r = timed(c, &report, "sh").unwrap();
        assert_eq!(r.bytes, 100_000);
        assert!(r.maxrss_kib > 0 && r.secs > 0.0);
    }
}
