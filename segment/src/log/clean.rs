//! [`Log::clean`]: one round of Kafka's log cleaner over a compacted log (Kafka's
//! `Cleaner.doClean`, `cleanSegments`, `cleanInto` and `UnifiedLog.replaceSegments`;
//! `docs/kafka-behaviour.md#cleaner-copy`, `docs/kafka-behaviour.md#cleaner-swap`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Log;
use crate::clean::{
    build_offset_map, filter_window, group_segments_by_size, read_cleaner_checkpoint,
    write_cleaner_checkpoint, CleanError, CleanSabotage, CleanedTxnMetadata, CleanerConfig,
    CleanerSource, CompactionConfig, CopyRules, LastRecord, LogSummary, LogToClean, OffsetMap,
    TopicPartition,
};
use crate::diag as tracing;
use crate::error::SegmentError;
use crate::format::KafkaBatchFormat;
use crate::names::{self, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
use crate::segment::LogSegment;

/// What one [`Log::clean`] did (Kafka's `CleanerStats` counts, and the clean's range).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CleanerStats {
    /// The first dirty offset the clean started from.
    pub first_dirty_offset: i64,
    /// The first offset it leaves dirty: the new checkpoint.
    pub end_offset: i64,
    /// Batches read while building the offset map.
    pub map_batches_read: u64,
    /// Bytes read while building the offset map (Kafka's `mapBytesRead`).
    pub map_bytes_read: u64,
    /// Records read while copying (Kafka's `messagesRead`).
    pub messages_read: u64,
    /// Bytes of the batches read while copying (Kafka's `bytesRead`).
    pub bytes_read: u64,
    /// Records written (Kafka's `messagesWritten`).
    pub messages_written: u64,
    /// Bytes written (Kafka's `bytesWritten`).
    pub bytes_written: u64,
    /// Keyless records met below the map's latest offset (Kafka's `invalidMessagesRead`).
    pub invalid_messages_read: u64,
    /// The offset map's utilization (keys / slots).
    pub buffer_utilization: f64,
    /// Segments replaced.
    pub segments_cleaned: u64,
    /// Cleaned segments written (one per group).
    pub segments_written: u64,
    /// Bytes the offset map's table held at the end of the clean
    /// ([`OffsetMap::memory_bytes`]; Kafka's map holds `log.cleaner.dedupe.buffer.size`
    /// divided among the threads, whatever the key count).
    pub offset_map_bytes: u64,
    /// The most bytes the offset map's tables held at once during the clean
    /// ([`OffsetMap::peak_memory_bytes`]: the old and the new table while it grows).
    pub offset_map_peak_bytes: u64,
}

/// How one clean is driven (crate-internal): [`Log::clean`] reads and writes the
/// `cleaner-offset-checkpoint` itself and never stops early; the
/// [`Cleaner`](crate::Cleaner) keeps the checkpoint for its threads and stops a clean
/// that is aborted or shut down.
pub(crate) struct CleanDriver<'a> {
    /// The partition's checkpointed first dirty offset, read under the log's lock.
    pub(crate) checkpointed: &'a mut dyn FnMut() -> Result<Option<i64>, CleanError>,
    /// Takes the new first dirty offset, under the log's lock.
    pub(crate) checkpoint: &'a mut dyn FnMut(i64) -> Result<(), CleanError>,
    /// Whether to stop: checked before the clean, before each group and before each read
    /// window (Kafka's `checkDone`); a stop is [`CleanError::Aborted`].
    pub(crate) stop: &'a dyn Fn() -> bool,
    /// The oracle's damage (none outside the `sabotage` feature).
    pub(crate) sabotage: CleanSabotage,
    /// Told every byte count read or written (`log.cleaner.io.max.bytes.per.second`):
    /// each window read and written while copying, and the offset map build's reads once
    /// it is built.
    pub(crate) throttle: &'a dyn Fn(u64),
}

/// What a clean's group copy reads besides the group.
struct GroupRules<'a> {
    map: &'a OffsetMap,
    now: i64,
    legacy_delete_horizon: i64,
    compaction: &'a CompactionConfig,
    cleaner: &'a CleanerConfig,
    sabotage: CleanSabotage,
    stop: &'a dyn Fn() -> bool,
    throttle: &'a dyn Fn(u64),
}

/// Kafka's `UnifiedLog.parseTopicPartitionName` for a plain partition directory:
/// `<topic>-<partition>`, split at the last `-`.
pub(crate) fn topic_partition_of(dir: &std::path::Path) -> Option<TopicPartition> {
    let name = dir.file_name()?.to_str()?;
    let (topic, partition) = name.rsplit_once('-')?;
    if topic.is_empty() {
        return None;
    }
    Some(TopicPartition::new(topic, partition.parse().ok()?))
}

/// The cleaner's reads of a live log ([`crate::clean::CleanerSource`]): the segment map,
/// the bounds of one moment and the aborted transactions from the log start.
impl<F: crate::format::BatchFormat> CleanerSource for Log<F> {
    type Format = F;

    fn cleaner_segments(&self) -> &crate::segment_map::LogSegments<F> {
        self.segments()
    }

    fn cleaner_bounds(&self) -> (i64, i64, i64) {
        let b = self.bounds();
        (b.log_start_offset, b.log_end_offset, b.last_stable_offset)
    }

    fn cleaner_aborted_txns(
        &self,
        start: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<index_txn::AbortedTxn>, SegmentError> {
        self.collect_aborted_txns_for_cleaner(start, upper_bound_offset)
    }
}

impl Log<KafkaBatchFormat> {
    /// One round of Kafka's log cleaner over this log, as `LogCleaner` runs it on the
    /// log it chose (`doClean`, then `doneCleaning`): reads this partition's first dirty
    /// offset from the `cleaner-offset-checkpoint` of the parent (log) directory, finds
    /// the cleanable range ([`LogToClean::plan`]), maps the dirty section's keys
    /// ([`build_offset_map`]), rewrites every segment below the map's end group by group
    /// ([`group_segments_by_size`]) into `.cleaned` segments that are swapped in as
    /// Kafka's `replaceSegments` does, and writes the map's end offset to the checkpoint.
    /// `now` (ms) is the clean's time: delete horizons are `now + delete.retention.ms`.
    ///
    /// It does not apply `min.cleanable.dirty.ratio` (Kafka's choice among logs): call
    /// [`LogToClean::is_cleanable`] first for that, or let a [`Cleaner`](crate::Cleaner)
    /// choose. Do not call it on a log registered with a `Cleaner`: both would rewrite
    /// the directory's checkpoint, and only the `Cleaner`'s writes are serialised. A log with nothing cleanable is left
    /// as it is (the checkpoint is still reset when Kafka would reset it).
    ///
    /// Under concurrent readers the replacement of a group's segments is one structural
    /// change (`docs/kafka-behaviour.md#concurrent-reads`); a reader holding a replaced
    /// segment keeps reading it until `file.delete.delay.ms` has passed.
    ///
    /// # Errors
    /// [`CleanError::InvalidConfig`]; [`CleanError::NotAPartitionDir`];
    /// [`CleanError::MalformedCheckpoint`]; [`CleanError::Batch`] and
    /// [`CleanError::Unsupported`] (nothing replaced for the group; the `.cleaned` files
    /// are removed); [`CleanError::Segment`] for I/O (a failure during the swap takes the
    /// log offline; the next open completes or rolls back the swap).
    pub fn clean(
        &self,
        cleaner: &CleanerConfig,
        compaction: &CompactionConfig,
        now: i64,
    ) -> Result<CleanerStats, CleanError> {
        self.clean_standalone(cleaner, compaction, now, CleanSabotage::default())
    }

    /// [`clean`](Self::clean) with deliberate damage, for the oracle's sabotages only
    /// (the non-default `sabotage` feature, which `xtask/oracle` enables).
    #[cfg(feature = "sabotage")]
    #[doc(hidden)]
    pub fn clean_sabotaged(
        &self,
        cleaner: &CleanerConfig,
        compaction: &CompactionConfig,
        now: i64,
        sabotage: CleanSabotage,
    ) -> Result<CleanerStats, CleanError> {
        self.clean_standalone(cleaner, compaction, now, sabotage)
    }

    /// [`clean`](Self::clean): the checkpoint read and written by this log itself, under
    /// its lock.
    fn clean_standalone(
        &self,
        cleaner: &CleanerConfig,
        compaction: &CompactionConfig,
        now: i64,
        sabotage: CleanSabotage,
    ) -> Result<CleanerStats, CleanError> {
        cleaner.validate()?;
        compaction.validate()?;
        let tp = topic_partition_of(&self.dir).ok_or_else(|| CleanError::NotAPartitionDir {
            path: self.dir.clone(),
        })?;
        let parent = self
            .dir
            .parent()
            .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
        let mut read = || -> Result<Option<i64>, CleanError> {
            Ok(read_cleaner_checkpoint(&*self.fs, &parent)?
                .get(&tp)
                .copied())
        };
        let mut write = |offset: i64| -> Result<(), CleanError> {
            let mut checkpoints = read_cleaner_checkpoint(&*self.fs, &parent)?;
            checkpoints.insert(tp.clone(), offset);
            write_cleaner_checkpoint(&*self.fs, &parent, &checkpoints)
        };
        let driver = CleanDriver {
            checkpointed: &mut read,
            checkpoint: &mut write,
            stop: &|| false,
            sabotage,
            throttle: &|_| {},
        };
        self.clean_with(cleaner, compaction, now, driver)
    }

    /// One clean, driven by `driver`: how the first dirty offset is read, how the new one
    /// is written (both called under the log's lock), whether to stop early, and the
    /// oracle's sabotage. [`Log::clean`] and the [`Cleaner`](crate::Cleaner) share it.
    ///
    /// As Kafka's cleaner, it holds the log's lock only to plan, to swap each cleaned group
    /// in and to write the checkpoint: the offset map and the copies are made without it,
    /// from segments below the active one that appends and rolls do not touch, so appends
    /// go on (`docs/kafka-behaviour.md#cleaner-concurrency`). A group whose segments a
    /// truncation, retention or `delete_records` changed meanwhile is not swapped in: the
    /// clean stops with [`CleanError::Aborted`] and leaves the checkpoint as it was.
    pub(crate) fn clean_with(
        &self,
        cleaner: &CleanerConfig,
        compaction: &CompactionConfig,
        now: i64,
        driver: CleanDriver<'_>,
    ) -> Result<CleanerStats, CleanError> {
        cleaner.validate()?;
        compaction.validate()?;
        let capacity = cleaner.offset_map_capacity()?;
        let CleanDriver {
            checkpointed,
            checkpoint,
            stop,
            sabotage,
            throttle,
        } = driver;
        let _clean = self.clean_lock.lock();
        let g = self.lock.lock();
        self.check_online()?;
        if stop() {
            return Err(CleanError::Aborted);
        }
        self.deleter.delete_expired()?;
        let summary = LogSummary::of(self)?;
        let (offsets, ltc) = LogToClean::plan(&summary, checkpointed()?, now, compaction);
        let mut stats = CleanerStats {
            first_dirty_offset: ltc.first_dirty_offset,
            end_offset: ltc.first_dirty_offset,
            ..CleanerStats::default()
        };
        if ltc.first_uncleanable_offset <= ltc.first_dirty_offset || ltc.cleanable_bytes == 0 {
            if offsets.force_update_checkpoint {
                checkpoint(offsets.first_dirty_offset)?;
            }
            return Ok(stats);
        }
        // From here the segments cleaned lie below the first uncleanable offset, which is
        // at or below the active segment's base: appends and rolls do not touch them. What
        // the map is built from and the groups copied are these segments as planned; each
        // swap first checks that they are still the log's, whole and unchanged.
        let mut planned: Vec<(Arc<LogSegment>, u64)> = self
            .segments
            .values()
            .into_iter()
            .filter(|s| s.base_offset() < ltc.first_uncleanable_offset)
            .map(|s| {
                let size = s.size();
                (s, size)
            })
            .collect();
        drop(g);
        // Kafka's legacy delete horizon: the last clean segment's mtime minus
        // delete.retention.ms (0 without one).
        let legacy_delete_horizon = match summary
            .segments_in(0, ltc.first_dirty_offset)
            .and_then(|s| s.last())
        {
            Some(s) => s.last_modified.wrapping_sub(compaction.delete_retention_ms),
            None => 0,
        };
        let mut map = OffsetMap::new(capacity);
        let built = build_offset_map(
            self,
            &mut map,
            ltc.first_dirty_offset,
            ltc.first_uncleanable_offset,
            cleaner.max_message_size.max(0) as u32,
        )
        .map_err(|e| self.changed_under(e, &planned))?;
        throttle(built.bytes_read);
        stats.map_batches_read = built.batches_read;
        stats.map_bytes_read = built.bytes_read;
        let end_offset = built.end_offset;
        stats.end_offset = end_offset;
        let segs = summary.segments_in(0, end_offset).unwrap_or(&[]).to_vec();
        let groups = group_segments_by_size(
            &segs,
            self.config.segment_bytes,
            self.config.max_index_size as u64,
            ltc.first_uncleanable_offset,
        );
        if crate::fs::mutated!(CleanCheckpointBeforeSwap) {
            let _g = self.lock.lock();
            checkpoint(end_offset)?;
        }
        let mut txns = CleanedTxnMetadata::new();
        for g in groups {
            if stop() {
                return Err(CleanError::Aborted);
            }
            let group: Vec<Arc<LogSegment>> = segs
                .get(g)
                .unwrap_or(&[])
                .iter()
                .filter_map(|s| {
                    planned
                        .iter()
                        .find(|(p, _)| p.base_offset() == s.base_offset)
                        .map(|(p, _)| p.clone())
                })
                .collect();
            if group.is_empty() {
                continue;
            }
            let rules = GroupRules {
                map: &map,
                now,
                legacy_delete_horizon,
                compaction,
                cleaner,
                sabotage,
                stop,
                throttle,
            };
            self.clean_segments(&group, &rules, &mut stats, &mut txns, &mut planned)?;
        }
        stats.buffer_utilization = map.utilization();
        stats.offset_map_bytes = map.memory_bytes() as u64;
        stats.offset_map_peak_bytes = map.peak_memory_bytes() as u64;
        let _g = self.lock.lock();
        self.check_online()?;
        checkpoint(end_offset)?;
        Ok(stats)
    }

    /// Whether every segment the clean planned from (the map's and the groups' sources,
    /// and the groups already swapped in) is still the log's as planned: the same segment
    /// in the map, not deleted, not cut or grown. A truncation of the map's section would
    /// otherwise make the clean drop records for newer ones that are gone.
    fn unchanged(&self, planned: &[(Arc<LogSegment>, u64)]) -> bool {
        planned.iter().all(|(s, size)| {
            !s.is_deleted()
                && s.size() == *size
                && self
                    .segments
                    .get(s.base_offset())
                    .is_some_and(|cur| Arc::ptr_eq(&cur, s))
        })
    }

    /// A read of the map's or a group's segments that failed because a truncation,
    /// retention or `delete_records` changed them meanwhile is that change, not a corrupt
    /// log: [`CleanError::Aborted`] (checked under the log's lock). Other errors stay.
    fn changed_under(&self, e: CleanError, planned: &[(Arc<LogSegment>, u64)]) -> CleanError {
        if matches!(e, CleanError::Aborted) {
            return e;
        }
        let _g = self.lock.lock();
        if self.unchanged(planned) {
            e
        } else {
            tracing::info!(error = %e, "the log changed under the clean: aborted");
            CleanError::Aborted
        }
    }

    /// Kafka's `lastRecordsOfActiveProducers`.
    fn last_records_of_active_producers(&self) -> HashMap<i64, LastRecord> {
        let ps = self.producer_state.lock();
        ps.active_producers()
            .iter()
            .map(|(&pid, e)| {
                let last = e.last_data_offset();
                (
                    pid,
                    LastRecord {
                        last_data_offset: (last >= 0).then_some(last),
                        producer_epoch: e.producer_epoch,
                    },
                )
            })
            .collect()
    }

    /// Kafka's `cleanSegments`: cleans `group` into one `.cleaned` segment at the first
    /// one's base offset and swaps it in.
    fn clean_segments(
        &self,
        group: &[Arc<LogSegment>],
        rules: &GroupRules<'_>,
        stats: &mut CleanerStats,
        txns: &mut CleanedTxnMetadata,
        planned: &mut Vec<(Arc<LogSegment>, u64)>,
    ) -> Result<(), CleanError> {
        let Some(first) = group.first() else {
            return Ok(());
        };
        let base = first.base_offset();
        for kind in names::FileKind::ALL {
            let p = names::segment_file(&self.dir, base, kind, CLEANED_FILE_SUFFIX);
            crate::fs::remove_if_exists_with(&*self.fs, &p)?;
        }
        let cleaned = self.open_segment(base, false, CLEANED_FILE_SUFFIX)?;
        let active = self.last_records_of_active_producers();
        let hw = self.high_watermark();
        let copied = (|| -> Result<(), CleanError> {
            for (i, seg) in group.iter().enumerate() {
                let upper = match group.get(i + 1) {
                    Some(n) => n.base_offset(),
                    None => seg.read_next_offset()?,
                };
                txns.add_aborted_transactions(
                    self.collect_aborted_txns_for_cleaner(seg.base_offset(), upper)?,
                );
                let copy = CopyRules {
                    map: rules.map,
                    retain_legacy_deletes: seg.last_modified()? > rules.legacy_delete_horizon,
                    delete_retention_ms: rules.compaction.delete_retention_ms,
                    current_time: rules.now,
                    active_producers: &active,
                    high_watermark: hw,
                    sabotage: rules.sabotage,
                };
                self.clean_into(seg, &cleaned, &copy, txns, stats, rules)?;
            }
            cleaned.on_become_inactive_segment()?;
            cleaned.flush()?;
            if let Some(last) = group.last() {
                cleaned.set_last_modified(last.last_modified()?)?;
            }
            Ok(())
        })();
        if let Err(e) = copied {
            cleaned.close_handlers();
            let _ = cleaned.delete_if_exists();
            return Err(self.changed_under(e, planned));
        }
        let _g = self.lock.lock();
        if !self.unchanged(planned) || self.check_online().is_err() {
            cleaned.close_handlers();
            let _ = cleaned.delete_if_exists();
            tracing::info!(
                segment = base,
                "the log changed under the clean (truncation, retention or deletion): the cleaned group is dropped"
            );
            return Err(CleanError::Aborted);
        }
        let cleaned = self.replace_segments(cleaned, group)?;
        planned.retain(|(p, _)| !group.iter().any(|g| Arc::ptr_eq(g, p)));
        let size = cleaned.size();
        planned.push((cleaned, size));
        stats.segments_cleaned += group.len() as u64;
        stats.segments_written += 1;
        Ok(())
    }

    /// Kafka's `cleanInto`: copies what is kept of `seg` into `dest`, read window by
    /// read window (one append, so at most one index entry, per window).
    fn clean_into(
        &self,
        seg: &LogSegment,
        dest: &LogSegment,
        rules: &CopyRules<'_>,
        txns: &mut CleanedTxnMetadata,
        stats: &mut CleanerStats,
        group: &GroupRules<'_>,
    ) -> Result<(), CleanError> {
        let cleaner = group.cleaner;
        let io_buffer = cleaner.io_buffer_size_per_thread().max(0) as u64;
        let max_message = cleaner.max_message_size.max(0) as u64;
        let mut capacity = io_buffer;
        let file = seg.log();
        let size = file.size_in_bytes();
        let path = seg.log_path();
        let mut position = 0u64;
        let mut out = Vec::new();
        while position < size {
            if (group.stop)() {
                return Err(CleanError::Aborted);
            }
            let len = capacity.min(size - position);
            let window = file.read(position, len)?;
            (group.throttle)(len);
            out.clear();
            let result =
                filter_window(&window, rules, txns, &mut out, capacity as usize).map_err(|e| {
                    match e {
                        CleanError::Batch { source, .. } => CleanError::Batch {
                            path: path.clone(),
                            window_position: position,
                            source,
                        },
                        other => other,
                    }
                })?;
            stats.messages_read += result.messages_read;
            stats.bytes_read += result.bytes_read;
            stats.messages_written += result.messages_retained;
            stats.bytes_written += result.bytes_retained;
            stats.invalid_messages_read += result.invalid_messages;
            position += result.bytes_read;
            (group.throttle)(out.len() as u64);
            for t in txns.take_cleaned_index() {
                dest.append_aborted_txn(&t)?;
            }
            // Kafka 4.4's `LogSegment.append`: batch by batch, the max timestamp and the
            // index entries as if each batch were appended alone.
            for b in crate::record::batches_from(&out, 0) {
                let b = b.map_err(|e| CleanError::Batch {
                    path: path.clone(),
                    window_position: position,
                    source: e,
                })?;
                dest.append(
                    b.last_offset(),
                    b.max_timestamp(),
                    b.last_offset(),
                    b.as_bytes(),
                )?;
            }
            if len > 0 && result.bytes_read == 0 {
                // Kafka's `growBuffersOrFail`: double the buffers up to
                // max(message.max.bytes, the next batch's size).
                let limit = if capacity >= max_message {
                    let next = crate::record::peek_batch(&window, 0)
                        .ok()
                        .and_then(|p| match p {
                            crate::record::Peek::Batch(n) => Some(n as u64),
                            _ => None,
                        });
                    match next {
                        Some(n) if n > capacity && n <= size - position => n,
                        _ => {
                            return Err(CleanError::Batch {
                                path: path.clone(),
                                window_position: position,
                                source: crate::record::RecordError::invalid(
                                    0,
                                    format!(
                                        "no complete batch in {len} bytes (max message size \
                                         {max_message})"
                                    ),
                                ),
                            })
                        }
                    }
                } else {
                    max_message
                };
                let max_buffer = limit.max(max_message);
                if capacity >= max_buffer {
                    return Err(CleanError::Batch {
                        path: path.clone(),
                        window_position: position,
                        source: crate::record::RecordError::invalid(
                            0,
                            format!(
                                "this log contains a message larger than maximum allowable \
                                 size of {max_buffer}"
                            ),
                        ),
                    });
                }
                capacity = (capacity.max(1) * 2).min(max_buffer);
            }
        }
        Ok(())
    }

    /// Kafka's `replaceSegments(List(cleaned), old)`: `cleaned` renamed `.cleaned` →
    /// `.swap` (the commit point: an open from here completes the replacement), then, as
    /// one structural change, put in the map in place of the old segments, which are
    /// renamed `.deleted` and scheduled for deletion; then renamed `.swap` → final. The
    /// producer snapshots of the old segments not replaced at their base go too.
    fn replace_segments(
        &self,
        cleaned: LogSegment,
        old: &[Arc<LogSegment>],
    ) -> Result<Arc<LogSegment>, CleanError> {
        let base = cleaned.base_offset();
        if let Err(e) = cleaned.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX) {
            cleaned.close_handlers();
            let _ = cleaned.delete_if_exists();
            return Err(e.into());
        }
        // The `.swap` names must be durable before any replaced segment is renamed
        // `.deleted`: a crash could otherwise leave the `.cleaned` files (deleted by the
        // loader) beside the `.deleted` ones (deleted too), and the group's data gone.
        if !crate::fs::mutated!(CleanSwapNoDirFsync) {
            crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        }
        let cleaned = Arc::new(cleaned);
        let mut removed = Vec::new();
        {
            let _change = self.segments.begin_change();
            let swapped = (|| -> Result<(), SegmentError> {
                self.segments.add(cleaned.clone());
                for s in old {
                    if s.base_offset() != base {
                        self.segments.remove(s.base_offset());
                        removed.push(s.clone());
                    }
                    s.change_file_suffixes("", DELETED_FILE_SUFFIX)?;
                    self.stats.segments_deleted.fetch_add(1, Ordering::Relaxed);
                    self.deleter.schedule(s.clone())?;
                }
                cleaned.change_file_suffixes(SWAP_FILE_SUFFIX, "")?;
                Ok(())
            })();
            if let Err(e) = swapped {
                return Err(self.fail_structural_change("clean", e).into());
            }
        }
        crate::fs::fsync_dir_with(&*self.fs, &self.dir)?;
        tracing::info!(
            segment = base,
            replaced = old.len(),
            "swapped in a cleaned segment"
        );
        self.delete_snapshots_of(&removed)?;
        Ok(cleaned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::BatchBuilder;
    use crate::LogConfig;

    /// A compacted log at `dir/p-0`: 40 records of 4 keys over 4 rolled segments, then an
    /// active one.
    fn compacted_log(dir: &std::path::Path) -> Log {
        let config = LogConfig {
            compact: true,
            ..LogConfig::default()
        };
        let log = Log::open(dir.join("p-0"), config).unwrap();
        for i in 0..40 {
            if i > 0 && i % 10 == 0 {
                log.roll(None).unwrap();
            }
            let key = format!("k{}", i % 4);
            let b = BatchBuilder::new(log.log_end_offset())
                .record(0, Some(key.as_bytes()), Some(format!("{i}").as_bytes()))
                .build()
                .unwrap();
            log.append(&b).unwrap();
        }
        log.roll(None).unwrap();
        log
    }

    fn no_checkpoint() -> Result<Option<i64>, CleanError> {
        Ok(None)
    }

    /// Kafka's cleaner copies without the log's lock: an append from inside the clean (its
    /// throttle hook, called while copying) goes through instead of waiting for it
    /// (`docs/kafka-behaviour.md#cleaner-concurrency`).
    #[test]
    fn appends_go_on_while_a_clean_copies() {
        let dir = tempfile::tempdir().unwrap();
        let log = compacted_log(dir.path());
        let appended = std::cell::Cell::new(0u32);
        let throttle = |_: u64| {
            if appended.get() == 0 && log.lock.try_lock().is_some() {
                let b = BatchBuilder::new(log.log_end_offset())
                    .record(0, Some(b"k9"), Some(b"during"))
                    .build()
                    .unwrap();
                log.append(&b).unwrap();
                appended.set(appended.get() + 1);
            }
        };
        let mut checkpointed = no_checkpoint;
        let mut written = None;
        let mut checkpoint = |o: i64| {
            written = Some(o);
            Ok(())
        };
        let stats = log
            .clean_with(
                &CleanerConfig::default(),
                &CompactionConfig::default(),
                0,
                CleanDriver {
                    checkpointed: &mut checkpointed,
                    checkpoint: &mut checkpoint,
                    stop: &|| false,
                    sabotage: CleanSabotage::default(),
                    throttle: &throttle,
                },
            )
            .unwrap();
        assert_eq!(
            appended.get(),
            1,
            "the log's lock was free while the clean ran"
        );
        assert_eq!(written, Some(40));
        assert_eq!(stats.messages_written, 4, "the latest record of each key");
        assert_eq!(log.log_end_offset(), 41);
        let r = log.read(40, 1 << 20).unwrap();
        assert!(
            !r.records.is_empty(),
            "the append made during the clean is served"
        );
    }

    /// A truncation while a group is copied: the group is not swapped in, the clean stops
    /// with `Aborted` and writes no checkpoint, and nothing the truncation kept is lost.
    #[test]
    fn a_truncation_during_a_clean_drops_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = compacted_log(dir.path());
        let truncated = std::cell::Cell::new(false);
        let throttle = |_: u64| {
            if !truncated.get() && log.lock.try_lock().is_some() {
                log.truncate_to(25).unwrap();
                truncated.set(true);
            }
        };
        let mut checkpointed = no_checkpoint;
        let mut written = None;
        let mut checkpoint = |o: i64| {
            written = Some(o);
            Ok(())
        };
        let r = log.clean_with(
            &CleanerConfig::default(),
            &CompactionConfig::default(),
            0,
            CleanDriver {
                checkpointed: &mut checkpointed,
                checkpoint: &mut checkpoint,
                stop: &|| false,
                sabotage: CleanSabotage::default(),
                throttle: &throttle,
            },
        );
        assert!(truncated.get());
        assert!(matches!(r, Err(CleanError::Aborted)), "{r:?}");
        assert_eq!(written, None, "no checkpoint after an aborted clean");
        assert_eq!(log.log_end_offset(), 25);
        let mut offsets = Vec::new();
        let mut o = 0;
        while o < log.log_end_offset() {
            let r = log.read(o, 1 << 20).unwrap();
            for b in crate::record::batches_from(&r.records, 0) {
                let b = b.unwrap();
                offsets.push(b.base_offset());
                o = b.next_offset();
            }
        }
        assert_eq!(
            offsets,
            (0..25).collect::<Vec<_>>(),
            "every record below 25 kept"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("p-0"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".cleaned"))
            .collect();
        assert!(leftovers.is_empty(), "the cleaned files are removed");
    }
}
