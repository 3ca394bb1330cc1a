//! Issue 11, finding 11: the leader-epoch cache is kept by `Log::append` and persisted in
//! `leader-epoch-checkpoint` (Kafka's format: version line `0`, a count line, then
//! `epoch start_offset` lines), across rolls and reopens, truncated with the log, and equal
//! to what recovery of the same bytes gives.
use std::path::Path;

use crate::common::*;
use segment::producer::snapshot::LEADER_EPOCH_CHECKPOINT_FILE;
use segment::record::BatchBuilder;
use segment::LogConfig;

fn at_epoch(o: i64, n: usize, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(o).partition_leader_epoch(epoch);
    for i in 0..n {
        b = b.record(o + i as i64, None, Some(b"v"));
    }
    b.build().unwrap()
}

fn checkpoint(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap()
}

fn cfg() -> LogConfig {
    LogConfig {
        retention_ms: -1,
        ..LogConfig::default()
    }
}

#[test]
fn append_assigns_epochs_and_writes_the_checkpoint() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg(), clock.clone());
    log.append(&at_epoch(0, 2, 0)).unwrap();
    assert_eq!(checkpoint(dir.path()), "0\n1\n0 0\n");
    log.append(&at_epoch(2, 2, 0)).unwrap();
    log.append(&at_epoch(4, 1, 2)).unwrap();
    log.roll(None).unwrap();
    log.append(&at_epoch(5, 3, 2)).unwrap();
    log.append(&at_epoch(8, 1, 5)).unwrap();
    assert_eq!(log.leader_epochs(), vec![(0, 0), (2, 4), (5, 8)]);
    assert_eq!(checkpoint(dir.path()), "0\n3\n0 0\n2 4\n5 8\n");
    log.close().unwrap();

    let log = open_log(dir.path(), cfg(), clock.clone());
    assert_eq!(
        log.leader_epochs(),
        vec![(0, 0), (2, 4), (5, 8)],
        "after a clean reopen"
    );
    log.append(&at_epoch(9, 1, 6)).unwrap();
    assert_eq!(log.leader_epochs(), vec![(0, 0), (2, 4), (5, 8), (6, 9)]);
    drop(log); // crash

    // Recovery of the same bytes, without the checkpoint: the same cache.
    std::fs::remove_file(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
    std::fs::remove_file(dir.path().join("recovery-point")).unwrap();
    let log = open_log(dir.path(), cfg(), clock.clone());
    assert_eq!(log.leader_epochs(), vec![(0, 0), (2, 4), (5, 8), (6, 9)]);
    assert_eq!(checkpoint(dir.path()), "0\n4\n0 0\n2 4\n5 8\n6 9\n");

    // Truncation drops the epochs that start at or above the new end.
    log.truncate_to(8).unwrap();
    assert_eq!(checkpoint(dir.path()), "0\n2\n0 0\n2 4\n");
    // Raising the log start truncates the cache from the start.
    log.increment_log_start_offset(3).unwrap();
    assert_eq!(checkpoint(dir.path()), "0\n2\n0 3\n2 4\n");
    log.truncate_fully_and_start_at(50).unwrap();
    assert_eq!(checkpoint(dir.path()), "0\n0\n");
    assert!(log.leader_epochs().is_empty());
}

#[test]
fn a_malformed_checkpoint_is_rebuilt_from_the_log() {
    for garbage in [
        &b"1\n1\n0 0\n"[..],
        b"0\n2\n0 0\n",
        b"\xff\xfe",
        b"0\n1\nx y\n",
        b"0\n1\n-1 0\n",
    ] {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg(), clock.clone());
        log.append(&at_epoch(0, 2, 1)).unwrap();
        log.append(&at_epoch(2, 2, 4)).unwrap();
        log.close().unwrap();
        std::fs::write(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE), garbage).unwrap();
        let log = open_log(dir.path(), cfg(), clock);
        assert_eq!(log.leader_epochs(), vec![(1, 0), (4, 2)], "{garbage:?}");
        assert_eq!(checkpoint(dir.path()), "0\n2\n1 0\n4 2\n");
    }
}

#[test]
fn a_broker_checkpoint_is_read() {
    // biggerbrain's partition: six epochs written by the broker; the last one (7, 14)
    // starts at the log end (a leader elected after the last batch). Kafka's loader
    // truncates the cache to the log end (`truncateFromEnd(logEndOffset)`), so the entry
    // goes, as it would on the broker's restart; the file is rewritten.
    let Some(field) = field_data::field_data_dir("segment field data") else {
        return;
    };
    let src = field.join("biggerbrain-lsx1-0");
    let dir = tmpdir();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
        let to = dir.path().join(p.file_name().unwrap());
        let mut perm = std::fs::metadata(&to).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(&to, perm).unwrap();
    }
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg(), clock);
    assert_eq!(log.log_end_offset(), 14);
    assert_eq!(
        log.leader_epochs(),
        vec![(0, 0), (1, 9), (3, 10), (5, 12), (6, 13)]
    );
    assert_eq!(checkpoint(dir.path()), "0\n5\n0 0\n1 9\n3 10\n5 12\n6 13\n");
}

#[test]
fn a_checkpoint_that_is_a_fifo_is_not_opened() {
    // Opening a FIFO for reading blocks until a writer comes: the loader must not try.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg(), clock.clone());
    log.append(&at_epoch(0, 2, 3)).unwrap();
    log.close().unwrap();
    let p = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    std::fs::remove_file(&p).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap();
    assert!(made.success());
    let log = open_log(dir.path(), cfg(), clock);
    assert_eq!(log.leader_epochs(), vec![(3, 0)]);
    assert_eq!(
        checkpoint(dir.path()),
        "0\n1\n3 0\n",
        "replaced by a regular file"
    );
}

/// Kafka's `LeaderEpochFileCache.assign`, case by case (issue 19, F6;
/// docs/kafka-behaviour.md#leader-epoch-assign).
#[test]
fn assign_follows_kafkas_rules() {
    use segment::LeaderEpochCache;
    let after = |steps: &[(i32, i64)]| {
        let mut c = LeaderEpochCache::new();
        for &(e, o) in steps {
            c.assign(e, o);
        }
        c.entries().to_vec()
    };
    // Two epochs at the same start offset: the later epoch replaces the earlier one.
    assert_eq!(after(&[(0, 0), (3, 6), (5, 6)]), vec![(0, 0), (5, 6)]);
    // A start offset below the latest one: the entries at or above it go.
    assert_eq!(after(&[(0, 0), (3, 10), (5, 6)]), vec![(0, 0), (5, 6)]);
    assert_eq!(
        after(&[(0, 0), (2, 4), (3, 10), (5, 4)]),
        vec![(0, 0), (5, 4)]
    );
    // A lower epoch at a higher offset: the higher epochs go.
    assert_eq!(after(&[(0, 0), (5, 6), (3, 10)]), vec![(0, 0), (3, 10)]);
    // A lower epoch at a lower offset: both rules remove.
    assert_eq!(after(&[(0, 0), (5, 6), (3, 2)]), vec![(0, 0), (3, 2)]);
    // The latest epoch again: a higher offset changes nothing, a lower one moves it.
    let mut c = LeaderEpochCache::from_entries(vec![(0, 0), (3, 6)]);
    assert!(!c.assign(3, 9));
    assert_eq!(c.entries(), &[(0, 0), (3, 6)]);
    assert!(c.assign(3, 4));
    assert_eq!(c.entries(), &[(0, 0), (3, 4)]);
    // Everything removed: a lower epoch at offset 0.
    assert_eq!(after(&[(2, 0), (4, 5), (1, 0)]), vec![(1, 0)]);
    // Invalid entries (Kafka's IllegalArgumentException) change nothing.
    let mut c = LeaderEpochCache::from_entries(vec![(0, 0)]);
    assert!(!c.assign(-1, 5));
    assert!(!c.assign(2, -1));
    assert_eq!(c.entries(), &[(0, 0)]);
    // The recovery rule only assigns epochs above the latest one.
    let mut c = LeaderEpochCache::from_entries(vec![(0, 0), (5, 6)]);
    assert!(!c.assign_if_newer(3, 10));
    assert!(!c.assign_if_newer(5, 2));
    assert!(c.assign_if_newer(6, 12));
    assert_eq!(c.entries(), &[(0, 0), (5, 6), (6, 12)]);
    // The load applies assign to each line in turn.
    assert_eq!(
        LeaderEpochCache::from_entries(vec![(0, 0), (3, 6), (5, 6)]).entries(),
        &[(0, 0), (5, 6)]
    );
    assert_eq!(
        LeaderEpochCache::from_entries(vec![(0, 0), (5, 6), (3, 10)]).entries(),
        &[(0, 0), (3, 10)]
    );
}

/// Issue 19, F6: a checkpoint with two epochs at one start offset (`0 0 / 3 6 / 5 6`)
/// loads as Kafka's assign leaves it, `[(0,0),(5,6)]`, and is written back that way
/// (before: loaded and written back unchanged). The same for decreasing start offsets
/// and for a lower epoch at a higher offset.
#[test]
fn a_checkpoint_out_of_order_loads_as_kafkas_assign_leaves_it() {
    for (file, want, text) in [
        (
            "0\n3\n0 0\n3 6\n5 6\n",
            vec![(0, 0), (5, 6)],
            "0\n2\n0 0\n5 6\n",
        ),
        (
            "0\n3\n0 0\n3 8\n5 6\n",
            vec![(0, 0), (5, 6)],
            "0\n2\n0 0\n5 6\n",
        ),
        (
            "0\n3\n0 0\n5 6\n3 8\n",
            vec![(0, 0), (3, 8)],
            "0\n2\n0 0\n3 8\n",
        ),
    ] {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg(), clock.clone());
        log.append(&at_epoch(0, 6, 0)).unwrap();
        log.append(&at_epoch(6, 4, 5)).unwrap();
        log.close().unwrap();
        std::fs::write(dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE), file).unwrap();
        let log = open_log(dir.path(), cfg(), clock.clone());
        assert_eq!(log.leader_epochs(), want, "{file:?}");
        assert_eq!(checkpoint(dir.path()), text, "{file:?}");
        log.close().unwrap();
        // And it stays so.
        let log = open_log(dir.path(), cfg(), clock);
        assert_eq!(log.leader_epochs(), want, "{file:?} reopened");
    }
}

/// Kafka's `truncateFromEndAsyncFlush` and `truncateFromStartAsyncFlush` on the cache,
/// found by `cargo xtask kafka --only k4-epochs`: a negative end offset is no truncation
/// in Kafka (its `endOffset >= 0` guard), where ours removed every entry (`start_offset <
/// -1` holds for none). A negative log start removes nothing either.
#[test]
fn truncations_follow_kafkas_rules() {
    use segment::LeaderEpochCache;
    let c = || LeaderEpochCache::from_entries(vec![(0, 0), (3, 6), (5, 10)]);
    for x in [-1, i64::MIN] {
        let mut t = c();
        assert!(!t.truncate_from_end(x), "truncate_from_end({x})");
        assert_eq!(
            t.entries(),
            &[(0, 0), (3, 6), (5, 10)],
            "truncate_from_end({x})"
        );
        let mut t = c();
        assert!(!t.truncate_from_start(x), "truncate_from_start({x})");
        assert_eq!(
            t.entries(),
            &[(0, 0), (3, 6), (5, 10)],
            "truncate_from_start({x})"
        );
    }
    // The end: the entries starting at or above the offset go; 0 removes them all.
    let mut t = c();
    assert!(t.truncate_from_end(6));
    assert_eq!(t.entries(), &[(0, 0)]);
    let mut t = c();
    assert!(!t.truncate_from_end(11));
    assert!(t.truncate_from_end(0));
    assert!(t.entries().is_empty());
    // The start: the entry the offset falls in starts at it, the ones before it go.
    let mut t = c();
    assert!(t.truncate_from_start(7));
    assert_eq!(t.entries(), &[(3, 7), (5, 10)]);
    assert!(!t.truncate_from_start(7));
    assert!(t.truncate_from_start(12));
    assert_eq!(t.entries(), &[(5, 12)]);
}

/// Issue 37: Kafka 4.4's `UnifiedLog.create` creates `leader-epoch-checkpoint` empty (zero
/// bytes, `CheckpointFile`'s `Files.createFile`) when it is missing, so a partition whose
/// every append was refused keeps an empty file where we used to write none
/// (docs/kafka-behaviour.md#leader-epoch-checkpoint-created).
#[test]
fn the_first_open_leaves_an_empty_checkpoint_as_kafka_does() {
    use segment::{AppendOrigin, SegmentError};
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = LogConfig {
        message_timestamp_before_max_ms: 1000,
        ..cfg()
    };
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    let path = dir.path().join(LEADER_EPOCH_CHECKPOINT_FILE);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"",
        "created empty by the open"
    );
    // Every leader append refused by validation (a timestamp far in the past).
    let stale = BatchBuilder::new(0)
        .record(1, None, Some(b"v"))
        .build()
        .unwrap();
    for epoch in [0, 3] {
        match log.append_as_leader(&stale, epoch, AppendOrigin::Client) {
            Err(SegmentError::Rejected { .. }) => {}
            other => panic!("expected a rejection, got {other:?}"),
        }
    }
    log.close().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"", "after the close");

    // Loaded as an empty cache and left as it is, clean or not.
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert!(log.leader_epochs().is_empty());
    drop(log);
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(std::fs::read(&path).unwrap(), b"");
    // The first accepted append writes it in Kafka's format.
    log.append(&at_epoch(0, 1, 2)).unwrap();
    assert_eq!(checkpoint(dir.path()), "0\n1\n2 0\n");
}
