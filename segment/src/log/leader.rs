//! [`Log::append_as_leader`]: Kafka's `UnifiedLog.appendAsLeader`, the rules in
//! [`crate::leader`] (docs/kafka-behaviour.md#leader-append).

use std::sync::atomic::Ordering;

use super::{pstate, Log};
use crate::error::{Result, SegmentError};
use crate::format::{self, BatchFormat, BatchInfo};
use crate::leader::batch_validation::{self, Params};
use crate::leader::{AppendOrigin, KafkaError, LogAppendInfo, TimestampType};
use crate::producer;
use crate::record::{CompressionType, RecordBatch};

fn no_batch() -> SegmentError {
    SegmentError::rejected(
        KafkaError::InvalidRecord,
        "the input holds no complete batch",
    )
}

fn format_rejected(e: &format::FormatError) -> SegmentError {
    SegmentError::rejected(crate::error::format_error_kind(e), e.to_string())
}

impl<F: BatchFormat> Log<F> {
    /// Appends a producer's (or coordinator's) batch as the partition leader: Kafka's
    /// `UnifiedLog.appendAsLeader(records, leaderEpoch, origin)` with no request-local
    /// buffers, no verification guard and transaction version 0
    /// (docs/kafka-behaviour.md#leader-append).
    ///
    /// The log assigns the offsets: the batch gets the log end offset as its base offset
    /// and `leader_epoch` as its partition leader epoch, under the append lock, so
    /// concurrent callers get contiguous offsets, each exactly once. Kafka's checks apply
    /// first, and nothing is appended unless all pass (docs/kafka-behaviour.md#leader-validation,
    /// docs/kafka-behaviour.md#leader-producer):
    ///
    /// * one magic v2 batch (Kafka's produce request rule: any other magic and several batches
    ///   are `INVALID_RECORD`); its base offset 0 (origin [`AppendOrigin::Client`]); at
    ///   most [`max_message_bytes`](crate::LogConfig::max_message_bytes)
    ///   (`MESSAGE_TOO_LARGE`); a valid CRC (`CORRUPT_MESSAGE`);
    /// * from a client: record count equal to the last offset delta + 1, no control
    ///   batch, a base sequence with a producer id (`INVALID_RECORD`);
    /// * per record: a key if [`compact`](crate::LogConfig::compact) (`INVALID_RECORD`),
    ///   a timestamp within the `message.timestamp.*.max.ms` bounds under CreateTime, and
    ///   no producer-set LogAppendTime under LogAppendTime (`INVALID_TIMESTAMP`), with
    ///   every record at fault in [`SegmentError::Rejected::record_errors`](SegmentError::Rejected);
    /// * the producer state: a retry of one of the producer's last five batches is a
    ///   duplicate ([`LogAppendInfo::duplicate`], the original offsets, nothing
    ///   appended); otherwise `INVALID_PRODUCER_EPOCH`, `OUT_OF_ORDER_SEQUENCE_NUMBER`,
    ///   `INVALID_TXN_STATE`, and for end-transaction markers (origin
    ///   [`AppendOrigin::Coordinator`]) `TRANSACTION_COORDINATOR_FENCED`;
    /// * after a recompression, the rebuilt batch within `max.message.bytes`; the batch
    ///   within `segment.bytes` (`RECORD_LIST_TOO_LARGE`).
    ///
    /// The batch is patched in place (base offset, leader epoch, and max timestamp with
    /// the CRC recomputed only when the timestamp or its type changes) unless
    /// [`compression_type`](crate::LogConfig::compression_type) asks for another codec
    /// or the producer's inner offsets are not 0, 1, 2...: then it is rebuilt with
    /// [`BatchBuilder`](crate::record::BatchBuilder). Under
    /// [`TimestampType::LogAppendTime`] the batch is stamped with the log's clock.
    ///
    /// Bytes after the last complete batch are ignored (Kafka's batch iterator stops
    /// there); an input without a complete batch is `INVALID_RECORD` (Kafka's produce
    /// request rule).
    ///
    /// A format other than Kafka's (with [`BatchFormat::KAFKA_PRODUCER_STATE`] `false`)
    /// gets the format-neutral part: each batch is validated
    /// ([`BatchFormat::validate`]), held to `max.message.bytes`, given its offsets with
    /// [`BatchFormat::assign_base_offset`], its epoch with
    /// [`BatchFormat::set_partition_leader_epoch`] and, under LogAppendTime, its
    /// timestamp with [`BatchFormat::stamp_log_append_time`]; several batches may be
    /// appended at once.
    ///
    /// # Errors
    /// [`SegmentError::Rejected`] for every rule above ([`SegmentError::kafka_error`]
    /// names the protocol error); I/O and index errors; [`SegmentError::Offline`]
    /// if the log is offline.
    pub fn append_as_leader(
        &self,
        records: &[u8],
        leader_epoch: i32,
        origin: AppendOrigin,
    ) -> Result<LogAppendInfo> {
        let _g = self.lock.lock();
        self.check_online()?;
        if F::KAFKA_PRODUCER_STATE {
            self.append_kafka_as_leader(records, leader_epoch, origin)
        } else {
            self.append_other_as_leader(records, leader_epoch)
        }
    }

    fn check_max_message_bytes(&self, size: usize, what: &str) -> Result<()> {
        if size as u64 > u64::from(self.config.max_message_bytes) {
            return Err(SegmentError::rejected(
                KafkaError::RecordTooLarge,
                format!(
                    "{what} is {size} bytes, more than max.message.bytes ({})",
                    self.config.max_message_bytes
                ),
            ));
        }
        Ok(())
    }

    fn check_segment_bytes(&self, size: usize) -> Result<()> {
        if size as u64 > self.config.segment_bytes {
            return Err(SegmentError::rejected(
                KafkaError::RecordBatchTooLarge,
                format!(
                    "the batch is {size} bytes, more than segment.bytes ({})",
                    self.config.segment_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Kafka's format: `analyzeAndValidateRecords`, `LogValidator`, producer state.
    fn append_kafka_as_leader(
        &self,
        records: &[u8],
        leader_epoch: i32,
        origin: AppendOrigin,
    ) -> Result<LogAppendInfo> {
        let now = self.clock.milliseconds();
        // The first batch and how many there are: a produce holds one, so nothing is
        // collected (no allocation a call).
        let mut first = None;
        let mut batches = 0usize;
        let mut it = format::scan::<F>(records, 0);
        for b in &mut it {
            let b =
                b.map_err(|e| SegmentError::rejected(KafkaError::CorruptMessage, e.to_string()))?;
            if b.info.magic != 2 {
                return Err(SegmentError::rejected(
                    KafkaError::InvalidRecord,
                    format!(
                        "only magic v2 batches can be produced; the batch at position {} has magic {}",
                        b.info.position, b.info.magic
                    ),
                ));
            }
            if origin == AppendOrigin::Client && b.info.base_offset != 0 {
                return Err(SegmentError::rejected(
                    KafkaError::InvalidRecord,
                    format!(
                        "a produced batch must have base offset 0, not {}",
                        b.info.base_offset
                    ),
                ));
            }
            self.check_max_message_bytes(b.info.size_in_bytes, "the batch")?;
            F::validate(b.bytes, b.info.position)
                .map_err(|e| SegmentError::rejected(KafkaError::CorruptMessage, e.to_string()))?;
            batches += 1;
            first.get_or_insert(b);
        }
        let Some(first) = first else {
            return Err(no_batch());
        };
        if batches > 1 {
            return Err(SegmentError::rejected(
                KafkaError::InvalidRecord,
                format!("a produce holds one v2 batch, not {batches}"),
            ));
        }
        let source = RecordBatch::new(first.bytes)
            .and_then(|b| b.compression())
            .map_err(|e| {
                SegmentError::rejected(crate::error::decode_error_kind(&e), e.to_string())
            })?;
        let target = self.config.compression_type.target(source);
        let first_offset = self.log_end_offset();
        let params = Params {
            now,
            timestamp_type: self.config.message_timestamp_type,
            before_max_ms: self.config.message_timestamp_before_max_ms,
            after_max_ms: self.config.message_timestamp_after_max_ms,
            compact: self.config.compact,
            leader_epoch,
            origin,
            target,
            first_offset,
        };
        let v = batch_validation::validate_v2(first.bytes, &params)?;
        if v.rebuilt {
            self.check_max_message_bytes(v.bytes.len(), "the recompressed batch")?;
        }
        // Kafka's `UnifiedLog.append` assigns the epoch's start offset here, before the
        // segment-size check, the roll and the producer-state checks: a batch refused by
        // them, or a retry answered as a duplicate, still starts the epoch at the offset
        // it would have had (`docs/kafka-behaviour.md#leader-append-epoch`).
        if self.epoch_cache.lock().assign(leader_epoch, first_offset) {
            self.epochs_pending.store(true, Ordering::Release);
        }
        self.check_segment_bytes(v.bytes.len())?;
        let info = F::parse_header(&v.bytes, 0).map_err(|e| format_rejected(&e))?;
        let marker = Self::parse_marker(&v.bytes, &info)?;
        let last = v.last_offset;
        let lat = self.config.message_timestamp_type == TimestampType::LogAppendTime;
        let mut out = LogAppendInfo {
            first_offset,
            last_offset: last,
            last_leader_epoch: (first.info.partition_leader_epoch != -1)
                .then_some(first.info.partition_leader_epoch),
            max_timestamp: v.max_timestamp,
            offset_of_max_timestamp: last,
            log_append_time: if lat { now } else { -1 },
            log_start_offset: self.log_start_offset(),
            num_batches: 1,
            num_records: v.num_records,
            valid_bytes: it.position(),
            source_compression: source,
            target_compression: if v.rebuilt { target } else { source },
            duplicate: false,
        };
        // The validation's clock read serves the roll check too: Kafka reads the clock
        // again in `maybeRoll`, under the same lock, so this is its run in which the
        // clock did not move between the two reads
        // (`docs/kafka-behaviour.md#leader-append-one-clock-read`).
        let active = self.maybe_roll_locked(
            first_offset,
            last,
            v.max_timestamp,
            v.bytes.len() as u64,
            now,
        )?;
        if info.producer_id >= 0 {
            let dup = producer::append::check(
                &self.producer_state.lock(),
                &info,
                marker.as_ref(),
                origin,
            )?;
            if let Some(dup) = dup {
                out.first_offset = dup.first_offset();
                out.last_offset = dup.last_offset;
                out.log_append_time = dup.timestamp;
                out.duplicate = true;
                return Ok(out);
            }
        }
        let parsed = [pstate::AppendedBatch { info, marker }];
        self.write_locked(&active, &v.bytes, &parsed, last, v.max_timestamp, last)?;
        out.log_start_offset = self.log_start_offset();
        Ok(out)
    }

    /// Another format: validate, assign offsets and epochs, stamp, append.
    fn append_other_as_leader(&self, records: &[u8], leader_epoch: i32) -> Result<LogAppendInfo> {
        let now = self.clock.milliseconds();
        let lat = self.config.message_timestamp_type == TimestampType::LogAppendTime;
        let mut ranges = Vec::new();
        let mut it = format::scan::<F>(records, 0);
        for b in &mut it {
            let b = b.map_err(|e| format_rejected(&e))?;
            self.check_max_message_bytes(b.info.size_in_bytes, "the batch")?;
            F::validate(b.bytes, b.info.position).map_err(|e| format_rejected(&e))?;
            ranges.push(b.info.position as usize..b.info.position as usize + b.bytes.len());
        }
        let valid = it.position() as usize;
        if ranges.is_empty() {
            return Err(no_batch());
        }
        let mut bytes = records.get(..valid).unwrap_or_default().to_vec();
        let first_offset = self.log_end_offset();
        let mut next = first_offset;
        let mut infos: Vec<BatchInfo> = Vec::with_capacity(ranges.len());
        let mut last_epoch = -1;
        for r in &ranges {
            let pos = r.start as u64;
            let batch = bytes.get_mut(r.clone()).unwrap_or_default();
            last_epoch = F::parse_header(batch, pos)
                .map_err(|e| format_rejected(&e))?
                .partition_leader_epoch;
            F::assign_base_offset(batch, pos, next).map_err(|e| format_rejected(&e))?;
            F::set_partition_leader_epoch(batch, pos, leader_epoch)
                .map_err(|e| format_rejected(&e))?;
            if lat {
                F::stamp_log_append_time(batch, pos, now).map_err(|e| format_rejected(&e))?;
            }
            let info = F::parse_header(batch, pos).map_err(|e| format_rejected(&e))?;
            if info.base_offset != next
                || info.last_offset < info.base_offset
                || info.last_offset == i64::MAX
            {
                return Err(SegmentError::rejected(
                    KafkaError::InvalidRecord,
                    format!(
                        "the batch at position {pos} holds offsets {}..={} after its base offset was set to {next}",
                        info.base_offset, info.last_offset
                    ),
                ));
            }
            next = info.last_offset + 1;
            infos.push(info);
        }
        self.check_segment_bytes(bytes.len())?;
        let last = next - 1;
        let (mut max_ts, mut max_ts_off) = (-1i64, -1i64);
        for i in &infos {
            if i.max_timestamp > max_ts {
                max_ts = i.max_timestamp;
                max_ts_off = i.offset_of_max_timestamp;
            }
        }
        let active = self.maybe_roll_locked(first_offset, last, max_ts, bytes.len() as u64, now)?;
        let parsed: Vec<pstate::AppendedBatch> = infos
            .iter()
            .map(|&info| pstate::AppendedBatch { info, marker: None })
            .collect();
        self.write_locked(&active, &bytes, &parsed, last, max_ts, max_ts_off)?;
        Ok(LogAppendInfo {
            first_offset,
            last_offset: last,
            last_leader_epoch: (last_epoch != -1).then_some(last_epoch),
            max_timestamp: max_ts,
            offset_of_max_timestamp: max_ts_off,
            log_append_time: if lat { now } else { -1 },
            log_start_offset: self.log_start_offset(),
            num_batches: infos.len(),
            num_records: infos
                .iter()
                .map(|i| (i.last_offset - i.base_offset + 1) as u64)
                .sum(),
            valid_bytes: valid as u64,
            source_compression: CompressionType::None,
            target_compression: CompressionType::None,
            duplicate: false,
        })
    }
}
