//! The uploader loop of tiered storage (KIP-405; `docs/kafka-behaviour.md#remote-storage`),
//! what Kafka's `RemoteLogManager` copy task does with a local log:
//!
//! 1. poll the sealed segments ready to go (`Log::tierable_segments`);
//! 2. record each one's metadata as `COPY_SEGMENT_STARTED`, copy it with a
//!    `RemoteStorage` (here `LocalTieredStorage`, Kafka's fixture layout, in a temporary
//!    directory), record `COPY_SEGMENT_FINISHED`;
//! 3. raise the highest offset in remote storage and delete the uploaded local segments
//!    (`Log::delete_local_through`);
//! 4. serve a fetch below the local log start from the remote tier: the local read answers
//!    `OffsetMovedToTieredStorage`, and `read_remote` over the stored segment (its indexes
//!    through a `RemoteIndexCache`) answers what the local read answered before.
//!
//! Run: `cargo run -p segment --example tier_uploader`.

use std::sync::Arc;

use segment::record::BatchBuilder;
use segment::tier::{
    fetch_remote_indexes, fetch_remote_segment, read_remote_kafka, LocalTieredStorage,
    RemoteIndexCache, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentMetadataUpdate,
    RemoteLogSegmentState, RemoteStorage, TopicIdPartition, Uuid,
};
use segment::{Log, LogConfig, SegmentError};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let config = LogConfig {
        remote_storage_enable: true,
        segment_bytes: 1024,
        ..LogConfig::default()
    };
    let log = Log::open(dir.path().join("clicks-0"), config)?;
    let now = 1_700_000_000_000;
    for i in 0..40i64 {
        let value = format!("click-{i}");
        let batch = BatchBuilder::new(log.log_end_offset())
            .partition_leader_epoch(0)
            .record(now + i, None, Some(value.as_bytes()))
            .build()?;
        log.append(&batch)?;
    }
    log.roll(None)?;
    // What a consumer reads at offset 0 while it is local, to compare with later.
    let local_answer = log.read(0, 1 << 20)?.records;

    let remote_dir = tempfile::tempdir()?;
    let storage = LocalTieredStorage::open(remote_dir.path())?;
    let partition = TopicIdPartition {
        topic_id: Uuid {
            most_significant_bits: 0x5eed,
            least_significant_bits: 42,
        },
        topic: "clicks".into(),
        partition: 0,
    };
    let broker_id = 1;
    // The remote log metadata manager's records, here a vector.
    let mut remote_segments: Vec<RemoteLogSegmentMetadata> = Vec::new();

    // 1–3: one pass of the copy task.
    let uploads = log.tierable_segments()?;
    assert!(uploads.len() >= 2, "{} sealed segments", uploads.len());
    for (n, upload) in uploads.iter().enumerate() {
        let id = RemoteLogSegmentId {
            topic_id_partition: partition.clone(),
            // Kafka draws a random id per attempt; a counter keeps the example
            // deterministic.
            id: Uuid {
                most_significant_bits: 0x7ea1,
                least_significant_bits: n as i64 + 1,
            },
        };
        let started = RemoteLogSegmentMetadata::from_upload(id.clone(), upload, broker_id, now)?;
        let custom = storage.copy_log_segment_data(&started, upload)?;
        let finished = started.with_update(&RemoteLogSegmentMetadataUpdate {
            remote_log_segment_id: id,
            event_timestamp_ms: now + 1,
            custom_metadata: custom,
            state: RemoteLogSegmentState::CopySegmentFinished,
            broker_id,
        })?;
        log.update_highest_offset_in_remote_storage(finished.end_offset());
        remote_segments.push(finished);
    }
    let highest = log.highest_offset_in_remote_storage();
    let deleted = log.delete_local_through(highest, highest)?;
    assert_eq!(deleted, uploads.len());
    assert_eq!(log.local_log_start_offset(), highest + 1);
    assert_eq!(log.log_start_offset(), 0);
    println!(
        "uploaded {} segments through offset {highest}, deleted {deleted} locally",
        remote_segments.len()
    );

    // 4: a fetch below the local log start.
    let offset = 0;
    match log.read(offset, 1 << 20) {
        Err(SegmentError::OffsetMovedToTieredStorage { .. }) => {}
        other => panic!("expected OffsetMovedToTieredStorage, got {other:?}"),
    }
    let cache: RemoteIndexCache<Uuid> = RemoteIndexCache::new(1 << 20);
    let first = remote_segments
        .iter()
        .position(|m| m.start_offset() <= offset && offset <= m.end_offset())
        .expect("a remote segment holds the offset");
    let mut segments = Vec::new();
    for md in &remote_segments[first..] {
        let key = md.remote_log_segment_id().id;
        let indexes = cache.get_or_load(&key, || fetch_remote_indexes(&storage, md))?;
        segments.push(fetch_remote_segment(&storage, md, indexes)?);
    }
    let fetch = read_remote_kafka(&segments, offset, 1 << 20, true, false)?;
    // Kafka's remote read stops at the end of the segment holding the offset; the
    // local read of a sealed segment does too.
    assert_eq!(fetch.records, local_answer);
    assert!(!fetch.records.is_empty());
    // A second fetch finds the indexes cached: no load.
    let loads = cache.stats().loads;
    let key = remote_segments[first].remote_log_segment_id().id;
    let cached = cache.get_or_load(&key, || unreachable!("the indexes are cached"))?;
    assert!(Arc::ptr_eq(&cached, segments[0].indexes()));
    assert_eq!(cache.stats().loads, loads);
    println!(
        "served {} bytes at offset {offset} from the remote tier (cache: {:?})",
        fetch.records.len(),
        cache.stats()
    );
    Ok(())
}
