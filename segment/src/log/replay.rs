//! Rebuilding the producer state from its snapshots and the batches of the log's
//! segments (Kafka's `UnifiedLog.rebuildProducerState`). It reads the segments, so it
//! lives in the layer above them, not in `producer/`, which `segment/` imports.

use crate::diag as tracing;
use crate::error::Result;
use crate::format::BatchFormat;
use crate::fs::FileSystem;
use crate::producer::ProducerStateManager;
use crate::segment_map::LogSegments;

/// Kafka's `UnifiedLog.rebuildProducerState` (for v2 data): brings `psm` to `last_offset`
/// — snapshots above `last_offset` (or at/below the log start) are deleted, the latest
/// remaining one is loaded, and the batches from there up to `last_offset` are replayed
/// from `segments`; snapshots are taken at the base offsets of the last two segments when
/// the replay passes them, and at `last_offset`.
///
/// Deviation: Kafka skips the replay when no snapshot exists and the log was shut down
/// cleanly (its upgrade shortcut) and so forgets transactions still open; this always
/// replays, which costs one scan of a log that has no snapshot yet. A snapshot that cannot
/// be written (a full disk) is deferred ([`ProducerStateManager::take_snapshot_or_defer`])
/// instead of failing the rebuild, so a log that cannot grow still opens.
///
/// # Errors
/// I/O errors; a corrupt batch met by the replay ends it with a warning (the segment it
/// is in is recovered separately).
pub fn rebuild_producer_state<F: BatchFormat>(
    psm: &mut ProducerStateManager,
    segments: &LogSegments<F>,
    fs: &dyn FileSystem,
    log_start_offset: i64,
    last_offset: i64,
    now_ms: i64,
) -> Result<()> {
    let mut offsets_to_snapshot = Vec::new();
    if let Some(last) = segments.last_segment() {
        if let Some(lower) = segments.lower_segment(last.base_offset()) {
            offsets_to_snapshot.push(lower.base_offset());
        }
        offsets_to_snapshot.push(last.base_offset());
    }
    let empty_before = psm.is_empty() && psm.map_end_offset() >= last_offset;
    psm.truncate_and_reload(fs, log_start_offset, last_offset, now_ms)?;
    if last_offset > psm.map_end_offset() && !empty_before {
        for seg in segments.values_range(psm.map_end_offset(), last_offset)? {
            let start = seg
                .base_offset()
                .max(psm.map_end_offset())
                .max(log_start_offset);
            psm.set_map_end_offset(start);
            if offsets_to_snapshot.contains(&seg.base_offset()) {
                psm.take_snapshot_or_defer(fs)?;
            }
            replay_segment(psm, &seg, start, last_offset)?;
        }
    }
    psm.set_map_end_offset(last_offset);
    psm.take_snapshot_or_defer(fs)?;
    Ok(())
}

/// Applies the batches of `seg` whose last offset is in `[start, end)` (Kafka's
/// `loadProducersFromRecords` over `segment.read(start, …, position of end)`).
fn replay_segment<F: BatchFormat>(
    psm: &mut ProducerStateManager,
    seg: &crate::segment::LogSegment<F>,
    start: i64,
    end: i64,
) -> Result<()> {
    let mut sc = crate::scan::Scanner::<F>::new(seg.log(), 0);
    while let Some((info, bytes)) = sc.next_batch()? {
        if info.last_offset < start {
            continue;
        }
        if info.last_offset >= end {
            break;
        }
        if !(F::KAFKA_PRODUCER_STATE && info.magic >= 2) {
            psm.set_map_end_offset(info.last_offset + 1);
            continue;
        }
        // Only a control batch with a producer id is a marker to parse
        // (docs/kafka-behaviour.md#control-batch-without-producer).
        let marker = if info.is_control && info.producer_id >= 0 {
            match F::end_txn_marker(bytes, info.position) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(segment = %seg.log_path().display(), error = %e, "invalid control record while loading producer state; stopping");
                    break;
                }
            }
        } else {
            None
        };
        if let Some(done) = psm.update(&info, marker.as_ref()) {
            psm.complete_txn(&done);
        }
    }
    if let Some(crate::scan::ScanStop::Corrupt { position, error }) = sc.stop() {
        tracing::warn!(segment = %seg.log_path().display(), position, %error, "corrupt batch while loading producer state");
    }
    Ok(())
}
