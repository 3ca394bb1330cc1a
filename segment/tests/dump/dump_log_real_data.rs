//! `dump-log` on real partition directories: the in-repository ones (`tests/data/*/*`) and
//! the optional field data (partitions copied from production brokers). Verification is
//! clean on every directory, corruptions of copies are pinpointed, `--rebuild-indexes-to`
//! reproduces the indexes, `--json` is well-formed. The tests about particular field-data
//! partitions are skipped when it is missing, and fail under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use segment::dump::{self, Collect, DumpOptions, Note, Problem};
use serde_json::Value;

/// The optional field data (`None`: skipped outside CI, a failure under `CI=true`).
fn data_dir() -> Option<PathBuf> {
    field_data::field_data_dir("dump-log field data")
}

/// The in-repository partition written by this crate (see `tests/log/generated_fixture.rs`).
const GENERATED: &str = "orders-0";

/// A partition by name: an in-repository one, else one of the field data (tests about a
/// field-data partition return early when `data_dir()` is `None`).
fn partition(name: &str) -> PathBuf {
    if let Some(p) = field_data::in_repo_partitions()
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
    {
        return p;
    }
    let p = data_dir()
        .expect("a field-data test must return early when it is missing")
        .join(name);
    assert!(p.is_dir(), "fixture {} is missing", p.display());
    p
}

/// The field-data partitions (`None` when missing).
fn field_partitions() -> Option<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir()?)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Some(v)
}

fn run_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(args)
        .output()
        .expect("run dump-log")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies the regular files of a partition directory into a fresh temp dir (writable).
fn copy_partition(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(name);
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(partition(name)).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let to = dst.join(p.file_name().unwrap());
            std::fs::write(&to, std::fs::read(&p).unwrap()).unwrap();
        }
    }
    (tmp, dst)
}

fn verify(path: &Path, strict: bool) -> Collect {
    let opts = DumpOptions {
        verify_index_only: true,
        kafka_strict: strict,
        ..DumpOptions::default()
    };
    let mut sink = Collect::default();
    dump::run(&[path.to_path_buf()], &opts, &mut sink);
    sink
}

#[test]
fn verify_index_only_is_clean_on_every_real_partition() {
    let mut dirs = field_data::in_repo_partitions();
    if let Some(field) = field_partitions() {
        assert!(field.len() >= 17, "expected the 17 field-data directories");
        dirs.extend(field);
    }
    for dir in &dirs {
        let out = run_cli(&["--verify-index-only", dir.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{}: {err}", dir.display());
        for bad in [
            "Mismatches",
            "mismatch",
            "not found",
            "out of order",
            "Problems in",
            "invalid bytes",
            "Non-consecutive",
        ] {
            assert!(!err.contains(bad), "{}: {bad}: {err}", dir.display());
        }
        // Index entries are not printed in verify mode, a .log's batches are (as Kafka
        // prints them); each file is announced.
        let so = stdout(&out);
        let index_entry = |l: &str| {
            l.starts_with("offset: ") && l.split(' ').count() == 4 && l.contains(" position: ")
        };
        assert!(!so.lines().any(index_entry), "{so}");
        assert!(so.contains(" isvalid: true"), "{so}");
        assert!(so.starts_with("Dumping "), "{so}");
        // The library agrees: no failing problem at all.
        let events = verify(dir, false);
        assert!(events.problems().is_empty(), "{:?}", events.problems());
    }
}

/// The valid-but-not-Kafka-exact entries found in the real data, and what Kafka's tool
/// would print for them (`--kafka-strict`).
#[test]
fn follower_and_record_level_entries_are_notes_not_errors() {
    let Some(field) = field_partitions() else {
        return;
    };
    let count =
        |c: &Collect, f: &dyn Fn(&Note) -> bool| c.notes().into_iter().filter(|n| f(n)).count();
    let chunk = |n: &Note| matches!(n, Note::ChunkOffsetEntry { .. });
    let rec = |n: &Note| matches!(n, Note::RecordLevelTimeEntry { .. });

    let b0 = verify(
        &partition("dipendrasaini-invoice-0-broker0-follower"),
        false,
    );
    assert_eq!(count(&b0, &chunk), 16);
    let b1 = verify(
        &partition("dipendrasaini-invoice-0-broker1-follower"),
        false,
    );
    assert!(matches!(
        b1.notes()[..],
        [Note::ChunkOffsetEntry {
            offset: 60610,
            position: 171110,
            first_batch_last_offset: 36306,
            ..
        }]
    ));
    let leader = verify(&partition("dipendrasaini-invoice-0-broker2-leader"), false);
    assert_eq!(count(&leader, &rec), 100 + 58);
    assert_eq!(count(&leader, &chunk), 0);

    // Kafka's DumpLogSegments rules (strict): the same entries become errors.
    let s = verify(&partition("dipendrasaini-invoice-0-broker1-follower"), true);
    assert!(matches!(
        s.problems()[..],
        [Problem::OffsetMismatch {
            index_offset: 60610,
            log_offset: 36306,
            ..
        }]
    ));
    let s = verify(&partition("dipendrasaini-invoice-0-broker2-leader"), true);
    assert_eq!(s.problems().len(), 158);
    assert!(s
        .problems()
        .iter()
        .all(|p| matches!(p, Problem::ShallowOffsetNotFound { .. })));

    let out = run_cli(&[
        "--verify-index-only",
        "--kafka-strict",
        partition("dipendrasaini-invoice-0-broker1-follower")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("  Index offset: 60610, log offset: 36306"));

    // Every other fixture is clean even under Kafka's exact rules.
    for dir in field {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("dipendrasaini") && name != "dipendrasaini-invoice-0-broker0-follower" {
            continue;
        }
        let s = verify(&dir, true);
        if name == "dipendrasaini-invoice-0-broker0-follower" {
            assert_eq!(s.problems().len(), 16, "{name}");
        } else {
            assert!(s.problems().is_empty(), "{name}: {:?}", s.problems());
        }
    }
}

fn batch_positions(log: &[u8]) -> Vec<(u64, i64)> {
    segment::record::batches_from(log, 0)
        .map(|b| b.unwrap())
        .map(|b| (b.position(), b.base_offset()))
        .collect()
}

#[test]
fn corrupted_copy_swapped_offset_index_entries() {
    let (_tmp, dir) = copy_partition(GENERATED);
    let idx = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&idx).unwrap();
    let entry = |b: &[u8], i: usize| {
        (
            i32::from_be_bytes(b[i * 8..i * 8 + 4].try_into().unwrap()) as i64,
            u32::from_be_bytes(b[i * 8 + 4..i * 8 + 8].try_into().unwrap()),
        )
    };
    let (o3, p3) = entry(&bytes, 3);
    let (o4, p4) = entry(&bytes, 4);
    let (a, b) = bytes.split_at_mut(32);
    a[24..32].swap_with_slice(&mut b[..8]);
    std::fs::write(&idx, &bytes).unwrap();

    // Kafka's per-entry rule cannot see this (each entry still matches its batch); the
    // ordering check reports the second of the two.
    let events = verify(&idx, false);
    let probs = events.problems();
    assert_eq!(probs.len(), 1, "{probs:?}");
    match probs[0] {
        Problem::OffsetIndexOutOfOrder {
            slot,
            offset,
            position,
            prev_offset,
            prev_position,
            ..
        } => {
            assert_eq!(*slot, 4);
            assert_eq!((*offset, *position), (o3, p3));
            assert_eq!((*prev_offset, *prev_position), (o4, p4));
        }
        other => panic!("{other:?}"),
    }

    let out = run_cli(&["--verify-index-only", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "Out of order offset index entry 4: offset: {o3} position: {p3} follows offset: {o4} position: {p4}"
        )),
        "{err}"
    );
}

#[test]
fn corrupted_copy_flipped_crc_byte() {
    let (_tmp, dir) = copy_partition(GENERATED);
    let log_path = dir.join("00000000000000000000.log");
    let mut log = std::fs::read(&log_path).unwrap();
    let batches = batch_positions(&log);
    let (pos, base) = batches[42];
    log[pos as usize + 17] ^= 0x01; // first CRC byte
    std::fs::write(&log_path, &log).unwrap();

    let events = verify(&dir, false);
    let probs = events.problems();
    assert_eq!(probs.len(), 1, "{probs:?}");
    match probs[0] {
        Problem::InvalidChecksum {
            position,
            base_offset,
            stored_crc,
            computed_crc,
            ..
        } => {
            assert_eq!((*position, *base_offset), (pos, base));
            assert_ne!(stored_crc, computed_crc);
        }
        other => panic!("{other:?}"),
    }

    let out = run_cli(&["--verify-index-only", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "Invalid checksum in batch at position: {pos} baseOffset: {base}"
        )),
        "{err}"
    );
    // The batch line says so too, as Kafka's does.
    let out = run_cli(&[log_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let line = stdout(&out)
        .lines()
        .find(|l| l.contains(&format!(" position: {pos} ")))
        .unwrap()
        .to_string();
    assert!(line.ends_with("isvalid: false"), "{line}");
}

#[test]
fn rebuild_reproduces_kafka_offset_indexes() {
    let field = data_dir().is_some();
    for (name, in_repo) in [
        (GENERATED, true),
        ("nikhildighe-__consumer_offsets-12", false),
        ("rjmfernandes-__cluster_metadata-0", false),
    ] {
        if !in_repo && !field {
            continue;
        }
        let (tmp, src) = copy_partition(name);
        let before: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect();
        let out_dir = tmp.path().join("rebuilt");
        let out = run_cli(&[
            "--rebuild-indexes-to",
            out_dir.to_str().unwrap(),
            src.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let so = stdout(&out);
        let mut indexes = 0;
        for e in std::fs::read_dir(partition(name)).unwrap() {
            let p = e.unwrap().path();
            let fname = p.file_name().unwrap().to_str().unwrap().to_string();
            if fname.ends_with(".index") || fname.ends_with(".timeindex") {
                let rebuilt = std::fs::read(out_dir.join(&fname)).unwrap();
                assert_eq!(rebuilt, std::fs::read(&p).unwrap(), "{name}/{fname}");
                assert!(so.contains(&format!("{fname} (")), "{so}");
                indexes += 1;
            }
        }
        assert!(indexes >= 2);
        assert!(!so.contains("differs"), "{so}");
        // Only index files were written, no temp dir left, the source is untouched.
        for e in std::fs::read_dir(&out_dir).unwrap() {
            let n = e.unwrap().file_name().into_string().unwrap();
            assert!(
                n.ends_with(".index") || n.ends_with(".timeindex") || n.ends_with(".txnindex"),
                "{n}"
            );
        }
        for (p, bytes) in before {
            assert_eq!(std::fs::read(&p).unwrap(), bytes, "{} changed", p.display());
        }
        assert_eq!(
            std::fs::read_dir(&src).unwrap().count(),
            std::fs::read_dir(partition(name)).unwrap().count()
        );
    }
}

#[test]
fn rebuild_reports_differences_and_refuses_the_source_dir() {
    if data_dir().is_none() {
        return;
    }
    let src = partition("dipendrasaini-invoice-0-broker0-follower");
    let tmp = tempfile::tempdir().unwrap();
    let reports = dump::rebuild(
        &[src.join("00000000000000000000.log")],
        &dump::RebuildOptions {
            out_dir: tmp.path().to_path_buf(),
            index_interval_bytes: 4096,
            force: false,
        },
    )
    .unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert!(!r.is_failure());
    assert_eq!(r.truncated_bytes, 0);
    assert_eq!(r.valid_bytes, 999_252);
    assert!(matches!(
        r.files[0].comparison,
        dump::rebuild::Comparison::Differs {
            existing_entries: 85,
            rebuilt_entries: 106,
            ..
        }
    ));
    assert!(r.render().contains("85 vs 106 entries"));

    // Refuses to write next to the broker's files.
    let (_t, copy) = copy_partition("xpxwo100-foo-0");
    let out = run_cli(&[
        "--rebuild-indexes-to",
        copy.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("refusing"));
    assert!(!copy.join("00000000000000000000.index").exists());
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn json_output_parses_with_expected_fields() {
    if data_dir().is_none() {
        return;
    }
    let dir = partition("itumelengmogase-_confluent-ksql-default__command_topic-0");
    let out = run_cli(&["--json", "--deep-iteration", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    let v = json_lines(&out);
    let types: Vec<&str> = v.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "dumping",
            "log_start",
            "batch",
            "record",
            "batch",
            "record",
            "dumping",
            "offset_entry",
            "dumping",
            "time_entry",
            "dumping",
            "producer_entry",
            "summary"
        ]
    );
    assert_eq!(v[0]["file_type"], "log");
    let b = &v[4];
    for field in [
        "position",
        "base_offset",
        "last_offset",
        "count",
        "producer_id",
        "is_transactional",
        "is_control",
        "max_timestamp",
        "timestamp_type",
        "compression",
        "crc",
        "is_valid",
        "size",
        "magic",
    ] {
        assert!(b.get(field).is_some(), "batch lacks {field}: {b}");
    }
    assert_eq!(b["is_control"], true);
    assert_eq!(b["position"], 7525);
    assert_eq!(v[5]["control"]["control_type"], "END_TXN_MARKER");
    assert_eq!(v[5]["control"]["marker"], "COMMIT");
    assert_eq!(v[5]["offset"], 1);
    assert_eq!(v[7]["offset"], 1);
    assert_eq!(v[7]["position"], 7525);
    let summary = v.last().unwrap();
    assert_eq!(summary["exit_code"], 0);
    assert_eq!(summary["files"], 4);

    // Problems and notes are JSON objects too.
    let (_t, copy) = copy_partition("nikhildighe-__consumer_offsets-12");
    let idx = copy.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&idx).unwrap();
    bytes.swap(3, 11); // low bytes of the relative offsets of entries 0 and 1
    std::fs::write(&idx, &bytes).unwrap();
    let out = run_cli(&["--json", "--verify-index-only", idx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_lines(&out);
    let problems: Vec<&Value> = v.iter().filter(|e| e["type"] == "problem").collect();
    assert!(!problems.is_empty());
    assert!(problems
        .iter()
        .all(|p| p["problem"].is_string() && p["path"].is_string()));
    assert_eq!(v.last().unwrap()["exit_code"], 1);

    let out = run_cli(&[
        "--json",
        "--verify-index-only",
        partition("dipendrasaini-invoice-0-broker2-leader")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json_lines(&out);
    let notes = v
        .iter()
        .filter(|e| e["type"] == "note" && e["note"] == "record_level_time_entry")
        .count();
    assert_eq!(notes, 158);
}

#[test]
fn directory_dump_order_and_kraft_snapshots() {
    if data_dir().is_none() {
        return;
    }
    let dir = partition("rjmfernandes-__cluster_metadata-0");
    let files = dump::partition_files(&dir).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "00000000000000000000.log",
            "00000000000000000000.index",
            "00000000000000000000.timeindex",
            "00000000000000017027.snapshot",
            "00000000000000007752-0000000001.checkpoint",
            "00000000000000014926-0000000001.checkpoint",
        ]
    );
    let out = run_cli(&[
        "--deep-iteration",
        "--files",
        &format!(
            "{},{}",
            files[4].display(),
            dir.join("partition.metadata").display()
        ),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let so = stdout(&out);
    assert!(so.contains("Snapshot end offset: 7752, epoch: 1\n"), "{so}");
    // Kafka's tool decodes KRaft control records whatever the options.
    assert!(
        so.contains(
            " SnapshotHeader {\"version\":0,\"lastContainedLogTimestamp\":1713537222197}\n"
        ),
        "{so}"
    );
    assert!(so.contains(" SnapshotFooter {\"version\":0}\n"), "{so}");
    assert!(
        stderr(&out).contains("Ignoring unknown file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_input_is_an_operational_error() {
    let out = run_cli(&["/nonexistent/00000000000000000000.log"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no such file"), "{}", stderr(&out));
}
