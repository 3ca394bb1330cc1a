//! Issue 42, branch `tier`: the log's part of the tier seam (KIP-405): the local log
//! start offset (`docs/kafka-behaviour.md#local-log-start-offset`), the deletion of
//! uploaded local segments (`docs/kafka-behaviour.md#delete-local-through`), reads below
//! the local log start (`docs/kafka-behaviour.md#offset-moved-to-tiered-storage`) and
//! ListOffsets −4, −5, −6 with remote storage (`docs/kafka-behaviour.md#list-offsets-tiered`),
//! each as Kafka 4.4's `UnifiedLog` answers.
use crate::common::*;
use segment::record::BatchBuilder;
use segment::{KafkaError, ListedOffset, Log, LogConfig, SegmentError};

fn b(base: i64, epoch: i32, n: usize) -> Vec<u8> {
    let mut bb = BatchBuilder::new(base).partition_leader_epoch(epoch);
    for i in 0..n {
        bb = bb.record(1_000 + base + i as i64, None, Some(b"v"));
    }
    bb.build().unwrap()
}

fn tiered() -> LogConfig {
    LogConfig {
        remote_storage_enable: true,
        ..LogConfig::default()
    }
}

/// Segments [0, 3), [3, 6), [6, 9) and the active [9, 10): epochs 1, 1, 2, 3.
fn four_segments(dir: &std::path::Path, config: LogConfig) -> Log {
    let log = open_log(dir, config, mock().1);
    log.append(&b(0, 1, 3)).unwrap();
    log.roll(None).unwrap();
    log.append(&b(3, 1, 3)).unwrap();
    log.roll(None).unwrap();
    log.append(&b(6, 2, 3)).unwrap();
    log.roll(None).unwrap();
    log.append(&b(9, 3, 1)).unwrap();
    log
}

fn listed(offset: i64, leader_epoch: Option<i32>) -> Option<ListedOffset> {
    Some(ListedOffset {
        timestamp: -1,
        offset,
        leader_epoch,
    })
}

#[test]
fn local_log_start_moves_with_local_deletion_and_the_log_start_does_not() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 0)
    );
    assert_eq!(log.delete_local_through(5, 5).unwrap(), 2);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 6)
    );
    assert_eq!(log.highest_offset_in_remote_storage(), 5);
    // A raised log start carries the local start with it when it passes it.
    log.increment_log_start_offset(7).unwrap();
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (7, 7)
    );
}

#[test]
fn the_local_log_start_survives_a_reopen_derived_from_the_first_segment() {
    let dir = tmpdir();
    {
        let log = four_segments(dir.path(), tiered());
        log.delete_local_through(5, 5).unwrap();
        log.close().unwrap();
    }
    let log = open_log(dir.path(), tiered(), mock().1);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 6)
    );
    // Without remote storage the loader starts the log at its first segment (Kafka's
    // `LogLoader`), which is why `delete_local_through` needs it.
    log.close().unwrap();
    let log = open_log(dir.path(), LogConfig::default(), mock().1);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (6, 6)
    );
    assert!(matches!(
        log.delete_local_through(8, 8),
        Err(SegmentError::InvalidArgument { .. })
    ));
}

#[test]
fn only_segments_wholly_at_or_below_the_uploaded_offset_go() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    // The first segment ends at 2: nothing up to 1 deletes it, by either bound.
    assert_eq!(log.delete_local_through(1, 100).unwrap(), 0);
    assert_eq!(log.delete_local_through(100, 1).unwrap(), 0);
    assert_eq!(log.local_log_start_offset(), 0);
    // 4 covers the first segment only; the second ends at 5.
    assert_eq!(log.delete_local_through(4, 4).unwrap(), 1);
    assert_eq!(log.local_log_start_offset(), 3);
    assert_eq!(log.segments().values().len(), 3);
    // Everything uploaded: the active segment stays.
    assert_eq!(log.delete_local_through(100, 100).unwrap(), 2);
    assert_eq!(log.local_log_start_offset(), 9);
    assert_eq!(log.segments().values().len(), 1);
    assert_eq!(log.log_start_offset(), 0);
}

#[test]
fn a_read_below_the_local_start_moved_to_tiered_storage() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    log.delete_local_through(5, 5).unwrap();
    for o in [0, 3, 5] {
        let e = log.read(o, 1 << 20).unwrap_err();
        match &e {
            SegmentError::OffsetMovedToTieredStorage {
                offset,
                log_start_offset,
                local_log_start_offset,
                ..
            } => assert_eq!(
                (*offset, *log_start_offset, *local_log_start_offset),
                (o, 0, 6)
            ),
            other => panic!("read({o}): {other:?}"),
        }
        assert_eq!(e.kafka_error(), KafkaError::OffsetMovedToTieredStorage);
        assert_eq!(e.kafka_error().code(), 109);
        assert_eq!(e.kafka_error().name(), "OFFSET_MOVED_TO_TIERED_STORAGE");
        assert!(matches!(
            log.read_with(o, 1 << 20, segment::FetchIsolation::HighWatermark, true),
            Err(SegmentError::OffsetMovedToTieredStorage { .. })
        ));
    }
    assert!(!log.read(6, 1 << 20).unwrap().records.is_empty());
    log.increment_log_start_offset(4).unwrap();
    assert!(matches!(
        log.read(3, 1 << 20),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
}

#[test]
fn list_offsets_minus_4_5_6_with_remote_storage() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    let f = |t| log.fetch_offset_by_timestamp(t).unwrap();
    // Nothing uploaded, the whole log local: −6 answers as −2, −5 has no offset.
    assert_eq!(
        f(ListedOffset::EARLIEST_LOCAL_TIMESTAMP),
        listed(0, Some(1))
    );
    assert_eq!(
        f(ListedOffset::LATEST_TIERED_TIMESTAMP),
        listed(-1, Some(-1))
    );
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        f(ListedOffset::EARLIEST_TIMESTAMP)
    );
    log.update_highest_offset_in_remote_storage(4);
    assert_eq!(f(ListedOffset::LATEST_TIERED_TIMESTAMP), listed(4, Some(1)));
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        listed(5, Some(1))
    );
    log.delete_local_through(100, 7).unwrap();
    assert_eq!(
        f(ListedOffset::EARLIEST_LOCAL_TIMESTAMP),
        listed(6, Some(2))
    );
    assert_eq!(f(ListedOffset::EARLIEST_TIMESTAMP), listed(0, Some(1)));
    assert_eq!(f(ListedOffset::LATEST_TIERED_TIMESTAMP), listed(7, Some(2)));
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        listed(8, Some(2))
    );
    // The log start above what was uploaded: −6 is the log start.
    log.increment_log_start_offset(9).unwrap();
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        listed(9, Some(3))
    );
}

#[test]
fn after_a_reopen_with_local_deletion_minus_6_has_no_answer_until_told() {
    let dir = tmpdir();
    {
        let log = four_segments(dir.path(), tiered());
        log.delete_local_through(5, 5).unwrap();
        log.close().unwrap();
    }
    let log = open_log(dir.path(), tiered(), mock().1);
    let f = |t| log.fetch_offset_by_timestamp(t).unwrap();
    assert_eq!(log.highest_offset_in_remote_storage(), -1);
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        listed(-1, Some(-1))
    );
    assert_eq!(
        f(ListedOffset::EARLIEST_LOCAL_TIMESTAMP),
        listed(6, Some(2))
    );
}

#[test]
fn a_region_held_across_local_deletion_stays_readable() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    let region = log
        .read_region(3, 1 << 20, segment::FetchIsolation::LogEnd, true)
        .unwrap()
        .region;
    let before = region.to_vec().unwrap();
    assert_eq!(log.delete_local_through(5, 5).unwrap(), 2);
    assert!(dir.path().join("00000000000000000003.log.deleted").exists());
    assert_eq!(region.to_vec().unwrap(), before);
}

#[test]
fn readers_under_local_deletion_get_data_or_moved_never_empty() {
    let dir = tmpdir();
    let log = std::sync::Arc::new(open_log(dir.path(), tiered(), mock().1));
    let mut next = 0;
    for _ in 0..40 {
        log.append(&b(next, 1, 2)).unwrap();
        next += 2;
        log.roll(None).unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = std::sync::Arc::new(std::sync::Barrier::new(2));
    let reader = {
        let (log, stop, started) = (log.clone(), stop.clone(), started.clone());
        std::thread::spawn(move || {
            started.wait();
            let mut moved = 0;
            loop {
                let last = stop.load(std::sync::atomic::Ordering::Acquire);
                for o in (0..next).step_by(3) {
                    match log.read(o, 1 << 20) {
                        Ok(f) => {
                            // The batch that holds `o` (two records from an even base),
                            // never an empty fetch or a later batch.
                            assert!(f.records.len() >= 8, "empty fetch at {o}");
                            let base = i64::from_be_bytes(f.records[..8].try_into().unwrap());
                            assert_eq!(base, o - o % 2, "read({o})");
                        }
                        Err(SegmentError::OffsetMovedToTieredStorage { offset, .. }) => {
                            assert_eq!(offset, o);
                            moved += 1;
                        }
                        Err(e) => panic!("read({o}): {e:?}"),
                    }
                }
                if last {
                    break;
                }
            }
            moved
        })
    };
    started.wait();
    for through in (1..next).step_by(2) {
        std::thread::sleep(std::time::Duration::from_millis(1));
        log.delete_local_through(through, through).unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(log.local_log_start_offset(), next);
    assert_eq!(log.log_start_offset(), 0);
}

fn read_all(f: &std::fs::File) -> Vec<u8> {
    use std::io::{Read, Seek};
    let mut f = f.try_clone().unwrap();
    f.rewind().unwrap();
    let mut v = Vec::new();
    f.read_to_end(&mut v).unwrap();
    v
}

#[test]
fn tierable_segments_are_the_sealed_ones_below_the_bound_with_their_files() {
    let dir = tmpdir();
    let log = four_segments(dir.path(), tiered());
    let ups = log.tierable_segments().unwrap();
    let spans: Vec<_> = ups.iter().map(|u| (u.base_offset, u.end_offset)).collect();
    assert_eq!(spans, vec![(0, 2), (3, 5), (6, 8)]);
    for u in &ups {
        let name = format!("{:020}", u.base_offset);
        let on_disk = |ext: &str| std::fs::read(dir.path().join(format!("{name}.{ext}"))).unwrap();
        assert_eq!(u.log.to_vec().unwrap(), on_disk("log"));
        assert_eq!(u.size, on_disk("log").len() as u64);
        assert_eq!(read_all(&u.offset_index), on_disk("index"));
        assert_eq!(read_all(&u.time_index), on_disk("timeindex"));
        assert!(u.txn_index.is_none());
        let snap = format!("{:020}.snapshot", u.end_offset + 1);
        assert_eq!(
            read_all(
                u.producer_snapshot
                    .as_ref()
                    .expect("snapshot at the next base")
            ),
            std::fs::read(dir.path().join(snap)).unwrap()
        );
        assert_eq!(u.max_timestamp, 1_000 + u.end_offset);
    }
    assert_eq!(ups[0].segment_leader_epochs, vec![(1, 0)]);
    // An epoch that began below the segment is moved to its base.
    assert_eq!(ups[1].segment_leader_epochs, vec![(1, 3)]);
    assert_eq!(ups[2].segment_leader_epochs, vec![(2, 6)]);
    assert_eq!(ups[0].leader_epoch_checkpoint, b"0\n1\n1 0\n".to_vec());
    assert_eq!(ups[2].leader_epoch_checkpoint, b"0\n2\n1 0\n2 6\n".to_vec());
    // What is uploaded is not offered again.
    log.update_highest_offset_in_remote_storage(5);
    let bases: Vec<_> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(|u| u.base_offset)
        .collect();
    assert_eq!(bases, vec![6]);
}

#[test]
fn the_high_watermark_bounds_the_tierable_segments() {
    let dir = tmpdir();
    {
        let log = four_segments(dir.path(), tiered());
        log.close().unwrap();
    }
    let log = Log::options()
        .clock(mock().1)
        .manual_high_watermark(6)
        .open(dir.path(), tiered())
        .unwrap();
    let bases: Vec<_> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(|u| u.base_offset)
        .collect();
    // The segment [6, 9) ends above the high watermark 6: its next base 9 is not ≤ 6.
    assert_eq!(bases, vec![0, 3]);
}

#[test]
fn an_upload_handle_outlives_the_deletion_of_its_segment() {
    let dir = tmpdir();
    let config = LogConfig {
        file_delete_delay_ms: 0,
        ..tiered()
    };
    let log = four_segments(dir.path(), config);
    let ups = log.tierable_segments().unwrap();
    let before: Vec<_> = ups
        .iter()
        .map(|u| {
            (
                u.log.to_vec().unwrap(),
                read_all(&u.offset_index),
                read_all(&u.time_index),
            )
        })
        .collect();
    assert_eq!(log.delete_local_through(8, 8).unwrap(), 3);
    log.delete_expired_segment_files().unwrap();
    // The files are gone from the directory, under either name.
    for name in [
        "00000000000000000000.log",
        "00000000000000000000.log.deleted",
    ] {
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    let after: Vec<_> = ups
        .iter()
        .map(|u| {
            (
                u.log.to_vec().unwrap(),
                read_all(&u.offset_index),
                read_all(&u.time_index),
            )
        })
        .collect();
    assert_eq!(before, after);
}

#[test]
fn an_open_transaction_holds_back_the_segments_after_it() {
    let dir = tmpdir();
    let log = open_log(dir.path(), tiered(), mock().1);
    log.append(&b(0, 1, 3)).unwrap();
    log.roll(None).unwrap();
    // An open transaction at 3: the last stable offset stays at 3.
    let t = BatchBuilder::new(3)
        .producer(7, 0, 0)
        .transactional(true)
        .record(1_003, None, Some(b"t"))
        .build()
        .unwrap();
    log.append(&t).unwrap();
    log.roll(None).unwrap();
    log.append(&b(4, 1, 2)).unwrap();
    log.roll(None).unwrap();
    log.append(&b(6, 1, 1)).unwrap();
    assert_eq!(log.last_stable_offset(), 3);
    let bases: Vec<_> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(|u| u.base_offset)
        .collect();
    assert_eq!(bases, vec![0]);
}
