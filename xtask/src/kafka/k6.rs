//! K6 (`k6-dump`): `dump-log`'s record decoders against Kafka 4.4's `DumpLogSegments`.
//!
//! For every decoder fixture (`segment/tests/dump/decoders/*`: every record type of the
//! internal topics at every version, and the remote log metadata objects, serialized by
//! Kafka's classes) and, when the field
//! data is present, every `__consumer_offsets`, `__transaction_state` and
//! `__cluster_metadata` partition in it, both tools dump the `.log` files (and KRaft
//! `.checkpoint` snapshots) with the topic's
//! decoder option (and `--deep-iteration` for the metadata logs, whose KRaft control
//! records are decoded whatever the options), and the in-repository Kafka 4.4 partitions
//! with `--cluster-metadata-decoder` (Kafka's error line for every record that is not a
//! metadata record). The batch and record lines (`baseOffset:`,
//! `offset:`, `| ...`) must be equal, line for line; the scenario prints the equal and
//! differing line counts per input and option.
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

fn inputs() -> Vec<Input> {
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
    let field = std::env::var_os("KAFKA_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::root().join("../shared/kafka-data"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&field)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
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

/// `cargo xtask kafka --only k6-dump`.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    if ctx.write_fixtures {
        write_fixtures(ctx)?;
    }
    let sorted = ctx.sabotaged("k6-dump-sorted-fields");
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let (mut total_equal, mut total_diff) = (0usize, 0usize);
    for input in inputs() {
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
            .run_full(
                "org.apache.kafka.tools.DumpLogSegments",
                &args,
                Duration::from_secs(300),
            )
            .map_err(|e| format!("k6-dump: DumpLogSegments {}: {e}", input.name))?;
        let theirs: Vec<&str> = kafka.stdout.lines().filter(|l| is_record_line(l)).collect();
        let ours = ours(&input.logs, input.option, sorted);
        let ours: Vec<&str> = ours
            .iter()
            .map(String::as_str)
            .filter(|l| is_record_line(l))
            .collect();
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
    if summary.is_empty() {
        return Err("k6-dump: no input (segment/tests/dump/decoders is missing)".into());
    }
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    Ok(format!(
        "{} inputs, {total_equal} record lines equal to Kafka's DumpLogSegments, {total_diff} differ",
        summary.len()
    ))
}
