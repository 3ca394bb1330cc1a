//! `cargo xtask vs-kafka`: the same index work on Kafka 4.4.0's own classes and on ours,
//! side by side, timed.
//!
//! Two servers speak one line protocol (`xtask/vs-kafka/src/lib.rs`): `vs-kafka-ours`
//! (built `--release`, `index-offset`/`index-time` only) and `oracle.VsBench` in a JVM
//! (Kafka's `OffsetIndex`/`TimeIndex`, full JIT). Our side writes the inputs from one seed
//! (a full 10 MiB offset index and time index, Kafka's `segment.index.bytes`, and the
//! targets) on tmpfs, and both sides open the **same bytes**. Every competitor runs the
//! same work once (its first run: for Kafka, the JIT's warm-up, reported on its own),
//! then a few untimed warm-up runs, then `rounds` timed rounds in which every competitor
//! runs once, the order rotated from round to round, each run after a `sync` (so no
//! side's time holds the writeback of the side before it). A row's ratio is the median
//! over the rounds of ours/Kafka within each round (both measured seconds apart), with
//! quartiles.
//!
//! The segment rows also run the machine's **ceilings** (`ceil-*` commands of our
//! server, so pinned to the same core, on the same bytes, interleaved with the row they
//! bound and listed first, so a first run is compared with the ceiling's own first run):
//! `write(2)` of every batch into a fresh file and over allocated pages, on tmpfs and on
//! the target directory's filesystem; `pread` of every batch from the page cache, with and
//! without its CRC-32C checked; `memcpy` into fresh and reused memory; one 12-byte header
//! `pread` per fetch; and CRC-32C with `crc32c` (in use) against `crc-fast` and `crc` in
//! pieces of [`CRC_SIZES`]. Each prints as `ceiling NAME = X GB/s (Y µs per batch)`, and
//! the append, recovery and `translate_offset` rows get `ours/ceiling` (median over the
//! rounds of the ratio within each round) against the first ceiling of their group. The
//! ceilings' answers are checked too: the written files equal the batches, every stored
//! CRC matches, every crate's CRCs hash alike, the fetch headers answer as Kafka does.
//! The segment append also runs with Kafka's `preallocate` on both sides (the `.log`
//! created at `segment.bytes`, trimmed at close): every file must then equal the one
//! written without it (`--sabotage segment-drop-batch` fails both append groups).
//!
//! `Log::append` (the follower's append) runs against `UnifiedLog.appendAsFollower`, one
//! 16 KiB batch a call into a log that rolls at `segment.bytes`, on tmpfs and on the
//! target directory's filesystem, each against two bound ceilings on the same
//! filesystem: `write(2)` of every batch into a fresh file, and the same with each
//! batch's CRC-32C checked first (the check both sides' appends make). The plain leader
//! row from one producer gets the same two ceilings, on both filesystems.
//!
//! Answers are checked on every run: each lookup run's hash of its answers must equal
//! Kafka's, and each append run must reproduce the source index byte for byte (ours and
//! Kafka's) with the same entry count. A mismatch prints the table, names the mismatch
//! and exits nonzero; `--sabotage` damages our side to show it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use super::broker::{self, Proc};

const USAGE: &str = "\
usage: cargo xtask vs-kafka [--quick] [--only lookups,appends,segments,dump,clean,opens,opens-cold] [--rounds N] [--seed N]
                            [--no-pin] [--keep] [--sabotage NAME]

  Kafka 4.4.0's OffsetIndex/TimeIndex/LogSegment (in a JVM) and ours (index-offset,
  index-time, segment; --release) do the same work on the same files; prints ours/Kafka time ratios (< 1: we
  are faster) and fails (exit 1) if any answer differs. Needs java and mvn.

  --quick          64 Ki lookups a run, a 64 MiB segment, 3 rounds, 1 warm-up (seconds);
                   default 1 Mi lookups, a 1 GiB segment, 5 rounds, 3 warm-ups; dump:
                   64 MiB and 16 MiB inputs, 500 partitions (default 1 GiB, 128 MiB, 5,000)
  --only G,..      lookups (offset and time index, hot tail, uniform, lagging and mixed, every
                   strategy per call, and the default in batches of 1,000 through with_reader),
                   appends (per-call append and our appender(), a full 10 MiB index),
                   leader (Log::append_as_leader against UnifiedLog.appendAsLeader: plain,
                   idempotent and transactional batches from 1 and 4 producers, and
                   idempotent ones recompressed to lz4; plain from 1 producer also on the
                   target dir's filesystem, both against write(2) of the same batches into
                   a fresh file, without and with each batch's CRC-32C checked),
                   segments (LogSegment append of 16 KiB batches, without and with
                   preallocate, recover, translateOffset,
                   open + sanityCheck of 500 segments; with the machine's ceilings on the
                   same bytes: write(2) fresh and over allocated pages on tmpfs and the
                   target dir's filesystem, pread, pread + CRC-32C, memcpy, and CRC-32C
                   with crc32c, crc-fast and crc in 100 B, 1 KiB, 16 KiB and 1 MiB pieces;
                   and Log::append, the follower's, against UnifiedLog.appendAsFollower, the
                   log rolling at segment.bytes, on tmpfs and the target dir's filesystem,
                   each against write(2) into a fresh file without and with CRC-32C),
                   dump (dump-log against DumpLogSegments, a process per dump: a segment of
                   producer batches with --deep-iteration --print-data-log,
                   __consumer_offsets with --offsets-decoder, __cluster_metadata with
                   --cluster-metadata-decoder; time net of start-up and peak RSS; and
                   dump-log doctor, default and --deep, on a log directory of many small
                   partitions),
                   clean (Log::clean against Cleaner.doClean, in-process, on copies of
                   two compacted logs: 1 GiB of 5 M records with 30% updates, and 1 GiB
                   of 100-byte records over 1 M keys; --quick: 64 MiB each; the cleaned
                   files compared byte for byte; peak RSS, offset-map bytes, and the
                   physical limit: read + CRC-32C + write of the same bytes)
                   opens (Log::open against UnifiedLog.create of one partition of 5,000
                   small segments, clean and unclean, on copies on tmpfs; --quick: 500;
                   answers and segment files compared; descriptors and mappings held;
                   against two ceilings on the same bytes: list + open + fstat of every
                   .log, and that plus the load-time check's reads),
                   opens-cold (50,000 segments, --quick 5,000, in partitions of at most
                   12,500 on /var/tmp, page cache dropped before each side's and each
                   ceiling's turn; 3 rounds, --quick 1)
  --rounds N       timed rounds (default 5, --quick 3; dump: default 3, --quick 2;
                   clean: 3 after one warm-up)
  --seed N         the seed of the inputs (default 1)
  --no-pin         do not pin both sides to one core with taskset
  --keep           keep the scratch directory (tmpfs) for inspection
  --sabotage NAME  damage our side, the run must fail: lookup-slot-before (our lookups
                   answer the slot before the right one), append-position (our appends
                   write one position one too high), segment-drop-batch (our segment
                   append leaves out the last batch), ceiling-index-drop (our
                   index fill ceilings leave out the last entry), translate-early (our
                   translate_offset answers the batch before), ceiling-write-drop (our
                   write(2) ceilings leave out the last batch), log-skip-batch (our
                   Log::append rows leave out the last batch), leader-skip-batch (our
                   leader rows leave out their last batch), dump-lost-line (our
                   dump-log's output loses its 1000th record line), clean-flip-byte
                   (one byte of our cleaned segment flipped), open-drop-segment (our
                   open loses the first segment's .log), ceiling-open-skip (our
                   open ceilings leave out the last .log by name); `all` runs each
                   (--quick, its group only) and prints `sabotage: N of N caught`
";

/// Every sabotage (name, the group it damages, what): a run with it must fail with a
/// mismatch.
pub const SABOTAGES: &[(&str, &str, &str)] = &[
    (
        "lookup-slot-before",
        "lookups",
        "our lookups answer the slot before the right one",
    ),
    (
        "append-position",
        "appends",
        "our appends write one entry's position (time index: offset) one too high",
    ),
    (
        "ceiling-index-drop",
        "appends",
        "our index fill ceilings leave out the last entry",
    ),
    (
        "segment-drop-batch",
        "segments",
        "our segment append leaves out the last batch",
    ),
    (
        "translate-early",
        "segments",
        "our translate_offset looks up the offset 16 below the target (the batch before)",
    ),
    (
        "ceiling-write-drop",
        "segments",
        "our write(2) ceilings leave out the last batch",
    ),
    (
        "log-skip-batch",
        "segments",
        "our Log::append rows leave out the last batch",
    ),
    (
        "leader-skip-batch",
        "leader",
        "our leader rows leave out the last batch of their input",
    ),
    (
        "dump-lost-line",
        "dump",
        "our dump-log's standard output loses its 1000th record line in the check run",
    ),
    (
        "clean-flip-byte",
        "clean",
        "one byte of our cleaned segment's .log is flipped after the clean",
    ),
    (
        "open-drop-segment",
        "opens",
        "the first segment's .log of our copy is deleted before our open",
    ),
    (
        "ceiling-open-skip",
        "opens",
        "our open ceilings leave out the last .log of the directory, by name",
    ),
];

/// Kafka's default `segment.index.bytes`.
const INDEX_BYTES: usize = 10 * 1024 * 1024;

struct Options {
    targets: usize,
    rounds: usize,
    warmups: usize,
    lookups: bool,
    appends: bool,
    segments: bool,
    /// The leader rows (`append_as_leader` against `UnifiedLog.appendAsLeader`).
    leader: bool,
    /// Producer batches a leader row appends.
    leader_batches: usize,
    dump: bool,
    clean: bool,
    /// The warm opens rows and the cold one.
    opens: bool,
    opens_cold: bool,
    /// The opens rows' sizes (`rounds` is set from `rounds` when given).
    opens_opts: super::vs_opens::OpensOpts,
    /// The clean rows' sizes (`rounds` is set from `rounds` when given).
    clean_opts: super::vs_clean::CleanOpts,
    /// The dump rows' sizes (`rounds` is set from `rounds` when given).
    dump_opts: super::vs_dump::DumpOpts,
    /// Bytes of batches a segment append writes.
    log_bytes: usize,
    /// `translate_offset` calls a run.
    fetches: usize,
    /// Segments opened a run.
    open_segments: usize,
    seed: u64,
    pin: bool,
    keep: bool,
    sabotage: Option<&'static str>,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        targets: 1 << 20,
        rounds: 5,
        warmups: 3,
        lookups: true,
        appends: true,
        segments: true,
        leader: true,
        leader_batches: 50_000,
        dump: true,
        clean: true,
        opens: true,
        opens_cold: true,
        opens_opts: super::vs_opens::OpensOpts {
            segments: 5000,
            cold_segments: 50_000,
            rounds: 5,
            warmups: 2,
            cold_rounds: 3,
            seed: 1,
            drop_segment: false,
            ceiling_skip: false,
        },
        clean_opts: super::vs_clean::CleanOpts {
            bytes: 1 << 30,
            rounds: 3,
            warmups: 1,
            seed: 1,
            map_bytes: super::vs_clean::DEDUPE_BUFFER_BYTES,
            flip_byte: false,
        },
        dump_opts: super::vs_dump::DumpOpts {
            data_bytes: 1 << 30,
            internal_bytes: 128 << 20,
            partitions: 5000,
            rounds: 3,
            startup_runs: 3,
            seed: 1,
            lose_line: false,
        },
        log_bytes: 1 << 30,
        fetches: 1 << 16,
        open_segments: 500,
        seed: 1,
        pin: true,
        keep: false,
        sabotage: None,
    };
    let mut rounds = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => {
                o.targets = 1 << 16;
                o.rounds = 3;
                o.warmups = 1;
                o.log_bytes = 64 << 20;
                o.fetches = 1 << 13;
                o.open_segments = 100;
                o.leader_batches = 5_000;
                o.dump_opts.data_bytes = 64 << 20;
                o.dump_opts.internal_bytes = 16 << 20;
                o.dump_opts.partitions = 500;
                o.dump_opts.rounds = 2;
                o.dump_opts.startup_runs = 2;
                o.clean_opts.bytes = 64 << 20;
                o.opens_opts.segments = 500;
                o.opens_opts.cold_segments = 5000;
                o.opens_opts.rounds = 3;
                o.opens_opts.warmups = 1;
                o.opens_opts.cold_rounds = 1;
            }
            "--only" => {
                let v = it.next().ok_or("--only needs a value")?;
                o.lookups = false;
                o.appends = false;
                o.segments = false;
                o.leader = false;
                o.dump = false;
                o.clean = false;
                o.opens = false;
                o.opens_cold = false;
                for g in v.split(',') {
                    match g {
                        "lookups" => o.lookups = true,
                        "appends" => o.appends = true,
                        "segments" => o.segments = true,
                        "leader" => o.leader = true,
                        "dump" => o.dump = true,
                        "clean" => o.clean = true,
                        "opens" => o.opens = true,
                        "opens-cold" => o.opens_cold = true,
                        other => {
                            return Err(format!(
                                "--only: no group `{other}` (there are: lookups, appends, segments, leader, dump, clean, opens, opens-cold)"
                            ))
                        }
                    }
                }
            }
            "--rounds" => {
                rounds = Some(
                    it.next()
                        .and_then(|s| s.parse().ok())
                        .filter(|&r: &usize| r > 0)
                        .ok_or("--rounds needs a positive number")?,
                )
            }
            "--seed" => {
                o.seed = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--seed needs a number")?
            }
            "--no-pin" => o.pin = false,
            "--keep" => o.keep = true,
            "--sabotage" => {
                let v = it.next().ok_or("--sabotage needs a name")?;
                o.sabotage = Some(if v == "all" {
                    "all"
                } else {
                    SABOTAGES
                        .iter()
                        .find(|(n, _, _)| n == v)
                        .map(|(n, _, _)| *n)
                        .ok_or_else(|| {
                            let known: Vec<&str> = SABOTAGES.iter().map(|(n, _, _)| *n).collect();
                            format!(
                                "--sabotage: no sabotage `{v}` (there are: all, {})",
                                known.join(", ")
                            )
                        })?
                })
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if let Some(r) = rounds {
        o.rounds = r;
        o.dump_opts.rounds = r;
        o.clean_opts.rounds = r;
        o.opens_opts.rounds = r;
    }
    o.opens_opts.seed = o.seed;
    o.opens_opts.drop_segment = o.sabotage == Some("open-drop-segment");
    o.opens_opts.ceiling_skip = o.sabotage == Some("ceiling-open-skip");
    o.clean_opts.seed = o.seed;
    o.clean_opts.flip_byte = o.sabotage == Some("clean-flip-byte");
    o.dump_opts.seed = o.seed;
    o.dump_opts.lose_line = o.sabotage == Some("dump-lost-line");
    Ok(Some(o))
}

/// One side's server: a child speaking the line protocol.
pub(crate) struct Server {
    pub(crate) name: &'static str,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: BufReader<ChildStdout>,
    /// The JVM (its group is killed on drop) or our process (killed on drop).
    pub(crate) _jvm: Option<Proc>,
    pub(crate) ours: Option<Child>,
}

impl Server {
    /// Starts our line-protocol server `ours_bin`, behind `prefix` (the `taskset` pin, or
    /// nothing); returns it with its process id.
    pub(crate) fn spawn_ours(ours_bin: &Path, prefix: &[String]) -> Result<(Server, u32), String> {
        let mut c = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(ours_bin);
                c
            }
            None => Command::new(ours_bin),
        };
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {ours_bin:?}: {e}"))?;
        let pid = child.id();
        let (stdin, stdout) = Server::pipes("ours", &mut child)?;
        let server = Server {
            name: "ours",
            stdin,
            stdout,
            _jvm: None,
            ours: Some(child),
        };
        Ok((server, pid))
    }

    /// Starts Kafka's line-protocol server, the class `main` (`oracle.VsBench`, …) in a
    /// JVM with the broker's heap (kafka-server-start.sh: -Xmx1G -Xms1G), behind
    /// `prefix`; returns it with the JVM's process id.
    pub(crate) fn spawn_kafka(
        jvm: &broker::Jvm,
        main: &str,
        prefix: &[String],
    ) -> Result<(Server, u32), String> {
        let mut proc = jvm.spawn_server("1g", main, prefix)?;
        let child = proc.child_mut().ok_or("the JVM already stopped")?;
        let pid = child.id();
        let (stdin, stdout) = Server::pipes("Kafka", child)?;
        let server = Server {
            name: "Kafka",
            stdin,
            stdout,
            _jvm: Some(proc),
            ours: None,
        };
        Ok((server, pid))
    }

    pub(crate) fn pipes(
        name: &'static str,
        child: &mut Child,
    ) -> Result<(ChildStdin, BufReader<ChildStdout>), String> {
        let stdin = child.stdin.take().ok_or(format!("{name}: no stdin"))?;
        let stdout = child.stdout.take().ok_or(format!("{name}: no stdout"))?;
        Ok((stdin, BufReader::new(stdout)))
    }

    /// Sends one command; returns the words of an `ok` reply.
    pub(crate) fn call(&mut self, cmd: &str) -> Result<Vec<String>, String> {
        writeln!(self.stdin, "{cmd}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("{}: cannot send `{cmd}`: {e}", self.name))?;
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| format!("{}: {e}", self.name))?;
        if n == 0 {
            return Err(format!("{}: exited during `{cmd}`", self.name));
        }
        let w: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        match w.first().map(String::as_str) {
            Some("ok") => Ok(w[1..].to_vec()),
            _ => Err(format!("{}: `{cmd}` failed: {}", self.name, line.trim())),
        }
    }

    /// A timed run: (nanoseconds, answer).
    fn run(&mut self, cmd: &str) -> Result<(f64, String), String> {
        let w = self.call(cmd)?;
        let ns: f64 = w
            .first()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{}: no time in the reply to `{cmd}`", self.name))?;
        Ok((ns, w.get(1).cloned().unwrap_or_default()))
    }

    pub(crate) fn quit(mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
        if let Some(mut p) = self._jvm.take() {
            let _ = p.wait(std::time::Duration::from_secs(10));
        }
        if let Some(mut c) = self.ours.take() {
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.ours.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One competitor of a row group: which server, and the command of one run.
struct Competitor {
    label: String,
    kafka: bool,
    cmd: String,
    /// For appends: the files the run writes (compared with the references).
    outputs: Vec<PathBuf>,
    /// A physical ceiling (ours, pinned like our side, on the same bytes), not a
    /// competitor of Kafka's: see [`Ceiling`].
    ceiling: Option<Ceiling>,
}

/// What makes a competitor a ceiling: a row `ceiling NAME = X GB/s`; a bound ceiling
/// also gives each of the group's rows an `ours/ceiling` ratio.
struct Ceiling {
    /// The answer every run must give; `None`: the reference's (Kafka's, or in a group
    /// without Kafka, the first competitor's).
    expect: Option<String>,
    /// Bytes moved per operation (for GB/s).
    bytes_per_op: f64,
    /// Whether the group's rows are measured against it (`ours/ceiling`).
    bound: bool,
}

/// One ceiling row: `ceiling NAME = X GB/s (Y µs per batch)`.
pub struct CeilingRow {
    pub name: String,
    pub bytes_per_op: f64,
    /// Median over the timed rounds, ns per operation.
    pub ns: f64,
    /// The first run, ns per operation (measured in the group's listed order).
    pub first_ns: f64,
}

/// GB/s (10^9 bytes per second) of `bytes` moved in `ns` nanoseconds.
pub fn gbps(bytes: f64, ns: f64) -> f64 {
    bytes / ns
}

impl CeilingRow {
    /// `ceiling NAME = X GB/s (Y µs per batch; first run Z µs, W GB/s)`.
    pub fn line(&self) -> String {
        format!(
            "ceiling {} = {:.2} GB/s ({:.3} µs per batch of {} B; first run {:.3} µs, {:.2} GB/s)",
            self.name,
            gbps(self.bytes_per_op, self.ns),
            self.ns / 1e3,
            self.bytes_per_op.round(),
            self.first_ns / 1e3,
            gbps(self.bytes_per_op, self.first_ns)
        )
    }
}

/// The measured results of one competitor.
#[derive(Default)]
struct Measured {
    first_ns: f64,
    rounds_ns: Vec<f64>,
}

/// One line of the table.
pub struct Row {
    pub operation: String,
    pub ours: String,
    pub ours_ns: f64,
    pub kafka_ns: f64,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub ours_first_ns: f64,
    pub kafka_first_ns: f64,
    /// Ours against each of the group's bound ceilings, in the group's order.
    pub ceilings: Vec<RowCeiling>,
}

/// `ours/ceiling` of a row: the ratio within each round, median and quartiles, and the
/// first runs' ratio (each side's first run, in the same order).
pub struct RowCeiling {
    pub name: String,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub first: f64,
}

impl Row {
    /// `OP (ours): ours/kafka = R, ours/ceiling = C` (the ceiling's name and the first
    /// runs' ratio after it; one `ours/ceiling` per bound ceiling).
    pub fn ratio_line(&self) -> String {
        let mut l = format!(
            "{} ({}): ours/kafka = {:.2} [{:.2}, {:.2}]",
            self.operation, self.ours, self.median, self.q1, self.q3
        );
        for c in &self.ceilings {
            l.push_str(&format!(
                ", ours/ceiling = {:.2} [{:.2}, {:.2}] (ceiling: {}; first runs {:.2})",
                c.median, c.q1, c.q3, c.name, c.first
            ));
        }
        l
    }
}

pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// The answer check of one run: `answer` must equal Kafka's `expected`.
pub fn check_answer(what: &str, who: &str, expected: &str, answer: &str) -> Option<String> {
    (answer != expected)
        .then(|| format!("MISMATCH {what}: {who} answered {answer}, Kafka {expected}"))
}

/// The bytes check of one append run: the written file must equal the source.
pub fn check_bytes(what: &str, who: &str, source: &[u8], written: &[u8]) -> Option<String> {
    if source == written {
        return None;
    }
    let at = source
        .iter()
        .zip(written)
        .position(|(a, b)| a != b)
        .unwrap_or(source.len().min(written.len()));
    Some(format!(
        "MISMATCH {what}: {who} wrote {} bytes differing from the source's {} at byte {at}",
        written.len(),
        source.len()
    ))
}

/// [`check_bytes`] on two files, read in chunks (a segment's `.log` is 1 GiB).
pub fn compare_files(
    what: &str,
    who: &str,
    reference: &Path,
    written: &Path,
) -> Result<Option<String>, String> {
    use std::io::Read;
    let open = |p: &Path| std::fs::File::open(p).map_err(|e| format!("{p:?}: {e}"));
    let (mut a, mut b) = (open(reference)?, open(written)?);
    let (la, lb) = (
        a.metadata().map_err(|e| e.to_string())?.len(),
        b.metadata().map_err(|e| e.to_string())?.len(),
    );
    let name = written
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let mut at = 0u64;
    let (mut x, mut y) = (vec![0u8; 1 << 22], vec![0u8; 1 << 22]);
    loop {
        let n = a.read(&mut x).map_err(|e| e.to_string())?;
        let mut m = 0;
        while m < n {
            let k = b.read(&mut y[m..n]).map_err(|e| e.to_string())?;
            if k == 0 {
                break;
            }
            m += k;
        }
        if let Some(f) = check_bytes(what, who, &x[..n], &y[..m]) {
            let off: u64 = f
                .rsplit("at byte ")
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            return Ok(Some(format!(
                "MISMATCH {what}: {who} wrote {name} of {lb} bytes, differing from the reference's {la} at byte {}",
                at + off
            )));
        }
        if n == 0 {
            return Ok((la != lb).then(|| {
                format!("MISMATCH {what}: {who} wrote {name} of {lb} bytes, the reference {la}")
            }));
        }
        at += n as u64;
    }
}

struct Bench<'a> {
    ours: &'a mut Server,
    kafka: &'a mut Server,
    opts: &'a Options,
    findings: Vec<String>,
    rows: Vec<Row>,
    ceilings: Vec<CeilingRow>,
}

impl Bench<'_> {
    fn server(&mut self, kafka: bool) -> &mut Server {
        if kafka {
            self.kafka
        } else {
            self.ours
        }
    }

    /// Runs one group of competitors (the last is Kafka's) on the same work, `ops`
    /// operations a run. `refs[i]` is the file that every competitor's `outputs[i]` must
    /// equal after each run; where it is `None`, Kafka's output of the first run is
    /// copied into `keep` (same file name) and is the reference from then on.
    fn group(
        &mut self,
        operation: &str,
        cs: &[Competitor],
        ops: usize,
        refs: &[Option<PathBuf>],
        keep: Option<&Path>,
    ) -> Result<(), String> {
        let mut refs: Vec<Option<PathBuf>> = refs.to_vec();
        let n = cs.len();
        // The reference answer: Kafka's, or in a group of ceilings only, the first's.
        let kafka = cs.iter().position(|c| c.kafka);
        let reference = kafka.unwrap_or(0);
        let bounds: Vec<usize> = (0..n)
            .filter(|&c| cs[c].ceiling.as_ref().is_some_and(|x| x.bound))
            .collect();
        let mut m: Vec<Measured> = (0..n).map(|_| Measured::default()).collect();
        let mut expected: Option<String> = None;
        let runs = 1 + self.opts.warmups + self.opts.rounds;
        for run in 0..runs {
            // The first runs go in the listed order, Kafka's last; the timed rounds rotate.
            let order: Vec<usize> = if run <= self.opts.warmups {
                (0..n).collect()
            } else {
                (0..n).map(|k| (k + run) % n).collect()
            };
            // Kafka's answer first in every run it is in, so each of ours is checked
            // against it.
            let mut answers = vec![String::new(); n];
            for &c in &order {
                let comp = &cs[c];
                // Every run starts with nothing dirty: the previous side's writes (up to
                // a GiB on ext4, kept for the file checks) are on disk before this side's
                // timer starts, so their writeback does not land in its time. Untimed.
                settle();
                let (ns, answer) = self.server(comp.kafka).run(&comp.cmd)?;
                let per_op = ns / ops.max(1) as f64;
                if run == 0 {
                    m[c].first_ns = per_op;
                } else if run > self.opts.warmups {
                    m[c].rounds_ns.push(per_op);
                }
                answers[c] = answer;
            }
            // The files, once every competitor ran (Kafka's first output may be a
            // reference for the others).
            for (i, r) in refs.iter_mut().enumerate() {
                if r.is_none() {
                    let out = &cs[kafka.ok_or("a reference output without Kafka")?].outputs[i];
                    let dir = keep.ok_or("a reference without a directory to keep it")?;
                    std::fs::create_dir_all(dir).map_err(|e| format!("{dir:?}: {e}"))?;
                    let to = dir.join(out.file_name().ok_or("no file name")?);
                    std::fs::copy(out, &to).map_err(|e| format!("{out:?}: {e}"))?;
                    *r = Some(to);
                }
            }
            for comp in cs {
                for (out, r) in comp.outputs.iter().zip(&refs) {
                    let r = r.as_ref().expect("set above");
                    if r == out {
                        continue;
                    }
                    let who = if comp.kafka { "Kafka" } else { &comp.label };
                    if let Some(f) = compare_files(operation, who, r, out)? {
                        self.findings.push(format!("{f} (run {run})"));
                    }
                }
            }
            let exp = expected
                .get_or_insert_with(|| answers[reference].clone())
                .clone();
            for (c, a) in answers.iter().enumerate() {
                let who = if cs[c].kafka {
                    "Kafka (again)"
                } else {
                    &cs[c].label
                };
                let own = cs[c].ceiling.as_ref().and_then(|x| x.expect.as_ref());
                let f = match own {
                    // A ceiling's own answer (the bytes it moved, the CRCs it matched).
                    Some(own) => (a != own).then(|| {
                        format!("MISMATCH {operation}: {who} answered {a}, expected {own}")
                    }),
                    None => check_answer(operation, who, &exp, a),
                };
                if let Some(f) = f {
                    self.findings.push(format!("{f} (run {run})"));
                }
            }
        }
        let within = |a: &Measured, b: &Measured| -> Vec<f64> {
            a.rounds_ns
                .iter()
                .zip(&b.rounds_ns)
                .map(|(o, k)| o / k)
                .collect()
        };
        for (c, comp) in cs.iter().enumerate() {
            if let Some(x) = &comp.ceiling {
                self.ceilings.push(CeilingRow {
                    name: comp.label.clone(),
                    bytes_per_op: x.bytes_per_op,
                    ns: quantile(&m[c].rounds_ns, 0.5),
                    first_ns: m[c].first_ns,
                });
            }
        }
        let Some(kafka) = kafka else {
            return Ok(());
        };
        let k = &m[kafka];
        for (c, comp) in cs.iter().enumerate() {
            if comp.kafka || comp.ceiling.is_some() {
                continue;
            }
            let ratios = within(&m[c], k);
            let ceilings = bounds
                .iter()
                .map(|&b| {
                    let r = within(&m[c], &m[b]);
                    RowCeiling {
                        name: cs[b].label.clone(),
                        median: quantile(&r, 0.5),
                        q1: quantile(&r, 0.25),
                        q3: quantile(&r, 0.75),
                        first: m[c].first_ns / m[b].first_ns,
                    }
                })
                .collect();
            self.rows.push(Row {
                operation: operation.to_string(),
                ours: comp.label.clone(),
                ours_ns: quantile(&m[c].rounds_ns, 0.5),
                kafka_ns: quantile(&k.rounds_ns, 0.5),
                median: quantile(&ratios, 0.5),
                q1: quantile(&ratios, 0.25),
                q3: quantile(&ratios, 0.75),
                ours_first_ns: m[c].first_ns,
                kafka_first_ns: k.first_ns,
                ceilings,
            });
        }
        Ok(())
    }
}

/// `cargo xtask vs-kafka [options]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let Some(opts) = parse(args)? else {
        return Ok(());
    };
    if opts.sabotage == Some("all") {
        return run_sabotages();
    }
    for (tool, arg) in [("java", "-version"), ("mvn", "-v")] {
        if !super::have(tool, arg) {
            return Err(format!(
                "vs-kafka: `{tool}` is not installed (needed: a JDK 17+ and Maven)"
            ));
        }
    }
    if opts.dump && !Path::new(super::vs_dump::GNU_TIME).exists() {
        return Err(format!(
            "vs-kafka: `{}` (GNU time) is not installed (needed by --only dump for the peak RSS)",
            super::vs_dump::GNU_TIME
        ));
    }
    broker::install_ctrlc()?;
    let t = Instant::now();
    let mut builds = vec![vec!["-p", "vs-kafka-ours"]];
    if opts.dump {
        // The operator's binary, with its default features (every codec, the CLI).
        builds.push(vec!["-p", "segment", "--bin", "dump-log"]);
    }
    for b in builds {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.current_dir(super::root());
        c.args(["build", "--quiet", "--release"]).args(b);
        eprintln!("\n==> {c:?}");
        let status = c.status().map_err(|e| format!("cannot start {c:?}: {e}"))?;
        if !status.success() {
            return Err(format!("{c:?} failed with {status}"));
        }
    }
    let ours_bin = super::target_dir().join("release/vs-kafka-ours");
    let jvm = super::build_oracle()?;
    eprintln!(
        "vs-kafka: both sides built in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let shm = Path::new("/dev/shm");
    let scratch_root = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        super::target_dir().join("kafka")
    };
    let scratch = tempfile::Builder::new()
        .prefix("vs-kafka-")
        .tempdir_in(&scratch_root)
        .map_err(|e| format!("{scratch_root:?}: {e}"))?;
    let dir = scratch.path().to_path_buf();

    // Both sides on one core (the last), taking turns: neither competes with the other.
    let mut prefix: Vec<String> = Vec::new();
    let mut pinned = "not pinned".to_string();
    if opts.pin && super::have("taskset", "-V") {
        let core = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        prefix = vec!["taskset".into(), "-c".into(), core.to_string()];
        pinned = format!("both pinned to core {core} (taskset)");
    }
    let mut rows = Vec::new();
    let mut ceilings = Vec::new();
    let mut findings = Vec::new();
    let mut result = Ok(());
    if opts.lookups || opts.appends || opts.segments || opts.leader {
        result =
            measure_in_servers(&opts, &jvm, &ours_bin, &dir, &prefix, &pinned).map(|(r, c, f)| {
                rows = r;
                ceilings = c;
                findings = f;
            });
    }
    let mut clean_rows = Vec::new();
    if opts.clean && result.is_ok() {
        result = super::vs_clean::run(
            &jvm,
            &ours_bin,
            &dir,
            &prefix,
            &opts.clean_opts,
            &mut findings,
        )
        .map(|r| clean_rows = r);
    }
    let mut opens_rows = Vec::new();
    if (opts.opens || opts.opens_cold) && result.is_ok() {
        let mut oo = opts.opens_opts;
        if !opts.opens {
            oo.segments = 0;
        }
        if !opts.opens_cold {
            oo.cold_segments = 0;
        }
        result = super::vs_opens::run(&jvm, &ours_bin, &dir, &prefix, &oo, &mut findings)
            .map(|r| opens_rows = r);
    }
    let mut dump_rows = Vec::new();
    if opts.dump && result.is_ok() {
        let dump_log = super::target_dir().join("release/dump-log");
        result = super::vs_dump::run(
            &jvm,
            &ours_bin,
            &dump_log,
            &dir,
            &prefix,
            &opts.dump_opts,
            &mut findings,
        )
        .map(|r| dump_rows = r);
    }
    if opts.keep {
        let p = scratch.keep();
        eprintln!("vs-kafka: scratch kept in {}", p.display());
    }
    result?;
    if !rows.is_empty() {
        print_table(&rows, &opts, &pinned);
    }
    if !ceilings.is_empty() {
        println!(
            "vs-kafka ceilings: on our side's core, the same bytes, interleaved with the rows \
             they bound (median over the rounds; first run in the group's listed order, \
             the ceilings first)\n"
        );
        for c in &ceilings {
            println!("{}", c.line());
        }
        println!();
        for r in rows.iter().filter(|r| !r.ceilings.is_empty()) {
            println!("{}", r.ratio_line());
        }
        println!();
    }
    if !dump_rows.is_empty() {
        println!(
            "\nvs-kafka dump: ours / Kafka 4.4.0, one process per dump, wall time net of start-up \
             (median of {} interleaved rounds; < 1: we are faster) and peak RSS (median; < 1: we use less); {pinned}\n",
            opts.dump_opts.rounds
        );
        for r in &dump_rows {
            println!("{r}");
        }
        println!();
    }
    if !clean_rows.is_empty() {
        println!(
            "\nvs-kafka clean: ours (Log::clean) / Kafka 4.4.0 (Cleaner.doClean), in-process time of one clean of \
             the whole dirty section (median of {} interleaved rounds after {} warm-up; < 1: we are faster), \
             the same {} MiB dedupe buffer; peak RSS of each process; {pinned}\n",
            opts.clean_opts.rounds,
            opts.clean_opts.warmups,
            opts.clean_opts.map_bytes >> 20
        );
        for r in &clean_rows {
            println!("{r}");
        }
        println!();
    }
    if !opens_rows.is_empty() {
        println!(
            "\nvs-kafka opens: ours (Log::open) / Kafka 4.4.0 (UnifiedLog.create, its LogLoader), in-process time \
             of one open of a whole partition directory (median of {} interleaved rounds after {} warm-up(s); \
             < 1: we are faster); {pinned}\n",
            opts.opens_opts.rounds, opts.opens_opts.warmups
        );
        for r in &opens_rows {
            println!("{r}");
        }
        println!();
    }
    for f in findings.iter().take(20) {
        println!("{f}");
    }
    if findings.len() > 20 {
        println!("... and {} more", findings.len() - 20);
    }
    if findings.is_empty() {
        println!("answers: equal on every run (lookups, translate_offset: the hash of every answer; appends, recovery: the files, byte for byte; dump: standard output line by line, then its byte count on every run; clean: every cleaned segment file, byte for byte, and the clean's counts; opens: log start, log end and segment count, and every segment file after the open but the active indexes)");
        Ok(())
    } else {
        println!("answers: {} mismatch(es)", findings.len());
        Err(format!(
            "vs-kafka: our answers differ from Kafka's ({} finding(s){})",
            findings.len(),
            opts.sabotage
                .map_or(String::new(), |s| format!(", sabotage {s} on"))
        ))
    }
}

/// What the servers measured: the rows, the ceilings, the findings.
type Measurements = (Vec<Row>, Vec<CeilingRow>, Vec<String>);

/// The index and segment rows: both line-protocol servers, the inputs from one seed.
fn measure_in_servers(
    opts: &Options,
    jvm: &broker::Jvm,
    ours_bin: &Path,
    dir: &Path,
    prefix: &[String],
    pinned: &str,
) -> Result<Measurements, String> {
    let (mut ours, _) = Server::spawn_ours(ours_bin, prefix)?;
    let (mut kafka, _) = Server::spawn_kafka(jvm, "oracle.VsBench", prefix)?;

    let t = Instant::now();
    let gen = ours.call(&format!(
        "gen {} {} {} {INDEX_BYTES}",
        opts.seed,
        dir.display(),
        opts.targets
    ))?;
    eprintln!(
        "vs-kafka: seed {}: {} offset-index and {} time-index entries, {} targets a run, in {} ({:.1} s); {pinned}",
        opts.seed,
        gen.first().map_or("?", String::as_str),
        gen.get(1).map_or("?", String::as_str),
        opts.targets,
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    let mut bench = Bench {
        ours: &mut ours,
        kafka: &mut kafka,
        opts,
        findings: Vec::new(),
        rows: Vec::new(),
        ceilings: Vec::new(),
    };
    let result = measure(&mut bench, dir);
    let (rows, ceilings, findings) = (
        std::mem::take(&mut bench.rows),
        std::mem::take(&mut bench.ceilings),
        std::mem::take(&mut bench.findings),
    );
    drop(bench);
    ours.quit();
    kafka.quit();
    result.map(|()| (rows, ceilings, findings))
}

/// Each sabotage in turn (a quick run of its group): each must fail with a mismatch.
fn run_sabotages() -> Result<(), String> {
    let mut missed = Vec::new();
    for (name, group, what) in SABOTAGES {
        let args: Vec<String> = ["--quick", "--only", group, "--sabotage", name]
            .iter()
            .map(|s| s.to_string())
            .collect();
        match run(&args) {
            Err(e) if e.contains("our answers differ from Kafka's") => {
                println!("sabotage {name}: caught ({what}): {e}")
            }
            Err(e) => {
                println!("sabotage {name}: NOT caught: the run failed for another reason: {e}");
                missed.push(*name);
            }
            Ok(()) => {
                println!("sabotage {name}: NOT caught: the run passed with {what}");
                missed.push(*name);
            }
        }
    }
    println!(
        "sabotage: {} of {} caught",
        SABOTAGES.len() - missed.len(),
        SABOTAGES.len()
    );
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!("sabotage(s) not caught: {}", missed.join(", ")))
    }
}

/// Lookups per `with_reader` call in the lookup groups' batch row (the limit bench's
/// slice: `docs/performance.md#lookup-batch`).
const LOOKUP_BATCH: usize = 1000;

fn measure(b: &mut Bench<'_>, dir: &Path) -> Result<(), String> {
    let sab_lookup = u8::from(b.opts.sabotage == Some("lookup-slot-before"));
    let sab_append = u8::from(b.opts.sabotage == Some("append-position"));
    let sab_ceiling_index = u8::from(b.opts.sabotage == Some("ceiling-index-drop"));
    if b.opts.lookups {
        let mut strategies = vec!["default".to_string()];
        strategies.extend(vs_kafka_ours_names().iter().map(|s| s.to_string()));
        for (kind, file) in [("offset", "offset.index"), ("time", "time.timeindex")] {
            let path = dir.join(file);
            let mut labels = Vec::new();
            for s in &strategies {
                let w = b.ours.call(&format!(
                    "open {kind}-{s} {kind} {} 0 {INDEX_BYTES} {s}",
                    path.display()
                ))?;
                let name = w.get(1).cloned().unwrap_or_default();
                if s == "default" && kind == "offset" && !strategies.contains(&name) {
                    // `SearchStrategy` is non-exhaustive: a new default is measured by the
                    // default row, but has no named row until it is listed.
                    eprintln!(
                        "vs-kafka: note: the default strategy `{name}` has no named row; \
                         list it in vs_kafka_ours::named_strategies"
                    );
                }
                labels.push(if s == "default" {
                    format!("default ({name})")
                } else {
                    name
                });
            }
            b.kafka.call(&format!(
                "open {kind} {kind} {} 0 {INDEX_BYTES} kafka",
                path.display()
            ))?;
            for workload in vs_kafka_ours::WORKLOADS {
                let tfile = dir.join(format!("{kind}-{workload}.targets"));
                let tid = format!("{kind}-{workload}");
                b.ours.call(&format!("targets {tid} {}", tfile.display()))?;
                b.kafka
                    .call(&format!("targets {tid} {}", tfile.display()))?;
                let mut cs: Vec<Competitor> = strategies
                    .iter()
                    .zip(&labels)
                    .map(|(s, l)| Competitor {
                        label: l.clone(),
                        kafka: false,
                        cmd: format!("lookup {kind}-{s} {tid} {sab_lookup}"),
                        outputs: Vec::new(),
                        ceiling: None,
                    })
                    .collect();
                // The default's lookups through the batch API, against the same
                // per-call lookups of Kafka's (Kafka has no batch API).
                cs.push(Competitor {
                    label: format!("{}, with_reader, {LOOKUP_BATCH} per batch", labels[0]),
                    kafka: false,
                    cmd: format!("lookup-batch {kind}-default {tid} {sab_lookup} {LOOKUP_BATCH}"),
                    outputs: Vec::new(),
                    ceiling: None,
                });
                cs.push(Competitor {
                    label: "Kafka".into(),
                    kafka: true,
                    cmd: format!("lookup {kind} {tid}"),
                    outputs: Vec::new(),
                    ceiling: None,
                });
                let name = format!(
                    "{kind} lookup, {}",
                    match workload {
                        "hot" => "hot tail",
                        "lagging" => "lagging",
                        "mixed" => "mixed",
                        _ => "uniform",
                    }
                );
                b.group(&name, &cs, b.opts.targets, &[], None)?;
            }
        }
    }
    if b.opts.appends {
        for (kind, file, call) in [
            ("offset", "offset.index", "append"),
            ("time", "time.timeindex", "maybe_append"),
        ] {
            let src = dir.join(file);
            let len = std::fs::metadata(&src)
                .map_err(|e| format!("{src:?}: {e}"))?
                .len();
            let entries = len as usize / if kind == "offset" { 8 } else { 12 };
            // The fill ceiling: the entries' bytes stored into a fresh mapped file (the
            // bound of the rows: `docs/performance.md#index-append-ceiling`), first.
            let fill = dir.join(format!("ceiling.{kind}"));
            let mut cs = vec![Competitor {
                label: format!(
                    "{}-byte stores into a fresh mapped file, {}",
                    if kind == "offset" { 8 } else { 12 },
                    fs_type(dir)
                ),
                kafka: false,
                cmd: format!(
                    "ceil-index {kind} {} {} {INDEX_BYTES} {sab_ceiling_index}",
                    src.display(),
                    fill.display()
                ),
                outputs: vec![fill.clone()],
                ceiling: Some(Ceiling {
                    expect: None,
                    bytes_per_op: if kind == "offset" { 8.0 } else { 12.0 },
                    bound: true,
                }),
            }];
            for (mode, label) in [("call", call), ("appender", "appender()")] {
                let out = dir.join(format!("ours-{mode}.{kind}"));
                cs.push(Competitor {
                    label: label.to_string(),
                    kafka: false,
                    cmd: format!(
                        "append {kind} {} {} 0 {INDEX_BYTES} {mode} {sab_append}",
                        src.display(),
                        out.display()
                    ),
                    outputs: vec![out],
                    ceiling: None,
                });
            }
            let out = dir.join(format!("kafka.{kind}"));
            cs.push(Competitor {
                label: "Kafka".into(),
                kafka: true,
                cmd: format!(
                    "append {kind} {} {} 0 {INDEX_BYTES} call 0",
                    src.display(),
                    out.display()
                ),
                outputs: vec![out],
                ceiling: None,
            });
            b.group(
                &format!("{kind} index append, {entries} entries"),
                &cs,
                entries,
                &[Some(src)],
                None,
            )?;
            let _ = std::fs::remove_file(&fill);
        }
    }
    if b.opts.segments {
        measure_segments(b, dir)?;
        measure_log_append(b, dir)?;
    }
    if b.opts.leader {
        measure_leader(b, dir)?;
    }
    Ok(())
}

/// A producer's batches appended by the leader to a new log: `Log::append_as_leader`
/// against `UnifiedLog.appendAsLeader`, plain, idempotent and transactional batches from 1
/// and 4 producers in turn, and idempotent ones recompressed to the topic's lz4. The
/// offsets of every append are compared (hashed), and the `.log` byte for byte where the
/// leader keeps the producer's (uncompressed) batches; lz4 output is the codec library's,
/// so there only the offsets. The indexes are not: Kafka's close leaves the active ones
/// at their preallocated size (`docs/kafka-behaviour.md#leader-close-index`).
fn measure_leader(b: &mut Bench<'_>, dir: &Path) -> Result<(), String> {
    let n = b.opts.leader_batches;
    let sab = u8::from(b.opts.sabotage == Some("leader-skip-batch"));
    let sab_ceiling = u8::from(b.opts.sabotage == Some("ceiling-write-drop"));
    let disk = super::target_dir().join("vs-kafka-leader");
    // (kind, producers, codec, on the target directory's filesystem instead of tmpfs)
    let rows = [
        ("plain", 1, "none", false),
        ("plain", 1, "none", true),
        ("plain", 4, "none", false),
        ("idempotent", 1, "none", false),
        ("idempotent", 4, "none", false),
        ("transactional", 1, "none", false),
        ("transactional", 4, "none", false),
        ("idempotent", 1, "lz4", false),
        ("idempotent", 4, "lz4", false),
    ];
    for (kind, producers, codec, on_disk) in rows {
        let input = dir.join(format!("leader-{kind}-{producers}.batches"));
        if !input.exists() {
            b.ours.call(&format!(
                "gen-leader {} {} {kind} {producers} {n}",
                b.opts.seed,
                input.display()
            ))?;
        }
        let d = if on_disk {
            std::fs::create_dir_all(&disk).map_err(|e| format!("{disk:?}: {e}"))?;
            disk.as_path()
        } else {
            dir
        };
        let fs = fs_type(d);
        // UnifiedLog takes its topic partition from the directory's name.
        let ours_dir = d.join("leader-ours").join("vs-kafka-0");
        let kafka_dir = d.join("leader-kafka").join("vs-kafka-0");
        // The plain row from one producer against the machine's ceilings: write(2) of the
        // same batches (the producer's bytes, which the leader keeps but for the base
        // offset and leader epoch it sets) into a fresh file on the same filesystem, and
        // that write with every batch's CRC-32C checked first (the leader's check).
        let mut cs = Vec::new();
        if kind == "plain" && producers == 1 {
            let image = dir.join("leader-plain-1.log");
            let w = b.ours.call(&format!(
                "leader-log {} {}",
                input.display(),
                image.display()
            ))?;
            let image_len: u64 = w
                .first()
                .and_then(|s| s.parse().ok())
                .ok_or("leader-log: no size")?;
            for (mode, what) in [
                ("fresh", "into a fresh file"),
                ("fresh-crc", "+ CRC-32C of each batch, into a fresh file"),
            ] {
                cs.push(Competitor {
                    label: format!("write(2) {what}, {fs}, the leader's plain batches"),
                    kafka: false,
                    cmd: format!(
                        "ceil-write {} {} {mode} {sab_ceiling}",
                        image.display(),
                        d.join(format!("leader-ceiling-{mode}.log")).display()
                    ),
                    outputs: Vec::new(),
                    ceiling: Some(Ceiling {
                        expect: Some(format!("{image_len}")),
                        bytes_per_op: image_len as f64 / n.max(1) as f64,
                        bound: true,
                    }),
                });
            }
        }
        let files = |d: &Path| -> Vec<PathBuf> {
            if codec == "none" {
                vec![vs_kafka_ours::segment_file(d, "log")]
            } else {
                Vec::new()
            }
        };
        cs.extend([
            Competitor {
                label: if on_disk {
                    format!("Log::append_as_leader, {fs}")
                } else {
                    "Log::append_as_leader".into()
                },
                kafka: false,
                cmd: format!(
                    "leader {} {} {codec} {sab}",
                    input.display(),
                    ours_dir.display()
                ),
                outputs: files(&ours_dir),
                ceiling: None,
            },
            Competitor {
                label: "Kafka".into(),
                kafka: true,
                cmd: format!("leader {} {} {codec}", input.display(), kafka_dir.display()),
                outputs: files(&kafka_dir),
                ceiling: None,
            },
        ]);
        let refs: Vec<Option<PathBuf>> = files(&kafka_dir).iter().map(|_| None).collect();
        let keep = dir.join("leader-reference");
        b.group(
            &format!(
                "leader append, {n} {kind} batches of 16 records from {producers} producer{}{}{}, per batch",
                if producers == 1 { "" } else { "s" },
                if codec == "lz4" { ", recompressed to lz4" } else { "" },
                if on_disk { format!(", {fs}") } else { String::new() }
            ),
            &cs,
            n,
            &refs,
            Some(&keep),
        )?;
        for d in [&ours_dir, &kafka_dir, &keep] {
            let _ = std::fs::remove_dir_all(d);
        }
        for mode in ["fresh", "fresh-crc"] {
            let _ = std::fs::remove_file(d.join(format!("leader-ceiling-{mode}.log")));
        }
    }
    let _ = std::fs::remove_dir_all(&disk);
    Ok(())
}

/// The base offsets of the segments a log rolls into when the batches of `src` (a `.log`
/// image) are appended one by one with `segment.bytes` = `segment_bytes`: Kafka's size
/// rule, a new segment when the active one's size plus the batch would exceed it.
fn roll_bases(src: &Path, segment_bytes: u64) -> Result<Vec<i64>, String> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(src).map_err(|e| format!("{src:?}: {e}"))?;
    let len = f.metadata().map_err(|e| format!("{src:?}: {e}"))?.len();
    let (mut pos, mut size, mut bases) = (0u64, 0u64, vec![0i64]);
    let mut head = [0u8; 12];
    while pos < len {
        f.read_exact_at(&mut head, pos)
            .map_err(|e| format!("{src:?}: {e}"))?;
        let base = i64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
        let n = 12 + u64::from(u32::from_be_bytes(head[8..].try_into().expect("4 bytes")));
        if size > 0 && size + n > segment_bytes {
            bases.push(base);
            size = 0;
        }
        size += n;
        pos += n;
    }
    Ok(bases)
}

/// `Log::append` (the follower's append, offsets kept) against Kafka's
/// `UnifiedLog.appendAsFollower`, one 16 KiB batch a call, into a new log whose
/// `segment.bytes` is the segment rows' size (Kafka's default 1 GiB in a default run) and
/// whose input is an eighth larger, so it rolls once; on tmpfs and on the target
/// directory's filesystem, each against the `write(2)` ceiling into a fresh file on the
/// same filesystem and against that write with every batch's CRC-32C checked first (the
/// check both appends make). The `.log`s and the rolled segment's indexes must equal
/// Kafka's (the active ones are not compared: Kafka's close leaves them preallocated,
/// `docs/kafka-behaviour.md#leader-close-index`).
fn measure_log_append(b: &mut Bench<'_>, dir: &Path) -> Result<(), String> {
    let sab = u8::from(b.opts.sabotage == Some("log-skip-batch"));
    let sab_ceiling = u8::from(b.opts.sabotage == Some("ceiling-write-drop"));
    let input_dir = dir.join("log-input");
    std::fs::create_dir_all(&input_dir).map_err(|e| format!("{input_dir:?}: {e}"))?;
    let bytes = b.opts.log_bytes + b.opts.log_bytes / 8;
    let w = b.ours.call(&format!(
        "gen-log {} {} {bytes} 0 0",
        b.opts.seed.wrapping_add(1),
        input_dir.display()
    ))?;
    let batches: usize = w
        .first()
        .and_then(|s| s.parse().ok())
        .ok_or("gen-log: no batch count")?;
    let src = input_dir.join("batches.log");
    let src_len = std::fs::metadata(&src)
        .map_err(|e| format!("{src:?}: {e}"))?
        .len();
    let segment_bytes = b.opts.log_bytes as u64;
    let bases = roll_bases(&src, segment_bytes)?;
    // Every segment's .log; the indexes of every segment but the active one.
    let files = |d: &Path| -> Vec<PathBuf> {
        let mut v = Vec::new();
        for (i, base) in bases.iter().enumerate() {
            let name = |suffix: &str| d.join(format!("{base:020}.{suffix}"));
            v.push(name("log"));
            if i + 1 < bases.len() {
                v.push(name("index"));
                v.push(name("timeindex"));
            }
        }
        v
    };
    let keep = dir.join("log-reference");
    let disk = super::target_dir().join("vs-kafka-log");
    let mut refs: Vec<Option<PathBuf>> = files(&keep).iter().map(|_| None).collect();
    for d in [dir, disk.as_path()] {
        std::fs::create_dir_all(d).map_err(|e| format!("{d:?}: {e}"))?;
        let fs = fs_type(d);
        let ceiling = |mode: &str, what: &str| {
            let out = d.join(format!("log-ceiling-{mode}.log"));
            Competitor {
                label: format!("write(2) {what}, {fs}, the log rows' input"),
                kafka: false,
                cmd: format!(
                    "ceil-write {} {} {mode} {sab_ceiling}",
                    src.display(),
                    out.display()
                ),
                // Checked by its answer: the bytes written (whose CRC matched).
                outputs: Vec::new(),
                ceiling: Some(Ceiling {
                    expect: Some(src_len.to_string()),
                    bytes_per_op: src_len as f64 / batches.max(1) as f64,
                    bound: true,
                }),
            }
        };
        // UnifiedLog takes its topic partition from the directory's name.
        let ours_dir = d.join("log-ours").join("vs-kafka-0");
        let kafka_dir = d.join("log-kafka").join("vs-kafka-0");
        let cs = vec![
            ceiling("fresh", "into a fresh file"),
            ceiling("fresh-crc", "+ CRC-32C of each batch, into a fresh file"),
            Competitor {
                label: format!("Log::append, {fs}"),
                kafka: false,
                cmd: format!(
                    "log-append {} {} {segment_bytes} {sab}",
                    src.display(),
                    ours_dir.display()
                ),
                outputs: files(&ours_dir),
                ceiling: None,
            },
            Competitor {
                label: "Kafka".into(),
                kafka: true,
                cmd: format!(
                    "log-append {} {} {segment_bytes}",
                    src.display(),
                    kafka_dir.display()
                ),
                outputs: files(&kafka_dir),
                ceiling: None,
            },
        ];
        b.group(
            &format!(
                "log append (follower), {batches} batches of 16 KiB ({} MiB, {} segments), {fs}, per batch",
                src_len >> 20,
                bases.len()
            ),
            &cs,
            batches,
            &refs,
            Some(&keep),
        )?;
        // The second filesystem's files must equal Kafka's on the first.
        refs = files(&keep).into_iter().map(Some).collect();
        for p in [&ours_dir, &kafka_dir] {
            let _ = std::fs::remove_dir_all(p.parent().unwrap_or(p));
        }
        for mode in ["fresh", "fresh-crc"] {
            let _ = std::fs::remove_file(d.join(format!("log-ceiling-{mode}.log")));
        }
    }
    let _ = std::fs::remove_dir_all(&disk);
    let _ = std::fs::remove_dir_all(&keep);
    let _ = std::fs::remove_dir_all(&input_dir);
    Ok(())
}

/// `sync(1)`: the page cache's dirty pages written back (and waited for) between two
/// timed runs. Harmless where nothing is dirty (tmpfs, lookups).
pub(super) fn settle() {
    let _ = Command::new("sync").status();
}

/// LogSegment append, recovery and `translate_offset` on the same batches.
fn measure_segments(b: &mut Bench<'_>, dir: &Path) -> Result<(), String> {
    let sab_drop = u8::from(b.opts.sabotage == Some("segment-drop-batch"));
    let sab_early = u8::from(b.opts.sabotage == Some("translate-early"));
    let sab_ceiling = u8::from(b.opts.sabotage == Some("ceiling-write-drop"));
    let w = b.ours.call(&format!(
        "gen-log {} {} {} {}",
        b.opts.seed,
        dir.display(),
        b.opts.log_bytes,
        b.opts.fetches
    ))?;
    let batches: usize = w
        .first()
        .and_then(|s| s.parse().ok())
        .ok_or("gen-log: no batch count")?;
    let src = dir.join("batches.log");
    let mib = b.opts.log_bytes >> 20;
    let files = |d: &Path| -> Vec<PathBuf> {
        ["log", "index", "timeindex"]
            .iter()
            .map(|s| vs_kafka_ours::segment_file(d, s))
            .collect()
    };
    let reference = dir.join("segment-reference");
    let (ours_dir, kafka_dir) = (dir.join("segment-ours"), dir.join("segment-kafka"));
    let src_len = std::fs::metadata(&src)
        .map_err(|e| format!("{src:?}: {e}"))?
        .len() as f64;
    let per_batch = src_len / batches.max(1) as f64;
    let ceiling = |expect: Option<String>, bound: bool| {
        Some(Ceiling {
            expect,
            bytes_per_op: per_batch,
            bound,
        })
    };
    // The write(2) ceilings: tmpfs (where both sides append) and the disk's filesystem
    // (the target directory's), into a fresh file and over allocated pages. The first is
    // the bound of the append rows.
    let disk = super::target_dir().join("vs-kafka-ceilings");
    std::fs::create_dir_all(&disk).map_err(|e| format!("{disk:?}: {e}"))?;
    let (tmpfs_name, disk_name) = (fs_type(dir), fs_type(&disk));
    let mut cs = Vec::new();
    for (d, fs) in [(dir, &tmpfs_name), (disk.as_path(), &disk_name)] {
        for (mode, what) in [
            ("fresh", "into a fresh file"),
            ("over", "over allocated pages"),
        ] {
            let out = d.join(format!("ceiling-{mode}.log"));
            cs.push(Competitor {
                label: format!("write(2) {what}, {fs}"),
                kafka: false,
                cmd: format!(
                    "ceil-write {} {} {mode} {sab_ceiling}",
                    src.display(),
                    out.display()
                ),
                outputs: vec![out],
                ceiling: ceiling(Some(format!("{}", src_len as u64)), cs.is_empty()),
            });
        }
    }
    cs.extend([
        Competitor {
            label: "LogSegment::append".into(),
            kafka: false,
            cmd: format!(
                "seg-append {} {} {sab_drop}",
                src.display(),
                ours_dir.display()
            ),
            outputs: files(&ours_dir),
            ceiling: None,
        },
        Competitor {
            label: "Kafka".into(),
            kafka: true,
            cmd: format!("seg-append {} {}", src.display(), kafka_dir.display()),
            outputs: files(&kafka_dir),
            ceiling: None,
        },
    ]);
    // The .log must be the batches, byte for byte; the indexes must be Kafka's.
    b.group(
        &format!("segment append, {batches} batches of 16 KiB ({mib} MiB), per batch"),
        &cs,
        batches,
        &[Some(src.clone()), None, None],
        Some(&reference),
    )?;
    // With `preallocate` (Kafka's `file.preallocate`): the `.log` created at
    // `segment.bytes` (sparse, as Kafka's `RandomAccessFile.setLength`), trimmed at the
    // close, so every file must be the one written without it (both sides); bound by the
    // same fresh-file ceiling.
    let fresh_out = dir.join("ceiling-fresh.log");
    let pcs = [
        Competitor {
            label: format!(
                "write(2) into a fresh file, {tmpfs_name} (the preallocate rows' bound)"
            ),
            kafka: false,
            cmd: format!(
                "ceil-write {} {} fresh {sab_ceiling}",
                src.display(),
                fresh_out.display()
            ),
            outputs: vec![fresh_out.clone()],
            ceiling: ceiling(Some(format!("{}", src_len as u64)), true),
        },
        Competitor {
            label: "LogSegment::append, preallocate".into(),
            kafka: false,
            cmd: format!(
                "seg-append {} {} {sab_drop} prealloc",
                src.display(),
                ours_dir.display()
            ),
            outputs: files(&ours_dir),
            ceiling: None,
        },
        Competitor {
            label: "Kafka".into(),
            kafka: true,
            cmd: format!(
                "seg-append {} {} prealloc",
                src.display(),
                kafka_dir.display()
            ),
            outputs: files(&kafka_dir),
            ceiling: None,
        },
    ];
    b.group(
        &format!(
            "segment append with preallocate, {batches} batches of 16 KiB ({mib} MiB), per batch"
        ),
        &pcs,
        batches,
        // Every file as without preallocation: the batches, and the indexes Kafka wrote
        // in the group above.
        &[
            Some(src.clone()),
            Some(vs_kafka_ours::segment_file(&reference, "index")),
            Some(vs_kafka_ours::segment_file(&reference, "timeindex")),
        ],
        None,
    )?;
    let _ = std::fs::remove_file(&fresh_out);
    for d in [&ours_dir, &kafka_dir] {
        let _ = std::fs::remove_dir_all(d);
    }
    let _ = std::fs::remove_dir_all(&disk);
    for c in &cs {
        if c.ceiling.is_some() {
            let _ = std::fs::remove_file(&c.outputs[0]);
        }
    }
    // The reference segment: the batches and Kafka's indexes.
    let log = vs_kafka_ours::segment_file(&reference, "log");
    std::fs::copy(&src, &log).map_err(|e| format!("{log:?}: {e}"))?;
    // The read ceilings of recovery (the bound: pread + CRC-32C of every batch), on the
    // batches' bytes in the page cache; memcpy of the same batches from memory.
    let n_batches = batches.to_string();
    let cs = vec![
        Competitor {
            label: format!("pread + CRC-32C (crc32c) of each batch, {tmpfs_name}"),
            kafka: false,
            cmd: format!("ceil-pread {} crc", src.display()),
            outputs: Vec::new(),
            ceiling: ceiling(Some(n_batches.clone()), true),
        },
        Competitor {
            label: format!(
                "mmap + CRC-32C (crc32c) of each batch in place, {tmpfs_name} (no copy)"
            ),
            kafka: false,
            cmd: format!("ceil-pread {} mapped-crc", src.display()),
            outputs: Vec::new(),
            ceiling: ceiling(Some(n_batches.clone()), true),
        },
        Competitor {
            label: format!("pread of each batch, {tmpfs_name}"),
            kafka: false,
            cmd: format!("ceil-pread {} plain", src.display()),
            outputs: Vec::new(),
            ceiling: ceiling(Some(format!("{}", src_len as u64)), false),
        },
        Competitor {
            label: "memcpy into reused memory".into(),
            kafka: false,
            cmd: format!("ceil-memcpy {} reused", src.display()),
            outputs: Vec::new(),
            ceiling: ceiling(Some("equal".into()), false),
        },
        Competitor {
            label: "memcpy into fresh memory".into(),
            kafka: false,
            cmd: format!("ceil-memcpy {} fresh", src.display()),
            outputs: Vec::new(),
            ceiling: ceiling(Some("equal".into()), false),
        },
        Competitor {
            label: "LogSegment::recover".into(),
            kafka: false,
            cmd: format!("seg-recover {} {}", src.display(), ours_dir.display()),
            outputs: files(&ours_dir),
            ceiling: None,
        },
        Competitor {
            label: "Kafka".into(),
            kafka: true,
            cmd: format!("seg-recover {} {}", src.display(), kafka_dir.display()),
            outputs: files(&kafka_dir),
            ceiling: None,
        },
    ];
    // Recovery must rebuild the indexes the appends wrote, and truncate nothing.
    let refs: Vec<Option<PathBuf>> = files(&reference).into_iter().map(Some).collect();
    b.group(
        &format!("segment recovery, {batches} batches ({mib} MiB), per batch"),
        &cs,
        batches,
        &refs,
        None,
    )?;
    for d in [&ours_dir, &kafka_dir] {
        let _ = std::fs::remove_dir_all(d);
    }
    // Both open the reference segment (written by Kafka's LogSegment).
    let tfile = dir.join("fetch.targets");
    for s in [&mut *b.ours, &mut *b.kafka] {
        s.call(&format!("seg-open seg {}", reference.display()))?;
        s.call(&format!("targets fetch {}", tfile.display()))?;
    }
    let ref_log = vs_kafka_ours::segment_file(&reference, "log");
    let cs = vec![
        Competitor {
            label: "pread of each fetched batch's 12-byte header".into(),
            kafka: false,
            cmd: format!("ceil-fetch {} {} fetch", src.display(), ref_log.display()),
            outputs: Vec::new(),
            // Its answer is Kafka's: the same batches, read from their headers.
            ceiling: Some(Ceiling {
                expect: None,
                bytes_per_op: 12.0,
                bound: true,
            }),
        },
        Competitor {
            label: "LogSegment::translate_offset".into(),
            kafka: false,
            cmd: format!("seg-translate seg fetch {sab_early}"),
            outputs: Vec::new(),
            ceiling: None,
        },
        Competitor {
            label: "Kafka".into(),
            kafka: true,
            cmd: "seg-translate seg fetch".into(),
            outputs: Vec::new(),
            ceiling: None,
        },
    ];
    b.group(
        &format!("segment translate_offset (a fetch's batch), {mib} MiB segment"),
        &cs,
        b.opts.fetches,
        &[],
        None,
    )?;
    // Fetches of 1 MiB (a consumer's default `max.partition.fetch.bytes`) at the first
    // targets, delivered by copy and by sendfile(2) into a pipe and a loopback socket.
    let count = (b.opts.fetches / 64).max(64);
    for (mode, what) in [
        ("copy", "by copy"),
        ("pipe", "by sendfile to a pipe"),
        ("socket", "by sendfile to a loopback socket"),
    ] {
        let cmd = format!("seg-fetch seg fetch {FETCH_BYTES} {mode} {count}");
        let cs = vec![
            Competitor {
                label: if mode == "copy" {
                    "LogSegment::read_min_one_message".into()
                } else {
                    "LogSegment::read_region + sendfile_to".into()
                },
                kafka: false,
                cmd: cmd.clone(),
                outputs: Vec::new(),
                ceiling: None,
            },
            Competitor {
                label: "Kafka".into(),
                kafka: true,
                cmd,
                outputs: Vec::new(),
                ceiling: None,
            },
        ];
        b.group(
            &format!("segment fetch of up to 1 MiB {what}, {count} fetches, per fetch"),
            &cs,
            count,
            &[],
            None,
        )?;
    }
    measure_crc(b, &src)?;
    // Open N segments (ours wrote them; both open the same files).
    let (n, per) = (b.opts.open_segments, 4usize);
    let many = dir.join("many-segments");
    b.ours
        .call(&format!("gen-segments {} {n} {per}", many.display()))?;
    let step = per * 16;
    let cs = vec![
        Competitor {
            label: "LogSegment::open + sanity_check".into(),
            kafka: false,
            cmd: format!("seg-open-all {} {n} {step}", many.display()),
            outputs: Vec::new(),
            ceiling: None,
        },
        Competitor {
            label: "Kafka".into(),
            kafka: true,
            cmd: format!("seg-open-all {} {n} {step}", many.display()),
            outputs: Vec::new(),
            ceiling: None,
        },
    ];
    b.group(
        &format!("open + sanityCheck of {n} segments, per segment"),
        &cs,
        n,
        &[],
        None,
    )?;
    Ok(())
}

/// The CRC sizes measured: a small record batch, 1 KiB, the bench's 16 KiB batches, and
/// 1 MiB (Kafka's default `max.message.bytes`).
pub const CRC_SIZES: &[usize] = &[100, 1024, 16 * 1024, 1 << 20];

/// CRC-32C of the batches' bytes in pieces of each of [`CRC_SIZES`], with each crate of
/// `vs_kafka_ours::CRC_CRATES` (the first, `crc32c`, is the one in use and the reference
/// of the others' answers: a hash of every piece's CRC).
fn measure_crc(b: &mut Bench<'_>, src: &Path) -> Result<(), String> {
    // At most 256 MiB a run: the 100-byte pieces are the slowest.
    let total = b.opts.log_bytes.min(256 << 20);
    for &size in CRC_SIZES {
        let total = total / size * size;
        let cs: Vec<Competitor> = vs_kafka_ours::CRC_CRATES
            .iter()
            .map(|c| Competitor {
                label: format!("CRC-32C ({c}), {size} B pieces"),
                kafka: false,
                cmd: format!("ceil-crc {c} {} {size} {total}", src.display()),
                outputs: Vec::new(),
                ceiling: Some(Ceiling {
                    expect: None,
                    bytes_per_op: size as f64,
                    bound: false,
                }),
            })
            .collect();
        b.group(
            &format!("CRC-32C of {total} bytes in {size} B pieces"),
            &cs,
            total / size,
            &[],
            None,
        )?;
    }
    Ok(())
}

/// The type of the filesystem holding `path` (`stat -f -c %T`: tmpfs, ext2/ext3 for
/// ext4, ...), or `disk` if `stat` cannot say.
pub(crate) fn fs_type(path: &Path) -> String {
    Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "disk".into())
}

/// The named strategies of our side (the `default` row measures the default open path).
/// The size limit of the fetch rows: a consumer's default `max.partition.fetch.bytes`.
const FETCH_BYTES: u64 = 1 << 20;

fn vs_kafka_ours_names() -> Vec<&'static str> {
    vs_kafka_ours::named_strategies()
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

fn print_table(rows: &[Row], opts: &Options, pinned: &str) {
    println!(
        "\nvs-kafka: ours / Kafka 4.4.0, time per operation, median over {} interleaved rounds \
         (< 1: we are faster); {} lookups a run; {pinned}\n",
        opts.rounds, opts.targets
    );
    println!("| operation | ours | ours ns/op | Kafka ns/op | ours/Kafka (median [q1, q3]) | first run: ours / Kafka ns/op (Kafka: JIT warm-up) |");
    println!("|---|---|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.2} [{:.2}, {:.2}] | {:.1} / {:.1} |",
            r.operation,
            r.ours,
            r.ours_ns,
            r.kafka_ns,
            r.median,
            r.q1,
            r.q3,
            r.ours_first_ns,
            r.kafka_first_ns
        );
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_different_answer_is_a_finding() {
        assert!(check_answer("offset lookup", "binary", "17", "17").is_none());
        let f = check_answer("offset lookup", "binary", "17", "18").unwrap();
        assert!(f.starts_with("MISMATCH offset lookup: binary answered 18, Kafka 17"));
    }

    #[test]
    fn a_different_file_is_a_finding() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        let big: Vec<u8> = (0..(5u32 << 20)).map(|i| i as u8).collect();
        std::fs::write(&a, &big).unwrap();
        std::fs::write(&b, &big).unwrap();
        assert!(compare_files("x", "ours", &a, &b).unwrap().is_none());
        let mut other = big.clone();
        other[(4 << 20) + 7] ^= 1;
        std::fs::write(&b, &other).unwrap();
        let f = compare_files("x", "ours", &a, &b).unwrap().unwrap();
        assert!(f.contains(&format!("at byte {}", (4 << 20) + 7)), "{f}");
        std::fs::write(&b, &big[..big.len() - 1]).unwrap();
        assert!(compare_files("x", "ours", &a, &b).unwrap().is_some());
    }

    #[test]
    fn a_different_byte_is_a_finding() {
        assert!(check_bytes("append", "ours", b"abcd", b"abcd").is_none());
        let f = check_bytes("append", "ours", b"abcd", b"abXd").unwrap();
        assert!(f.contains("at byte 2"), "{f}");
        let f = check_bytes("append", "ours", b"abcd", b"abc").unwrap();
        assert!(f.contains("at byte 3"), "{f}");
    }

    #[test]
    fn options_parse() {
        let o = parse(&["--quick".into(), "--only".into(), "appends".into()])
            .unwrap()
            .unwrap();
        assert!(o.appends && !o.lookups && !o.segments && o.rounds == 3);
        assert!(o.log_bytes == 64 << 20 && o.open_segments == 100);
        assert!(!o.dump && o.dump_opts.data_bytes == 64 << 20 && o.dump_opts.partitions == 500);
        let o = parse(&[
            "--only".into(),
            "dump".into(),
            "--rounds".into(),
            "4".into(),
        ])
        .unwrap()
        .unwrap();
        assert!(o.dump && !o.lookups && !o.appends && !o.segments);
        assert!(o.dump_opts.data_bytes == 1 << 30 && o.dump_opts.partitions == 5000);
        assert_eq!(o.dump_opts.rounds, 4);
        let o = parse(&["--sabotage".into(), "dump-lost-line".into()])
            .unwrap()
            .unwrap();
        assert!(o.dump_opts.lose_line);
        assert!(parse(&["--only".into(), "indexes".into()]).is_err());
        assert!(parse(&["--sabotage".into(), "nope".into()]).is_err());
        let o = parse(&["--sabotage".into(), "all".into()])
            .unwrap()
            .unwrap();
        assert_eq!(o.sabotage, Some("all"));
        for (_, group, _) in SABOTAGES {
            assert!(parse(&["--only".into(), group.to_string()]).is_ok());
        }
    }

    #[test]
    fn ceilings_and_ratios_print_as_rows() {
        assert!((gbps(16_000.0, 4_000.0) - 4.0).abs() < 1e-12);
        let c = CeilingRow {
            name: "write(2) into a fresh file, tmpfs".into(),
            bytes_per_op: 16205.0,
            ns: 4200.0,
            first_ns: 9800.0,
        };
        assert_eq!(
            c.line(),
            "ceiling write(2) into a fresh file, tmpfs = 3.86 GB/s (4.200 µs per batch of \
             16205 B; first run 9.800 µs, 1.65 GB/s)"
        );
        let mut r = Row {
            operation: "segment append".into(),
            ours: "LogSegment::append".into(),
            ours_ns: 6000.0,
            kafka_ns: 5900.0,
            median: 1.017,
            q1: 0.94,
            q3: 1.02,
            ours_first_ns: 46796.0,
            kafka_first_ns: 13024.0,
            ceilings: Vec::new(),
        };
        assert_eq!(
            r.ratio_line(),
            "segment append (LogSegment::append): ours/kafka = 1.02 [0.94, 1.02]"
        );
        r.ceilings.push(RowCeiling {
            name: "write(2) into a fresh file, tmpfs".into(),
            median: 1.43,
            q1: 1.4,
            q3: 1.5,
            first: 4.775,
        });
        assert_eq!(
            r.ratio_line(),
            "segment append (LogSegment::append): ours/kafka = 1.02 [0.94, 1.02], \
             ours/ceiling = 1.43 [1.40, 1.50] (ceiling: write(2) into a fresh file, tmpfs; \
             first runs 4.78)"
        );
        r.ceilings.push(RowCeiling {
            name: "write(2) + CRC-32C, tmpfs".into(),
            median: 1.1,
            q1: 1.05,
            q3: 1.2,
            first: 1.0,
        });
        assert!(r.ratio_line().ends_with(
            "first runs 4.78), ours/ceiling = 1.10 [1.05, 1.20] (ceiling: write(2) + \
             CRC-32C, tmpfs; first runs 1.00)"
        ));
    }
}
