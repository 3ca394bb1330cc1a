//! Issue 11, finding 11: `Log::append` keeps producer state, writes the `.txnindex` entry
//! of every ABORT marker (first offset, marker offset, LSO as Kafka computes it) and
//! assigns leader epochs — with the same result as recovery of the same bytes (except for a
//! batch stamped with a lower epoch than the latest, where Kafka's two rules differ). Every real
//! Kafka partition and generated transactional workloads (commit, abort, overlapping
//! producers, a transaction spanning a roll) are appended and compared with recovery.
use std::path::{Path, PathBuf};

use crate::common::*;
use index_txn::AbortedTxn;
use segment::format::{scan, BatchFormat};
use segment::record::{BatchBuilder, ControlRecordType};
use segment::{KafkaBatchFormat, Log, LogConfig};

fn cfg() -> LogConfig {
    LogConfig {
        retention_ms: -1,
        ..LogConfig::default()
    }
}

/// The optional field data (`None`: skipped outside CI, a failure under `CI=true`).
fn data_dir() -> Option<PathBuf> {
    field_data::field_data_dir("segment field data")
}

/// Everything the producer state and the epoch cache decide, as seen through the log.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    txn_indexes: Vec<(i64, Vec<u8>)>,
    aborted: Vec<AbortedTxn>,
    aborted_from: Vec<Vec<AbortedTxn>>,
    epochs: Vec<(i32, i64)>,
    producers: Vec<segment::producer::snapshot::SnapshotEntry>,
    ongoing: Vec<(i64, i64)>,
    lso: i64,
    leo: i64,
}

fn outcome(log: &Log) -> Outcome {
    let txn_indexes = log
        .segments()
        .values()
        .iter()
        .map(|s| {
            let p = s.file(segment::names::FileKind::TxnIndex);
            (s.base_offset(), std::fs::read(p).unwrap_or_default())
        })
        .collect();
    let leo = log.log_end_offset();
    let step = (leo / 7).max(1);
    let aborted_from = (0..8)
        .map(|i| log.collect_aborted_txns(i * step, leo).unwrap())
        .collect();
    let ps = log.producer_state();
    Outcome {
        txn_indexes,
        aborted: log.collect_aborted_txns(0, i64::MAX).unwrap(),
        aborted_from,
        epochs: log.leader_epochs(),
        producers: ps.snapshot_entries(),
        ongoing: ps.ongoing_txns(),
        lso: log.last_stable_offset(),
        leo,
    }
}

/// Appends `segments` (each a list of batches, a roll between segments) through
/// `Log::append`, one batch per call or all of a segment in one call.
fn append_all(dir: &Path, segments: &[(i64, Vec<Vec<u8>>)], one_call: bool) -> Log {
    let (_t, clock) = mock();
    let log = open_log(dir, cfg(), clock);
    for (i, (base, batches)) in segments.iter().enumerate() {
        if i > 0 {
            log.roll(Some(*base)).unwrap();
        }
        if one_call {
            let all: Vec<u8> = batches.concat();
            if !all.is_empty() {
                log.append(&all).unwrap();
            }
        } else {
            for b in batches {
                log.append(b).unwrap();
            }
        }
    }
    log
}

/// Copies the segment files of `dir` (not the txn indexes, snapshots, checkpoints or the
/// clean marker) and opens the copy: a full recovery of the same bytes.
fn recover_copy(dir: &Path) -> (tempfile::TempDir, Log) {
    let dst = tmpdir();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".log") || name.ends_with(".index") || name.ends_with(".timeindex") {
            std::fs::copy(&p, dst.path().join(&name)).unwrap();
        }
    }
    let (_t, clock) = mock();
    let log = open_log(dst.path(), cfg(), clock);
    (dst, log)
}

/// Checks append == reopen after close == recovery of the same bytes.
fn check(segments: &[(i64, Vec<Vec<u8>>)], what: &str) -> Outcome {
    let mut first = None;
    for one_call in [false, true] {
        let dir = tmpdir();
        let log = append_all(dir.path(), segments, one_call);
        let appended = outcome(&log);
        log.close().unwrap();
        let (_t, clock) = mock();
        let reopened = open_log(dir.path(), cfg(), clock);
        assert_eq!(
            reopened.stats().scanned_segments(),
            0,
            "{what}: clean reopen"
        );
        assert_eq!(outcome(&reopened), appended, "{what}: reopen after close");
        let (_d, recovered) = recover_copy(dir.path());
        assert_eq!(
            outcome(&recovered),
            appended,
            "{what}: recovery of the same bytes"
        );
        if let Some(f) = &first {
            assert_eq!(
                &appended, f,
                "{what}: one append per batch vs one per segment"
            );
        }
        first = Some(appended);
    }
    first.unwrap()
}

/// A non-transactional batch of `n` records at `o`, stamped with leader epoch `epoch`.
fn plain(o: i64, n: usize, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(o).partition_leader_epoch(epoch);
    for i in 0..n {
        b = b.record(1000 + o + i as i64, None, Some(b"v"));
    }
    b.build().unwrap()
}

/// Kafka's two epoch rules differ for a batch stamped with a lower epoch than the
/// latest: the append path (`UnifiedLog.append` → `LeaderEpochFileCache.assign`)
/// assigns it, removing every entry with an epoch or start offset at or above it, while
/// recovery (`LogSegment.recover`) assigns only epochs above the latest
/// (`docs/kafka-behaviour.md#leader-epoch-assign`). Both are followed exactly.
#[test]
fn a_lower_epoch_at_a_higher_offset_is_assigned_on_append_and_ignored_by_recovery() {
    let dir = tmpdir();
    let segs = vec![(0, vec![plain(0, 2, 3), plain(2, 1, 0)])];
    let log = append_all(dir.path(), &segs, false);
    assert_eq!(log.leader_epochs(), vec![(0, 2)], "append: Kafka's assign");
    log.close().unwrap();
    let (_d, recovered) = recover_copy(dir.path());
    assert_eq!(
        recovered.leader_epochs(),
        vec![(3, 0)],
        "recovery: only epochs above the latest"
    );
}

fn data(o: i64, n: usize, pid: i64, seq: i32, txn: bool) -> Vec<u8> {
    let mut b = BatchBuilder::new(o)
        .partition_leader_epoch(3)
        .producer(pid, 0, seq)
        .transactional(txn);
    for i in 0..n {
        b = b.record(1000 + o + i as i64, None, Some(b"v"));
    }
    b.build().unwrap()
}

fn marker(o: i64, pid: i64, t: ControlRecordType) -> Vec<u8> {
    BatchBuilder::new(o)
        .partition_leader_epoch(3)
        .producer(pid, 0, -1)
        .build_end_txn_marker(t, 5, 1000 + o)
        .unwrap()
}

#[test]
fn commit_and_abort_single_producer() {
    use ControlRecordType::*;
    let segs = vec![(
        0,
        vec![
            data(0, 2, 1, 0, true),
            marker(2, 1, Commit),
            data(3, 3, 1, 2, true),
            marker(6, 1, Abort),
            plain(7, 1, 3),
        ],
    )];
    let o = check(&segs, "commit/abort");
    assert_eq!(o.aborted, vec![AbortedTxn::new(1, 3, 6, 7)]);
    assert_eq!(o.epochs, vec![(3, 0)], "one epoch, from offset 0");
    assert!(o.ongoing.is_empty());
    assert_eq!(o.lso, 8);
}

#[test]
fn overlapping_producers_lso_is_the_other_ongoing_txn() {
    use ControlRecordType::*;
    let segs = vec![(
        0,
        vec![
            data(0, 1, 10, 0, true), // P10 begins at 0
            data(1, 1, 20, 0, true), // P20 begins at 1
            data(2, 1, 10, 1, true),
            marker(3, 10, Abort),    // LSO = 1 (P20 still open)
            data(4, 1, 30, 0, true), // P30 begins at 4
            marker(5, 20, Abort),    // LSO = 4 (P30)
            marker(6, 30, Commit),
            data(7, 1, 10, 0, true), // P10 again, left open
        ],
    )];
    let o = check(&segs, "overlapping");
    assert_eq!(
        o.aborted,
        vec![AbortedTxn::new(10, 0, 3, 1), AbortedTxn::new(20, 1, 5, 4)]
    );
    assert_eq!(o.ongoing, vec![(10, 7)]);
    assert_eq!(o.lso, 7, "the open transaction holds the LSO back");
}

#[test]
fn transaction_spanning_a_roll() {
    use ControlRecordType::*;
    let segs = vec![
        (0, vec![batch(0, 2, 0), data(2, 2, 5, 0, true)]),
        (
            4,
            vec![
                data(4, 1, 5, 2, true),
                data(5, 1, 6, 0, true),
                marker(6, 5, Abort),
            ],
        ),
        (7, vec![marker(7, 6, Abort), plain(8, 1, 3)]),
    ];
    let o = check(&segs, "spanning a roll");
    assert_eq!(
        o.txn_indexes
            .iter()
            .map(|(b, v)| (*b, v.len()))
            .collect::<Vec<_>>(),
        vec![(0, 0), (4, 34), (7, 34)],
        "each entry is in the segment of its marker"
    );
    assert_eq!(
        o.aborted,
        vec![AbortedTxn::new(5, 2, 6, 5), AbortedTxn::new(6, 5, 7, 8)]
    );
    assert_eq!(o.epochs, vec![(0, 0), (3, 2)]);
}

/// The valid batches of a Kafka `.log` file (a torn or corrupt tail is not appended).
fn batches_of(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    for b in scan::<KafkaBatchFormat>(&bytes, 0) {
        let Ok(b) = b else { break };
        if KafkaBatchFormat::validate(b.bytes, b.info.position).is_err() {
            break;
        }
        out.push(b.bytes.to_vec());
    }
    out
}

#[test]
fn every_real_kafka_partition_appended_equals_its_recovery() {
    let Some(dir) = data_dir() else {
        return;
    };
    let mut partitions: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    partitions.sort();
    assert_eq!(partitions.len(), 17);
    let mut with_epochs = 0;
    for p in &partitions {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|f| f.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        let segs: Vec<(i64, Vec<Vec<u8>>)> = logs
            .iter()
            .map(|l| {
                let base = segment::names::offset_from_file(l).unwrap();
                (base, batches_of(l))
            })
            .filter(|(_, b)| !b.is_empty())
            .collect();
        if segs.is_empty() {
            continue;
        }
        let o = check(&segs, &p.display().to_string());
        if !o.epochs.is_empty() {
            with_epochs += 1;
        }
    }
    assert!(
        with_epochs >= 10,
        "most fixtures carry leader epochs: {with_epochs}"
    );
}
