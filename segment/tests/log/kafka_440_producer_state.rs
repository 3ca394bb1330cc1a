//! Producer state against Apache Kafka 4.4.0's own files (`tests/data/kafka-4.4.0/clean`:
//! transactional, idempotent and plain producers, overlapping transactions, long ones
//! spanning rolls): appending the broker's batches through `Log::append`, and recovering
//! its `.log` files alone, both give the broker's `.txnindex` files, producer snapshots
//! and leader-epoch checkpoint byte for byte.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;
use segment::format::{scan, BatchFormat};
use segment::producer::snapshot::{decode_snapshot, encode_snapshot, list_snapshot_files};
use segment::{KafkaBatchFormat, LogConfig};

fn partitions() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kafka-4.4.0/clean");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert_eq!(v.len(), 3, "codecs-0, txn-0, appendtime-0");
    v
}

fn cfg() -> LogConfig {
    LogConfig {
        retention_ms: -1,
        ..LogConfig::default()
    }
}

fn files_with(dir: &Path, ext: &str) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The broker's `.txnindex` files; a missing one is an empty index.
fn txn_indexes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files_with(dir, "log")
        .into_keys()
        .map(|l| {
            let t = l.replace(".log", ".txnindex");
            let bytes = std::fs::read(dir.join(&t)).unwrap_or_default();
            (t, bytes)
        })
        .collect()
}

fn segments_of(dir: &Path) -> Vec<(i64, Vec<Vec<u8>>)> {
    files_with(dir, "log")
        .into_iter()
        .map(|(name, bytes)| {
            let base = segment::names::offset_from_file_name(&name).unwrap();
            let batches = scan::<KafkaBatchFormat>(&bytes, 0)
                .map(|b| b.unwrap())
                .inspect(|b| KafkaBatchFormat::validate(b.bytes, b.info.position).unwrap())
                .map(|b| b.bytes.to_vec())
                .collect();
            (base, batches)
        })
        .collect()
}

#[test]
fn broker_snapshots_reencode_byte_for_byte() {
    let mut non_empty = 0;
    for p in partitions() {
        for (_, f) in list_snapshot_files(&p).unwrap() {
            let bytes = std::fs::read(&f).unwrap();
            let entries = decode_snapshot(&bytes).unwrap();
            assert_eq!(encode_snapshot(&entries), bytes, "{}", f.display());
            non_empty += usize::from(!entries.is_empty());
        }
    }
    assert!(
        non_empty >= 5,
        "the transactional partition has non-empty snapshots"
    );
}

#[test]
fn append_path_writes_the_brokers_txn_indexes_snapshots_and_epochs() {
    for p in partitions() {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg(), clock);
        for (i, (base, batches)) in segments_of(&p).into_iter().enumerate() {
            if i > 0 {
                log.roll(Some(base)).unwrap();
            }
            for b in batches {
                log.append(&b).unwrap();
            }
        }
        log.close().unwrap();
        let what = p.display();
        assert_eq!(
            txn_indexes(dir.path()),
            txn_indexes(&p),
            "{what}: .txnindex"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("leader-epoch-checkpoint")).unwrap(),
            std::fs::read_to_string(p.join("leader-epoch-checkpoint")).unwrap(),
            "{what}: leader-epoch-checkpoint"
        );
        // The broker snapshots on every roll and at close, as we do.
        assert_eq!(
            files_with(dir.path(), "snapshot"),
            files_with(&p, "snapshot"),
            "{what}: snapshots"
        );
    }
}

#[test]
fn recovery_of_the_log_files_alone_gives_the_brokers_files() {
    for p in partitions() {
        let dir = tmpdir();
        for name in files_with(&p, "log").into_keys() {
            std::fs::copy(p.join(&name), dir.path().join(&name)).unwrap();
        }
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg(), clock);
        let what = p.display();
        assert_eq!(
            txn_indexes(dir.path()),
            txn_indexes(&p),
            "{what}: .txnindex"
        );
        // Recovery snapshots at every recovered segment's end, the last two base offsets
        // and the log end; each one the broker also has is byte-identical.
        let ours = files_with(dir.path(), "snapshot");
        let theirs = files_with(&p, "snapshot");
        let mut same = 0;
        for (name, bytes) in &ours {
            if let Some(t) = theirs.get(name) {
                assert_eq!(bytes, t, "{what}: {name}");
                same += 1;
            }
        }
        assert_eq!(
            same,
            ours.len().min(theirs.len()),
            "{what}: {:?} vs {:?}",
            ours.keys(),
            theirs.keys()
        );
        assert!(same >= 3, "{what}");
        let epochs: Vec<String> = log
            .leader_epochs()
            .iter()
            .map(|(e, o)| format!("{e} {o}"))
            .collect();
        let file = std::fs::read_to_string(p.join("leader-epoch-checkpoint")).unwrap();
        assert_eq!(
            file.lines().skip(2).collect::<Vec<_>>(),
            epochs,
            "{what}: epochs"
        );
        assert_eq!(
            log.last_stable_offset(),
            log.log_end_offset(),
            "{what}: no transaction left open"
        );
    }
}
