//! `dump-log doctor`: the pre-flight check of a log directory, on the repository's
//! fixtures (a clean partition of this library's writer, a Kafka 4.4 log directory copied
//! after `kill -9`), on the optional field data, and on directories built here to show
//! each pattern it reports. Every test asserts specific findings.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    field_data::in_repo_root().join(rel)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("doctor")
        .args(args)
        .output()
        .expect("run dump-log doctor")
}

/// `dump-log doctor --json --no-calibrate DIR`: the report and the exit code.
fn doctor(dir: &Path) -> (Value, i32) {
    let o = run(&["--json", "--no-calibrate", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let code = o.status.code().unwrap();
    assert_eq!(
        v["exit_code"], code,
        "the JSON's exit code is the process's"
    );
    (v, code)
}

fn partition<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no partition {name} in {v}"))
}

/// The findings of `p` of `kind`, as (severity, file).
fn findings(p: &Value, kind: &str) -> Vec<(String, Option<String>)> {
    p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["file"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// One finding of `severity` about `file`, as [`findings`] lists it.
fn one(severity: &str, file: &str) -> Vec<(String, Option<String>)> {
    vec![(severity.to_string(), Some(file.to_string()))]
}

fn kinds(p: &Value) -> Vec<String> {
    p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// A writable copy of `generated/orders-0` (this library's layout: clean-shutdown marker,
/// `recovery-point` 2510, six segments).
fn orders_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = copy_partition(&data("generated/orders-0"), tmp.path());
    (tmp, dst)
}

/// Copies the regular files of the partition directory `from` into `<root>/<its name>`.
fn copy_partition(from: &Path, root: &Path) -> PathBuf {
    let dst = root.join(from.file_name().unwrap());
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, dst.join(p.file_name().unwrap())).unwrap();
        }
    }
    dst
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_clean_partition_has_nothing_to_do() {
    let (v, code) = doctor(&data("generated/orders-0"));
    assert_eq!(code, 0, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(p["layout"], "library");
    assert_eq!(p["clean_shutdown"], true);
    assert_eq!(p["segments"], 6);
    assert_eq!(p["log_end_offset"], 2510);
    assert_eq!(p["recovery_point"], 2510);
    assert_eq!(p["rescan_bytes"], 0);
    assert_eq!(p["findings"].as_array().unwrap().len(), 0, "{p}");
}

#[test]
fn the_kill_9_log_dir_is_recovered_from_its_root_checkpoints() {
    let (v, code) = doctor(&data("kafka-4.4.0/crash"));
    assert_eq!(code, 1, "recovery, no data lost: {v}");
    assert_eq!(v["log_dir"], true);
    assert_eq!(v["partitions"].as_array().unwrap().len(), 3);
    for (name, rp, active) in [
        ("appendtime-0", 1350, "00000000000000001284"),
        ("codecs-0", 7200, "00000000000000007163"),
        ("txn-0", 3480, "00000000000000003429"),
    ] {
        let p = partition(&v, name);
        assert_eq!(p["layout"], "kafka");
        assert_eq!(p["clean_shutdown"], false, "{name}: no marker at the root");
        assert_eq!(
            p["recovery_point"], rp,
            "{name}: from recovery-point-offset-checkpoint"
        );
        assert_eq!(
            p["log_end_offset"], rp,
            "{name}: the kill came after a checkpoint"
        );
        let base: i64 = active.parse().unwrap();
        assert_eq!(p["recovered_segments"], serde_json::json!([base]), "{name}");
        let log = data(&format!("kafka-4.4.0/crash/{name}/{active}.log"));
        assert_eq!(p["rescan_bytes"], len(&log), "{name}");
        assert_eq!(findings(p, "recovery_needed").len(), 1, "{name}");
        // The active segment's preallocated offset index (64 KiB, mostly zero slots).
        assert_eq!(
            findings(p, "untrimmed_index")
                .iter()
                .filter(|(s, f)| s == "info" && f.as_deref() == Some(&format!("{active}.index")))
                .count(),
            1,
            "{name}: {p}"
        );
    }
    // codecs-0 and appendtime-0 never wrote a time-index entry in their active segment.
    let p = partition(&v, "codecs-0");
    assert_eq!(
        findings(p, "unwritten_time_index"),
        one("info", "00000000000000007163.timeindex")
    );
}

#[test]
fn a_missing_clean_shutdown_marker_means_recovery_from_the_recovery_point() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1);
    let p = partition(&v, "orders-0");
    assert_eq!(p["clean_shutdown"], false);
    assert_eq!(findings(p, "recovery_needed").len(), 1);
    // Recovery point 2510 is the log end: only the segment holding it (the last) is rescanned.
    assert_eq!(p["recovered_segments"], serde_json::json!([2180]));
    assert_eq!(
        p["rescan_bytes"],
        len(&dir.join("00000000000000002180.log"))
    );

    // Without a recovery point, everything is rescanned.
    std::fs::remove_file(dir.join("recovery-point")).unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"].as_array().unwrap().len(), 6);
    assert_eq!(p["rescan_bytes"], p["bytes"]);
}

#[test]
fn a_zero_filled_tail_below_the_marker_is_found_and_rescanned() {
    let (_tmp, dir) = orders_copy();
    let log = dir.join("00000000000000000443.log");
    let before = len(&log);
    append(&log, &vec![0u8; 8192]);
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1, "zeros are cut, no record is lost: {v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "zero_filled_log_tail"),
        one("warning", "00000000000000000443.log")
    );
    assert!(kinds(p).contains(&"index_disagrees".to_string()));
    assert!(findings(p, "torn_log_tail").is_empty());
    assert_eq!(p["recovered_segments"], serde_json::json!([443]));
    assert_eq!(p["rescan_bytes"], before + 8192);
}

#[test]
fn a_torn_tail_is_an_error() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    append(&dir.join("00000000000000002180.log"), &[0xab; 100]);
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "recovery truncates bytes: {v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "torn_log_tail"),
        one("error", "00000000000000002180.log")
    );
}

/// Appends the first 40 bytes of the segment's own first batch to its `.log`: a batch
/// header whose size runs past the end of the file (a torn tail). Returns the old size.
fn tear(log: &Path) -> u64 {
    let before = len(log);
    let head = std::fs::read(log).unwrap()[..40].to_vec();
    append(log, &head);
    before
}

/// Issue 39: a scan's stop reason is a sentence ("a torn tail of 40 bytes at position
/// N"), never Rust's `Debug` form (`TornTail { position: N, remaining: 40 }`), in every
/// finding, the loader's check reason included.
#[test]
fn a_torn_tail_is_described_in_a_sentence() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    let before = tear(&dir.join("00000000000000002180.log"));
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    let torn = detail(p, "torn_log_tail");
    assert!(
        torn.contains(&format!("(a torn tail of 40 bytes at position {before})")),
        "{torn}"
    );
    for f in p["findings"].as_array().unwrap() {
        let d = f["detail"].as_str().unwrap();
        assert!(
            !d.contains("TornTail") && !d.contains("{ ") && !d.contains("Some("),
            "a Debug form in: {d}"
        );
    }
    // `--deep` quotes the first problem of an index that disagrees with its `.log`.
    let idx = dir.join("00000000000000000443.index");
    let mut b = std::fs::read(&idx).unwrap();
    let pos = u32::from_be_bytes(b[28..32].try_into().unwrap());
    b[28..32].copy_from_slice(&(pos + 1).to_be_bytes());
    std::fs::write(&idx, b).unwrap();
    let o = run(&["--json", "--no-calibrate", "--deep", dir.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = partition(&v, "orders-0");
    let details: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "index_disagrees")
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    assert!(!details.is_empty(), "{p}");
    for d in details {
        assert!(
            !d.contains(" { ") && !d.contains("path: "),
            "a Debug form in: {d}"
        );
    }
}

/// Issue 39: a torn tail under a clean-shutdown marker. Kafka 4.4 trusts the marker and
/// keeps the torn bytes; this library's loader checks the last batches, recovers the
/// segment and cuts them. The finding states both, and the loader does what it says.
#[test]
fn a_torn_tail_under_a_clean_marker_says_kafka_keeps_it() {
    let (_tmp, dir) = orders_copy();
    assert!(dir.join(".kafka_cleanshutdown").exists());
    let log = dir.join("00000000000000002180.log");
    let before = tear(&log);
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(p["clean_shutdown"], true);
    let torn = detail(p, "torn_log_tail");
    assert!(
        torn.contains(
            "Kafka 4.4's broker keeps the torn bytes: it trusts the clean-shutdown marker"
        ),
        "{torn}"
    );
    assert!(
        torn.contains("this library's loader checks the segment's last batches before trusting the clean-shutdown marker, recovers the segment and truncates them"),
        "{torn}"
    );
    assert_eq!(p["recovered_segments"], serde_json::json!([2180]));
    assert_eq!(p["truncate_bytes"], 40);
    assert_prediction_matches_the_loader(&dir);
    assert_eq!(len(&log), 40 + before, "the doctor wrote nothing");
}

#[test]
fn a_full_size_never_written_time_index_is_found() {
    let (_tmp, dir) = orders_copy();
    // Kafka's preallocated size at log.index.size.max.bytes=10 MiB, rounded to 12 bytes.
    std::fs::write(
        dir.join("00000000000000000881.timeindex"),
        vec![0u8; 10485756],
    )
    .unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "unwritten_time_index"),
        one("warning", "00000000000000000881.timeindex")
    );
    assert_eq!(p["recovered_segments"], serde_json::json!([881]));
}

#[test]
fn leftover_swap_deleted_and_tmp_files_say_what_the_loader_does() {
    let (_tmp, dir) = orders_copy();
    // A swap of the first segment's own bytes: a clean that changed nothing.
    std::fs::copy(
        dir.join("00000000000000000000.log"),
        dir.join("00000000000000000000.log.swap"),
    )
    .unwrap();
    std::fs::write(dir.join("00000000000000000000.index.deleted"), b"").unwrap();
    std::fs::write(dir.join("leader-epoch-checkpoint.tmp"), b"0\n").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "swap_completed"),
        one("warning", "00000000000000000000.log.swap")
    );
    assert_eq!(
        findings(p, "deleted_file"),
        one("info", "00000000000000000000.index.deleted")
    );
    assert_eq!(
        findings(p, "temp_file"),
        one("info", "leader-epoch-checkpoint.tmp")
    );

    // A `.cleaned` file at or below the swap: the swap belongs to an unfinished split.
    std::fs::write(dir.join("00000000000000000000.log.cleaned"), b"").unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(findings(p, "swap_deleted").len(), 1);
    assert!(findings(p, "swap_completed").is_empty());
    assert_eq!(findings(p, "cleaned_file").len(), 1);
}

#[test]
fn a_swap_that_fails_validation_is_refused() {
    let (_tmp, dir) = orders_copy();
    let mut bytes = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff; // a checksum no longer matches
    std::fs::write(dir.join("00000000000000000000.log.swap"), bytes).unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(findings(p, "swap_refused").len(), 1, "{p}");
}

/// The detail of the one finding of `p` of `kind`.
fn detail(p: &Value, kind: &str) -> String {
    let f: Vec<&Value> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect();
    assert_eq!(f.len(), 1, "{kind}: {p}");
    f[0]["detail"].as_str().unwrap().to_string()
}

/// Issue 37: doctor and the loader agree on swaps (docs/kafka-behaviour.md#swap-refusal).
/// An empty swap over a segment a crash had renamed `.deleted` (the cleaner removed all
/// its records) is completed by both, and both name that segment and the offsets that
/// are gone; an empty swap of the active segment is refused by both.
#[test]
fn doctor_reports_empty_swaps_as_the_loader_does() {
    let (_tmp, dir) = orders_copy();
    for s in [".log", ".index", ".timeindex", ".txnindex"] {
        let from = dir.join(format!("00000000000000000443{s}"));
        let to = dir.join(format!("00000000000000000443{s}.deleted"));
        std::fs::rename(from, to).unwrap();
    }
    std::fs::write(dir.join("00000000000000000443.log.swap"), b"").unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    let said = detail(p, "swap_completed");
    let log = segment::Log::open(&dir, segment::LogConfig::default()).unwrap();
    let r = log
        .stats()
        .swap_replacement()
        .expect("the loader reports the swap");
    assert_eq!(r.replaced_base_offsets, vec![443]);
    assert_eq!(r.deleted_base_offsets, vec![443]);
    assert!(r.removed_offset_count > 0, "{r:?}");
    let ranges: Vec<String> = r
        .removed_offsets
        .iter()
        .map(|x| format!("{}..{}", x.start, x.end))
        .collect();
    assert!(
        said.contains("already renamed .deleted based at [443]")
            && said.contains(&format!("dropped: {}", ranges.join(", "))),
        "doctor: {said}; loader: {r:?}"
    );
    drop(log);

    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("00000000000000002180.log.swap"), b"").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let said = detail(partition(&v, "orders-0"), "swap_refused");
    assert!(said.contains("holds no batch"), "{said}");
    match segment::Log::open(&dir, segment::LogConfig::default()) {
        Err(segment::SegmentError::SwapRefused { reason, .. }) => {
            assert!(said.contains(&reason), "doctor: {said}; loader: {reason}")
        }
        Err(e) => panic!("expected SwapRefused, got {e}"),
        Ok(_) => panic!("expected SwapRefused, the open succeeded"),
    }
}

#[test]
fn a_snapshot_ahead_of_the_log_end_is_found() {
    let (_tmp, dir) = orders_copy();
    std::fs::copy(
        dir.join("00000000000000002510.snapshot"),
        dir.join("00000000000000009999.snapshot"),
    )
    .unwrap();
    std::fs::write(dir.join("00000000000000001746.snapshot"), b"garbage").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1);
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "snapshot_ahead_of_log"),
        one("warning", "00000000000000009999.snapshot")
    );
    assert_eq!(
        findings(p, "corrupt_snapshot"),
        one("warning", "00000000000000001746.snapshot")
    );
}

#[test]
fn leader_epochs_corrupt_or_ahead_of_the_log_end() {
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("leader-epoch-checkpoint"), "0\n2\n0 0\n7 5000\n").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1);
    let p = partition(&v, "orders-0");
    assert_eq!(findings(p, "leader_epoch_ahead_of_log").len(), 1);

    std::fs::write(dir.join("leader-epoch-checkpoint"), "0\n3\n0 0\n").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "Kafka fails the load: {v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "corrupt_leader_epoch_checkpoint"),
        one("error", "leader-epoch-checkpoint")
    );
}

#[test]
fn text_output_has_the_table_and_the_verdict() {
    let dir = data("kafka-4.4.0/crash");
    let o = run(&["--throughput-mbps", "100", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("recovery throughput: 100.0 MB/s + 0.0 ms per recovered segment + 0.0 ms per recovering partition (given)"),
        "{out}"
    );
    assert!(out
        .lines()
        .any(|l| l.starts_with("partition ") && l.contains("rescan bytes")));
    let row = out.lines().find(|l| l.starts_with("txn-0 ")).unwrap();
    assert!(row.split_whitespace().any(|w| w == "3480"), "{row}");
    assert!(out.contains("warning recovery_needed"), "{out}");
    assert!(out.contains("verdict: the broker will recover"), "{out}");
}

#[test]
fn calibration_measures_a_throughput() {
    let o = run(&[
        "--json",
        "--calibrate-mib",
        "4",
        data("generated/orders-0").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["throughput"]["source"], "calibrated");
    assert!(v["throughput"]["bytes"].as_u64().unwrap() >= 4 << 20);
    assert!(v["throughput"]["mb_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["throughput"]["segment_overhead_s"].as_f64().unwrap() >= 0.0);
    assert!(v["throughput"]["partition_overhead_s"].as_f64().unwrap() >= 0.0);
}

#[test]
fn the_prediction_is_bytes_over_throughput_plus_a_cost_per_segment() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    std::fs::remove_file(dir.join("recovery-point")).unwrap();
    let o = run(&[
        "--json",
        "--throughput-mbps",
        "1",
        "--segment-overhead-ms",
        "10",
        "--partition-overhead-ms",
        "30",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = partition(&v, "orders-0");
    let bytes = p["rescan_bytes"].as_f64().unwrap();
    let want = bytes / 1e6 + 6.0 * 0.010 + 0.030;
    let got = p["predicted_seconds"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
}

#[test]
fn measure_compares_the_prediction_with_a_real_load() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &v["measured"]["orders-0"];
    assert_eq!(m["segments_recovered"], 1, "{v}");
    assert_eq!(m["bytes_truncated"], 0);
    assert_eq!(m["log_end_offset"], 2510);
    assert!(
        !dir.join(".kafka_cleanshutdown").exists(),
        "the directory is untouched"
    );
    assert!(!dir.join(".lock").exists(), "no lock taken");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["/nonexistent/dir"]).status.code(), Some(2));
    let o = run(&[
        "--throughput-mbps",
        "-1",
        data("generated/orders-0").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    // Calibration measures the overhead: giving it too would be ignored.
    let o = run(&[
        "--segment-overhead-ms",
        "3",
        data("generated/orders-0").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// One JSON object on stdout with `"type": "error"`, exit code 2 (in the object and the
/// process's), and an error message containing `needle`.
fn assert_json_error(o: &Output, needle: &str) {
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "one object: {text}");
    let v: Value =
        serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(o.status.code(), Some(2), "{v}");
    assert_eq!(v["type"], "error", "{v}");
    assert_eq!(v["exit_code"], 2, "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains(needle), "{needle:?} not in {msg:?}");
    assert!(!o.stderr.is_empty(), "the error is on stderr too");
}

/// Issue 39: asked for JSON, a bad invocation still prints one JSON object, for doctor
/// and for the dump, so that a script parsing the output does not break on it.
#[test]
fn json_is_an_object_even_on_a_usage_or_path_error() {
    assert_json_error(&run(&["--json", "/nonexistent/dir"]), "/nonexistent/dir");
    let file = data("generated/orders-0/00000000000000000000.log");
    assert_json_error(&run(&["--json", file.to_str().unwrap()]), "not a directory");
    let dir = data("generated/orders-0");
    let dir = dir.to_str().unwrap();
    assert_json_error(&run(&["--json", "--no-such-flag", dir]), "--no-such-flag");
    assert_json_error(&run(&["--json"]), "required");
    assert_json_error(
        &run(&["--json", "--throughput-mbps", "0", dir]),
        "--throughput-mbps",
    );
    assert_json_error(
        &run(&["--json", "--segment-overhead-ms", "3", dir]),
        "--segment-overhead-ms",
    );
    // Without --json, nothing on stdout.
    assert!(run(&["/nonexistent/dir"]).stdout.is_empty());
    // --help still prints help and exits 0.
    let o = run(&["--json", "--help"]);
    assert_eq!(o.status.code(), Some(0));

    let dump = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dump-log"))
            .args(args)
            .output()
            .unwrap()
    };
    assert_json_error(&dump(&["--json"]), "no input files");
    assert_json_error(&dump(&["--json", "--no-such-flag", dir]), "--no-such-flag");
    assert_json_error(
        &dump(&["--json", "--skip-record-metadata", "--deep-iteration", dir]),
        "--skip-record-metadata",
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    assert_json_error(
        &dump(&[
            "--json",
            "--rebuild-indexes-to",
            out,
            "/nonexistent/00000000000000000000.log",
        ]),
        "/nonexistent/",
    );
}

#[test]
fn field_data() {
    let Some(root) = field_data::field_data_dir("dump-log doctor, field data") else {
        return;
    };
    let (v, code) = doctor(&root);
    // The copies hold no clean-shutdown marker and no root checkpoints: every partition is
    // recovered from offset 0, and none loses data. Some were renamed when they were
    // collected (`...-broker0-follower`): a broker would refuse those names.
    assert_eq!(code, 2, "{v}");
    let parts = v["partitions"].as_array().unwrap();
    assert!(parts.len() >= 10, "{}", parts.len());
    for p in parts {
        let name = p["name"].as_str().unwrap();
        let renamed = name
            .rsplit_once('-')
            .is_none_or(|(_, n)| n.parse::<u32>().is_err());
        assert_eq!(
            findings(p, "not_a_partition_name"),
            if renamed {
                vec![("error".to_string(), None)]
            } else {
                vec![]
            },
            "{name}"
        );
        assert_eq!(findings(p, "recovery_needed").len(), 1, "{p}");
        assert_eq!(p["rescan_bytes"], p["bytes"], "{}", p["name"]);
        assert!(
            findings(p, "torn_log_tail").is_empty(),
            "{}: {p}",
            p["name"]
        );
    }
    let p = partition(&v, "rjmfernandes-__cluster_metadata-0");
    assert_eq!(p["log_end_offset"], 17027);
    assert_eq!(p["segments"], 1);
}

/// A Kafka log dir holding a copy of the kill -9 `txn-0` (log end 3480) under root
/// checkpoints written here.
fn kafka_root(recovery: &str, log_start: &str, replication: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    copy_partition(&data("kafka-4.4.0/crash/txn-0"), tmp.path());
    std::fs::write(
        tmp.path().join("recovery-point-offset-checkpoint"),
        recovery,
    )
    .unwrap();
    std::fs::write(tmp.path().join("log-start-offset-checkpoint"), log_start).unwrap();
    std::fs::write(
        tmp.path().join("replication-offset-checkpoint"),
        replication,
    )
    .unwrap();
    let root = tmp.path().to_path_buf();
    (tmp, root)
}

#[test]
fn root_checkpoints_above_the_log_end_or_malformed() {
    let (_tmp, root) = kafka_root(
        "0\n1\ntxn 0 0\n",
        "0\n1\ntxn 0 9000\n",
        "0\n1\ntxn 0 4000\n",
    );
    let (v, code) = doctor(&root);
    assert_eq!(
        code, 2,
        "a log start above the log end deletes every segment: {v}"
    );
    let p = partition(&v, "txn-0");
    assert_eq!(p["recovery_point"], 0);
    assert_eq!(
        p["recovered_segments"].as_array().unwrap().len(),
        8,
        "from 0"
    );
    assert_eq!(
        findings(p, "log_start_ahead_of_log"),
        vec![("error".into(), None)]
    );
    assert_eq!(
        findings(p, "high_watermark_ahead_of_log"),
        vec![("error".into(), None)]
    );

    // A malformed root checkpoint: every partition is recovered from 0.
    let (_tmp, root) = kafka_root("0\n2\ntxn 0 3480\n", "0\n0\n", "0\n0\n");
    let (v, code) = doctor(&root);
    assert_eq!(code, 1);
    let f = v["findings"].as_array().unwrap();
    assert!(
        f.iter().any(|f| f["kind"] == "malformed_checkpoint"
            && f["file"] == "recovery-point-offset-checkpoint"),
        "{v}"
    );
    let p = partition(&v, "txn-0");
    assert_eq!(p["recovery_point"], Value::Null);
    assert_eq!(p["rescan_bytes"], p["bytes"]);
}

#[test]
fn deep_finds_what_the_loaders_end_checks_cannot() {
    let (_tmp, dir) = orders_copy();
    // A middle offset-index entry one byte off: the first and last entries still agree.
    let idx = dir.join("00000000000000000443.index");
    let mut b = std::fs::read(&idx).unwrap();
    assert_eq!(b.len(), 56, "7 entries");
    let pos = u32::from_be_bytes(b[28..32].try_into().unwrap());
    b[28..32].copy_from_slice(&(pos + 1).to_be_bytes());
    std::fs::write(&idx, b).unwrap();
    // A byte flipped in the first third of another segment: a checksum fails there.
    let log = dir.join("00000000000000000881.log");
    let mut b = std::fs::read(&log).unwrap();
    let at = b.len() / 3;
    b[at] ^= 0x55;
    std::fs::write(&log, b).unwrap();

    let (v, code) = doctor(&dir);
    assert_eq!(code, 0, "the loader's cheap checks pass both: {v}");

    let o = run(&["--json", "--no-calibrate", "--deep", dir.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(2), "{v}");
    let p = partition(&v, "orders-0");
    // (The time index's verification finds its batches through the offset index, so it
    // may disagree too.)
    let bad = findings(p, "index_disagrees");
    assert!(
        bad.contains(&("warning".into(), Some("00000000000000000443.index".into()))),
        "{bad:?}"
    );
    assert!(bad.iter().all(|(_, f)| f
        .as_deref()
        .is_some_and(|f| f.starts_with("00000000000000000443."))));
    assert_eq!(
        findings(p, "torn_log_tail"),
        one("error", "00000000000000000881.log")
    );
    let detail = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "torn_log_tail")
        .unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("the loader trusts this segment"),
        "{detail}"
    );
}

/// Names, lengths and modification times of every file under `root`.
fn listing(root: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                out.push((p, m.len(), m.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_doctor_writes_nothing_and_takes_no_lock() {
    let (_tmp, root) = kafka_root("0\n1\ntxn 0 0\n", "0\n0\n", "0\n0\n");
    let (_tmp2, part) = orders_copy();
    std::fs::remove_file(part.join(".kafka_cleanshutdown")).unwrap();
    for dir in [&root, &part] {
        let before = listing(dir);
        let o = run(&["--no-calibrate", "--deep", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(listing(dir), before, "{}", dir.display());
    }
}

/// The segments the doctor says the loader rescans are the ones `Log::open` of a copy
/// recovers, and it ends at the log end the doctor read.
fn assert_prediction_matches_the_loader(dir: &Path) {
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for p in v["partitions"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let m = &v["measured"][name];
        assert_eq!(
            m["segments_recovered"].as_u64(),
            Some(p["recovered_segments"].as_array().unwrap().len() as u64),
            "{name}: {m} vs {p}"
        );
        assert_eq!(m["bytes_truncated"], p["truncate_bytes"], "{name}");
        if p["unread_recovered_segments"] == serde_json::json!([]) {
            assert_eq!(m["log_end_offset"], p["recovered_log_end_offset"], "{name}");
        } else {
            // Rescanned segments the doctor did not read: the log end is unknown, and so
            // is whether data is lost; never "none".
            assert_eq!(p["recovered_log_end_offset"], Value::Null, "{name}");
            assert_ne!(p["data_loss"], "none", "{name}");
        }
    }
}

#[test]
fn predicted_segments_are_the_ones_the_loader_recovers() {
    assert_prediction_matches_the_loader(&data("kafka-4.4.0/crash"));
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("00000000000000000881.timeindex"), vec![0u8; 120]).unwrap();
    append(&dir.join("00000000000000000443.log"), &[0u8; 4096]);
    assert_prediction_matches_the_loader(&dir);
    if let Some(root) = field_data::field_data_dir("dump-log doctor --measure, field data") {
        assert_prediction_matches_the_loader(&root);
    }
}

#[test]
fn a_segment_that_is_not_a_regular_file_is_an_error() {
    let (_tmp, dir) = orders_copy();
    // A directory, a dangling symbolic link and (on Unix) a FIFO where segment files go.
    std::fs::create_dir(dir.join("00000000000000009000.log")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("missing"), dir.join("00000000000000009001.log")).unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    let mut expected = one("error", "00000000000000009000.log");
    #[cfg(unix)]
    expected.extend(one("error", "00000000000000009001.log"));
    let mut got = findings(p, "not_a_regular_file");
    got.sort();
    assert_eq!(got, expected, "{v}");
}

#[test]
fn a_segment_or_snapshot_name_without_an_offset_is_an_error() {
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("abc.log"), b"x").unwrap();
    std::fs::write(dir.join("99999999999999999999.snapshot"), b"").unwrap();
    // Not a segment name at all: ignored, as the loader ignores it.
    std::fs::write(dir.join("notes.txt"), b"x").unwrap();
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    let mut got = findings(p, "bad_file_name");
    got.sort();
    let mut expected = one("error", "99999999999999999999.snapshot");
    expected.extend(one("error", "abc.log"));
    assert_eq!(got, expected, "{v}");
}

/// Issue 39: a corrupt batch inside a segment that recovery rescans, behind intact
/// headers, passes the loader's end checks; only recovery's CRC check (or `--deep`) finds
/// it. Without `--deep` the doctor must not say "no acknowledged data lost": it says
/// unknown. With `--deep` it says lost, and the bytes it predicts cut are the loader's.
#[test]
fn a_corrupt_batch_inside_a_rescanned_segment_is_unknown_without_deep() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    let log = dir.join("00000000000000002180.log");
    let mut b = std::fs::read(&log).unwrap();
    b[70] ^= 0xff; // inside the first batch's records: its header stays readable
    std::fs::write(&log, &b).unwrap();

    let (v, code) = doctor(&dir);
    assert_eq!(code, 1, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([2180]));
    assert_eq!(p["unread_recovered_segments"], serde_json::json!([2180]));
    assert_eq!(p["data_loss"], "unknown", "{p}");
    assert_eq!(p["recovered_log_end_offset"], Value::Null);
    let text = run(&["--no-calibrate", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("whether acknowledged data is lost is unknown without --deep"),
        "{text}"
    );
    assert!(!text.contains("no acknowledged data lost"), "{text}");

    let o = run(&[
        "--json",
        "--no-calibrate",
        "--deep",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(2), "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(p["data_loss"], "lost", "{p}");
    assert_eq!(p["unread_recovered_segments"], serde_json::json!([]));
    assert_eq!(
        p["truncate_bytes"],
        b.len() as u64,
        "cut from the corrupt first batch on"
    );
    assert_eq!(p["recovered_log_end_offset"], 2180);
    let m = &v["measured"]["orders-0"];
    assert_eq!(m["bytes_truncated"], p["truncate_bytes"], "{m}");
    assert_eq!(m["log_end_offset"], p["recovered_log_end_offset"], "{m}");
}

/// Issue 39: the loader compares the log start offset with the log end that recovery
/// leaves, after it deleted the segments after a truncated one: a log start below the
/// log end read from the files can be above it. The doctor says so (an error: every
/// segment is deleted), and predicts the log end and the deletions the loader makes.
#[test]
fn a_log_start_above_the_log_end_recovery_leaves_is_an_error() {
    let (_tmp, dir) = orders_copy();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    std::fs::write(dir.join("recovery-point"), "0\n443\n").unwrap();
    std::fs::write(dir.join("log-start-offset"), "0\n1000\n").unwrap();
    tear(&dir.join("00000000000000000443.log"));
    let (v, code) = doctor(&dir);
    assert_eq!(code, 2, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(p["log_end_offset"], 2510, "the log end read from the files");
    let d = detail(p, "log_start_ahead_of_log");
    assert!(
        d.contains("above the log end offset 881 recovery leaves (it cuts the log end from 2510 down to 881"),
        "{d}"
    );
    assert_eq!(
        p["deleted_segments"],
        serde_json::json!([0, 443, 881, 1315, 1746, 2180])
    );
    assert_eq!(p["recovered_log_end_offset"], 1000);
    assert_eq!(p["data_loss"], "lost");
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["measured"]["orders-0"]["log_end_offset"], 1000, "{v}");
}

/// Issue 39: a legacy segment holding offsets more than `i32::MAX` above its base is
/// split by recovery. The doctor says so, and where Kafka 4.4's loader differs; nothing
/// is lost and the log end is the loader's.
#[test]
fn an_offset_overflow_split_is_found_and_kafkas_differs() {
    use segment::record::LegacyMessage;
    const HIGH: i64 = 3_000_000_000;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("legacy-0");
    std::fs::create_dir(&dir).unwrap();
    let mut bytes = Vec::new();
    for o in [0, 1, HIGH, HIGH + 1] {
        bytes.extend(LegacyMessage::v1(o, 1_000, b"v").to_vec().unwrap());
    }
    std::fs::write(dir.join("00000000000000000000.log"), bytes).unwrap();
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{v}");
    let p = partition(&v, "legacy-0");
    assert_eq!(
        findings(p, "offset_overflow"),
        one("warning", "00000000000000000000.log")
    );
    let d = detail(p, "offset_overflow");
    assert!(d.contains(&format!("holds offset {HIGH}")), "{d}");
    assert!(
        d.contains("Kafka 4.4 splits only a segment its recovery meets"),
        "{d}"
    );
    assert_eq!(p["data_loss"], "none");
    assert_eq!(p["recovered_log_end_offset"], HIGH + 2);
    // The loader rescans the split segment, then each piece.
    assert_eq!(p["recovered_segments"], serde_json::json!([0]), "{p}");
    assert_eq!(p["split_pieces"], serde_json::json!([0, HIGH]), "{p}");
    let m = &v["measured"]["legacy-0"];
    assert_eq!(m["log_end_offset"], HIGH + 2, "{m}");
    assert_eq!(m["bytes_truncated"], 0, "{m}");
    // The measured open rescans what the doctor predicts: the segment, then its pieces.
    assert_eq!(m["segments_recovered"], 3, "{m}");
}

/// A crash in the middle of a split's `.cleaned` → `.swap` renames that the disk kept out
/// of order: the lowest piece `.swap`, the high piece still `.cleaned`, the split segment
/// whole (docs/kafka-behaviour.md#split-partial-swap). The doctor predicts what the loader
/// does: the `.swap` piece deleted (Kafka 4.4 would complete it and lose the high
/// piece's offsets), the segment split again, nothing lost; the measured open agrees.
#[test]
fn a_split_with_a_low_swap_and_high_cleaned_pieces_is_rolled_back() {
    use segment::record::LegacyMessage;
    const HIGH: i64 = 3_000_000_000;
    let msgs = |offsets: &[i64]| -> Vec<u8> {
        offsets
            .iter()
            .flat_map(|&o| LegacyMessage::v1(o, 1_000, b"v").to_vec().unwrap())
            .collect()
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("legacy-0");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("00000000000000000000.log"),
        msgs(&[0, 1, HIGH, HIGH + 1]),
    )
    .unwrap();
    std::fs::write(dir.join("00000000000000000000.log.swap"), msgs(&[0, 1])).unwrap();
    std::fs::write(
        dir.join("00000000003000000000.log.cleaned"),
        msgs(&[HIGH, HIGH + 1]),
    )
    .unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "legacy-0");
    assert_eq!(
        findings(p, "swap_deleted"),
        one("warning", "00000000000000000000.log.swap"),
        "{p}"
    );
    let d = detail(p, "swap_deleted");
    assert!(d.contains("Kafka 4.4 completes it"), "{d}");
    assert!(findings(p, "swap_completed").is_empty(), "{p}");
    assert!(findings(p, "swap_refused").is_empty(), "{p}");
    assert_eq!(
        findings(p, "offset_overflow"),
        one("warning", "00000000000000000000.log")
    );
    assert_eq!(p["data_loss"], "none");
    assert_eq!(p["recovered_log_end_offset"], HIGH + 2);
    assert_eq!(p["split_pieces"], serde_json::json!([0, HIGH]), "{p}");
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &v["measured"]["legacy-0"];
    assert_eq!(m["log_end_offset"], HIGH + 2, "{m}");
    assert_eq!(m["bytes_truncated"], 0, "{m}");
    // The measured open rescans what the doctor predicts: the segment, then its pieces.
    assert_eq!(m["segments_recovered"], 3, "{m}");
}

/// A crash between a swap's renames (`cargo xtask crash`'s cleaning workloads): an index
/// `.swap` beside the live `.log`, no `.log.swap`. The loader renames it into place and
/// rebuilds the segment's indexes (the renamed index may be a cleaned segment's whose
/// `.log` rename the crash lost); the doctor predicts that rebuild.
#[test]
fn an_index_swap_left_by_a_crash_is_renamed_and_rebuilt() {
    let (_tmp, dir) = orders_copy();
    std::fs::rename(
        dir.join("00000000000000000000.index"),
        dir.join("00000000000000000000.index.swap"),
    )
    .unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([0]), "{p}");
    let log = segment::Log::open(&dir, segment::LogConfig::default()).unwrap();
    let stats = log.stats();
    assert_eq!(
        stats
            .segments_recovered
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    log.close().unwrap();
}

/// A swap the loader completes without its `.index.swap` (a crash before that rename was
/// durable): the segment it leaves has no offset index, so it is rebuilt; the doctor
/// checks the swap's own files, and predicts that.
#[test]
fn a_completed_swap_without_its_index_is_predicted_recovered() {
    let (_tmp, dir) = orders_copy();
    for ext in ["log", "timeindex"] {
        std::fs::copy(
            dir.join(format!("00000000000000000000.{ext}")),
            dir.join(format!("00000000000000000000.{ext}.swap")),
        )
        .unwrap();
    }
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([0]), "{p}");
    let log = segment::Log::open(&dir, segment::LogConfig::default()).unwrap();
    let stats = log.stats();
    assert_eq!(
        stats
            .segments_recovered
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    log.close().unwrap();
}

/// A compacted partition: the doctor reports its `cleaner-offset-checkpoint` entry against
/// the log as the cleaner plans it (`docs/kafka-behaviour.md#cleaner-cleanable-offsets`):
/// nothing dirty right after a clean, the new segments' bytes dirty after more appends (the
/// same bytes and ratio as the live log's own plan), and a checkpoint past the log end
/// reset to the log start.
#[cfg(feature = "cleaner")]
#[test]
fn a_compacted_partition_reports_its_cleaner_checkpoint_and_dirty_ratio() {
    use segment::clean::{
        write_cleaner_checkpoint, CleanerConfig, CompactionConfig, LogSummary, LogToClean,
        TopicPartition,
    };
    use segment::record::BatchBuilder;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("compacted-0");
    let config = segment::LogConfig {
        compact: true,
        ..segment::LogConfig::default()
    };
    let fill = |log: &segment::Log, segments: usize| {
        for s in 0..segments {
            for i in 0..20 {
                let key = format!("k{}", i % 5);
                let b = BatchBuilder::new(log.log_end_offset())
                    .record(
                        1_700_000_000_000,
                        Some(key.as_bytes()),
                        Some(format!("{s}:{i}").as_bytes()),
                    )
                    .build()
                    .unwrap();
                log.append(&b).unwrap();
            }
            log.roll(None).unwrap();
        }
    };
    let log = segment::Log::open(&dir, config.clone()).unwrap();
    fill(&log, 3);
    let stats = log
        .clean(
            &CleanerConfig::default(),
            &CompactionConfig::default(),
            1_700_000_000_000,
        )
        .unwrap();
    log.close().unwrap();
    let (v, _) = doctor(&dir);
    let c = &v["partitions"][0]["cleaner"];
    assert_eq!(c["checkpoint"], stats.end_offset, "{v}");
    assert_eq!(c["first_dirty_offset"], stats.end_offset);
    assert_eq!(c["cleanable_bytes"], 0);
    assert_eq!(c["due_at_default_ratio"], false);
    assert!(kinds(&v["partitions"][0]).contains(&"cleaner_state".to_string()));

    // More appends: the new segments are dirty, as the live log's plan says.
    let log = segment::Log::open(&dir, config.clone()).unwrap();
    fill(&log, 4);
    let (_, ltc) = LogToClean::plan(
        &LogSummary::of(&log).unwrap(),
        Some(stats.end_offset),
        1_700_000_000_000,
        &CompactionConfig::default(),
    );
    log.close().unwrap();
    let (v, _) = doctor(&dir);
    let c = &v["partitions"][0]["cleaner"];
    assert_eq!(c["cleanable_bytes"], ltc.cleanable_bytes, "{v}");
    assert_eq!(c["clean_bytes"], ltc.clean_bytes);
    assert!((c["dirty_ratio"].as_f64().unwrap() - ltc.cleanable_ratio).abs() < 1e-12);
    assert_eq!(c["due_at_default_ratio"], ltc.is_cleanable(0.5));
    assert_eq!(c["checkpoint_reset"], false);

    // A checkpoint past the log end: reset to the log start.
    let mut cps = std::collections::BTreeMap::new();
    cps.insert(TopicPartition::new("compacted", 0), 1_000_000);
    write_cleaner_checkpoint(&segment::fs::RealFs, root.path(), &cps).unwrap();
    let (v, _) = doctor(&dir);
    let c = &v["partitions"][0]["cleaner"];
    assert_eq!(c["checkpoint"], 1_000_000, "{v}");
    assert_eq!(c["checkpoint_reset"], true);
    assert_eq!(c["first_dirty_offset"], 0);
}

/// Cuts segment 0 of an `orders_copy` at the batch its third offset index entry points at
/// (12653 bytes: a small segment, under `DEFER_INDEX_CHECK_MAX_LOG_BYTES`, that is not
/// the last one), leaving its index files as they were: their later entries point past
/// the end of the `.log`. Returns the `.log`'s path.
fn small_first_segment_with_a_lying_index(dir: &Path) -> PathBuf {
    let log = dir.join("00000000000000000000.log");
    let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    f.set_len(12653).unwrap();
    assert!(len(&log) <= segment::loader_plan::DEFER_INDEX_CHECK_MAX_LOG_BYTES);
    log
}

/// docs/kafka-behaviour.md#deferred-index-check: the open checks a small segment's `.log`
/// alone and its index files at their first use, so a lying index there is rebuilt at
/// that use, not at the open: the doctor says so, predicts no rescan for it, and agrees
/// with `Log::open`.
#[test]
fn a_small_segments_lying_index_is_rebuilt_at_its_first_use() {
    let (_tmp, dir) = orders_copy();
    small_first_segment_with_a_lying_index(&dir);
    let (v, code) = doctor(&dir);
    assert_eq!(code, 1, "{v}");
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "index_disagrees"),
        one("warning", "00000000000000000000.log")
    );
    let d = detail(p, "index_disagrees");
    assert!(
        d.contains("this library rebuilds the segment's indexes from its .log at its first index lookup (deferred index check"),
        "{d}"
    );
    assert!(!d.contains("loader rebuilds"), "{d}");
    assert_eq!(p["recovered_segments"], serde_json::json!([]), "{p}");
    assert_eq!(p["rescan_bytes"], 0, "{p}");
    assert_eq!(p["data_loss"], "none", "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// The same with the index's stale entries zeroed (an untrimmed index, KAFKA-10207).
#[test]
fn a_small_segments_zero_filled_index_is_rebuilt_at_its_first_use() {
    let (_tmp, dir) = orders_copy();
    small_first_segment_with_a_lying_index(&dir);
    let index = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes[24..].fill(0);
    std::fs::write(&index, bytes).unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(
        findings(p, "untrimmed_index"),
        one("warning", "00000000000000000000.index")
    );
    let d = detail(p, "untrimmed_index");
    assert!(
        d.ends_with("4 of its 7 slots are zero (an untrimmed or preallocated index, KAFKA-10207): Kafka 4.4 reads them as entries pointing at position 0; this library rebuilds it at the segment's first index lookup (deferred index check), not at the open"),
        "{d}"
    );
    assert!(
        detail(p, "index_disagrees").contains("at its first index lookup (deferred index check"),
        "{p}"
    );
    assert_eq!(p["recovered_segments"], serde_json::json!([]), "{p}");
    assert_eq!(p["rescan_bytes"], 0, "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// Recovered at the open anyway (no marker, no recovery point), the small segment's
/// indexes are rebuilt there: the findings say the loader's open, as for any segment.
#[test]
fn a_small_segment_recovered_anyway_has_its_index_rebuilt_at_the_open() {
    let (_tmp, dir) = orders_copy();
    small_first_segment_with_a_lying_index(&dir);
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    std::fs::remove_file(dir.join("recovery-point")).unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    let d = detail(p, "index_disagrees");
    assert!(
        d.contains("this library's loader rebuilds the segment from its .log")
            && d.ends_with("(the segment is above the recovery point and recovered anyway)"),
        "{d}"
    );
    assert!(!d.contains("deferred"), "{d}");
    assert_eq!(p["recovered_segments"].as_array().unwrap().len(), 6, "{p}");
    assert_eq!(
        p["unread_recovered_segments"].as_array().unwrap().len(),
        5,
        "{p}"
    );
    assert_prediction_matches_the_loader(&dir);
}

/// Renames segment 443's files of an `orders_copy` to base `to`: segment 0 (offsets
/// 0..=442) then reaches past the next segment's base, and the loader cuts it there
/// (`resolve_overlap`).
fn rebase_second_segment(dir: &Path, to: i64) {
    for ext in ["log", "index", "timeindex", "txnindex"] {
        std::fs::rename(
            dir.join(format!("00000000000000000443.{ext}")),
            dir.join(format!("{to:020}.{ext}")),
        )
        .unwrap();
    }
}

/// A segment that overlaps the next one is recovered and cut at the next segment's base:
/// the doctor predicts the bytes the loader cuts (not 0, and never "no data lost"),
/// whether the segment also failed its index check (it was then read in full and the
/// overlap went unreported) or not (it was left unread).
#[test]
fn a_segment_overlapping_the_next_is_cut_where_the_loader_cuts_it() {
    for lying_index in [false, true] {
        let (_tmp, dir) = orders_copy();
        rebase_second_segment(&dir, 400);
        if lying_index {
            // A last entry before the first: the index check fails.
            append(
                &dir.join("00000000000000000000.index"),
                &[0, 0, 0, 1, 0, 1, 3, 232],
            );
        }
        let (v, code) = doctor(&dir);
        let p = partition(&v, "orders-0");
        let cut = findings(p, "index_disagrees")
            .into_iter()
            .filter(|(_, f)| f.as_deref() == Some("00000000000000000000.log"))
            .count();
        assert!(cut >= 1, "lying index {lying_index}: {p}");
        let d: Vec<String> = p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| f["detail"].as_str().unwrap().to_string())
            .collect();
        assert!(
            d.iter().any(|d| d.contains("cuts its last 3260 bytes")
                && d.contains("the next segment's base 400")),
            "lying index {lying_index}: {d:?}"
        );
        assert_eq!(code, 2, "lying index {lying_index}: {p}");
        assert_eq!(p["truncate_bytes"], 3260, "lying index {lying_index}: {p}");
        assert_eq!(p["data_loss"], "lost", "lying index {lying_index}: {p}");
        assert_eq!(p["unread_recovered_segments"], serde_json::json!([]), "{p}");
        assert_prediction_matches_the_loader(&dir);
    }
}

/// The same for a small segment whose index check the loader defers: its `.log` alone
/// is checked at the open, and its overlap with the next segment recovers it there.
#[test]
fn a_small_deferred_segment_overlapping_the_next_is_cut_at_the_open() {
    let (_tmp, dir) = orders_copy();
    small_first_segment_with_a_lying_index(&dir);
    rebase_second_segment(&dir, 100);
    let (v, code) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(code, 2, "{p}");
    let details: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("this library's loader rebuilds the segment from its .log")),
        "{details:?}"
    );
    assert!(
        !details.iter().any(|d| d.contains("deferred")),
        "{details:?}"
    );
    assert!(
        p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "error"
                && f["detail"]
                    .as_str()
                    .unwrap()
                    .contains("the next segment's base 100")),
        "{p}"
    );
    assert_ne!(p["truncate_bytes"], 0, "{p}");
    assert_eq!(p["data_loss"], "lost", "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// A `.txnindex` that fails its sanity check (here a partial trailing entry) makes the
/// loader rebuild the segment from its `.log` at the open, as Kafka 4.4's does when its
/// sanityCheck fails (docs/kafka-behaviour.md#log-loading step 2), small segment or not:
/// the doctor says so and predicts that rescan (it predicted none).
#[test]
fn a_corrupt_txnindex_is_rebuilt_at_the_open() {
    for small in [false, true] {
        let (_tmp, dir) = orders_copy();
        if small {
            small_first_segment_with_a_lying_index(&dir);
        }
        std::fs::write(dir.join("00000000000000000000.txnindex"), [7u8; 35]).unwrap();
        let (v, code) = doctor(&dir);
        let p = partition(&v, "orders-0");
        assert_eq!(code, 1, "small {small}: {p}");
        let f = findings(p, "index_disagrees");
        assert!(
            f.contains(&(
                "warning".to_string(),
                Some("00000000000000000000.txnindex".to_string())
            )),
            "small {small}: {p}"
        );
        let d: Vec<&str> = p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["detail"].as_str().unwrap())
            .collect();
        assert!(
            d.iter().any(|d| d.contains("fails the sanity check")
                && d.contains(
                    "this library's loader rebuilds the segment from its .log at the open"
                )),
            "small {small}: {d:?}"
        );
        assert!(!d.iter().any(|d| d.contains("deferred")), "{d:?}");
        assert_eq!(p["recovered_segments"], serde_json::json!([0]), "{p}");
        assert_prediction_matches_the_loader(&dir);
    }
}

/// An empty last segment lying inside the offsets of the one before it: the loader
/// recovers that one and removes the empty segment, so the log end stays where the
/// recovered segment ends (not at the empty segment's base), and the producer snapshot
/// at that end is kept. The same with two empty segments there (both removed, one after
/// the other), and with one whose `.txnindex` fails its check (removed before its own
/// recovery comes).
#[test]
fn an_empty_last_segment_inside_the_one_before_keeps_the_log_end() {
    for (empties, junk_txn) in [
        (&[2500][..], false),
        (&[2500, 2505][..], false),
        (&[2500][..], true),
    ] {
        let (_tmp, dir) = orders_copy();
        for b in empties {
            std::fs::write(dir.join(format!("{b:020}.log")), b"").unwrap();
        }
        if junk_txn {
            std::fs::write(dir.join("00000000000000002500.txnindex"), [1u8; 35]).unwrap();
        }
        let (v, _) = doctor(&dir);
        let p = partition(&v, "orders-0");
        assert_eq!(p["recovered_segments"], serde_json::json!([2180]), "{p}");
        assert_eq!(p["deleted_segments"], serde_json::json!(empties), "{p}");
        assert_eq!(p["recovered_log_end_offset"], 2510, "{p}");
        assert!(findings(p, "snapshot_ahead_of_log").is_empty(), "{p}");
        assert_prediction_matches_the_loader(&dir);
    }
}

/// After a crash with the recovery point in an empty last segment lying inside the one
/// before it: the loader recovers that one (its overlap) and removes the empty segment,
/// which it then neither recovers nor counts (it used to: it listed the unflushed
/// segments first).
#[test]
fn an_unflushed_empty_segment_removed_by_the_overlap_is_not_recovered() {
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("00000000000000002500.log"), b"").unwrap();
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).unwrap();
    std::fs::write(dir.join("recovery-point"), b"0\n2505\n").unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([2180]), "{p}");
    assert_eq!(p["deleted_segments"], serde_json::json!([2500]), "{p}");
    assert_eq!(p["recovered_log_end_offset"], 2510, "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// The same overlap when the recovery of the segment before cuts it below the empty
/// segment's base (a corrupt first batch): the empty segment is kept, and is the log end.
#[test]
fn an_empty_last_segment_outside_the_recovered_one_is_kept() {
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("00000000000000002500.log"), b"").unwrap();
    let log = dir.join("00000000000000002180.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([2180]), "{p}");
    assert_eq!(p["deleted_segments"], serde_json::json!([]), "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// An empty segment without an `.index` is kept as it is whatever its `.txnindex` holds:
/// the loader's check stops at the missing `.index` (nothing to rebuild).
#[test]
fn an_empty_segment_without_an_index_keeps_its_txnindex_unchecked() {
    let (_tmp, dir) = orders_copy();
    std::fs::write(dir.join("00000000000000002510.log"), b"").unwrap();
    std::fs::write(dir.join("00000000000000002510.txnindex"), [9u8; 35]).unwrap();
    let (v, _) = doctor(&dir);
    let p = partition(&v, "orders-0");
    assert_eq!(p["recovered_segments"], serde_json::json!([]), "{p}");
    assert!(findings(p, "index_disagrees").is_empty(), "{p}");
    assert_prediction_matches_the_loader(&dir);
}

/// With --deep, a batch failing its checksum inside a segment the open trusts (here the
/// last one, under the marker: the open reads its batch headers, not their checksums) is
/// reported, and the log end predicted is the open's, which keeps that batch: not the end
/// of the valid batches before it.
#[test]
fn deep_predicts_the_log_end_the_open_keeps() {
    let (_tmp, dir) = orders_copy();
    let log = dir.join("00000000000000002180.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let o = run(&[
        "--json",
        "--no-calibrate",
        "--deep",
        "--measure",
        dir.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = partition(&v, "orders-0");
    let m = &v["measured"]["orders-0"];
    assert_eq!(p["recovered_segments"], serde_json::json!([]), "{p}");
    assert_eq!(m["segments_recovered"], 0, "{m}");
    assert_eq!(m["log_end_offset"], 2510, "{m}");
    assert_eq!(p["recovered_log_end_offset"], 2510, "{p}");
    assert_eq!(p["log_end_offset"], 2510, "{p}");
    assert_eq!(findings(p, "torn_log_tail").len(), 1, "{p}");
    assert!(findings(p, "snapshot_ahead_of_log").is_empty(), "{p}");
}

/// Writes a legacy (v1) segment at `base` holding one message at each of `offsets`;
/// the message at index `corrupt`, if any, fails its checksum.
fn legacy_segment(dir: &Path, base: i64, offsets: &[i64], corrupt: Option<usize>) {
    use segment::record::LegacyMessage;
    let mut bytes = Vec::new();
    for (i, &o) in offsets.iter().enumerate() {
        let mut m = LegacyMessage::v1(o, 1_000, b"v").to_vec().unwrap();
        if corrupt == Some(i) {
            *m.last_mut().unwrap() ^= 0xff;
        }
        bytes.extend(m);
    }
    std::fs::write(dir.join(format!("{base:020}.log")), bytes).unwrap();
}

/// The doctor and a measured open of `dir` (one partition, `name`): the partition's
/// report and the measurement.
fn doctor_and_measure(dir: &Path, name: &str, deep: bool) -> (Value, Value) {
    let mut args = vec!["--json", "--no-calibrate", "--measure"];
    if deep {
        args.push("--deep");
    }
    args.push(dir.to_str().unwrap());
    let o = run(&args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    (partition(&v, name).clone(), v["measured"][name].clone())
}

/// A segment whose first batch's offset overflows (a bit flip in its base offset, found
/// by fuzzing) is split by the loader before recovery reaches the batches after it:
/// those go to a piece of their own, based at the first of them, where nothing goes
/// backwards, and the high piece lands above the next segment. Nothing is cut, and the
/// log end is the high piece's. The doctor used to judge the later batches against the
/// overflowing one (offsets going backwards), predicting a cut (and the deletion of the
/// next segment) the loader never makes.
#[test]
fn a_split_whose_pieces_interleave_the_next_segment_is_predicted() {
    const HIGH: i64 = 4_398_046_511_108;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("flip-0");
    std::fs::create_dir(&dir).unwrap();
    legacy_segment(&dir, 0, &[HIGH, 1, 2], None);
    legacy_segment(&dir, 10, &[10, 11], None);
    let (p, m) = doctor_and_measure(&dir, "flip-0", false);
    assert_eq!(m["bytes_truncated"], 0, "{m}");
    assert_eq!(m["log_end_offset"], HIGH + 1, "{m}");
    // The split segment, its pieces (based at HIGH and 1) and the next segment.
    assert_eq!(m["segments_recovered"], 4, "{m}");
    assert_eq!(p["truncate_bytes"], 0, "{p}");
    assert_eq!(p["recovered_log_end_offset"], HIGH + 1, "{p}");
    assert_eq!(p["recovered_segments"], serde_json::json!([0, 10]), "{p}");
    assert_eq!(p["split_pieces"], serde_json::json!([HIGH, 1]), "{p}");
    assert_eq!(p["deleted_segments"], serde_json::json!([]), "{p}");
    assert_eq!(p["data_loss"], "none", "{p}");
    assert!(findings(&p, "torn_log_tail").is_empty(), "{p}");
}

/// A split whose lower piece ends in a corrupt batch: that piece's recovery cuts it and
/// deletes every segment after it, the high piece included. The doctor does not model
/// a cut inside a split: it says the outcome is unknown, never a wrong "none".
#[test]
fn a_split_with_a_cut_below_its_last_piece_is_unknown() {
    const HIGH: i64 = 4_398_046_511_108;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("flip-0");
    std::fs::create_dir(&dir).unwrap();
    legacy_segment(&dir, 0, &[HIGH, 1, 2, 3], Some(2));
    legacy_segment(&dir, 10, &[10, 11], None);
    let (p, m) = doctor_and_measure(&dir, "flip-0", false);
    assert!(m["bytes_truncated"].as_u64().unwrap() > 0, "{m}");
    assert_eq!(
        p["unread_recovered_segments"],
        serde_json::json!([0]),
        "{p}"
    );
    assert_eq!(p["recovered_log_end_offset"], Value::Null, "{p}");
    assert_ne!(p["data_loss"], "none", "{p}");
}

/// A segment at the recovery point, after a crash, whose only batch overflows (found by
/// fuzzing): its one piece is based above it, so the loader's second recovery pass
/// (from the floor of the recovery point among the new segments, as Kafka's restart
/// of recovery from the recovery point) starts at the segment below and recovers that
/// one too. The doctor counts it, and predicts the log end and that nothing is cut.
#[test]
fn a_split_with_no_piece_at_its_base_recovers_the_segment_below() {
    const HIGH: i64 = 69_524_319_247_532_894;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("flip-0");
    std::fs::create_dir(&dir).unwrap();
    legacy_segment(&dir, 0, &[0, 1, 2], None);
    legacy_segment(&dir, 5, &[HIGH], None);
    // Segment 0's indexes as a writer leaves a small inactive segment's: no offset
    // entry, the time index's final entry (its largest timestamp, at its last offset).
    std::fs::write(dir.join("00000000000000000000.index"), []).unwrap();
    let mut entry = 1_000i64.to_be_bytes().to_vec();
    entry.extend(2i32.to_be_bytes());
    std::fs::write(dir.join("00000000000000000000.timeindex"), entry).unwrap();
    std::fs::write(dir.join("recovery-point"), "0\n5\n").unwrap();
    // Without --deep the doctor has not read segment 0 and says the outcome is unknown.
    let (p, _) = doctor_and_measure(&dir, "flip-0", false);
    assert_eq!(
        p["unread_recovered_segments"],
        serde_json::json!([0]),
        "{p}"
    );
    assert_eq!(p["recovered_log_end_offset"], Value::Null, "{p}");
    let (p, m) = doctor_and_measure(&dir, "flip-0", true);
    assert_eq!(m["bytes_truncated"], 0, "{m}");
    assert_eq!(m["log_end_offset"], HIGH + 1, "{m}");
    // The split segment, its piece and, in the second pass, the segment below.
    assert_eq!(m["segments_recovered"], 3, "{m}");
    assert_eq!(p["unread_recovered_segments"], serde_json::json!([]), "{p}");
    assert_eq!(p["recovered_segments"], serde_json::json!([0, 5]), "{p}");
    assert_eq!(p["split_pieces"], serde_json::json!([HIGH]), "{p}");
    assert_eq!(p["truncate_bytes"], 0, "{p}");
    assert_eq!(p["recovered_log_end_offset"], HIGH + 1, "{p}");
}
