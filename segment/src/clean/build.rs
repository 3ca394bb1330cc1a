//! Kafka's `Cleaner.buildOffsetMap` over a live log ([`CleanerSource`]): the dirty section's batches, read
//! segment by segment, fed to [`MapFill`] with the transaction bookkeeping of Kafka's
//! `CleanedTransactionMetadata` (`docs/kafka-behaviour.md#cleaner-offset-map`).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use index_txn::AbortedTxn;

use crate::record::{batches_from, ControlRecordType};

use super::offset_map::key_digests_into;
use super::{key_digest, CleanError, CleanerSource, Fill, MapFill, OffsetMap};

/// What [`build_offset_map`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapBuild {
    /// The first offset this clean leaves dirty (Kafka's `offsetMap.latestOffset + 1`):
    /// `end` when every dirty segment was mapped, less when the map filled.
    pub end_offset: i64,
    /// Whether the map filled before `end` (a partial clean).
    pub full: bool,
    /// Batches read, and bytes of them.
    pub batches_read: u64,
    /// Bytes of the batches read.
    pub bytes_read: u64,
}

/// Which batches of the dirty section belong to aborted transactions (Kafka's
/// `CleanedTransactionMetadata`, the part the map build uses): an aborted transaction of
/// the log's transaction indexes becomes ongoing for its producer when a batch at or
/// after its first offset is read, and ends at that producer's ABORT marker.
struct AbortTracker {
    /// Aborted transactions not reached yet, by first offset.
    pending: BTreeMap<(i64, usize), AbortedTxn>,
    /// Producers inside an aborted transaction.
    ongoing: HashSet<i64>,
}

impl AbortTracker {
    fn new(txns: Vec<AbortedTxn>) -> Self {
        AbortTracker {
            pending: txns
                .into_iter()
                .enumerate()
                .map(|(i, t)| ((t.first_offset, i), t))
                .collect(),
            ongoing: HashSet::new(),
        }
    }

    fn consume_up_to(&mut self, offset: i64) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > offset {
                break;
            }
            let txn = entry.remove();
            self.ongoing.insert(txn.producer_id);
        }
    }
}

/// Kafka's `Cleaner.buildOffsetMap(log, start, end, map)`: clears `map`, then maps the
/// latest offset of every key of the log's segments from the one holding `start` up to
/// (excluding) the first whose base offset is ≥ `end` (Kafka's `logSegments(start, end)`),
/// with Kafka's stop rule ([`MapFill`]): a control batch, or a batch of an aborted
/// transaction (from the segments' transaction indexes), only moves the latest offset;
/// records before `start` and records without a key are skipped; the build stops at the
/// first keyed record that finds the map holding its
/// [`max_entries`](super::OffsetMapCapacity::max_entries).
///
/// `end` is the clean's first uncleanable offset (a segment base offset, as
/// [`LogToClean::first_uncleanable_offset`](super::LogToClean)). Batches are read in
/// windows of at least 64 KiB, grown to hold a larger batch up to `max_message_size`
/// bytes (Kafka's `growBuffersOrFail`).
///
/// # Errors
/// [`CleanError::Segment`]: `end < start` (Kafka's `IllegalArgumentException`), I/O,
/// index and transaction-index errors; [`CleanError::Batch`]: a corrupt batch, or one
/// larger than `max_message_size`; [`CleanError::OffsetMapFull`] only with a load factor
/// above 1.
pub fn build_offset_map<L: CleanerSource + ?Sized>(
    log: &L,
    map: &mut OffsetMap,
    start: i64,
    end: i64,
    max_message_size: u32,
) -> Result<MapBuild, CleanError> {
    let dirty = log.cleaner_segments().values_range(start, end)?;
    let aborted = if dirty.is_empty() {
        Vec::new()
    } else {
        log.cleaner_aborted_txns(start, end)?
    };
    let mut tracker = AbortTracker::new(aborted);
    let mut fill = MapFill::with_range(map, start, end);
    // A data batch's keyed records from `start`: their offsets, keys and MD5s, digested
    // before their puts (four at a time) so that the table reads of a batch overlap.
    let mut keyed: Vec<i64> = Vec::new();
    let mut digests: Vec<[u8; 16]> = Vec::new();
    let (mut owned, mut owned_at): (Vec<Vec<u8>>, Vec<usize>) = (Vec::new(), Vec::new());
    let (mut batches_read, mut bytes_read) = (0u64, 0u64);
    'segments: for (i, seg) in dirty.iter().enumerate() {
        let next_start = dirty.get(i + 1).map_or(end, |s| s.base_offset());
        let file = seg.log();
        let size = file.size_in_bytes();
        let mut position = u64::from(
            seg.offset_index()?
                .lookup(start)
                .map_err(crate::SegmentError::from)?
                .position,
        );
        let mut window: u64 = 64 * 1024;
        let path = seg.log_path();
        let bad = |window_position: u64, source: crate::record::RecordError| CleanError::Batch {
            path: path.clone(),
            window_position,
            source,
        };
        while position < size {
            let len = window.min(size - position);
            let chunk = file.read(position, len)?;
            let mut keys: Vec<&[u8]> = Vec::with_capacity(64);
            let mut consumed = 0u64;
            for batch in batches_from(&chunk, 0) {
                let batch = batch.map_err(|e| bad(position, e))?;
                consumed += batch.size_in_bytes() as u64;
                batches_read += 1;
                tracker.consume_up_to(batch.last_offset());
                if batch.is_control() {
                    let mut records = batch.records().map_err(|e| bad(position, e))?;
                    if let Some(Ok(r)) = records.next() {
                        if ControlRecordType::parse_key(r.key(), position)
                            .is_ok_and(|t| t == ControlRecordType::Abort)
                        {
                            tracker.ongoing.remove(&batch.producer_id());
                        }
                    }
                } else if !(batch.is_transactional()
                    && tracker.ongoing.contains(&batch.producer_id()))
                {
                    keyed.clear();
                    keys.clear();
                    digests.clear();
                    for r in batch.records().map_err(|e| bad(position, e))? {
                        let r = r.map_err(|e| bad(position, e))?;
                        // A record without a key, or before the start, leaves the map as
                        // it is (`MapFill::record`).
                        if r.offset >= start {
                            if let Some(Cow::Borrowed(k)) = r.key {
                                keyed.push(r.offset);
                                keys.push(k);
                            } else if let Some(k) = r.key() {
                                // An owned key (not from an uncompressed batch): digested
                                // here, in order.
                                keyed.push(r.offset);
                                owned.push(k.to_vec());
                                keys.push(&[]);
                                owned_at.push(keys.len() - 1);
                            }
                        }
                    }
                    key_digests_into(&keys, &mut digests);
                    for (i, k) in owned_at.drain(..).zip(owned.drain(..)) {
                        if let Some(d) = digests.get_mut(i) {
                            *d = key_digest(&k);
                        }
                    }
                    fill.touch(&digests);
                    for (offset, d) in keyed.iter().zip(&digests) {
                        if fill.record_digest(*offset, Some(d))? == Fill::Full {
                            bytes_read += consumed;
                            break 'segments;
                        }
                    }
                }
                fill.end_batch(batch.last_offset());
            }
            bytes_read += consumed;
            if consumed == 0 {
                if window >= u64::from(max_message_size).max(len) || len < window {
                    return Err(bad(
                        position,
                        crate::record::RecordError::invalid(
                            0,
                            format!(
                                "no complete batch in {len} bytes (max message size \
                                 {max_message_size})"
                            ),
                        ),
                    ));
                }
                window = (window * 2).min(u64::from(max_message_size).max(64 * 1024));
            }
            position += consumed;
        }
        fill.end_segment(next_start);
    }
    fill.seal();
    Ok(MapBuild {
        end_offset: fill.end_offset(),
        full: fill.is_full(),
        batches_read,
        bytes_read,
    })
}
