//! The log cleaner's copy and swap (`Log::clean`): which records and batches a clean
//! keeps, how it re-encodes them, the swap and the checkpoint
//! (`docs/kafka-behaviour.md#cleaner-copy`, `docs/kafka-behaviour.md#cleaner-swap`).

use segment::clean::{read_cleaner_checkpoint, CleanerConfig, CompactionConfig, TopicPartition};
use segment::fs::RealFs;
use segment::record::{batches_from, BatchBuilder, ControlRecordType, FileBatch};
use segment::{AppendOrigin, Log, LogConfig};

const NOW: i64 = 1_700_000_000_000;
const DAY: i64 = 86_400_000;

type Rec = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

fn batches(log: &Log) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for s in log.segments().values() {
        let bytes = s.log().read(0, s.size()).unwrap();
        for b in batches_from(&bytes, 0) {
            out.push(b.unwrap().as_bytes().to_vec());
        }
    }
    out
}

fn records(log: &Log) -> Vec<Rec> {
    let mut out = Vec::new();
    for b in batches(log) {
        let b = FileBatch::at(&b, 0).unwrap();
        assert!(b.is_valid(), "every batch's CRC is valid");
        for r in b.records().unwrap() {
            let r = r.unwrap();
            out.push((
                r.offset,
                r.key().map(<[u8]>::to_vec),
                r.value().map(<[u8]>::to_vec),
            ));
        }
    }
    out
}

fn r(o: i64, k: &str, v: Option<&str>) -> Rec {
    (
        o,
        Some(k.as_bytes().to_vec()),
        v.map(|v| v.as_bytes().to_vec()),
    )
}

fn open(dir: &std::path::Path) -> Log {
    Log::open(
        dir.join("topic-0"),
        LogConfig {
            compact: true,
            file_delete_delay_ms: 0,
            ..LogConfig::default()
        },
    )
    .unwrap()
}

fn plain(kvs: &[(Option<&str>, Option<&str>)]) -> Vec<u8> {
    plain_at(0, kvs)
}

fn plain_at(base: i64, kvs: &[(Option<&str>, Option<&str>)]) -> Vec<u8> {
    let mut b = BatchBuilder::new(base);
    for (k, v) in kvs {
        b = b.record(NOW, k.map(str::as_bytes), v.map(str::as_bytes));
    }
    b.build().unwrap()
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_clean_keeps_the_latest_value_of_each_key_and_marks_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path());
    log.append(&plain_at(
        log.log_end_offset(),
        &[(Some("a"), Some("1")), (Some("b"), Some("1"))],
    ))
    .unwrap(); // 0, 1
    log.append(&plain_at(
        log.log_end_offset(),
        &[(None, Some("keyless")), (Some("a"), Some("2"))],
    ))
    .unwrap(); // 2, 3
    log.append(&plain_at(
        log.log_end_offset(),
        &[(Some("b"), None), (Some("c"), Some("1"))],
    ))
    .unwrap(); // 4, 5
    log.roll(None).unwrap();
    log.append(&plain_at(log.log_end_offset(), &[(Some("c"), Some("2"))]))
        .unwrap(); // 6 (active)
    let before = batches(&log);

    let stats = log
        .clean(&CleanerConfig::default(), &CompactionConfig::default(), NOW)
        .unwrap();
    assert_eq!((stats.first_dirty_offset, stats.end_offset), (0, 6));
    assert_eq!(stats.segments_cleaned, 1);
    assert_eq!(stats.messages_read, 6);
    assert_eq!(stats.messages_written, 3);
    assert_eq!(stats.invalid_messages_read, 1);
    // a=1 and the keyless record go; the tombstone of b stays (its batch now carries a
    // delete horizon), and so does the active segment.
    assert_eq!(
        records(&log),
        vec![
            r(3, "a", Some("2")),
            r(4, "b", None),
            r(5, "c", Some("1")),
            r(6, "c", Some("2")),
        ]
    );
    let after = batches(&log);
    assert_eq!(after.len(), 3, "the first batch is gone");
    // The second batch is rebuilt (a record removed), without a tombstone: no horizon,
    // base offset and last offset delta kept, base timestamp its first kept record's.
    let b1 = FileBatch::at(&after[0], 0).unwrap();
    let b1 = b1.as_v2().unwrap();
    assert_eq!((b1.base_offset(), b1.last_offset()), (2, 3));
    assert_eq!(b1.delete_horizon_ms(), None);
    assert_eq!(b1.records_count(), 1);
    // The batch with the tombstone keeps both records, rewritten with the horizon.
    let b2 = FileBatch::at(&after[1], 0).unwrap();
    let b2 = b2.as_v2().unwrap();
    assert_eq!(b2.delete_horizon_ms(), Some(NOW + DAY));
    assert_eq!(b2.base_timestamp(), NOW + DAY);
    assert_eq!(&after[2], &before[3], "the active segment is not touched");

    // The checkpoint of the parent directory holds the end offset.
    let cp = read_cleaner_checkpoint(&RealFs, dir.path()).unwrap();
    assert_eq!(cp.get(&TopicPartition::new("topic", 0)), Some(&6));
    // No `.cleaned`, `.swap` or `.deleted` file is left (delete delay 0).
    let names = files(&dir.path().join("topic-0"));
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".cleaned") && !n.ends_with(".swap") && !n.ends_with(".deleted")),
        "{names:?}"
    );

    // Before the horizon a second clean keeps the tombstone, and changes nothing.
    log.roll(None).unwrap();
    let stats = log
        .clean(
            &CleanerConfig::default(),
            &CompactionConfig::default(),
            NOW + 1,
        )
        .unwrap();
    assert_eq!(stats.first_dirty_offset, 6);
    assert!(records(&log).contains(&r(4, "b", None)));
    // At the horizon the tombstone goes (a clean rewrites the clean segments too).
    log.roll(None).unwrap();
    log.append(&plain_at(log.log_end_offset(), &[(Some("d"), Some("1"))]))
        .unwrap();
    log.roll(None).unwrap();
    let stats = log
        .clean(
            &CleanerConfig::default(),
            &CompactionConfig::default(),
            NOW + DAY,
        )
        .unwrap();
    assert!(stats.messages_read > 0);
    let recs = records(&log);
    assert!(!recs.iter().any(|x| x.0 == 4), "{recs:?}");
    assert!(recs.contains(&r(3, "a", Some("2"))));
    assert!(recs.contains(&r(6, "c", Some("2"))));
    assert!(!recs.contains(&r(5, "c", Some("1"))));

    // The directory reopens as it was left.
    let expect = records(&log);
    log.close().unwrap();
    let log = open(dir.path());
    assert_eq!(records(&log), expect);
}

#[test]
fn aborted_data_goes_and_its_marker_stays_while_data_of_it_remains() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::options()
        .manual_high_watermark(0)
        .open(
            dir.path().join("t-3"),
            LogConfig {
                compact: true,
                file_delete_delay_ms: 0,
                ..LogConfig::default()
            },
        )
        .unwrap();
    let append = |b: Vec<u8>, origin| log.append_as_leader(&b, 0, origin).unwrap();
    let txn = |pid, seq, key: &str| {
        BatchBuilder::new(0)
            .producer(pid, 0, seq)
            .transactional(true)
            .record(NOW, Some(key.as_bytes()), Some(b"t"))
            .build()
            .unwrap()
    };
    let marker = |pid, t| {
        BatchBuilder::new(0)
            .producer(pid, 0, -1)
            .build_end_txn_marker(t, 0, NOW)
            .unwrap()
    };
    append(txn(8, 0, "x"), AppendOrigin::Client); // 0, aborted
    append(txn(8, 1, "x2"), AppendOrigin::Client); // 1, aborted
    append(txn(9, 0, "y"), AppendOrigin::Client); // 2, committed
    append(
        marker(8, ControlRecordType::Abort),
        AppendOrigin::Coordinator,
    ); // 3
    append(
        marker(9, ControlRecordType::Commit),
        AppendOrigin::Coordinator,
    ); // 4
    append(plain(&[(Some("a"), Some("1"))]), AppendOrigin::Client); // 5
    log.roll(None).unwrap();
    append(plain(&[(Some("c"), Some("1"))]), AppendOrigin::Client); // 6
    log.update_high_watermark(log.log_end_offset()).unwrap();

    log.clean(&CleanerConfig::default(), &CompactionConfig::default(), NOW)
        .unwrap();
    let bs = batches(&log);
    let summary: Vec<(i64, i64, i32, bool)> = bs
        .iter()
        .map(|b| {
            let b = FileBatch::at(b, 0).unwrap();
            let v = b.as_v2().unwrap();
            (
                v.base_offset(),
                v.last_offset(),
                v.records_count(),
                v.is_control_batch(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            // x at 0 goes; x2 at 1 is producer 8's last data batch: kept, empty.
            (1, 1, 0, false),
            (2, 2, 1, false),
            // The ABORT marker stays while data of its transaction was met.
            (3, 3, 1, true),
            (4, 4, 1, true),
            (5, 5, 1, false),
            (6, 6, 1, false),
        ]
    );
    // The cleaned segment's transaction index holds the aborted transaction again.
    let seg = log.segments().first_segment().unwrap();
    let txns = seg.collect_aborted_txns(0, 6).unwrap().aborted_transactions;
    assert_eq!(txns.len(), 1);
    assert_eq!((txns[0].producer_id, txns[0].first_offset), (8, 0));
}

fn fill_for_swap(log: &Log) {
    for round in 0..3 {
        log.append(&plain_at(
            log.log_end_offset(),
            &[(Some("a"), Some("x")), (Some("b"), Some("y"))],
        ))
        .unwrap();
        log.append(&plain_at(log.log_end_offset(), &[(Some("c"), Some("z"))]))
            .unwrap();
        if round < 2 {
            log.roll(None).unwrap();
        }
    }
    log.roll(None).unwrap();
}

#[test]
fn an_interrupted_swap_is_completed_by_the_next_open() {
    use segment::fs::{Fault, FaultyFs, FsOp, EIO};
    // The clean as it should end.
    let ok = tempfile::tempdir().unwrap();
    let log = open(ok.path());
    fill_for_swap(&log);
    log.clean(&CleanerConfig::default(), &CompactionConfig::default(), NOW)
        .unwrap();
    let expect = records(&log);
    assert_eq!(expect.len(), 3, "{expect:?}");
    // The same clean, failing at the `.swap` -> `.log` rename: the commit point was
    // passed, so the open completes the replacement.
    let dir = tempfile::tempdir().unwrap();
    let fs = std::sync::Arc::new(FaultyFs::new());
    fs.inject(Fault::new(FsOp::Rename, EIO).on_path(".log.swap").times(1));
    let config = LogConfig {
        compact: true,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let log = Log::options()
        .fs(fs.clone())
        .open(dir.path().join("topic-0"), config.clone())
        .unwrap();
    fill_for_swap(&log);
    let err = log
        .clean(&CleanerConfig::default(), &CompactionConfig::default(), NOW)
        .unwrap_err();
    assert!(err.to_string().contains("rename"), "{err}");
    assert!(log.is_offline());
    drop(log);
    let names = files(&dir.path().join("topic-0"));
    assert!(names.iter().any(|n| n.ends_with(".log.swap")), "{names:?}");
    let log = Log::open(dir.path().join("topic-0"), config).unwrap();
    assert!(log.stats().swap_replacement().is_some());
    assert_eq!(records(&log), expect);
}

#[test]
fn readers_never_see_a_clean_half_done() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let log = std::sync::Arc::new(open(dir.path()));
    for i in 0..200 {
        let k = format!("k{}", i % 5);
        log.append(&plain_at(log.log_end_offset(), &[(Some(&k), Some("v"))]))
            .unwrap();
        if i % 20 == 19 {
            log.roll(None).unwrap();
        }
    }
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let reader = {
        let (log, stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for o in (0..200).step_by(7) {
                    let d = log.read(o, 1 << 16).unwrap();
                    let first = batches_from(&d.records, 0).next().unwrap().unwrap();
                    // The batch holding `o`, or (once `o` was cleaned away) a later one;
                    // never an empty answer below the log end.
                    assert!(
                        first.last_offset() >= o,
                        "read at {o}: {}",
                        first.last_offset()
                    );
                    reads += 1;
                }
            }
            reads
        })
    };
    for round in 0..5 {
        log.append(&plain_at(log.log_end_offset(), &[(Some("k0"), Some("w"))]))
            .unwrap();
        log.roll(None).unwrap();
        log.clean(
            &CleanerConfig::default(),
            &CompactionConfig::default(),
            NOW + round,
        )
        .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let keys: std::collections::BTreeSet<_> = records(&log).into_iter().map(|r| r.1).collect();
    assert_eq!(keys.len(), 5);
}
