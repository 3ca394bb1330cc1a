//! `cargo xtask kafka`: Apache Kafka as a test oracle (the `kafka-oracle` crate,
//! `xtask/oracle`; xtask dispatches `cargo xtask kafka` to [`run`] and
//! `cargo xtask vs-kafka` to [`vs::run`]).
//!
//! Resolves the pinned Kafka version with Maven (`xtask/kafka/pom.xml`, offline when the
//! local repository is warm), builds the Java helper (`xtask/kafka/src/main/java/oracle`),
//! then runs the scenarios, each against brokers it starts and always stops:
//!
//! * `lifecycle` — a single-node KRaft broker starts, answers and stops cleanly;
//! * `k1` — Kafka writes, we read (clean shutdown);
//! * `k3` — Kafka's `OffsetIndex`/`TimeIndex`/`TransactionIndex` against ours;
//! * `k4-epochs` — Kafka's `LeaderEpochFileCache` and its checkpoint file against ours;
//! * `k4-leader` — Kafka's `UnifiedLog` leader path (appends, reads, ListOffsets, files)
//!   against our `Log`;
//! * `k2` — we write, the broker and Kafka's tools read;
//! * `k1-crash` — kill -9 and recovery, ours and the broker's, side by side;
//! * `k1-recovery-time` — the broker's recovery time of large unflushed partitions after
//!   kill -9, against `dump-log doctor`'s prediction and our `Log::open`;
//! * `k5-cluster` — a three-broker KRaft cluster takes over a partition we wrote, replicates
//!   it to two empty followers, loses its leader to `kill -9` and serves everything from the
//!   new leader, whose files our `Log` reads back batch for batch;
//! * `k6-dump` — `DumpLogSegments` with its record decoders against `dump-log`'s, line for
//!   line, on the decoder fixtures and the field data's internal topics;
//! * `k7-cleaner` — the log cleaner's plan (cleanable offsets, dirty ratio, offset map,
//!   segment groups) of Kafka's `LogCleanerManager` and `Cleaner` against `segment::clean`;
//! * `k7-broker-compaction` — a broker's cleaner compacts a topic and our `Log` reads it;
//!   our `Log::clean` compacts a partition and the broker serves it;
//! * `k8-local-retention` — Kafka's `UnifiedLog` retention with remote storage enabled
//!   (local retention, uploaded offsets, the log start from the remote tier) against ours;
//! * `k8-tiered` — a broker tiers to Kafka's `LocalTieredStorage`: what it uploads (segments,
//!   files, metadata) and deletes locally against our tier seam on a copy of its partition.
//!
//! Prints one line per scenario and a closing `N passed, N failed`.

mod broker;
mod cluster;
mod crash;
mod k1;
mod k2;
mod k3;
mod k4;
mod k4_leader;
mod k5;
mod k6;
mod k7_broker;
mod k7_cleaner;
mod k8_local;
mod k8_tiered;
mod ours;
mod recovery_time;
pub mod vs;
mod vs_clean;
mod vs_dump;
mod vs_opens;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use broker::Jvm;

const USAGE: &str = "\
usage: cargo xtask kafka [--only NAME[,NAME..]] [--scale N] [--seed N] [--write-fixtures]
                         [--recovery-mib N] [--keep] [--sabotage NAME|all]
                         [--with-sabotages] [--jobs N]

  --only NAME,..     run only these scenarios (lifecycle, k1, k3, k4-epochs, k4-leader, k2,
                     k1-crash, k1-recovery-time, k5-cluster, k6-dump, k7-cleaner,
                     k7-broker-compaction, k8-local-retention, k8-tiered)
  --scale N          workload size factor (default 3)
  --recovery-mib N   MiB per partition k1-recovery-time writes and times the recovery of
                     (default 256; 16 under --sabotage)
  --seed N           the seed of the randomised scenarios (k3, k4-epochs, k4-leader,
                     k1-crash, k8-local-retention); default: a new one per run, printed, so that a failure
                     can be replayed
  --write-fixtures   copy the K1 broker's partitions (clean shutdown and crash) to
                     segment/tests/data/kafka-4.4.0/; k6-dump rewrites the decoder
                     fixtures and Kafka's output in segment/tests/dump/decoders/, and
                     the magic 0/1 and inconsistent-index fixtures (segment/tests/dump/
                     legacy/, inconsistent/)
  --keep             keep the scratch directory (printed) for inspection
  --jobs N           run N scenarios (and sabotage runs) at once, longest first (default 2,
                     at most the machine's cores; 1 under --write-fixtures). Each job has
                     its own scratch directory, brokers and ports
  --with-sabotages   after (and in the same pool as) the scenarios, run every sabotage of
                     the scenarios run (all, or those of --only): what CI runs
  --sabotage NAME    damage our side on purpose and run the scenario it targets, which
                     must fail (the check can fail); `all` runs every sabotage (in the
                     pool of --jobs) and prints `sabotage: N of N caught`. Names:
                       k2-index-position, k2-txnindex-drop, k2-trailing-garbage,
                       k1-timestamp, k1-crash-torn, k1-recovery-time-drop-unflushed,
                       k3-late-slot, k4-equal-offset-kept,
                       k4-leader-dup-offsets, k4-leader-stale-crc,
                       k4-leader-builder-compressed, k4-leader-lso-high,
                       k4-leader-marker-epoch, k4-leader-close-entry,
                       k4-leader-no-epoch-file, k4-leader-prealloc-untrimmed,
                       k4-leader-overlong-escapes,
                       k5-cluster-drop-record, k5-cluster-snapshot-seq,
                       k5-cluster-fetch-aborted, k5-cluster-reassign-offline,
                       k6-dump-sorted-fields, k6-dump-legacy-record-crc,
                       k6-dump-mismatch-order, k6-dump-ignored-on-stdout,
                       k6-dump-exit-zero, k6-dump-binary-line, k7-cleaner-straddle,
                       k7-cleaner-map-slots, k7-cleaner-keep-aborted,
                       k7-cleaner-early-tombstone, k7-cleaner-fetch-aborted,
                       k7-cleaner-recompressed-value, k7-cleaner-legacy-copied,
                       k7-cleaner-legacy-base-offset,
                       k7-broker-compaction-drop-key,
                       k7-broker-compaction-keep-aborted,
                       k8-local-retention-past-uploaded, k8-local-retention-transition,
                       k8-tiered-one-more, k8-tiered-no-snapshot, k8-tiered-fetch-aborted
";

/// A deliberate damage to our side of one scenario. A run with it must make that scenario
/// fail, with a failure that names what the damage breaks (one of `expect`), or the
/// scenario's check is one that cannot fail.
pub struct Sabotage {
    pub name: &'static str,
    /// The scenario it targets (a name of `SCENARIOS`).
    pub scenario: &'static str,
    /// What is damaged.
    pub what: &'static str,
    /// The failure must contain one of these (so an unrelated failure is not "caught").
    pub expect: &'static [&'static str],
}

/// Every sabotage `--sabotage all` runs.
pub const SABOTAGES: &[Sabotage] = &[
    Sabotage {
        name: "k2-index-position",
        scenario: "k2",
        what:
            "one .index entry of the files handed to the broker points at a wrong physical position",
        expect: &["Mismatches in", "index"],
    },
    Sabotage {
        name: "k2-txnindex-drop",
        scenario: "k2",
        what: "one aborted-transaction entry dropped from a .txnindex handed to the broker",
        expect: &["read_committed", "txnindex"],
    },
    Sabotage {
        name: "k2-trailing-garbage",
        scenario: "k2",
        what: "garbage bytes after the last batch of a .log handed to the broker",
        expect: &["invalid bytes", "trailing"],
    },
    Sabotage {
        name: "k1-timestamp",
        scenario: "k1",
        what: "our offset_for_timestamp answers one offset past the right one",
        expect: &["offset_for_timestamp"],
    },
    Sabotage {
        name: "k1-crash-torn",
        scenario: "k1-crash",
        what: "our recovery keeps one torn batch at the end of the crashed .log",
        expect: &["torn", ".log"],
    },
    Sabotage {
        name: "k1-recovery-time-drop-unflushed",
        scenario: "k1-recovery-time",
        what: "our side throws away what lies past the checkpointed recovery point instead of recovering it",
        expect: &["log end offset: ours"],
    },
    Sabotage {
        name: "k3-late-slot",
        scenario: "k3",
        what: "our offset index writes one entry one slot late",
        expect: &["differ", "byte"],
    },
    Sabotage {
        name: "k4-equal-offset-kept",
        scenario: "k4-epochs",
        what: "our assign of another epoch at the latest entry's start offset keeps the older epoch (Kafka replaces it)",
        expect: &["equal start offset"],
    },
    Sabotage {
        name: "k4-leader-dup-offsets",
        scenario: "k4-leader",
        what: "our answer to a duplicate (a retried batch) is shifted one offset past the original",
        expect: &["[duplicate]"],
    },
    Sabotage {
        name: "k4-leader-stale-crc",
        scenario: "k4-leader",
        what: "our compressed LogAppendTime batches keep the CRC of the producer's CreateTime batch",
        expect: &["invalid CRC"],
    },
    Sabotage {
        name: "k4-leader-builder-compressed",
        scenario: "k4-leader",
        what: "our BatchBuilder writes every compressed batch with one record too many in its count (its CRC recomputed)",
        expect: &["differs from Kafka's MemoryRecordsBuilder's"],
    },
    Sabotage {
        name: "k4-leader-lso-high",
        scenario: "k4-leader",
        what: "our last stable offset is one offset too high",
        expect: &["the last stable offset differs"],
    },
    Sabotage {
        name: "k4-leader-marker-epoch",
        scenario: "k4-leader",
        what: "our leader path leaves an end-txn marker's partition leader epoch as the coordinator sent it (-1) instead of stamping the leader's",
        expect: &["ple -1 attrs"],
    },
    Sabotage {
        name: "k4-leader-close-entry",
        scenario: "k4-leader",
        what: "the extra time-index entry our close appends to the active segment points one offset low",
        expect: &["the extra entry of our close"],
    },
    Sabotage {
        name: "k4-leader-no-epoch-file",
        scenario: "k4-leader",
        what: "a partition whose every append was refused leaves no leader-epoch-checkpoint on our side (Kafka leaves an empty one)",
        expect: &["leader-epoch-checkpoint only Kafka's"],
    },
    Sabotage {
        name: "k4-leader-prealloc-untrimmed",
        scenario: "k4-leader",
        what: "a rolled segment's .log of a case with preallocate is left at segment.bytes (zero-filled), as if our roll had not trimmed it",
        expect: &["bytes ours", "batches ours"],
    },
    Sabotage {
        name: "k4-leader-overlong-escapes",
        scenario: "k4-leader",
        what: "our refusal of a compressed batch whose record length is an over-long varint answers UNKNOWN_SERVER_ERROR, as for an uncompressed one (Kafka: INVALID_RECORD)",
        expect: &["ours `error UNKNOWN_SERVER_ERROR -`, Kafka's `error INVALID_RECORD -`"],
    },
    Sabotage {
        name: "k6-dump-sorted-fields",
        scenario: "k6-dump",
        what: "our decoded payloads pass through a serde_json::Value, which sorts their fields",
        expect: &["differ from Kafka's"],
    },
    Sabotage {
        name: "k6-dump-legacy-record-crc",
        scenario: "k6-dump",
        what: "our record lines of magic 0 and 1 messages lose their isValid and crc fields",
        expect: &["dump/legacy/"],
    },
    Sabotage {
        name: "k6-dump-mismatch-order",
        scenario: "k6-dump",
        what: "our `Mismatches in` report lists an index's mismatches in the order found, not most recent first as Kafka's",
        expect: &["Kafka's report (stderr) differs from ours"],
    },
    Sabotage {
        name: "k6-dump-ignored-on-stdout",
        scenario: "k6-dump",
        what: "our `Ignoring unknown file` lines go to standard output instead of standard error (strict mode)",
        expect: &["kafka: Ignoring unknown file"],
    },
    Sabotage {
        name: "k6-dump-exit-zero",
        scenario: "k6-dump",
        what: "our dump-log exits 0 when it cannot read a file (strict mode)",
        expect: &["an undocumented difference: ours Some(0), Kafka's Some(1)"],
    },
    Sabotage {
        name: "k6-dump-binary-line",
        scenario: "k6-dump",
        what: "the dump-log binary's 10th record line of each decoder input loses its last character (the lines it writes straight from the records)",
        expect: &["binary's record lines differ from the in-process ones"],
    },
    Sabotage {
        name: "k5-cluster-drop-record",
        scenario: "k5-cluster",
        what: "one committed record dropped from our list of the records we wrote",
        expect: &["the records we wrote"],
    },
    Sabotage {
        name: "k5-cluster-snapshot-seq",
        scenario: "k5-cluster",
        what: "our producer snapshot at the log end has one producer's last sequence one too high",
        expect: &["producer snapshot at"],
    },
    Sabotage {
        name: "k5-cluster-fetch-aborted",
        scenario: "k5-cluster",
        what: "our read_committed fetch ignores the aborted transactions it returns",
        expect: &["our read_committed fetch"],
    },
    Sabotage {
        name: "k5-cluster-reassign-offline",
        scenario: "k5-cluster",
        what: "broker 1, the only replica, left stopped: the reassignment cannot complete and must name why, early",
        expect: &["gave up after the partition has no leader"],
    },
    Sabotage {
        name: "k7-cleaner-straddle",
        scenario: "k7-cleaner",
        what: "our dirty ratio leaves the segment holding the first dirty offset out of the clean bytes",
        expect: &["ltc"],
    },
    Sabotage {
        name: "k7-cleaner-map-slots",
        scenario: "k7-cleaner",
        what: "our offset map charges a key 16 bytes (its MD5) instead of 24",
        expect: &["map"],
    },
    Sabotage {
        name: "k7-cleaner-keep-aborted",
        scenario: "k7-cleaner",
        what: "our cleaner keeps the records of aborted transactions, as if committed",
        expect: &["clean: ours", "differs"],
    },
    Sabotage {
        name: "k7-cleaner-early-tombstone",
        scenario: "k7-cleaner",
        what: "our cleaner drops a tombstone on the pass that should only give it a delete horizon",
        expect: &["clean: ours", "differs"],
    },
    Sabotage {
        name: "k7-cleaner-recompressed-value",
        scenario: "k7-cleaner",
        what: "our cleaner gives a record of a batch it recompresses another record's value",
        expect: &["holds other records"],
    },
    Sabotage {
        name: "k7-cleaner-legacy-copied",
        scenario: "k7-cleaner",
        what: "our cleaner copies a legacy (magic 0/1) batch it keeps whole as it is, where Kafka 4.4 rewrites it as v2",
        expect: &["clean: ours", "differs"],
    },
    Sabotage {
        name: "k7-cleaner-legacy-base-offset",
        scenario: "k7-cleaner",
        what: "our cleaner bases a rewritten legacy wrapper at its first record's offset, not its first kept record's",
        expect: &["clean: ours", "differs", "read: ours"],
    },
    Sabotage {
        name: "k7-cleaner-fetch-aborted",
        scenario: "k7-cleaner",
        what: "our read_committed fetches after a clean lose the first aborted transaction of their list",
        expect: &["read: ours"],
    },
    Sabotage {
        name: "k7-broker-compaction-drop-key",
        scenario: "k7-broker-compaction",
        what: "our reads of the broker's cleaned partition lose every record of one key",
        expect: &["our Log on the broker's cleaned partition"],
    },
    Sabotage {
        name: "k7-broker-compaction-keep-aborted",
        scenario: "k7-broker-compaction",
        what: "our clean keeps the records of aborted transactions, which the broker then serves",
        expect: &["read_uncommitted consumer against the model"],
    },
    Sabotage {
        name: "k8-local-retention-past-uploaded",
        scenario: "k8-local-retention",
        what: "our retention passes are told one more sealed segment is uploaded than Kafka's, so ours deletes one segment past the uploaded offset",
        expect: &["segments: ours", "local log start offset: ours"],
    },
    Sabotage {
        name: "k8-local-retention-transition",
        scenario: "k8-local-retention",
        what: "our remote segment state machine lets COPY_SEGMENT_FINISHED go back to COPY_SEGMENT_STARTED",
        expect: &["transition COPY_SEGMENT_FINISHED -> COPY_SEGMENT_STARTED"],
    },
    Sabotage {
        name: "k8-tiered-one-more",
        scenario: "k8-tiered",
        what: "our tierable segments claim one more segment (the active one) than the broker uploads",
        expect: &["tierable segments: ours"],
    },
    Sabotage {
        name: "k8-tiered-no-snapshot",
        scenario: "k8-tiered",
        what: "our uploads drop the producer snapshot at each segment's next base offset",
        expect: &["the broker uploaded a .snapshot"],
    },
    Sabotage {
        name: "k8-tiered-fetch-aborted",
        scenario: "k8-tiered",
        what: "our read_committed fetches from the remote tier lose their aborted-transaction lists",
        expect: &["read_committed from offset 0"],
    },
];

/// Shared state of a run (each job of the pool holds its own copy).
#[derive(Clone)]
pub struct Ctx {
    pub jvm: Jvm,
    pub scratch: PathBuf,
    pub scale: u32,
    pub write_fixtures: bool,
    /// The seed of the randomised scenarios (printed at the start of the run).
    pub seed: u64,
    /// The sabotage of this run, if any (its scenario alone runs).
    pub sabotage: Option<&'static Sabotage>,
    /// `--recovery-mib`: MiB per partition of `k1-recovery-time` (`None`: its default).
    pub recovery_mib: Option<u64>,
}

impl Ctx {
    /// Whether the sabotage `name` is on: the scenario then damages its side on purpose.
    pub fn sabotaged(&self, name: &str) -> bool {
        self.sabotage.is_some_and(|s| s.name == name)
    }
}

/// Workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("xtask/oracle lives two levels below the workspace root")
        .to_path_buf()
}

/// Whether this run is CI's: `CI=true` or `CI=1` (xtask's rule for every step), so that a
/// missing tool fails CI rather than skipping.
fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The target directory (CARGO_TARGET_DIR aware).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root().join(t) })
        .unwrap_or_else(|| root().join("target"))
}

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds the helper jar and the classpath file; `mvn -o` first, online if that fails.
pub(crate) fn build_oracle() -> Result<Jvm, String> {
    let kafka = target_dir().join("kafka");
    std::fs::create_dir_all(&kafka).map_err(|e| format!("{kafka:?}: {e}"))?;
    let build = kafka.join("oracle");
    let cp_file = kafka.join("classpath.txt");
    let pom = root().join("xtask/kafka/pom.xml");
    let attempt = |offline: bool| -> Result<(), String> {
        let mut c = Command::new("mvn");
        c.args(["-B", "-q"]);
        if offline {
            c.arg("-o");
        }
        c.arg("-f")
            .arg(&pom)
            .arg(format!("-Doracle.build.dir={}", build.display()))
            .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
            .args(["package", "dependency:build-classpath"]);
        let out = c.output().map_err(|e| format!("cannot start mvn: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{c:?} failed:\n{}{}",
                broker::tail(&String::from_utf8_lossy(&out.stdout), 30),
                broker::tail(&String::from_utf8_lossy(&out.stderr), 10)
            ))
        }
    };
    let t = Instant::now();
    let jar = build.join("kafka-oracle.jar");
    if !fresh(&jar, &cp_file) && attempt(true).is_err() {
        eprintln!("kafka: the local Maven repository is cold; resolving online");
        attempt(false)?;
    }
    let deps = std::fs::read_to_string(&cp_file).map_err(|e| format!("{cp_file:?}: {e}"))?;
    // Maven leaves an unchanged classpath file untouched; rewrite it so that its mtime
    // says when it was last checked (see `fresh`).
    std::fs::write(&cp_file, &deps).map_err(|e| format!("{cp_file:?}: {e}"))?;
    let classpath = format!(
        "{}:{}",
        build.join("kafka-oracle.jar").display(),
        deps.trim()
    );
    let client_log4j = kafka.join("client-log4j2.properties");
    std::fs::write(
        &client_log4j,
        "status = warn\n\
         appender.err.type = Console\n\
         appender.err.name = ERR\n\
         appender.err.target = SYSTEM_ERR\n\
         appender.err.layout.type = PatternLayout\n\
         appender.err.layout.pattern = %p %m (%c)%n\n\
         rootLogger.level = WARN\n\
         rootLogger.appenderRef.err.ref = ERR\n",
    )
    .map_err(|e| e.to_string())?;
    eprintln!(
        "kafka: helper and Kafka 4.4.0 classpath ready in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(Jvm {
        classpath,
        client_log4j,
    })
}

/// Whether the jar and the classpath file are newer than the pom and every helper source
/// (then Maven is not run at all).
fn fresh(jar: &Path, cp_file: &Path) -> bool {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(j), Some(c)) = (mtime(jar), mtime(cp_file)) else {
        return false;
    };
    let built = j.min(c);
    let src = root().join("xtask/kafka");
    let mut stack = vec![src];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            return false;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if mtime(&p).is_none_or(|m| m > built) {
                return false;
            }
        }
    }
    true
}

type Scenario = fn(&Ctx) -> Result<String, String>;

const SCENARIOS: &[(&str, Scenario)] = &[
    ("lifecycle", lifecycle),
    ("k1", k1_clean),
    ("k3", k3::run),
    ("k4-epochs", k4::run),
    ("k4-leader", k4_leader::run),
    ("k2", k2::run),
    ("k1-crash", crash::run),
    ("k1-recovery-time", recovery_time::run),
    ("k5-cluster", k5::run),
    ("k6-dump", k6::run),
    ("k7-cleaner", k7_cleaner::run),
    ("k7-broker-compaction", k7_broker::run),
    ("k8-local-retention", k8_local::run),
    ("k8-tiered", k8_tiered::run),
];

/// `cargo xtask kafka [options]`.
/// The value of option `name`, a number above zero (`--scale`, `--recovery-mib`,
/// `--jobs`), or the error to print.
fn positive<T>(value: Option<&String>, name: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + Default,
{
    value
        .and_then(|s| s.parse::<T>().ok())
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("{name} needs a positive number"))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut only: Option<Vec<String>> = None;
    let mut scale = 3u32;
    let mut seed: Option<u64> = None;
    let mut write_fixtures = false;
    let mut keep = false;
    let mut sabotage: Option<String> = None;
    let mut recovery_mib: Option<u64> = None;
    let mut with_sabotages = false;
    let mut jobs: Option<usize> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => {
                only = Some(
                    it.next()
                        .ok_or("--only needs a value")?
                        .split(',')
                        .map(str::to_string)
                        .collect(),
                )
            }
            "--scale" => scale = positive(it.next(), "--scale")?,
            "--recovery-mib" => recovery_mib = Some(positive(it.next(), "--recovery-mib")?),
            "--seed" => {
                seed = Some(
                    it.next()
                        .and_then(|s| s.parse().ok())
                        .ok_or("--seed needs a number")?,
                )
            }
            "--sabotage" => {
                sabotage = Some(it.next().ok_or("--sabotage needs a name or `all`")?.clone())
            }
            "--write-fixtures" => write_fixtures = true,
            "--with-sabotages" => with_sabotages = true,
            "--jobs" => jobs = Some(positive(it.next(), "--jobs")?),
            "--keep" => keep = true,
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if let Some(o) = &only {
        for name in o {
            if !SCENARIOS.iter().any(|(n, _)| n == name) {
                let known: Vec<&str> = SCENARIOS.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "--only: no scenario `{name}` (there are: {})",
                    known.join(", ")
                ));
            }
        }
    }
    let sabotages: Vec<&'static Sabotage> = match sabotage.as_deref() {
        None => Vec::new(),
        Some("all") => SABOTAGES.iter().collect(),
        Some(name) => vec![SABOTAGES.iter().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<&str> = SABOTAGES.iter().map(|s| s.name).collect();
            format!(
                "--sabotage: no sabotage `{name}` (there are: all, {})",
                known.join(", ")
            )
        })?],
    };
    if !sabotages.is_empty() && (only.is_some() || write_fixtures || with_sabotages) {
        return Err(
            "--sabotage runs its own scenario: it goes with neither --only, --with-sabotages nor --write-fixtures"
                .into(),
        );
    }
    if with_sabotages && write_fixtures {
        return Err("--with-sabotages goes without --write-fixtures".into());
    }
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let ci = is_ci();
    for (tool, arg) in [("java", "-version"), ("mvn", "-v")] {
        if !have(tool, arg) {
            let msg = format!("kafka: `{tool}` is not installed (needed: a JDK 17+ and Maven)");
            if ci {
                return Err(format!("{msg}; under CI=true this is a failure"));
            }
            println!("{msg}: skipped (outside CI)");
            return Ok(());
        }
    }
    broker::install_ctrlc()?;
    let jvm = build_oracle()?;
    let scratch_root = target_dir().join("kafka");
    let scratch = tempfile::Builder::new()
        .prefix("run-")
        .tempdir_in(&scratch_root)
        .map_err(|e| e.to_string())?;
    eprintln!("kafka: seed {seed} (replay with --seed {seed})");
    let ctx = Ctx {
        jvm,
        scratch: scratch.path().to_path_buf(),
        scale,
        write_fixtures,
        seed,
        sabotage: None,
        recovery_mib,
    };
    // The jobs: the scenarios (none under --sabotage), then the sabotage runs.
    let mut list: Vec<Job> = Vec::new();
    if sabotages.is_empty() {
        for (name, f) in SCENARIOS {
            if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == name)) {
                continue;
            }
            list.push(Job {
                scenario: name,
                f: *f,
                sabotage: None,
            });
        }
    }
    let sabotages: Vec<&'static Sabotage> = if with_sabotages {
        SABOTAGES
            .iter()
            .filter(|s| list.iter().any(|j| j.scenario == s.scenario))
            .collect()
    } else {
        sabotages
    };
    for s in &sabotages {
        let (_, f) = SCENARIOS
            .iter()
            .find(|(n, _)| *n == s.scenario)
            .ok_or_else(|| format!("sabotage {}: no scenario {}", s.name, s.scenario))?;
        list.push(Job {
            scenario: s.scenario,
            f: *f,
            sabotage: Some(s),
        });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = if write_fixtures {
        1
    } else {
        jobs.unwrap_or(2).min(cores).max(1)
    };
    let start = Instant::now();
    let outcomes = run_jobs(&ctx, list, workers)?;
    let (mut passed, mut failed, mut caught) = (0, 0, 0);
    let mut missed = Vec::new();
    let mut serial = 0.0;
    for o in &outcomes {
        serial += o.secs;
        match o.job.sabotage {
            None if o.ok => passed += 1,
            None => failed += 1,
            Some(_) if o.ok => caught += 1,
            Some(s) => missed.push(s.name),
        }
    }
    eprintln!(
        "kafka: {} job(s) took {:.1} s on {workers} worker(s) ({serial:.1} s one after another)",
        outcomes.len(),
        start.elapsed().as_secs_f64()
    );
    if keep {
        let p = scratch.keep();
        eprintln!("kafka: scratch kept in {}", p.display());
    }
    let scenarios_run = outcomes.iter().any(|o| o.job.sabotage.is_none());
    if scenarios_run {
        println!("{passed} passed, {failed} failed");
    }
    if !sabotages.is_empty() {
        println!("sabotage: {caught} of {} caught", sabotages.len());
    }
    let mut errors = Vec::new();
    if failed > 0 {
        errors.push(format!("{failed} Kafka scenario(s) failed"));
    }
    if !missed.is_empty() {
        errors.push(format!(
            "{} sabotage(s) not caught: {}",
            missed.len(),
            missed.join(", ")
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// One job of a run: a scenario, plain or with one sabotage on.
#[derive(Clone, Copy)]
struct Job {
    scenario: &'static str,
    f: Scenario,
    sabotage: Option<&'static Sabotage>,
}

impl Job {
    /// About how long the job takes (seconds, CI's run of 2026-12-06 on a 2-core machine).
    /// It only orders the pool, longest first, so that the workers end together; a wrong
    /// figure costs time, never a check.
    fn expected_secs(&self) -> u32 {
        let sabotaged = self.sabotage.is_some();
        match (self.scenario, sabotaged) {
            ("k1-crash", false) => 185,
            ("k1-crash", true) => 64,
            ("k6-dump", false) => 154,
            ("k6-dump", true) => 30,
            ("k1-recovery-time", false) => 117,
            ("k1-recovery-time", true) => 23,
            ("k5-cluster", _) => 35,
            ("k4-leader" | "k8-tiered", _) => 36,
            ("k2", _) => 30,
            ("k7-broker-compaction", _) => 28,
            ("k7-cleaner" | "k1", _) => 16,
            ("lifecycle" | "k8-local-retention", _) => 7,
            _ => 4,
        }
    }

    /// Whether the job runs alone: `k1-recovery-time` writes and fsyncs 512 MiB and times
    /// the broker's recovery, so that another job's brokers would wait behind its disk
    /// (their controllers' fsyncs) and its printed times would be another job's too. Its
    /// sabotage run (16 MiB) shares the machine.
    fn exclusive(&self) -> bool {
        self.scenario == "k1-recovery-time" && self.sabotage.is_none()
    }
}

/// What a job gave: `ok` is a passed scenario, or a sabotage caught.
struct Outcome {
    job: Job,
    ok: bool,
    secs: f64,
}

/// Runs the jobs on `workers` threads, each with its own copy of `ctx`: a scenario in the
/// run's scratch directory (each scenario names its own directories in it), a sabotage run
/// in `sabotage-NAME` beside them. The [exclusive](Job::exclusive) jobs run first, alone;
/// then the others, longest first. Prints each job's line as it ends.
fn run_jobs(ctx: &Ctx, mut list: Vec<Job>, workers: usize) -> Result<Vec<Outcome>, String> {
    // A stable sort: equal figures keep the order of SCENARIOS and SABOTAGES.
    list.sort_by_key(|j| (!j.exclusive(), std::cmp::Reverse(j.expected_secs())));
    // An exclusive job holds it for writing, every other job for reading. The exclusive
    // ones come first, so no worker waits for a long job to end.
    let alone = std::sync::RwLock::new(());
    let queue = std::sync::Mutex::new(list.into_iter());
    let outcomes = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                // The lock is taken with the queue held, so the job popped first runs first.
                let (job, _alone, _shared) = {
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(job) = q.next() else {
                        break;
                    };
                    if job.exclusive() {
                        (
                            job,
                            Some(alone.write().unwrap_or_else(|e| e.into_inner())),
                            None,
                        )
                    } else {
                        (
                            job,
                            None,
                            Some(alone.read().unwrap_or_else(|e| e.into_inner())),
                        )
                    }
                };
                let mut c = ctx.clone();
                if let Some(s) = job.sabotage {
                    c.scratch = ctx.scratch.join(format!("sabotage-{}", s.name));
                    if let Err(e) = std::fs::create_dir_all(&c.scratch) {
                        errors
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(format!("{}: {e}", c.scratch.display()));
                        continue;
                    }
                    c.sabotage = Some(s);
                }
                let t = Instant::now();
                let r = (job.f)(&c);
                let secs = t.elapsed().as_secs_f64();
                let ok = report(&job, &r, secs);
                outcomes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Outcome { job, ok, secs });
            });
        }
    });
    let errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Ok(outcomes.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Prints a job's line and says whether it went as it must: a scenario passes; a
/// sabotage run fails with a finding that names the damage.
fn report(job: &Job, r: &Result<String, String>, secs: f64) -> bool {
    let name = job.scenario;
    let Some(s) = job.sabotage else {
        match r {
            Ok(line) => println!("kafka {name}: ok ({secs:.1} s): {line}"),
            Err(e) => println!("kafka {name}: FAILED ({secs:.1} s): {e}"),
        }
        return r.is_ok();
    };
    // The first line is the scenario's summary: the damage must be named in a finding
    // below it, so a summary's own words never count as a catch.
    let finding = |e: &str| -> Option<String> {
        e.lines()
            .skip(1)
            .find(|l| s.expect.iter().any(|x| l.contains(x)))
            .map(|l| l.trim().chars().take(240).collect())
    };
    match r {
        Err(e) => match finding(e) {
            Some(why) => {
                println!("sabotage {}: caught by {name} ({secs:.1} s): {why}", s.name);
                true
            }
            None => {
                let first: String = e.lines().next().unwrap_or("").chars().take(300).collect();
                println!(
                    "sabotage {}: NOT caught: {name} failed ({secs:.1} s), but not for the damage ({}): {first}",
                    s.name, s.what
                );
                false
            }
        },
        Ok(line) => {
            println!(
                "sabotage {}: NOT caught: {name} passed ({secs:.1} s) with {}: {line}",
                s.name, s.what
            );
            false
        }
    }
}

/// A broker starts (KRaft, formatted storage), a topic is created and listed, and the
/// broker stops cleanly, leaving no JVM.
fn lifecycle(ctx: &Ctx) -> Result<String, String> {
    let home = ctx.scratch.join("lifecycle");
    let mut b = broker::Broker::create(&ctx.jvm, &home, &[])?;
    let t = Instant::now();
    b.start()?;
    let up = t.elapsed().as_secs_f64();
    let out = ctx.jvm.run(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--bootstrap-server".into(),
            b.bootstrap(),
            "--create".into(),
            "--topic".into(),
            "lifecycle".into(),
            "--partitions".into(),
            "2".into(),
        ],
        std::time::Duration::from_secs(60),
    );
    let listed = out.and_then(|_| {
        ctx.jvm.run(
            "org.apache.kafka.tools.TopicCommand",
            &["--bootstrap-server".into(), b.bootstrap(), "--list".into()],
            std::time::Duration::from_secs(60),
        )
    });
    let stopped = b.stop();
    let listed = listed?;
    stopped?;
    if !listed.lines().any(|l| l.trim() == "lifecycle") {
        return Err(format!("topic `lifecycle` not listed: {listed}"));
    }
    let log = b.server_log();
    if !log.contains("shut down completed") {
        return Err("the broker did not log a completed shutdown".into());
    }
    for p in ["lifecycle-0", "lifecycle-1"] {
        if !b.data().join(p).is_dir() {
            return Err(format!("no partition directory {p}"));
        }
    }
    Ok(format!(
        "KRaft broker up in {up:.1} s on {}, topic created and listed, clean shutdown",
        b.bootstrap()
    ))
}

/// K1 after a clean shutdown.
fn k1_clean(ctx: &Ctx) -> Result<String, String> {
    let home = ctx.scratch.join("k1");
    let (broker, answers) = k1::produce(ctx, &home)?;
    let log = broker.server_log();
    if !log.contains("shut down completed") {
        return Err("the K1 broker did not shut down cleanly".into());
    }
    let copy = ctx.scratch.join("k1-copy");
    ours::copy_dir(&broker.data(), &copy)?;
    let mut tally = k1::Tally::default();
    k1::check(
        &copy,
        &answers,
        &ctx.scratch.join("k1-check"),
        &mut tally,
        ctx.sabotaged("k1-timestamp"),
    )?;
    if ctx.write_fixtures {
        write_fixtures(&broker.data(), "clean", Some(&home.join("answers.json")))?;
    }
    for n in &tally.notes {
        eprintln!("kafka k1: justified: {n}");
    }
    // Coverage per topic: a partition emptied by retention, or a workload that wrote less
    // than it says, fails here rather than passing on what the other topics hold.
    let cov = k1::coverage_failures(&tally, ctx.scale);
    tally.diffs.extend(cov);
    let line = format!("{} [{}]", tally.line(), tally.coverage_line());
    if tally.diffs.is_empty() {
        Ok(line)
    } else {
        Err(format!("{line}:\n  {}", tally.diffs.join("\n  ")))
    }
}

/// Copies the workload's partition directories (not the internal topics) into
/// `segment/tests/data/kafka-4.4.0/<kind>/`, with the log directory's checkpoint files and
/// the broker's answers (`answers.json`) when there are some.
pub(crate) fn write_fixtures(
    data: &Path,
    kind: &str,
    answers: Option<&Path>,
) -> Result<(), String> {
    let dest = root().join("segment/tests/data/kafka-4.4.0").join(kind);
    if dest.exists() {
        std::fs::remove_dir_all(&dest).map_err(|e| format!("{dest:?}: {e}"))?;
    }
    for dir in ours::partition_dirs(data)? {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("__") {
            continue;
        }
        ours::copy_dir(&dir, &dest.join(&name))?;
    }
    if let Some(a) = answers {
        std::fs::copy(a, dest.join("answers.json")).map_err(|e| format!("{a:?}: {e}"))?;
    }
    // The log directory's checkpoints (recovery point, log start offset, high watermark).
    for f in [
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
    ] {
        if data.join(f).is_file() {
            std::fs::copy(data.join(f), dest.join(f)).map_err(|e| format!("{f}: {e}"))?;
        }
    }
    eprintln!("kafka: fixtures written to {}", dest.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::positive;

    #[test]
    fn positive_takes_numbers_above_zero_only() {
        let v = |s: &str| Some(s.to_string());
        assert_eq!(positive::<u32>(v("3").as_ref(), "--jobs"), Ok(3));
        assert_eq!(
            positive::<u64>(v("512").as_ref(), "--recovery-mib"),
            Ok(512)
        );
        for bad in ["0", "-1", "x", ""] {
            assert_eq!(
                positive::<u32>(v(bad).as_ref(), "--jobs"),
                Err("--jobs needs a positive number".to_string()),
                "{bad:?}"
            );
        }
        assert!(positive::<usize>(None, "--scale").is_err());
    }
}
