//! Issue 21, branch `reads`: `Log::fetch_offset_by_timestamp`, Kafka 4.4's
//! `UnifiedLog.fetchOffsetByTimestamp` without remote storage, with the ListOffsets
//! sentinels of `ListOffsetsRequest` (−1 latest, −2 earliest, −3 max timestamp, −4
//! earliest local, −5 latest tiered, −6 earliest pending upload).
use crate::common::*;
use segment::record::BatchBuilder;
use segment::{ListedOffset, Log, LogConfig, SegmentError};

fn listed(timestamp: i64, offset: i64, leader_epoch: Option<i32>) -> Option<ListedOffset> {
    Some(ListedOffset {
        timestamp,
        offset,
        leader_epoch,
    })
}

fn b(base: i64, epoch: i32, ts: &[i64]) -> Vec<u8> {
    let mut bb = BatchBuilder::new(base).partition_leader_epoch(epoch);
    for &t in ts {
        bb = bb.record(t, None, Some(b"v"));
    }
    bb.build().unwrap()
}

fn open(dir: &std::path::Path) -> Log {
    open_log(dir, LogConfig::default(), mock().1)
}

#[test]
fn the_sentinels_of_an_empty_log() {
    let dir = tmpdir();
    let log = open(dir.path());
    let f = |t| log.fetch_offset_by_timestamp(t).unwrap();
    assert_eq!(f(ListedOffset::LATEST_TIMESTAMP), listed(-1, 0, None));
    assert_eq!(f(ListedOffset::EARLIEST_TIMESTAMP), listed(-1, 0, None));
    assert_eq!(
        f(ListedOffset::EARLIEST_LOCAL_TIMESTAMP),
        listed(-1, 0, None)
    );
    assert_eq!(f(ListedOffset::MAX_TIMESTAMP), None);
    assert_eq!(
        f(ListedOffset::LATEST_TIERED_TIMESTAMP),
        listed(-1, -1, Some(-1))
    );
    assert_eq!(
        f(ListedOffset::EARLIEST_PENDING_UPLOAD_TIMESTAMP),
        listed(-1, -1, Some(-1))
    );
    assert_eq!(f(0), None);
    for t in [-7, -100, i64::MIN] {
        assert!(matches!(
            log.fetch_offset_by_timestamp(t),
            Err(SegmentError::InvalidArgument { .. })
        ));
    }
}

#[test]
fn latest_and_earliest_carry_the_cache_epochs() {
    let dir = tmpdir();
    let log = open(dir.path());
    log.append(&b(0, 3, &[100, 300, 200])).unwrap();
    log.roll(None).unwrap();
    log.append(&b(3, 5, &[250, 300, 260])).unwrap();
    assert_eq!(log.leader_epochs(), vec![(3, 0), (5, 3)]);
    let f = |t| log.fetch_offset_by_timestamp(t).unwrap();
    assert_eq!(f(-1), listed(-1, 6, Some(5)));
    assert_eq!(f(-2), listed(-1, 0, Some(3)));
    assert_eq!(f(-4), listed(-1, 0, Some(3)));
    log.delete_records(4).unwrap();
    // Kafka's truncateFromStart re-adds the last epoch at the new log start.
    assert_eq!(f(-2), listed(-1, 4, Some(5)));
    assert_eq!(f(-4), listed(-1, 4, Some(5)));
    assert_eq!(f(-1), listed(-1, 6, Some(5)));
}

#[test]
fn max_timestamp_is_the_first_record_with_the_largest_timestamp() {
    let dir = tmpdir();
    let log = open(dir.path());
    log.append(&b(0, 3, &[100, 300, 200])).unwrap();
    // A later batch and a later segment with the same max timestamp do not win.
    log.append(&b(3, 3, &[300])).unwrap();
    log.roll(None).unwrap();
    log.append(&b(4, 5, &[250, 300, 260])).unwrap();
    assert_eq!(
        log.fetch_offset_by_timestamp(-3).unwrap(),
        listed(300, 1, Some(3))
    );
    // A strictly larger one in a later segment does.
    log.append(&b(7, 5, &[10, 400])).unwrap();
    assert_eq!(
        log.fetch_offset_by_timestamp(-3).unwrap(),
        listed(400, 8, Some(5))
    );
}

#[test]
fn real_timestamps_answer_as_offset_for_timestamp_with_the_batch_epoch() {
    let dir = tmpdir();
    let log = open(dir.path());
    log.append(&b(0, 3, &[100, 300, 200])).unwrap();
    log.roll(None).unwrap();
    log.append(&b(3, 5, &[250, 500, 260])).unwrap();
    let f = |t| log.fetch_offset_by_timestamp(t).unwrap();
    assert_eq!(f(0), listed(100, 0, Some(3)));
    assert_eq!(f(250), listed(300, 1, Some(3)));
    assert_eq!(f(301), listed(500, 4, Some(5)));
    assert_eq!(f(501), None);
    for t in [0, 250, 301, 501] {
        let old = log.offset_for_timestamp(t).unwrap();
        assert_eq!(
            f(t),
            old.map(|o| ListedOffset {
                timestamp: o.timestamp,
                offset: o.offset,
                leader_epoch: o.leader_epoch,
            })
        );
    }
}
