//! Issue 42: retention with remote storage enabled (KIP-405), as Kafka 4.4's
//! `UnifiedLog.deleteOldSegments` applies it (`docs/kafka-behaviour.md#local-retention`,
//! `docs/kafka-behaviour.md#remote-retention`): `local.retention.*` (−2 = the full value),
//! only uploaded segments, only the local log start moving, the roll of a breaching active
//! segment, and the log start raised by the remote tier. `cargo xtask kafka --only
//! k8-local-retention` compares the same rules with Kafka's own `UnifiedLog`.
use crate::common::*;
use segment::record::BatchBuilder;
use segment::{LogConfig, SegmentError};

/// A batch of `n` records from offset `base`, stamped `ts`, leader epoch `base / 2`.
fn batch(base: i64, n: usize, ts: i64) -> Vec<u8> {
    let mut bb = BatchBuilder::new(base).partition_leader_epoch(base as i32 / 2);
    for _ in 0..n {
        bb = bb.record(ts, None, Some(b"value"));
    }
    bb.build().unwrap()
}

fn tiered(local_ms: i64, local_bytes: i64) -> LogConfig {
    LogConfig {
        remote_storage_enable: true,
        retention_ms: -1,
        local_retention_ms: local_ms,
        local_retention_bytes: local_bytes,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    }
}

/// Three sealed segments [0,2), [2,4), [4,6) and the active [6,8), records stamped `ts`.
fn build(dir: &std::path::Path, cfg: LogConfig, clock: segment::Clock, ts: i64) -> segment::Log {
    let log = open_log(dir, cfg, clock);
    for i in 0..4 {
        log.append(&batch(2 * i, 2, ts)).unwrap();
        if i < 3 {
            log.roll(None).unwrap();
        }
    }
    log
}

#[test]
fn local_retention_bytes_deletes_only_uploaded_segments_and_moves_the_local_start() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = build(dir.path(), tiered(-2, 1), clock, 1_000_000);
    assert_eq!(log.segments().base_offsets(), vec![0, 2, 4, 6]);
    // Nothing uploaded: nothing goes, whatever the size.
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    // [0,2) and [2,4) uploaded (highest 3): they go, [4,6) stays.
    log.update_highest_offset_in_remote_storage(3);
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![4, 6]);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 4)
    );
    // A read of an uploaded offset now answers "moved to tiered storage".
    assert!(matches!(
        log.read(2, 1 << 20),
        Err(SegmentError::OffsetMovedToTieredStorage { .. })
    ));
}

#[test]
fn minus_two_uses_retention_ms_and_a_breaching_active_segment_is_rolled() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 10_000,
        ..tiered(-2, -2)
    };
    let log = build(dir.path(), cfg, clock, 1_000_000);
    t.sleep(10_001);
    // Every segment is older than retention.ms but none is uploaded: the pass stops at
    // the first segment, nothing goes and nothing rolls.
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    assert_eq!(log.segments().base_offsets(), vec![0, 2, 4, 6]);
    // The sealed ones uploaded: they go, and the pass reaches the breaching active
    // segment, which is rolled (Kafka's "roll the active segment to make it eligible")
    // but stays until it is uploaded too.
    log.update_highest_offset_in_remote_storage(5);
    assert_eq!(log.delete_old_segments().unwrap(), 3);
    assert_eq!(log.segments().base_offsets(), vec![6, 8]);
    // The retention's roll wrote the producer snapshot at the new base, as Kafka's roll
    // does, so the rolled segment's upload carries it.
    let ups = log.tierable_segments().unwrap();
    assert_eq!(ups.len(), 1);
    assert!(ups[0].producer_snapshot.is_some());
    log.update_highest_offset_in_remote_storage(7);
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.segments().base_offsets(), vec![8]);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (0, 8)
    );
}

#[test]
fn local_retention_ms_is_used_over_retention_ms_and_minus_one_keeps_everything() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 100_000,
        ..tiered(5_000, -1)
    };
    let log = build(dir.path(), cfg, clock, 1_000_000);
    log.update_highest_offset_in_remote_storage(5);
    t.sleep(5_001);
    assert_eq!(log.delete_old_segments().unwrap(), 3);
    assert_eq!(log.local_log_start_offset(), 6);
    let dir2 = tmpdir();
    let (t2, clock2) = mock();
    let log2 = build(dir2.path(), tiered(-1, -1), clock2, 1_000_000);
    log2.update_highest_offset_in_remote_storage(5);
    t2.sleep(1 << 40);
    assert_eq!(log2.delete_old_segments().unwrap(), 0);
}

#[test]
fn the_remote_tier_raises_the_log_start_and_local_segments_below_it_go_uploaded_or_not() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = build(dir.path(), tiered(-1, -1), clock, 1_000_000);
    assert_eq!(log.update_log_start_offset_from_remote_tier(4).unwrap(), 4);
    assert_eq!(
        (log.log_start_offset(), log.local_log_start_offset()),
        (4, 4)
    );
    // Nothing reported uploaded, but [0,2) and [2,4) lie wholly below the log start.
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.segments().base_offsets(), vec![4, 6]);
    // Above the high watermark (the log end here) it is refused, as Kafka's
    // maybeIncrementLogStartOffset does.
    assert!(matches!(
        log.update_log_start_offset_from_remote_tier(9),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
}

#[test]
fn the_remote_tier_hook_needs_remote_storage() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), LogConfig::default(), clock);
    assert!(matches!(
        log.update_log_start_offset_from_remote_tier(0),
        Err(SegmentError::InvalidArgument { .. })
    ));
}

#[test]
fn local_retention_values_are_checked_as_kafka_does() {
    let ok = |c: LogConfig| c.validate().is_ok();
    let remote = |ms: i64, local_ms: i64, bytes: i64, local_bytes: i64| LogConfig {
        remote_storage_enable: true,
        retention_ms: ms,
        local_retention_ms: local_ms,
        retention_bytes: bytes,
        local_retention_bytes: local_bytes,
        ..LogConfig::default()
    };
    assert!(ok(remote(1_000, -2, 100, -2)));
    assert!(ok(remote(1_000, 1_000, 100, 100)));
    assert!(ok(remote(-1, -1, -1, -1)));
    assert!(ok(remote(-1, 5, -1, 5)));
    assert!(
        !ok(remote(1_000, -1, -1, -2)),
        "−1 under a bounded retention.ms"
    );
    assert!(!ok(remote(1_000, 1_001, -1, -2)), "above retention.ms");
    assert!(
        !ok(remote(-1, -2, 100, -1)),
        "−1 under a bounded retention.bytes"
    );
    assert!(!ok(remote(-1, -2, 100, 101)), "above retention.bytes");
    assert!(!ok(remote(-1, -3, -1, -2)), "below −2");
    // Without remote storage only the range is checked.
    assert!(ok(LogConfig {
        retention_ms: 1_000,
        local_retention_ms: 5_000,
        ..LogConfig::default()
    }));
}

#[test]
fn remote_segment_metadata_from_an_upload_carries_its_offsets_epochs_and_size() {
    use segment::tier::{
        RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentState, TopicIdPartition, Uuid,
    };
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = build(dir.path(), tiered(-1, -1), clock, 1_000_000);
    let ups = log.tierable_segments().unwrap();
    assert_eq!(ups.len(), 3);
    let id = RemoteLogSegmentId {
        topic_id_partition: TopicIdPartition {
            topic_id: Uuid::from_bytes([1; 16]),
            topic: "t".into(),
            partition: 0,
        },
        id: Uuid::from_bytes([2; 16]),
    };
    let m = RemoteLogSegmentMetadata::from_upload(id, &ups[1], 5, 42).unwrap();
    assert_eq!((m.start_offset(), m.end_offset()), (2, 3));
    assert_eq!(m.max_timestamp_ms(), 1_000_000);
    assert_eq!(i64::from(m.segment_size_in_bytes()), ups[1].size as i64);
    assert_eq!((m.broker_id(), m.event_timestamp_ms()), (5, 42));
    assert_eq!(m.state(), RemoteLogSegmentState::CopySegmentStarted);
    assert!(m.is_txn_idx_empty());
    // Segment [2, 4) is epoch 1's from offset 2.
    let epochs: Vec<(i32, i64)> = m
        .segment_leader_epochs()
        .iter()
        .map(|(e, o)| (*e, *o))
        .collect();
    assert_eq!(epochs, vec![(1, 2)]);
    assert_eq!(epochs, ups[1].segment_leader_epochs);
}
