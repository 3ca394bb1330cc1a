//! Kafka's `Cleaner.cleanInto` over one read window: which batches and records of a
//! segment a clean keeps, and how it re-encodes them (Kafka's `MemoryRecords.filterTo`
//! with the cleaner's `RecordFilter`), with the transaction bookkeeping of Kafka's
//! `CleanedTransactionMetadata` (`docs/kafka-behaviour.md#cleaner-copy`).

use std::collections::{BTreeMap, HashMap, HashSet};

use index_txn::AbortedTxn;

use crate::record::{
    batches_from, BatchBuilder, ControlRecordType, FileBatch, RecordError, TimestampType, MAGIC_V2,
    NO_PRODUCER_ID, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD,
};

use super::{CleanError, OffsetMap};

/// The last record of an active producer (Kafka's `LastRecord`, from the producer state
/// of the log when the group's clean starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastRecord {
    /// The offset of the producer's last data record, if it has one.
    pub last_data_offset: Option<i64>,
    /// The producer's epoch.
    pub producer_epoch: i16,
}

/// Kafka's `CleanedTransactionMetadata`: the transactions a clean is inside of, carried
/// from segment to segment of one clean (`docs/kafka-behaviour.md#cleaner-txn-markers`).
#[derive(Debug, Default)]
pub struct CleanedTxnMetadata {
    ongoing_committed: HashSet<i64>,
    /// Producer → (its aborted transaction, last offset of a batch of it seen).
    ongoing_aborted: HashMap<i64, (AbortedTxn, Option<i64>)>,
    /// Aborted transactions not reached yet, by first offset (then arrival).
    pending: BTreeMap<(i64, u64), AbortedTxn>,
    arrivals: u64,
    /// Aborted transactions whose ABORT marker a clean keeps, in the order met: the
    /// cleaned segment's transaction index.
    cleaned_index: Vec<AbortedTxn>,
}

impl CleanedTxnMetadata {
    /// Nothing ongoing, nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Kafka's `addAbortedTransactions`: the aborted transactions of the next segment.
    pub fn add_aborted_transactions(&mut self, txns: impl IntoIterator<Item = AbortedTxn>) {
        for t in txns {
            self.pending.insert((t.first_offset, self.arrivals), t);
            self.arrivals += 1;
        }
    }

    /// Takes the transaction-index entries collected since the last call.
    pub fn take_cleaned_index(&mut self) -> Vec<AbortedTxn> {
        std::mem::take(&mut self.cleaned_index)
    }

    fn consume_up_to(&mut self, offset: i64) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > offset {
                break;
            }
            let txn = entry.remove();
            self.ongoing_aborted
                .entry(txn.producer_id)
                .or_insert((txn, None));
        }
    }

    /// Kafka's `onControlBatchRead`: whether the control batch may be discarded. An ABORT
    /// marker is kept (and its transaction indexed) while a batch of its transaction
    /// was seen by this clean; a COMMIT marker while a batch of it was seen; an empty
    /// control batch (already cleaned) may go.
    fn on_control_batch(
        &mut self,
        last_offset: i64,
        producer_id: i64,
        first_key: Option<Option<&[u8]>>,
    ) -> bool {
        self.consume_up_to(last_offset);
        let Some(key) = first_key else {
            return true;
        };
        match ControlRecordType::parse_key(key, 0) {
            Ok(ControlRecordType::Abort) => match self.ongoing_aborted.remove(&producer_id) {
                Some((txn, Some(_))) => {
                    self.cleaned_index.push(txn);
                    false
                }
                _ => true,
            },
            Ok(ControlRecordType::Commit) => !self.ongoing_committed.remove(&producer_id),
            _ => false,
        }
    }

    /// Kafka's `onBatchRead`: whether a data batch belongs to an aborted transaction.
    fn on_batch(&mut self, last_offset: i64, transactional: bool, producer_id: i64) -> bool {
        self.consume_up_to(last_offset);
        if !transactional {
            return false;
        }
        match self.ongoing_aborted.get_mut(&producer_id) {
            Some((_, seen)) => {
                *seen = Some(last_offset);
                true
            }
            None => {
                self.ongoing_committed.insert(producer_id);
                false
            }
        }
    }
}

/// Deliberate damage for the oracle's sabotages (`cargo xtask kafka --sabotage`), which
/// must then fail: never set outside them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CleanSabotage {
    /// Aborted transactional data is kept, as if committed.
    pub keep_aborted: bool,
    /// A v2 tombstone goes on the pass that would give its batch a delete horizon.
    pub drop_tombstone_early: bool,
    /// A rebuilt compressed batch gives its second-to-last record the last one's value.
    pub recompressed_value: bool,
    /// A legacy batch whose records are all kept is copied as it is (Kafka 4.4 rewrites
    /// it as v2).
    pub legacy_copied: bool,
    /// A rewritten legacy batch is based at its first record's offset, kept or not
    /// (Kafka: the first kept record's).
    pub legacy_base_offset: bool,
}

/// What one clean of a segment's window decides from (Kafka's `cleanInto` arguments).
#[derive(Debug)]
pub struct CopyRules<'a> {
    /// The clean's offset map.
    pub map: &'a OffsetMap,
    /// Whether legacy (magic 0/1) tombstones are kept in this segment: its mtime is after
    /// the legacy delete horizon.
    pub retain_legacy_deletes: bool,
    /// `delete.retention.ms`.
    pub delete_retention_ms: i64,
    /// The clean's time, ms.
    pub current_time: i64,
    /// Kafka's `lastRecordsOfActiveProducers`.
    pub active_producers: &'a HashMap<i64, LastRecord>,
    /// The log's high watermark: the batch ending just before it is kept, even empty
    /// (Kafka 4.4's rule: the last offset below the high watermark is not lost).
    pub high_watermark: i64,
    #[doc(hidden)]
    pub sabotage: CleanSabotage,
}

/// Kafka's `FilterResult` of one window, and the cleaner's invalid-message count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowResult {
    /// Bytes of the batches processed (kept or not); the next window starts after them.
    pub bytes_read: u64,
    /// Records read.
    pub messages_read: u64,
    /// Records kept.
    pub messages_retained: u64,
    /// Bytes written (61 for an empty batch).
    pub bytes_retained: u64,
    /// Largest offset kept (−1 for none).
    pub max_offset: i64,
    /// Largest timestamp kept (−1 for none).
    pub max_timestamp: i64,
    /// The offset Kafka's segment append records with `max_timestamp`.
    pub shallow_offset_of_max_timestamp: i64,
    /// Keyless records met (Kafka's `invalidMessage`).
    pub invalid_messages: u64,
}

impl WindowResult {
    fn new() -> Self {
        WindowResult {
            max_offset: -1,
            max_timestamp: NO_TIMESTAMP,
            shallow_offset_of_max_timestamp: -1,
            ..Self::default()
        }
    }

    fn retained(&mut self, max_ts: i64, shallow: i64, max_offset: i64, n: u64, bytes: u64) {
        if max_ts > self.max_timestamp {
            self.max_timestamp = max_ts;
            self.shallow_offset_of_max_timestamp = shallow;
        }
        self.max_offset = self.max_offset.max(max_offset);
        self.messages_retained += n;
        self.bytes_retained += bytes;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BatchRetention {
    Delete,
    RetainEmpty,
    DeleteEmpty,
}

fn unsupported(what: String) -> CleanError {
    CleanError::Unsupported { reason: what }
}

/// Kafka's `MemoryRecords.filterTo` with the cleaner's filter over the complete batches
/// of `window` (a read of a segment's `.log`), appending what is kept to `out`. Stops
/// early, as Kafka does, once `out` has grown past `write_capacity` bytes (Kafka's write
/// buffer had to grow: KAFKA-5316).
///
/// # Errors
/// [`CleanError::Batch`] (with `window_position` 0; the caller adds the file and
/// position) for a corrupt batch; [`CleanError::Unsupported`] for a legacy batch Kafka
/// would keep empty (the one ending at the high watermark with no record kept: Kafka
/// throws `IllegalStateException` there, `docs/kafka-behaviour.md#cleaner-legacy`).
pub fn filter_window(
    window: &[u8],
    rules: &CopyRules<'_>,
    txns: &mut CleanedTxnMetadata,
    out: &mut Vec<u8>,
    write_capacity: usize,
) -> Result<WindowResult, CleanError> {
    let bad = |source: RecordError| CleanError::Batch {
        path: std::path::PathBuf::new(),
        window_position: 0,
        source,
    };
    let mut result = WindowResult::new();
    let out_start = out.len();
    for batch in batches_from(window, 0) {
        let batch = batch.map_err(bad)?;
        let (retention, discard_records, marker_for_empty_txn) =
            check_batch_retention(&batch, rules, txns).map_err(bad)?;
        result.bytes_read += batch.size_in_bytes() as u64;
        if retention == BatchRetention::Delete {
            continue;
        }
        let magic = batch.magic();
        // The header's count, bounded: a corrupt header must not reserve gigabytes.
        let mut retained =
            Vec::with_capacity(batch.records_count().unwrap_or(0).clamp(0, 1024) as usize);
        let mut all_kept = true;
        let mut contains_tombstones = false;
        let mut max_offset = -1i64;
        for r in batch.records().map_err(bad)? {
            let r = r.map_err(bad)?;
            result.messages_read += 1;
            let keep = if discard_records {
                false
            } else if batch.is_control() {
                true
            } else {
                should_retain_record(&batch, &r, rules, &mut result)
            };
            if keep {
                max_offset = max_offset.max(r.offset);
                if r.value.is_none() {
                    contains_tombstones = true;
                }
                retained.push(r);
            } else {
                all_kept = false;
            }
        }
        if !retained.is_empty() {
            let v2 = batch.as_v2();
            let horizon = v2.and_then(|b| b.delete_horizon_ms());
            // Kafka 4.4 checks no magic here: a legacy batch has no horizon, so one kept
            // with a tombstone gets one too (`docs/kafka-behaviour.md#cleaner-legacy`).
            let set_horizon = (contains_tombstones || marker_for_empty_txn) && horizon.is_none();
            // Kafka 4.4 never copies a legacy batch: every one it keeps a record of is
            // rewritten as a v2 batch.
            let copy_whole = magic >= MAGIC_V2 || rules.sabotage.legacy_copied;
            if all_kept && copy_whole && (!set_horizon || magic < MAGIC_V2) {
                out.extend_from_slice(batch.as_bytes());
                result.retained(
                    batch.max_timestamp(),
                    batch.last_offset(),
                    batch.last_offset(),
                    retained.len() as u64,
                    batch.size_in_bytes() as u64,
                );
            } else if let Some(v2) = v2 {
                let horizon = if set_horizon {
                    Some(rules.current_time.wrapping_add(rules.delete_retention_ms))
                } else {
                    horizon
                };
                let mut b = BatchBuilder::new(v2.base_offset())
                    .compression(v2.compression().map_err(bad)?)
                    .partition_leader_epoch(v2.partition_leader_epoch())
                    .producer(v2.producer_id(), v2.producer_epoch(), v2.base_sequence())
                    .transactional(v2.is_transactional())
                    .control(v2.is_control_batch())
                    .override_last_offset(v2.last_offset());
                if v2.timestamp_type() == TimestampType::LogAppendTime {
                    b = b.log_append_time(v2.max_timestamp());
                }
                if let Some(h) = horizon {
                    b = b.delete_horizon(h);
                }
                let mut max_ts = NO_TIMESTAMP;
                if rules.sabotage.recompressed_value
                    && v2.compression().ok() != Some(crate::record::CompressionType::None)
                {
                    if let [.., a, b] = retained.as_mut_slice() {
                        a.value.clone_from(&b.value);
                    }
                }
                for r in &retained {
                    max_ts = max_ts.max(r.timestamp);
                    let headers: Vec<(&[u8], Option<&[u8]>)> = r
                        .headers
                        .iter()
                        .map(|h| (&*h.key, h.value.as_deref()))
                        .collect();
                    b = b.record_at(r.offset, r.timestamp, r.key(), r.value(), &headers);
                }
                if v2.timestamp_type() == TimestampType::LogAppendTime {
                    max_ts = v2.max_timestamp();
                }
                let n = b.write_to(out).map_err(bad)?;
                // `MemoryRecordsBuilder.info()`: for v2 the shallow offset of the max
                // timestamp is the (overridden) last offset; none without a timestamp.
                let shallow = if max_ts == NO_TIMESTAMP {
                    -1
                } else {
                    v2.last_offset()
                };
                result.retained(max_ts, shallow, max_offset, retained.len() as u64, n as u64);
            } else {
                let horizon =
                    set_horizon.then(|| rules.current_time.wrapping_add(rules.delete_retention_ms));
                let (n, max_ts, shallow) =
                    rebuild_legacy(&batch, &retained, horizon, rules, out).map_err(bad)?;
                result.retained(max_ts, shallow, max_offset, retained.len() as u64, n as u64);
            }
        } else if retention == BatchRetention::RetainEmpty {
            let Some(v2) = batch.as_v2() else {
                return Err(unsupported(format!(
                    "empty batches are only supported for magic v2 and above (batch at \
                     offset {})",
                    batch.base_offset()
                )));
            };
            let mut b = BatchBuilder::new(v2.base_offset())
                .partition_leader_epoch(v2.partition_leader_epoch())
                .producer(v2.producer_id(), v2.producer_epoch(), v2.base_sequence())
                .transactional(v2.is_transactional())
                .control(v2.is_control_batch());
            if v2.timestamp_type() == TimestampType::LogAppendTime {
                b = b.log_append_time(v2.max_timestamp());
            }
            let bytes = b
                .build_empty(v2.last_offset(), v2.max_timestamp())
                .map_err(bad)?;
            out.extend_from_slice(&bytes);
            result.retained(
                v2.max_timestamp(),
                v2.last_offset(),
                v2.last_offset(),
                0,
                RECORD_BATCH_OVERHEAD as u64,
            );
        }
        if out.len() - out_start > write_capacity {
            break;
        }
    }
    Ok(result)
}

/// Kafka 4.4's rewrite of a legacy (magic 0/1) batch it keeps records of
/// (`docs/kafka-behaviour.md#cleaner-legacy`): one v2 batch of the kept records, based at
/// the first kept record's offset and ending at the last kept one's (no override of the
/// last offset), the original codec, CreateTime for magic 0 (LogAppendTime, at the
/// wrapper's timestamp, when the original has it), no producer and no leader epoch (−1),
/// and `horizon` as its delete horizon. Returns the bytes written, the batch's max
/// timestamp and the shallow offset `MemoryRecordsBuilder.info()` gives it.
fn rebuild_legacy(
    batch: &FileBatch<'_>,
    retained: &[crate::record::Record<'_>],
    horizon: Option<i64>,
    rules: &CopyRules<'_>,
    out: &mut Vec<u8>,
) -> Result<(usize, i64, i64), RecordError> {
    let (Some(first), Some(last)) = (retained.first(), retained.last()) else {
        return Ok((0, NO_TIMESTAMP, -1));
    };
    let base = if rules.sabotage.legacy_base_offset {
        batch.as_legacy().map_or(Ok(first.offset), |l| {
            l.deep_base_offset().map(|d| d.min(first.offset))
        })?
    } else {
        first.offset
    };
    let mut b = BatchBuilder::new(base).compression(batch.compression()?);
    let log_append = batch.timestamp_type() == TimestampType::LogAppendTime;
    if log_append {
        b = b.log_append_time(batch.max_timestamp());
    }
    if let Some(h) = horizon {
        b = b.delete_horizon(h);
    }
    let mut max_ts = NO_TIMESTAMP;
    for r in retained {
        max_ts = max_ts.max(r.timestamp);
        b = b.record_at(r.offset, r.timestamp, r.key(), r.value(), &[]);
    }
    let n = b.write_to(out)?;
    // `MemoryRecordsBuilder.info()` of a v2 builder: LogAppendTime gives the append time
    // at the last offset; CreateTime gives none (−1, −1) without a timestamp, else the
    // max timestamp at the last offset.
    if log_append {
        Ok((n, batch.max_timestamp(), last.offset))
    } else if max_ts == NO_TIMESTAMP {
        Ok((n, NO_TIMESTAMP, -1))
    } else {
        Ok((n, max_ts, last.offset))
    }
}

/// Kafka's `checkBatchRetention` of the cleaner's filter: the batch's retention, whether
/// its records are all discarded, and whether it is a discardable control batch (a
/// marker whose transaction left no data: it then gets a delete horizon).
fn check_batch_retention(
    batch: &FileBatch<'_>,
    rules: &CopyRules<'_>,
    txns: &mut CleanedTxnMetadata,
) -> Result<(BatchRetention, bool, bool), RecordError> {
    let control = batch.is_control();
    let can_discard = if control {
        let mut records = batch.records()?;
        let first = match records.next() {
            Some(r) => Some(r?.key.map(|k| k.into_owned())),
            None => None,
        };
        txns.on_control_batch(
            batch.last_offset(),
            batch.producer_id(),
            first.as_ref().map(|k| k.as_deref()),
        )
    } else {
        txns.on_batch(
            batch.last_offset(),
            batch.is_transactional(),
            batch.producer_id(),
        ) && !rules.sabotage.keep_aborted
    };
    let horizon = batch.as_v2().and_then(|b| b.delete_horizon_ms());
    let discard_records = if control {
        can_discard && horizon.is_some_and(|h| h <= rules.current_time)
    } else {
        can_discard
    };
    let last_of_producer = || {
        rules
            .active_producers
            .get(&batch.producer_id())
            .is_some_and(|last| match last.last_data_offset {
                Some(o) => batch.last_offset() == o,
                None => control && batch.producer_epoch() == last.producer_epoch,
            })
    };
    // Kept even empty: an active producer's last batch (its last sequence, or the
    // marker with its last epoch), and the batch ending at the high watermark.
    let retention = if (batch.producer_id() > NO_PRODUCER_ID && last_of_producer())
        || batch.next_offset() == rules.high_watermark
    {
        BatchRetention::RetainEmpty
    } else if discard_records {
        BatchRetention::Delete
    } else {
        BatchRetention::DeleteEmpty
    };
    Ok((retention, discard_records, can_discard && control))
}

/// Kafka's `Cleaner.shouldRetainRecord`.
fn should_retain_record(
    batch: &FileBatch<'_>,
    r: &crate::record::Record<'_>,
    rules: &CopyRules<'_>,
    result: &mut WindowResult,
) -> bool {
    if r.offset > rules.map.latest_offset() {
        return true;
    }
    let Some(key) = r.key() else {
        result.invalid_messages += 1;
        return false;
    };
    let latest = rules.map.is_latest(key, r.offset);
    let retain_deletes = match batch.as_v2() {
        Some(v2) => match v2.delete_horizon_ms() {
            None => !rules.sabotage.drop_tombstone_early,
            Some(h) => rules.current_time < h,
        },
        None => rules.retain_legacy_deletes,
    };
    latest && (r.value.is_some() || retain_deletes)
}

#[cfg(test)]
mod tests {
    //! The legacy (magic 0/1) rules of Kafka 4.4's copy
    //! (`docs/kafka-behaviour.md#cleaner-legacy`); each test also runs the copy with the
    //! rule broken (a sabotage flag, or the opposite input) and sees the answer change.
    use super::*;
    use crate::clean::OffsetMapCapacity;
    use crate::record::{legacy_wrapper, CompressionType, LegacyMessage, RecordBatch};

    const NOW: i64 = 1_700_000_000_000;
    const RETENTION: i64 = 1_000;

    fn map(puts: &[(&str, i64)]) -> OffsetMap {
        let mut m = OffsetMap::new(OffsetMapCapacity::new(24 * 64, 0.9).unwrap());
        for (k, o) in puts {
            m.put(k.as_bytes(), *o).unwrap();
        }
        m
    }

    fn msg<'a>(
        magic: i8,
        offset: i64,
        ts: i64,
        key: Option<&'a str>,
        value: Option<&'a str>,
    ) -> LegacyMessage<'a> {
        LegacyMessage {
            magic,
            offset,
            timestamp: ts,
            log_append_time: false,
            key: key.map(str::as_bytes),
            value: value.map(str::as_bytes),
        }
    }

    /// A magic 1 wrapper of `codec` whose inner messages (relative offsets) end at
    /// absolute offset `last`.
    fn wrapper_v1(
        codec: CompressionType,
        last: i64,
        log_append: bool,
        inner: &[(Option<&str>, Option<&str>, i64)],
    ) -> Vec<u8> {
        let msgs: Vec<LegacyMessage<'_>> = inner
            .iter()
            .enumerate()
            .map(|(i, (k, v, ts))| msg(1, i as i64, *ts, *k, *v))
            .collect();
        let mut w = msg(1, last, 9_000, None, None);
        w.log_append_time = log_append;
        legacy_wrapper(w, codec, &msgs).unwrap()
    }

    struct Run {
        out: Vec<u8>,
        result: WindowResult,
    }

    fn run(
        window: &[u8],
        m: &OffsetMap,
        retain_legacy_deletes: bool,
        hw: i64,
        sabotage: CleanSabotage,
    ) -> Result<Run, CleanError> {
        let producers = HashMap::new();
        let rules = CopyRules {
            map: m,
            retain_legacy_deletes,
            delete_retention_ms: RETENTION,
            current_time: NOW,
            active_producers: &producers,
            high_watermark: hw,
            sabotage,
        };
        let mut out = Vec::new();
        let result = filter_window(
            window,
            &rules,
            &mut CleanedTxnMetadata::new(),
            &mut out,
            1 << 20,
        )?;
        Ok(Run { out, result })
    }

    /// A kept record: offset, timestamp, key, value.
    type Kept = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);

    fn kept(out: &[u8]) -> Vec<Kept> {
        let mut v = Vec::new();
        for b in batches_from(out, 0) {
            for r in b.unwrap().records().unwrap() {
                let r = r.unwrap();
                v.push((
                    r.offset,
                    r.timestamp,
                    r.key().map(<[u8]>::to_vec),
                    r.value().map(<[u8]>::to_vec),
                ));
            }
        }
        v
    }

    #[test]
    fn a_partly_kept_wrapper_becomes_a_v2_batch_at_its_first_kept_offset() {
        // Offsets 10..=13: a, b, a (newer), c; the map knows a at 12.
        let inner = [
            (Some("a"), Some("1"), 100),
            (Some("b"), Some("2"), 300),
            (Some("a"), Some("3"), 200),
            (Some("c"), Some("4"), 250),
        ];
        for codec in [
            CompressionType::Gzip,
            CompressionType::Snappy,
            CompressionType::Lz4,
        ] {
            let window = wrapper_v1(codec, 13, false, &inner);
            let m = map(&[("a", 12), ("b", 11), ("c", 13)]);
            let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
            let b = RecordBatch::new(&r.out).unwrap();
            assert!(b.is_valid());
            assert_eq!((b.base_offset(), b.last_offset()), (11, 13), "{codec:?}");
            assert_eq!(b.compression().unwrap(), codec);
            assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
            assert_eq!(
                (b.producer_id(), b.producer_epoch(), b.base_sequence()),
                (-1, -1, -1)
            );
            assert_eq!(b.partition_leader_epoch(), -1);
            assert_eq!((b.base_timestamp(), b.max_timestamp()), (300, 300));
            assert_eq!(b.delete_horizon_ms(), None);
            assert_eq!(
                kept(&r.out),
                vec![
                    (11, 300, Some(b"b".to_vec()), Some(b"2".to_vec())),
                    (12, 200, Some(b"a".to_vec()), Some(b"3".to_vec())),
                    (13, 250, Some(b"c".to_vec()), Some(b"4".to_vec())),
                ]
            );
            assert_eq!((r.result.messages_read, r.result.messages_retained), (4, 3));
            assert_eq!(
                (
                    r.result.max_timestamp,
                    r.result.shallow_offset_of_max_timestamp,
                    r.result.max_offset
                ),
                (300, 13, 13)
            );
            assert_eq!(r.result.bytes_retained, r.out.len() as u64);
            // Broken: based at the wrapper's first offset, the dropped record's.
            let bad = run(
                &window,
                &m,
                true,
                100,
                CleanSabotage {
                    legacy_base_offset: true,
                    ..CleanSabotage::default()
                },
            )
            .unwrap();
            assert_eq!(RecordBatch::new(&bad.out).unwrap().base_offset(), 10);
        }
    }

    #[test]
    fn a_fully_kept_legacy_message_is_rewritten_as_v2() {
        // Magic 0 (no timestamp) and magic 1, uncompressed, one message each.
        let mut window = Vec::new();
        msg(0, 5, 0, Some("k"), Some("v"))
            .write_to(&mut window)
            .unwrap();
        msg(1, 6, 4_000, Some("j"), Some("w"))
            .write_to(&mut window)
            .unwrap();
        let m = map(&[("k", 5), ("j", 6)]);
        let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
        let batches: Vec<_> = batches_from(&r.out, 0).map(Result::unwrap).collect();
        assert_eq!(batches.len(), 2);
        let (b0, b1) = (batches[0].as_v2().unwrap(), batches[1].as_v2().unwrap());
        assert_eq!(
            (
                b0.base_offset(),
                b0.last_offset(),
                b0.max_timestamp(),
                b0.base_timestamp()
            ),
            (5, 5, -1, -1)
        );
        assert_eq!(b0.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(b0.compression().unwrap(), CompressionType::None);
        assert_eq!((b1.base_offset(), b1.max_timestamp()), (6, 4_000));
        // Magic 0 has no timestamp: no time-index candidate (−1, −1).
        assert_eq!(
            (
                r.result.max_timestamp,
                r.result.shallow_offset_of_max_timestamp
            ),
            (4_000, 6)
        );
        assert_eq!(r.result.messages_retained, 2);
        // Broken: copied as it is, the pre-4.4 rule.
        let bad = run(
            &window,
            &m,
            true,
            100,
            CleanSabotage {
                legacy_copied: true,
                ..CleanSabotage::default()
            },
        )
        .unwrap();
        assert_eq!(bad.out, window);
        assert_ne!(bad.out, r.out);
    }

    #[test]
    fn a_kept_legacy_tombstone_gets_a_delete_horizon_and_goes_past_the_legacy_horizon() {
        let mut window = Vec::new();
        msg(1, 3, 4_000, Some("t"), None)
            .write_to(&mut window)
            .unwrap();
        let m = map(&[("t", 3)]);
        // The segment is newer than the legacy horizon: kept, with a v2 delete horizon.
        let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
        let b = RecordBatch::new(&r.out).unwrap();
        assert_eq!(b.delete_horizon_ms(), Some(NOW + RETENTION));
        assert_eq!(b.base_timestamp(), NOW + RETENTION);
        assert_eq!(b.max_timestamp(), 4_000);
        assert_eq!(kept(&r.out), vec![(3, 4_000, Some(b"t".to_vec()), None)]);
        // Not newer: the tombstone goes (and with it the batch).
        let gone = run(&window, &m, false, 100, CleanSabotage::default()).unwrap();
        assert!(gone.out.is_empty());
        assert_eq!(gone.result.messages_retained, 0);
        // A value is kept either way, without a horizon.
        let mut live = Vec::new();
        msg(1, 3, 4_000, Some("t"), Some("x"))
            .write_to(&mut live)
            .unwrap();
        let r = run(&live, &m, false, 100, CleanSabotage::default()).unwrap();
        assert_eq!(RecordBatch::new(&r.out).unwrap().delete_horizon_ms(), None);
    }

    #[test]
    fn a_log_append_time_wrapper_keeps_its_time_and_keyless_records_go() {
        // Offsets 20..=22: keyless, k, keyless; the wrapper's LogAppendTime 9000.
        let inner = [
            (None, Some("x"), 1),
            (Some("k"), Some("y"), 2),
            (None, Some("z"), 3),
        ];
        let window = wrapper_v1(CompressionType::Lz4, 22, true, &inner);
        let m = map(&[("k", 21), ("other", 22)]);
        let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
        let b = RecordBatch::new(&r.out).unwrap();
        assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
        assert_eq!(
            (b.base_offset(), b.last_offset(), b.max_timestamp()),
            (21, 21, 9_000)
        );
        assert_eq!(
            kept(&r.out),
            vec![(21, 9_000, Some(b"k".to_vec()), Some(b"y".to_vec()))]
        );
        assert_eq!(r.result.invalid_messages, 2);
        assert_eq!(
            (
                r.result.max_timestamp,
                r.result.shallow_offset_of_max_timestamp
            ),
            (9_000, 21)
        );
        // Keyless records after the map's latest offset are kept.
        let m = map(&[("k", 19)]);
        let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
        assert_eq!(kept(&r.out).len(), 3);
        assert_eq!(r.result.invalid_messages, 0);
    }

    #[test]
    fn a_legacy_batch_at_the_high_watermark_with_nothing_kept_is_refused() {
        let mut window = Vec::new();
        msg(0, 7, 0, Some("k"), Some("old"))
            .write_to(&mut window)
            .unwrap();
        let m = map(&[("k", 9)]);
        // Kafka keeps the batch ending at the high watermark, even empty, and throws
        // for a legacy one.
        assert!(matches!(
            run(&window, &m, true, 8, CleanSabotage::default()),
            Err(CleanError::Unsupported { .. })
        ));
        // Elsewhere it simply goes.
        let r = run(&window, &m, true, 100, CleanSabotage::default()).unwrap();
        assert!(r.out.is_empty());
    }
}
