//! Kafka's producer-state snapshots (`<offset>.snapshot`): every snapshot a real broker
//! wrote decodes and re-encodes byte for byte; a log rebuilt from the same `.log` bytes
//! writes byte-identical snapshots at the same offsets; `Log` writes them on roll and on
//! close, and deletes them as Kafka does (retention, `truncate_to`, full truncation).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;
use segment::producer::snapshot::{decode_snapshot, encode_snapshot, list_snapshot_files};
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::LogConfig;

/// The optional field data (`None`: skipped outside CI, a failure under `CI=true`).
fn data_dir() -> Option<PathBuf> {
    field_data::field_data_dir("segment field data")
}

fn partitions() -> Option<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir()?)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Some(v)
}

#[test]
fn every_broker_snapshot_decodes_and_reencodes_byte_for_byte() {
    let mut n = 0;
    let mut with_producers = 0;
    let Some(partitions) = partitions() else {
        return;
    };
    for p in partitions {
        for (offset, f) in list_snapshot_files(&p).unwrap() {
            let bytes = std::fs::read(&f).unwrap();
            let entries =
                decode_snapshot(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert_eq!(encode_snapshot(&entries), bytes, "{}", f.display());
            if entries.is_empty() {
                assert_eq!(bytes.len(), 10, "{}: an empty snapshot", f.display());
            } else {
                with_producers += 1;
                for e in &entries {
                    assert!(
                        e.last_offset < offset,
                        "{}: state below its offset",
                        f.display()
                    );
                }
            }
            n += 1;
        }
    }
    assert_eq!(n, 15, "the fixtures hold 15 snapshots");
    assert_eq!(with_producers, 3);
}

/// Copies the `.log` files only (no index, snapshot or checkpoint).
fn copy_logs(src: &Path) -> tempfile::TempDir {
    let dst = tmpdir();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "log") {
            std::fs::copy(&p, dst.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    dst
}

#[test]
fn rebuilding_a_broker_partition_writes_the_brokers_snapshots() {
    // Recovery from the `.log` bytes alone replays every batch and writes snapshots at the
    // base offsets of the last two segments and at the log end: wherever the broker had
    // written one at the same offset, the bytes are the same (entries and their order).
    let mut compared = 0;
    let mut compared_with_producers = 0;
    let Some(partitions) = partitions() else {
        return;
    };
    for p in partitions {
        let theirs: BTreeMap<i64, PathBuf> = list_snapshot_files(&p).unwrap();
        if theirs.is_empty() {
            continue;
        }
        let copy = copy_logs(&p);
        let (_t, clock) = mock(); // long before the records: no producer expires
        let log = open_log(
            copy.path(),
            LogConfig {
                retention_ms: -1,
                ..LogConfig::default()
            },
            clock,
        );
        let ours = list_snapshot_files(copy.path()).unwrap();
        assert!(ours.contains_key(&log.log_end_offset()), "{}", p.display());
        for (o, f) in &theirs {
            let Some(mine) = ours.get(o) else { continue };
            let a = std::fs::read(f).unwrap();
            let b = std::fs::read(mine).unwrap();
            assert_eq!(
                decode_snapshot(&b).unwrap(),
                decode_snapshot(&a).unwrap(),
                "{} at {o}",
                p.display()
            );
            assert_eq!(b, a, "{} at {o}: byte-identical", p.display());
            compared += 1;
            if a.len() > 10 {
                compared_with_producers += 1;
            }
        }
    }
    assert!(compared >= 5, "compared {compared} snapshots");
    assert!(
        compared_with_producers >= 2,
        "compared {compared_with_producers} non-empty ones"
    );
}

fn txn(o: i64, pid: i64) -> Vec<u8> {
    BatchBuilder::new(o)
        .partition_leader_epoch(0)
        .producer(pid, 0, 0)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

fn snapshots(dir: &Path) -> Vec<i64> {
    list_snapshot_files(dir).unwrap().into_keys().collect()
}

#[test]
fn log_writes_snapshots_on_roll_and_close_and_deletes_them_like_kafka() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 1_000,
        ..LogConfig::default()
    };
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert!(
        snapshots(dir.path()).is_empty(),
        "an empty log has no snapshot"
    );
    fill(&log, 0, 3, 1, 0);
    log.append(&txn(3, 42)).unwrap();
    log.roll(None).unwrap(); // snapshot at 4: P42's transaction is open
    let at4 =
        decode_snapshot(&std::fs::read(dir.path().join("00000000000000000004.snapshot")).unwrap())
            .unwrap();
    assert_eq!(at4.len(), 1);
    assert_eq!(
        (
            at4[0].producer_id,
            at4[0].current_txn_first_offset,
            at4[0].last_offset
        ),
        (42, 3, 3)
    );
    log.append(&control_batch(4, 42, 0, ControlRecordType::Commit, 0, 4).unwrap())
        .unwrap();
    fill(&log, 5, 2, 1, 5);
    log.roll(None).unwrap(); // snapshot at 7
    fill(&log, 7, 2, 1, 7);
    assert_eq!(snapshots(dir.path()), vec![4, 7]);
    log.close().unwrap(); // snapshot at the log end, 9
    assert_eq!(snapshots(dir.path()), vec![4, 7, 9]);
    let at9 =
        decode_snapshot(&std::fs::read(dir.path().join("00000000000000000009.snapshot")).unwrap())
            .unwrap();
    assert_eq!(
        (
            at9[0].current_txn_first_offset,
            at9[0].last_sequence,
            at9[0].coordinator_epoch
        ),
        (-1, 0, 0)
    );

    // A clean reopen loads the snapshot at 9 and writes nothing.
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert_eq!(snapshots(dir.path()), vec![4, 7, 9]);
    assert_eq!(log.producer_state().map_end_offset(), 9);

    // truncate_to(8) deletes the snapshot above 8 and writes one at 8.
    log.truncate_to(8).unwrap();
    assert_eq!(snapshots(dir.path()), vec![4, 7, 8]);
    // truncate_to(5): the snapshots above 5 go; the state is rebuilt from 4, where P42's
    // transaction was open, up to 5, after its commit.
    log.truncate_to(5).unwrap();
    assert_eq!(snapshots(dir.path()), vec![4, 5]);
    assert!(log.producer_state().ongoing_txns().is_empty());
    log.truncate_to(4).unwrap();
    assert_eq!(log.producer_state().ongoing_txns(), vec![(42, 3)]);
    assert_eq!(log.last_stable_offset(), 3);

    // Retention deletes the first segment and its snapshot... (segment 0 has no snapshot;
    // the segment at 4 is the active one and stays).
    fill(&log, 4, 1, 1, 4);
    log.roll(None).unwrap();
    fill(&log, 5, 1, 1, 2_000_000);
    assert_eq!(snapshots(dir.path()), vec![4, 5]);
    t.sleep(1_000_000);
    let deleted = log.delete_old_segments().unwrap();
    assert_eq!(deleted, 2, "segments 0 and 4 are older than retention.ms");
    assert_eq!(log.log_start_offset(), 5);
    assert_eq!(
        snapshots(dir.path()),
        vec![5],
        "the snapshot of the deleted segment 4 went with it"
    );

    // A full truncation deletes every snapshot.
    log.truncate_fully_and_start_at(100).unwrap();
    assert!(snapshots(dir.path()).is_empty());
}
