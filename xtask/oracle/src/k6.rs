//! K6 (`k6-dump`): `dump-log`'s record decoders against Kafka 4.4's `DumpLogSegments`.
//!
//! For every decoder fixture (`segment/tests/dump/decoders/*`: every record type of the
//! internal topics at every version, and the remote log metadata objects, serialized by
//! Kafka's classes) and, when the field
//! data is present (it is required under `CI=true`), every `__consumer_offsets`, `__transaction_state` and
//! `__cluster_metadata` partition in it, both tools dump the `.log` files (and KRaft
//! `.checkpoint` snapshots) with the topic's
//! decoder option (and `--deep-iteration` for the metadata logs, whose KRaft control
//! records are decoded whatever the options), and the in-repository Kafka 4.4 partitions
//! with `--cluster-metadata-decoder` (Kafka's error line for every record that is not a
//! metadata record). The batch and record lines (`baseOffset:`,
//! `offset:`, `| ...`) must be equal, line for line; the scenario prints the equal and
//! differing line counts per input and option.
//!
//! Then every in-repository partition under `segment/tests/data` (all its `.log`,
//! `.index`, `.timeindex`, `.txnindex` and `.snapshot` files), dumped by both tools with
//! the default options, `--deep-iteration`, `--print-data-log`, `--deep-iteration
//! --skip-record-metadata`, `--verify-index-only` and `--index-sanity-check`: standard
//! output is compared file by file (the block after each `Dumping` line), after our
//! escapes are undone (Kafka prints control characters raw, `dump-log` escapes them: a
//! documented deviation, counted as `escaped`). The files Kafka's tool never finished
//! because it stopped with an exception (its sanity check on an untrimmed time index) are
//! counted as `kafka stopped`; any other differing line fails the scenario. Counts are
//! printed per file type.
//!
//! The same option sets run on the partitions `oracle.DumpFixtures` writes with Kafka's
//! own classes (`segment/tests/dump/legacy`: magic 0 and 1; `segment/tests/dump/
//! inconsistent`: indexes that disagree with their `.log`). There Kafka's report on
//! standard error (its mismatch and time index findings, and the `-1 is followed by B`
//! pairs our strict mode prints too) must equal the part of ours in Kafka's words
//! (`--kafka-strict`) line for line, and the file its `--index-sanity-check` stopped on
//! (`CorruptIndexException`) must be the first our sanity check failed.
//!
//! **Strict mode, both streams and the exit status, on every input.** Every run of Kafka's
//! tool above (every decoder input, every partition with every option set) is also run
//! with our `dump-log` binary on the same arguments plus `--kafka-strict` (not with
//! `--index-sanity-check`, which refuses it), and so are the error inputs (a scratch
//! directory): a missing path, alone and after a good file; a partition directory and an
//! empty one; a non-log file name; a `.log` whose name is no offset; an empty `.log`
//! (shallow and deep); empty indexes (dumped and sanity-checked); no option; an unknown
//! option; `--max-bytes abc`; `--files` without its value; two decoders;
//! `--skip-record-metadata` alone; `--verify-index-only --index-sanity-check`. Compared,
//! as docs/kafka-behaviour.md#dump-log-strict-comparison defines it:
//!
//! * standard error: Kafka's lines before an uncaught exception, without JVM noise
//!   (`SLF4J`, log4j2's `StatusLogger` and `LEVEL message (logger)` lines; counted), must
//!   equal our lines in Kafka's words (`Ignoring unknown file`, then Kafka's report blocks)
//!   line for line (their beginning, when Kafka threw); Kafka's stack trace and usage text
//!   are not compared;
//! * the exit status, always;
//! * standard output of the error inputs (the other inputs' is compared above, in process,
//!   with the same renderer), once our escapes are undone; when Kafka threw, the files it
//!   finished.
//!
//! A difference is accepted only as one of the documented ones, each with its anchor in
//! docs/kafka-behaviour.md and counted in the summary line (`stderr: N inputs equal, M
//! documented differences (…)`, then the exit status, then the error inputs' standard
//! output): Kafka's uncaught exception (`#dump-log-kafka-exceptions`), our own findings
//! after Kafka's blocks (`#dump-log-extra-findings`), usage errors and the exit statuses
//! 1 on findings and 2 where Kafka throws (`#dump-log-exit-status`), directories as
//! partitions (`#dump-log-directories`), refused flag combinations
//! (`#dump-log-refused-flags`), escaped names (`#dump-log-operator-deviations`). Any other
//! difference fails the scenario.
//!
//! Under `--sabotage` only the inputs the sabotage damages run: the decoder inputs (without
//! the field data), the Kafka-written verdict fixtures, or the error inputs.
//!
//! `--sabotage k6-dump-ignored-on-stdout` moves our `Ignoring unknown file` lines to
//! standard output (the non-log file name input then differs on standard error);
//! `--sabotage k6-dump-exit-zero` makes our run exit 0 when it could not read a file (the
//! missing path inputs then exit 0 where Kafka exits 1, a pair no document allows).
//!
//! The record lines the `dump-log` binary prints for each decoder input (written straight
//! from the records, `Sink::text_lines`) must also equal the in-process ones (rendered from
//! events); `--sabotage k6-dump-binary-line` cuts the last character off the binary's
//! 10th record line of each decoder input.
//!
//! `--sabotage k6-dump-legacy-record-crc` drops ` isValid: .. crc: ..` from our magic 0
//! and 1 record lines (only the legacy fixtures have such lines);
//! `--sabotage k6-dump-mismatch-order` lists our mismatches in the order found, where
//! Kafka lists the most recent first (`inconsistent/index-position-0` has two).
//!
//! `--sabotage k6-dump-sorted-fields` passes our decoded payloads through a
//! `serde_json::Value` (which sorts object keys), a plausible bug that keeps the JSON
//! valid and equal as a value; the scenario must then fail with differing lines.

use std::path::{Path, PathBuf};
use std::time::Duration;

use segment::dump::{self, text, DumpOptions, Event, Sink};

use super::Ctx;

/// One comparison: a name, the `.log` files (and KRaft snapshots), the option.
struct Input {
    name: String,
    logs: Vec<PathBuf>,
    option: &'static str,
}

fn decoder_of(option: &str) -> Option<dump::Decoder> {
    Some(match option {
        "--offsets-decoder" => dump::Decoder::Offsets,
        "--transaction-log-decoder" => dump::Decoder::TransactionLog,
        "--cluster-metadata-decoder" => dump::Decoder::ClusterMetadata,
        "--share-group-state-decoder" => dump::Decoder::ShareGroupState,
        "--remote-log-metadata-decoder" => dump::Decoder::RemoteLogMetadata,
        _ => return None,
    })
}

fn logs_in(dir: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|e| e == "log" || e == "checkpoint")
                })
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    logs
}

/// `field_data`: whether the field data's partitions are inputs (not under `--sabotage`:
/// no sabotage targets them, and they are most of the scenario's time).
fn inputs(field_data: bool) -> Vec<Input> {
    let mut out = Vec::new();
    let fixtures = super::root().join("segment/tests/dump/decoders");
    for (dir, option) in [
        ("offsets-0", "--offsets-decoder"),
        ("txn-state-0", "--transaction-log-decoder"),
        ("share-state-0", "--share-group-state-decoder"),
        ("metadata-0", "--cluster-metadata-decoder"),
        ("metadata-0", "--deep-iteration"),
        ("remote-log-metadata-0", "--remote-log-metadata-decoder"),
    ] {
        out.push(Input {
            name: format!("fixture {dir}"),
            logs: logs_in(&fixtures.join(dir)),
            option,
        });
    }
    // Records that are not metadata records: every one is an error line, Kafka's
    // (its metadata parser never stops the tool, unlike the coordinator ones, which stop
    // at the first record without a key).
    let clean = super::root().join("segment/tests/data/kafka-4.4.0/clean");
    for dir in ["codecs-0", "txn-0", "appendtime-0"] {
        out.push(Input {
            name: format!("kafka-4.4.0/clean/{dir} (not metadata)"),
            logs: logs_in(&clean.join(dir)),
            option: "--cluster-metadata-decoder",
        });
    }
    let field = field_data_location();
    let mut dirs: Vec<PathBuf> = if field_data {
        std::fs::read_dir(&field)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    dirs.sort();
    for d in dirs {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let options: &[&'static str] = if name.contains("__consumer_offsets") {
            &["--offsets-decoder"]
        } else if name.contains("__transaction_state") {
            &["--transaction-log-decoder"]
        } else if name.contains("__cluster_metadata") {
            &["--cluster-metadata-decoder", "--deep-iteration"]
        } else {
            &[]
        };
        for option in options {
            out.push(Input {
                name: format!("field data {name}"),
                logs: logs_in(&d),
                option,
            });
        }
    }
    out
}

/// Where the field data is looked for: `$KAFKA_DATA_DIR`, else `../shared/kafka-data`
/// beside the workspace (as the field-data tests look for it).
fn field_data_location() -> PathBuf {
    std::env::var_os("KAFKA_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::root().join("../shared/kafka-data"))
}

/// Under `CI=true` the field data is required, as it is for the field-data tests: a
/// missing directory fails the scenario instead of leaving its inputs out unseen.
fn require_field_data_in_ci() -> Result<(), String> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let dir = field_data_location();
    if ci && !dir.is_dir() {
        return Err(format!(
            "k6-dump: CI=true requires the field data at {} (set KAFKA_DATA_DIR to use \
             another directory)",
            dir.display()
        ));
    }
    Ok(())
}

/// The lines that carry batches and records.
fn is_record_line(l: &str) -> bool {
    l.starts_with("baseOffset: ") || l.starts_with("offset: ") || l.starts_with("| ")
}

/// Our text lines for `logs` with `option` (in process, as the `dump-log` binary renders
/// them).
fn ours(logs: &[PathBuf], option: &str, sorted_fields: bool) -> Vec<String> {
    struct Lines(Vec<String>);
    impl Sink for Lines {
        fn event(&mut self, event: Event) {
            if let Some(text::Line::Out(s)) = text::event_line(&event, false) {
                self.0.push(s);
            }
        }
    }
    let opts = DumpOptions {
        deep_iteration: option == "--deep-iteration",
        decoder: decoder_of(option),
        ..DumpOptions::default()
    };
    let mut sink = Lines(Vec::new());
    dump::run(logs, &opts, &mut sink);
    let mut lines = sink.0;
    if sorted_fields {
        for l in &mut lines {
            if let Some(i) = l.find(" payload: {") {
                let (head, json) = l.split_at(i + " payload: ".len());
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
                    *l = format!("{head}{v}");
                }
            }
        }
    }
    lines
}

/// The golden files of `segment/tests/dump/dump_log_decoders.rs`: fixture directory,
/// golden name, the options Kafka's tool ran with.
const GOLDEN: &[(&str, &str, &[&str])] = &[
    ("offsets-0", "offsets-decoder", &["--offsets-decoder"]),
    (
        "offsets-0",
        "offsets-decoder-skip-metadata",
        &["--offsets-decoder", "--skip-record-metadata"],
    ),
    (
        "txn-state-0",
        "transaction-log-decoder",
        &["--transaction-log-decoder"],
    ),
    (
        "share-state-0",
        "share-group-state-decoder",
        &["--share-group-state-decoder"],
    ),
    (
        "metadata-0",
        "cluster-metadata-decoder",
        &["--cluster-metadata-decoder"],
    ),
    ("metadata-0", "deep-iteration", &["--deep-iteration"]),
    (
        "remote-log-metadata-0",
        "remote-log-metadata-decoder",
        &["--remote-log-metadata-decoder"],
    ),
];

/// `--write-fixtures`: rewrites the decoder fixtures with `oracle.DecoderFixtures` (Kafka's
/// serdes) and their golden files with Kafka's tool (the fixture path written
/// `<fixtures>`).
fn write_fixtures(ctx: &Ctx) -> Result<(), String> {
    let dir = super::root().join("segment/tests/dump/decoders");
    let long = Duration::from_secs(300);
    let out = ctx
        .jvm
        .run_full("oracle.DecoderFixtures", &[dir.display().to_string()], long)?;
    eprint!("{}", out.stdout);
    let dump = super::root().join("segment/tests/dump");
    let out = ctx.jvm.run_full(
        "oracle.DumpFixtures",
        &[
            dump.join("legacy").display().to_string(),
            dump.join("inconsistent").display().to_string(),
        ],
        long,
    )?;
    eprint!("{}", out.stdout);
    for (fixture, name, options) in GOLDEN {
        let mut args = vec![
            "--files".to_string(),
            dir.join(fixture)
                .join("00000000000000000000.log")
                .display()
                .to_string(),
        ];
        args.extend(options.iter().map(|o| o.to_string()));
        let o = ctx
            .jvm
            .run_full("org.apache.kafka.tools.DumpLogSegments", &args, long)?;
        let text = (o.stdout + &o.stderr).replace(&format!("{}/", dir.display()), "<fixtures>/");
        let path = dir.join("expected").join(format!("{fixture}.{name}.txt"));
        std::fs::write(&path, text).map_err(|e| format!("{path:?}: {e}"))?;
        eprintln!("kafka k6-dump: wrote {}", path.display());
    }
    Ok(())
}

/// The option sets the in-repository partitions are dumped with.
const PARITY_OPTIONS: &[&[&str]] = &[
    &[],
    &["--deep-iteration"],
    &["--print-data-log"],
    &["--deep-iteration", "--skip-record-metadata"],
    &["--verify-index-only"],
    &["--index-sanity-check"],
];

/// Every directory under `segment/tests/data` holding a `.log`, sorted.
fn partition_dirs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        if entries
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "log"))
        {
            out.push(dir.to_path_buf());
        }
        for e in entries.iter().filter(|p| p.is_dir()) {
            walk(e, out);
        }
    }
    let mut out = Vec::new();
    walk(&super::root().join("segment/tests/data"), &mut out);
    for extra in VERDICT_ROOTS {
        walk(&super::root().join(extra), &mut out);
    }
    out
}

/// The in-repository partitions written by `oracle.DumpFixtures` (Kafka's classes): magic 0
/// and 1 segments, and segments whose indexes disagree with their `.log`. Besides standard
/// output, Kafka's report of what it found (standard error) and its sanity-check verdicts
/// are compared on these.
const VERDICT_ROOTS: &[&str] = &[
    "segment/tests/dump/legacy",
    "segment/tests/dump/inconsistent",
];

fn is_verdict_dir(dir: &Path) -> bool {
    VERDICT_ROOTS
        .iter()
        .any(|r| dir.starts_with(super::root().join(r)))
}

const SEGMENT_EXTS: &[&str] = &["log", "index", "timeindex", "txnindex", "snapshot"];

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| SEGMENT_EXTS.contains(&e))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Our standard output for `files` with the dump flags `flags`, rendered in process as
/// the `dump-log` binary renders it, and the end-of-run report `dump-log` prints on
/// standard error (with `kafka_strict`: as `--kafka-strict` does).
fn ours_output(files: &[PathBuf], flags: &[&str], kafka_strict: bool) -> (String, String) {
    struct Out(String, bool, text::Report);
    impl Sink for Out {
        fn event(&mut self, event: Event) {
            if let Some(text::Line::Out(s)) = text::event_line(&event, self.1) {
                self.0.push_str(&s);
                self.0.push('\n');
            }
            self.2.add(&event);
        }
    }
    let has = |f: &str| flags.contains(&f);
    let opts = DumpOptions {
        deep_iteration: has("--deep-iteration"),
        print_data_log: has("--print-data-log"),
        skip_record_metadata: has("--skip-record-metadata"),
        verify_index_only: has("--verify-index-only"),
        index_sanity_check: has("--index-sanity-check"),
        kafka_strict,
        ..DumpOptions::default()
    };
    let report = if kafka_strict {
        text::Report::kafka_order()
    } else {
        text::Report::new()
    };
    let mut sink = Out(String::new(), opts.skip_record_metadata, report);
    dump::run(files, &opts, &mut sink);
    (sink.0, sink.2.render())
}

/// Kafka's end-of-run report: its standard error up to an exception, whole (the pairs
/// `-1 is followed by B` included, which our strict mode prints too:
/// docs/kafka-behaviour.md#dumplogsegments-findings).
fn kafka_report(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .take_while(|l| !l.starts_with("Exception in thread"))
        .map(str::to_string)
        .collect()
}

/// The part of our report in Kafka's words: everything before our own blocks (`Problems
/// in :`, notes). With `mismatch_order_found` (the sabotage `k6-dump-mismatch-order`) each
/// `Mismatches in` list is put back in the order the entries were found.
fn ours_kafka_report(report: &str, mismatch_order_found: bool) -> Vec<String> {
    let mut out: Vec<String> = report
        .lines()
        .take_while(|l| !l.starts_with("Problems in :") && !l.starts_with("Note: "))
        .map(str::to_string)
        .collect();
    if mismatch_order_found {
        let mut i = 0;
        while i < out.len() {
            if out[i].starts_with("Mismatches in :") {
                let start = i + 1;
                let mut end = start;
                while end < out.len() && out[end].starts_with("  ") {
                    end += 1;
                }
                out[start..end].reverse();
                i = end;
            } else {
                i += 1;
            }
        }
    }
    out
}

/// The files our report says failed the sanity check.
fn ours_sanity_failures(report: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut file = None;
    for l in report.lines() {
        if let Some(f) = l.strip_prefix("Problems in :") {
            file = Some(f.to_string());
        } else if l.starts_with("  Sanity check failed") {
            out.extend(file.clone());
        }
    }
    out
}

/// With `legacy_crc_dropped` (the sabotage `k6-dump-legacy-record-crc`), our record lines
/// of magic 0 and 1 messages lose their ` isValid: .. crc: N` (the only record lines that
/// carry one), as the inner records of a wrapper we could not decode once did.
fn drop_legacy_crc(stdout: String, legacy_crc_dropped: bool) -> String {
    if !legacy_crc_dropped {
        return stdout;
    }
    stdout
        .lines()
        .map(
            |l| match (l.starts_with("| offset: "), l.find(" isValid: ")) {
                (true, Some(i)) => {
                    let rest = &l[i + " isValid: ".len()..];
                    // `true crc: N` then the rest of the line.
                    let after_crc = rest
                        .find(" crc: ")
                        .map(|c| &rest[c + " crc: ".len()..])
                        .unwrap_or("");
                    let tail = after_crc.find(' ').map_or("", |t| &after_crc[t..]);
                    format!("{}{tail}\n", &l[..i])
                }
                _ => format!("{l}\n"),
            },
        )
        .collect()
}

/// Undoes [`text::escape`] (`\\`, `\n`, `\r`, `\t`, `\u{..}`): Kafka's raw text.
pub(crate) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') if it.peek() == Some(&'{') => {
                it.next();
                let hex: String = it.by_ref().take_while(|&c| c != '}').collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push_str("\\u{");
                        out.push_str(&hex);
                        out.push('}');
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The lines after each `Dumping <file>` line, per file, in order.
fn blocks(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for l in text.lines() {
        if let Some(f) = l.strip_prefix("Dumping ") {
            out.push((f.to_string(), Vec::new()));
        } else if let Some((_, b)) = out.last_mut() {
            b.push(l);
        }
    }
    out
}

/// Line counts of one file type: equal, equal once our escapes are undone (documented),
/// in files Kafka's tool did not finish (documented), differing.
#[derive(Default)]
struct Counts {
    equal: usize,
    escaped: usize,
    kafka_stopped: usize,
    differ: usize,
}

/// The in-repository partitions with every option set: (summary lines, failures).
fn parity_defaults(
    ctx: &Ctx,
    bin: &Path,
    strict: &mut Strict,
) -> Result<(Vec<String>, Vec<String>), String> {
    let mut per_type: std::collections::BTreeMap<String, Counts> = Default::default();
    let mut failures = Vec::new();
    let mismatch_order_found = ctx.sabotaged("k6-dump-mismatch-order");
    let legacy_crc_dropped = ctx.sabotaged("k6-dump-legacy-record-crc");
    let mut verdicts = Verdicts::default();
    for dir in partition_dirs() {
        // Under `--sabotage` (of the verdict fixtures) only those.
        if ctx.sabotage.is_some() && !is_verdict_dir(&dir) {
            continue;
        }
        let files = segment_files(&dir);
        if files.is_empty() {
            continue;
        }
        let list = files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(",");
        for flags in PARITY_OPTIONS {
            let mut args = vec!["--files".to_string(), list.clone()];
            args.extend(flags.iter().map(|f| f.to_string()));
            let kafka = ctx
                .jvm
                .run_any_status(
                    "org.apache.kafka.tools.DumpLogSegments",
                    &args,
                    Duration::from_secs(300),
                )
                .map_err(|e| format!("k6-dump: DumpLogSegments {}: {e}", dir.display()))?;
            let ours_bin = run_ours(bin, &args, OursSabotage::of(ctx))?;
            strict.compare(
                &format!("{} {flags:?}", dir.display()),
                &kafka,
                &ours_bin,
                Expect::General,
                false,
                &mut failures,
            );
            let stopped = kafka.stderr.contains("Exception in thread");
            let verdict_dir = is_verdict_dir(&dir);
            let sanity = flags.contains(&"--index-sanity-check");
            let (raw, report) = ours_output(&files, flags, !sanity);
            let raw = drop_legacy_crc(raw, legacy_crc_dropped);
            if verdict_dir {
                verdicts.compare(
                    &dir,
                    flags,
                    &kafka.stderr,
                    &report,
                    mismatch_order_found,
                    &mut failures,
                );
            }
            let plain = unescape(&raw);
            let theirs = blocks(&kafka.stdout);
            let ours_raw = blocks(&raw);
            let ours = blocks(&plain);
            for (i, (file, lines)) in ours.iter().enumerate() {
                let ty = Path::new(file)
                    .extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let c = per_type.entry(ty).or_default();
                let escaped = ours_raw
                    .get(i)
                    .map_or(0, |(_, b)| b.iter().filter(|l| unescape(l) != **l).count());
                let kafka_lines = theirs.get(i).filter(|(f, _)| f == file).map(|(_, b)| b);
                let Some(kafka_lines) = kafka_lines.filter(|_| !(stopped && i + 1 >= theirs.len()))
                else {
                    if stopped {
                        c.kafka_stopped += lines.len().max(1);
                    } else {
                        c.differ += lines.len().max(1);
                        failures.push(format!("{file} {flags:?}: not dumped by Kafka's tool"));
                    }
                    continue;
                };
                let n = kafka_lines.len().max(lines.len());
                let differing: Vec<usize> = (0..n)
                    .filter(|&j| kafka_lines.get(j) != lines.get(j))
                    .collect();
                c.equal += n - differing.len() - escaped.min(n - differing.len());
                c.escaped += escaped.min(n - differing.len());
                c.differ += differing.len();
                if let Some(&j) = differing.first() {
                    failures.push(format!(
                        "{file} {flags:?}: {} of {n} lines differ from Kafka's; first at line {}:\n  kafka: {}\n  ours:  {}",
                        differing.len(),
                        j + 1,
                        kafka_lines.get(j).unwrap_or(&"<none>"),
                        lines.get(j).unwrap_or(&"<none>")
                    ));
                }
            }
        }
    }
    let summary = per_type
        .iter()
        .map(|(ty, c)| {
            let line = format!(
                "in-repo .{ty} files, {} option sets: {} lines equal, {} equal once escapes are undone (documented), {} in files Kafka's tool stopped on (documented), {} differ",
                PARITY_OPTIONS.len(),
                c.equal,
                c.escaped,
                c.kafka_stopped,
                c.differ
            );
            eprintln!("kafka k6-dump: {line}");
            line
        })
        .chain(std::iter::once({
            let line = verdicts.line();
            eprintln!("kafka k6-dump: {line}");
            line
        }))
        .collect();
    Ok((summary, failures))
}

/// Kafka's verdicts on the fixtures of [`VERDICT_ROOTS`] against ours.
#[derive(Default)]
struct Verdicts {
    runs: usize,
    report_lines: usize,
    report_differ: usize,
    sanity_failures: usize,
}

impl Verdicts {
    /// Kafka's report (standard error) against ours in Kafka's words (`--kafka-strict`,
    /// except with `--index-sanity-check`, which refuses it), line for line; and the file
    /// Kafka's `--index-sanity-check` stopped on (its `CorruptIndexException`) against the
    /// files our sanity check failed.
    fn compare(
        &mut self,
        dir: &Path,
        flags: &[&str],
        kafka_stderr: &str,
        ours_report: &str,
        mismatch_order_found: bool,
        failures: &mut Vec<String>,
    ) {
        self.runs += 1;
        let theirs = kafka_report(kafka_stderr);
        let ours = ours_kafka_report(ours_report, mismatch_order_found);
        let n = theirs.len().max(ours.len());
        let differing: Vec<usize> = (0..n).filter(|&j| theirs.get(j) != ours.get(j)).collect();
        self.report_lines += n;
        self.report_differ += differing.len();
        if let Some(&j) = differing.first() {
            failures.push(format!(
                "{} {flags:?}: Kafka's report (stderr) differs from ours: {} of {n} lines; first at line {}:\n  kafka: {}\n  ours:  {}",
                dir.display(),
                differing.len(),
                j + 1,
                theirs.get(j).map_or("<none>", String::as_str),
                ours.get(j).map_or("<none>", String::as_str)
            ));
        }
        let exception = kafka_stderr
            .lines()
            .find(|l| l.starts_with("Exception in thread"));
        let ours_failed = ours_sanity_failures(ours_report);
        let kafka_failed: Vec<&String> = ours_failed
            .iter()
            .filter(|f| exception.is_some_and(|e| e.contains(f.as_str())))
            .collect();
        self.sanity_failures += kafka_failed.len();
        let agree = match exception {
            None => ours_failed.is_empty(),
            Some(e) => {
                e.contains("CorruptIndexException") && kafka_failed.len() == 1 && {
                    // Files after the one Kafka stopped on were never checked by Kafka.
                    let stop = kafka_failed[0];
                    ours_failed.first() == Some(stop)
                }
            }
        };
        if !agree {
            failures.push(format!(
                "{} {flags:?}: sanity verdicts differ: Kafka: {}; ours: failed on {:?}",
                dir.display(),
                exception.unwrap_or("no exception"),
                ours_failed
            ));
        }
    }

    fn line(&self) -> String {
        format!(
            "Kafka's verdicts on the Kafka-written magic 0/1 and inconsistent-index fixtures: {} runs, {} report lines, {} differ, {} sanity-check failures agreed",
            self.runs, self.report_lines, self.report_differ, self.sanity_failures
        )
    }
}

/// `cargo xtask kafka --only k6-dump`.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    if ctx.write_fixtures {
        write_fixtures(ctx)?;
    }
    require_field_data_in_ci()?;
    // Under `--sabotage` only the inputs the sabotage damages run (the whole scenario is
    // the JVM's start-up 150 times over, too long to repeat per sabotage in CI): the
    // decoder inputs, the Kafka-written verdict fixtures, or the error inputs.
    let (decoders, parity, errors) = match ctx.sabotage.map(|s| s.name) {
        None => (true, true, true),
        Some("k6-dump-sorted-fields" | "k6-dump-binary-line") => (true, false, false),
        Some("k6-dump-legacy-record-crc" | "k6-dump-mismatch-order") => (false, true, false),
        Some(_) => (false, false, true),
    };
    let sorted = ctx.sabotaged("k6-dump-sorted-fields");
    let bin = dump_log_bin()?;
    let mut strict = Strict::default();
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let (mut total_equal, mut total_diff) = (0usize, 0usize);
    for input in inputs(ctx.sabotage.is_none())
        .into_iter()
        .filter(|_| decoders)
    {
        if input.logs.is_empty() {
            continue;
        }
        let mut args = vec![
            "--files".to_string(),
            input
                .logs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(","),
        ];
        args.push(input.option.to_string());
        let kafka = ctx
            .jvm
            .run_any_status(
                "org.apache.kafka.tools.DumpLogSegments",
                &args,
                Duration::from_secs(300),
            )
            .map_err(|e| format!("k6-dump: DumpLogSegments {}: {e}", input.name))?;
        let ours_bin = run_ours(&bin, &args, OursSabotage::of(ctx))?;
        strict.compare(
            &format!("{} {}", input.name, input.option),
            &kafka,
            &ours_bin,
            Expect::General,
            false,
            &mut failures,
        );
        let theirs: Vec<&str> = kafka.stdout.lines().filter(|l| is_record_line(l)).collect();
        let ours = ours(&input.logs, input.option, sorted);
        let ours: Vec<&str> = ours
            .iter()
            .map(String::as_str)
            .filter(|l| is_record_line(l))
            .collect();
        // The binary writes its lines straight from the records (`Sink::text_lines`), the
        // in-process run renders events: both must be Kafka's.
        let binary: Vec<&str> = ours_bin
            .stdout
            .lines()
            .filter(|l| is_record_line(l))
            .collect();
        if binary != ours && !sorted {
            let i = (0..binary.len().max(ours.len()))
                .find(|&i| binary.get(i) != ours.get(i))
                .unwrap_or(0);
            failures.push(format!(
                "{} {}: the dump-log binary's record lines differ from the in-process ones; first at line {}:\n  binary:     {}\n  in process: {}",
                input.name,
                input.option,
                i + 1,
                binary.get(i).unwrap_or(&"<none>"),
                ours.get(i).unwrap_or(&"<none>")
            ));
        }
        let n = theirs.len().max(ours.len());
        let differing: Vec<usize> = (0..n).filter(|&i| theirs.get(i) != ours.get(i)).collect();
        total_equal += n - differing.len();
        total_diff += differing.len();
        let line = format!(
            "{} {}: {} lines, {} equal, {} differ",
            input.name,
            input.option,
            n,
            n - differing.len(),
            differing.len()
        );
        eprintln!("kafka k6-dump: {line}");
        summary.push(line);
        if let Some(&i) = differing.first() {
            failures.push(format!(
                "{} {}: {} of {n} record lines differ from Kafka's; first at line {}:\n  kafka: {}\n  ours:  {}",
                input.name,
                input.option,
                differing.len(),
                i + 1,
                theirs.get(i).unwrap_or(&"<none>"),
                ours.get(i).unwrap_or(&"<none>")
            ));
        }
    }
    if decoders && summary.is_empty() {
        return Err("k6-dump: no input (segment/tests/dump/decoders is missing)".into());
    }
    let (parity_summary, parity_failures) = if parity {
        parity_defaults(ctx, &bin, &mut strict)?
    } else {
        (Vec::new(), Vec::new())
    };
    failures.extend(parity_failures);
    let error_inputs = if errors {
        error_inputs(&ctx.scratch)?
    } else {
        Vec::new()
    };
    for (name, args, expect) in error_inputs {
        let kafka = ctx
            .jvm
            .run_any_status(
                "org.apache.kafka.tools.DumpLogSegments",
                &args,
                Duration::from_secs(120),
            )
            .map_err(|e| format!("k6-dump: DumpLogSegments on {name}: {e}"))?;
        let ours = run_ours(&bin, &args, OursSabotage::of(ctx))?;
        strict.compare(
            &format!("error input: {name}"),
            &kafka,
            &ours,
            expect,
            true,
            &mut failures,
        );
    }
    let strict_line = strict.line();
    eprintln!("kafka k6-dump: {strict_line}");
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    let field_inputs = summary
        .iter()
        .filter(|l| l.starts_with("field data "))
        .count();
    Ok(format!(
        "{} inputs ({field_inputs} of the field data), {total_equal} record lines equal to Kafka's DumpLogSegments, {total_diff} differ; {}; {strict_line}",
        summary.len(),
        parity_summary.join("; ")
    ))
}

/// Our `dump-log` binary (`cargo build -p segment --features cli --bin dump-log`, the
/// workspace's dev profile), built once per run.
fn dump_log_bin() -> Result<PathBuf, String> {
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "-p",
            "segment",
            "--features",
            "cli",
            "--bin",
            "dump-log",
        ])
        .current_dir(super::root())
        .status()
        .map_err(|e| format!("k6-dump: cargo build dump-log: {e}"))?;
    if !status.success() {
        return Err(format!("k6-dump: cargo build dump-log: {status}"));
    }
    Ok(super::target_dir().join("debug/dump-log"))
}

/// What one run of a tool printed and its exit status (`None`: killed by a signal).
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

/// Runs our `dump-log` binary on Kafka's arguments `args`, with `--kafka-strict` added
/// unless `--index-sanity-check` is among them (which refuses it: the sanity check
/// verifies no entry, so strictness changes nothing there).
fn run_ours(bin: &Path, args: &[String], sabotage: OursSabotage) -> Result<Run, String> {
    let mut c = std::process::Command::new(bin);
    c.args(args);
    if !args.iter().any(|a| a == "--index-sanity-check") {
        c.arg("--kafka-strict");
    }
    let o = c
        .arg("--no-progress")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("k6-dump: {}: {e}", bin.display()))?;
    let mut run = Run {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        code: o.status.code(),
    };
    sabotage.apply(&mut run);
    Ok(run)
}

/// The sabotages of the strict comparison, applied to what our binary printed.
#[derive(Clone, Copy, Default)]
struct OursSabotage {
    /// `k6-dump-ignored-on-stdout`: our `Ignoring unknown file` lines go to standard
    /// output instead of standard error.
    ignored_on_stdout: bool,
    /// `k6-dump-exit-zero`: a run that found nothing wrong in Kafka's words but cannot
    /// read a file exits 0 (as if the unreadable file held nothing).
    exit_zero_unreadable: bool,
    /// `k6-dump-binary-line`: the 10th record line on standard output loses its last
    /// character.
    binary_line: bool,
}

impl OursSabotage {
    fn of(ctx: &Ctx) -> Self {
        Self {
            ignored_on_stdout: ctx.sabotaged("k6-dump-ignored-on-stdout"),
            exit_zero_unreadable: ctx.sabotaged("k6-dump-exit-zero"),
            binary_line: ctx.sabotaged("k6-dump-binary-line"),
        }
    }

    fn apply(self, run: &mut Run) {
        if self.ignored_on_stdout {
            let (moved, kept): (Vec<&str>, Vec<&str>) = run
                .stderr
                .lines()
                .partition(|l| l.starts_with("Ignoring unknown file "));
            for l in moved {
                run.stdout.push_str(l);
                run.stdout.push('\n');
            }
            run.stderr = kept.iter().map(|l| format!("{l}\n")).collect();
        }
        if self.exit_zero_unreadable && run.stderr.contains("  Cannot read: ") {
            run.code = Some(0);
        }
        if self.binary_line {
            let mut records = 0;
            run.stdout = run
                .stdout
                .lines()
                .map(|l| {
                    let mut l = l.to_string();
                    if is_record_line(&l) {
                        records += 1;
                        if records == 10 {
                            l.pop();
                        }
                    }
                    l + "\n"
                })
                .collect();
        }
    }
}

/// Kafka's standard error, split as the strict comparison reads it
/// (docs/kafka-behaviour.md#dump-log-strict-comparison).
#[derive(Debug, Default, PartialEq)]
struct KafkaStderr {
    /// The lines compared: everything before an uncaught exception, without JVM noise.
    report: Vec<String>,
    /// The `Exception in thread "main" CLASS: MESSAGE` line of an uncaught exception (its
    /// stack trace, `Caused by:` chain and `... N more` lines follow it and are not
    /// compared: the tool stopped there).
    exception: Option<String>,
    /// The usage text Kafka prints when `--files` is missing (not compared: ours is
    /// clap's).
    usage: bool,
    /// JVM noise lines dropped: SLF4J's, log4j2's (the status logger, and the
    /// `LEVEL message (logger)` lines of the client configuration).
    noise: usize,
}

/// Whether a line of Kafka's standard error is JVM noise rather than the tool's output.
fn is_jvm_noise(l: &str) -> bool {
    l.starts_with("SLF4J") || l.contains("StatusLogger") || {
        // The client log4j2 layout `%p %m (%c)`.
        ["TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR ", "FATAL "]
            .iter()
            .any(|p| l.starts_with(p))
            && l.ends_with(')')
    }
}

fn kafka_stderr(stderr: &str) -> KafkaStderr {
    let mut k = KafkaStderr::default();
    if stderr.starts_with("This tool helps to parse a log file") {
        k.usage = true;
        return k;
    }
    for l in stderr.lines() {
        if l.starts_with("Exception in thread") {
            k.exception = Some(l.to_string());
            break;
        }
        if is_jvm_noise(l) {
            k.noise += 1;
            continue;
        }
        k.report.push(l.to_string());
    }
    k
}

/// Our standard error split in two: the lines in Kafka's words (`Ignoring unknown file`,
/// then the report's Kafka blocks), and the rest: our own report blocks (`Problems in :`,
/// `Note: `), our `dump-log: ` lines and clap's usage errors
/// (docs/kafka-behaviour.md#dump-log-extra-findings).
fn ours_stderr(stderr: &str) -> (Vec<String>, Vec<String>) {
    let is_ours = |l: &str| {
        l.starts_with("Problems in :")
            || l.starts_with("Note: ")
            || l.starts_with("dump-log: ")
            || l.starts_with("error: ")
    };
    let lines: Vec<String> = stderr.lines().map(str::to_string).collect();
    let cut = lines.iter().position(|l| is_ours(l)).unwrap_or(lines.len());
    let extra = lines[cut..].to_vec();
    let mut kafka_words = lines;
    kafka_words.truncate(cut);
    (kafka_words, extra)
}

/// The documented differences of the strict comparison, each with its anchor.
const DOC_EXCEPTION: &str =
    "Kafka's uncaught exception (kafka-behaviour.md#dump-log-kafka-exceptions)";
const DOC_EXTRA: &str = "our own findings (kafka-behaviour.md#dump-log-extra-findings)";
const DOC_USAGE: &str = "usage errors (kafka-behaviour.md#dump-log-exit-status)";
const DOC_DIRECTORY: &str = "directories as partitions (kafka-behaviour.md#dump-log-directories)";
const DOC_REFUSED: &str = "refused flag combinations (kafka-behaviour.md#dump-log-refused-flags)";
const DOC_FINDINGS_EXIT: &str = "exit 1 on findings (kafka-behaviour.md#dump-log-exit-status)";
const DOC_ERROR_EXIT: &str = "exit 2 where Kafka throws (kafka-behaviour.md#dump-log-exit-status)";
const DOC_ESCAPED: &str = "escaped names (kafka-behaviour.md#dump-log-operator-deviations)";

/// What an error input is expected to differ in, beyond what every input may.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// Nothing beyond the general rules.
    General,
    /// A directory: ours dumps it as a partition (or finds it empty), Kafka ignores it.
    Directory,
    /// A flag combination ours refuses (exit 2, clap's message) and Kafka accepts.
    Refused,
}

/// Counts of the strict comparison: per stream, inputs equal and inputs with documented
/// differences (per documented difference).
#[derive(Default)]
struct Strict {
    runs: usize,
    stderr_equal: usize,
    stderr_documented: std::collections::BTreeMap<&'static str, usize>,
    exit_equal: usize,
    exit_documented: std::collections::BTreeMap<&'static str, usize>,
    stdout_equal: usize,
    stdout_documented: std::collections::BTreeMap<&'static str, usize>,
    noise: usize,
}

impl Strict {
    /// Compares one run of both tools: standard error (always), the exit status (always),
    /// standard output when `stdout` (the error inputs: elsewhere it is compared block by
    /// block in process, above). Undocumented differences go to `failures`.
    fn compare(
        &mut self,
        name: &str,
        kafka: &super::broker::Output,
        ours: &Run,
        expect: Expect,
        stdout: bool,
        failures: &mut Vec<String>,
    ) {
        self.runs += 1;
        let k = kafka_stderr(&kafka.stderr);
        self.noise += k.noise;
        let (words, extra) = ours_stderr(&ours.stderr);
        let refused = expect == Expect::Refused
            && extra.iter().any(|l| l.starts_with("error: "))
            && ours.code == Some(2);
        let directory = expect == Expect::Directory
            && (extra.iter().any(|l| l.starts_with("Problems in :")) || ours.code == Some(0));
        // Standard error.
        let mut docs: Vec<&'static str> = Vec::new();
        let same = if k.usage || refused {
            words.is_empty()
        } else if directory {
            // Kafka's `Ignoring unknown file DIR` is ours only for a file.
            true
        } else if k.exception.is_some() {
            words.starts_with(&k.report)
        } else {
            words == k.report
        };
        if !same {
            let n = k.report.len().max(words.len());
            let j = (0..n)
                .find(|&j| k.report.get(j) != words.get(j))
                .unwrap_or(0);
            failures.push(format!(
                "{name}: strict stderr differs from Kafka's at line {}:\n  kafka: {}\n  ours:  {}",
                j + 1,
                k.report.get(j).map_or("<none>", String::as_str),
                words.get(j).map_or("<none>", String::as_str)
            ));
        } else {
            if k.usage {
                docs.push(DOC_USAGE);
            } else if refused {
                docs.push(DOC_REFUSED);
            } else if directory {
                docs.push(DOC_DIRECTORY);
            } else if k.exception.is_some() {
                docs.push(DOC_EXCEPTION);
            } else if !extra.is_empty() {
                docs.push(DOC_EXTRA);
            }
            if docs.is_empty() {
                self.stderr_equal += 1;
            }
            for d in &docs {
                *self.stderr_documented.entry(d).or_default() += 1;
            }
        }
        // The exit status.
        let findings = !k.report.is_empty() || extra.iter().any(|l| l.starts_with("Problems in :"));
        // Ok(None): equal; Ok(Some(doc)): a documented pair; Err: any other pair.
        let exit_doc = match (kafka.status, ours.code) {
            (a, b) if a == b => Ok(None),
            (Some(0), Some(1)) if findings && k.exception.is_none() => Ok(Some(DOC_FINDINGS_EXIT)),
            (Some(1), Some(2)) if k.exception.is_some() && !refused && !directory => {
                Ok(Some(DOC_ERROR_EXIT))
            }
            (Some(1), Some(2)) if k.usage || (refused && k.exception.is_some()) => {
                Ok(Some(DOC_USAGE))
            }
            (Some(0), Some(2)) if refused => Ok(Some(DOC_REFUSED)),
            (Some(0), Some(2)) if directory => Ok(Some(DOC_DIRECTORY)),
            (a, b) => Err((a, b)),
        };
        match exit_doc {
            Ok(None) => self.exit_equal += 1,
            Ok(Some(d)) => *self.exit_documented.entry(d).or_default() += 1,
            Err((a, b)) => failures.push(format!(
                "{name}: the exit status differs from Kafka's\n  an undocumented difference: ours {b:?}, Kafka's {a:?}\n  kafka stderr: {}\n  ours stderr:  {}",
                super::broker::tail(&kafka.stderr, 3).trim_end(),
                super::broker::tail(&ours.stderr, 3).trim_end()
            )),
        }
        if !stdout {
            return;
        }
        // Standard output: files Kafka finished, once our escapes are undone.
        let theirs = blocks(&kafka.stdout);
        let plain = unescape(&ours.stdout);
        let mine = blocks(&plain);
        let done = if k.exception.is_some() {
            theirs.len().saturating_sub(1)
        } else {
            theirs.len()
        };
        let equal = if k.exception.is_some() {
            mine.len() >= done && theirs[..done] == mine[..done]
        } else {
            theirs == mine && kafka.stdout.lines().count() == plain.lines().count()
        };
        if equal {
            if plain != ours.stdout {
                *self.stdout_documented.entry(DOC_ESCAPED).or_default() += 1;
            } else if k.exception.is_some() && theirs.len() != mine.len() {
                *self.stdout_documented.entry(DOC_EXCEPTION).or_default() += 1;
            } else {
                self.stdout_equal += 1;
            }
        } else if directory || refused {
            let d = if directory {
                DOC_DIRECTORY
            } else {
                DOC_REFUSED
            };
            *self.stdout_documented.entry(d).or_default() += 1;
        } else {
            failures.push(format!(
                "{name}: strict stdout differs from Kafka's:\n  kafka: {:?}\n  ours:  {:?}",
                super::broker::tail(&kafka.stdout, 4),
                super::broker::tail(&ours.stdout, 4)
            ));
        }
    }

    fn line(&self) -> String {
        let list = |m: &std::collections::BTreeMap<&'static str, usize>| {
            if m.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    m.iter()
                        .map(|(d, n)| format!("{n} {d}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        let sum = |m: &std::collections::BTreeMap<&'static str, usize>| m.values().sum::<usize>();
        format!(
            "strict mode, {} runs of both binaries: stderr: {} inputs equal, {} documented differences{}; exit status: {} equal, {} documented differences{}; stdout of the error inputs: {} equal, {} documented differences{}; {} JVM noise lines not compared",
            self.runs,
            self.stderr_equal,
            sum(&self.stderr_documented),
            list(&self.stderr_documented),
            self.exit_equal,
            sum(&self.exit_documented),
            list(&self.exit_documented),
            self.stdout_equal,
            sum(&self.stdout_documented),
            list(&self.stdout_documented),
            self.noise
        )
    }
}

/// The error inputs (in a scratch directory): both tools run on each, and their exit
/// statuses, standard error and standard output are compared.
fn error_inputs(scratch: &Path) -> Result<Vec<(String, Vec<String>, Expect)>, String> {
    let dir = scratch.join("k6-errors");
    let part = dir.join("errors-0");
    std::fs::create_dir_all(&part).map_err(|e| format!("{part:?}: {e}"))?;
    let empty_dir = dir.join("empty-dir");
    std::fs::create_dir_all(&empty_dir).map_err(|e| format!("{empty_dir:?}: {e}"))?;
    let write =
        |p: &Path, bytes: &[u8]| std::fs::write(p, bytes).map_err(|e| format!("{p:?}: {e}"));
    let empty_log = part.join("00000000000000000000.log");
    write(&empty_log, b"")?;
    write(&part.join("00000000000000000000.index"), b"")?;
    write(&part.join("00000000000000000000.timeindex"), b"")?;
    let not_offset = part.join("empty.log");
    write(&not_offset, b"")?;
    let unknown = part.join("notes.txt");
    write(&unknown, b"not a segment\n")?;
    let real = super::root().join("segment/tests/data/kafka-4.4.0/clean/codecs-0");
    let real_log = logs_in(&real)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .ok_or("k6-dump: segment/tests/data/kafka-4.4.0/clean/codecs-0 has no .log")?;
    let s = |p: &Path| p.display().to_string();
    let files = |p: &[&Path]| {
        vec![
            "--files".to_string(),
            p.iter().map(|p| s(p)).collect::<Vec<_>>().join(","),
        ]
    };
    let with = |mut v: Vec<String>, extra: &[&str]| {
        v.extend(extra.iter().map(|e| e.to_string()));
        v
    };
    let missing = dir.join("missing/00000000000000000000.log");
    Ok(vec![
        ("a missing path".into(), files(&[&missing]), Expect::General),
        (
            "a missing path after a good file".into(),
            files(&[&real_log, &missing]),
            Expect::General,
        ),
        (
            "a partition directory".into(),
            files(&[&real]),
            Expect::Directory,
        ),
        (
            "an empty directory".into(),
            files(&[&empty_dir]),
            Expect::Directory,
        ),
        (
            "a non-log file name".into(),
            files(&[&unknown]),
            Expect::General,
        ),
        (
            "a .log whose name is no offset".into(),
            files(&[&not_offset]),
            Expect::General,
        ),
        (
            "an empty .log".into(),
            files(&[&empty_log]),
            Expect::General,
        ),
        (
            "an empty .log, --deep-iteration".into(),
            with(files(&[&empty_log]), &["--deep-iteration"]),
            Expect::General,
        ),
        (
            "empty indexes".into(),
            files(&[
                &part.join("00000000000000000000.index"),
                &part.join("00000000000000000000.timeindex"),
            ]),
            Expect::General,
        ),
        (
            "empty indexes, --index-sanity-check".into(),
            with(
                files(&[
                    &part.join("00000000000000000000.index"),
                    &part.join("00000000000000000000.timeindex"),
                ]),
                &["--index-sanity-check"],
            ),
            Expect::General,
        ),
        ("no option at all".into(), vec![], Expect::General),
        (
            "an unknown option".into(),
            with(files(&[&real_log]), &["--no-such-option"]),
            Expect::Refused,
        ),
        (
            "--max-bytes not a number".into(),
            with(files(&[&real_log]), &["--max-bytes", "abc"]),
            Expect::Refused,
        ),
        (
            "--files without its value".into(),
            vec!["--files".into()],
            Expect::Refused,
        ),
        (
            "two decoders".into(),
            with(
                files(&[&real_log]),
                &["--offsets-decoder", "--transaction-log-decoder"],
            ),
            Expect::Refused,
        ),
        (
            "--skip-record-metadata alone".into(),
            with(files(&[&real_log]), &["--skip-record-metadata"]),
            Expect::Refused,
        ),
        (
            "--verify-index-only with --index-sanity-check".into(),
            with(
                files(&[&real_log]),
                &["--verify-index-only", "--index-sanity-check"],
            ),
            Expect::Refused,
        ),
    ])
}
