//! One regression test per Kafka log-cleaner ticket (issue 40): each test is named
//! after its ticket, builds the situation in which Kafka's cleaner went wrong, through
//! our public API (`Log`, `Log::clean`, `Cleaner`, `segment::clean::*`), and checks the
//! rule the ticket's fix established (`docs/kafka-behaviour.md#log-cleaner`). Each was
//! seen to fail with its rule broken in the code; `docs/testing.md#cleaner-tickets`
//! lists the tickets, the tests and the line broken for each.
//!
//! Tickets without a test here, and why:
//! * KAFKA-8362 (a partition moved to another log directory or deleted keeps a stale
//!   entry in the old directory's `cleaner-offset-checkpoint`): Kafka's `LogManager`
//!   drops the entry when it moves or deletes the log. We have no `LogManager`:
//!   `Cleaner::unregister` keeps the entry on purpose
//!   (`docs/kafka-behaviour.md#cleaner-backoff`), and the stale entry's harm (a first
//!   dirty offset outside the new log) is what KAFKA-6266/KAFKA-8724's reset prevents,
//!   tested by `kafka_6266_...`.
//! * KAFKA-6264's split of legacy segments whose offsets overflow (done by the loader,
//!   not the cleaner) has its own tests in `legacy_offset_overflow_split.rs` and
//!   `many_overflowed_segments.rs`; its cleaner half (no group spans more than
//!   `i32::MAX` offsets) is `kafka_6264_...` below.

use std::path::Path;
use std::sync::Arc;

use segment::clean::{
    group_segments_by_size, read_cleaner_checkpoint, write_cleaner_checkpoint, CleanerCheckpoints,
    CleanerConfig, CompactionConfig, SegmentSummary, TopicPartition, UncleanableKind,
};
use segment::fs::RealFs;
use segment::record::{batches_from, BatchBuilder, ControlRecordType, FileBatch};
use segment::{AppendOrigin, Cleaner, CleanupPolicy, Log, LogConfig};

const NOW: i64 = 1_700_000_000_000;
const DAY: i64 = 86_400_000;

/// One batch as the tests look at it.
#[derive(Clone, Debug, PartialEq)]
struct Batch {
    base: i64,
    last: i64,
    producer_id: i64,
    transactional: bool,
    control: bool,
    horizon: Option<i64>,
    /// `(offset, key, value)` of each record.
    records: Vec<(i64, Vec<u8>, Option<Vec<u8>>)>,
}

fn batches(log: &Log) -> Vec<Batch> {
    let mut out = Vec::new();
    for s in log.segments().values() {
        let bytes = s.log().read(0, s.size()).unwrap();
        for b in batches_from(&bytes, 0) {
            let b = b.unwrap();
            let b = FileBatch::at(b.as_bytes(), 0).unwrap();
            assert!(b.is_valid(), "every batch's CRC is valid");
            let records = b
                .records()
                .unwrap()
                .map(|r| {
                    let r = r.unwrap();
                    (
                        r.offset,
                        r.key().map(<[u8]>::to_vec).unwrap_or_default(),
                        r.value().map(<[u8]>::to_vec),
                    )
                })
                .collect();
            out.push(Batch {
                base: b.base_offset(),
                last: b.last_offset(),
                producer_id: b.producer_id(),
                transactional: b.is_transactional(),
                control: b.is_control(),
                horizon: b.as_v2().and_then(|v| v.delete_horizon_ms()),
                records,
            });
        }
    }
    out
}

/// The latest value of each key, as a consumer reading the whole log sees it.
fn latest(log: &Log) -> std::collections::BTreeMap<Vec<u8>, Option<Vec<u8>>> {
    let mut m = std::collections::BTreeMap::new();
    for b in batches(log).into_iter().filter(|b| !b.control) {
        for (_, k, v) in b.records {
            m.insert(k, v);
        }
    }
    m
}

fn config(segment_bytes: u64) -> LogConfig {
    LogConfig {
        compact: true,
        segment_bytes,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

/// A log whose high watermark the test moves (a leader's).
fn open_leader(dir: &Path, name: &str, config: LogConfig) -> Log {
    Log::options()
        .manual_high_watermark(0)
        .open(dir.join(name), config)
        .unwrap()
}

fn put(log: &Log, kvs: &[(&str, Option<&str>)]) {
    let mut b = BatchBuilder::new(log.log_end_offset());
    for (k, v) in kvs {
        b = b.record(NOW, Some(k.as_bytes()), v.map(str::as_bytes));
    }
    log.append(&b.build().unwrap()).unwrap();
}

fn put_leader(log: &Log, kvs: &[(&str, Option<&str>)]) {
    let mut b = BatchBuilder::new(0);
    for (k, v) in kvs {
        b = b.record(NOW, Some(k.as_bytes()), v.map(str::as_bytes));
    }
    log.append_as_leader(&b.build().unwrap(), 0, AppendOrigin::Client)
        .unwrap();
}

fn txn_data(log: &Log, pid: i64, seq: i32, key: &str) {
    let b = BatchBuilder::new(0)
        .producer(pid, 0, seq)
        .transactional(true)
        .record(NOW, Some(key.as_bytes()), Some(b"t"))
        .build()
        .unwrap();
    log.append_as_leader(&b, 0, AppendOrigin::Client).unwrap();
}

fn marker(log: &Log, pid: i64, t: ControlRecordType) {
    let b = BatchBuilder::new(0)
        .producer(pid, 0, -1)
        .build_end_txn_marker(t, 0, NOW)
        .unwrap();
    log.append_as_leader(&b, 0, AppendOrigin::Coordinator)
        .unwrap();
}

fn clean(log: &Log, cleaner: &CleanerConfig, now: i64) -> segment::CleanerStats {
    log.clean(cleaner, &CompactionConfig::default(), now)
        .unwrap()
}

fn tp_checkpoint(dir: &Path, tp: &TopicPartition) -> Option<i64> {
    read_cleaner_checkpoint(&RealFs, dir)
        .unwrap()
        .get(tp)
        .copied()
}

/// The aborted transactions of the whole log's transaction indexes.
fn aborted_txns(log: &Log) -> Vec<(i64, i64, i64)> {
    let mut out = Vec::new();
    for s in log.segments().values() {
        for t in s
            .collect_aborted_txns(0, i64::MAX)
            .unwrap()
            .aborted_transactions
        {
            out.push((t.producer_id, t.first_offset, t.last_offset));
        }
    }
    out
}

/// KAFKA-13727: a clean that stops inside a segment (its offset map full) still copies
/// the rest of the segment; the transactions aborted in that uncleaned rest must be
/// collected too (up to the segment's end, not the map's), or the aborted data is
/// copied as committed and its ABORT marker later removed.
#[test]
fn kafka_13727_abort_marker_kept_while_its_data_remains() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_leader(dir.path(), "t-0", config(1 << 20));
    for i in 0..10 {
        put_leader(&log, &[(&format!("k{i}"), Some("v"))]); // 0..=9
    }
    txn_data(&log, 7, 0, "z"); // 10, aborted
    marker(&log, 7, ControlRecordType::Abort); // 11
    put_leader(&log, &[("k0", Some("w"))]); // 12
    log.roll(None).unwrap();
    put_leader(&log, &[("k1", Some("w"))]); // 13, active
    log.update_high_watermark(log.log_end_offset()).unwrap();
    assert_eq!(aborted_txns(&log), vec![(7, 10, 11)]);

    // An offset map of 6 slots: 5 keys per clean, the first clean stops at offset 5.
    let small = CleanerConfig {
        dedupe_buffer_size: 6 * 24,
        ..CleanerConfig::default()
    };
    let check = |log: &Log, when: &str| {
        let txns = aborted_txns(log);
        for b in batches(log) {
            for (o, k, _) in &b.records {
                if k == b"z" {
                    assert!(
                        txns.iter().any(|&(p, f, l)| p == 7 && f <= *o && *o <= l),
                        "{when}: the aborted record at {o} is left without its aborted \
                         transaction: {txns:?} {:?}",
                        batches(log)
                    );
                }
            }
        }
    };
    let stats = clean(&log, &small, NOW);
    assert_eq!(stats.end_offset, 5, "the clean stops inside the segment");
    check(&log, "after the partial clean");
    // Later cleans past the markers' horizons.
    for round in 1..=3 {
        clean(&log, &CleanerConfig::default(), NOW + 2 * DAY * round);
        check(&log, &format!("after clean {round}"));
    }
    assert!(!latest(&log).contains_key(&b"z"[..]), "{:?}", batches(&log));
}

/// KAFKA-8351: a transaction whose data and marker are in different groups of one
/// clean: the marker must know the data was seen in an earlier group (the transaction
/// metadata is carried across groups), or a COMMIT marker is removed while its data
/// remains (a hanging transaction).
#[test]
fn kafka_8351_marker_kept_while_its_transaction_spans_groups() {
    let dir = tempfile::tempdir().unwrap();
    // Segments of at most 1 KiB: no two fit one group.
    let log = open_leader(dir.path(), "t-0", config(1024));
    txn_data(&log, 7, 0, "z"); // 0: committed below
    for i in 0..8 {
        put_leader(&log, &[(&format!("a{i}"), Some(&"v".repeat(60)))]);
    }
    log.roll(None).unwrap();
    for i in 0..8 {
        put_leader(&log, &[(&format!("b{i}"), Some(&"v".repeat(60)))]);
    }
    marker(&log, 7, ControlRecordType::Commit);
    log.roll(None).unwrap();
    put_leader(&log, &[("c", Some("v"))]); // active
                                           // Producer 7 goes on: that marker is no longer its last batch (which a clean keeps
                                           // whatever else it knows).
    txn_data(&log, 7, 1, "z2");
    marker(&log, 7, ControlRecordType::Commit);
    log.update_high_watermark(log.log_end_offset()).unwrap();

    let check = |log: &Log, when: &str| {
        let bs = batches(log);
        for (i, b) in bs.iter().enumerate() {
            if b.transactional && !b.control && !b.records.is_empty() {
                // The producer's next batch ends its transaction.
                assert!(
                    bs[i + 1..]
                        .iter()
                        .find(|m| m.producer_id == b.producer_id)
                        .is_some_and(|m| m.control),
                    "{when}: the data at {} has lost its marker: {bs:?}",
                    b.base
                );
            }
        }
    };
    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert!(stats.segments_written >= 2, "several groups: {stats:?}");
    check(&log, "after the first clean");
    put_leader(&log, &[("d", Some("v"))]);
    log.roll(None).unwrap();
    put_leader(&log, &[("e", Some("v"))]);
    log.update_high_watermark(log.log_end_offset()).unwrap();
    clean(&log, &CleanerConfig::default(), NOW + 2 * DAY);
    check(&log, "after a clean past the horizons");
    assert_eq!(latest(&log)[&b"z"[..]], Some(b"t".to_vec()));
}

/// KAFKA-13194: the high watermark inside a non-active segment bounds the clean (the
/// last stable offset is at most the high watermark): records above it may still be
/// truncated away, so they must not supersede committed ones.
#[test]
fn kafka_13194_no_clean_past_the_high_watermark() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_leader(dir.path(), "t-0", config(1 << 20));
    put_leader(&log, &[("k", Some("committed"))]); // 0
    put_leader(&log, &[("x", Some("1"))]); // 1
    log.roll(None).unwrap();
    put_leader(&log, &[("k", Some("uncommitted"))]); // 2
    put_leader(&log, &[("x", Some("2"))]); // 3
    log.roll(None).unwrap();
    put_leader(&log, &[("y", Some("1"))]); // 4, active
                                           // Only the first segment is replicated.
    log.update_high_watermark(2).unwrap();
    assert_eq!(log.bounds().last_stable_offset, 2);

    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert!(
        stats.end_offset <= 2,
        "the clean ends at the high watermark: {stats:?}"
    );
    // A new leader without offsets 2.. makes this replica truncate them.
    log.truncate_to(2).unwrap();
    assert_eq!(
        latest(&log).get(&b"k"[..]),
        Some(&Some(b"committed".to_vec())),
        "{:?}",
        batches(&log)
    );
}

/// KAFKA-17076 (refined by KAFKA-20452): the batch ending at the high watermark is kept,
/// empty if all its records go, so that a replica copying the cleaned log reaches the
/// same log end; other batches whose records all go are removed.
#[test]
fn kafka_17076_log_end_kept_when_the_last_batches_are_cleaned_away() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_leader(dir.path(), "t-0", config(1 << 20));
    let keyless = |log: &Log| {
        // A replica's copy of an old (pre-validation) keyless record.
        let b = BatchBuilder::new(log.log_end_offset())
            .record(NOW, None, Some(b"x"))
            .build()
            .unwrap();
        log.append(&b).unwrap();
    };
    keyless(&log); // 0
    put_leader(&log, &[("a", Some("1"))]); // 1
    keyless(&log); // 2: the last batch, all of whose records a clean drops
    log.roll(None).unwrap(); // the active segment is empty
    log.update_high_watermark(log.log_end_offset()).unwrap();
    let end = log.log_end_offset();
    assert_eq!(end, 3);
    clean(&log, &CleanerConfig::default(), NOW);
    let kept: Vec<(i64, i64, usize)> = batches(&log)
        .iter()
        .map(|b| (b.base, b.last, b.records.len()))
        .collect();
    // The batch ending at the high watermark stays, empty; the other emptied batch
    // goes (KAFKA-20452: only the one at the high watermark is kept).
    assert_eq!(kept, vec![(1, 1, 1), (2, 2, 0)]);

    // A new replica copies the leader's log from its start: it reaches the same end.
    let follower = Log::open(dir.path().join("follower-0"), config(1 << 20)).unwrap();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let read = log.read(next, 1 << 20).unwrap();
        if read.records.is_empty() {
            break;
        }
        follower.append(&read.records).unwrap();
        next = follower.log_end_offset();
    }
    assert_eq!(follower.log_end_offset(), end);
    assert_eq!(log.log_end_offset(), end);
}

/// KAFKA-4529: a tombstone stays `delete.retention.ms` after the first clean that saw
/// it (its batch gets the horizon then), whatever its own timestamp.
#[test]
fn kafka_4529_tombstone_kept_for_delete_retention_after_its_first_clean() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap();
    let old = NOW - 30 * DAY;
    log.append(
        &BatchBuilder::new(0)
            .record(old, Some(b"k"), Some(b"v"))
            .build()
            .unwrap(),
    )
    .unwrap();
    log.append(
        &BatchBuilder::new(1)
            .record(old, Some(b"k"), None)
            .build()
            .unwrap(),
    )
    .unwrap();
    let dirty = |i: i64| {
        log.roll(None).unwrap();
        put(&log, &[(&format!("other{i}"), Some("v"))]);
        log.roll(None).unwrap();
    };
    let has_tombstone = |log: &Log| latest(log).get(&b"k"[..]) == Some(&None);
    dirty(0);
    clean(&log, &CleanerConfig::default(), NOW);
    assert!(has_tombstone(&log), "kept by its first clean");
    let horizon = batches(&log)
        .iter()
        .find(|b| b.records.iter().any(|r| r.1 == b"k"))
        .and_then(|b| b.horizon);
    assert_eq!(horizon, Some(NOW + DAY));
    dirty(1);
    clean(&log, &CleanerConfig::default(), NOW + DAY - 1);
    assert!(has_tombstone(&log), "kept until its horizon");
    dirty(2);
    clean(&log, &CleanerConfig::default(), NOW + DAY);
    assert!(!latest(&log).contains_key(&b"k"[..]), "gone at its horizon");
}

/// KAFKA-9826: a first dirty offset inside the active segment (past the first
/// uncleanable offset, not on a segment boundary) gives nothing cleanable: the cleaner
/// does not choose the log over and over.
#[test]
fn kafka_9826_first_dirty_offset_inside_the_active_segment_is_not_cleaned_forever() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap());
    for i in 0..4 {
        put(&log, &[("k", Some(&i.to_string()))]);
    }
    log.roll(None).unwrap();
    for i in 0..4 {
        put(&log, &[("k", Some(&i.to_string()))]); // 4..=7, active
    }
    let tp = TopicPartition::new("t", 0);
    // The checkpoint says 6: inside the active segment.
    let mut cp = CleanerCheckpoints::new();
    cp.insert(tp.clone(), 6);
    write_cleaner_checkpoint(&RealFs, dir.path(), &cp).unwrap();
    let cleaner = Cleaner::new(CleanerConfig {
        num_threads: 0,
        ..CleanerConfig::default()
    })
    .unwrap();
    cleaner
        .register(
            tp.clone(),
            log.clone(),
            CompactionConfig {
                min_cleanable_dirty_ratio: 0.0,
                ..CompactionConfig::default()
            },
            CleanupPolicy::Compact,
        )
        .unwrap();
    for _ in 0..3 {
        assert!(!cleaner.run_once(), "nothing is cleanable");
    }
    assert_eq!(cleaner.cleans_completed(), 0);
    assert_eq!(tp_checkpoint(dir.path(), &tp), Some(6));
}

/// KAFKA-8764: a first dirty offset in a gap of the offsets (records removed by an
/// earlier clean) with no record after it in its segment: the map's build still moves
/// the first dirty offset on to the segment's end, and a second clean has nothing left
/// to do (the clean does not start from the same offset again and again).
#[test]
fn kafka_8764_first_dirty_offset_in_a_gap_still_progresses() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap();
    // Offsets 0 and 10 (a compacted replica's copy), then nothing up to 30.
    for (o, k) in [(0, "a"), (10, "b")] {
        log.append(
            &BatchBuilder::new(o)
                .record(NOW, Some(k.as_bytes()), Some(b"v"))
                .build()
                .unwrap(),
        )
        .unwrap();
    }
    log.roll(Some(30)).unwrap();
    log.append(
        &BatchBuilder::new(30)
            .record(NOW, Some(b"c"), Some(b"v"))
            .build()
            .unwrap(),
    )
    .unwrap(); // 30, active
    let tp = TopicPartition::new("t", 0);
    let mut cp = CleanerCheckpoints::new();
    cp.insert(tp.clone(), 15);
    write_cleaner_checkpoint(&RealFs, dir.path(), &cp).unwrap();
    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert_eq!(stats.first_dirty_offset, 15);
    assert_eq!(
        stats.end_offset, 30,
        "the clean ends at the active segment: {stats:?}"
    );
    assert_eq!(tp_checkpoint(dir.path(), &tp), Some(30));
    let again = clean(&log, &CleanerConfig::default(), NOW);
    assert_eq!((again.first_dirty_offset, again.end_offset), (30, 30));
    assert_eq!(latest(&log).len(), 3);
}

/// KAFKA-7215 / KAFKA-8725: a partition whose clean fails is marked uncleanable with the
/// reason and left alone; the other partitions go on being cleaned (the cleaner does not
/// stop, nor retry the failing one forever).
#[test]
fn kafka_7215_failing_partition_marked_uncleanable_and_others_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let bad = Arc::new(Log::open(dir.path().join("bad-0"), config(1 << 20)).unwrap());
    let good = Arc::new(Log::open(dir.path().join("good-0"), config(1 << 20)).unwrap());
    for i in 0..40 {
        put(&bad, &[("k", Some(&i.to_string()))]);
    }
    // A batch larger than message.max.bytes: Kafka's clean fails on it.
    put(&bad, &[("big", Some(&"x".repeat(100_000)))]);
    bad.roll(None).unwrap();
    for i in 0..4 {
        put(&good, &[("k", Some(&i.to_string()))]);
    }
    good.roll(None).unwrap();
    let cleaner = Cleaner::new(CleanerConfig {
        num_threads: 0,
        max_message_size: 70_000,
        ..CleanerConfig::default()
    })
    .unwrap();
    let (tbad, tgood) = (
        TopicPartition::new("bad", 0),
        TopicPartition::new("good", 0),
    );
    for (tp, log) in [(&tbad, &bad), (&tgood, &good)] {
        cleaner
            .register(
                tp.clone(),
                log.clone(),
                CompactionConfig::default(),
                CleanupPolicy::Compact,
            )
            .unwrap();
    }
    // Both are fully dirty (ratio 1.0); each pass cleans one.
    for _ in 0..3 {
        cleaner.run_once();
    }
    let u = cleaner.uncleanable();
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(u[0].1, tbad);
    assert_eq!(
        u[0].2.kind,
        UncleanableKind::CorruptBatch,
        "{:?}",
        u[0].2.error
    );
    assert!(
        cleaner.last_stats(&tgood).is_some(),
        "the good log was cleaned"
    );
    assert_eq!(latest(&good)[&b"k"[..]], Some(b"3".to_vec()));
    assert_eq!(batches(&good).len(), 1);
    assert_eq!(tp_checkpoint(dir.path(), &tgood), Some(4));
    assert_eq!(tp_checkpoint(dir.path(), &tbad), None);
}

/// KAFKA-8335: an empty batch kept for its producer (its last batch) is removed once a
/// later batch of that producer supersedes it; only the producer's last batch is kept.
#[test]
fn kafka_8335_empty_batch_removed_once_its_producer_moved_on() {
    let dir = tempfile::tempdir().unwrap();
    let log = open_leader(dir.path(), "t-0", config(1 << 20));
    let idem = |log: &Log, seq: i32, key: &str, value: &str| {
        let b = BatchBuilder::new(0)
            .producer(5, 0, seq)
            .record(NOW, Some(key.as_bytes()), Some(value.as_bytes()))
            .build()
            .unwrap();
        log.append_as_leader(&b, 0, AppendOrigin::Client).unwrap();
    };
    idem(&log, 0, "a", "1"); // 0
    idem(&log, 1, "a", "2"); // 1: producer 5's last batch
    put_leader(&log, &[("a", Some("3"))]); // 2
    log.roll(None).unwrap();
    put_leader(&log, &[("x", Some("1"))]); // 3, active
    log.update_high_watermark(log.log_end_offset()).unwrap();
    clean(&log, &CleanerConfig::default(), NOW);
    let shape = |log: &Log| -> Vec<(i64, i64, usize)> {
        batches(log)
            .iter()
            .map(|b| (b.base, b.producer_id, b.records.len()))
            .collect()
    };
    assert_eq!(
        shape(&log),
        vec![(1, 5, 0), (2, -1, 1), (3, -1, 1)],
        "only the producer's last batch is kept empty"
    );
    // The producer writes again: its old empty batch is no longer its last.
    idem(&log, 2, "b", "1"); // 4
    log.roll(None).unwrap();
    put_leader(&log, &[("y", Some("1"))]); // 5, active
    log.update_high_watermark(log.log_end_offset()).unwrap();
    clean(&log, &CleanerConfig::default(), NOW);
    assert_eq!(
        shape(&log),
        vec![(2, -1, 1), (3, -1, 1), (4, 5, 1), (5, -1, 1)],
        "the superseded empty batch is removed"
    );
}

/// KAFKA-6264 / KAFKA-20036: a group never spans more than `i32::MAX` offsets (offsets
/// relative to a segment's base are 4 bytes): segments whose offsets are that far
/// apart are cleaned into separate segments, not one that cannot index them.
#[test]
fn kafka_6264_groups_never_span_more_than_i32_max_offsets() {
    let far = i64::from(i32::MAX) + 100;
    let seg = |base: i64| SegmentSummary {
        base_offset: base,
        size: 100,
        largest_timestamp: NOW,
        first_batch_timestamp: NOW,
        last_modified: NOW,
        offset_index_bytes: 8,
        time_index_bytes: 12,
    };
    // The span of a segment is estimated up to the next one's base offset: 20's reaches
    // `far - 1`, too far from 0 (and from 10) to join their group.
    let segs = [seg(0), seg(10), seg(20), seg(far), seg(far + 5)];
    let groups = group_segments_by_size(&segs, 1 << 30, 10 << 20, far + 10);
    assert_eq!(groups, vec![0..2, 2..3, 3..5]);

    // The same through a clean of a real log.
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap();
    put(&log, &[("a", Some("1"))]); // 0
    log.append(
        &BatchBuilder::new(far)
            .record(NOW, Some(b"b"), Some(b"1"))
            .build()
            .unwrap(),
    )
    .unwrap();
    log.roll(None).unwrap();
    put(&log, &[("c", Some("1"))]); // active
    let bases: Vec<i64> = log
        .segments()
        .values()
        .iter()
        .map(|s| s.base_offset())
        .collect();
    assert_eq!(
        bases.len(),
        3,
        "the offset jump rolled a segment: {bases:?}"
    );
    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert_eq!(stats.segments_written, 2, "{stats:?}");
    assert_eq!(latest(&log).len(), 3);
    let reopened = {
        drop(log);
        Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap()
    };
    assert_eq!(latest(&reopened).len(), 3);
}

/// KAFKA-12889: segments emptied by a clean are grouped with their neighbours even when
/// their offset span exceeds `i32::MAX` (an empty segment has no offset to index), so a
/// log whose data was cleaned away does not keep one empty segment per old segment.
#[test]
fn kafka_12889_empty_segments_grouped_despite_their_offset_span() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap();
    let span = i64::from(i32::MAX) + 1;
    for i in 0..3 {
        put(&log, &[("k", Some("v"))]);
        // The last offset of the i-th segment's span.
        log.append(
            &BatchBuilder::new((i + 1) * span - 1)
                .record(NOW, Some(b"k"), Some(b"v"))
                .build()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(log.segments().values().len(), (i + 1) as usize);
    }
    put(&log, &[("k", Some("v"))]); // active
    assert_eq!(log.segments().values().len(), 4);
    // Every record but the last is superseded: the first clean empties the first
    // segments (each its own group: they are not empty yet).
    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert_eq!(stats.segments_written, 3, "{stats:?}");
    assert_eq!(log.segments().values().len(), 4);
    log.roll(None).unwrap();
    put(&log, &[("j", Some("v"))]);
    // The emptied segments now group together.
    let stats = clean(&log, &CleanerConfig::default(), NOW);
    assert!(stats.segments_written < stats.segments_cleaned, "{stats:?}");
    assert!(
        log.segments().values().len() < 5,
        "{}",
        log.segments().values().len()
    );
}

/// KAFKA-6266 (and KAFKA-8724): a checkpointed first dirty offset below the log start
/// (retention or `delete_records` moved it) or above the log end (a truncation) is
/// reset to the log start and written back, even when the log is not chosen for a
/// clean, so that it is not reset (and warned about) again and again.
#[test]
fn kafka_6266_out_of_range_checkpoint_reset_and_written_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap());
    for i in 0..6 {
        put(&log, &[(&format!("k{i}"), Some("v"))]);
    }
    log.roll(None).unwrap();
    put(&log, &[("z", Some("v"))]);
    // DeleteRecords up to 3 (the log start moves into the first segment).
    log.increment_log_start_offset(3).unwrap();
    let start = log.log_start_offset();
    assert_eq!(start, 3);
    let tp = TopicPartition::new("t", 0);
    let cleaner = Cleaner::new(CleanerConfig {
        num_threads: 0,
        ..CleanerConfig::default()
    })
    .unwrap();
    // Not dirty enough to be chosen: nothing is ever cleaned.
    let strict = CompactionConfig {
        min_cleanable_dirty_ratio: 1.0,
        ..CompactionConfig::default()
    };
    cleaner
        .register(tp.clone(), log.clone(), strict, CleanupPolicy::Compact)
        .unwrap();
    for stale in [1, 1000] {
        let mut cp = CleanerCheckpoints::new();
        cp.insert(tp.clone(), stale);
        write_cleaner_checkpoint(&RealFs, dir.path(), &cp).unwrap();
        assert!(!cleaner.run_once());
        assert_eq!(cleaner.cleans_completed(), 0);
        assert_eq!(
            tp_checkpoint(dir.path(), &tp),
            Some(start),
            "the checkpoint {stale} is reset to the log start"
        );
    }
}

/// Appends five segments of an idempotent producer's batches and rolls: the log a clean
/// of KAFKA-12520's test rewrites.
fn fill_for_swap(log: &Log) {
    // Now: the producer must not have expired (producer.id.expiration.ms) at the open.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut seq = 0;
    for _ in 0..5 {
        for k in ["a", "b", "c", "d"] {
            let b = BatchBuilder::new(log.log_end_offset())
                .producer(3, 0, seq)
                .record(now, Some(k.as_bytes()), Some(b"v"))
                .build()
                .unwrap();
            log.append(&b).unwrap();
            seq += 1;
        }
        log.roll(None).unwrap();
    }
    // The recovery point at the log end: a crash now recovers no data segment.
    log.flush().unwrap();
}

/// KAFKA-12520: an open that completes an interrupted clean's swap does not recover the
/// swapped-in segments (Kafka's loader recovered each one, rebuilding the producer state
/// from the log start every time, which took hours on large logs): it recovers what a
/// crash without a swap recovers, and the producer state comes out the same.
#[test]
fn kafka_12520_completing_a_swap_recovers_no_more_segments() {
    use segment::fs::{Fault, FaultyFs, FsOp, EIO};
    // Baseline: the same log, the clean completed, then a crash (no clean shutdown).
    let ok = tempfile::tempdir().unwrap();
    let log = Log::open(ok.path().join("t-0"), config(1 << 20)).unwrap();
    fill_for_swap(&log);
    clean(&log, &CleanerConfig::default(), NOW);
    let expect = latest(&log);
    drop(log);
    let log = Log::open(ok.path().join("t-0"), config(1 << 20)).unwrap();
    let baseline = log.stats().scanned_segments();
    assert!(baseline <= 1, "at most the active segment: {baseline}");
    assert!(log.stats().swap_replacement().is_none());
    let baseline_end = log.log_end_offset();
    let last_seq = |log: &Log| log.producer_state().active_producers()[&3].last_seq();
    assert_eq!(last_seq(&log), 19);
    drop(log);

    // The clean fails at the `.swap` -> `.log` rename: the next open completes it.
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultyFs::new());
    fs.inject(Fault::new(FsOp::Rename, EIO).on_path(".log.swap").times(1));
    let log = Log::options()
        .fs(fs.clone())
        .open(dir.path().join("t-0"), config(1 << 20))
        .unwrap();
    fill_for_swap(&log);
    log.clean(&CleanerConfig::default(), &CompactionConfig::default(), NOW)
        .unwrap_err();
    assert!(log.is_offline());
    drop(log);
    let log = Log::open(dir.path().join("t-0"), config(1 << 20)).unwrap();
    let swap = log
        .stats()
        .swap_replacement()
        .expect("the swap was completed");
    assert!(!swap.swap_base_offsets.is_empty());
    assert_eq!(
        log.stats().scanned_segments(),
        baseline,
        "the swapped-in segments {:?} are not recovered",
        swap.swap_base_offsets
    );
    assert_eq!(log.log_end_offset(), baseline_end);
    assert_eq!(last_seq(&log), 19);
    assert_eq!(latest(&log), expect);
}
