//! The `Cleaner` (Kafka's `LogCleaner` and `LogCleanerManager`): the choice of the
//! filthiest log, pauses, truncation, retention of `compact,delete` logs, uncleanable
//! partitions and threads cleaning logs being appended to
//! (`docs/kafka-behaviour.md#cleaner-manager`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use segment::clean::{
    read_cleaner_checkpoint, CleanerConfig, CompactionConfig, LogCleaningState, TopicPartition,
    UncleanableKind,
};
use segment::fs::RealFs;
use segment::record::{batches_from, BatchBuilder, FileBatch};
use segment::{Cleaner, CleanupPolicy, Clock, Log, LogConfig, LogOptions, MockTime};

const NOW: i64 = 1_700_000_000_000;

type Kv = (i64, Vec<u8>, Option<Vec<u8>>);

fn records(log: &Log) -> Vec<Kv> {
    let mut out = Vec::new();
    for s in log.segments().values() {
        let bytes = s.log().read(0, s.size()).unwrap();
        for b in batches_from(&bytes, 0) {
            let b = b.unwrap();
            let b = FileBatch::at(b.as_bytes(), 0).unwrap();
            for r in b.records().unwrap() {
                let r = r.unwrap();
                out.push((
                    r.offset,
                    r.key().unwrap().to_vec(),
                    r.value().map(<[u8]>::to_vec),
                ));
            }
        }
    }
    out
}

fn open_log(parent: &Path, name: &str, clock: &Arc<MockTime>, config: LogConfig) -> Arc<Log> {
    let clock: Clock = clock.clone();
    Arc::new(
        LogOptions::new()
            .clock(clock)
            .open(parent.join(name), config)
            .unwrap(),
    )
}

fn compacted() -> LogConfig {
    LogConfig {
        compact: true,
        segment_bytes: 2048,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

/// Appends one batch of `(key, value)` records at the log end, timestamped `ts`.
fn put(log: &Log, ts: i64, kvs: &[(&str, Option<&str>)]) {
    let mut b = BatchBuilder::new(log.log_end_offset());
    for (k, v) in kvs {
        b = b.record(ts, Some(k.as_bytes()), v.map(str::as_bytes));
    }
    log.append(&b.build().unwrap()).unwrap();
}

/// Fills `log` with `n` rounds over keys k0..k4 and rolls, so that most of it is dirty.
fn fill(log: &Log, n: usize) {
    for i in 0..n {
        let v = format!("v{i}");
        put(
            log,
            NOW,
            &[("k0", Some(&v)), ("k1", Some(&v)), ("k2", Some(&v))],
        );
    }
    log.roll(None).unwrap();
}

fn quiet() -> CleanerConfig {
    CleanerConfig {
        num_threads: 0,
        dedupe_buffer_size: 1 << 20,
        ..CleanerConfig::default()
    }
}

/// Registers `log` as `tp`, compacted with the default compaction settings.
fn register(cleaner: &Cleaner, tp: &TopicPartition, log: &Arc<Log>) {
    cleaner
        .register(
            tp.clone(),
            log.clone(),
            CompactionConfig::default(),
            CleanupPolicy::Compact,
        )
        .unwrap();
}

fn checkpoint(dir: &Path, tp: &TopicPartition) -> Option<i64> {
    read_cleaner_checkpoint(&RealFs, dir)
        .unwrap()
        .get(tp)
        .copied()
}

#[test]
fn the_filthiest_log_is_cleaned_first_and_the_checkpoint_is_shared() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let a = open_log(dir.path(), "a-0", &clock, compacted());
    let b = open_log(dir.path(), "b-0", &clock, compacted());
    fill(&a, 20);
    fill(&b, 60);
    let cleaner = Cleaner::new(quiet()).unwrap();
    let (ta, tb) = (TopicPartition::new("a", 0), TopicPartition::new("b", 0));
    register(&cleaner, &ta, &a);
    register(&cleaner, &tb, &b);
    // Both cleaned once, then `a` made dirty by a little and `b` by a lot: both above
    // 0.5, `b` filthier though registered second.
    a.clean(&quiet_one(), &CompactionConfig::default(), NOW)
        .unwrap();
    b.clean(&quiet_one(), &CompactionConfig::default(), NOW)
        .unwrap();
    fill(&a, 3);
    fill(&b, 30);
    let ca = checkpoint(dir.path(), &ta);
    assert!(ca.is_some());
    assert!(cleaner.run_once(), "b is cleanable");
    assert!(
        cleaner.last_stats(&tb).is_some(),
        "the filthiest (b) went first"
    );
    assert!(cleaner.last_stats(&ta).is_none());
    // One file holds both partitions' entries.
    assert_eq!(checkpoint(dir.path(), &tb), Some(b.log_end_offset()));
    assert_eq!(checkpoint(dir.path(), &ta), ca);
    assert!(cleaner.run_once(), "then a");
    assert_eq!(checkpoint(dir.path(), &ta), Some(a.log_end_offset()));
    assert!(!cleaner.run_once(), "nothing dirty is left");
    assert_eq!(cleaner.cleans_completed(), 2);
}

fn quiet_one() -> CleanerConfig {
    CleanerConfig {
        num_threads: 1,
        ..quiet()
    }
}

#[test]
fn a_paused_partition_is_not_cleaned_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let a = open_log(dir.path(), "a-0", &clock, compacted());
    fill(&a, 30);
    let cleaner = Cleaner::new(quiet()).unwrap();
    let ta = TopicPartition::new("a", 0);
    register(&cleaner, &ta, &a);
    cleaner.abort_and_pause(&ta).unwrap();
    cleaner.abort_and_pause(&ta).unwrap();
    assert_eq!(cleaner.state(&ta), Some(LogCleaningState::Paused(2)));
    assert!(!cleaner.run_once());
    cleaner.resume(&ta).unwrap();
    assert!(!cleaner.run_once(), "paused twice, resumed once");
    cleaner.resume(&ta).unwrap();
    assert!(cleaner.resume(&ta).is_err(), "not paused");
    assert!(cleaner.run_once());
    assert_eq!(cleaner.state(&ta), None);
}

#[test]
fn truncation_through_the_cleaner_lowers_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let a = open_log(dir.path(), "a-0", &clock, compacted());
    fill(&a, 30);
    fill(&a, 30);
    let cleaner = Cleaner::new(quiet()).unwrap();
    let ta = TopicPartition::new("a", 0);
    register(&cleaner, &ta, &a);
    assert!(cleaner.run_once());
    let end = a.log_end_offset();
    assert_eq!(checkpoint(dir.path(), &ta), Some(end));
    assert!(cleaner.truncate_to(&ta, end - 10).unwrap());
    let active = a.segments().last_segment().unwrap().base_offset();
    assert!(active <= end - 10);
    assert_eq!(checkpoint(dir.path(), &ta), Some(active));
    assert_eq!(cleaner.state(&ta), None, "resumed");
    assert!(!cleaner.truncate_to(&ta, a.log_end_offset()).unwrap());
}

#[test]
fn compact_delete_logs_get_retention_after_a_pass_and_compact_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let config = LogConfig {
        retention_ms: 1000,
        ..compacted()
    };
    let a = open_log(dir.path(), "a-0", &clock, config.clone());
    let b = open_log(dir.path(), "b-0", &clock, config);
    fill(&a, 30);
    fill(&b, 30);
    let cleaner = Cleaner::new(quiet()).unwrap();
    let (ta, tb) = (TopicPartition::new("a", 0), TopicPartition::new("b", 0));
    let paused = CompactionConfig {
        min_cleanable_dirty_ratio: 1.0,
        ..CompactionConfig::default()
    };
    cleaner
        .register(
            ta.clone(),
            a.clone(),
            paused.clone(),
            CleanupPolicy::CompactDelete,
        )
        .unwrap();
    cleaner
        .register(tb.clone(), b.clone(), paused, CleanupPolicy::Compact)
        .unwrap();
    let (na, nb) = (
        a.segments().number_of_segments(),
        b.segments().number_of_segments(),
    );
    assert!(na > 2);
    clock.sleep(10_000);
    assert!(!cleaner.run_once(), "nothing above ratio 1.0");
    assert_eq!(
        a.segments().number_of_segments(),
        1,
        "retention.ms applied to compact,delete"
    );
    assert_eq!(
        b.segments().number_of_segments(),
        nb,
        "not to compact alone"
    );
    // Compact alone still loses the segments below its log start.
    let second = b.segments().values()[1].base_offset();
    b.increment_log_start_offset(second).unwrap();
    cleaner.run_once();
    assert_eq!(b.segments().number_of_segments(), nb - 1);
}

#[test]
fn a_failing_clean_marks_its_partition_uncleanable_and_the_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let bad = open_log(dir.path(), "bad-0", &clock, compacted());
    let good = open_log(dir.path(), "good-0", &clock, compacted());
    fill(&bad, 60);
    fill(&good, 30);
    // A batch larger than message.max.bytes (and than the offset map build's 64 KiB
    // window): Kafka's cleaner fails on it ("larger than maximum allowable size").
    let big = "x".repeat(100_000);
    let mut tail = bad.log_end_offset();
    put(&bad, NOW, &[("k0", Some(&big))]);
    tail += 1;
    assert_eq!(bad.log_end_offset(), tail);
    fill(&bad, 1);
    let mut cleaner = Cleaner::new(CleanerConfig {
        num_threads: 2,
        backoff_ms: 5,
        max_message_size: 70_000,
        ..quiet()
    })
    .unwrap();
    let (tbad, tgood) = (
        TopicPartition::new("bad", 0),
        TopicPartition::new("good", 0),
    );
    register(&cleaner, &tbad, &bad);
    register(&cleaner, &tgood, &good);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while cleaner.uncleanable().is_empty() || cleaner.last_stats(&tgood).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no progress: {:?} {:?} {:?}",
            cleaner.uncleanable(),
            cleaner.last_stats(&tbad),
            cleaner.last_stats(&tgood)
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let u = cleaner.uncleanable();
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].1, tbad);
    assert_eq!(
        u[0].2.kind,
        UncleanableKind::CorruptBatch,
        "{:?}",
        u[0].2.error
    );
    assert!(
        !bad.is_offline(),
        "a corrupt batch does not take the log offline"
    );
    // The good log keeps being cleaned as it gets dirty again.
    let before = cleaner.last_stats(&tgood).unwrap().end_offset;
    fill(&good, 60);
    cleaner.wake();
    while cleaner.last_stats(&tgood).unwrap().end_offset == before {
        assert!(
            std::time::Instant::now() < deadline,
            "good not cleaned again"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        checkpoint(dir.path(), &tbad),
        None,
        "no checkpoint for the failed clean"
    );
    cleaner.shutdown();
    // Forgotten on unregister: registered again, it is a candidate again.
    cleaner.unregister(&tbad).unwrap();
    assert!(cleaner.uncleanable().is_empty());
}

#[test]
fn threads_clean_logs_being_appended_to_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let names = ["t-0", "t-1", "t-2"];
    let logs: Vec<Arc<Log>> = names
        .iter()
        .map(|n| open_log(dir.path(), n, &clock, compacted()))
        .collect();
    let mut cleaner = Cleaner::new(CleanerConfig {
        num_threads: 2,
        backoff_ms: 1,
        ..quiet()
    })
    .unwrap();
    let compaction = CompactionConfig {
        min_cleanable_dirty_ratio: 0.1,
        delete_retention_ms: 0,
        ..CompactionConfig::default()
    };
    for (i, log) in logs.iter().enumerate() {
        cleaner
            .register(
                TopicPartition::new("t", i as i32),
                log.clone(),
                compaction.clone(),
                CleanupPolicy::Compact,
            )
            .unwrap();
    }
    let appenders: Vec<_> = logs
        .iter()
        .enumerate()
        .map(|(p, log)| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
                for i in 0..1500u32 {
                    let key = format!("k{}", (i * 7 + p as u32) % 23);
                    let value = (i % 11 != 0).then(|| format!("p{p}-{i}"));
                    put(&log, NOW, &[(&key, value.as_deref())]);
                    latest.insert(key, value);
                }
                latest
            })
        })
        .collect();
    let latest: Vec<_> = appenders.into_iter().map(|h| h.join().unwrap()).collect();
    // Let the threads catch up on what is dirty, then stop them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Let the threads catch up: every log cleaned up to its active segment, so that no
    // clean is running when they stop (a clean aborted by the shutdown may leave groups
    // swapped in beyond the checkpoint, as Kafka's do).
    let caught_up = |p: usize| {
        let active = logs[p].segments().last_segment().unwrap().base_offset();
        checkpoint(dir.path(), &TopicPartition::new("t", p as i32)) == Some(active)
    };
    while !(0..3).all(caught_up) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cleaner did not catch up"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    cleaner.shutdown();
    assert!(
        cleaner.uncleanable().is_empty(),
        "{:?}",
        cleaner.uncleanable()
    );
    for (p, log) in logs.iter().enumerate() {
        let recs = records(log);
        let tp = TopicPartition::new("t", p as i32);
        let dirty_from = checkpoint(dir.path(), &tp).expect("every log was checkpointed");
        assert!(dirty_from > 0);
        // Offsets increase, and every offset at or after the first dirty one is there.
        assert!(recs.windows(2).all(|w| w[0].0 < w[1].0));
        let leo = log.log_end_offset();
        let tail: Vec<i64> = recs
            .iter()
            .map(|r| r.0)
            .filter(|&o| o >= dirty_from)
            .collect();
        assert_eq!(
            tail,
            (dirty_from..leo).collect::<Vec<_>>(),
            "uncleaned offsets kept"
        );
        // The latest record of each key is the latest appended (a tombstone may be gone
        // once cleaned, delete.retention.ms being 0).
        let mut last: BTreeMap<String, Option<String>> = BTreeMap::new();
        for (_, k, v) in &recs {
            last.insert(
                String::from_utf8(k.clone()).unwrap(),
                v.as_ref().map(|v| String::from_utf8(v.clone()).unwrap()),
            );
        }
        for (k, v) in &latest[p] {
            match v {
                Some(v) => assert_eq!(last.get(k), Some(&Some(v.clone())), "key {k}"),
                None => assert!(matches!(last.get(k), None | Some(None)), "key {k}"),
            }
        }
        assert!(last.keys().all(|k| latest[p].contains_key(k)));
        // Cleaning removed something: fewer records than offsets below the dirty part.
        assert!((recs.len() as i64) < leo);
    }
}

/// Truncations (through the cleaner), `delete_records` and appends of one log while two
/// threads clean it: nothing deadlocks, and the log ends holding the latest value of
/// every key the model still has, and every offset from its first dirty one.
#[test]
fn truncation_and_delete_records_race_running_cleans_without_loss_or_deadlock() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(MockTime::new(NOW));
        // A follower's log: the cleaner stays below the high watermark, and truncations
        // stay above it, as Kafka's do.
        let log: Arc<Log> = Arc::new(
            LogOptions::new()
                .clock(clock.clone())
                .manual_high_watermark(0)
                .open(dir.path().join("r-0"), compacted())
                .unwrap(),
        );
        let tp = TopicPartition::new("r", 0);
        let mut cleaner = Cleaner::new(CleanerConfig {
            num_threads: 2,
            backoff_ms: 1,
            ..quiet()
        })
        .unwrap();
        let compaction = CompactionConfig {
            min_cleanable_dirty_ratio: 0.01,
            ..CompactionConfig::default()
        };
        cleaner
            .register(tp.clone(), log.clone(), compaction, CleanupPolicy::Compact)
            .unwrap();
        // The model: every (offset, key, value) appended and not truncated away.
        let mut model: Vec<(i64, String, Option<String>)> = Vec::new();
        let mut truncations = 0;
        let mut cleans_seen = 0;
        for i in 0..2000u32 {
            let key = format!("k{}", i % 17);
            let value = (i % 13 != 0).then(|| format!("v{i}"));
            let offset = log.log_end_offset();
            put(&log, NOW, &[(&key, value.as_deref())]);
            model.push((offset, key, value));
            if i % 10 == 9 {
                log.update_high_watermark(log.log_end_offset() - 10)
                    .unwrap();
            }
            if i % 150 == 149 {
                // Back by 7 offsets: a follower's truncation to the leader's end.
                let to = log.log_end_offset() - 7;
                if cleaner.truncate_to(&tp, to).unwrap() {
                    truncations += 1;
                }
                model.retain(|m| m.0 < to);
                assert_eq!(log.log_end_offset(), to);
            }
            if i == 1000 {
                let start = log.log_end_offset() - 400;
                log.delete_records(start).unwrap();
            }
            if i % 600 == 599 {
                // A clean between these points however slow the machine is, so that the
                // appends, truncations and `delete_records` race running cleans (on a
                // loaded machine the loop could otherwise outrun every clean).
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while cleaner.cleans_completed() <= cleans_seen {
                    assert!(std::time::Instant::now() < deadline, "no clean in 60 s");
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                cleans_seen = cleaner.cleans_completed();
            }
        }
        // Catch up (see the test above): the high watermark at the end, every log cleaned
        // up to its active segment, then stop.
        log.update_high_watermark(log.log_end_offset()).unwrap();
        cleaner.wake();
        let active = log.segments().last_segment().unwrap().base_offset();
        while checkpoint(dir.path(), &tp) != Some(active) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(cleaner.cleans_completed() >= 3);
        cleaner.shutdown();
        assert!(
            cleaner.uncleanable().is_empty(),
            "{:?}",
            cleaner.uncleanable()
        );
        assert!(truncations > 10);
        let start = log.log_start_offset();
        let recs = records(&log);
        let mut last: BTreeMap<String, (i64, Option<String>)> = BTreeMap::new();
        for (o, k, v) in &recs {
            if *o >= start {
                last.insert(
                    String::from_utf8(k.clone()).unwrap(),
                    (
                        *o,
                        v.as_ref().map(|v| String::from_utf8(v.clone()).unwrap()),
                    ),
                );
            }
        }
        let mut want: BTreeMap<String, (i64, Option<String>)> = BTreeMap::new();
        for (o, k, v) in &model {
            if *o >= start {
                want.insert(k.clone(), (*o, v.clone()));
            }
        }
        for (k, (o, v)) in &want {
            match v {
                Some(_) => assert_eq!(last.get(k), Some(&(*o, v.clone())), "key {k}"),
                None => assert!(
                    matches!(last.get(k), None | Some((_, None))),
                    "key {k}: {:?}",
                    last.get(k)
                ),
            }
        }
        let dirty_from = checkpoint(dir.path(), &tp).unwrap().max(start);
        let tail: Vec<i64> = recs
            .iter()
            .map(|r| r.0)
            .filter(|&o| o >= dirty_from)
            .collect();
        assert_eq!(
            tail,
            (dirty_from..log.log_end_offset()).collect::<Vec<_>>(),
            "uncleaned offsets kept"
        );
        done_tx.send(()).unwrap();
    });
    if done_rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .is_err()
    {
        panic!("no progress in 120 s: a deadlock, or the worker failed");
    }
    worker.join().unwrap();
}

/// `log.cleaner.io.max.bytes.per.second`: a clean whose offset map reads over 2 MB at
/// 1 MB/s takes over 1.5 s (`docs/kafka-behaviour.md#cleaner-throttle`). Only the bytes
/// reported before the throttle's last check are paid for: the last period is never
/// slept for (it ends with the clean before its 300 ms are over) and may hold the whole
/// copy on a fast machine, so the floor counts the map build's reads alone, less the
/// 400 ms the throttle's first period lasted before the clean began. A lower bound
/// only: a slow or loaded machine makes the clean slower, never faster.
#[test]
fn the_io_throttle_slows_a_clean_to_its_rate() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let config = LogConfig {
        segment_bytes: 64 * 1024,
        ..compacted()
    };
    let a = open_log(dir.path(), "a-0", &clock, config);
    let value = "v".repeat(1000);
    for i in 0..2000 {
        put(&a, NOW, &[(&format!("k{}", i % 10), Some(&value))]);
    }
    a.roll(None).unwrap();
    let dirty = a.size();
    assert!(dirty > 2_000_000);
    // The throttle's first period begins with the cleaner: time from there (a test
    // thread descheduled before the clean counts in the period, as Kafka's).
    let start = std::time::Instant::now();
    let cleaner = Cleaner::new(CleanerConfig {
        io_max_bytes_per_second: 1_000_000.0,
        ..quiet()
    })
    .unwrap();
    // As Kafka's, the throttle checks the rate only once a period has lasted its 300 ms: a
    // clean done sooner (a fast machine) would never be slowed. Let the first period pass.
    std::thread::sleep(std::time::Duration::from_millis(400));
    let tp = TopicPartition::new("a", 0);
    register(&cleaner, &tp, &a);
    assert!(cleaner.run_once());
    let took = start.elapsed();
    let stats = cleaner.last_stats(&tp).unwrap();
    let paid = stats.map_bytes_read.saturating_sub(500_000);
    let floor = std::time::Duration::from_millis(paid / 1000);
    assert!(floor >= std::time::Duration::from_millis(1500), "{stats:?}");
    assert!(
        took >= floor,
        "{} map bytes in {took:?}, below {floor:?}",
        stats.map_bytes_read
    );
}

/// `abort_and_pause` of a partition being cleaned (slowed by the throttle): the call
/// returns once the clean stopped, the partition is `Paused(1)`, the clean left no
/// `.cleaned` file and no checkpoint, and after `resume` the next clean completes
/// (`docs/kafka-behaviour.md#cleaner-states`).
#[test]
fn abort_and_pause_stops_a_running_clean_without_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let config = LogConfig {
        segment_bytes: 256 * 1024,
        ..compacted()
    };
    let a = open_log(dir.path(), "a-0", &clock, config);
    let value = "v".repeat(1000);
    for i in 0..3000 {
        put(&a, NOW, &[(&format!("k{}", i % 10), Some(&value))]);
    }
    a.roll(None).unwrap();
    let before = records(&a);
    let mut cleaner = Cleaner::new(CleanerConfig {
        num_threads: 1,
        backoff_ms: 10,
        io_max_bytes_per_second: 2_000_000.0,
        io_buffer_size: 128 * 1024,
        ..quiet()
    })
    .unwrap();
    // The throttle's first period began with the cleaner: past its 300 ms, the offset map
    // build's 3 MB make the clean sleep about 1.5 s before it copies anything.
    std::thread::sleep(std::time::Duration::from_millis(400));
    let tp = TopicPartition::new("a", 0);
    register(&cleaner, &tp, &a);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while cleaner.state(&tp) != Some(LogCleaningState::InProgress) {
        assert!(std::time::Instant::now() < deadline, "never started");
        std::thread::yield_now();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    cleaner.abort_and_pause(&tp).unwrap();
    assert_eq!(cleaner.state(&tp), Some(LogCleaningState::Paused(1)));
    assert!(
        cleaner.last_stats(&tp).is_none(),
        "the clean did not complete"
    );
    assert_eq!(
        checkpoint(dir.path(), &tp),
        None,
        "an aborted clean writes none"
    );
    let leftovers: Vec<_> = std::fs::read_dir(a.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cleaned"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Whatever groups were swapped in before the abort, the latest of each key is there.
    let latest = |recs: &[Kv]| {
        let mut m = BTreeMap::new();
        for (o, k, v) in recs {
            m.insert(k.clone(), (*o, v.clone()));
        }
        m
    };
    assert_eq!(latest(&records(&a)), latest(&before));
    cleaner.resume(&tp).unwrap();
    cleaner.wake();
    while cleaner.last_stats(&tp).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "never cleaned after resume"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    cleaner.shutdown();
    assert_eq!(checkpoint(dir.path(), &tp), Some(a.log_end_offset()));
    assert_eq!(latest(&records(&a)), latest(&before));
    assert_eq!(records(&a).len(), 10);
}

/// A thread with nothing to clean sleeps `log.cleaner.backoff.ms`; `wake` (and
/// `register`, which wakes) ends the sleep, and `shutdown` ends it too
/// (`docs/kafka-behaviour.md#cleaner-backoff`).
#[test]
fn wake_and_shutdown_end_the_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(MockTime::new(NOW));
    let a = open_log(dir.path(), "a-0", &clock, compacted());
    let mut cleaner = Cleaner::new(CleanerConfig {
        num_threads: 2,
        backoff_ms: 600_000,
        ..quiet()
    })
    .unwrap();
    let tp = TopicPartition::new("a", 0);
    register(&cleaner, &tp, &a);
    // Both threads find nothing dirty and go to sleep for ten minutes.
    std::thread::sleep(std::time::Duration::from_millis(200));
    fill(&a, 30);
    assert!(cleaner.last_stats(&tp).is_none());
    cleaner.wake();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while cleaner.last_stats(&tp).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "wake did not end the backoff"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let start = std::time::Instant::now();
    cleaner.shutdown();
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}
