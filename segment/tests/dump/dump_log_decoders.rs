//! `dump-log`'s record decoders against Kafka 4.4's `DumpLogSegments`, line for line.
//!
//! The fixtures (`tests/dump/decoders/*/00000000000000000000.log`) hold every record type
//! of `__consumer_offsets`, `__transaction_state`, `__share_group_state`,
//! `__cluster_metadata` and `__remote_log_metadata` at every version, serialized by
//! Kafka's own classes, plus the KRaft control records and broken records; `tests/dump/decoders/expected/` holds what Kafka's
//! tool printed for them (see `tests/dump/decoders/README.md`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dump/decoders")
}

/// Runs `dump-log` on the fixture partition `dir` with `args`; stdout then stderr, the
/// fixture path written `<fixtures>` as in the golden files.
fn ours(dir: &str, args: &[&str]) -> String {
    let root = fixtures();
    let log = root.join(dir).join("00000000000000000000.log");
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .arg("--files")
        .arg(&log)
        .args(args)
        .output()
        .expect("run dump-log");
    assert_eq!(out.status.code(), Some(0), "{dir} {args:?}: {out:?}");
    let text = String::from_utf8(out.stdout).expect("utf-8 output")
        + &String::from_utf8(out.stderr).expect("utf-8 output");
    text.replace(&format!("{}/", root.display()), "<fixtures>/")
}

/// Compares our output with Kafka's golden file; panics with the differing lines.
fn parity(dir: &str, golden: &str, args: &[&str]) {
    let path = fixtures()
        .join("expected")
        .join(format!("{dir}.{golden}.txt"));
    let kafka = std::fs::read_to_string(&path).expect("golden file");
    let ours = ours(dir, args);
    let k: Vec<&str> = kafka.lines().collect();
    let o: Vec<&str> = ours.lines().collect();
    let differing: Vec<String> = (0..k.len().max(o.len()))
        .filter(|&i| k.get(i) != o.get(i))
        .map(|i| {
            format!(
                "line {}:\n  kafka: {}\n  ours:  {}",
                i + 1,
                k.get(i).unwrap_or(&"<none>"),
                o.get(i).unwrap_or(&"<none>")
            )
        })
        .collect();
    eprintln!(
        "{dir} {golden}: {} lines, {} equal, {} different",
        k.len(),
        k.len().max(o.len()) - differing.len(),
        differing.len()
    );
    assert!(
        differing.is_empty(),
        "{dir} {args:?}: {} of {} lines differ from Kafka's\n{}",
        differing.len(),
        k.len(),
        differing.join("\n")
    );
}

#[test]
fn offsets_decoder_matches_kafka() {
    parity("offsets-0", "offsets-decoder", &["--offsets-decoder"]);
}

#[test]
fn offsets_decoder_without_record_metadata_matches_kafka() {
    parity(
        "offsets-0",
        "offsets-decoder-skip-metadata",
        &["--offsets-decoder", "--skip-record-metadata"],
    );
}

#[test]
fn transaction_log_decoder_matches_kafka() {
    parity(
        "txn-state-0",
        "transaction-log-decoder",
        &["--transaction-log-decoder"],
    );
}

#[test]
fn share_group_state_decoder_matches_kafka() {
    parity(
        "share-state-0",
        "share-group-state-decoder",
        &["--share-group-state-decoder"],
    );
}

#[test]
fn cluster_metadata_decoder_matches_kafka() {
    parity(
        "metadata-0",
        "cluster-metadata-decoder",
        &["--cluster-metadata-decoder"],
    );
}

#[test]
fn remote_log_metadata_decoder_matches_kafka() {
    parity(
        "remote-log-metadata-0",
        "remote-log-metadata-decoder",
        &["--remote-log-metadata-decoder"],
    );
}

#[test]
fn kraft_control_records_are_decoded_without_a_decoder() {
    parity("metadata-0", "deep-iteration", &["--deep-iteration"]);
}

#[test]
fn json_output_carries_decoded_records_as_values() {
    let out = ours("offsets-0", &["--offsets-decoder", "--json"]);
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .filter(|v: &serde_json::Value| v["type"] == "record")
        .collect();
    assert!(!records.is_empty());
    let first = &records[0];
    assert_eq!(first["key"]["type"], "0", "{first}");
    assert_eq!(first["key"]["data"]["partition"], 0, "{first}");
    assert_eq!(first["payload"]["version"], "0", "{first}");
    assert!(first["payload"]["data"].is_object(), "{first}");
    // Group metadata: the consumer protocol inside is decoded too.
    let group = records
        .iter()
        .find(|r| r["key"]["type"] == "2" && r["payload"]["data"]["protocolType"] == "consumer")
        .expect("a consumer group metadata record");
    assert_eq!(
        group["payload"]["data"]["members"][0]["subscription"]["topics"][0], "orders",
        "{group}"
    );
    // The tool's own lines stay strings.
    assert!(records.iter().any(|r| r["payload"] == "<DELETE>"));
    assert!(records
        .iter()
        .any(|r| r["key"] == "Unknown record type 32512 at offset 61, skipping."));
}

#[test]
fn control_records_in_json_output() {
    let out = ours("metadata-0", &["--deep-iteration", "--json"]);
    let leader = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .find(|v| v["control"]["control_type"] == "KRAFT")
        .expect("a decoded control record");
    assert_eq!(leader["control"]["name"], "SNAPSHOT_HEADER", "{leader}");
    assert_eq!(leader["control"]["record"]["version"], 0, "{leader}");
}

#[test]
fn decoders_exclude_each_other() {
    let log = fixtures().join("offsets-0/00000000000000000000.log");
    let args = ["--offsets-decoder", "--transaction-log-decoder"];
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(args)
        .arg(&log)
        .output()
        .expect("run dump-log");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
}

/// The field data's internal topics (real brokers' partitions, optional): every record
/// decodes (no error line), and lines checked against Kafka 4.4's tool by hand
/// (`cargo xtask kafka --only k6-dump` compares them all).
#[test]
fn field_data_internal_topics_decode() {
    let Some(data) = field_data::field_data_dir("dump-log decoders field data") else {
        return;
    };
    let run = |dir: &str, option: &str| -> String {
        let d = data.join(dir);
        let mut logs: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        logs.sort();
        let files: Vec<String> = logs.iter().map(|p| p.display().to_string()).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
            .args(["--no-progress", "--files", &files.join(","), option])
            .output()
            .expect("run dump-log");
        assert_eq!(out.status.code(), Some(0), "{dir}: {out:?}");
        let so = String::from_utf8(out.stdout).unwrap();
        assert!(!so.contains("Error at"), "{dir}: {so}");
        so
    };
    let co10 = run("nikhildighe-__consumer_offsets-10", "--offsets-decoder");
    assert!(co10.contains(r#" key: {"type":"2","data":{"group":"console-consumer-57331"}} payload: {"version":"3","data":{"protocolType":"consumer","generation":1,"protocol":"range","#), "{co10}");
    assert!(co10.contains(r#""subscription":{"topics":["my-topic"],"userData":null,"ownedPartitions":[],"generationId":-1,"rackId":null},"assignment":{"assignedPartitions":[{"topic":"my-topic","partitions":[0]}],"userData":null}}]}}"#), "{co10}");
    assert!(
        co10.contains(
            r#"key: {"type":"2","data":{"group":"console-consumer-57331"}} payload: <DELETE>"#
        ),
        "{co10}"
    );
    let co40 = run("xpxwo100-__consumer_offsets-40", "--offsets-decoder");
    assert!(co40.contains(r#"| offset: 1 CreateTime: 1479457455694 keySize: 19 valueSize: 28 isValid: true crc: 2480351982 key: {"type":"1","data":{"group":"GroupA","topic":"foo","partition":0}} payload: {"version":"1","data":{"offset":2,"metadata":"","commitTimestamp":1479457455691,"expireTimestamp":1479543855691}}"#), "{co40}");
    let ts = run(
        "itumelengmogase-__transaction_state-44",
        "--transaction-log-decoder",
    );
    assert!(ts.contains(r#""transactionStatus":"PrepareCommit","transactionPartitions":[{"topic":"_confluent-ksql-default__command_topic","partitionIds":[0]}]"#), "{ts}");
    let cm = run(
        "rjmfernandes-__cluster_metadata-0",
        "--cluster-metadata-decoder",
    );
    assert!(cm.contains(r#" LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}"#));
    assert_eq!(
        cm.matches(r#"payload: {"type":"TOPIC_RECORD","version":0,"data":{"name":"#)
            .count(),
        63
    );
}

/// `bootstrap.checkpoint` (the KRaft bootstrap snapshot): Kafka's tool prints `KRaft
/// bootstrap snapshot` and dumps it as any snapshot (checked by hand against Kafka 4.4 on
/// a copy of `metadata-0`'s segment: the same lines as the segment's after that one).
#[test]
fn bootstrap_checkpoint_is_dumped_as_kafka_does() {
    let tmp = tempfile::tempdir().unwrap();
    let bootstrap = tmp.path().join("bootstrap.checkpoint");
    std::fs::copy(
        fixtures().join("metadata-0/00000000000000000000.log"),
        &bootstrap,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(["--no-progress", "--cluster-metadata-decoder"])
        .arg(&bootstrap)
        .output()
        .expect("run dump-log");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let ours = String::from_utf8(out.stdout).unwrap();
    let kafka = std::fs::read_to_string(
        fixtures().join("expected/metadata-0.cluster-metadata-decoder.txt"),
    )
    .unwrap();
    let ours: Vec<&str> = ours.lines().collect();
    let kafka: Vec<&str> = kafka.lines().collect();
    assert_eq!(ours[1], "KRaft bootstrap snapshot");
    assert_eq!(kafka[1], "Log starting offset: 0");
    assert_eq!(ours[2..], kafka[2..]);
}
